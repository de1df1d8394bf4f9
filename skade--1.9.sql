/* skade--1.9.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION skade" to load this file. \quit

/*
 * Layout
 * ------
 * public.iceberg_tables and public.iceberg_namespace_properties are THE
 * catalog: the exact tables that stock Iceberg JDBC-catalog clients (Java
 * JdbcCatalog, pyiceberg SqlCatalog, Spark/Trino with a JDBC catalog) read and
 * write, in schema public so that unqualified SQL from every client resolves
 * to them.  They are deliberately NOT members of the extension: the data
 * belongs to the user, is dumped by pg_dump like any table, and survives
 * DROP EXTENSION (which only removes skade's triggers).  skade.attach()
 * (run below, or later through skade.adopt_jdbc_catalog()) installs the
 * column, index, triggers and grants skade needs on them.
 *
 * Schema skade holds the commit log, the SQL API and skade's internals.
 */

-- Every string skade reads from a file is UTF-8 (Iceberg's encoding) and
-- becomes text as it is: the database must be UTF8 too.
DO $encoding$
BEGIN
	IF pg_catalog.getdatabaseencoding() OPERATOR(pg_catalog.<>) 'UTF8' THEN
		RAISE EXCEPTION 'skade needs a UTF8 database, not %', pg_catalog.getdatabaseencoding()
			USING ERRCODE = 'feature_not_supported',
				  DETAIL = 'Iceberg metadata and manifests hold UTF-8 text, which skade returns as text, json and jsonb.',
				  HINT = 'Create the database with ENCODING ''UTF8'' (from template0).';
	END IF;
END
$encoding$;

-- schema skade: made by CREATE EXTENSION itself (skade.control names it),
-- so it is not a member and pg_dump dumps it before CREATE EXTENSION

-- Roles: created once per cluster, kept across DROP EXTENSION.
DO $roles$
BEGIN
	IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'skade_reader') THEN
		CREATE ROLE skade_reader NOLOGIN;
	END IF;
	IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'skade_writer') THEN
		CREATE ROLE skade_writer NOLOGIN;
	END IF;
	IF NOT pg_has_role('skade_writer', 'skade_reader', 'MEMBER') THEN
		GRANT skade_reader TO skade_writer;
	END IF;
END
$roles$;

GRANT USAGE ON SCHEMA skade TO skade_reader;

/*
 * The commit log: append-only, one row per pointer change, written by the
 * C trigger on iceberg_tables in the same transaction as the change, from
 * the SQL API and from plain DML alike.
 */
CREATE TABLE skade.commit_log (
	seq				bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	op				text NOT NULL,	-- create register commit rename drop adopt
	source			text NOT NULL,	-- api | sql
	catalog_name	text NOT NULL,
	table_namespace	text NOT NULL,
	table_name		text NOT NULL,
	iceberg_type	text,
	metadata_location text,
	previous_metadata_location text,
	prev_namespace	text,
	prev_name		text,
	committed_at	timestamptz NOT NULL DEFAULT clock_timestamp(),
	committed_by	name NOT NULL DEFAULT current_user,
	xact_id			xid8 NOT NULL DEFAULT pg_current_xact_id(),
	snapshot_id		bigint,
	detail			jsonb		-- grant, revoke: {"access", "grantee", "on"}
);
COMMENT ON TABLE skade.commit_log IS
	'append-only log of every iceberg_tables pointer change (SQL API and JDBC DML)';
CREATE INDEX commit_log_table_idx
	ON skade.commit_log (catalog_name, table_namespace, table_name, seq);
SELECT pg_catalog.pg_extension_config_dump('skade.commit_log', '');
SELECT pg_catalog.pg_extension_config_dump('skade.commit_log_seq_seq', '');
GRANT SELECT ON skade.commit_log TO skade_reader;

/*
 * Snapshot resolution, from heap tables alone: for each table, each snapshot
 * id with the metadata that first made it current (made_current) and the
 * first metadata that contained it.  Written by the commit-log trigger when
 * the new metadata is readable (else later, by skade.resolve_commit_log());
 * rows follow renames and vanish with their table.  A snapshot resolves to
 * its made_current row if any, else its first row.  The STree64 index is
 * built from this table.
 */
CREATE TABLE skade.snapshot_map (
	catalog_name	text NOT NULL,
	table_namespace	text NOT NULL,
	table_name		text NOT NULL,
	snapshot_id		bigint NOT NULL,
	made_current	boolean NOT NULL,
	seq				bigint NOT NULL,	-- the commit_log row of that metadata
	metadata_location text NOT NULL,
	committed_at	timestamptz NOT NULL,
	PRIMARY KEY (catalog_name, table_namespace, table_name, snapshot_id, made_current)
);
CREATE INDEX snapshot_map_id_idx ON skade.snapshot_map (snapshot_id, made_current DESC, seq);
SELECT pg_catalog.pg_extension_config_dump('skade.snapshot_map', '');
GRANT SELECT ON skade.snapshot_map TO skade_reader;

/* ---------------------------------------------------------------- internals */

-- These run the log INSERT as the owner of skade.commit_log (see commit_log.c).
CREATE FUNCTION skade.log_pointer_change() RETURNS trigger
	AS 'MODULE_PATHNAME', 'skade_log_pointer_change'
	LANGUAGE C;
CREATE FUNCTION skade.log_truncate() RETURNS trigger
	AS 'MODULE_PATHNAME', 'skade_log_truncate'
	LANGUAGE C;
CREATE FUNCTION skade.commit_log_append_only() RETURNS trigger
	AS 'MODULE_PATHNAME', 'skade_commit_log_append_only'
	LANGUAGE C;

CREATE TRIGGER commit_log_append_only
	BEFORE UPDATE OR DELETE ON skade.commit_log
	FOR EACH ROW EXECUTE FUNCTION skade.commit_log_append_only();
CREATE TRIGGER commit_log_no_truncate
	BEFORE TRUNCATE ON skade.commit_log
	FOR EACH STATEMENT EXECUTE FUNCTION skade.commit_log_append_only();

/* ------------------------------------------------------------ privileges per object */

/*
 * Privileges per catalog, namespace and table or view (privileges.c).  A
 * member of skade_user may read or write what skade.grants gives one of its
 * roles, and nothing else; skade_reader and skade_writer stay database-wide,
 * and a role in neither skade_user nor those keeps what its own privileges
 * on the catalog tables give.  Row-level security on the catalog tables
 * applies the same rule to the SQL API, to the JDBC clients' own statements
 * and to REST.
 */
DO $skade_user$
BEGIN
	IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'skade_user') THEN
		CREATE ROLE skade_user NOLOGIN;
	END IF;
END
$skade_user$;
GRANT USAGE ON SCHEMA skade TO skade_user;

-- one row per grant: a catalog (namespace NULL), a namespace and the
-- namespaces below it (name NULL), or one table or view; write implies read
CREATE TABLE skade.grants (
	grantee			regrole NOT NULL,
	access			text NOT NULL CHECK (access IN ('read', 'write')),
	catalog_name	text NOT NULL,
	namespace		text,
	name			text,
	granted_by		name NOT NULL,
	granted_at		timestamptz NOT NULL,
	CHECK (name IS NULL OR namespace IS NOT NULL),
	UNIQUE NULLS NOT DISTINCT (grantee, catalog_name, namespace, name)
);
COMMENT ON TABLE skade.grants IS
	'who may read or write which catalog, namespace, table or view (members of skade_user)';
REVOKE ALL ON skade.grants FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('skade.grants', '');

CREATE FUNCTION skade.grants_changed() RETURNS trigger
	AS 'MODULE_PATHNAME', 'skade_grants_changed' LANGUAGE C;
CREATE TRIGGER grants_changed
	AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON skade.grants
	FOR EACH STATEMENT EXECUTE FUNCTION skade.grants_changed();

-- may the current user read or write the object? (namespace NULL: the catalog;
-- name NULL: the namespace)
CREATE FUNCTION skade.may(access text, namespace text, name text DEFAULT NULL,
						  catalog text DEFAULT NULL) RETURNS boolean
	AS 'MODULE_PATHNAME', 'skade_may' LANGUAGE C STABLE PARALLEL RESTRICTED COST 100;
CREATE FUNCTION skade.may_see_namespace(namespace text, catalog text DEFAULT NULL)
	RETURNS boolean
	AS 'MODULE_PATHNAME', 'skade_may_see_namespace' LANGUAGE C STABLE PARALLEL RESTRICTED COST 100;
-- the write policies' test: true (may write), false (cannot see it), else 42501 (a clear
-- refusal of a change to something the role can see)
CREATE FUNCTION skade.check_write(namespace text, name text, catalog text) RETURNS boolean
	AS 'MODULE_PATHNAME', 'skade_check_write' LANGUAGE C STABLE PARALLEL RESTRICTED COST 1000;
CREATE FUNCTION skade.grant(access text, role name, namespace text, name text DEFAULT NULL,
							catalog text DEFAULT NULL) RETURNS boolean
	AS 'MODULE_PATHNAME', 'skade_grant' LANGUAGE C;
CREATE FUNCTION skade.revoke(access text, role name, namespace text, name text DEFAULT NULL,
							 catalog text DEFAULT NULL) RETURNS boolean
	AS 'MODULE_PATHNAME', 'skade_revoke' LANGUAGE C;

/*
 * attach_policies: the row-level security of the JDBC catalog tables.
 * Members of skade_user see and change the rows skade.may() allows them;
 * everyone else (skade_reader, skade_writer, roles with their own table
 * privileges) every row, as before.  The unrestricted policy does not
 * depend on the extension: after DROP EXTENSION ... CASCADE the clients
 * keep working, and members of skade_user see nothing.  Idempotent.
 */
CREATE FUNCTION skade.attach_policies() RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
SET client_min_messages = warning
AS $policies$
BEGIN
	DROP POLICY IF EXISTS skade_unrestricted ON public.iceberg_tables;
	DROP POLICY IF EXISTS skade_db_wide_read ON public.iceberg_tables;
	DROP POLICY IF EXISTS skade_db_wide_write ON public.iceberg_tables;
	DROP POLICY IF EXISTS skade_read ON public.iceberg_tables;
	DROP POLICY IF EXISTS skade_create ON public.iceberg_tables;
	DROP POLICY IF EXISTS skade_change ON public.iceberg_tables;
	DROP POLICY IF EXISTS skade_drop ON public.iceberg_tables;
	CREATE POLICY skade_unrestricted ON public.iceberg_tables
		USING (NOT pg_catalog.pg_has_role('skade_user', 'USAGE'))
		WITH CHECK (NOT pg_catalog.pg_has_role('skade_user', 'USAGE'));
	-- the database-wide roles: a constant, so their statements evaluate no policy per row
	CREATE POLICY skade_db_wide_read ON public.iceberg_tables FOR SELECT TO skade_reader USING (true);
	CREATE POLICY skade_db_wide_write ON public.iceberg_tables TO skade_writer USING (true) WITH CHECK (true);
	CREATE POLICY skade_read ON public.iceberg_tables FOR SELECT TO skade_user
		USING (skade.may('read', table_namespace, table_name, catalog_name));
	CREATE POLICY skade_create ON public.iceberg_tables FOR INSERT TO skade_user
		WITH CHECK (skade.check_write(table_namespace, table_name, catalog_name));
	CREATE POLICY skade_change ON public.iceberg_tables FOR UPDATE TO skade_user
		USING (skade.check_write(table_namespace, table_name, catalog_name))
		WITH CHECK (skade.check_write(table_namespace, table_name, catalog_name));
	CREATE POLICY skade_drop ON public.iceberg_tables FOR DELETE TO skade_user
		USING (skade.check_write(table_namespace, table_name, catalog_name));
	ALTER TABLE public.iceberg_tables ENABLE ROW LEVEL SECURITY;

	DROP POLICY IF EXISTS skade_unrestricted ON public.iceberg_namespace_properties;
	DROP POLICY IF EXISTS skade_db_wide_read ON public.iceberg_namespace_properties;
	DROP POLICY IF EXISTS skade_db_wide_write ON public.iceberg_namespace_properties;
	DROP POLICY IF EXISTS skade_read ON public.iceberg_namespace_properties;
	DROP POLICY IF EXISTS skade_create ON public.iceberg_namespace_properties;
	DROP POLICY IF EXISTS skade_change ON public.iceberg_namespace_properties;
	DROP POLICY IF EXISTS skade_drop ON public.iceberg_namespace_properties;
	CREATE POLICY skade_unrestricted ON public.iceberg_namespace_properties
		USING (NOT pg_catalog.pg_has_role('skade_user', 'USAGE'))
		WITH CHECK (NOT pg_catalog.pg_has_role('skade_user', 'USAGE'));
	-- the database-wide roles: a constant, so their statements evaluate no policy per row
	CREATE POLICY skade_db_wide_read ON public.iceberg_namespace_properties FOR SELECT TO skade_reader USING (true);
	CREATE POLICY skade_db_wide_write ON public.iceberg_namespace_properties TO skade_writer USING (true) WITH CHECK (true);
	CREATE POLICY skade_read ON public.iceberg_namespace_properties FOR SELECT TO skade_user
		USING (skade.may_see_namespace(namespace, catalog_name));
	CREATE POLICY skade_create ON public.iceberg_namespace_properties FOR INSERT TO skade_user
		WITH CHECK (skade.check_write(namespace, NULL, catalog_name));
	CREATE POLICY skade_change ON public.iceberg_namespace_properties FOR UPDATE TO skade_user
		USING (skade.check_write(namespace, NULL, catalog_name))
		WITH CHECK (skade.check_write(namespace, NULL, catalog_name));
	CREATE POLICY skade_drop ON public.iceberg_namespace_properties FOR DELETE TO skade_user
		USING (skade.check_write(namespace, NULL, catalog_name));
	ALTER TABLE public.iceberg_namespace_properties ENABLE ROW LEVEL SECURITY;

	GRANT SELECT, INSERT, UPDATE, DELETE
		ON public.iceberg_tables, public.iceberg_namespace_properties TO skade_user;
END
$policies$;
REVOKE ALL ON FUNCTION skade.attach_policies() FROM PUBLIC;

/*
 * attach: make public.iceberg_tables / iceberg_namespace_properties skade's.
 * Idempotent.  Creates the tables (JDBC schema V1) when absent; otherwise
 * upgrades a V0 table, adds the prefix index, the triggers and the grants.
 * Returns the number of pre-existing iceberg_tables rows that were adopted
 * into the commit log.
 */
CREATE FUNCTION skade.attach() RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
SET client_min_messages = warning
AS $attach$
DECLARE
	adopted bigint := 0;
BEGIN
	IF to_regclass('public.iceberg_tables') IS NULL THEN
		-- the DDL of the clients (JDBC schema V1), with 'TABLE' as the default type
		CREATE TABLE public.iceberg_tables (
			catalog_name varchar(255) NOT NULL,
			table_namespace varchar(255) NOT NULL,
			table_name varchar(255) NOT NULL,
			metadata_location varchar(1000),
			previous_metadata_location varchar(1000),
			iceberg_type varchar(5) DEFAULT 'TABLE',
			PRIMARY KEY (catalog_name, table_namespace, table_name));
	ELSIF NOT EXISTS (SELECT 1 FROM pg_attribute
					  WHERE attrelid = 'public.iceberg_tables'::regclass
						AND attname = 'iceberg_type' AND NOT attisdropped) THEN
		-- a V0 catalog: the same ALTER that Java runs with jdbc.schema-version=V1
		ALTER TABLE public.iceberg_tables ADD COLUMN iceberg_type varchar(5);
		ALTER TABLE public.iceberg_tables ALTER COLUMN iceberg_type SET DEFAULT 'TABLE';
	END IF;
	IF to_regclass('public.iceberg_namespace_properties') IS NULL THEN
		CREATE TABLE public.iceberg_namespace_properties (
			catalog_name varchar(255) NOT NULL,
			namespace varchar(255) NOT NULL,
			property_key varchar(255) NOT NULL,
			property_value varchar(1000),
			PRIMARY KEY (catalog_name, namespace, property_key));
	END IF;

	-- serves the clients' "table_namespace LIKE 'x.%'" probes under any collation
	CREATE INDEX IF NOT EXISTS iceberg_tables_namespace_prefix_idx
		ON public.iceberg_tables (catalog_name, table_namespace varchar_pattern_ops);
	CREATE INDEX IF NOT EXISTS iceberg_namespace_properties_prefix_idx
		ON public.iceberg_namespace_properties (catalog_name, namespace varchar_pattern_ops);

	IF NOT EXISTS (SELECT 1 FROM pg_trigger
				   WHERE tgrelid = 'public.iceberg_tables'::regclass
					 AND tgname = 'skade_log_pointer_change') THEN
		-- pre-existing rows enter the log once, as 'adopt'
		INSERT INTO skade.commit_log (op, source, catalog_name, table_namespace,
									  table_name, iceberg_type, metadata_location,
									  previous_metadata_location)
		SELECT 'adopt', 'api', t.catalog_name, t.table_namespace, t.table_name,
			   coalesce(t.iceberg_type, 'TABLE'), t.metadata_location,
			   t.previous_metadata_location
		FROM public.iceberg_tables t
		ORDER BY t.catalog_name, t.table_namespace, t.table_name;
		GET DIAGNOSTICS adopted = ROW_COUNT;

		CREATE TRIGGER skade_log_pointer_change
			AFTER INSERT OR UPDATE OR DELETE ON public.iceberg_tables
			FOR EACH ROW EXECUTE FUNCTION skade.log_pointer_change();
		CREATE TRIGGER skade_log_truncate
			BEFORE TRUNCATE ON public.iceberg_tables
			FOR EACH STATEMENT EXECUTE FUNCTION skade.log_truncate();
	END IF;
	-- fire even under session_replication_role = replica (and re-enable)
	ALTER TABLE public.iceberg_tables ENABLE ALWAYS TRIGGER skade_log_pointer_change;
	ALTER TABLE public.iceberg_tables ENABLE ALWAYS TRIGGER skade_log_truncate;

	REVOKE ALL ON public.iceberg_tables, public.iceberg_namespace_properties FROM PUBLIC;
	GRANT SELECT ON public.iceberg_tables, public.iceberg_namespace_properties
		TO skade_reader;
	GRANT SELECT, INSERT, UPDATE, DELETE
		ON public.iceberg_tables, public.iceberg_namespace_properties
		TO skade_writer;
	PERFORM skade.attach_policies();
	RETURN adopted;
END
$attach$;
REVOKE ALL ON FUNCTION skade.attach() FROM PUBLIC;

/*
 * adopt_jdbc_catalog: bring an existing vanilla JDBC catalog (public.iceberg_tables
 * created by Java, pyiceberg, Spark, ...) under skade.  Every row is kept in
 * place; each existing table enters the commit log as 'adopt'.
 */
CREATE FUNCTION skade.adopt_jdbc_catalog() RETURNS bigint
LANGUAGE sql SET search_path = pg_catalog, pg_temp
RETURN skade.attach();
REVOKE ALL ON FUNCTION skade.adopt_jdbc_catalog() FROM PUBLIC;

DO $install$
BEGIN
	IF to_regclass('public.iceberg_tables') IS NOT NULL THEN
		-- (a WARNING: CREATE EXTENSION hides notices)
		RAISE WARNING 'an existing JDBC catalog was found in public.iceberg_tables; it is left untouched'
			USING HINT = 'Run SELECT skade.adopt_jdbc_catalog(); to bring it under skade, keeping every row.';
	ELSE
		PERFORM skade.attach();
		-- the catalog data is the user's, not the extension's (see above)
		ALTER EXTENSION skade DROP TABLE public.iceberg_tables;
		ALTER EXTENSION skade DROP TABLE public.iceberg_namespace_properties;
	END IF;
END
$install$;

/* ------------------------------------------------------------------ SQL API */

CREATE FUNCTION skade.create_namespace(namespace text, properties jsonb DEFAULT '{}',
									   catalog text DEFAULT NULL)
	RETURNS void AS 'MODULE_PATHNAME', 'skade_create_namespace' LANGUAGE C;
CREATE FUNCTION skade.drop_namespace(namespace text, catalog text DEFAULT NULL)
	RETURNS void AS 'MODULE_PATHNAME', 'skade_drop_namespace' LANGUAGE C;
CREATE FUNCTION skade.namespace_exists(namespace text, catalog text DEFAULT NULL)
	RETURNS boolean AS 'MODULE_PATHNAME', 'skade_namespace_exists' LANGUAGE C STABLE
	PARALLEL RESTRICTED;
CREATE FUNCTION skade.list_namespaces(parent text DEFAULT NULL, catalog text DEFAULT NULL)
	RETURNS SETOF text AS 'MODULE_PATHNAME', 'skade_list_namespaces' LANGUAGE C STABLE
	ROWS 100 PARALLEL RESTRICTED;
CREATE FUNCTION skade.namespace_properties(namespace text, catalog text DEFAULT NULL)
	RETURNS jsonb AS 'MODULE_PATHNAME', 'skade_namespace_properties' LANGUAGE C STABLE
	PARALLEL RESTRICTED;
CREATE FUNCTION skade.update_namespace_properties(namespace text, updates jsonb DEFAULT '{}',
												  removals text[] DEFAULT '{}',
												  catalog text DEFAULT NULL,
												  OUT updated text[], OUT removed text[],
												  OUT missing text[])
	RETURNS record AS 'MODULE_PATHNAME', 'skade_update_namespace_properties' LANGUAGE C;

/*
 * path_component: name, checked to be one component of a path (not "." or
 * "..", no "/" or control character, 1..255 bytes; else 42602), as a
 * default location derived from a name needs it (new_table_metadata,
 * create_view; create_namespace checks its levels in C).
 */
CREATE FUNCTION skade.path_component(name text, what text DEFAULT 'table')
	RETURNS text AS 'MODULE_PATHNAME', 'skade_path_component' LANGUAGE C IMMUTABLE STRICT
	PARALLEL SAFE;

CREATE FUNCTION skade.register_table(namespace text, name text, metadata_location text,
									 catalog text DEFAULT NULL)
	RETURNS bigint AS 'MODULE_PATHNAME', 'skade_register_table' LANGUAGE C;
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
CREATE FUNCTION skade.table_metadata(namespace text, name text, snapshots text DEFAULT 'all',
									 catalog text DEFAULT NULL)
	RETURNS json AS 'MODULE_PATHNAME', 'skade_table_metadata_1_1' LANGUAGE C STABLE
	COST 5000 PARALLEL RESTRICTED;
