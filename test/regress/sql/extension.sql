-- The extension's objects, and the JDBC tables that are the catalog.
\pset null '(null)'

SELECT e.extname, e.extversion, e.extrelocatable, n.nspname AS schema
FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
WHERE e.extname = 'skade';

-- members of the extension: the catalog tables are NOT among them
-- (PostgreSQL 17 and later also record a member table's row type and a
-- member type's array type as members: those come with their table or type,
-- and are left out here)
SELECT pg_describe_object(classid, objid, objsubid) AS member
FROM pg_depend
WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
  AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'skade')
  AND NOT (classid = 'pg_type'::regclass AND EXISTS (
        SELECT FROM pg_type t
        WHERE t.oid = objid
          AND (EXISTS (SELECT FROM pg_type e WHERE e.typarray = t.oid)
               OR EXISTS (SELECT FROM pg_class c WHERE c.oid = t.typrelid AND c.relkind <> 'c'))))
ORDER BY 1;

-- exactly the clients' columns (JDBC schema V1), 'TABLE' as default type
SELECT table_name, column_name, data_type, character_maximum_length AS len,
       is_nullable, column_default
FROM information_schema.columns
WHERE table_schema = 'public'
  AND table_name IN ('iceberg_tables', 'iceberg_namespace_properties')
ORDER BY table_name, ordinal_position;

-- only one relation of each name in the whole database (Java's getTables
-- searches every schema), and it is a plain heap table
SELECT n.nspname, c.relname, c.relkind
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relname IN ('iceberg_tables', 'iceberg_namespace_properties')
ORDER BY 2;

SELECT indexname, indexdef FROM pg_indexes
WHERE schemaname = 'public'
  AND tablename IN ('iceberg_tables', 'iceberg_namespace_properties')
ORDER BY 1;

SELECT tgname, tgenabled, pg_get_triggerdef(oid) AS def
FROM pg_trigger WHERE tgrelid = 'public.iceberg_tables'::regclass ORDER BY 1;

-- the prefix indexes serve the clients' namespace probes (LIKE 'x.%') and
-- skade's own range form, under any collation: shown in a database whose
-- default collation is ICU en-US, where the primary key cannot serve LIKE
-- (a server built without ICU, as test/pg_majors.sh's are, gets libc's
-- C.UTF-8 instead: not C either, so the primary key cannot serve LIKE there
-- either; psql echoes both branches, so the output is the same)
\set regress_db :DBNAME
SELECT EXISTS (SELECT FROM pg_collation WHERE collname LIKE '%-x-icu') AS have_icu \gset
\if :have_icu
CREATE DATABASE skade_icu TEMPLATE template0 ENCODING 'UTF8'
  LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C';
\else
CREATE DATABASE skade_icu TEMPLATE template0 ENCODING 'UTF8'
  LOCALE_PROVIDER libc LOCALE 'C.UTF-8';
\endif
\c skade_icu
SET client_min_messages = warning;
CREATE EXTENSION skade;
RESET client_min_messages;
INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, metadata_location)
SELECT 'c' || (i % 4), 'ns' || (i % 500) || '.sub' || (i % 7), 't' || i, 'file:///x/' || i
FROM generate_series(1, 20000) i;
INSERT INTO iceberg_namespace_properties
SELECT DISTINCT catalog_name, table_namespace, 'exists', 'true' FROM iceberg_tables;
ANALYZE iceberg_tables, iceberg_namespace_properties;
EXPLAIN (COSTS OFF)
SELECT * FROM iceberg_tables
WHERE catalog_name = 'c1' AND (table_namespace = 'ns5' OR table_namespace LIKE 'ns5.%' ESCAPE '!') LIMIT 1;
EXPLAIN (COSTS OFF)
SELECT * FROM iceberg_namespace_properties
WHERE catalog_name = 'c1' AND (namespace = 'ns5' OR namespace LIKE 'ns5.%' ESCAPE '!') LIMIT 1;
SELECT skade.namespace_exists('ns5', 'c1'), skade.namespace_exists('ns5', 'c9'),
       skade.namespace_exists('ns5.sub5', 'c1'), skade.namespace_exists('ns5.sub', 'c1');
SELECT count(*) FROM skade.list_namespaces(NULL, 'c1');
SELECT * FROM skade.list_namespaces('ns5', 'c1');
\c :regress_db
DROP DATABASE skade_icu;

-- settings
SHOW skade.catalog;
SHOW skade.durability;
SET skade.durability = 'sometimes';
SET skade.no_such_setting = 1;
SET skade.catalog = '';
SELECT skade.namespace_exists('a');
SET skade.catalog = 'other';
SELECT skade.namespace_exists('a');
RESET skade.catalog;

-- DROP EXTENSION never takes the catalog data with it
SELECT skade.create_namespace('keep');
SELECT skade.register_table('keep', 't', 'file:///wh/keep/t/metadata/00000-a.metadata.json') > 0;
DROP EXTENSION skade;
DROP EXTENSION skade CASCADE;
SELECT catalog_name, table_namespace, table_name, metadata_location, iceberg_type
FROM iceberg_tables;
SELECT count(*) AS triggers FROM pg_trigger
WHERE tgrelid = 'public.iceberg_tables'::regclass;

-- re-creating finds the existing catalog and leaves it alone until adopted
CREATE EXTENSION skade;
SELECT skade.table_exists('keep', 't');
SELECT skade.adopt_jdbc_catalog() AS adopted;
SELECT skade.table_exists('keep', 't');
SELECT op, source, table_namespace, table_name, metadata_location
FROM skade.commit_log ORDER BY seq;
-- adopting twice changes nothing
SELECT skade.adopt_jdbc_catalog() AS adopted;
SELECT count(*) FROM skade.commit_log;

-- a dropped catalog table is reported, and adopt creates it again
DROP TABLE iceberg_tables;
SELECT skade.table_exists('keep', 't');
SELECT skade.adopt_jdbc_catalog() AS adopted;
SELECT skade.table_exists('keep', 't');
SELECT skade.drop_namespace('keep');
SELECT count(*) AS rows_left FROM iceberg_namespace_properties;

-- skade returns the files' UTF-8 strings as text: only a UTF8 database takes it
SELECT current_database() AS regress_db \gset
CREATE DATABASE skade_latin1 TEMPLATE template0 ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C';
\c skade_latin1
-- (no CONTEXT: 18 adds the extension script's file and line to it)
\set SHOW_CONTEXT never
CREATE EXTENSION skade;
\set SHOW_CONTEXT errors
SELECT count(*) AS skade_schemas FROM pg_namespace WHERE nspname = 'skade';
\c :regress_db
DROP DATABASE skade_latin1;
