/* skade--1.0.sql */

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

CREATE SCHEMA skade;

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
	snapshot_id		bigint
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
	RETURNS boolean AS 'MODULE_PATHNAME', 'skade_namespace_exists' LANGUAGE C STABLE;
CREATE FUNCTION skade.list_namespaces(parent text DEFAULT NULL, catalog text DEFAULT NULL)
	RETURNS SETOF text AS 'MODULE_PATHNAME', 'skade_list_namespaces' LANGUAGE C STABLE;
CREATE FUNCTION skade.namespace_properties(namespace text, catalog text DEFAULT NULL)
	RETURNS jsonb AS 'MODULE_PATHNAME', 'skade_namespace_properties' LANGUAGE C STABLE;
CREATE FUNCTION skade.update_namespace_properties(namespace text, updates jsonb DEFAULT '{}',
												  removals text[] DEFAULT '{}',
												  catalog text DEFAULT NULL,
												  OUT updated text[], OUT removed text[],
												  OUT missing text[])
	RETURNS record AS 'MODULE_PATHNAME', 'skade_update_namespace_properties' LANGUAGE C;

CREATE FUNCTION skade.register_table(namespace text, name text, metadata_location text,
									 catalog text DEFAULT NULL)
	RETURNS bigint AS 'MODULE_PATHNAME', 'skade_register_table' LANGUAGE C;
CREATE FUNCTION skade.load_table(namespace text, name text, catalog text DEFAULT NULL,
								 snapshots text DEFAULT 'all',
								 OUT metadata_location text,
								 OUT previous_metadata_location text,
								 OUT metadata json)
	RETURNS record AS 'MODULE_PATHNAME', 'skade_load_table' LANGUAGE C STABLE;
CREATE FUNCTION skade.table_metadata(namespace text, name text, catalog text DEFAULT NULL,
									 snapshots text DEFAULT 'all')
	RETURNS json AS 'MODULE_PATHNAME', 'skade_table_metadata' LANGUAGE C STABLE;
CREATE FUNCTION skade.table_exists(namespace text, name text, catalog text DEFAULT NULL)
	RETURNS boolean AS 'MODULE_PATHNAME', 'skade_table_exists' LANGUAGE C STABLE;
CREATE FUNCTION skade.list_tables(namespace text, catalog text DEFAULT NULL)
	RETURNS SETOF text AS 'MODULE_PATHNAME', 'skade_list_tables' LANGUAGE C STABLE;
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
	AS 'MODULE_PATHNAME', 'skade_commit_transaction' LANGUAGE C;

/* ------------------------------------------------------------ table metadata */

CREATE FUNCTION skade.snapshots(namespace text, name text, catalog text DEFAULT NULL)
	RETURNS TABLE (snapshot_id bigint, parent_id bigint, sequence_number bigint,
				   committed_at timestamptz, operation text, manifest_list text,
				   summary jsonb, schema_id integer, is_current boolean)
	AS 'MODULE_PATHNAME', 'skade_snapshots' LANGUAGE C STABLE;
CREATE FUNCTION skade.refs(namespace text, name text, catalog text DEFAULT NULL)
	RETURNS TABLE (name text, type text, snapshot_id bigint, max_ref_age_ms bigint,
				   max_snapshot_age_ms bigint, min_snapshots_to_keep integer)
	AS 'MODULE_PATHNAME', 'skade_refs' LANGUAGE C STABLE;
CREATE FUNCTION skade.history(namespace text, name text, catalog text DEFAULT NULL)
	RETURNS TABLE (made_current_at timestamptz, snapshot_id bigint, parent_id bigint,
				   is_current_ancestor boolean)
	AS 'MODULE_PATHNAME', 'skade_history' LANGUAGE C STABLE;

CREATE FUNCTION skade.cache_stats(OUT hits bigint, OUT misses bigint,
								  OUT coalesced_waits bigint, OUT evictions bigint,
								  OUT entries bigint, OUT bytes bigint, OUT capacity bigint,
								  OUT pointer_hits bigint, OUT pointer_misses bigint,
								  OUT pointer_entries bigint,
								  OUT manifest_hits bigint, OUT manifest_misses bigint,
								  OUT manifest_coalesced_waits bigint, OUT manifest_evictions bigint,
								  OUT manifest_entries bigint, OUT manifest_bytes bigint,
								  OUT manifest_capacity bigint)
	RETURNS record AS 'MODULE_PATHNAME', 'skade_cache_stats' LANGUAGE C VOLATILE;
CREATE FUNCTION skade.cache_reset() RETURNS void
	AS 'MODULE_PATHNAME', 'skade_cache_reset' LANGUAGE C VOLATILE;