CREATE FUNCTION skade.table_exists(namespace text, name text, catalog text DEFAULT NULL)
	RETURNS boolean AS 'MODULE_PATHNAME', 'skade_table_exists' LANGUAGE C STABLE
	PARALLEL RESTRICTED;
CREATE FUNCTION skade.list_tables(namespace text, catalog text DEFAULT NULL)
	RETURNS SETOF text AS 'MODULE_PATHNAME', 'skade_list_tables' LANGUAGE C STABLE
	ROWS 100 PARALLEL RESTRICTED;
CREATE FUNCTION skade.rename_table(namespace text, name text, new_namespace text,
								   new_name text, catalog text DEFAULT NULL)
	RETURNS bigint AS 'MODULE_PATHNAME', 'skade_rename_table' LANGUAGE C;
CREATE FUNCTION skade.drop_table(namespace text, name text, catalog text DEFAULT NULL)
	RETURNS text AS 'MODULE_PATHNAME', 'skade_drop_table' LANGUAGE C;
CREATE FUNCTION skade.commit_table(namespace text, name text, expected_location text,
								   new_location text, catalog text DEFAULT NULL)
	RETURNS bigint AS 'MODULE_PATHNAME', 'skade_commit_table' LANGUAGE C;
CREATE FUNCTION skade.commit_transaction(changes jsonb, catalog text DEFAULT NULL)
	RETURNS TABLE (namespace text, name text, metadata_location text, seq bigint)
	AS 'MODULE_PATHNAME', 'skade_commit_transaction' LANGUAGE C
	ROWS 10;

/* ------------------------------------------------------------ table metadata */

CREATE FUNCTION skade.snapshots(namespace text, name text, catalog text DEFAULT NULL)
	RETURNS TABLE (snapshot_id bigint, parent_id bigint, sequence_number bigint,
				   committed_at timestamptz, operation text, manifest_list text,
				   summary jsonb, schema_id integer, is_current boolean)
	AS 'MODULE_PATHNAME', 'skade_snapshots' LANGUAGE C STABLE
	COST 5000 ROWS 100 PARALLEL RESTRICTED;
CREATE FUNCTION skade.refs(namespace text, name text, catalog text DEFAULT NULL)
	RETURNS TABLE (name text, type text, snapshot_id bigint, max_ref_age_ms bigint,
				   max_snapshot_age_ms bigint, min_snapshots_to_keep integer)
	AS 'MODULE_PATHNAME', 'skade_refs' LANGUAGE C STABLE
	COST 5000 ROWS 10 PARALLEL RESTRICTED;
CREATE FUNCTION skade.history(namespace text, name text, catalog text DEFAULT NULL)
	RETURNS TABLE (made_current_at timestamptz, snapshot_id bigint, parent_id bigint,
				   is_current_ancestor boolean)
	AS 'MODULE_PATHNAME', 'skade_history' LANGUAGE C STABLE
	COST 5000 ROWS 100 PARALLEL RESTRICTED;

CREATE FUNCTION skade.cache_stats(OUT hits bigint, OUT misses bigint,
								  OUT coalesced_waits bigint, OUT evictions bigint,
								  OUT entries bigint, OUT bytes bigint, OUT capacity bigint,
								  OUT pointer_hits bigint, OUT pointer_misses bigint,
								  OUT pointer_entries bigint,
								  OUT manifest_hits bigint, OUT manifest_misses bigint,
								  OUT manifest_coalesced_waits bigint, OUT manifest_evictions bigint,
								  OUT manifest_entries bigint, OUT manifest_bytes bigint,
								  OUT manifest_capacity bigint)
	RETURNS record AS 'MODULE_PATHNAME', 'skade_cache_stats' LANGUAGE C VOLATILE
	PARALLEL RESTRICTED;
CREATE FUNCTION skade.cache_reset() RETURNS void
	AS 'MODULE_PATHNAME', 'skade_cache_reset' LANGUAGE C VOLATILE;

-- fills snapshot_id of logged changes whose metadata was unreadable at commit
CREATE FUNCTION skade.resolve_commit_log(max_rows integer DEFAULT NULL) RETURNS bigint
	AS 'MODULE_PATHNAME', 'skade_resolve_commit_log' LANGUAGE C VOLATILE
	SECURITY DEFINER SET search_path = pg_catalog, pg_temp;

/* ----------------------------------------------------------- time travel */

-- planner support: one row per array element (as unnest)
CREATE FUNCTION skade.resolve_many_support(internal) RETURNS internal
	AS 'MODULE_PATHNAME', 'skade_resolve_many_support' LANGUAGE C STRICT;
CREATE FUNCTION skade.resolve_many(snapshot_ids bigint[])
	RETURNS TABLE (snapshot_id bigint, catalog text, namespace text, name text,
				   metadata_location text)
	AS 'MODULE_PATHNAME', 'skade_resolve_many' LANGUAGE C STABLE
	COST 100 PARALLEL RESTRICTED SUPPORT skade.resolve_many_support;
CREATE FUNCTION skade.resolve_locations(snapshot_ids bigint[]) RETURNS text[]
	AS 'MODULE_PATHNAME', 'skade_resolve_locations' LANGUAGE C STABLE
	PARALLEL RESTRICTED;
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
CREATE FUNCTION skade.rebuild_index() RETURNS bigint
	AS 'MODULE_PATHNAME', 'skade_rebuild_index' LANGUAGE C VOLATILE;
CREATE FUNCTION skade.index_status(OUT enabled boolean, OUT database text,
								   OUT worker_pid integer, OUT generation bigint,
								   OUT entries bigint, OUT coverage double precision,
								   OUT bytes bigint, OUT build_ms double precision,
								   OUT built_at timestamptz, OUT commits_since_build bigint,
								   OUT misses_since_build bigint, OUT dirty_ids bigint,
								   OUT dirty_tables bigint, OUT all_dirty boolean,
								   OUT tree_answers bigint, OUT heap_answers bigint,
								   OUT implementation text)
	RETURNS record AS 'MODULE_PATHNAME', 'skade_index_status' LANGUAGE C VOLATILE
	PARALLEL RESTRICTED;
-- tree-routed vs heap-only answers on the same snapshot (property tests)
CREATE FUNCTION skade.index_check(snapshot_ids bigint[]) RETURNS bigint
	AS 'MODULE_PATHNAME', 'skade_index_check' LANGUAGE C STABLE
	COST 10000 PARALLEL RESTRICTED;

/* -------------------------------------------------------------- STree64 */

CREATE FUNCTION skade.stree64_selftest()
	RETURNS TABLE (n bigint, duplicates boolean, queries bigint, scalar_mismatches bigint,
				   avx2_mismatches bigint, batch_mismatches bigint, implementation text)
	AS 'MODULE_PATHNAME', 'skade_stree64_selftest' LANGUAGE C VOLATILE
	ROWS 10;
CREATE FUNCTION skade.stree64_bench(n bigint, queries bigint)
	RETURNS TABLE (method text, ns_per_lookup double precision)
	AS 'MODULE_PATHNAME', 'skade_stree64_bench' LANGUAGE C VOLATILE
	ROWS 10;

-- The manifest list of a snapshot (default: the current one), read from its Avro file
CREATE FUNCTION skade.manifests(namespace text, name text, snapshot_id bigint DEFAULT NULL,
								catalog text DEFAULT NULL)
	RETURNS TABLE (path text, length bigint, partition_spec_id integer, content text,
				   sequence_number bigint, min_sequence_number bigint,
				   added_snapshot_id bigint, added_files_count integer,
				   existing_files_count integer, deleted_files_count integer,
				   added_rows_count bigint, existing_rows_count bigint,
				   deleted_rows_count bigint, partitions jsonb)
	AS 'MODULE_PATHNAME', 'skade_manifests' LANGUAGE C STABLE
	COST 10000 ROWS 100 PARALLEL RESTRICTED;
