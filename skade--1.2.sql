/* skade--1.2.sql */

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

CREATE FUNCTION skade.register_table(namespace text, name text, metadata_location text,
									 catalog text DEFAULT NULL)
	RETURNS bigint AS 'MODULE_PATHNAME', 'skade_register_table' LANGUAGE C;
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
CREATE FUNCTION skade.write_table_metadata(location text, metadata jsonb) RETURNS text
	AS 'MODULE_PATHNAME', 'skade_write_table_metadata' LANGUAGE C;
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
 * create_table: a new Iceberg table, as a REST catalog's CreateTableRequest
 * makes it (Java's TableMetadata.newTableMetadata): fresh column ids from 1,
 * partition field ids from 1000, sort order 1 (0 when unsorted), schema,
 * spec and order ids 0; "format-version" among the properties sets the
 * format; reserved properties are not kept and Parquet defaults to zstd, as
 * Java persists them.  The location is the argument, else the
 * namespace's location (its property, else skade.warehouse/<levels>)
 * followed by /<name>.  Writes <location>/metadata/00000-<uuid>.metadata.json
 * (.gz.metadata.json with write.metadata.compression-codec = gzip; the
 * directory from write.metadata.path) under skade.write_roots, then adds the
 * pointer through the same INSERT the JDBC clients run (logged "create").
 * Returns the metadata location.
 */
CREATE FUNCTION skade.create_table(namespace text, name text, schema jsonb,
								   partition_spec jsonb DEFAULT NULL, sort_order jsonb DEFAULT NULL,
								   properties jsonb DEFAULT '{}', location text DEFAULT NULL,
								   format_version integer DEFAULT 2, catalog text DEFAULT NULL)
	RETURNS text
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
	dir text;
	file text;
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
	IF EXISTS (SELECT 1 FROM public.iceberg_tables t
			   WHERE t.catalog_name OPERATOR(pg_catalog.=) coalesce(catalog, current_setting('skade.catalog'))
				 AND t.table_namespace OPERATOR(pg_catalog.=) namespace
				 AND t.table_name OPERATOR(pg_catalog.=) name) THEN
		RAISE EXCEPTION 'table or view "%.%" already exists', namespace, name USING ERRCODE = 'unique_violation';
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
		loc := rtrim(loc, '/') OPERATOR(pg_catalog.||) '/' OPERATOR(pg_catalog.||) name;
	END IF;
	loc := rtrim(loc, '/');
	dir := coalesce(rtrim(props->>'write.metadata.path', '/'), loc OPERATOR(pg_catalog.||) '/metadata');
	file := dir OPERATOR(pg_catalog.||) '/00000-' OPERATOR(pg_catalog.||) gen_random_uuid()::text
		OPERATOR(pg_catalog.||) CASE WHEN lower(props->>'write.metadata.compression-codec') OPERATOR(pg_catalog.=) 'gzip'
								THEN '.gz.metadata.json' ELSE '.metadata.json' END;

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

	PERFORM skade.write_table_metadata(file, meta);
	PERFORM skade.create_table_commit(namespace, name, file, catalog);
	RETURN file;
END
$create$;

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
	skade.rebuild_index(),
	skade.write_table_metadata(text, jsonb),
	skade.create_table_commit(text, text, text, text),
	skade.fresh_type(jsonb, text, integer, jsonb),
	skade.create_table(text, text, jsonb, jsonb, jsonb, jsonb, text, integer, text)
	TO skade_writer;

