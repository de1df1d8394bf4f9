-- The statements stock JDBC-catalog clients send (copied from the contract),
-- with their parameters typed varchar as pgjdbc sends them.  Each must behave
-- exactly as on a plain JDBC catalog, affected-row counts included.
\pset null '(null)'
SELECT coalesce(max(seq), 0) AS start_seq FROM skade.commit_log \gset

-- Java createNamespace: one multi-row INSERT of the properties plus exists=true
PREPARE ins_props(varchar, varchar, varchar, varchar, varchar, varchar, varchar, varchar) AS
INSERT INTO iceberg_namespace_properties (catalog_name, namespace, property_key, property_value) VALUES ($1,$2,$3,$4), ($5,$6,$7,$8);
EXECUTE ins_props('jdbc', 'ns_a', 'exists', 'true', 'jdbc', 'ns_a', 'owner', 'ana');
\echo ROW_COUNT :ROW_COUNT
EXECUTE ins_props('jdbc', 'ns_a', 'exists', 'true', 'jdbc', 'ns_a', 'x', 'y');
\echo SQLSTATE :LAST_ERROR_SQLSTATE

-- Java namespaceExists (escaped LIKE with ESCAPE '!')
PREPARE get_ns(varchar, varchar, varchar) AS
SELECT table_namespace FROM iceberg_tables WHERE catalog_name = $1 AND (table_namespace = $2 OR table_namespace LIKE $3 ESCAPE '!') LIMIT 1;
PREPARE get_ns_props(varchar, varchar, varchar) AS
SELECT namespace FROM iceberg_namespace_properties WHERE catalog_name = $1 AND (namespace = $2 OR namespace LIKE $3 ESCAPE '!') LIMIT 1;
EXECUTE get_ns_props('jdbc', 'ns_a', 'ns!_a.%');
EXECUTE get_ns('jdbc', 'ns_a', 'ns!_a.%');
EXECUTE get_ns_props('jdbc', 'nsXa', 'nsXa.%');
-- skade agrees with the client's view
SELECT skade.namespace_exists('ns_a', 'jdbc'), skade.namespace_exists('nsXa', 'jdbc');

-- Java setProperties: UPDATE ... CASE for existing keys, exactly n rows
PREPARE upd_props(varchar, varchar, varchar, varchar, varchar, varchar, varchar, varchar) AS
UPDATE iceberg_namespace_properties SET property_value = CASE WHEN property_key = $1 THEN $2 WHEN property_key = $3 THEN $4 END WHERE catalog_name = $5 AND namespace = $6 AND property_key IN ($7,$8);
EXECUTE ins_props('jdbc', 'ns_a', 'tier', 'gold', 'jdbc', 'ns_a', 'comment', 'c');
EXECUTE upd_props('owner', 'bo', 'tier', 'silver', 'jdbc', 'ns_a', 'owner', 'tier');
\echo ROW_COUNT :ROW_COUNT
SELECT skade.namespace_properties('ns_a', 'jdbc');
PREPARE del_props(varchar, varchar, varchar, varchar) AS
DELETE FROM iceberg_namespace_properties WHERE catalog_name = $1 AND namespace = $2 AND property_key IN ($3,$4);
EXECUTE del_props('jdbc', 'ns_a', 'comment', 'nope');
\echo ROW_COUNT :ROW_COUNT