-- One data or delete file of a manifest, as skade.files() and
-- skade.plan_files() return it: per-column statistics in columns
-- ({"name": {"id", "size", "value_count", "null_count", "nan_count", "lower",
-- "upper"}}, bounds decoded by the column's type); delete_files, in
-- plan_files() only, the delete files that apply to a data file
CREATE TYPE skade.content_file AS (content text, file_path text, file_format text,
	partition_spec_id integer, partition jsonb, record_count bigint,
	file_size_in_bytes bigint, columns jsonb, status text, snapshot_id bigint,
	sequence_number bigint, file_sequence_number bigint, manifest text,
	equality_ids integer[], referenced_data_file text, content_offset bigint,
	content_size_in_bytes bigint, delete_files text[]);
-- The live data and delete files of a snapshot
CREATE FUNCTION skade.files(namespace text, name text, snapshot_id bigint DEFAULT NULL,
							catalog text DEFAULT NULL)
	RETURNS SETOF skade.content_file
	AS 'MODULE_PATHNAME', 'skade_files' LANGUAGE C STABLE
	COST 10000 ROWS 1000 PARALLEL RESTRICTED;
-- The files of a snapshot that may hold rows matching filter (Iceberg REST
-- expression JSON), pruned by partition and column statistics, each with the
-- delete files that apply to it (delete_files), then those delete files
CREATE FUNCTION skade.plan_files(namespace text, name text, filter jsonb DEFAULT 'true',
								 snapshot_id bigint DEFAULT NULL, catalog text DEFAULT NULL)
	RETURNS SETOF skade.content_file
	AS 'MODULE_PATHNAME', 'skade_plan_files' LANGUAGE C STABLE
	COST 10000 ROWS 1000 PARALLEL RESTRICTED;

/* ------------------------------------------------------- writing metadata */

-- One new metadata file, create-only under skade.write_roots; content checked
-- by skade's own reader; Iceberg's file names only (metadata_write.c)
CREATE FUNCTION skade.write_table_metadata(location text, metadata jsonb,
										   namespace text DEFAULT NULL, catalog text DEFAULT NULL)
	RETURNS text AS 'MODULE_PATHNAME', 'skade_write_table_metadata' LANGUAGE C;
-- the pointer of a table create_table() wrote: register_table, logged "create"
CREATE FUNCTION skade.create_table_commit(namespace text, name text, metadata_location text,
										  catalog text DEFAULT NULL)
	RETURNS bigint AS 'MODULE_PATHNAME', 'skade_create_table_commit' LANGUAGE C;

/*
 * fresh_type: a schema type with Iceberg's fresh field ids, as Java's
 * TypeUtil.assignFreshIds numbers them: a struct's fields first, in order,
 * then each field's type; a list's element id, then the element; a map's
 * key and value ids, then the key and the value.  next_id is the last id
 * given; id_map collects {"old id": new id} for identifier fields and
 * partition and sort sources.  Malformed input is 22023 naming its path.
 */
CREATE FUNCTION skade.fresh_type(t jsonb, path text, INOUT next_id integer,
								 INOUT id_map jsonb, OUT result jsonb)
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $fresh$
DECLARE
	f jsonb;
	fields jsonb := '[]';
	ids integer[] := '{}';
	i integer := 0;
	r record;
BEGIN
	IF jsonb_typeof(t) OPERATOR(pg_catalog.=) 'string' THEN
		IF NOT (t #>> '{}') OPERATOR(pg_catalog.~) '^(boolean|int|long|float|double|date|time|timestamp|timestamptz|timestamp_ns|timestamptz_ns|string|uuid|binary|variant|unknown|decimal\(\d+, *\d+\)|fixed\[\d+\]|geometry(\(.*\))?|geography(\(.*\))?)$' THEN
			RAISE EXCEPTION 'schema: % has unknown type %', path, t USING ERRCODE = 'invalid_parameter_value';
		END IF;
		result := t;
		RETURN;
	END IF;
	IF jsonb_typeof(t) OPERATOR(pg_catalog.<>) 'object' OR NOT t ? 'type' THEN
		RAISE EXCEPTION 'schema: % is not a type', path USING ERRCODE = 'invalid_parameter_value';
	END IF;
	CASE t->>'type'
	WHEN 'struct' THEN
		IF jsonb_typeof(t->'fields') IS DISTINCT FROM 'array' THEN
			RAISE EXCEPTION 'schema: %.fields must be an array', path
				USING ERRCODE = 'invalid_parameter_value';
		END IF;
		FOR f IN SELECT e FROM jsonb_array_elements(t->'fields') e LOOP
			IF jsonb_typeof(f->'name') IS DISTINCT FROM 'string' OR NOT f ? 'type'
			   OR jsonb_typeof(f->'required') IS DISTINCT FROM 'boolean' THEN
				RAISE EXCEPTION 'schema: field % of % needs "name" (string), "required" (boolean) and "type"',
					i, path USING ERRCODE = 'invalid_parameter_value';
			END IF;
			next_id := next_id OPERATOR(pg_catalog.+) 1;
			ids := ids OPERATOR(pg_catalog.||) next_id;
			IF f ? 'id' THEN
				id_map := id_map OPERATOR(pg_catalog.||) jsonb_build_object(f->>'id', next_id);
			END IF;
			i := i OPERATOR(pg_catalog.+) 1;
		END LOOP;
		i := 0;
		FOR f IN SELECT e FROM jsonb_array_elements(t->'fields') e LOOP
			i := i OPERATOR(pg_catalog.+) 1;
			SELECT * INTO r FROM skade.fresh_type(f->'type', path OPERATOR(pg_catalog.||) '.' OPERATOR(pg_catalog.||) (f->>'name'),
												  next_id, id_map);
			next_id := r.next_id;
			id_map := r.id_map;
			fields := fields OPERATOR(pg_catalog.||) jsonb_build_array(
				f OPERATOR(pg_catalog.||) jsonb_build_object('id', ids[i], 'type', r.result));
		END LOOP;
		result := jsonb_build_object('type', 'struct', 'fields', fields);
	WHEN 'list' THEN
		IF NOT t ? 'element' OR jsonb_typeof(t->'element-required') IS DISTINCT FROM 'boolean' THEN
			RAISE EXCEPTION 'schema: % (list) needs "element" and "element-required"', path
				USING ERRCODE = 'invalid_parameter_value';
		END IF;
		next_id := next_id OPERATOR(pg_catalog.+) 1;
		result := t OPERATOR(pg_catalog.||) jsonb_build_object('element-id', next_id);
		IF t ? 'element-id' THEN
			id_map := id_map OPERATOR(pg_catalog.||) jsonb_build_object(t->>'element-id', next_id);
		END IF;
		SELECT * INTO r FROM skade.fresh_type(t->'element', path OPERATOR(pg_catalog.||) '.element', next_id, id_map);
		next_id := r.next_id;
		id_map := r.id_map;
		result := result OPERATOR(pg_catalog.||) jsonb_build_object('element', r.result);
	WHEN 'map' THEN
		IF NOT (t ? 'key' AND t ? 'value') OR jsonb_typeof(t->'value-required') IS DISTINCT FROM 'boolean' THEN
			RAISE EXCEPTION 'schema: % (map) needs "key", "value" and "value-required"', path
				USING ERRCODE = 'invalid_parameter_value';
		END IF;
		result := t OPERATOR(pg_catalog.||) jsonb_build_object('key-id', next_id OPERATOR(pg_catalog.+) 1,
												'value-id', next_id OPERATOR(pg_catalog.+) 2);
		IF t ? 'key-id' THEN
			id_map := id_map OPERATOR(pg_catalog.||) jsonb_build_object(t->>'key-id', next_id OPERATOR(pg_catalog.+) 1);
		END IF;
		IF t ? 'value-id' THEN
			id_map := id_map OPERATOR(pg_catalog.||) jsonb_build_object(t->>'value-id', next_id OPERATOR(pg_catalog.+) 2);
		END IF;
		next_id := next_id OPERATOR(pg_catalog.+) 2;
		SELECT * INTO r FROM skade.fresh_type(t->'key', path OPERATOR(pg_catalog.||) '.key', next_id, id_map);
		next_id := r.next_id;
		id_map := r.id_map;
		result := result OPERATOR(pg_catalog.||) jsonb_build_object('key', r.result);
		SELECT * INTO r FROM skade.fresh_type(t->'value', path OPERATOR(pg_catalog.||) '.value', next_id, id_map);
		next_id := r.next_id;
		id_map := r.id_map;
		result := result OPERATOR(pg_catalog.||) jsonb_build_object('value', r.result);
	ELSE
		RAISE EXCEPTION 'schema: % has unknown type "%"', path, t->>'type'
			USING ERRCODE = 'invalid_parameter_value';
	END CASE;
END
$fresh$;

/*
 * new_table_metadata: the metadata of a new Iceberg table, as a REST
 * catalog's CreateTableRequest makes it (Java's
 * TableMetadata.newTableMetadata): fresh column ids from 1, partition field
 * ids from 1000, sort order 1 (0 when unsorted), schema, spec and order ids
 * 0; "format-version" among the properties sets the format; reserved
 * properties are not kept and Parquet defaults to zstd, as Java persists
 * them.  The location is the argument, else the namespace's location (its
 * property, else skade.warehouse/<levels>) followed by /<name>.  The
 * namespace must exist and the table must not.  Nothing is written (a
 * staged create answers with it).
 */
CREATE FUNCTION skade.new_table_metadata(namespace text, name text, schema jsonb,
								   partition_spec jsonb DEFAULT NULL, sort_order jsonb DEFAULT NULL,
								   properties jsonb DEFAULT '{}', location text DEFAULT NULL,
								   format_version integer DEFAULT 2, catalog text DEFAULT NULL)
	RETURNS jsonb
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $create$
DECLARE
	fv integer := format_version;
	props jsonb := coalesce(properties, '{}');
	fresh record;
	new_schema jsonb;
	spec_fields jsonb := '[]';
	order_fields jsonb := '[]';
	f jsonb;
	i integer := 0;
	src text;
	loc text := location;
	now_ms bigint := (extract(epoch FROM clock_timestamp()) OPERATOR(pg_catalog.*) 1000)::bigint;
	spec jsonb;
	sort jsonb;
	meta jsonb;
BEGIN
	IF namespace IS NULL OR name IS NULL OR schema IS NULL OR props IS NULL OR fv IS NULL THEN
		RAISE EXCEPTION 'namespace, name, schema, properties and format_version must not be NULL'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF jsonb_typeof(props) OPERATOR(pg_catalog.<>) 'object' OR EXISTS (
		SELECT 1 FROM jsonb_each(props) p WHERE jsonb_typeof(p.value) OPERATOR(pg_catalog.<>) 'string') THEN
		RAISE EXCEPTION 'properties must be a JSON object of strings' USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF props ? 'format-version' THEN
		fv := CASE WHEN props->>'format-version' ~ '^[0-9]{1,2}$' THEN (props->>'format-version')::integer ELSE -1 END;
	END IF;
	-- what Java persists: zstd for Parquet unless said otherwise, no reserved keys
	props := jsonb_build_object('write.parquet.compression-codec', 'zstd') OPERATOR(pg_catalog.||)
		(props OPERATOR(pg_catalog.-) ARRAY['format-version', 'uuid', 'snapshot-count', 'current-snapshot-id',
			'current-snapshot-summary', 'current-snapshot-timestamp-ms', 'current-schema',
			'default-partition-spec', 'default-sort-order']);
	IF fv IS NULL OR fv NOT BETWEEN 1 AND 3 THEN
		RAISE EXCEPTION 'format version % is not supported', coalesce(fv::text, 'NULL')
			USING ERRCODE = 'feature_not_supported', HINT = 'Iceberg format versions 1, 2 and 3 are.';
	END IF;
	IF NOT skade.namespace_exists(namespace, catalog) THEN
		RAISE EXCEPTION 'namespace "%" does not exist', namespace USING ERRCODE = 'invalid_schema_name';
	END IF;
	-- (what holds the name is said: "view" or "table")
	IF EXISTS (SELECT 1 FROM public.iceberg_tables t
			   WHERE t.catalog_name OPERATOR(pg_catalog.=) coalesce(catalog, current_setting('skade.catalog'))
				 AND t.table_namespace OPERATOR(pg_catalog.=) namespace
				 AND t.table_name OPERATOR(pg_catalog.=) name) THEN
		RAISE EXCEPTION '% "%.%" already exists',
			(SELECT lower(coalesce(t.iceberg_type, 'TABLE')) FROM public.iceberg_tables t
			  WHERE t.catalog_name OPERATOR(pg_catalog.=) coalesce(catalog, current_setting('skade.catalog'))
				AND t.table_namespace OPERATOR(pg_catalog.=) namespace AND t.table_name OPERATOR(pg_catalog.=) name),
			namespace, name USING ERRCODE = 'unique_violation';
	END IF;

	-- the schema: fresh ids; identifier fields follow their columns
	SELECT * INTO fresh FROM skade.fresh_type(jsonb_build_object('type', 'struct', 'fields', schema->'fields'),
											  'schema', 0, '{}'::jsonb);
	new_schema := jsonb_build_object('type', 'struct', 'schema-id', 0, 'fields', fresh.result->'fields');
	IF jsonb_array_length(coalesce(schema->'identifier-field-ids', '[]')) OPERATOR(pg_catalog.>) 0 THEN
		new_schema := new_schema OPERATOR(pg_catalog.||) jsonb_build_object('identifier-field-ids',
			(SELECT jsonb_agg((fresh.id_map->>(x::text))::integer) FROM jsonb_array_elements_text(schema->'identifier-field-ids') x));
	END IF;

	-- the spec: field ids from 1000, sources through the fresh ids
	FOR f IN SELECT e FROM jsonb_array_elements(coalesce(partition_spec->'fields', '[]')) e LOOP
		src := fresh.id_map->>(f->>'source-id');
		IF src IS NULL OR jsonb_typeof(f->'transform') IS DISTINCT FROM 'string' OR jsonb_typeof(f->'name') IS DISTINCT FROM 'string' THEN
			RAISE EXCEPTION 'partition_spec: field % needs a "source-id" of the schema, a "transform" and a "name"', i
				USING ERRCODE = 'invalid_parameter_value';
		END IF;
		spec_fields := spec_fields OPERATOR(pg_catalog.||) jsonb_build_array(jsonb_build_object(
			'name', f->'name', 'transform', f->'transform', 'source-id', src::integer, 'field-id', 1000 OPERATOR(pg_catalog.+) i));
		i := i OPERATOR(pg_catalog.+) 1;
	END LOOP;
	spec := jsonb_build_object('spec-id', 0, 'fields', spec_fields);

	-- the sort order: 1, or 0 when unsorted
	i := 0;
	FOR f IN SELECT e FROM jsonb_array_elements(coalesce(sort_order->'fields', '[]')) e LOOP
		src := fresh.id_map->>(f->>'source-id');
		IF src IS NULL OR jsonb_typeof(f->'transform') IS DISTINCT FROM 'string'
		   OR NOT (f->>'direction') IN ('asc', 'desc') OR NOT (f->>'null-order') IN ('nulls-first', 'nulls-last') THEN
			RAISE EXCEPTION 'sort_order: field % needs a "source-id" of the schema, a "transform", "direction" asc|desc and "null-order" nulls-first|nulls-last', i
				USING ERRCODE = 'invalid_parameter_value';
		END IF;
		order_fields := order_fields OPERATOR(pg_catalog.||) jsonb_build_array(jsonb_build_object(
			'transform', f->'transform', 'source-id', src::integer, 'direction', f->'direction', 'null-order', f->'null-order'));
		i := i OPERATOR(pg_catalog.+) 1;
	END LOOP;
	sort := jsonb_build_object('order-id', CASE WHEN i OPERATOR(pg_catalog.>) 0 THEN 1 ELSE 0 END, 'fields', order_fields);

	-- where
	IF loc IS NULL THEN
		loc := skade.namespace_properties(namespace, catalog)->>'location';
		IF loc IS NULL THEN
			RAISE EXCEPTION 'table "%.%" has no location', namespace, name
				USING ERRCODE = 'invalid_parameter_value',
					  HINT = 'Pass location, set the namespace''s "location" property, or set skade.warehouse.';
		END IF;
		-- the name becomes a directory: one path component (else 42602)
		loc := rtrim(loc, '/') OPERATOR(pg_catalog.||) '/' OPERATOR(pg_catalog.||) skade.path_component(name, 'table');
	END IF;
	loc := rtrim(loc, '/');
	meta := jsonb_build_object(
		'format-version', fv,
		'table-uuid', gen_random_uuid()::text,
		'location', loc,
		'last-sequence-number', 0,
		'last-updated-ms', now_ms,
		'last-column-id', fresh.next_id,
		'current-schema-id', 0,
		'schemas', jsonb_build_array(new_schema),
		'default-spec-id', 0,
		'partition-specs', jsonb_build_array(spec),
		'last-partition-id', 999 OPERATOR(pg_catalog.+) jsonb_array_length(spec_fields),
		'default-sort-order-id', sort->'order-id',
		'sort-orders', jsonb_build_array(sort),
		'properties', props,
		'current-snapshot-id', -1,
		'refs', '{}'::jsonb,
		'snapshots', '[]'::jsonb,
		'statistics', '[]'::jsonb,
		'partition-statistics', '[]'::jsonb,
		'snapshot-log', '[]'::jsonb,
		'metadata-log', '[]'::jsonb);
	IF fv OPERATOR(pg_catalog.=) 1 THEN
		-- v1 readers want the current schema and spec at the top level too
		meta := (meta OPERATOR(pg_catalog.-) 'last-sequence-number') OPERATOR(pg_catalog.||) jsonb_build_object(
			'schema', new_schema, 'partition-spec', spec_fields);
	ELSIF fv OPERATOR(pg_catalog.=) 3 THEN
		meta := meta OPERATOR(pg_catalog.||) jsonb_build_object('next-row-id', 0, 'current-snapshot-id', NULL);
	END IF;

	RETURN meta;
END
$create$;

/*
 * create_table: new_table_metadata written to
 * <location>/metadata/00000-<uuid>.metadata.json (.gz.metadata.json with
 * write.metadata.compression-codec = gzip; the directory from
 * write.metadata.path) under skade.write_roots, then the pointer added
 * through the same INSERT the JDBC clients run (logged "create").
 * Returns the metadata location.
 */
CREATE FUNCTION skade.create_table(namespace text, name text, schema jsonb,
								   partition_spec jsonb DEFAULT NULL, sort_order jsonb DEFAULT NULL,
								   properties jsonb DEFAULT '{}', location text DEFAULT NULL,
								   format_version integer DEFAULT 2, catalog text DEFAULT NULL)
	RETURNS text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $create$
DECLARE
	meta jsonb := skade.new_table_metadata(namespace, name, schema, partition_spec, sort_order,
										   properties, location, format_version, catalog);
	props jsonb := meta->'properties';
	dir text := coalesce(rtrim(props->>'write.metadata.path', '/'),
						 (meta->>'location') OPERATOR(pg_catalog.||) '/metadata');
	file text := dir OPERATOR(pg_catalog.||) '/00000-' OPERATOR(pg_catalog.||) gen_random_uuid()::text
		OPERATOR(pg_catalog.||) CASE WHEN lower(props->>'write.metadata.compression-codec') OPERATOR(pg_catalog.=) 'gzip'
								THEN '.gz.metadata.json' ELSE '.metadata.json' END;
BEGIN
	PERFORM skade.write_table_metadata(file, meta, namespace, catalog);
	PERFORM skade.create_table_commit(namespace, name, file, catalog);
	RETURN file;
END
$create$;

-- m at format version v (> its own): v2 has a last-sequence-number, v3 a next-row-id
CREATE FUNCTION skade.upgraded(m jsonb, v integer) RETURNS jsonb
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp
RETURN m || jsonb_build_object('format-version', v)
	|| CASE WHEN m ? 'last-sequence-number' THEN '{}' ELSE '{"last-sequence-number": 0}' END::jsonb
	|| CASE WHEN v >= 3 AND NOT m ? 'next-row-id' THEN '{"next-row-id": 0}' ELSE '{}' END::jsonb;

/* update_table's builder steps (Java's TableMetadata.Builder rules) */

-- a JSON integer, as Java's JsonUtil.getInt reads one (integral, in int range);
-- anything else (missing, a string, 1.5) is 22023 naming what
CREATE FUNCTION skade.json_int(v jsonb, what text) RETURNS integer
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $f$
BEGIN
	IF jsonb_typeof(v) = 'number' AND v::text ~ '^-?[0-9]{1,10}$'
	   AND v::text::bigint BETWEEN -2147483648 AND 2147483647 THEN
		RETURN v::text::integer;
	END IF;
	RAISE EXCEPTION '% must be an integer, not %', what, coalesce(v::text, 'missing')
		USING ERRCODE = 'invalid_parameter_value';
END
$f$;

-- the type of field id, reached from the schema through structs only (NULL: none)
CREATE FUNCTION skade.source_type(schema jsonb, id integer) RETURNS jsonb
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $f$
	WITH RECURSIVE f(field) AS (
		SELECT e FROM jsonb_array_elements(coalesce(schema->'fields', '[]')) e
		UNION ALL
		SELECT e FROM f, jsonb_array_elements(f.field->'type'->'fields') e
		 WHERE jsonb_typeof(f.field->'type') = 'object' AND f.field->'type'->>'type' = 'struct')
	SELECT field->'type' FROM f WHERE field->'id' = to_jsonb(id) LIMIT 1
$f$;

-- why partition field (is_spec) or sort field f cannot be bound to schema, NULL
-- if it can: Java's PartitionSpec/SortOrder.checkCompatibility (a primitive
-- source; Transform.canTransform; a partition field's void transform is exempt)
CREATE FUNCTION skade.bind_error(schema jsonb, f jsonb, is_spec boolean) RETURNS text
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $f$
DECLARE
	t jsonb := skade.source_type(schema, (f->>'source-id')::integer);
	tr text := f->>'transform';
	b text;
	ok boolean;
BEGIN
	IF is_spec AND tr = 'void' THEN
		RETURN NULL;
	ELSIF t IS NULL THEN
		RETURN format('source id %s is not a field of the current schema', f->>'source-id');
	ELSIF jsonb_typeof(t) <> 'string' OR t #>> '{}' = 'variant' THEN
		RETURN format('source id %s is not a primitive field', f->>'source-id');
	END IF;
	b := regexp_replace(t #>> '{}', '[\[(].*$', '');
	ok := CASE WHEN tr = 'identity' THEN b NOT IN ('geometry', 'geography')
			WHEN tr ~ '^bucket\[[0-9]+\]$' THEN b IN ('int', 'long', 'date', 'time', 'timestamp', 'timestamptz',
				'timestamp_ns', 'timestamptz_ns', 'string', 'binary', 'fixed', 'decimal', 'uuid')
			WHEN tr ~ '^truncate\[[0-9]+\]$' THEN b IN ('int', 'long', 'string', 'binary', 'decimal')
			WHEN tr IN ('year', 'month', 'day') THEN b IN ('date', 'timestamp', 'timestamptz', 'timestamp_ns', 'timestamptz_ns')
			WHEN tr = 'hour' THEN b IN ('timestamp', 'timestamptz', 'timestamp_ns', 'timestamptz_ns')
			ELSE true END;
	IF ok THEN
		RETURN NULL;
	END IF;
	RETURN format('transform %s cannot apply to source id %s of type %s', tr, f->>'source-id', t #>> '{}');
END
$f$;

-- add-schema: ids kept as sent; an identical schema is reused (no change when
-- last-column-id stays: last_added is its id, nchanges as it was), else max id + 1
CREATE FUNCTION skade.add_schema(m jsonb, schema jsonb, idx integer, INOUT nchanges integer,
								 OUT meta jsonb, OUT last_added integer)
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $f$
DECLARE
	norm jsonb;
	found integer;
	highest integer;
	id integer;
BEGIN
	IF jsonb_typeof(schema) IS DISTINCT FROM 'object' THEN
		RAISE EXCEPTION 'updates[%].schema must be an object', idx USING ERRCODE = 'invalid_parameter_value';
	END IF;
	-- structure and types (the fresh ids are thrown away)
	PERFORM skade.fresh_type(jsonb_build_object('type', 'struct', 'fields', schema->'fields'),
							 format('updates[%s].schema', idx), 0, '{}'::jsonb);
	IF (m->>'format-version')::integer < 3 AND schema::text ~ '"(timestamp_ns|timestamptz_ns|variant|unknown|geometry|geography)' THEN
		RAISE EXCEPTION 'updates[%].schema: a type of format version 3 in a v% table', idx, m->>'format-version'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	norm := jsonb_build_object('type', 'struct', 'fields', schema->'fields')
		|| CASE WHEN jsonb_array_length(coalesce(schema->'identifier-field-ids', '[]')) > 0
				THEN jsonb_build_object('identifier-field-ids', schema->'identifier-field-ids') ELSE '{}' END;
	SELECT (x->>'schema-id')::integer INTO found FROM jsonb_array_elements(m->'schemas') x
	 WHERE (x - 'schema-id') = norm LIMIT 1;
	SELECT max(v::text::integer) INTO highest FROM (
		SELECT jsonb_path_query(schema, 'lax $.**.id') v
		UNION ALL SELECT jsonb_path_query(schema, 'lax $.**."element-id"')
		UNION ALL SELECT jsonb_path_query(schema, 'lax $.**."key-id"')
		UNION ALL SELECT jsonb_path_query(schema, 'lax $.**."value-id"')) ids;
	highest := greatest(coalesce(highest, 0), (m->>'last-column-id')::integer);
	IF found IS NOT NULL AND highest = (m->>'last-column-id')::integer THEN
		meta := m;
		last_added := found;	-- reused: no change
		RETURN;
	END IF;
	meta := m || jsonb_build_object('last-column-id', highest);
	IF found IS NULL THEN
		SELECT coalesce(max((x->>'schema-id')::integer), -1) + 1 INTO id FROM jsonb_array_elements(m->'schemas') x;
		meta := jsonb_set(meta, '{schemas}', (m->'schemas') || jsonb_build_array(norm || jsonb_build_object('schema-id', id)));
	ELSE
		id := found;
	END IF;
	last_added := id;
	nchanges := nchanges + 1;
END
$f$;

-- add-snapshot: a new id, sequence numbers forward (v2+), row lineage (v3)
CREATE FUNCTION skade.add_snapshot(m jsonb, snap jsonb, idx integer) RETURNS jsonb
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $f$
DECLARE
	fv integer := (m->>'format-version')::integer;
	seq bigint;
BEGIN
	-- an absent optional field, whether omitted or sent as null
	IF jsonb_typeof(snap) = 'object' THEN
		snap := jsonb_strip_nulls(snap);
	END IF;
	IF jsonb_typeof(snap) IS DISTINCT FROM 'object' OR jsonb_typeof(snap->'snapshot-id') IS DISTINCT FROM 'number'
	   OR jsonb_typeof(snap->'timestamp-ms') IS DISTINCT FROM 'number'
	   OR (jsonb_typeof(snap->'manifest-list') IS DISTINCT FROM 'string' AND fv > 1)
	   OR jsonb_typeof(snap->'summary'->'operation') IS DISTINCT FROM 'string' THEN
		RAISE EXCEPTION 'updates[%].snapshot needs snapshot-id, timestamp-ms, manifest-list and summary.operation', idx
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(m->'snapshots', '[]')) x
			   WHERE x->'snapshot-id' = snap->'snapshot-id') THEN
		RAISE EXCEPTION 'updates[%]: snapshot % already exists', idx, snap->>'snapshot-id'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF fv = 1 AND coalesce((snap->>'sequence-number')::numeric, 0) <> 0 THEN
		RAISE EXCEPTION 'updates[%]: sequence number % in a v1 table (it must be 0)', idx, snap->>'sequence-number'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF fv >= 2 THEN
		-- none is 0, as Java reads it (and writes 0 as none)
		seq := coalesce((snap->>'sequence-number')::bigint, 0);
		IF snap->>'parent-snapshot-id' IS NOT NULL AND seq <= (m->>'last-sequence-number')::bigint THEN
			RAISE EXCEPTION 'cannot add snapshot with sequence number % older than last sequence number %',
				seq, m->>'last-sequence-number' USING ERRCODE = 'serialization_failure',
				HINT = 'Another commit came first: reload the table and retry.';
		END IF;
		m := m || jsonb_build_object('last-sequence-number', seq);
	END IF;
	IF fv >= 3 THEN
		IF jsonb_typeof(snap->'first-row-id') IS DISTINCT FROM 'number' OR jsonb_typeof(snap->'added-rows') IS DISTINCT FROM 'number'
		   OR (snap->>'first-row-id')::bigint < 0 OR (snap->>'added-rows')::bigint < 0 THEN
			RAISE EXCEPTION 'updates[%].snapshot needs first-row-id and added-rows in a v3 table', idx
				USING ERRCODE = 'invalid_parameter_value';
		END IF;
		IF (snap->>'first-row-id')::bigint < (m->>'next-row-id')::bigint THEN
			RAISE EXCEPTION 'cannot add snapshot: first-row-id % is behind table next-row-id %',
				snap->>'first-row-id', m->>'next-row-id' USING ERRCODE = 'serialization_failure';
		END IF;
		m := m || jsonb_build_object('next-row-id', (m->>'next-row-id')::bigint + (snap->>'added-rows')::bigint);
	END IF;
	RETURN jsonb_set(m, '{snapshots}', coalesce(m->'snapshots', '[]') || jsonb_build_array(snap));
END
$f$;

-- set-snapshot-ref: replaced whole; main moves the current snapshot and the log
CREATE FUNCTION skade.set_snapshot_ref(m jsonb, u jsonb, idx integer, added jsonb, now_ms bigint,
									   INOUT nchanges integer, OUT meta jsonb)
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $f$
DECLARE
	name text := u->>'ref-name';
	kind text := lower(u->>'type');
	ref jsonb;
	k text;
BEGIN
	IF name IS NULL OR jsonb_typeof(u->'snapshot-id') IS DISTINCT FROM 'number' OR kind NOT IN ('branch', 'tag') THEN
		RAISE EXCEPTION 'updates[%] needs ref-name, snapshot-id and type branch|tag', idx
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF kind = 'tag' AND (u ? 'min-snapshots-to-keep' OR u ? 'max-snapshot-age-ms') THEN
		RAISE EXCEPTION 'updates[%]: tags do not keep snapshots', idx USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF name = 'main' AND kind <> 'branch' THEN
		RAISE EXCEPTION 'updates[%]: cannot set main to a tag, it must be a branch', idx
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	ref := jsonb_build_object('snapshot-id', u->'snapshot-id', 'type', kind);
	FOREACH k IN ARRAY ARRAY['min-snapshots-to-keep', 'max-snapshot-age-ms', 'max-ref-age-ms'] LOOP
		IF u->k IS NOT NULL AND jsonb_typeof(u->k) <> 'null' THEN
			IF jsonb_typeof(u->k) <> 'number' OR (u->>k)::numeric <= 0 THEN
				RAISE EXCEPTION 'updates[%].% must be a positive number', idx, k USING ERRCODE = 'invalid_parameter_value';
			END IF;
			ref := ref || jsonb_build_object(k, u->k);
		END IF;
	END LOOP;
	IF m->'refs'->name = ref THEN
		meta := m;
		RETURN;
	END IF;
	IF NOT EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(m->'snapshots', '[]')) x
				   WHERE x->'snapshot-id' = u->'snapshot-id') THEN
		RAISE EXCEPTION 'updates[%]: cannot set % to unknown snapshot %', idx, name, u->>'snapshot-id'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	meta := jsonb_set(m, '{refs}', coalesce(m->'refs', '{}') || jsonb_build_object(name, ref));
	IF name = 'main' THEN
		meta := meta || jsonb_build_object('current-snapshot-id', u->'snapshot-id',
			'snapshot-log', coalesce(m->'snapshot-log', '[]') || jsonb_build_array(jsonb_build_object(
				'timestamp-ms', coalesce(added->(u->>'snapshot-id'), to_jsonb(now_ms)),
				'snapshot-id', u->'snapshot-id')));
	END IF;
	nchanges := nchanges + 1;
END
$f$;

-- remove-snapshots: with their statistics and the refs that named them; the
-- snapshot log loses them (and, as Java does, the history before a gap)
CREATE FUNCTION skade.remove_snapshots(m jsonb, ids jsonb, idx integer, INOUT nchanges integer,
									   OUT meta jsonb)
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $f$
DECLARE
	gone jsonb;
	kept jsonb;
	log jsonb := '[]';
	r record;
BEGIN
	IF jsonb_typeof(ids) IS DISTINCT FROM 'array' THEN
		RAISE EXCEPTION 'updates[%].snapshot-ids must be an array', idx USING ERRCODE = 'invalid_parameter_value';
	END IF;
	SELECT coalesce(jsonb_agg(x->'snapshot-id'), '[]') INTO gone FROM jsonb_array_elements(coalesce(m->'snapshots', '[]')) x
	 WHERE x->'snapshot-id' IN (SELECT jsonb_array_elements(ids));
	IF jsonb_array_length(gone) = 0 THEN
		meta := m;
		RETURN;
	END IF;
	SELECT coalesce(jsonb_agg(x), '[]') INTO kept FROM jsonb_array_elements(m->'snapshots') x
	 WHERE NOT x->'snapshot-id' IN (SELECT jsonb_array_elements(gone));
	meta := m || jsonb_build_object('snapshots', kept);
	meta := meta || jsonb_build_object(
		'statistics', (SELECT coalesce(jsonb_agg(x), '[]') FROM jsonb_array_elements(coalesce(m->'statistics', '[]')) x
					   WHERE NOT x->'snapshot-id' IN (SELECT jsonb_array_elements(gone))),
		'partition-statistics', (SELECT coalesce(jsonb_agg(x), '[]') FROM jsonb_array_elements(coalesce(m->'partition-statistics', '[]')) x
								 WHERE NOT x->'snapshot-id' IN (SELECT jsonb_array_elements(gone))),
		'refs', (SELECT coalesce(jsonb_object_agg(k, v), '{}') FROM jsonb_each(coalesce(m->'refs', '{}')) t(k, v)
				 WHERE NOT v->'snapshot-id' IN (SELECT jsonb_array_elements(gone))));
	IF (m->'current-snapshot-id') IN (SELECT jsonb_array_elements(gone)) THEN
		meta := meta || jsonb_build_object('current-snapshot-id',
			CASE WHEN (m->>'format-version')::integer >= 3 THEN NULL ELSE -1 END);
	END IF;
	FOR r IN SELECT x FROM jsonb_array_elements(coalesce(m->'snapshot-log', '[]')) x LOOP
		IF r.x->'snapshot-id' IN (SELECT jsonb_array_elements(gone)) THEN
			log := '[]';
		ELSIF r.x->'snapshot-id' IN (SELECT y->'snapshot-id' FROM jsonb_array_elements(kept) y) THEN
			log := log || jsonb_build_array(r.x);
		END IF;
	END LOOP;
	meta := meta || jsonb_build_object('snapshot-log', log);
	nchanges := nchanges + jsonb_array_length(gone);
END
$f$;

-- add-spec: bound to the current schema; field ids as sent (missing ones
-- after last-partition-id); a compatible spec (same source ids, transforms
-- and names, position by position) is reused, else max spec id + 1
CREATE FUNCTION skade.add_spec(m jsonb, spec jsonb, idx integer, INOUT nchanges integer,
							   OUT meta jsonb, OUT last_added integer)
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $f$
DECLARE
	cur jsonb := (SELECT x FROM jsonb_array_elements(m->'schemas') x
				  WHERE x->'schema-id' = m->'current-schema-id');
	fields jsonb := '[]';
	f jsonb;
	k integer := 0;
	next_id integer := (m->>'last-partition-id')::integer;
	fid integer;
	found integer;
	id integer;
