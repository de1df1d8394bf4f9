/* skade--1.8--1.9.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION skade UPDATE TO '1.9'" to load this file. \quit

/*
 * 1.9: privileges per catalog, namespace and table or view (skade.grants,
 * skade.grant/revoke, the role skade_user, row-level security on the
 * catalog tables), and grants and revokes in the commit log (its new
 * column detail).
 */
ALTER TABLE skade.commit_log ADD COLUMN detail jsonb;
ALTER TABLE skade.commit_log_archive ADD COLUMN detail jsonb;

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

-- attach() now attaches the policies too
CREATE OR REPLACE FUNCTION skade.attach() RETURNS bigint
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

DO $attached$
BEGIN
	IF EXISTS (SELECT 1 FROM pg_trigger
			   WHERE tgrelid = to_regclass('public.iceberg_tables')
				 AND tgname = 'skade_log_pointer_change') THEN
		PERFORM skade.attach_policies();
	END IF;
	-- the privileges granted on the JDBC tables by this and earlier updates were recorded as
	-- the extension's initial privileges (the tables are not members: CREATE EXTENSION
	-- releases them), so pg_dump left them out and a restored catalog lost them
	DELETE FROM pg_catalog.pg_init_privs
	 WHERE classoid = 'pg_catalog.pg_class'::regclass
	   AND objoid IN (to_regclass('public.iceberg_tables'),
					  to_regclass('public.iceberg_namespace_properties'));
END
$attached$;

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
