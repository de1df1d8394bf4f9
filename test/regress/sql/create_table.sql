-- skade writes table metadata itself: create_table() and the one primitive
-- it writes through, write_table_metadata() (create-only, under
-- skade.write_roots, content checked by skade's own reader).
\pset null '(null)'
SET skade.allowed_roots = '/tmp/skade_regress';
SET skade.write_roots = '/tmp/skade_regress/wh';
CREATE FUNCTION pg_temp.err(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE q;
	RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE || ': ' || regexp_replace(SQLERRM, '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}', '<uuid>', 'g');
END $$;
CREATE FUNCTION pg_temp.masked(loc text) RETURNS text LANGUAGE sql AS $$
	SELECT regexp_replace(loc, '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}', '<uuid>')
$$;
COPY (SELECT 1 WHERE false) TO PROGRAM 'mkdir -p /tmp/skade_regress/wh';

SELECT skade.create_namespace('ct', '{"location": "/tmp/skade_regress/wh/ct"}');
-- a REST CreateTableRequest's schema (ids are the client's; skade assigns
-- fresh ones as Java does: each struct's fields first, then their types)
SELECT pg_temp.masked(skade.create_table('ct', 'events', '{"type": "struct", "schema-id": 7,
  "identifier-field-ids": [10],
  "fields": [
    {"id": 10, "name": "id", "required": true, "type": "long"},
    {"id": 11, "name": "ts", "required": false, "type": "timestamptz"},
    {"id": 12, "name": "tags", "required": false,
     "type": {"type": "list", "element-id": 20, "element-required": false, "element": "string"}},
    {"id": 13, "name": "attrs", "required": false,
     "type": {"type": "map", "key-id": 21, "value-id": 22, "value-required": false, "key": "string",
              "value": {"type": "struct", "fields": [{"id": 30, "name": "v", "required": false, "type": "int"}]}}},
    {"id": 14, "name": "category", "required": false, "type": "string", "doc": "what it is"}]}',
  partition_spec => '{"fields": [{"source-id": 14, "transform": "identity", "name": "category"},
                                 {"source-id": 11, "transform": "day", "name": "ts_day"}]}',
  sort_order => '{"order-id": 5, "fields": [{"source-id": 10, "transform": "identity",
                                             "direction": "asc", "null-order": "nulls-first"}]}',
  properties => '{"format-version": "2", "owner": "ana"}')) AS created;
SELECT op, source, table_namespace, table_name, pg_temp.masked(metadata_location) AS location, snapshot_id
FROM skade.commit_log WHERE table_name = 'events' AND table_namespace = 'ct';

-- read back through skade's own reader (the L0 cache)
SELECT m->'format-version' AS fv, m->'location' AS location, m->'last-column-id' AS last_column_id,
       m->'current-schema-id' AS schema_id, m->'last-partition-id' AS last_partition_id,
       m->'default-sort-order-id' AS sort_id, m->'properties' AS properties,
       m->'last-sequence-number' AS seq, m->'current-snapshot-id' AS snapshot
FROM (SELECT metadata::jsonb AS m FROM skade.load_table('ct', 'events')) t;
SELECT jsonb_pretty(metadata::jsonb->'schemas'->0) FROM skade.load_table('ct', 'events');
SELECT metadata::jsonb->'partition-specs' AS specs, metadata::jsonb->'sort-orders' AS orders
FROM skade.load_table('ct', 'events');

-- already there: nothing written
SELECT pg_temp.err($$SELECT skade.create_table('ct', 'events', '{"type": "struct", "fields": []}')$$);
-- no namespace, no location, unknown types, bad specs, unsupported versions
SELECT pg_temp.err($$SELECT skade.create_table('nope', 't', '{"type": "struct", "fields": []}')$$);
SELECT skade.create_namespace('nowhere');
SELECT pg_temp.err($$SELECT skade.create_table('nowhere', 't', '{"type": "struct", "fields": []}')$$);
SELECT pg_temp.err($$SELECT skade.create_table('ct', 'bad', '{"fields": [{"id": 1, "name": "x", "required": true, "type": "varchar"}]}')$$);
SELECT pg_temp.err($$SELECT skade.create_table('ct', 'bad', '{"fields": [{"id": 1, "name": "x", "type": "int"}]}')$$);
SELECT pg_temp.err($$SELECT skade.create_table('ct', 'bad', '{"fields": [{"id": 1, "name": "x", "required": true, "type": "int"}]}',
	partition_spec => '{"fields": [{"source-id": 9, "transform": "identity", "name": "x"}]}')$$);