BEGIN
	IF jsonb_typeof(spec) IS DISTINCT FROM 'object' OR jsonb_typeof(coalesce(spec->'fields', '[]')) <> 'array' THEN
		RAISE EXCEPTION 'updates[%].spec must be an object with a fields array', idx USING ERRCODE = 'invalid_parameter_value';
	END IF;
	FOR f IN SELECT e FROM jsonb_array_elements(coalesce(spec->'fields', '[]')) e LOOP
		IF jsonb_typeof(f->'source-id') IS DISTINCT FROM 'number' OR jsonb_typeof(f->'transform') IS DISTINCT FROM 'string'
		   OR coalesce(f->>'name', '') = '' THEN
			RAISE EXCEPTION 'updates[%].spec.fields[%] needs source-id, transform and name', idx, k
				USING ERRCODE = 'invalid_parameter_value';
		END IF;
		IF skade.bind_error(cur, f, true) IS NOT NULL THEN
			RAISE EXCEPTION 'updates[%].spec.fields[%]: %', idx, k, skade.bind_error(cur, f, true)
				USING ERRCODE = 'invalid_parameter_value';
		END IF;
		-- a partition name may be a column's only if that column is its source
		IF skade.source_type(cur, (f->>'source-id')::integer) IS NOT NULL AND EXISTS (
			SELECT 1 FROM jsonb_array_elements(cur->'fields') c WHERE c->>'name' = f->>'name' AND c->'id' <> f->'source-id') THEN
			RAISE EXCEPTION 'updates[%].spec.fields[%]: name "%" is another column of the schema', idx, k, f->>'name'
				USING ERRCODE = 'invalid_parameter_value';
		END IF;
		IF EXISTS (SELECT 1 FROM jsonb_array_elements(fields) g WHERE g->>'name' = f->>'name') THEN
			RAISE EXCEPTION 'updates[%].spec.fields[%]: name "%" is used twice', idx, k, f->>'name'
				USING ERRCODE = 'invalid_parameter_value';
		END IF;
		IF jsonb_typeof(f->'field-id') = 'number' THEN
			fid := (f->>'field-id')::integer;
		ELSE
			next_id := next_id + 1;
			fid := next_id;
		END IF;
		next_id := greatest(next_id, fid);
		IF (m->>'format-version')::integer = 1 AND fid <> 1000 + k THEN
			RAISE EXCEPTION 'updates[%].spec does not use the sequential field ids v1 requires', idx
				USING ERRCODE = 'invalid_parameter_value';
		END IF;
		fields := fields || jsonb_build_array(jsonb_build_object('name', f->'name', 'transform', f->'transform',
			'source-id', f->'source-id', 'field-id', fid));
		k := k + 1;
	END LOOP;
	SELECT (x->>'spec-id')::integer INTO found FROM jsonb_array_elements(m->'partition-specs') x
	 WHERE jsonb_array_length(x->'fields') = k
	   AND NOT EXISTS (SELECT 1 FROM generate_series(0, k - 1) n
					   WHERE (x->'fields'->n->'source-id', x->'fields'->n->'transform', x->'fields'->n->'name')
							 IS DISTINCT FROM (fields->n->'source-id', fields->n->'transform', fields->n->'name'))
	 ORDER BY (x->>'spec-id')::integer LIMIT 1;
	IF found IS NOT NULL THEN
		meta := m;
		last_added := found;	-- reused: no change
		RETURN;
	END IF;
	SELECT coalesce(max((x->>'spec-id')::integer), -1) + 1 INTO id FROM jsonb_array_elements(m->'partition-specs') x;
	meta := m || jsonb_build_object('last-partition-id', greatest((m->>'last-partition-id')::integer, next_id),
		'partition-specs', (m->'partition-specs') || jsonb_build_array(jsonb_build_object('spec-id', id, 'fields', fields)));
	last_added := id;
	nchanges := nchanges + 1;
END
$f$;

-- add-sort-order: unsorted is 0; an equal order is reused, else max id + 1
CREATE FUNCTION skade.add_sort_order(m jsonb, ord jsonb, idx integer, INOUT nchanges integer,
									 OUT meta jsonb, OUT last_added integer)
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $f$
DECLARE
	cur jsonb := (SELECT x FROM jsonb_array_elements(m->'schemas') x
				  WHERE x->'schema-id' = m->'current-schema-id');
	fields jsonb := '[]';
	f jsonb;
	k integer := 0;
	found integer;
	id integer;
BEGIN
	IF jsonb_typeof(ord) IS DISTINCT FROM 'object' OR jsonb_typeof(coalesce(ord->'fields', '[]')) <> 'array' THEN
		RAISE EXCEPTION 'updates[%].sort-order must be an object with a fields array', idx USING ERRCODE = 'invalid_parameter_value';
	END IF;
	FOR f IN SELECT e FROM jsonb_array_elements(coalesce(ord->'fields', '[]')) e LOOP
		IF jsonb_typeof(f->'source-id') IS DISTINCT FROM 'number' OR jsonb_typeof(f->'transform') IS DISTINCT FROM 'string'
		   OR NOT (f->>'direction') IN ('asc', 'desc') OR NOT (f->>'null-order') IN ('nulls-first', 'nulls-last') THEN
			RAISE EXCEPTION 'updates[%].sort-order.fields[%] needs source-id, transform, direction asc|desc and null-order nulls-first|nulls-last',
				idx, k USING ERRCODE = 'invalid_parameter_value';
		END IF;
		IF skade.bind_error(cur, f, false) IS NOT NULL THEN
			RAISE EXCEPTION 'updates[%].sort-order.fields[%]: %', idx, k, skade.bind_error(cur, f, false)
				USING ERRCODE = 'invalid_parameter_value';
		END IF;
		fields := fields || jsonb_build_array(jsonb_build_object('transform', f->'transform', 'source-id', f->'source-id',
			'direction', f->'direction', 'null-order', f->'null-order'));
		k := k + 1;
	END LOOP;
	-- the request's id is not kept, but Java's parser binds it: 0 is the unsorted order's only
	IF (skade.json_int(ord->'order-id', format('updates[%s].sort-order.order-id', idx)) = 0) <> (k = 0) THEN
		RAISE EXCEPTION 'updates[%].sort-order: order id 0 is for the unsorted order, and the unsorted order''s id is 0', idx
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	SELECT (x->>'order-id')::integer INTO found FROM jsonb_array_elements(m->'sort-orders') x
	 WHERE x->'fields' = fields ORDER BY (x->>'order-id')::integer LIMIT 1;
	IF found IS NOT NULL THEN
		meta := m;
		last_added := found;	-- reused: no change
		RETURN;
	END IF;
	IF k = 0 THEN
		id := 0;
	ELSE
		SELECT greatest(coalesce(max((x->>'order-id')::integer), 0), 0) + 1 INTO id FROM jsonb_array_elements(m->'sort-orders') x;
	END IF;
	meta := m || jsonb_build_object('sort-orders',
		(m->'sort-orders') || jsonb_build_array(jsonb_build_object('order-id', id, 'fields', fields)));
	last_added := id;
	nchanges := nchanges + 1;
END
$f$;

-- update_table's fast path (commit_fast.c): the common shapes (appends, ref
-- moves, property changes on v2 tables) committed in C by splicing the base
-- text; NULL when the commit is left to update_table's engine (which then
-- raises every error); skade.update_fast_path = off disables it
CREATE FUNCTION skade.update_table_fast(namespace text, name text, base_location text,
										requirements jsonb, updates jsonb, catalog text)
	RETURNS text AS 'MODULE_PATHNAME', 'skade_update_table_fast' LANGUAGE C STRICT;

/*
 * empty_table_metadata: the table a create transaction starts from (Java's
 * TableMetadata.buildFromEmpty): no schema, spec, order, property or
 * snapshot yet; its uuid from the updates' assign-uuid, its format from
 * their upgrade-format-version, its location from their set-location (else
 * the namespace's location and the name, as create_table).  The namespace
 * must exist and the table must not.
 */
CREATE FUNCTION skade.empty_table_metadata(namespace text, name text, updates jsonb,
										   catalog text DEFAULT NULL)
	RETURNS jsonb
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $empty$
DECLARE
	fv integer := 2;
	uuid text := gen_random_uuid()::text;
	loc text;
	u jsonb;
	m jsonb;
BEGIN
	IF namespace IS NULL OR name IS NULL OR updates IS NULL THEN
		RAISE EXCEPTION 'namespace, name and updates must not be NULL' USING ERRCODE = 'null_value_not_allowed';
	ELSIF jsonb_typeof(updates) <> 'array' THEN
		RAISE EXCEPTION 'updates must be a JSON array' USING ERRCODE = 'invalid_parameter_value';
	END IF;
	FOR u IN SELECT q FROM jsonb_array_elements(updates) q LOOP
		CASE lower(u->>'action')
		WHEN 'upgrade-format-version' THEN
			fv := skade.json_int(u->'format-version', 'upgrade-format-version');
		WHEN 'assign-uuid' THEN
			uuid := u->>'uuid';
		WHEN 'set-location' THEN
			loc := u->>'location';
		ELSE
		END CASE;
	END LOOP;
	IF fv IS NULL OR fv NOT BETWEEN 1 AND 3 THEN
		RAISE EXCEPTION 'format version % is not supported', coalesce(fv::text, 'NULL')
			USING ERRCODE = 'feature_not_supported', HINT = 'Iceberg format versions 1, 2 and 3 are.';
	END IF;
	IF uuid IS NULL OR uuid !~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN
		RAISE EXCEPTION 'assign-uuid needs a uuid, not %', coalesce(uuid, 'null') USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF loc IS NULL THEN
		-- as create_table places it (and checks the namespace and the name)
		loc := skade.new_table_metadata(namespace, name, '{"type": "struct", "fields": []}',
										catalog => catalog)->>'location';
	ELSIF NOT skade.namespace_exists(namespace, catalog) THEN
		RAISE EXCEPTION 'namespace "%" does not exist', namespace USING ERRCODE = 'invalid_schema_name';
	END IF;
	m := jsonb_build_object(
		'format-version', fv,
		'table-uuid', lower(uuid),
		'location', rtrim(loc, '/'),
		'last-sequence-number', 0,
		'last-updated-ms', (extract(epoch FROM clock_timestamp()) OPERATOR(pg_catalog.*) 1000)::bigint,
		'last-column-id', 0,
		'current-schema-id', -1,
		'schemas', '[]'::jsonb,
		'default-spec-id', 0,
		'partition-specs', '[]'::jsonb,
		'last-partition-id', 999,
		'default-sort-order-id', 0,
		'sort-orders', '[]'::jsonb,
		'properties', '{}'::jsonb,
		'current-snapshot-id', -1,
		'refs', '{}'::jsonb,
		'snapshots', '[]'::jsonb,
		'statistics', '[]'::jsonb,
		'partition-statistics', '[]'::jsonb,
		'snapshot-log', '[]'::jsonb,
		'metadata-log', '[]'::jsonb);
	IF fv OPERATOR(pg_catalog.=) 1 THEN
		m := m OPERATOR(pg_catalog.-) 'last-sequence-number';
	ELSIF fv OPERATOR(pg_catalog.=) 3 THEN
		m := m OPERATOR(pg_catalog.||) jsonb_build_object('next-row-id', 0, 'current-snapshot-id', NULL);
	END IF;
	RETURN m;
END
$empty$;

/*
 * update_table: one commit of the Iceberg REST CommitTableRequest kind.
 * requirements (all 8 kinds) are checked against the current metadata
 * (40001 naming the one that failed); updates are applied in order with
 * Java's TableMetadata.Builder rules; no change writes no file.  Otherwise
 * the next %05d-<uuid>.metadata.json is written (metadata-log appended and
 * trimmed to write.metadata.previous-versions-max) and the pointer moves by
 * skade.commit_table(): the same compare-and-swap UPDATE JDBC clients run,
 * under the row lock taken first.  Returns the (new or unchanged) location.
 * The encryption-key actions are refused with 0A000.
 */
CREATE FUNCTION skade.update_table(namespace text, name text, requirements jsonb DEFAULT '[]',
								   updates jsonb DEFAULT '[]', catalog text DEFAULT NULL)
	RETURNS text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $update$
