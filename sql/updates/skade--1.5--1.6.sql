/* skade--1.5--1.6.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION skade UPDATE TO '1.6'" to load this file. \quit

/*
 * 1.6: load_table is an inlinable SQL function over load_table_pointers and
 * table_metadata (issue 15, P1): in a FROM clause the metadata column is
 * the cache's own text, with no result row formed, stored and detoasted
 * around it.  It returns SETOF record now (one row), so it is dropped and
 * created again.
 */

DROP FUNCTION skade.load_table(text, text, text, text);
CREATE FUNCTION skade.load_table_pointers(namespace text, name text, snapshots text DEFAULT 'all',
										  catalog text DEFAULT NULL,
										  OUT metadata_location text,
										  OUT previous_metadata_location text)
	RETURNS record AS 'MODULE_PATHNAME', 'skade_load_table_pointers' LANGUAGE C STABLE
	PARALLEL RESTRICTED;
/*
 * load_table is SQL that the planner inlines into the caller's FROM clause:
 * its metadata column is then table_metadata's datum, served in place from
 * the cache, and no row is formed or copied around the text.
 */
CREATE FUNCTION skade.load_table(namespace text, name text, snapshots text DEFAULT 'all',
								 catalog text DEFAULT NULL,
								 OUT metadata_location text,
								 OUT previous_metadata_location text,
								 OUT metadata json)
	RETURNS SETOF record LANGUAGE sql STABLE PARALLEL RESTRICTED ROWS 1
	AS $$SELECT p.metadata_location, p.previous_metadata_location,
	skade.table_metadata(namespace, name, snapshots, catalog)
	FROM skade.load_table_pointers(namespace, name, snapshots, catalog) p$$;
REVOKE ALL ON FUNCTION skade.load_table_pointers(text, text, text, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION skade.load_table(text, text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION skade.load_table_pointers(text, text, text, text) TO skade_reader;
GRANT EXECUTE ON FUNCTION skade.load_table(text, text, text, text) TO skade_reader;
