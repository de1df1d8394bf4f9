-- Tables: register, load, exists, list, rename, drop.
\pset null '(null)'
SELECT skade.create_namespace('db');
SELECT skade.create_namespace('db2');

SELECT skade.register_table('db', 'events', 'file:///wh/db/events/metadata/00001-a.metadata.json') > 0 AS registered;
SELECT * FROM skade.load_table('db', 'events', snapshots => 'none');
SELECT skade.table_exists('db', 'events'), skade.table_exists('db', 'nope'),
       skade.table_exists('nope', 'events');

-- what a JDBC client sees
SELECT catalog_name, table_namespace, table_name, metadata_location,
       previous_metadata_location, iceberg_type
FROM iceberg_tables ORDER BY 2, 3;

-- duplicates, missing namespace
SELECT skade.register_table('db', 'events', 'file:///other.metadata.json');
SELECT skade.register_table('missing', 'events', 'file:///x.metadata.json');

-- views (written by JDBC clients) share the name space of tables
INSERT INTO iceberg_tables VALUES ('skade', 'db', 'v', 'file:///wh/db/v/v1.metadata.json', NULL, 'VIEW');
SELECT skade.register_table('db', 'v', 'file:///x.metadata.json');
SELECT skade.load_table('db', 'v', snapshots => 'none');
SELECT skade.table_exists('db', 'v');
SELECT skade.commit_table('db', 'v', 'file:///wh/db/v/v1.metadata.json', 'file:///v2');
SELECT skade.drop_table('db', 'v');

SELECT skade.register_table('db', 'a_table', 'file:///wh/db/a/v1.metadata.json') > 0;
SELECT skade.register_table('db', 'Z', 'file:///wh/db/z/v1.metadata.json') > 0;
SELECT * FROM skade.list_tables('db');
SELECT * FROM skade.list_tables('db2');
SELECT * FROM skade.list_tables('missing');

-- load errors name the precise reason
SELECT skade.load_table('db', 'missing', snapshots => 'none');
SELECT skade.load_table('missing', 'events', snapshots => 'none');
SELECT skade.load_table('db', 'events', catalog => 'no_such_catalog', snapshots => 'none');

-- rename
SELECT skade.rename_table('db', 'events', 'db2', 'events_v2') > 0 AS renamed;
SELECT * FROM skade.load_table('db2', 'events_v2', snapshots => 'none');
SELECT skade.table_exists('db', 'events');
SELECT skade.rename_table('db', 'events', 'db2', 'x');
SELECT skade.rename_table('db2', 'events_v2', 'db', 'a_table');
SELECT skade.rename_table('db2', 'events_v2', 'db', 'v');
SELECT skade.rename_table('db2', 'events_v2', 'missing', 'x');
SELECT * FROM skade.load_table('db2', 'events_v2', snapshots => 'none');

-- drop returns the last metadata location
SELECT skade.drop_table('db2', 'events_v2');
SELECT skade.drop_table('db2', 'events_v2');
SELECT skade.table_exists('db2', 'events_v2');

-- a table whose location is NULL (a JDBC row) drops too
INSERT INTO iceberg_tables VALUES ('skade', 'db', 'nullloc', NULL, NULL, NULL);
SELECT * FROM skade.load_table('db', 'nullloc', snapshots => 'none');
SELECT skade.drop_table('db', 'nullloc');
SELECT skade.table_exists('db', 'nullloc');

DELETE FROM iceberg_tables WHERE table_name = 'v';
SELECT skade.drop_table('db', 'a_table') IS NOT NULL, skade.drop_table('db', 'Z') IS NOT NULL;
SELECT skade.drop_namespace('db'), skade.drop_namespace('db2');