DECLARE
	cat text := coalesce(catalog, current_setting('skade.catalog'));
	base_location text;
	base jsonb;
	m jsonb;
	r jsonb;
	u jsonb;
	i integer := 0;
	changes integer := 0;
	now_ms bigint := (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
	added_snapshots jsonb := '{}';
	main_added jsonb := '[]';
	last_added_schema integer;
	last_added_spec integer;
	last_added_order integer;
	reused integer;
	added jsonb := '{"schemas": [], "specs": [], "orders": []}';	-- ids this commit added
	list text;
	v integer;
	s jsonb;
	ref jsonb;
	props jsonb;
	maxlog integer;
	version bigint;
	dir text;
	file text;
	creating boolean := false;
BEGIN
	IF namespace IS NULL OR name IS NULL OR requirements IS NULL OR updates IS NULL THEN
		RAISE EXCEPTION 'namespace, name, requirements and updates must not be NULL'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF jsonb_typeof(requirements) <> 'array' OR jsonb_typeof(updates) <> 'array' THEN
		RAISE EXCEPTION 'requirements and updates must be JSON arrays' USING ERRCODE = 'invalid_parameter_value';
	END IF;
	-- the row lock first: commits to this table (API or JDBC) queue here
	SELECT t.metadata_location INTO base_location FROM public.iceberg_tables t
	 WHERE t.catalog_name = cat AND t.table_namespace = namespace AND t.table_name = name
	   AND coalesce(t.iceberg_type, 'TABLE') = 'TABLE'
	   FOR UPDATE;
	IF NOT FOUND THEN
		IF requirements = '[{"type": "assert-create"}]'::jsonb
		   OR (jsonb_array_length(requirements) = 1 AND lower(requirements->0->>'type') = 'assert-create') THEN
			-- a staged create committed (a REST create transaction): the
			-- updates build the table from an empty one, as Java's
			-- TableMetadata.buildFromEmpty
			creating := true;
			base := skade.empty_table_metadata(namespace, name, updates, cat);
			requirements := '[]';
		ELSE
			RAISE EXCEPTION 'table "%.%" does not exist in catalog "%"', namespace, name, cat USING ERRCODE = 'undefined_table';
		END IF;
	ELSE
		-- the common shapes in C (commit_fast.c); NULL: this engine commits
		file := skade.update_table_fast(namespace, name, base_location, requirements, updates, cat);
		IF file IS NOT NULL THEN
			RETURN file;
		END IF;
		base := skade.table_metadata(namespace, name, catalog => cat)::jsonb;
		IF (SELECT l.metadata_location FROM skade.load_table(namespace, name, 'none', cat) l) IS DISTINCT FROM base_location THEN
			RAISE EXCEPTION 'table "%.%" changed while it was read', namespace, name USING ERRCODE = 'serialization_failure';
		END IF;
	END IF;
	m := base;

	-- every requirement is read before any is checked (Java parses the request
	-- first): a malformed one, or assert-create among others, is 22023
	SELECT x.n - 1, x.q INTO v, r FROM jsonb_array_elements(requirements) WITH ORDINALITY x(q, n)
	 WHERE NOT coalesce(CASE lower(x.q->>'type')
		WHEN 'assert-create' THEN NOT EXISTS (SELECT 1 FROM jsonb_array_elements(requirements) y
											  WHERE lower(y->>'type') IS DISTINCT FROM 'assert-create')
		WHEN 'assert-table-uuid' THEN jsonb_typeof(x.q->'uuid') = 'string'
		WHEN 'assert-ref-snapshot-id' THEN jsonb_typeof(x.q->'ref') = 'string'
			AND (coalesce(jsonb_typeof(x.q->'snapshot-id'), 'null') = 'null' OR x.q->>'snapshot-id' ~ '^-?[0-9]+$')
		ELSE x.q->>CASE lower(x.q->>'type') WHEN 'assert-last-assigned-field-id' THEN 'last-assigned-field-id'
			WHEN 'assert-current-schema-id' THEN 'current-schema-id'
			WHEN 'assert-last-assigned-partition-id' THEN 'last-assigned-partition-id'
			WHEN 'assert-default-spec-id' THEN 'default-spec-id'
			WHEN 'assert-default-sort-order-id' THEN 'default-sort-order-id' END ~ '^-?[0-9]{1,10}$' END, false)
	 ORDER BY x.n LIMIT 1;
	IF FOUND THEN
		RAISE EXCEPTION 'requirements[%] is malformed: %', v, r
			USING ERRCODE = 'invalid_parameter_value',
			HINT = 'assert-create takes no other requirement; the others need their value field.';
	END IF;

	-- requirements, all against the same base
	FOR r IN SELECT q FROM jsonb_array_elements(requirements) q LOOP
		i := i + 1;
		CASE lower(r->>'type')
		WHEN 'assert-create' THEN
			RAISE EXCEPTION 'Requirement failed: table already exists'
				USING ERRCODE = 'serialization_failure';
		WHEN 'assert-table-uuid' THEN
			IF lower(r->>'uuid') IS DISTINCT FROM lower(base->>'table-uuid') THEN
				RAISE EXCEPTION 'Requirement failed: UUID does not match: expected % != %', r->>'uuid', base->>'table-uuid'
					USING ERRCODE = 'serialization_failure';
			END IF;
		WHEN 'assert-ref-snapshot-id' THEN
			ref := base->'refs'->(r->>'ref');
			IF ref IS NOT NULL AND r->'snapshot-id' IS NULL OR ref IS NOT NULL AND jsonb_typeof(r->'snapshot-id') = 'null' THEN
				RAISE EXCEPTION 'Requirement failed: % % was created concurrently', ref->>'type', r->>'ref'
					USING ERRCODE = 'serialization_failure';
			ELSIF ref IS NOT NULL AND (ref->>'snapshot-id')::bigint IS DISTINCT FROM (r->>'snapshot-id')::bigint THEN
				RAISE EXCEPTION 'Requirement failed: % % has changed: expected id % != %',
					ref->>'type', r->>'ref', r->>'snapshot-id', ref->>'snapshot-id' USING ERRCODE = 'serialization_failure';
			ELSIF ref IS NULL AND r->>'snapshot-id' IS NOT NULL THEN
				RAISE EXCEPTION 'Requirement failed: branch or tag % is missing, expected %',
					r->>'ref', r->>'snapshot-id' USING ERRCODE = 'serialization_failure';
			END IF;
		WHEN 'assert-last-assigned-field-id' THEN
			IF (base->>'last-column-id')::integer IS DISTINCT FROM (r->>'last-assigned-field-id')::integer THEN
				RAISE EXCEPTION 'Requirement failed: last assigned field id changed: expected id % != %',
					r->>'last-assigned-field-id', base->>'last-column-id' USING ERRCODE = 'serialization_failure';
			END IF;
		WHEN 'assert-current-schema-id' THEN
			IF (base->>'current-schema-id')::integer IS DISTINCT FROM (r->>'current-schema-id')::integer THEN
				RAISE EXCEPTION 'Requirement failed: current schema changed: expected id % != %',
					r->>'current-schema-id', base->>'current-schema-id' USING ERRCODE = 'serialization_failure';
			END IF;
		WHEN 'assert-last-assigned-partition-id' THEN
			IF (base->>'last-partition-id')::integer IS DISTINCT FROM (r->>'last-assigned-partition-id')::integer THEN
				RAISE EXCEPTION 'Requirement failed: last assigned partition id changed: expected id % != %',
					r->>'last-assigned-partition-id', base->>'last-partition-id' USING ERRCODE = 'serialization_failure';
			END IF;
		WHEN 'assert-default-spec-id' THEN
			IF (base->>'default-spec-id')::integer IS DISTINCT FROM (r->>'default-spec-id')::integer THEN
				RAISE EXCEPTION 'Requirement failed: default partition spec changed: expected id % != %',
					r->>'default-spec-id', base->>'default-spec-id' USING ERRCODE = 'serialization_failure';
			END IF;
		WHEN 'assert-default-sort-order-id' THEN
			IF (base->>'default-sort-order-id')::integer IS DISTINCT FROM (r->>'default-sort-order-id')::integer THEN
				RAISE EXCEPTION 'Requirement failed: default sort order changed: expected id % != %',
					r->>'default-sort-order-id', base->>'default-sort-order-id' USING ERRCODE = 'serialization_failure';
			END IF;
		ELSE
			RAISE EXCEPTION 'requirements[%]: unknown requirement %', i - 1, coalesce(r->'type', 'null'::jsonb)
				USING ERRCODE = 'invalid_parameter_value';
		END CASE;
	END LOOP;

	-- updates, in order
	i := 0;
	FOR u IN SELECT q FROM jsonb_array_elements(updates) q LOOP
		i := i + 1;
		CASE lower(u->>'action')
		WHEN 'assign-uuid' THEN
			IF jsonb_typeof(u->'uuid') IS DISTINCT FROM 'string' THEN
				RAISE EXCEPTION 'updates[%].uuid must be a string', i - 1 USING ERRCODE = 'invalid_parameter_value';
			ELSIF lower(u->>'uuid') <> lower(m->>'table-uuid') THEN
				RAISE EXCEPTION 'updates[%]: cannot change the uuid of an existing table', i - 1
					USING ERRCODE = 'invalid_parameter_value';
			END IF;
		WHEN 'upgrade-format-version' THEN
			v := skade.json_int(u->'format-version', format('updates[%s].format-version', i - 1));
			IF v IS NULL OR v > 3 THEN
				RAISE EXCEPTION 'updates[%]: cannot upgrade to format version %', i - 1, coalesce(u->>'format-version', 'null')
					USING ERRCODE = 'invalid_parameter_value';
			ELSIF v < (m->>'format-version')::integer THEN
				RAISE EXCEPTION 'updates[%]: cannot downgrade v% table to v%', i - 1, m->>'format-version', v
					USING ERRCODE = 'invalid_parameter_value';
			ELSIF v > (m->>'format-version')::integer THEN
				m := skade.upgraded(m, v);
				changes := changes + 1;
			END IF;
		WHEN 'set-properties' THEN
			props := coalesce(u->'updates', u->'updated');
			IF jsonb_typeof(props) IS DISTINCT FROM 'object' OR EXISTS (
				SELECT 1 FROM jsonb_each(props) p WHERE jsonb_typeof(p.value) <> 'string') THEN
				RAISE EXCEPTION 'updates[%].updates must be an object of strings', i - 1 USING ERRCODE = 'invalid_parameter_value';
			END IF;
			IF props <> '{}' THEN
				-- as Java's client does: format-version is an upgrade, reserved keys are not kept
				IF props ? 'format-version' THEN
					v := CASE WHEN props->>'format-version' ~ '^[0-9]{1,2}$' THEN (props->>'format-version')::integer END;
					IF v IS NULL OR v > 3 OR v < (m->>'format-version')::integer THEN
						RAISE EXCEPTION 'updates[%]: format-version % cannot be set', i - 1, props->>'format-version'
							USING ERRCODE = 'invalid_parameter_value';
					ELSIF v > (m->>'format-version')::integer THEN
						m := skade.upgraded(m, v);
					END IF;
				END IF;
				m := jsonb_set(m, '{properties}', coalesce(m->'properties', '{}') || (props - ARRAY['format-version', 'uuid',
					'snapshot-count', 'current-snapshot-id', 'current-snapshot-summary', 'current-snapshot-timestamp-ms',
					'current-schema', 'default-partition-spec', 'default-sort-order']));
				changes := changes + 1;
			END IF;
		WHEN 'remove-properties' THEN
			IF jsonb_typeof(coalesce(u->'removals', u->'removed')) IS DISTINCT FROM 'array' THEN
				RAISE EXCEPTION 'updates[%].removals must be an array of strings', i - 1 USING ERRCODE = 'invalid_parameter_value';
			END IF;
			IF jsonb_array_length(coalesce(u->'removals', u->'removed')) > 0 THEN
				m := jsonb_set(m, '{properties}', coalesce(m->'properties', '{}') -
					ARRAY(SELECT jsonb_array_elements_text(coalesce(u->'removals', u->'removed'))));
				changes := changes + 1;
			END IF;
		WHEN 'set-location' THEN
			IF jsonb_typeof(u->'location') IS DISTINCT FROM 'string' THEN
				RAISE EXCEPTION 'updates[%].location must be a string', i - 1 USING ERRCODE = 'invalid_parameter_value';
			END IF;
			IF u->>'location' <> m->>'location' THEN
				m := m || jsonb_build_object('location', rtrim(u->>'location', '/'));
				changes := changes + 1;
			END IF;
		WHEN 'add-schema' THEN
			-- reusing a schema with no change, the last added one is that schema only if
			-- this commit added it (Java's Builder.addSchemaInternal)
			v := changes;
			SELECT a.meta, a.nchanges, a.last_added INTO m, changes, reused
			  FROM skade.add_schema(m, u->'schema', i - 1, changes) a;
			last_added_schema := CASE WHEN changes > v THEN reused
				WHEN last_added_schema IS NOT NULL AND added->'schemas' @> to_jsonb(reused) THEN reused END;
			IF changes > v THEN
				added := jsonb_set(added, '{schemas}', (added->'schemas') || to_jsonb(reused));
			END IF;
		WHEN 'set-current-schema' THEN
			v := skade.json_int(u->'schema-id', format('updates[%s].schema-id', i - 1));
			IF v = -1 THEN
				IF last_added_schema IS NULL THEN
					RAISE EXCEPTION 'updates[%]: cannot set last added schema: no schema has been added', i - 1
						USING ERRCODE = 'invalid_parameter_value';
				END IF;
				v := last_added_schema;
			END IF;
			IF v IS DISTINCT FROM (m->>'current-schema-id')::integer THEN
				IF NOT EXISTS (SELECT 1 FROM jsonb_array_elements(m->'schemas') x WHERE (x->>'schema-id')::integer = v) THEN
					RAISE EXCEPTION 'updates[%]: cannot set current schema to unknown schema %', i - 1, v
						USING ERRCODE = 'invalid_parameter_value';
				END IF;
				m := m || jsonb_build_object('current-schema-id', v);
				IF (m->>'format-version')::integer = 1 THEN
					m := m || jsonb_build_object('schema', (SELECT x FROM jsonb_array_elements(m->'schemas') x
														   WHERE (x->>'schema-id')::integer = v));
				END IF;
				changes := changes + 1;
			END IF;
		WHEN 'add-snapshot' THEN
			m := skade.add_snapshot(m, u->'snapshot', i - 1);
			added_snapshots := added_snapshots || jsonb_build_object(u->'snapshot'->>'snapshot-id', u->'snapshot'->'timestamp-ms');
			changes := changes + 1;
		WHEN 'set-snapshot-ref' THEN
			SELECT a.meta, a.nchanges INTO m, changes
			  FROM skade.set_snapshot_ref(m, u, i - 1, added_snapshots, now_ms, changes) a;
			IF u->>'ref-name' = 'main' AND added_snapshots ? (u->>'snapshot-id') THEN
				main_added := main_added || jsonb_build_array(u->'snapshot-id');
			END IF;
		WHEN 'remove-snapshot-ref' THEN
			IF jsonb_typeof(u->'ref-name') IS DISTINCT FROM 'string' THEN
				RAISE EXCEPTION 'updates[%].ref-name must be a string', i - 1 USING ERRCODE = 'invalid_parameter_value';
			END IF;
			IF m->'refs' ? (u->>'ref-name') THEN
				m := jsonb_set(m, '{refs}', (m->'refs') - (u->>'ref-name'));
				changes := changes + 1;
			END IF;
			IF u->>'ref-name' = 'main' THEN
				m := m || jsonb_build_object('current-snapshot-id',
					CASE WHEN (m->>'format-version')::integer >= 3 THEN NULL ELSE -1 END);
			END IF;
		WHEN 'remove-snapshots' THEN
			SELECT a.meta, a.nchanges INTO m, changes
			  FROM skade.remove_snapshots(m, u->'snapshot-ids', i - 1, changes) a;
		WHEN 'add-spec' THEN
			-- reusing a spec, the last added one becomes it if the previous last added
			-- one was added by this commit (Java's Builder.addPartitionSpecInternal)
			v := changes;
			SELECT a.meta, a.nchanges, a.last_added INTO m, changes, reused
			  FROM skade.add_spec(m, u->'spec', i - 1, changes) a;
			last_added_spec := CASE WHEN changes > v THEN reused
				WHEN last_added_spec IS NOT NULL AND added->'specs' @> to_jsonb(last_added_spec) THEN reused END;
			IF changes > v THEN
				added := jsonb_set(added, '{specs}', (added->'specs') || to_jsonb(reused));
			END IF;
		WHEN 'set-default-spec' THEN
			v := skade.json_int(u->'spec-id', format('updates[%s].spec-id', i - 1));
			IF v = -1 THEN
				IF last_added_spec IS NULL THEN
					RAISE EXCEPTION 'updates[%]: cannot set last added spec: no spec has been added', i - 1
						USING ERRCODE = 'invalid_parameter_value';
				END IF;
				v := last_added_spec;
			END IF;
			-- (an unknown id is refused at the end, as Java's build() does)
			IF v IS DISTINCT FROM (m->>'default-spec-id')::integer THEN
				m := m || jsonb_build_object('default-spec-id', v);
				changes := changes + 1;
			END IF;
		WHEN 'add-sort-order' THEN
			-- (the same rule as add-spec: Java's Builder.addSortOrderInternal)
			v := changes;
			SELECT a.meta, a.nchanges, a.last_added INTO m, changes, reused
			  FROM skade.add_sort_order(m, u->'sort-order', i - 1, changes) a;
			last_added_order := CASE WHEN changes > v THEN reused
				WHEN last_added_order IS NOT NULL AND added->'orders' @> to_jsonb(last_added_order) THEN reused END;
			IF changes > v THEN
				added := jsonb_set(added, '{orders}', (added->'orders') || to_jsonb(reused));
			END IF;
		WHEN 'set-default-sort-order' THEN
			v := skade.json_int(u->'sort-order-id', format('updates[%s].sort-order-id', i - 1));
			IF v = -1 THEN
				IF last_added_order IS NULL THEN
					RAISE EXCEPTION 'updates[%]: cannot set last added sort order: no sort order has been added', i - 1
						USING ERRCODE = 'invalid_parameter_value';
				END IF;
				v := last_added_order;
			END IF;
			-- (an unknown id is refused at the end, as Java's build() does)
			IF v IS DISTINCT FROM (m->>'default-sort-order-id')::integer THEN
				m := m || jsonb_build_object('default-sort-order-id', v);
				changes := changes + 1;
			END IF;
		WHEN 'set-statistics', 'set-partition-statistics' THEN
			s := CASE lower(u->>'action') WHEN 'set-statistics' THEN u->'statistics' ELSE u->'partition-statistics' END;
			IF jsonb_typeof(s) IS DISTINCT FROM 'object' OR jsonb_typeof(s->'snapshot-id') IS DISTINCT FROM 'number'
			   OR jsonb_typeof(s->'statistics-path') IS DISTINCT FROM 'string'
			   OR jsonb_typeof(s->'file-size-in-bytes') IS DISTINCT FROM 'number' THEN
				RAISE EXCEPTION 'updates[%] needs a statistics file with snapshot-id, statistics-path and file-size-in-bytes', i - 1
					USING ERRCODE = 'invalid_parameter_value';
			END IF;
			list := CASE lower(u->>'action') WHEN 'set-statistics' THEN 'statistics' ELSE 'partition-statistics' END;
			m := jsonb_set(m, ARRAY[list],
				(SELECT coalesce(jsonb_agg(x), '[]') FROM jsonb_array_elements(coalesce(m->list, '[]')) x
				  WHERE x->'snapshot-id' <> s->'snapshot-id') || jsonb_build_array(s));
			changes := changes + 1;
		WHEN 'remove-statistics', 'remove-partition-statistics' THEN
			list := CASE lower(u->>'action') WHEN 'remove-statistics' THEN 'statistics' ELSE 'partition-statistics' END;
			IF NOT coalesce(u->>'snapshot-id' ~ '^-?[0-9]+$' AND jsonb_typeof(u->'snapshot-id') = 'number', false) THEN
				RAISE EXCEPTION 'updates[%].snapshot-id must be a number', i - 1 USING ERRCODE = 'invalid_parameter_value';
			END IF;
			IF EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(m->list, '[]')) x
					   WHERE x->'snapshot-id' = u->'snapshot-id') THEN
				m := jsonb_set(m, ARRAY[list],
					(SELECT coalesce(jsonb_agg(x), '[]') FROM jsonb_array_elements(m->list) x
					  WHERE x->'snapshot-id' <> u->'snapshot-id'));
				changes := changes + 1;
			END IF;
		WHEN 'remove-partition-specs' THEN
			IF jsonb_typeof(u->'spec-ids') IS DISTINCT FROM 'array' THEN
				RAISE EXCEPTION 'updates[%].spec-ids must be an array', i - 1 USING ERRCODE = 'invalid_parameter_value';
			ELSIF m->'default-spec-id' IN (SELECT jsonb_array_elements(u->'spec-ids')) THEN
				RAISE EXCEPTION 'updates[%]: cannot remove the default partition spec', i - 1 USING ERRCODE = 'invalid_parameter_value';
			END IF;
			IF jsonb_array_length(u->'spec-ids') > 0 THEN
				m := jsonb_set(m, '{partition-specs}', (SELECT coalesce(jsonb_agg(x), '[]') FROM jsonb_array_elements(m->'partition-specs') x
					WHERE NOT x->'spec-id' IN (SELECT jsonb_array_elements(u->'spec-ids'))));
				changes := changes + 1;
			END IF;
		WHEN 'remove-schemas' THEN
			IF jsonb_typeof(u->'schema-ids') IS DISTINCT FROM 'array' THEN
				RAISE EXCEPTION 'updates[%].schema-ids must be an array', i - 1 USING ERRCODE = 'invalid_parameter_value';
			ELSIF m->'current-schema-id' IN (SELECT jsonb_array_elements(u->'schema-ids')) THEN
				RAISE EXCEPTION 'updates[%]: cannot remove the current schema', i - 1 USING ERRCODE = 'invalid_parameter_value';
			END IF;
			IF jsonb_array_length(u->'schema-ids') > 0 THEN
				m := jsonb_set(m, '{schemas}', (SELECT coalesce(jsonb_agg(x), '[]') FROM jsonb_array_elements(m->'schemas') x
					WHERE NOT x->'schema-id' IN (SELECT jsonb_array_elements(u->'schema-ids'))));
				changes := changes + 1;
			END IF;
		ELSE
			IF lower(u->>'action') IN ('add-encryption-key', 'remove-encryption-key') THEN
				RAISE EXCEPTION 'updates[%]: action % is not supported', i - 1, u->>'action'
					USING ERRCODE = 'feature_not_supported', DETAIL = 'skade does not manage table encryption keys.';
			END IF;
			RAISE EXCEPTION 'updates[%]: unknown action %', i - 1, coalesce(u->'action', 'null'::jsonb)
				USING ERRCODE = 'invalid_parameter_value';
		END CASE;
	END LOOP;

	IF changes = 0 AND NOT creating THEN
		RETURN base_location;
	END IF;
	-- snapshots this commit added and made main, then replaced as main in the
	-- same commit, leave no snapshot-log entry (Java's intermediate snapshots)
	IF EXISTS (SELECT 1 FROM jsonb_array_elements(main_added) x WHERE x <> m->'current-snapshot-id') THEN
		m := jsonb_set(m, '{snapshot-log}', (SELECT coalesce(jsonb_agg(e ORDER BY n), '[]')
			FROM jsonb_array_elements(m->'snapshot-log') WITH ORDINALITY l(e, n)
			WHERE e->'snapshot-id' = m->'current-snapshot-id'
			   OR NOT e->'snapshot-id' IN (SELECT jsonb_array_elements(main_added))));
	END IF;

	-- what Java's build() and TableMetadata constructor refuse (22023): a
	-- default spec or sort order the current schema cannot bind, a snapshot
	-- newer than last-sequence-number, a snapshot log out of order (by more
	-- than Java's minute of clock skew) or ahead of this commit
	IF NOT EXISTS (SELECT 1 FROM jsonb_array_elements(m->'partition-specs') x WHERE x->'spec-id' = m->'default-spec-id') THEN
		RAISE EXCEPTION 'cannot set default spec to unknown spec %', m->>'default-spec-id'
			USING ERRCODE = 'invalid_parameter_value';
	ELSIF NOT EXISTS (SELECT 1 FROM jsonb_array_elements(m->'sort-orders') x WHERE x->'order-id' = m->'default-sort-order-id') THEN
		RAISE EXCEPTION 'cannot set default sort order to unknown order %', m->>'default-sort-order-id'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF (m->>'format-version')::integer = 1 THEN
		m := m || jsonb_build_object('partition-spec', (SELECT x->'fields' FROM jsonb_array_elements(m->'partition-specs') x
														 WHERE x->'spec-id' = m->'default-spec-id'));
	END IF;
	s := (SELECT x FROM jsonb_array_elements(m->'schemas') x WHERE x->'schema-id' = m->'current-schema-id');
	SELECT e INTO list FROM (
		SELECT skade.bind_error(s, f, true) e FROM jsonb_array_elements(m->'partition-specs') p,
			   jsonb_array_elements(p->'fields') f WHERE p->'spec-id' = m->'default-spec-id'
		UNION ALL
		SELECT skade.bind_error(s, f, false) FROM jsonb_array_elements(m->'sort-orders') o,
			   jsonb_array_elements(o->'fields') f WHERE o->'order-id' = m->'default-sort-order-id') b
	 WHERE e IS NOT NULL LIMIT 1;
	IF list IS NOT NULL THEN
		RAISE EXCEPTION 'the default partition spec or sort order does not fit the current schema: %', list
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF (SELECT max((x->>'sequence-number')::bigint) FROM jsonb_array_elements(coalesce(m->'snapshots', '[]')) x)
	   > coalesce((m->>'last-sequence-number')::bigint, 0) THEN
		RAISE EXCEPTION 'a snapshot has a sequence number greater than last sequence number %', m->>'last-sequence-number'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF EXISTS (SELECT 1 FROM (SELECT (e->>'timestamp-ms')::bigint t,
									 lag((e->>'timestamp-ms')::bigint) OVER (ORDER BY n) prev
								FROM jsonb_array_elements(coalesce(m->'snapshot-log', '[]')) WITH ORDINALITY l(e, n)) x
			   WHERE t < prev - 60000)
	   OR (m->'snapshot-log'->-1->>'timestamp-ms')::bigint > now_ms + 60000 THEN
		RAISE EXCEPTION 'the snapshot log would go back in time or run ahead of this commit (by more than a minute)'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;

	-- the new file: next version, metadata-log, timestamps
	props := coalesce(m->'properties', '{}');
	maxlog := greatest(1, coalesce(nullif(props->>'write.metadata.previous-versions-max', '')::integer, 100));
	m := m || jsonb_build_object('last-updated-ms', now_ms,
		'metadata-log', CASE WHEN creating THEN '[]'::jsonb ELSE (SELECT coalesce(jsonb_agg(e ORDER BY n), '[]')
						 FROM (SELECT e, n FROM jsonb_array_elements(
								   coalesce(base->'metadata-log', '[]') || jsonb_build_array(jsonb_build_object(
									   'timestamp-ms', base->'last-updated-ms', 'metadata-file', base_location)))
								   WITH ORDINALITY x(e, n)
							   ORDER BY n DESC LIMIT maxlog) l) END);
	version := CASE WHEN creating THEN 0
			   ELSE coalesce(substring(base_location FROM '/([0-9]+)-[^/]*$')::bigint, 0) + 1 END;
	dir := coalesce(rtrim(props->>'write.metadata.path', '/'), rtrim(m->>'location', '/') || '/metadata');
	file := dir || '/' || lpad(version::text, greatest(5, length(version::text)), '0') || '-'
		|| gen_random_uuid()::text
		|| CASE WHEN lower(props->>'write.metadata.compression-codec') = 'gzip'
				THEN '.gz.metadata.json' ELSE '.metadata.json' END;
	PERFORM skade.write_table_metadata(file, m, namespace, cat);
	IF creating THEN
		PERFORM skade.create_table_commit(namespace, name, file, cat);
	ELSE
		PERFORM skade.commit_table(namespace, name, base_location, file, cat);
	END IF;
	RETURN file;
END
$update$;

-- What expiring these snapshots leaves unreachable: their manifest lists, the
-- manifests no other snapshot lists, those manifests' live files no other
-- snapshot's manifests hold; each list read once (manifest_api.c)
CREATE FUNCTION skade.expire_files(namespace text, name text, expired bigint[], catalog text DEFAULT NULL)
	RETURNS TABLE (file_path text, kind text)
	AS 'MODULE_PATHNAME', 'skade_expire_files' LANGUAGE C;

/*
 * expire_snapshots: Java's ExpireSnapshots (RemoveSnapshots) on the
 * server.  Keeps main and every ref younger than its max-ref-age-ms (table
 * default history.expire.max-ref-age-ms); along each kept branch, the head
 * and its ancestors while fewer than min-snapshots-to-keep (retain_last,
 * else history.expire.min-snapshots-to-keep, else 1) are kept or they are
 * newer than older_than (else now - history.expire.max-snapshot-age-ms,
 * else 5 days); tags' snapshots; unreferenced snapshots newer than
 * older_than.  The rest is removed by one update_table commit (guarded by
 * the table uuid and main's snapshot).  Returns every file no longer
 * reachable -- the expired snapshots' manifest lists, their manifests that
 * no retained snapshot lists, the live data and delete files of those that
 * no retained manifest has, statistics files no longer referenced -- read
 * before the commit (a manifest that cannot be read fails the call:
 * nothing is expired on a guess).  gc.enabled = false refuses (55000).
 * delete_files: the files returned are removed when the transaction
 * commits (never before; an abort keeps them all); every one must lie
 * inside skade.write_roots, else 42501 and nothing is expired.
 */
CREATE FUNCTION skade.expire_snapshots(namespace text, name text, older_than timestamptz DEFAULT NULL,
									   retain_last integer DEFAULT NULL, delete_files boolean DEFAULT false,
									   catalog text DEFAULT NULL)
	RETURNS TABLE (file_path text, kind text)
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $expire$
DECLARE
	cat text := coalesce(catalog, current_setting('skade.catalog'));
	m jsonb;
	props jsonb;
	now_ms bigint := (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
	cutoff bigint;
	keep_min integer;
	max_ref_age bigint;
	keep bigint[] := '{}';
	drop_refs text[] := '{}';
	r record;
	cur bigint;
	n integer;
	snap jsonb;
	branch_cutoff bigint;
	expired bigint[];
	ups jsonb := '[]';
	byid jsonb;
	branch_ids bigint[];
BEGIN
	IF namespace IS NULL OR name IS NULL OR delete_files IS NULL THEN
		RAISE EXCEPTION 'namespace, name and delete_files must not be NULL' USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF retain_last IS NOT NULL AND retain_last < 1 THEN
		RAISE EXCEPTION 'retain_last must be at least 1' USING ERRCODE = 'invalid_parameter_value';
	END IF;
	m := skade.table_metadata(namespace, name, catalog => cat)::jsonb;
	props := coalesce(m->'properties', '{}');
	IF lower(props->>'gc.enabled') = 'false' THEN
		RAISE EXCEPTION 'cannot expire snapshots of "%.%": gc.enabled is false', namespace, name
			USING ERRCODE = 'object_not_in_prerequisite_state';
	END IF;
	cutoff := coalesce((extract(epoch FROM older_than) * 1000)::bigint,
					   now_ms - coalesce((props->>'history.expire.max-snapshot-age-ms')::bigint, 432000000));
	keep_min := coalesce(retain_last, (props->>'history.expire.min-snapshots-to-keep')::integer, 1);
	max_ref_age := (props->>'history.expire.max-ref-age-ms')::bigint;
	-- snapshots by id: every walk below looks one up per step
	byid := coalesce((SELECT jsonb_object_agg(x->>'snapshot-id', x) FROM jsonb_array_elements(m->'snapshots') x), '{}');

	-- refs: main always; others while younger than their max-ref-age-ms
	FOR r IN SELECT k, v FROM jsonb_each(coalesce(m->'refs', '{}')) t(k, v) LOOP
		snap := byid->(r.v->>'snapshot-id');
		IF r.k <> 'main' AND (snap IS NULL OR now_ms - (snap->>'timestamp-ms')::bigint >
							  coalesce((r.v->>'max-ref-age-ms')::bigint, max_ref_age, 9223372036854775807)) THEN
			drop_refs := drop_refs || r.k;
			CONTINUE;
		END IF;
		IF snap IS NULL THEN
			CONTINUE;
		END IF;
		keep := keep || (snap->>'snapshot-id')::bigint;
		IF r.v->>'type' = 'branch' THEN
			-- the branch's ancestors while few enough or young enough
			branch_cutoff := CASE WHEN r.v ? 'max-snapshot-age-ms' THEN now_ms - (r.v->>'max-snapshot-age-ms')::bigint ELSE cutoff END;
			cur := (snap->>'parent-snapshot-id')::bigint;
			n := 1;
			WHILE cur IS NOT NULL LOOP
				snap := byid->(cur::text);
				EXIT WHEN snap IS NULL;
				EXIT WHEN NOT (n < coalesce((r.v->>'min-snapshots-to-keep')::integer, keep_min)
							   OR (snap->>'timestamp-ms')::bigint >= branch_cutoff);
				keep := keep || cur;
				n := n + 1;
				cur := (snap->>'parent-snapshot-id')::bigint;
			END LOOP;
		END IF;
	END LOOP;
	-- unreferenced but young snapshots stay too (those in a kept branch's
	-- ancestry that did not qualify above go)
	-- (the ancestries of the branches that stay, each walked once)
	branch_ids := '{}';
	FOR r IN SELECT k, v FROM jsonb_each(coalesce(m->'refs', '{}')) t(k, v)
			 WHERE v->>'type' = 'branch' AND NOT k = ANY (drop_refs) LOOP
		cur := (r.v->>'snapshot-id')::bigint;
		WHILE cur IS NOT NULL LOOP
			branch_ids := branch_ids || cur;
			cur := (byid->(cur::text)->>'parent-snapshot-id')::bigint;
		END LOOP;
	END LOOP;
	SELECT array_agg(s.id) INTO expired
	  FROM (SELECT (x->>'snapshot-id')::bigint AS id, (x->>'timestamp-ms')::bigint AS ts
			  FROM jsonb_array_elements(coalesce(m->'snapshots', '[]')) x) s
	 WHERE NOT EXISTS (SELECT 1 FROM unnest(keep) k WHERE k = s.id)
	   AND NOT (s.ts >= cutoff AND NOT EXISTS (SELECT 1 FROM unnest(branch_ids) b WHERE b = s.id));
	expired := coalesce(expired, '{}');
	IF cardinality(expired) = 0 AND cardinality(drop_refs) = 0 THEN
		RETURN;
	END IF;

	-- what becomes unreachable, read before anything changes
	CREATE TEMP TABLE IF NOT EXISTS skade_expire_out (file_path text, kind text) ON COMMIT DROP;
	TRUNCATE skade_expire_out;
	INSERT INTO skade_expire_out
		SELECT f.file_path, f.kind FROM skade.expire_files(namespace, name, expired, cat) f
		UNION ALL
		SELECT s->>'statistics-path', 'statistics'
		  FROM jsonb_array_elements(coalesce(m->'statistics', '[]') || coalesce(m->'partition-statistics', '[]')) s
		 WHERE (s->>'snapshot-id')::bigint = ANY (expired);
	IF delete_files THEN
		-- checked against skade.write_roots now, removed at commit
		PERFORM skade.delete_at_commit(ARRAY(SELECT o.file_path FROM skade_expire_out o));
	END IF;

	-- the commit
	ups := (SELECT coalesce(jsonb_agg(jsonb_build_object('action', 'remove-snapshot-ref', 'ref-name', d)), '[]')
			FROM unnest(drop_refs) d);
	IF cardinality(expired) > 0 THEN
		ups := ups || jsonb_build_array(jsonb_build_object('action', 'remove-snapshots', 'snapshot-ids', to_jsonb(expired)));
	END IF;
	PERFORM skade.update_table(namespace, name,
		jsonb_build_array(jsonb_build_object('type', 'assert-table-uuid', 'uuid', m->'table-uuid'),
						  jsonb_build_object('type', 'assert-ref-snapshot-id', 'ref', 'main',
											 'snapshot-id', m->'refs'->'main'->'snapshot-id')),
		ups, cat);

	RETURN QUERY SELECT o.file_path, o.kind FROM skade_expire_out o;
END
$expire$;

-- The files of a rewrite_manifests commit (manifest_write.c): the current
-- snapshot's small data manifests merged per partition spec, and the manifest
-- list of the replacing snapshot, written under metadata_dir; NULL when there
-- is nothing to rewrite.  Returns the new snapshot's id, sequence number and
-- manifest list and the counts of its summary.
CREATE FUNCTION skade.rewrite_manifest_files(metadata text, target_size_bytes bigint, metadata_dir text)
	RETURNS jsonb AS 'MODULE_PATHNAME', 'skade_rewrite_manifest_files' LANGUAGE C;

/*
 * rewrite_manifests: merge the many small data manifests that per-commit
 * appends leave into few, grouped by partition spec and ordered by partition
 * within a spec, each about target_size_bytes (default 8 MiB, the default
 * of Java's commit.manifest.target-size-bytes), as Java's RewriteManifests
 * does.  Per spec, only data manifests smaller than the target are rewritten,
 * and only when there are two or more; delete manifests are kept.  Live
 * entries become EXISTING with their snapshot id and sequence numbers;
 * deleted entries are dropped.  Committed as a "replace" snapshot of main
 * (summary: manifests-created, manifests-kept, manifests-replaced,
 * entries-processed, changed-partition-count and the parent's totals) through
 * update_table with assert-table-uuid and assert-ref-snapshot-id main: a
 * concurrent commit fails it with 40001 (the abort removes the files it wrote).
 * Returns one row: the table's metadata location after the call, the
 * snapshot that is current, and the counts (all 0 when nothing was to do:
 * no snapshot, or at most one small data manifest per spec; no commit then).
 * Format v3: the rewritten data files keep their row ids (first_row_id
 * written explicitly); the new manifests get fresh first_row_id ranges from
 * the table's next-row-id, which grows by their rows, as Java's does.
 */
CREATE FUNCTION skade.rewrite_manifests(namespace text, name text, target_size_bytes bigint DEFAULT 8388608,
										catalog text DEFAULT NULL)
	RETURNS TABLE (metadata_location text, snapshot_id bigint, manifests_replaced integer,
				   manifests_created integer, manifests_kept integer, entries_rewritten bigint)
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $rewrite$
DECLARE
	cat text := coalesce(catalog, current_setting('skade.catalog'));
	mt text;
	m jsonb;
	props jsonb;
	w jsonb;
	parent jsonb;
	summary jsonb;
	snap jsonb;
	main_ref jsonb;
	reqs jsonb;
	k text;
	loc text;
BEGIN
	IF namespace IS NULL OR name IS NULL OR target_size_bytes IS NULL THEN
		RAISE EXCEPTION 'namespace, name and target_size_bytes must not be NULL' USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF target_size_bytes <= 0 THEN
		RAISE EXCEPTION 'target_size_bytes must be positive' USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF current_setting('transaction_read_only')::boolean THEN
		RAISE EXCEPTION 'cannot rewrite manifests of "%.%" in a read-only transaction', namespace, name
			USING ERRCODE = 'read_only_sql_transaction';
	END IF;
	mt := skade.table_metadata(namespace, name, catalog => cat)::text;
	m := mt::jsonb;
	props := coalesce(m->'properties', '{}');
	w := skade.rewrite_manifest_files(mt, target_size_bytes,
		coalesce(rtrim(props->>'write.metadata.path', '/'), rtrim(m->>'location', '/') OPERATOR(pg_catalog.||) '/metadata'));
	IF w IS NULL THEN
		RETURN QUERY SELECT l.metadata_location, nullif((m->>'current-snapshot-id')::bigint, -1), 0, 0,
							(SELECT count(*)::integer FROM skade.manifests(namespace, name, NULL, cat)), 0::bigint
					   FROM skade.load_table(namespace, name, 'none', cat) l;
		RETURN;
	END IF;

	parent := (SELECT x FROM jsonb_array_elements(m->'snapshots') x WHERE x->'snapshot-id' = m->'current-snapshot-id');
	summary := jsonb_build_object('operation', 'replace',
								  'manifests-created', w->>'manifests-created',
								  'manifests-kept', w->>'manifests-kept',
								  'manifests-replaced', w->>'manifests-replaced',
								  'entries-processed', w->>'entries-processed',
								  'changed-partition-count', '0');
	FOREACH k IN ARRAY ARRAY['total-records', 'total-files-size', 'total-data-files', 'total-delete-files',
							 'total-position-deletes', 'total-equality-deletes'] LOOP
		IF parent->'summary' ? k THEN
			summary := summary || jsonb_build_object(k, parent->'summary'->>k);
		END IF;
	END LOOP;
	snap := jsonb_build_object('snapshot-id', w->'snapshot-id', 'parent-snapshot-id', parent->'snapshot-id',
							   'timestamp-ms', (extract(epoch FROM clock_timestamp()) * 1000)::bigint,
							   'summary', summary, 'manifest-list', w->'manifest-list',
							   'schema-id', m->'current-schema-id');
	IF (m->>'format-version')::integer >= 2 THEN
		snap := snap || jsonb_build_object('sequence-number', w->'sequence-number');
	END IF;
	-- v3 row lineage: the ranges the new manifest list assigned (Java's SnapshotProducer)
	IF (m->>'format-version')::integer >= 3 THEN
		snap := snap || jsonb_build_object('first-row-id', w->'first-row-id', 'added-rows', w->'added-rows');
	END IF;
	-- main keeps its retention settings; it is replaced whole
	main_ref := coalesce(m->'refs'->'main', '{}') || jsonb_build_object('action', 'set-snapshot-ref', 'ref-name', 'main',
		'type', 'branch', 'snapshot-id', w->'snapshot-id');
	reqs := jsonb_build_array(jsonb_build_object('type', 'assert-ref-snapshot-id', 'ref', 'main',
		'snapshot-id', parent->'snapshot-id'));
	IF m ? 'table-uuid' THEN
		reqs := reqs || jsonb_build_array(jsonb_build_object('type', 'assert-table-uuid', 'uuid', m->'table-uuid'));
	END IF;
	loc := skade.update_table(namespace, name, reqs,
		jsonb_build_array(jsonb_build_object('action', 'add-snapshot', 'snapshot', snap), main_ref), cat);
	RETURN QUERY SELECT loc, (w->>'snapshot-id')::bigint, (w->>'manifests-replaced')::integer,
						(w->>'manifests-created')::integer, (w->>'manifests-kept')::integer,
						(w->>'entries-processed')::bigint;
END
$rewrite$;

-- Is snapshot id in the ancestry of a branch that stays (for expire_snapshots)?
CREATE FUNCTION skade.in_branch_ancestry(m jsonb, id bigint, dropped text[]) RETURNS boolean
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $f$
DECLARE
	r record;
	cur bigint;
	snap jsonb;
BEGIN
	FOR r IN SELECT k, v FROM jsonb_each(coalesce(m->'refs', '{}')) t(k, v)
			 WHERE v->>'type' = 'branch' AND NOT k = ANY (dropped) LOOP
		cur := (r.v->>'snapshot-id')::bigint;
		WHILE cur IS NOT NULL LOOP
			IF cur = id THEN
				RETURN true;
			END IF;
			snap := (SELECT x FROM jsonb_array_elements(m->'snapshots') x WHERE (x->>'snapshot-id')::bigint = cur);
			cur := (snap->>'parent-snapshot-id')::bigint;
		END LOOP;
	END LOOP;
	RETURN false;
END
$f$;

/*
 * The commit log is append-only; rows leave it only whole, moved with their
 * seq into this archive by skade.prune_commit_log() (and swap_table), never
 * updated, never destroyed.
 */
CREATE TABLE skade.commit_log_archive (
	seq				bigint PRIMARY KEY,
	op				text NOT NULL,
	source			text NOT NULL,
	catalog_name	text NOT NULL,
	table_namespace	text NOT NULL,
	table_name		text NOT NULL,
	iceberg_type	text,
	metadata_location text,
	previous_metadata_location text,
	prev_namespace	text,
	prev_name		text,
	committed_at	timestamptz NOT NULL,
	committed_by	name NOT NULL,
	xact_id			xid8 NOT NULL,
	snapshot_id		bigint,
	retired_at		timestamptz NOT NULL,
	detail			jsonb
);
SELECT pg_catalog.pg_extension_config_dump('skade.commit_log_archive', '');
GRANT SELECT ON skade.commit_log_archive TO skade_reader;

-- retire a table's log rows with seq < before (and the snapshot_map rows they wrote)
CREATE FUNCTION skade.prune_commit_log(namespace text, name text, before bigint, catalog text DEFAULT NULL)
	RETURNS bigint AS 'MODULE_PATHNAME', 'skade_prune_commit_log' LANGUAGE C;

/*
 * swap_table: rebuild-and-swap in one transaction.  live takes temp's
 * metadata (the same compare-and-swap a client commit runs), temp's pointer
 * is dropped; both rows are locked first, in name order, so live never
 * resolves to nothing and no commit slips in between.  With prune_log the
 * older log rows of live and every row of temp move to the archive: live's
 * history starts again at this swap (time travel forgets the retired
 * snapshots).  Returns live's new metadata location.
 */
CREATE FUNCTION skade.swap_table(namespace text, live text, temp text, prune_log boolean DEFAULT true,
								 catalog text DEFAULT NULL) RETURNS text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $swap$
DECLARE
	cat text := coalesce(catalog, current_setting('skade.catalog'));
	live_loc text;
	temp_loc text;
	seq bigint;
BEGIN
	IF namespace IS NULL OR live IS NULL OR temp IS NULL OR prune_log IS NULL THEN
		RAISE EXCEPTION 'namespace, live, temp and prune_log must not be NULL' USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF live = temp THEN
		RAISE EXCEPTION 'cannot swap "%.%" with itself', namespace, live USING ERRCODE = 'invalid_parameter_value';
	END IF;
	PERFORM 1 FROM public.iceberg_tables t
	 WHERE t.catalog_name = cat AND t.table_namespace = namespace AND t.table_name IN (live, temp)
	 ORDER BY t.table_name FOR UPDATE;
	SELECT t.metadata_location INTO live_loc FROM public.iceberg_tables t
	 WHERE t.catalog_name = cat AND t.table_namespace = namespace AND t.table_name = live
	   AND coalesce(t.iceberg_type, 'TABLE') = 'TABLE';
	IF NOT FOUND THEN
		RAISE EXCEPTION 'table "%.%" does not exist in catalog "%"', namespace, live, cat USING ERRCODE = 'undefined_table';
	END IF;
	SELECT t.metadata_location INTO temp_loc FROM public.iceberg_tables t
	 WHERE t.catalog_name = cat AND t.table_namespace = namespace AND t.table_name = temp
	   AND coalesce(t.iceberg_type, 'TABLE') = 'TABLE';
	IF NOT FOUND THEN
		RAISE EXCEPTION 'table "%.%" does not exist in catalog "%"', namespace, temp, cat USING ERRCODE = 'undefined_table';
	END IF;
	IF temp_loc IS NULL THEN
		RAISE EXCEPTION 'table "%.%" has no metadata location', namespace, temp USING ERRCODE = 'object_not_in_prerequisite_state';
	END IF;
	seq := skade.commit_table(namespace, live, live_loc, temp_loc, cat);
	PERFORM skade.drop_table(namespace, temp, cat);
	IF prune_log THEN
		PERFORM skade.prune_commit_log(namespace, live, seq, cat);
		PERFORM skade.prune_commit_log(namespace, temp, 9223372036854775807, cat);
	END IF;
	RETURN temp_loc;
END
$swap$;

/* ---------------------------------------------------------- written files */

-- The journal of files skade wrote in this database (written_files.c): each
-- with the (sub)transaction that wrote it, its state (running, committed,
-- aborted, unknown) and whether the file is still there
CREATE FUNCTION skade.written_files()
	RETURNS TABLE (location text, xid xid8, state text, present boolean)
	AS 'MODULE_PATHNAME', 'skade_written_files' LANGUAGE C STRICT;
-- remove one file the journal lists whose writing transaction aborted
CREATE FUNCTION skade.remove_written_file(location text) RETURNS boolean
	AS 'MODULE_PATHNAME', 'skade_remove_written_file' LANGUAGE C STRICT;
-- rewrite the journal without what no longer matters; the lines kept
CREATE FUNCTION skade.compact_written_files() RETURNS bigint
	AS 'MODULE_PATHNAME', 'skade_compact_written_files' LANGUAGE C STRICT;
-- remove these files (inside skade.write_roots) when this transaction commits
CREATE FUNCTION skade.delete_at_commit(locations text[]) RETURNS integer
	AS 'MODULE_PATHNAME', 'skade_delete_at_commit' LANGUAGE C STRICT;

/*
 * orphan_files: files skade wrote in this database for a transaction that
 * never committed and that are still there -- what an abort could not
 * remove, or what a crash between writing and committing left -- and that
 * no table pointer or commit-log entry (archived ones included) names.
 */
CREATE FUNCTION skade.orphan_files()
	RETURNS TABLE (location text, xid xid8)
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $orphans$
	WITH w AS MATERIALIZED (SELECT * FROM skade.written_files())
	SELECT DISTINCT w.location, w.xid FROM w
	 WHERE w.present AND w.state = 'aborted'
	   AND NOT EXISTS (SELECT 1 FROM w o WHERE o.location OPERATOR(pg_catalog.=) w.location
						  AND o.state OPERATOR(pg_catalog.<>) 'aborted')
	   AND NOT EXISTS (SELECT 1 FROM public.iceberg_tables t
					   WHERE w.location OPERATOR(pg_catalog.=) ANY (ARRAY[t.metadata_location, t.previous_metadata_location]))
	   AND NOT EXISTS (SELECT 1 FROM skade.commit_log c
					   WHERE w.location OPERATOR(pg_catalog.=) ANY (ARRAY[c.metadata_location, c.previous_metadata_location]))
	   AND NOT EXISTS (SELECT 1 FROM skade.commit_log_archive c
					   WHERE w.location OPERATOR(pg_catalog.=) ANY (ARRAY[c.metadata_location, c.previous_metadata_location]))
	 ORDER BY 1
$orphans$;

-- sweep_orphan_files: removes the orphan files (above), compacts the journal
CREATE FUNCTION skade.sweep_orphan_files()
	RETURNS TABLE (location text, removed boolean)
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $sweep$
DECLARE
	f record;
BEGIN
	FOR f IN SELECT o.location FROM skade.orphan_files() o LOOP
		location := f.location;
		removed := skade.remove_written_file(f.location);
		RETURN NEXT;
	END LOOP;
	PERFORM skade.compact_written_files();
END
$sweep$;

/*
 * purge_table: drop the table and, once the drop commits, delete every file
 * it can reach -- its metadata files (current and logged), statistics,
 * manifest lists, manifests and the data and delete files of every
 * snapshot (a REST drop with purgeRequested).  Every one must lie under
 * skade.write_roots (42501 otherwise: nothing is dropped).  Returns how
 * many files will go.
 */
CREATE FUNCTION skade.purge_table(namespace text, name text, catalog text DEFAULT NULL)
	RETURNS integer
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $purge$
DECLARE
	loc text := (SELECT l.metadata_location FROM skade.load_table(namespace, name, 'none', catalog) l);
	meta jsonb := skade.table_metadata(namespace, name, catalog => catalog)::jsonb;
	files text[];
BEGIN
	SELECT coalesce(array_agg(DISTINCT f), '{}') INTO files FROM (
		SELECT loc AS f
		UNION ALL SELECT e->>'metadata-file' FROM jsonb_array_elements(coalesce(meta->'metadata-log', '[]')) e
		UNION ALL SELECT e->>'statistics-path' FROM jsonb_array_elements(coalesce(meta->'statistics', '[]')) e
		UNION ALL SELECT e->>'statistics-path' FROM jsonb_array_elements(coalesce(meta->'partition-statistics', '[]')) e
		UNION ALL SELECT s->>'manifest-list' FROM jsonb_array_elements(coalesce(meta->'snapshots', '[]')) s
		UNION ALL SELECT m.path FROM jsonb_array_elements(coalesce(meta->'snapshots', '[]')) s,
			LATERAL skade.manifests(namespace, name, (s->>'snapshot-id')::bigint, catalog) m
		UNION ALL SELECT c.file_path FROM jsonb_array_elements(coalesce(meta->'snapshots', '[]')) s,
			LATERAL skade.files(namespace, name, (s->>'snapshot-id')::bigint, catalog) c) x
	 WHERE f IS NOT NULL;
	PERFORM skade.delete_at_commit(files);
	PERFORM skade.drop_table(namespace, name, catalog);
	RETURN cardinality(files);
END
$purge$;

/* ------------------------------------------------------------------ views */

/*
 * Iceberg views, kept as the JDBC catalog keeps them (rows of
 * public.iceberg_tables with iceberg_type 'VIEW'), their metadata written
 * by skade as Java's ViewMetadata.Builder builds it.  (The functions pin
 * search_path, so their operators are pg_catalog's.)  view_metadata reads
 * the current file (confined like any read), write_view_metadata writes a
 * new one create-only (view_api.c).
 */
CREATE FUNCTION skade.view_metadata(namespace text, name text, catalog text DEFAULT NULL)
	RETURNS text AS 'MODULE_PATHNAME', 'skade_view_metadata' LANGUAGE C STABLE
	PARALLEL RESTRICTED;
CREATE FUNCTION skade.write_view_metadata(location text, metadata jsonb,
										  namespace text DEFAULT NULL, catalog text DEFAULT NULL)
	RETURNS text AS 'MODULE_PATHNAME', 'skade_write_view_metadata' LANGUAGE C;

-- list_views: the views of a namespace
-- view_pointer: the one change of a view's row each view function makes,
-- logged as an API change (view_api.c): op create/register (a: location),
-- commit (a -> b), rename (to namespace a, name b) or drop; rows changed
CREATE FUNCTION skade.view_pointer(op text, namespace text, name text, catalog text,
								   a text DEFAULT NULL, b text DEFAULT NULL) RETURNS bigint
	AS 'MODULE_PATHNAME', 'skade_view_pointer' LANGUAGE C;

CREATE FUNCTION skade.list_views(namespace text, catalog text DEFAULT NULL) RETURNS SETOF text
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $lv$
BEGIN
	IF NOT skade.namespace_exists(namespace, catalog) THEN
		RAISE EXCEPTION 'namespace "%" does not exist', namespace USING ERRCODE = 'invalid_schema_name';
	END IF;
	RETURN QUERY SELECT t.table_name::text FROM public.iceberg_tables t
	 WHERE t.catalog_name = coalesce(catalog, current_setting('skade.catalog'))
	   AND t.table_namespace = namespace
	   AND t.iceberg_type = 'VIEW'
	 ORDER BY t.table_name COLLATE "C";
END
$lv$;

-- view_exists
CREATE FUNCTION skade.view_exists(namespace text, name text, catalog text DEFAULT NULL) RETURNS boolean
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $ve$
	SELECT EXISTS (SELECT 1 FROM public.iceberg_tables t
				   WHERE t.catalog_name = coalesce(catalog, current_setting('skade.catalog'))
					 AND t.table_namespace = namespace
					 AND t.table_name = name
					 AND t.iceberg_type = 'VIEW')
$ve$;

/*
 * apply_view_updates: Java's ViewMetadata.Builder over base: assign-uuid
 * (never another), upgrade-format-version (1), set-location,
 * set-properties, remove-properties, add-schema (an equal schema is
 * reused, else the next id), add-view-version (schema-id -1: the last added
 * schema; an equal version is reused, else the next id; one SQL query per
 * dialect), set-current-view-version (-1: the last added version; a change
 * logs the version in version-log); then at most
 * version.history.num-entries (10) versions are kept, the current always.
 * Bad updates are 22023.
 */
CREATE FUNCTION skade.apply_view_updates(base jsonb, updates jsonb) RETURNS jsonb
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $avu$
DECLARE
	m jsonb := base;
	u jsonb;
	s jsonb;
	ver jsonb;
	i integer := 0;
	v integer;
	sid integer;
	last_schema integer;
	last_version integer;
	keep integer;
	now_ms bigint := (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
BEGIN
	IF updates IS NULL OR jsonb_typeof(updates) <> 'array' THEN
		RAISE EXCEPTION 'updates must be a JSON array' USING ERRCODE = 'invalid_parameter_value';
	END IF;
	FOR u IN SELECT q FROM jsonb_array_elements(updates) q LOOP
		i := i + 1;
		CASE lower(u->>'action')
		WHEN 'assign-uuid' THEN
			IF jsonb_typeof(u->'uuid') IS DISTINCT FROM 'string' THEN
				RAISE EXCEPTION 'updates[%].uuid must be a string', i - 1 USING ERRCODE = 'invalid_parameter_value';
			ELSIF m ? 'view-uuid' AND lower(m->>'view-uuid') <> lower(u->>'uuid') THEN
				RAISE EXCEPTION 'updates[%]: cannot reassign the uuid of a view', i - 1 USING ERRCODE = 'invalid_parameter_value';
			END IF;
			m := m || jsonb_build_object('view-uuid', lower(u->>'uuid'));
		WHEN 'upgrade-format-version' THEN
			v := skade.json_int(u->'format-version', format('updates[%s].format-version', i - 1));
			IF v IS DISTINCT FROM 1 THEN
				RAISE EXCEPTION 'updates[%]: view format version % is not supported', i - 1, coalesce(v::text, 'null')
					USING ERRCODE = 'invalid_parameter_value';
			END IF;
		WHEN 'set-location' THEN
			IF jsonb_typeof(u->'location') IS DISTINCT FROM 'string' THEN
				RAISE EXCEPTION 'updates[%].location must be a string', i - 1 USING ERRCODE = 'invalid_parameter_value';
			END IF;
			m := m || jsonb_build_object('location', rtrim(u->>'location', '/'));
		WHEN 'set-properties' THEN
			s := coalesce(u->'updates', u->'updated');
			IF jsonb_typeof(s) IS DISTINCT FROM 'object' OR EXISTS (
				SELECT 1 FROM jsonb_each(s) p WHERE jsonb_typeof(p.value) <> 'string') THEN
				RAISE EXCEPTION 'updates[%].updates must be an object of strings', i - 1 USING ERRCODE = 'invalid_parameter_value';
			END IF;
			m := jsonb_set(m, '{properties}', coalesce(m->'properties', '{}') || s);
		WHEN 'remove-properties' THEN
			IF jsonb_typeof(u->'removals') IS DISTINCT FROM 'array' THEN
				RAISE EXCEPTION 'updates[%].removals must be an array', i - 1 USING ERRCODE = 'invalid_parameter_value';
			END IF;
			m := jsonb_set(m, '{properties}', coalesce(m->'properties', '{}') -
						   ARRAY(SELECT jsonb_array_elements_text(u->'removals')));
		WHEN 'add-schema' THEN
			s := u->'schema';
			IF jsonb_typeof(s) IS DISTINCT FROM 'object' OR jsonb_typeof(s->'fields') IS DISTINCT FROM 'array' THEN
				RAISE EXCEPTION 'updates[%].schema must be a struct with fields', i - 1 USING ERRCODE = 'invalid_parameter_value';
			END IF;
			SELECT (x->>'schema-id')::integer INTO last_schema FROM jsonb_array_elements(coalesce(m->'schemas', '[]')) x
			 WHERE x->'fields' = s->'fields'
			   AND coalesce(x->'identifier-field-ids', '[]') = coalesce(s->'identifier-field-ids', '[]')
			 LIMIT 1;
			IF last_schema IS NULL THEN
				last_schema := coalesce((SELECT max((x->>'schema-id')::integer) FROM jsonb_array_elements(coalesce(m->'schemas', '[]')) x), -1) + 1;
				m := jsonb_set(m, '{schemas}', coalesce(m->'schemas', '[]') ||
							   jsonb_build_array(s || jsonb_build_object('schema-id', last_schema)));
			END IF;
		WHEN 'add-view-version' THEN
			ver := u->'view-version';
			IF jsonb_typeof(ver) IS DISTINCT FROM 'object' OR jsonb_typeof(ver->'representations') IS DISTINCT FROM 'array' THEN
				RAISE EXCEPTION 'updates[%].view-version must be an object with representations', i - 1
					USING ERRCODE = 'invalid_parameter_value';
			END IF;
			sid := skade.json_int(ver->'schema-id', format('updates[%s].view-version.schema-id', i - 1));
			IF sid = -1 THEN
				IF last_schema IS NULL THEN
					RAISE EXCEPTION 'updates[%]: cannot set the last added schema: no schema has been added', i - 1
						USING ERRCODE = 'invalid_parameter_value';
				END IF;
				sid := last_schema;
			END IF;
			IF NOT EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(m->'schemas', '[]')) x WHERE (x->>'schema-id')::integer = sid) THEN
				RAISE EXCEPTION 'updates[%]: cannot add a version with unknown schema %', i - 1, sid
					USING ERRCODE = 'invalid_parameter_value';
			END IF;
			s := (SELECT to_jsonb(lower(r->>'dialect')) FROM jsonb_array_elements(ver->'representations') r
				  WHERE lower(r->>'type') = 'sql'
				  GROUP BY lower(r->>'dialect') HAVING count(*) > 1 LIMIT 1);
			IF s IS NOT NULL THEN
				RAISE EXCEPTION 'Invalid view version: Cannot add multiple queries for dialect %', s #>> '{}'
					USING ERRCODE = 'invalid_parameter_value';
			END IF;
			ver := ver || jsonb_build_object('schema-id', sid,
				'timestamp-ms', coalesce(ver->'timestamp-ms', to_jsonb(now_ms)));
			SELECT (x->>'version-id')::integer INTO last_version FROM jsonb_array_elements(coalesce(m->'versions', '[]')) x
			 WHERE (x - ARRAY['version-id', 'timestamp-ms'])
				   = (ver - ARRAY['version-id', 'timestamp-ms'])
			 LIMIT 1;
			IF last_version IS NULL THEN
				last_version := coalesce((SELECT max((x->>'version-id')::integer) FROM jsonb_array_elements(coalesce(m->'versions', '[]')) x), 0) + 1;
				m := jsonb_set(m, '{versions}', coalesce(m->'versions', '[]') ||
							   jsonb_build_array(ver || jsonb_build_object('version-id', last_version)));
			END IF;
		WHEN 'set-current-view-version' THEN
			v := skade.json_int(u->'view-version-id', format('updates[%s].view-version-id', i - 1));
			IF v = -1 THEN
				IF last_version IS NULL THEN
					RAISE EXCEPTION 'updates[%]: cannot set the last added view version: no view version has been added', i - 1
						USING ERRCODE = 'invalid_parameter_value';
				END IF;
				v := last_version;
			END IF;
			ver := (SELECT x FROM jsonb_array_elements(coalesce(m->'versions', '[]')) x WHERE (x->>'version-id')::integer = v);
			IF ver IS NULL THEN
				RAISE EXCEPTION 'updates[%]: cannot set current version to unknown version %', i - 1, v
					USING ERRCODE = 'invalid_parameter_value';
			END IF;
			IF (m->>'current-version-id')::integer IS DISTINCT FROM v THEN
				m := m || jsonb_build_object('current-version-id', v,
					'version-log', coalesce(m->'version-log', '[]') ||
						jsonb_build_array(jsonb_build_object('timestamp-ms', ver->'timestamp-ms', 'version-id', v)));
			END IF;
		ELSE
			RAISE EXCEPTION 'updates[%]: unknown view update action %', i - 1, coalesce(u->>'action', 'null')
				USING ERRCODE = 'invalid_parameter_value';
		END CASE;
	END LOOP;
	IF NOT EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(m->'versions', '[]')) x
				   WHERE x->'version-id' = m->'current-version-id') THEN
		RAISE EXCEPTION 'a view needs a current version' USING ERRCODE = 'invalid_parameter_value';
	END IF;
	-- the history kept (the newest versions, the current always)
	keep := greatest(1, coalesce(nullif(m->'properties'->>'version.history.num-entries', '')::integer, 10));
	IF jsonb_array_length(m->'versions') > keep THEN
		m := jsonb_set(m, '{versions}', (SELECT jsonb_agg(x ORDER BY (x->>'version-id')::integer)
			FROM (SELECT x FROM jsonb_array_elements(m->'versions') x
				  ORDER BY (x->'version-id' = m->'current-version-id') DESC,
						   (x->>'version-id')::integer DESC LIMIT keep) k));
		m := jsonb_set(m, '{version-log}', (SELECT coalesce(jsonb_agg(e ORDER BY n), '[]')
			FROM jsonb_array_elements(coalesce(m->'version-log', '[]')) WITH ORDINALITY l(e, n)
			WHERE EXISTS (SELECT 1 FROM jsonb_array_elements(m->'versions') x
						  WHERE x->'version-id' = e->'version-id')));
	END IF;
	RETURN m;
END
$avu$;

/*
 * create_view: a new view from a REST CreateViewRequest {name, location,
 * schema, view-version, properties}: written to
 * <location>/metadata/00000-<uuid>.metadata.json (location: the request's,
 * else the namespace's location and the name) and added as a 'VIEW' row
 * (logged "create").  Returns the metadata location.
 */
CREATE FUNCTION skade.create_view(namespace text, name text, request jsonb, catalog text DEFAULT NULL)
	RETURNS text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $cv$
DECLARE
	cat text := coalesce(catalog, current_setting('skade.catalog'));
	loc text := request->>'location';
	m jsonb;
	file text;
BEGIN
	IF namespace IS NULL OR name IS NULL OR request IS NULL THEN
		RAISE EXCEPTION 'namespace, name and request must not be NULL' USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF NOT skade.namespace_exists(namespace, cat) THEN
		RAISE EXCEPTION 'namespace "%" does not exist', namespace USING ERRCODE = 'invalid_schema_name';
	END IF;
	IF EXISTS (SELECT 1 FROM public.iceberg_tables t
			   WHERE t.catalog_name = cat AND t.table_namespace = namespace
				 AND t.table_name = name) THEN
		RAISE EXCEPTION '% "%.%" already exists',
			(SELECT lower(coalesce(t.iceberg_type, 'TABLE')) FROM public.iceberg_tables t
			  WHERE t.catalog_name = cat AND t.table_namespace = namespace AND t.table_name = name),
			namespace, name USING ERRCODE = 'unique_violation';
	END IF;
	IF loc IS NULL THEN
		loc := skade.namespace_properties(namespace, cat)->>'location';
		IF loc IS NULL THEN
			RAISE EXCEPTION 'view "%.%" has no location', namespace, name USING ERRCODE = 'invalid_parameter_value',
				HINT = 'Pass location, set the namespace''s "location" property, or set skade.warehouse.';
		END IF;
		-- the name becomes a directory: one path component (else 42602)
		loc := rtrim(loc, '/') || '/' || skade.path_component(name, 'view');
	END IF;
	m := skade.apply_view_updates(
		jsonb_build_object('format-version', 1, 'current-version-id', -1, 'versions', '[]'::jsonb,
						   'version-log', '[]'::jsonb, 'schemas', '[]'::jsonb, 'properties', '{}'::jsonb),
		jsonb_build_array(
			jsonb_build_object('action', 'assign-uuid', 'uuid', gen_random_uuid()::text),
			jsonb_build_object('action', 'set-location', 'location', loc),
			jsonb_build_object('action', 'set-properties', 'updates', coalesce(request->'properties', '{}')),
			jsonb_build_object('action', 'add-schema', 'schema', request->'schema'),
			jsonb_build_object('action', 'add-view-version', 'view-version',
							   coalesce(request->'view-version', 'null') || '{"schema-id": -1}'),
			jsonb_build_object('action', 'set-current-view-version', 'view-version-id', -1)));
	file := coalesce(rtrim(m->'properties'->>'write.metadata.path', '/'), (m->>'location') || '/metadata')
		|| '/00000-' || gen_random_uuid()::text || '.metadata.json';
	PERFORM skade.write_view_metadata(file, m, namespace, cat);
	PERFORM skade.view_pointer('create', namespace, name, cat, file);
	RETURN file;
END
$cv$;

/*
 * update_view: a REST CommitViewRequest {requirements, updates} applied to
 * the view under its row lock (assert-view-uuid the only requirement: 40001
 * when it fails), written as the next metadata file and swapped in by the
 * JDBC clients' compare-and-swap UPDATE (logged "commit").  Returns the
 * metadata location (unchanged when nothing changed).
 */
CREATE FUNCTION skade.update_view(namespace text, name text, requirements jsonb DEFAULT '[]',
								  updates jsonb DEFAULT '[]', catalog text DEFAULT NULL)
	RETURNS text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $uv$
DECLARE
	cat text := coalesce(catalog, current_setting('skade.catalog'));
	base_location text;
	base jsonb;
	m jsonb;
	r jsonb;
	version bigint;
	file text;
BEGIN
	IF namespace IS NULL OR name IS NULL OR requirements IS NULL OR updates IS NULL THEN
		RAISE EXCEPTION 'namespace, name, requirements and updates must not be NULL'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF jsonb_typeof(requirements) <> 'array' THEN
		RAISE EXCEPTION 'requirements must be a JSON array' USING ERRCODE = 'invalid_parameter_value';
	END IF;
	SELECT t.metadata_location INTO base_location FROM public.iceberg_tables t
	 WHERE t.catalog_name = cat AND t.table_namespace = namespace
	   AND t.table_name = name AND t.iceberg_type = 'VIEW'
	   FOR UPDATE;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'view "%.%" does not exist in catalog "%"', namespace, name, cat USING ERRCODE = 'undefined_table';
	END IF;
	base := skade.view_metadata(namespace, name, cat)::jsonb;
	FOR r IN SELECT q FROM jsonb_array_elements(requirements) q LOOP
		CASE lower(r->>'type')
		WHEN 'assert-view-uuid' THEN
			IF lower(r->>'uuid') IS DISTINCT FROM lower(base->>'view-uuid') THEN
				RAISE EXCEPTION 'Requirement failed: view UUID does not match: expected % != %', r->>'uuid', base->>'view-uuid'
					USING ERRCODE = 'serialization_failure';
			END IF;
		ELSE
			RAISE EXCEPTION 'unknown view requirement %', coalesce(r->>'type', 'null') USING ERRCODE = 'invalid_parameter_value';
		END CASE;
	END LOOP;
	m := skade.apply_view_updates(base, updates);
	IF m = base THEN
		RETURN base_location;
	END IF;
	version := coalesce(substring(base_location FROM '/([0-9]+)-[^/]*$')::bigint, 0) + 1;
	file := coalesce(rtrim(m->'properties'->>'write.metadata.path', '/'), (m->>'location') || '/metadata')
		|| '/' || lpad(version::text, greatest(5, length(version::text)), '0')
		|| '-' || gen_random_uuid()::text || '.metadata.json';
	PERFORM skade.write_view_metadata(file, m, namespace, cat);
	PERFORM skade.view_pointer('commit', namespace, name, cat, base_location, file);
	RETURN file;
END
$uv$;

-- register_view: an existing view metadata file as a new view (read first:
-- it must be view metadata), logged "register"
CREATE FUNCTION skade.register_view(namespace text, name text, metadata_location text,
									catalog text DEFAULT NULL) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $regv$
DECLARE
	cat text := coalesce(catalog, current_setting('skade.catalog'));
BEGIN
	IF namespace IS NULL OR name IS NULL OR metadata_location IS NULL THEN
		RAISE EXCEPTION 'namespace, name and metadata_location must not be NULL' USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF NOT skade.namespace_exists(namespace, cat) THEN
		RAISE EXCEPTION 'namespace "%" does not exist', namespace USING ERRCODE = 'invalid_schema_name';
	END IF;
	IF EXISTS (SELECT 1 FROM public.iceberg_tables t
			   WHERE t.catalog_name = cat AND t.table_namespace = namespace AND t.table_name = name) THEN
		RAISE EXCEPTION '% "%.%" already exists',
			(SELECT lower(coalesce(t.iceberg_type, 'TABLE')) FROM public.iceberg_tables t
			  WHERE t.catalog_name = cat AND t.table_namespace = namespace AND t.table_name = name),
			namespace, name USING ERRCODE = 'unique_violation';
	END IF;
	PERFORM skade.view_pointer('register', namespace, name, cat, metadata_location);
	-- readable view metadata, or nothing registered
	IF jsonb_typeof(skade.view_metadata(namespace, name, cat)::jsonb->'view-uuid') IS DISTINCT FROM 'string' THEN
		RAISE EXCEPTION '"%" is not Iceberg view metadata', metadata_location USING ERRCODE = 'invalid_parameter_value';
	END IF;
END
$regv$;

-- drop_view
CREATE FUNCTION skade.drop_view(namespace text, name text, catalog text DEFAULT NULL) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $dv$
BEGIN
	IF namespace IS NULL OR name IS NULL THEN
		RAISE EXCEPTION 'namespace and name must not be NULL' USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF skade.view_pointer('drop', namespace, name, coalesce(catalog, current_setting('skade.catalog'))) = 0 THEN
		RAISE EXCEPTION 'view "%.%" does not exist', namespace, name USING ERRCODE = 'undefined_table';
	END IF;
END
$dv$;

-- rename_view: to another name (and namespace) not taken by a table or view
CREATE FUNCTION skade.rename_view(namespace text, name text, new_namespace text, new_name text,
								  catalog text DEFAULT NULL) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $rv$
DECLARE
	cat text := coalesce(catalog, current_setting('skade.catalog'));
BEGIN
	IF namespace IS NULL OR name IS NULL OR new_namespace IS NULL OR new_name IS NULL THEN
		RAISE EXCEPTION 'namespace, name, new_namespace and new_name must not be NULL'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF NOT skade.view_exists(namespace, name, cat) THEN
		RAISE EXCEPTION 'view "%.%" does not exist', namespace, name USING ERRCODE = 'undefined_table';
	END IF;
	IF NOT skade.namespace_exists(new_namespace, cat) THEN
		RAISE EXCEPTION 'namespace "%" does not exist', new_namespace USING ERRCODE = 'invalid_schema_name';
	END IF;
	IF EXISTS (SELECT 1 FROM public.iceberg_tables t
			   WHERE t.catalog_name = cat AND t.table_namespace = new_namespace
				 AND t.table_name = new_name) THEN
		RAISE EXCEPTION '% "%.%" already exists',
			(SELECT lower(coalesce(t.iceberg_type, 'TABLE')) FROM public.iceberg_tables t
			  WHERE t.catalog_name = cat AND t.table_namespace = new_namespace AND t.table_name = new_name),
			new_namespace, new_name USING ERRCODE = 'unique_violation';
	END IF;
	PERFORM skade.view_pointer('rename', namespace, name, cat, new_namespace, new_name);
END
$rv$;

/* ------------------------------------------------------------ REST catalog */

/*
 * rest_tokens: the static credentials of skade's REST catalog
 * (rest_auth.c): the SHA-256 of each token, the role its requests run as
 * -- bound by OID, so a role dropped and created again under the same name
 * does not inherit the old one's tokens; role_name is the name at creation,
 * for Basic credentials and for people -- and when it expires.  A token
 * reads skade_<token_id>_<secret>: its id is what rest_revoke_token and
 * rest_list_tokens name, the secret is shown once.  Only the owner reads
 * the table; tokens are made, listed and revoked by the functions below
 * (superuser: they are the owner's).  A logical dump restored into another
 * cluster gives roles new OIDs: tokens must be made again there (pg_upgrade
 * keeps role OIDs, and the tokens with them).
 */
CREATE SEQUENCE skade.rest_token_id_seq;
CREATE TABLE skade.rest_tokens (
	token_id bigint NOT NULL DEFAULT pg_catalog.nextval('skade.rest_token_id_seq'),
	token_hash bytea NOT NULL,
	role_oid oid NOT NULL,
	role_name name NOT NULL,
	expires_at timestamptz,
	created_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
	comment text,
	CONSTRAINT rest_tokens_pkey PRIMARY KEY (token_id),
	CONSTRAINT rest_tokens_token_hash_key UNIQUE (token_hash)
);
ALTER SEQUENCE skade.rest_token_id_seq OWNED BY skade.rest_tokens.token_id;
REVOKE ALL ON skade.rest_tokens FROM PUBLIC;
REVOKE ALL ON SEQUENCE skade.rest_token_id_seq FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('skade.rest_tokens', '');
SELECT pg_catalog.pg_extension_config_dump('skade.rest_token_id_seq', '');

/*
 * rest_oidc_roles: which role a bearer JWT of an OpenID issuer runs as
 * (rest_oidc.c): a row maps the tokens of issuer whose claim -- a dotted
 * path into the token's claims, e.g. sub, groups, realm_access.roles --
 * equals value, or is an array holding it, to a role (bound by OID, as
 * tokens are).  A "sub" row beats the others; the rows that decide must
 * name one role.  Without a row, skade.rest_oidc_role_claim names the
 * role.  Only the owner reads it; rows are made by the functions below.
 */
CREATE TABLE skade.rest_oidc_roles (
	issuer text NOT NULL,
	claim text NOT NULL,
	value text NOT NULL,
	role_oid oid NOT NULL,
	role_name name NOT NULL,
	created_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
	CONSTRAINT rest_oidc_roles_pkey PRIMARY KEY (issuer, claim, value)
);
REVOKE ALL ON skade.rest_oidc_roles FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('skade.rest_oidc_roles', '');

/*
 * rest_idempotency: the answers of REST requests that carried an
 * Idempotency-Key, stored in the transaction that made the change (a 5xx or
 * an error is never stored); a replay within the lifetime the config
 * announces (30 minutes) gets the stored answer when it is the same request
 * (method, route and SHA-256 of the body) and its role may still make it,
 * another request with the key 422.  A key is the role's own (role_oid).
 * Expired answers are swept by time (created_at).  Only the owner reads it.
 */
CREATE TABLE skade.rest_idempotency (
	role_oid oid NOT NULL,
	key text NOT NULL,
	method text NOT NULL,
	route text NOT NULL,
	body_sha256 bytea NOT NULL,
	status integer NOT NULL,
	body text NOT NULL,
	created_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
	PRIMARY KEY (role_oid, key)
);
CREATE INDEX rest_idempotency_created_at ON skade.rest_idempotency (created_at);
REVOKE ALL ON skade.rest_idempotency FROM PUBLIC;

-- rest_create_token: a new token for role, skade_<id>_<secret> (shown once, stored hashed)
CREATE FUNCTION skade.rest_create_token(role name, valid_for interval DEFAULT '90 days',
										comment text DEFAULT NULL)
	RETURNS text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $token$
DECLARE
	r record;
	id bigint;
	token text;
BEGIN
	SELECT a.oid, a.rolcanlogin, a.rolsuper INTO r FROM pg_catalog.pg_roles a
	 WHERE a.rolname OPERATOR(pg_catalog.=) role;
	IF role IS NULL OR NOT FOUND THEN
		RAISE EXCEPTION 'role "%" does not exist', role USING ERRCODE = 'undefined_object';
	END IF;
	IF NOT r.rolcanlogin THEN
		RAISE EXCEPTION 'role "%" cannot log in', role USING ERRCODE = 'object_not_in_prerequisite_state',
			HINT = 'A REST token works only for a role with LOGIN: ALTER ROLE ... LOGIN.';
	END IF;
	IF r.rolsuper AND NOT pg_catalog.current_setting('skade.rest_allow_superuser')::boolean THEN
		RAISE EXCEPTION 'role "%" is a superuser', role USING ERRCODE = 'object_not_in_prerequisite_state',
			HINT = 'REST requests do not run as a superuser unless skade.rest_allow_superuser is on.';
	END IF;
	id := pg_catalog.nextval('skade.rest_token_id_seq');
	token := 'skade_' || id || '_' || replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', '');
	INSERT INTO skade.rest_tokens (token_id, token_hash, role_oid, role_name, expires_at, comment)
	VALUES (id, sha256(convert_to(token, 'UTF8')), r.oid, role,
			now() OPERATOR(pg_catalog.+) valid_for, comment);
	RETURN token;
END
$token$;

-- rest_revoke_token: the token with this id no longer works (true if it was known)
CREATE FUNCTION skade.rest_revoke_token(token_id bigint) RETURNS boolean
LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $revoke$
	WITH d AS (DELETE FROM skade.rest_tokens t
			   WHERE t.token_id OPERATOR(pg_catalog.=) rest_revoke_token.token_id
			   RETURNING 1)
	SELECT count(*) OPERATOR(pg_catalog.>) 0 FROM d
$revoke$;

-- rest_list_tokens: every token (never its secret), whether it works now and why not
CREATE FUNCTION skade.rest_list_tokens()
	RETURNS TABLE (token_id bigint, role name, usable boolean, refused_because text,
				   expires_at timestamptz, created_at timestamptz, comment text)
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $list$
	SELECT t.token_id, t.role_name, w.why IS NULL, w.why, t.expires_at, t.created_at, t.comment
	  FROM skade.rest_tokens t
	  LEFT JOIN pg_catalog.pg_authid a ON a.oid OPERATOR(pg_catalog.=) t.role_oid
	  CROSS JOIN LATERAL (SELECT CASE
			WHEN t.expires_at OPERATOR(pg_catalog.<=) now() THEN 'the token has expired'
			WHEN a.oid IS NULL THEN 'its role no longer exists'
			WHEN a.rolsuper AND NOT current_setting('skade.rest_allow_superuser')::boolean
				THEN 'its role is a superuser'
			WHEN NOT a.rolcanlogin THEN 'its role cannot log in'
			WHEN a.rolvaliduntil OPERATOR(pg_catalog.<) now() THEN 'its role has expired (VALID UNTIL)'
		END AS why) w
	 ORDER BY t.token_id
$list$;

-- rest_map_oidc_role: tokens of issuer whose claim holds value run as role
CREATE FUNCTION skade.rest_map_oidc_role(issuer text, claim text, value text, role name)
	RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $map$
DECLARE
	r oid;
BEGIN
	IF issuer IS NULL OR claim IS NULL OR value IS NULL OR claim OPERATOR(pg_catalog.=) '' THEN
		RAISE EXCEPTION 'issuer, claim and value must be given' USING ERRCODE = 'null_value_not_allowed';
	END IF;
	SELECT a.oid INTO r FROM pg_catalog.pg_roles a WHERE a.rolname OPERATOR(pg_catalog.=) role;
	IF role IS NULL OR r IS NULL THEN
		RAISE EXCEPTION 'role "%" does not exist', role USING ERRCODE = 'undefined_object';
	END IF;
	INSERT INTO skade.rest_oidc_roles AS m (issuer, claim, value, role_oid, role_name)
	VALUES (issuer, claim, value, r, role)
	ON CONFLICT ON CONSTRAINT rest_oidc_roles_pkey
	DO UPDATE SET role_oid = excluded.role_oid, role_name = excluded.role_name, created_at = now();
END
$map$;

-- rest_unmap_oidc_role: the mapping is gone (true if there was one)
CREATE FUNCTION skade.rest_unmap_oidc_role(issuer text, claim text, value text) RETURNS boolean
LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $unmap$
	WITH d AS (DELETE FROM skade.rest_oidc_roles m
			   WHERE m.issuer OPERATOR(pg_catalog.=) rest_unmap_oidc_role.issuer
				 AND m.claim OPERATOR(pg_catalog.=) rest_unmap_oidc_role.claim
				 AND m.value OPERATOR(pg_catalog.=) rest_unmap_oidc_role.value
			   RETURNING 1)
	SELECT count(*) OPERATOR(pg_catalog.>) 0 FROM d
$unmap$;

-- rest_namespace: a REST namespace (an array of levels) as its JDBC name
CREATE FUNCTION skade.rest_namespace(levels jsonb) RETURNS text
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $ns$
BEGIN
	IF levels IS NULL OR jsonb_typeof(levels) OPERATOR(pg_catalog.<>) 'array'
	   OR jsonb_array_length(levels) OPERATOR(pg_catalog.=) 0
	   OR EXISTS (SELECT 1 FROM jsonb_array_elements(levels) e
				  WHERE jsonb_typeof(e) OPERATOR(pg_catalog.<>) 'string'
					 OR e #>> '{}' OPERATOR(pg_catalog.=) ''
					 OR strpos(e #>> '{}', '.') OPERATOR(pg_catalog.>) 0) THEN
		RAISE EXCEPTION 'a namespace is a non-empty array of non-empty names without "."'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	RETURN (SELECT string_agg(e, '.' ORDER BY o) FROM jsonb_array_elements_text(levels) WITH ORDINALITY x(e, o));
END
$ns$;

-- rest_value_map: one statistic of every column as {"keys": [ids], "values": [...]}, or NULL
-- (C, rest_json.c: called six times per planned file, where a SQL body was
-- parsed and planned again on each call)
CREATE FUNCTION skade.rest_value_map(columns jsonb, stat text) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'skade_rest_value_map' LANGUAGE C IMMUTABLE PARALLEL SAFE;

/*
 * rest_content_file: a file row of files()/plan_files() as the REST
 * protocol's ContentFile (Java's ContentFileParser): partition values in
 * the order of its spec's fields, column statistics as {keys, values} maps
 * by field id, bounds as their JSON values.  No SET search_path of its own:
 * plan_table_scan, which pins it, calls it once per planned file, and the
 * SET on each call cost more than the work; a direct caller runs it with
 * his own.
 */
CREATE FUNCTION skade.rest_content_file(f skade.content_file, meta jsonb) RETURNS jsonb
LANGUAGE sql STABLE AS $rcf$
	SELECT jsonb_strip_nulls(jsonb_build_object(
		'spec-id', f.partition_spec_id,
		'content', CASE f.content WHEN 'position_deletes' THEN 'position-deletes'
								  WHEN 'equality_deletes' THEN 'equality-deletes' ELSE 'data' END,
		'file-path', f.file_path,
		'file-format', lower(f.file_format),
		'partition', coalesce((SELECT jsonb_agg(coalesce(f.partition->(pf->>'name'), 'null'::jsonb) ORDER BY o)
							   FROM jsonb_array_elements(meta->'partition-specs') s,
									jsonb_array_elements(s->'fields') WITH ORDINALITY x(pf, o)
							   WHERE (s->>'spec-id')::integer = f.partition_spec_id), '[]'::jsonb),
		'file-size-in-bytes', f.file_size_in_bytes,
		'record-count', f.record_count,
		'column-sizes', skade.rest_value_map(f.columns, 'size'),
		'value-counts', skade.rest_value_map(f.columns, 'value_count'),
		'null-value-counts', skade.rest_value_map(f.columns, 'null_count'),
		'nan-value-counts', skade.rest_value_map(f.columns, 'nan_count'),
		'lower-bounds', skade.rest_value_map(f.columns, 'lower'),
		'upper-bounds', skade.rest_value_map(f.columns, 'upper'),
		'equality-ids', to_jsonb(f.equality_ids),
		'referenced-data-file', f.referenced_data_file,
		'content-offset', f.content_offset,
		'content-size-in-bytes', f.content_size_in_bytes))
$rcf$;

/*
 * plan_table_scan: a REST PlanTableScanRequest {snapshot-id, filter, ...}
 * planned at once by plan_files() (answered "completed": pyiceberg 0.12
 * cannot poll): the data files that may match as file-scan-tasks, each with
 * the delete files that apply to it (indexes into delete-files).
 * Incremental scans (start/end-snapshot-id) are not offered (0A000).
 */
CREATE FUNCTION skade.plan_table_scan(namespace text, name text, request jsonb, catalog text DEFAULT NULL)
	RETURNS jsonb
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $pts$
DECLARE
	req jsonb := coalesce(request, '{}');
	meta jsonb;
	snap bigint;
	result jsonb;
BEGIN
	IF namespace IS NULL OR name IS NULL THEN
		RAISE EXCEPTION 'namespace and name must not be NULL' USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF jsonb_typeof(req) <> 'object' THEN
		RAISE EXCEPTION 'a scan planning request is a JSON object' USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF req ? 'start-snapshot-id' OR req ? 'end-snapshot-id' THEN
		RAISE EXCEPTION 'incremental scan planning is not supported' USING ERRCODE = 'feature_not_supported';
	END IF;
	meta := skade.table_metadata(namespace, name, catalog => catalog)::jsonb;
	IF jsonb_typeof(req->'snapshot-id') IS DISTINCT FROM 'null' AND req ? 'snapshot-id' THEN
		IF jsonb_typeof(req->'snapshot-id') <> 'number' OR (req->>'snapshot-id') !~ '^-?[0-9]{1,19}$' THEN
			RAISE EXCEPTION 'snapshot-id must be an integer, not %', req->'snapshot-id' USING ERRCODE = 'invalid_parameter_value';
		END IF;
		snap := (req->>'snapshot-id')::bigint;
	ELSE
		snap := nullif((meta->>'current-snapshot-id')::bigint, -1);
	END IF;
	IF snap IS NULL THEN
		RETURN jsonb_build_object('status', 'completed', 'plan-id', gen_random_uuid()::text,
								  'file-scan-tasks', '[]'::jsonb, 'delete-files', '[]'::jsonb);
	END IF;
	WITH f AS (SELECT row_number() OVER () AS n, p FROM skade.plan_files(namespace, name,
				   coalesce(req->'filter', 'true'::jsonb), snap, catalog) p),
		 d AS (SELECT row_number() OVER (ORDER BY n) - 1 AS idx, p FROM f WHERE (p).content <> 'data')
	SELECT jsonb_build_object('status', 'completed', 'plan-id', gen_random_uuid()::text,
		'file-scan-tasks', coalesce((SELECT jsonb_agg(jsonb_strip_nulls(jsonb_build_object(
				'data-file', skade.rest_content_file(f.p, meta),
				'delete-file-references', (SELECT jsonb_agg(d.idx ORDER BY d.idx) FROM d
										   WHERE (d.p).file_path = ANY ((f.p).delete_files)))) ORDER BY f.n)
			FROM f WHERE (f.p).content = 'data'), '[]'::jsonb),
		'delete-files', coalesce((SELECT jsonb_agg(skade.rest_content_file(d.p, meta) ORDER BY d.idx) FROM d), '[]'::jsonb))
	INTO result;
	RETURN result;
END
$pts$;

/* ------------------------------------------------------------ AWS SigV4 */

-- The AWS Signature Version 4 signer of skade's S3 client, for tests and
-- debugging: signs exactly the request given (headers as 'name:value'
-- elements; query NULL = none) and reads no server secret
CREATE FUNCTION skade.sigv4_sign(method text, canonical_uri text, query text, headers text[],
								 payload_hash text, region text, service text, amz_date text,
								 access_key text, secret_key text,
								 OUT canonical_request text, OUT string_to_sign text,
								 OUT authorization text)
	RETURNS record AS 'MODULE_PATHNAME', 'skade_sigv4_sign' LANGUAGE C IMMUTABLE
	PARALLEL SAFE;

/* ------------------------------------------------------------------ privileges */

-- PUBLIC gets nothing; readers list and load; writers change.
DO $grants$
DECLARE
	f regprocedure;
BEGIN
	FOR f IN SELECT p.oid::regprocedure FROM pg_proc p
			 WHERE p.pronamespace = 'skade'::regnamespace LOOP
		EXECUTE format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', f);
	END LOOP;
END
$grants$;

GRANT EXECUTE ON FUNCTION
	skade.namespace_exists(text, text),
	skade.list_namespaces(text, text),
	skade.namespace_properties(text, text),
	skade.load_table(text, text, text, text),
	skade.load_table_pointers(text, text, text, text),
	skade.table_metadata(text, text, text, text),
	skade.snapshots(text, text, text),
	skade.refs(text, text, text),
	skade.history(text, text, text),
	skade.manifests(text, text, bigint, text),
	skade.files(text, text, bigint, text),
	skade.plan_files(text, text, jsonb, bigint, text),
	skade.cache_stats(),
	skade.resolve_many(bigint[]),
	skade.resolve_locations(bigint[]),
	skade.load_table_at(text, text, bigint, text, text),
	skade.load_table_as_of(text, text, timestamptz, text, text),
	skade.index_status(),
	skade.table_exists(text, text, text),
	skade.list_tables(text, text),
	skade.sigv4_sign(text, text, text, text[], text, text, text, text, text, text),
	skade.rest_namespace(jsonb),
	skade.rest_content_file(skade.content_file, jsonb),
	skade.rest_value_map(jsonb, text),
	skade.plan_table_scan(text, text, jsonb, text),
	skade.view_metadata(text, text, text),
	skade.list_views(text, text),
	skade.view_exists(text, text, text)
	TO skade_reader;
GRANT EXECUTE ON FUNCTION
	skade.create_namespace(text, jsonb, text),
	skade.drop_namespace(text, text),
	skade.update_namespace_properties(text, jsonb, text[], text),
	skade.register_table(text, text, text, text),
	skade.rename_table(text, text, text, text, text),
	skade.drop_table(text, text, text),
	skade.commit_table(text, text, text, text, text),
	skade.commit_transaction(jsonb, text),
	skade.resolve_commit_log(integer),
	skade.rebuild_index(),
	skade.write_table_metadata(text, jsonb, text, text),
	skade.create_table_commit(text, text, text, text),
	skade.fresh_type(jsonb, text, integer, jsonb),
	skade.create_table(text, text, jsonb, jsonb, jsonb, jsonb, text, integer, text),
	skade.new_table_metadata(text, text, jsonb, jsonb, jsonb, jsonb, text, integer, text),
	skade.path_component(text, text),
	skade.empty_table_metadata(text, text, jsonb, text),
	skade.update_table(text, text, jsonb, jsonb, text),
	skade.update_table_fast(text, text, text, jsonb, jsonb, text),
	skade.add_schema(jsonb, jsonb, integer, integer),
	skade.add_snapshot(jsonb, jsonb, integer),
	skade.set_snapshot_ref(jsonb, jsonb, integer, jsonb, bigint, integer),
	skade.remove_snapshots(jsonb, jsonb, integer, integer),
	skade.upgraded(jsonb, integer),
	skade.add_spec(jsonb, jsonb, integer, integer),
	skade.add_sort_order(jsonb, jsonb, integer, integer),
	skade.expire_snapshots(text, text, timestamptz, integer, boolean, text),
	skade.in_branch_ancestry(jsonb, bigint, text[]),
	skade.prune_commit_log(text, text, bigint, text),
	skade.swap_table(text, text, text, boolean, text),
	skade.rewrite_manifest_files(text, bigint, text),
	skade.rewrite_manifests(text, text, bigint, text),
	skade.delete_at_commit(text[]),
	skade.expire_files(text, text, bigint[], text),
	skade.purge_table(text, text, text),
	skade.write_view_metadata(text, jsonb, text, text),
	skade.apply_view_updates(jsonb, jsonb),
	skade.create_view(text, text, jsonb, text),
	skade.update_view(text, text, jsonb, jsonb, text),
	skade.drop_view(text, text, text),
	skade.rename_view(text, text, text, text, text),
	skade.register_view(text, text, text, text),
	skade.view_pointer(text, text, text, text, text, text),
	skade.json_int(jsonb, text),
	skade.source_type(jsonb, integer),
	skade.bind_error(jsonb, jsonb, boolean)
	TO skade_writer;

/* ------------------------------------------------------------ privileges of skade_user */

-- skade's own tables: members of skade_user read the rows of what they may
-- read (never the grants); everyone else as the table privileges say
ALTER TABLE skade.commit_log ENABLE ROW LEVEL SECURITY;
CREATE POLICY skade_unrestricted ON skade.commit_log FOR SELECT
	USING (NOT pg_catalog.pg_has_role('skade_user', 'USAGE'));
CREATE POLICY skade_db_wide_read ON skade.commit_log FOR SELECT TO skade_reader USING (true);
CREATE POLICY skade_read ON skade.commit_log FOR SELECT TO skade_user
	USING (op NOT IN ('grant', 'revoke')
		   AND skade.may('read', table_namespace, table_name, catalog_name));
ALTER TABLE skade.commit_log_archive ENABLE ROW LEVEL SECURITY;
CREATE POLICY skade_unrestricted ON skade.commit_log_archive FOR SELECT
	USING (NOT pg_catalog.pg_has_role('skade_user', 'USAGE'));
CREATE POLICY skade_db_wide_read ON skade.commit_log_archive FOR SELECT TO skade_reader USING (true);
CREATE POLICY skade_read ON skade.commit_log_archive FOR SELECT TO skade_user
	USING (op NOT IN ('grant', 'revoke')
		   AND skade.may('read', table_namespace, table_name, catalog_name));
ALTER TABLE skade.snapshot_map ENABLE ROW LEVEL SECURITY;
CREATE POLICY skade_unrestricted ON skade.snapshot_map FOR SELECT
	USING (NOT pg_catalog.pg_has_role('skade_user', 'USAGE'));
CREATE POLICY skade_db_wide_read ON skade.snapshot_map FOR SELECT TO skade_reader USING (true);
CREATE POLICY skade_read ON skade.snapshot_map FOR SELECT TO skade_user
	USING (skade.may('read', table_namespace, table_name, catalog_name));
GRANT SELECT ON skade.commit_log, skade.commit_log_archive, skade.snapshot_map TO skade_user;

REVOKE ALL ON FUNCTION skade.may(text, text, text, text), skade.may_see_namespace(text, text),
	skade.check_write(text, text, text), skade.grant(text, name, text, text, text),
	skade.revoke(text, name, text, text, text), skade.grants_changed() FROM PUBLIC;
-- the policies call these for whoever reads the tables; they tell a role only about itself
GRANT EXECUTE ON FUNCTION skade.may(text, text, text, text), skade.may_see_namespace(text, text),
	skade.check_write(text, text, text) TO PUBLIC;

-- skade_user runs what writers run (each object as its grants allow), except what
-- acts on files or the whole catalog by location rather than by table: the index
-- rebuild, deleting files at commit, rewriting manifests (and so purge_table and
-- rewrite_manifests, and expire_snapshots when it deletes files, stay writers')
DO $user_functions$
DECLARE
	f regprocedure;
BEGIN
	FOR f IN SELECT p.oid::regprocedure FROM pg_proc p
			 WHERE p.pronamespace = 'skade'::regnamespace
			   AND has_function_privilege('skade_writer', p.oid, 'EXECUTE')
			   AND p.oid NOT IN ('skade.rebuild_index()'::regprocedure,
								 'skade.delete_at_commit(text[])'::regprocedure,
								 'skade.rewrite_manifest_files(text, bigint, text)'::regprocedure)
			 ORDER BY p.oid LOOP
		EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO skade_user', f);
	END LOOP;
END
$user_functions$;