-- fills snapshot_id of logged changes whose metadata was unreadable at commit
CREATE FUNCTION skade.resolve_commit_log(max_rows integer DEFAULT NULL) RETURNS bigint
	AS 'MODULE_PATHNAME', 'skade_resolve_commit_log' LANGUAGE C VOLATILE
	SECURITY DEFINER SET search_path = pg_catalog, pg_temp;

/* ----------------------------------------------------------- time travel */

CREATE FUNCTION skade.resolve_many(snapshot_ids bigint[])
	RETURNS TABLE (snapshot_id bigint, catalog text, namespace text, name text,
				   metadata_location text)
	AS 'MODULE_PATHNAME', 'skade_resolve_many' LANGUAGE C STABLE;
CREATE FUNCTION skade.load_table_at(namespace text, name text, snapshot_id bigint,
									catalog text DEFAULT NULL, snapshots text DEFAULT 'all',
									OUT snapshot_id bigint, OUT metadata_location text,
									OUT metadata json)
	RETURNS record AS 'MODULE_PATHNAME', 'skade_load_table_at' LANGUAGE C STABLE;
CREATE FUNCTION skade.load_table_as_of(namespace text, name text, ts timestamptz,
									   catalog text DEFAULT NULL, snapshots text DEFAULT 'all',
									   OUT snapshot_id bigint, OUT made_current_at timestamptz,
									   OUT metadata_location text, OUT metadata json)
	RETURNS record AS 'MODULE_PATHNAME', 'skade_load_table_as_of' LANGUAGE C STABLE;
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
	RETURNS record AS 'MODULE_PATHNAME', 'skade_index_status' LANGUAGE C VOLATILE;
-- tree-routed vs heap-only answers on the same snapshot (property tests)
CREATE FUNCTION skade.index_check(snapshot_ids bigint[]) RETURNS bigint
	AS 'MODULE_PATHNAME', 'skade_index_check' LANGUAGE C STABLE;

/* -------------------------------------------------------------- STree64 */

CREATE FUNCTION skade.stree64_selftest()
	RETURNS TABLE (n bigint, duplicates boolean, queries bigint, scalar_mismatches bigint,
				   avx2_mismatches bigint, batch_mismatches bigint, implementation text)
	AS 'MODULE_PATHNAME', 'skade_stree64_selftest' LANGUAGE C VOLATILE;
CREATE FUNCTION skade.stree64_bench(n bigint, queries bigint)
	RETURNS TABLE (method text, ns_per_lookup double precision)
	AS 'MODULE_PATHNAME', 'skade_stree64_bench' LANGUAGE C VOLATILE;

-- The manifest list of a snapshot (default: the current one), read from its Avro file
CREATE FUNCTION skade.manifests(namespace text, name text, snapshot_id bigint DEFAULT NULL,
								catalog text DEFAULT NULL)
	RETURNS TABLE (path text, length bigint, partition_spec_id integer, content text,
				   sequence_number bigint, min_sequence_number bigint,
				   added_snapshot_id bigint, added_files_count integer,
				   existing_files_count integer, deleted_files_count integer,
				   added_rows_count bigint, existing_rows_count bigint,
				   deleted_rows_count bigint, partitions jsonb)
	AS 'MODULE_PATHNAME', 'skade_manifests' LANGUAGE C STABLE;
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
	AS 'MODULE_PATHNAME', 'skade_files' LANGUAGE C STABLE;
-- The files of a snapshot that may hold rows matching filter (Iceberg REST
-- expression JSON), pruned by partition and column statistics, each with the
-- delete files that apply to it (delete_files), then those delete files
CREATE FUNCTION skade.plan_files(namespace text, name text, filter jsonb DEFAULT 'true',
								 snapshot_id bigint DEFAULT NULL, catalog text DEFAULT NULL)
	RETURNS SETOF skade.content_file
	AS 'MODULE_PATHNAME', 'skade_plan_files' LANGUAGE C STABLE;

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
	skade.table_metadata(text, text, text, text),
	skade.snapshots(text, text, text),
	skade.refs(text, text, text),
	skade.history(text, text, text),
	skade.manifests(text, text, bigint, text),
	skade.files(text, text, bigint, text),
	skade.plan_files(text, text, jsonb, bigint, text),
	skade.cache_stats(),
	skade.resolve_many(bigint[]),
	skade.load_table_at(text, text, bigint, text, text),
	skade.load_table_as_of(text, text, timestamptz, text, text),
	skade.index_status(),
	skade.table_exists(text, text, text),
	skade.list_tables(text, text)
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
	skade.rebuild_index()
	TO skade_writer;

