-- undrop: a dropped table or view, from any path, listed and restored within
-- skade.drop_retention (skade.dropped_tables(), undrop_table(), undrop_view())
\pset null '(null)'
SET skade.allowed_roots = '/tmp/skade_regress';
SET skade.write_roots = '/tmp/skade_regress/wh';
CREATE FUNCTION pg_temp.err(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE q;
	RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE || ' ' || regexp_replace(SQLERRM, '[0-9a-f]{8}-[0-9a-f-]{27}', '<uuid>', 'g');
END $$;
SELECT skade.create_namespace('ud', '{"location": "/tmp/skade_regress/wh/ud"}');
SELECT skade.create_table('ud', 't', '{"fields": [{"id": 1, "name": "id", "required": true, "type": "long"}]}') IS NOT NULL AS created;
SELECT skade.update_table('ud', 't', '[]', '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 81, "sequence-number": 1,
    "timestamp-ms": 1764000000000, "manifest-list": "/m/snap-81.avro", "summary": {"operation": "append"}}},
  {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 81, "type": "branch"}]') AS before_drop \gset
SELECT count(*) AS listed_before FROM skade.dropped_tables() WHERE namespace = 'ud';

-- dropped through the SQL API: listed, restored as it was
SELECT skade.drop_table('ud', 't') = :'before_drop' AS dropped;
SELECT namespace, name, object_type, dropped_by = current_user AS by_me, metadata_location = :'before_drop' AS last_pointer,
       restorable FROM skade.dropped_tables() WHERE namespace = 'ud';
SELECT skade.undrop_table('ud', 't') > 0 AS restored;
SELECT metadata_location = :'before_drop' AS same_pointer,
       (SELECT array_agg(snapshot_id) FROM skade.snapshots('ud', 't')) AS snapshots
FROM skade.load_table('ud', 't', 'none');
SELECT count(*) AS listed_after FROM skade.dropped_tables() WHERE namespace = 'ud';
SELECT pg_temp.err($$SELECT skade.undrop_table('ud', 't')$$) AS again;

-- dropped by a JDBC client's own DELETE; the name taken meanwhile by another
-- table; restored under another name
DELETE FROM iceberg_tables WHERE catalog_name = 'skade' AND table_namespace = 'ud' AND table_name = 't';
SELECT skade.register_table('ud', 't', 'file:///other/t.metadata.json') > 0 AS name_taken_again;
SELECT name, restorable FROM skade.dropped_tables() WHERE namespace = 'ud';
SELECT pg_temp.err($$SELECT skade.undrop_table('ud', 't')$$) AS taken;
SELECT skade.undrop_table('ud', 't', 't_restored') > 0 AS restored_as;
SELECT table_name, metadata_location = :'before_drop' AS same_pointer FROM iceberg_tables
WHERE table_namespace = 'ud' ORDER BY table_name;

-- two drops of one name: the latest by default, drop_seq for the other
SELECT skade.drop_table('ud', 't_restored') = :'before_drop' AS dropped;
SELECT skade.register_table('ud', 't_restored', 'file:///second/t.metadata.json') > 0 AS registered;
SELECT skade.drop_table('ud', 't_restored') IS NOT NULL AS dropped;
SELECT name, metadata_location = :'before_drop' AS first_pointer FROM skade.dropped_tables()
WHERE namespace = 'ud' ORDER BY seq;
SELECT min(seq) AS older FROM skade.dropped_tables() WHERE namespace = 'ud' AND name = 't_restored' \gset
SELECT pg_temp.err(format($$SELECT skade.undrop_table('ud', 't', drop_seq => %s)$$, :older)) AS not_that_name;
SELECT skade.undrop_table('ud', 't_restored', drop_seq => :older) > 0 AS restored_older;
SELECT table_name, metadata_location = :'before_drop' AS first_pointer FROM iceberg_tables
WHERE table_namespace = 'ud' ORDER BY table_name;
SELECT name, metadata_location = :'before_drop' AS first_pointer FROM skade.dropped_tables() WHERE namespace = 'ud';

-- views too
SELECT skade.create_view('ud', 'v', '{
  "schema": {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": false}]},
  "view-version": {"version-id": 1, "timestamp-ms": 1700000000000, "schema-id": 0, "summary": {"engine-name": "spark"},
                   "representations": [{"type": "sql", "sql": "SELECT 1 AS id", "dialect": "spark"}],
                   "default-namespace": ["ud"]}}') IS NOT NULL AS view_created;
SELECT skade.drop_view('ud', 'v');
SELECT name, object_type FROM skade.dropped_tables() WHERE namespace = 'ud' AND object_type = 'view';
SELECT pg_temp.err($$SELECT skade.undrop_table('ud', 'v')$$) AS not_a_table;
SELECT skade.undrop_view('ud', 'v') > 0 AS view_restored;
SELECT skade.view_exists('ud', 'v') AS view_back;

-- outside the retention nothing is listed or restored; it is the superuser's setting
SELECT skade.drop_table('ud', 't') IS NOT NULL AS dropped;
SET skade.drop_retention = 0;
SELECT count(*) AS listed_without_retention FROM skade.dropped_tables() WHERE namespace = 'ud';
SELECT pg_temp.err($$SELECT skade.undrop_table('ud', 't')$$) AS outside_retention;
RESET skade.drop_retention;
CREATE ROLE ud_writer IN ROLE skade_writer;
SET ROLE ud_writer;
SELECT pg_temp.err($$SET skade.drop_retention = '1y'$$) AS set_by_a_writer;
RESET ROLE;
DROP ROLE ud_writer;

-- bad input
SELECT pg_temp.err($$SELECT skade.undrop_table(NULL, 't')$$) AS null_namespace;
SELECT pg_temp.err($$SELECT skade.undrop_table('ud', 'never')$$) AS never_dropped;

SELECT skade.drop_table('ud', 't_restored') IS NOT NULL AS dropped;
SELECT skade.drop_view('ud', 'v');
DELETE FROM iceberg_tables WHERE table_namespace = 'ud';
SELECT skade.drop_namespace('ud');