-- V1 create table; a duplicate is a real 23505
PREPARE create_tbl(varchar, varchar, varchar, varchar, varchar) AS
INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, metadata_location, previous_metadata_location, iceberg_type)  VALUES ($1,$2,$3,$4,null,$5);
EXECUTE create_tbl('jdbc', 'ns_a', 'orders', 'file:/wh/ns_a/orders/metadata/00000-1.metadata.json', 'TABLE');
\echo ROW_COUNT :ROW_COUNT
EXECUTE create_tbl('jdbc', 'ns_a', 'orders', 'file:/wh/ns_a/orders/metadata/00000-2.metadata.json', 'TABLE');
\echo SQLSTATE :LAST_ERROR_SQLSTATE
-- V0 create (old clients): no iceberg_type, the default makes it a TABLE
PREPARE create_tbl_v0(varchar, varchar, varchar, varchar) AS
INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, metadata_location, previous_metadata_location)  VALUES ($1,$2,$3,$4,null);
EXECUTE create_tbl_v0('jdbc', 'ns_a', 'old', 'file:/wh/ns_a/old/metadata/00000-1.metadata.json');
-- a view
EXECUTE create_tbl('jdbc', 'ns_a', 'v', 'file:/wh/ns_a/v/metadata/00000-1.metadata.json', 'VIEW');

-- V1 load
PREPARE get_tbl(varchar, varchar, varchar) AS
SELECT * FROM iceberg_tables WHERE catalog_name = $1 AND table_namespace = $2 AND table_name = $3 AND (iceberg_type = 'TABLE' OR iceberg_type IS NULL);
EXECUTE get_tbl('jdbc', 'ns_a', 'orders');
EXECUTE get_tbl('jdbc', 'ns_a', 'v');
PREPARE list_tbl(varchar, varchar) AS
SELECT * FROM iceberg_tables WHERE catalog_name = $1 AND table_namespace = $2 AND (iceberg_type = 'TABLE' OR iceberg_type IS NULL);
EXECUTE list_tbl('jdbc', 'ns_a');
SELECT * FROM skade.list_tables('ns_a', 'jdbc');

