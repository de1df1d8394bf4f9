-- Privileges: readers list and load, writers commit, PUBLIC gets nothing.
SELECT skade.create_namespace('priv');
SELECT skade.register_table('priv', 't', 'file:///p/v0') > 0;

CREATE ROLE skade_test_reader LOGIN IN ROLE skade_reader;
CREATE ROLE skade_test_writer LOGIN IN ROLE skade_writer;
CREATE ROLE skade_test_nobody LOGIN;

-- reader
SET ROLE skade_test_reader;
SELECT * FROM skade.list_namespaces();
SELECT * FROM skade.list_tables('priv');
SELECT metadata_location FROM skade.load_table('priv', 't', snapshots => 'none');
SELECT skade.table_exists('priv', 't'), skade.namespace_exists('priv');
SELECT skade.namespace_properties('priv');
SELECT count(*) > 0 AS can_read_log FROM skade.commit_log;
SELECT count(*) AS jdbc_rows FROM iceberg_tables;
SELECT skade.commit_table('priv', 't', 'file:///p/v0', 'file:///p/v1');
SELECT skade.register_table('priv', 'x', 'file:///p/x');
SELECT skade.create_namespace('priv2');
SELECT skade.drop_table('priv', 't');
UPDATE iceberg_tables SET metadata_location = 'file:///p/v1' WHERE table_name = 't';
INSERT INTO iceberg_namespace_properties VALUES ('skade', 'r', 'exists', 'true');
INSERT INTO skade.commit_log (op, source, catalog_name, table_namespace, table_name) VALUES ('drop', 'sql', 'a', 'b', 'c');
RESET ROLE;

-- writer: commits through both paths, logged under its name
SET ROLE skade_test_writer;
SELECT skade.commit_table('priv', 't', 'file:///p/v0', 'file:///p/v1') > 0;
UPDATE iceberg_tables SET metadata_location = 'file:///p/v2', previous_metadata_location = 'file:///p/v1'
  WHERE catalog_name = 'skade' AND table_namespace = 'priv' AND table_name = 't' AND metadata_location = 'file:///p/v1';
SELECT skade.create_namespace('priv.sub');
SELECT skade.drop_namespace('priv.sub');
-- but cannot forge or rewrite history, nor run the admin functions
INSERT INTO skade.commit_log (op, source, catalog_name, table_namespace, table_name) VALUES ('drop', 'sql', 'a', 'b', 'c');
DELETE FROM skade.commit_log;
TRUNCATE iceberg_tables;
SELECT skade.adopt_jdbc_catalog();
RESET ROLE;
SELECT op, committed_by, metadata_location FROM skade.commit_log
WHERE table_namespace = 'priv' ORDER BY seq;

-- writer: the metadata writer's whole engine (schema, spec and order
-- binding run helper functions the writer must be able to execute)
SET skade.allowed_roots = '/tmp/skade_regress';
SET skade.write_roots = '/tmp/skade_regress';
SET ROLE skade_test_writer;
SELECT skade.create_table('priv', 'w', '{"type":"struct","fields":[{"id":1,"name":"id","type":"long","required":true}]}',
                          location => 'file:///tmp/skade_regress/priv/w') IS NOT NULL AS created;
SELECT skade.update_table('priv', 'w', '[]', '[
  {"action":"add-schema","schema":{"type":"struct","schema-id":1,"fields":[{"id":1,"name":"id","type":"long","required":true},{"id":2,"name":"v","type":"string","required":false}]}},
  {"action":"set-current-schema","schema-id":-1},
  {"action":"add-spec","spec":{"spec-id":1,"fields":[{"source-id":1,"field-id":1000,"name":"id_b","transform":"bucket[4]"}]}},
  {"action":"set-default-spec","spec-id":-1},
  {"action":"add-sort-order","sort-order":{"order-id":1,"fields":[{"source-id":2,"transform":"identity","direction":"asc","null-order":"nulls-first"}]}},
  {"action":"set-default-sort-order","sort-order-id":-1}]') IS NOT NULL AS evolved;
RESET ROLE;
SELECT m->'current-schema-id' AS schema, m->'default-spec-id' AS spec, m->'default-sort-order-id' AS sort_order
FROM (SELECT skade.table_metadata('priv', 'w')::jsonb m) x;
SELECT skade.drop_table('priv', 'w') IS NOT NULL AS dropped;

-- PUBLIC: nothing at all
SET ROLE skade_test_nobody;
SELECT * FROM skade.list_namespaces();
SELECT skade.load_table('priv', 't', snapshots => 'none');
SELECT count(*) FROM iceberg_tables;
SELECT count(*) FROM iceberg_namespace_properties;
SELECT count(*) FROM skade.commit_log;
RESET ROLE;

-- no function of schema skade is executable by PUBLIC but the three that the
-- row-level security policies call for whoever reads the catalog tables (they
-- answer only about the caller's own privileges: see sql/grants.sql)
SELECT p.proname
FROM pg_proc p
WHERE p.pronamespace = 'skade'::regnamespace
  AND has_function_privilege('skade_test_nobody', p.oid, 'EXECUTE')
ORDER BY 1;

SELECT skade.drop_table('priv', 't');
SELECT skade.drop_namespace('priv');
DROP ROLE skade_test_reader, skade_test_writer, skade_test_nobody;