SELECT pg_temp.err($$SELECT skade.create_table('ct', 'bad', '{"fields": []}', format_version => 4)$$);
SELECT pg_temp.err($$SELECT skade.create_table('ct', 'bad', '{"fields": []}', properties => '{"a": 1}')$$);
SELECT count(*) AS bad_tables FROM iceberg_tables WHERE table_name = 'bad';

-- format versions 1 and 3, gzip, the warehouse default location
SET skade.warehouse = '/tmp/skade_regress/wh/lake';
SELECT pg_temp.masked(skade.create_table('nowhere', 'v1', '{"fields": [{"id": 1, "name": "x", "required": true, "type": "int"}]}',
	partition_spec => '{"fields": [{"source-id": 1, "transform": "bucket[4]", "name": "x_bucket"}]}',
	format_version => 1)) AS v1;
SELECT m->'format-version' AS fv, m->'schema'->'fields'->0->'id' AS legacy_schema, m->'partition-spec' AS legacy_spec
FROM (SELECT metadata::jsonb AS m FROM skade.load_table('nowhere', 'v1')) t;
SELECT pg_temp.masked(skade.create_table('nowhere', 'v3', '{"fields": [{"id": 1, "name": "x", "required": true, "type": "int"}]}',
	properties => '{"format-version": "3", "write.metadata.compression-codec": "gzip"}')) AS v3_gzip;
SELECT m->'format-version' AS fv, m->'next-row-id' AS next_row_id, m->'properties' AS properties
FROM (SELECT metadata::jsonb AS m FROM skade.load_table('nowhere', 'v3')) t;
RESET skade.warehouse;

-- write_table_metadata: only Iceberg metadata files, only new ones, only under the write roots
SELECT metadata::jsonb AS m FROM skade.load_table('ct', 'events') \gset
SELECT pg_temp.err(format('SELECT skade.write_table_metadata(%L, %L)',
	'/tmp/skade_regress/wh/ct/x/00001-0f0e0d0c-0b0a-0908-0706-050403020100.metadata.json', :'m')) AS ok;
SELECT pg_temp.err(format('SELECT skade.write_table_metadata(%L, %L)',
	'/tmp/skade_regress/wh/ct/x/00001-0f0e0d0c-0b0a-0908-0706-050403020100.metadata.json', :'m')) AS exists_already;
SELECT pg_temp.err(format('SELECT skade.write_table_metadata(%L, %L)',
	'/tmp/skade_regress/wh/ct/x/notes.txt', :'m')) AS not_metadata_name;
SELECT pg_temp.err(format('SELECT skade.write_table_metadata(%L, %L)',
	'/tmp/skade_regress/wh/ct/x/00002-0f0e0d0c-0b0a-0908-0706-050403020100.metadata.json', '{"format-version": 2}')) AS not_metadata;
SELECT pg_temp.err(format('SELECT skade.write_table_metadata(%L, %L)',
	'/tmp/skade_regress/elsewhere/00001-0f0e0d0c-0b0a-0908-0706-050403020100.metadata.json', :'m')) AS outside;
SELECT pg_temp.err(format('SELECT skade.write_table_metadata(%L, %L)',
	'/tmp/skade_regress/wh/../elsewhere/00001-0f0e0d0c-0b0a-0908-0706-050403020100.metadata.json', :'m')) AS dotdot;
SELECT pg_temp.err(format('SELECT skade.write_table_metadata(%L, %L)',
	's3://bucket/t/metadata/00001-0f0e0d0c-0b0a-0908-0706-050403020100.metadata.json', :'m')) AS s3;
COPY (SELECT 1 WHERE false) TO PROGRAM 'ln -s /tmp /tmp/skade_regress/wh/link';
SELECT pg_temp.err(format('SELECT skade.write_table_metadata(%L, %L)',
	'/tmp/skade_regress/wh/link/00001-0f0e0d0c-0b0a-0908-0706-050403020100.metadata.json', :'m')) AS through_link;
SET skade.write_roots = '';
SELECT pg_temp.err(format('SELECT skade.write_table_metadata(%L, %L)',
	'/tmp/skade_regress/wh/ct/x/00003-0f0e0d0c-0b0a-0908-0706-050403020100.metadata.json', :'m')) AS disabled;
-- a root must exist: skade creates only what is below it
SET skade.write_roots = '/tmp/skade_regress/missing';
SELECT pg_temp.err(format('SELECT skade.write_table_metadata(%L, %L)',
	'/tmp/skade_regress/missing/t/00001-0f0e0d0c-0b0a-0908-0706-050403020100.metadata.json', :'m')) AS no_root;