-- V1 CAS commit: exactly 1 row when the base matches, 0 when stale
PREPARE commit_tbl(varchar, varchar, varchar, varchar, varchar, varchar) AS
UPDATE iceberg_tables SET metadata_location = $1 , previous_metadata_location = $2 WHERE catalog_name = $3 AND table_namespace = $4 AND table_name = $5 AND metadata_location = $6 AND (iceberg_type = 'TABLE' OR iceberg_type IS NULL);
EXECUTE commit_tbl('file:/wh/ns_a/orders/metadata/00001-1.metadata.json', 'file:/wh/ns_a/orders/metadata/00000-1.metadata.json', 'jdbc', 'ns_a', 'orders', 'file:/wh/ns_a/orders/metadata/00000-1.metadata.json');
\echo ROW_COUNT :ROW_COUNT
EXECUTE commit_tbl('file:/wh/ns_a/orders/metadata/00001-2.metadata.json', 'file:/wh/ns_a/orders/metadata/00000-1.metadata.json', 'jdbc', 'ns_a', 'orders', 'file:/wh/ns_a/orders/metadata/00000-1.metadata.json');
\echo ROW_COUNT :ROW_COUNT
-- the V1 table CAS never touches a view of the same name
EXECUTE commit_tbl('file:/x', 'file:/wh/ns_a/v/metadata/00000-1.metadata.json', 'jdbc', 'ns_a', 'v', 'file:/wh/ns_a/v/metadata/00000-1.metadata.json');
\echo ROW_COUNT :ROW_COUNT
-- a row with NULL iceberg_type commits too (old clients' rows)
UPDATE iceberg_tables SET iceberg_type = NULL WHERE table_name = 'old';
EXECUTE commit_tbl('file:/wh/ns_a/old/metadata/00001-1.metadata.json', 'file:/wh/ns_a/old/metadata/00000-1.metadata.json', 'jdbc', 'ns_a', 'old', 'file:/wh/ns_a/old/metadata/00000-1.metadata.json');
\echo ROW_COUNT :ROW_COUNT
-- view CAS
PREPARE commit_view(varchar, varchar, varchar, varchar, varchar, varchar) AS
UPDATE iceberg_tables SET metadata_location = $1 , previous_metadata_location = $2 WHERE catalog_name = $3 AND table_namespace = $4 AND table_name = $5 AND metadata_location = $6 AND iceberg_type = 'VIEW';
EXECUTE commit_view('file:/wh/ns_a/v/metadata/00001-1.metadata.json', 'file:/wh/ns_a/v/metadata/00000-1.metadata.json', 'jdbc', 'ns_a', 'v', 'file:/wh/ns_a/v/metadata/00000-1.metadata.json');
\echo ROW_COUNT :ROW_COUNT

-- pyiceberg's commit (literal parameters, no type filter)
UPDATE iceberg_tables SET metadata_location='file:/wh/ns_a/orders/metadata/00002-1.metadata.json', previous_metadata_location='file:/wh/ns_a/orders/metadata/00001-1.metadata.json' WHERE iceberg_tables.catalog_name = 'jdbc' AND iceberg_tables.table_namespace = 'ns_a' AND iceberg_tables.table_name = 'orders' AND iceberg_tables.metadata_location = 'file:/wh/ns_a/orders/metadata/00001-1.metadata.json';
\echo ROW_COUNT :ROW_COUNT
SELECT metadata_location FROM skade.load_table('ns_a', 'orders', catalog => 'jdbc', snapshots => 'none');

-- rename: 1 row; onto an existing name: 23505
PREPARE rename_tbl(varchar, varchar, varchar, varchar, varchar) AS
UPDATE iceberg_tables SET table_namespace = $1, table_name = $2 WHERE catalog_name = $3 AND table_namespace = $4 AND table_name = $5 AND (iceberg_type = 'TABLE' OR iceberg_type IS NULL);
EXECUTE rename_tbl('ns_a', 'orders2', 'jdbc', 'ns_a', 'orders');
\echo ROW_COUNT :ROW_COUNT
EXECUTE rename_tbl('ns_a', 'old', 'jdbc', 'ns_a', 'orders2');
\echo SQLSTATE :LAST_ERROR_SQLSTATE
EXECUTE rename_tbl('ns_a', 'x', 'jdbc', 'ns_a', 'no_such');
\echo ROW_COUNT :ROW_COUNT

-- listNamespaces: unescaped LIKE without ESCAPE, the client filters
PREPARE list_ns(varchar, varchar) AS
SELECT DISTINCT table_namespace FROM iceberg_tables WHERE catalog_name = $1 AND table_namespace LIKE $2;
EXECUTE list_ns('jdbc', 'ns%');
PREPARE list_all_ns(varchar) AS
SELECT DISTINCT namespace FROM iceberg_namespace_properties WHERE catalog_name = $1;
EXECUTE list_all_ns('jdbc');

-- drop: 1 row, then 0
PREPARE drop_tbl(varchar, varchar, varchar) AS
DELETE FROM iceberg_tables WHERE catalog_name = $1 AND table_namespace  = $2 AND table_name = $3 AND (iceberg_type = 'TABLE' OR iceberg_type IS NULL);
EXECUTE drop_tbl('jdbc', 'ns_a', 'orders2');
\echo ROW_COUNT :ROW_COUNT
EXECUTE drop_tbl('jdbc', 'ns_a', 'orders2');
\echo ROW_COUNT :ROW_COUNT
EXECUTE drop_tbl('jdbc', 'ns_a', 'old');
PREPARE drop_view(varchar, varchar, varchar) AS
DELETE FROM iceberg_tables WHERE catalog_name = $1 AND table_namespace  = $2 AND table_name = $3 AND iceberg_type = 'VIEW';
EXECUTE drop_view('jdbc', 'ns_a', 'v');
\echo ROW_COUNT :ROW_COUNT
PREPARE drop_ns(varchar, varchar) AS
DELETE FROM iceberg_namespace_properties WHERE catalog_name = $1 AND namespace = $2;
EXECUTE drop_ns('jdbc', 'ns_a');
\echo ROW_COUNT :ROW_COUNT

-- every pointer change above is in the log, in order
SELECT op, source, table_name, iceberg_type, metadata_location, previous_metadata_location,
       prev_name
FROM skade.commit_log WHERE seq > :start_seq ORDER BY seq;
DEALLOCATE ALL;
