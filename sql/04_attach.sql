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