RESET skade.write_roots;
-- a read-only transaction (and so a hot standby) writes nothing, not even a table's first file
BEGIN READ ONLY;
SELECT pg_temp.err(format('SELECT skade.write_table_metadata(%L, %L)',
	'/tmp/skade_regress/wh/ct/x/00004-0f0e0d0c-0b0a-0908-0706-050403020100.metadata.json', :'m')) AS read_only;
SELECT pg_temp.err($$SELECT skade.create_table('ct', 'ro', '{"fields": []}')$$) AS read_only_create;
COMMIT;
SELECT pg_stat_file('/tmp/skade_regress/wh/ct/x/00004-0f0e0d0c-0b0a-0908-0706-050403020100.metadata.json', true) IS NULL AS nothing_written,
       pg_stat_file('/tmp/skade_regress/wh/ct/ro', true) IS NULL AS no_table_dir;
-- what was written is the jsonb given, byte for byte as its text
SELECT pg_read_file('/tmp/skade_regress/wh/ct/x/00001-0f0e0d0c-0b0a-0908-0706-050403020100.metadata.json') = :'m' AS exact;

-- a name that becomes a directory of its default location is one path
-- component (42602): never ".", "..", "a/b", a control character or over
-- 255 bytes, so no metadata lands outside its namespace's directory
SET skade.write_roots = '/tmp/skade_regress/wh';
SELECT skade.create_namespace('ct_ns2', '{"location": "/tmp/skade_regress/wh/ct_ns2"}');
SELECT label, pg_temp.err(format('SELECT skade.create_table(%L, %L, %L)', 'ct', n, '{"fields": []}')) AS create_table,
       pg_temp.err(format('SELECT skade.new_table_metadata(%L, %L, %L)', 'ct', n, '{"fields": []}')) AS staged,
       pg_temp.err(format('SELECT skade.create_view(%L, %L, %L)', 'ct', n, '{"schema": {"type": "struct", "fields": []}}')) AS create_view
FROM (VALUES ('dot', '.'), ('dotdot', '..'), ('slash', 'a/b'), ('up_and_over', '../ct_ns2/evil'),
             ('tab', E'a\tb'), ('del', E'a\x7fb'), ('long', repeat('n', 256)), ('very_long', repeat('n', 10000))) v(label, n);
SELECT pg_stat_file('/tmp/skade_regress/wh/metadata', true) IS NULL AS none_in_the_root,
       pg_stat_file('/tmp/skade_regress/wh/ct/metadata', true) IS NULL AS none_in_the_namespace_dir,
       pg_stat_file('/tmp/skade_regress/wh/ct/a', true) IS NULL AS no_subdirectory,
       pg_stat_file('/tmp/skade_regress/wh/ct_ns2', true) IS NULL AS nothing_in_another_namespace;
SELECT count(*) AS refused_tables FROM iceberg_tables WHERE table_namespace = 'ct' AND table_name IN ('.', '..', 'a/b', '../ct_ns2/evil');
-- an explicit location makes the name no path: any name the catalog holds
SELECT pg_temp.masked(skade.create_table('ct', 'a/b', '{"fields": []}', location => '/tmp/skade_regress/wh/ct/slashed')) AS explicit_location;
-- 255 bytes, spaces, "%", "+", ";", "?#" and UTF-8 are path components
SELECT pg_temp.masked(skade.create_table('ct', n, '{"fields": []}')) IS NOT NULL AS created
FROM unnest(ARRAY[repeat('n', 255), 'with space', 'per%cent+plus;semi?q#h', 'ünïcødé-名前']) n;
SELECT skade.path_component('ok', 'table') AS ok, pg_temp.err($$SELECT skade.path_component('..', 'table')$$) AS dotdot;
-- a namespace without a location of its own lies under skade.warehouse:
-- its levels are path components too; with a location they need not be
SET skade.warehouse = '/tmp/skade_regress/wh/lake';
SELECT pg_temp.err($$SELECT skade.create_namespace('ct.a/b')$$) AS slash_level;
SELECT pg_temp.err($$SELECT skade.create_namespace('ct.a/b', '{"location": "/tmp/skade_regress/wh/ct_ab"}')$$) AS slash_level_located;
SELECT skade.namespace_properties('ct.a/b') AS located_props;
RESET skade.warehouse;
RESET skade.write_roots;
