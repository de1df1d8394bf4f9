/* skade--1.0--1.1.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION skade UPDATE TO '1.1'" to load this file. \quit

/*
 * 1.1: the extension lives in schema skade (1.0 sat in the creating schema,
 * usually public, with schema skade as a member); load_table, table_metadata,
 * load_table_at and load_table_as_of take catalog last, as every other
 * function; functions say what they cost (COST, ROWS, PARALLEL) and
 * resolve_many estimates its rows from its array.  The result is what a
 * fresh CREATE EXTENSION skade VERSION '1.1' makes (t/013_upgrade.pl).
 */

-- schema skade is the extension's schema, not a member (as a fresh 1.1)
ALTER EXTENSION skade DROP SCHEMA skade;
UPDATE pg_catalog.pg_depend SET refobjid = 'skade'::pg_catalog.regnamespace
 WHERE classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
   AND objid OPERATOR(pg_catalog.=) (SELECT oid FROM pg_catalog.pg_extension
                                      WHERE extname OPERATOR(pg_catalog.=) 'skade')
   AND refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_namespace'::pg_catalog.regclass
   AND deptype OPERATOR(pg_catalog.=) 'n';
UPDATE pg_catalog.pg_extension SET extnamespace = 'skade'::pg_catalog.regnamespace
 WHERE extname OPERATOR(pg_catalog.=) 'skade';

-- catalog last
DROP FUNCTION skade.load_table(text, text, text, text);
DROP FUNCTION skade.table_metadata(text, text, text, text);
DROP FUNCTION skade.load_table_at(text, text, bigint, text, text);
DROP FUNCTION skade.load_table_as_of(text, text, timestamptz, text, text);
CREATE FUNCTION skade.load_table(namespace text, name text, snapshots text DEFAULT 'all',
								 catalog text DEFAULT NULL,
								 OUT metadata_location text,
								 OUT previous_metadata_location text,
								 OUT metadata json)
	RETURNS record AS 'MODULE_PATHNAME', 'skade_load_table_1_1' LANGUAGE C STABLE
	COST 5000 PARALLEL RESTRICTED;
CREATE FUNCTION skade.table_metadata(namespace text, name text, snapshots text DEFAULT 'all',
									 catalog text DEFAULT NULL)
	RETURNS json AS 'MODULE_PATHNAME', 'skade_table_metadata_1_1' LANGUAGE C STABLE
	COST 5000 PARALLEL RESTRICTED;
CREATE FUNCTION skade.load_table_at(namespace text, name text, snapshot_id bigint,
									snapshots text DEFAULT 'all', catalog text DEFAULT NULL,
									OUT snapshot_id bigint, OUT metadata_location text,
									OUT metadata json)
	RETURNS record AS 'MODULE_PATHNAME', 'skade_load_table_at_1_1' LANGUAGE C STABLE
	COST 5000 PARALLEL RESTRICTED;
CREATE FUNCTION skade.load_table_as_of(namespace text, name text, ts timestamptz,
									   snapshots text DEFAULT 'all', catalog text DEFAULT NULL,
									   OUT snapshot_id bigint, OUT made_current_at timestamptz,
									   OUT metadata_location text, OUT metadata json)
	RETURNS record AS 'MODULE_PATHNAME', 'skade_load_table_as_of_1_1' LANGUAGE C STABLE
	COST 5000 PARALLEL RESTRICTED;
REVOKE ALL ON FUNCTION skade.load_table(text, text, text, text),
	skade.table_metadata(text, text, text, text),
	skade.load_table_at(text, text, bigint, text, text),
	skade.load_table_as_of(text, text, timestamptz, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION skade.load_table(text, text, text, text),
	skade.table_metadata(text, text, text, text),
	skade.load_table_at(text, text, bigint, text, text),
	skade.load_table_as_of(text, text, timestamptz, text, text) TO skade_reader;

-- resolve_many: as many rows as its array has elements
CREATE FUNCTION skade.resolve_many_support(internal) RETURNS internal
	AS 'MODULE_PATHNAME', 'skade_resolve_many_support' LANGUAGE C STRICT;
REVOKE ALL ON FUNCTION skade.resolve_many_support(internal) FROM PUBLIC;
ALTER FUNCTION skade.resolve_many(bigint[]) COST 100 PARALLEL RESTRICTED
	SUPPORT skade.resolve_many_support;

-- what the others cost
ALTER FUNCTION skade.namespace_exists(text, text) PARALLEL RESTRICTED;
ALTER FUNCTION skade.list_namespaces(text, text) ROWS 100 PARALLEL RESTRICTED;
ALTER FUNCTION skade.namespace_properties(text, text) PARALLEL RESTRICTED;
ALTER FUNCTION skade.table_exists(text, text, text) PARALLEL RESTRICTED;
ALTER FUNCTION skade.list_tables(text, text) ROWS 100 PARALLEL RESTRICTED;
ALTER FUNCTION skade.snapshots(text, text, text) COST 5000 ROWS 100 PARALLEL RESTRICTED;
ALTER FUNCTION skade.refs(text, text, text) COST 5000 ROWS 10 PARALLEL RESTRICTED;
ALTER FUNCTION skade.history(text, text, text) COST 5000 ROWS 100 PARALLEL RESTRICTED;
ALTER FUNCTION skade.commit_transaction(jsonb, text) ROWS 10;
ALTER FUNCTION skade.cache_stats() PARALLEL RESTRICTED;
ALTER FUNCTION skade.index_status() PARALLEL RESTRICTED;
ALTER FUNCTION skade.index_check(bigint[]) COST 10000 PARALLEL RESTRICTED;
ALTER FUNCTION skade.stree64_selftest() ROWS 10;
ALTER FUNCTION skade.stree64_bench(bigint, bigint) ROWS 10;
ALTER FUNCTION skade.manifests(text, text, bigint, text) COST 10000 ROWS 100 PARALLEL RESTRICTED;
ALTER FUNCTION skade.files(text, text, bigint, text) COST 10000 ROWS 1000 PARALLEL RESTRICTED;
ALTER FUNCTION skade.plan_files(text, text, jsonb, bigint, text) COST 10000 ROWS 1000 PARALLEL RESTRICTED;
