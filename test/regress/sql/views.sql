-- Iceberg views (create_view, update_view, ...): metadata as Java's
-- ViewMetadata.Builder builds it, kept as the JDBC catalog keeps views.
\pset null '(null)'
SET skade.allowed_roots = '/tmp/skade_regress';
SET skade.write_roots = '/tmp/skade_regress';
CREATE FUNCTION pg_temp.err(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE q;
	RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE || ': ' || regexp_replace(SQLERRM, '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}', '<uuid>', 'g');
END $$;
CREATE FUNCTION pg_temp.masked(t text) RETURNS text LANGUAGE sql AS $$
	SELECT regexp_replace(regexp_replace(t, '^.*/', ''), '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}', '<uuid>', 'g')
$$;
SELECT skade.create_namespace('vw', '{"location": "/tmp/skade_regress/vw"}');

-- create: schema 0, version 1 current, logged
SELECT pg_temp.masked(skade.create_view('vw', 'v', '{
  "schema": {"type": "struct", "schema-id": 7, "fields": [{"id": 1, "name": "id", "type": "long", "required": false}]},
  "view-version": {"version-id": 9, "timestamp-ms": 1700000000000, "schema-id": 7, "summary": {"engine-name": "spark"},
                   "representations": [{"type": "sql", "sql": "SELECT 1 AS id", "dialect": "spark"}],
                   "default-namespace": ["vw"]},
  "properties": {"comment": "first"}}')) AS created;
SELECT m->'format-version' AS fv, m->'location' AS location, m->'current-version-id' AS current,
       jsonb_path_query_array(m, '$.schemas[*]."schema-id"') AS schemas,
       jsonb_path_query_array(m, '$.versions[*]."version-id"') AS versions,
       m->'version-log' AS log, m->'properties' AS props
FROM (SELECT skade.view_metadata('vw', 'v')::jsonb m) x;
SELECT * FROM skade.list_views('vw');
SELECT skade.view_exists('vw', 'v'), skade.table_exists('vw', 'v');

-- a new version on a new schema; then the same version again: reused, no new file
SELECT pg_temp.masked(skade.update_view('vw', 'v', '[]', '[
  {"action": "add-schema", "schema": {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": false}, {"id": 2, "name": "v", "type": "string", "required": false}]}},
  {"action": "add-view-version", "view-version": {"version-id": 0, "timestamp-ms": 1700000001000, "schema-id": -1, "summary": {},
    "representations": [{"type": "sql", "sql": "SELECT 1 AS id, ''a'' AS v", "dialect": "spark"}], "default-namespace": ["vw"]}},
  {"action": "set-current-view-version", "view-version-id": -1},
  {"action": "set-properties", "updates": {"owner": "me"}},
  {"action": "remove-properties", "removals": ["comment"]}]')) AS second;
SELECT pg_temp.masked(skade.update_view('vw', 'v', '[]', '[
  {"action": "add-view-version", "view-version": {"version-id": 0, "timestamp-ms": 1700000009000, "schema-id": 1, "summary": {},
    "representations": [{"type": "sql", "sql": "SELECT 1 AS id, ''a'' AS v", "dialect": "spark"}], "default-namespace": ["vw"]}},
  {"action": "set-current-view-version", "view-version-id": -1}]')) AS same_again;
-- back to version 1: logged
SELECT pg_temp.masked(skade.update_view('vw', 'v', '[]', '[{"action": "set-current-view-version", "view-version-id": 1}]')) AS back;
SELECT m->'current-version-id' AS current, jsonb_path_query_array(m, '$.versions[*]."version-id"') AS versions,
       jsonb_path_query_array(m, '$."version-log"[*]."version-id"') AS log, m->'properties' AS props
FROM (SELECT skade.view_metadata('vw', 'v')::jsonb m) x;
SELECT op, source, pg_temp.masked(metadata_location) AS file FROM skade.commit_log WHERE table_name = 'v' ORDER BY seq;

-- requirements and bad updates
SELECT pg_temp.err($$SELECT skade.update_view('vw', 'v', '[{"type": "assert-view-uuid", "uuid": "00000000-0000-0000-0000-000000000000"}]', '[]')$$) AS stale_uuid;
SELECT pg_temp.err($$SELECT skade.update_view('vw', 'v', '[{"type": "assert-current-schema-id", "current-schema-id": 0}]', '[]')$$) AS table_requirement;
SELECT pg_temp.err($$SELECT skade.update_view('vw', 'v', '[]', '[{"action": "assign-uuid", "uuid": "00000000-0000-0000-0000-000000000000"}]')$$) AS other_uuid;
SELECT pg_temp.err($$SELECT skade.update_view('vw', 'v', '[]', '[{"action": "add-view-version", "view-version": {"schema-id": 5, "representations": []}}]')$$) AS unknown_schema;
SELECT pg_temp.err($$SELECT skade.update_view('vw', 'v', '[]', '[{"action": "add-view-version", "view-version": {"schema-id": 0, "representations": [{"type": "sql", "sql": "a", "dialect": "x"}, {"type": "sql", "sql": "b", "dialect": "X"}]}}]')$$) AS two_queries_one_dialect;
SELECT pg_temp.err($$SELECT skade.update_view('vw', 'v', '[]', '[{"action": "set-current-view-version", "view-version-id": 42}]')$$) AS unknown_version;
SELECT pg_temp.err($$SELECT skade.update_view('vw', 'v', '[]', '[{"action": "upgrade-format-version", "format-version": 2}]')$$) AS v2;
SELECT pg_temp.err($$SELECT skade.update_view('vw', 'v', '[]', '[{"action": "add-snapshot"}]')$$) AS table_update;

-- the history kept: version.history.num-entries versions, the current always
SELECT pg_temp.masked(skade.update_view('vw', 'v', '[]', '[{"action": "set-properties", "updates": {"version.history.num-entries": "2"}},
  {"action": "add-view-version", "view-version": {"schema-id": 0, "summary": {}, "representations": [{"type": "sql", "sql": "SELECT 3 AS id", "dialect": "spark"}], "default-namespace": ["vw"]}}]')) AS trimmed;
SELECT m->'current-version-id' AS current, jsonb_path_query_array(m, '$.versions[*]."version-id"') AS versions,
       jsonb_path_query_array(m, '$."version-log"[*]."version-id"') AS log
FROM (SELECT skade.view_metadata('vw', 'v')::jsonb m) x;

-- names: views and tables share them; table functions refuse a view
SELECT pg_temp.err($$SELECT skade.create_view('vw', 'v', '{"schema": {"type": "struct", "fields": []}, "view-version": {"schema-id": 0, "representations": []}}')$$) AS twice;
SELECT pg_temp.err($$SELECT * FROM skade.load_table('vw', 'v')$$) AS load_as_table;
SELECT pg_temp.err($$SELECT skade.create_view('nons', 'x', '{}')$$) AS no_namespace;
SELECT pg_temp.err($$SELECT skade.create_view('vw', 'x', '{"schema": {"type": "struct", "fields": []}}')$$) AS no_version;
SELECT skade.rename_view('vw', 'v', 'vw', 'v2');
SELECT pg_temp.err($$SELECT skade.rename_view('vw', 'v', 'vw', 'v3')$$) AS gone;
SELECT * FROM skade.list_views('vw');
SELECT skade.drop_view('vw', 'v2');
SELECT pg_temp.err($$SELECT skade.drop_view('vw', 'v2')$$) AS dropped_twice;
SELECT op, source, table_namespace, table_name FROM skade.commit_log WHERE table_name IN ('v', 'v2') ORDER BY seq DESC LIMIT 2;
-- view_pointer, the view functions' one change of a row, reaches views only
SELECT skade.create_table('vw', 'tbl', '{"fields": []}') IS NOT NULL AS table_made;
SELECT skade.view_pointer('drop', 'vw', 'tbl', NULL) AS dropped,
       skade.view_pointer('rename', 'vw', 'tbl', NULL, 'vw', 'tbl2') AS moved,
       skade.view_pointer('commit', 'vw', 'tbl', NULL,
                          (SELECT metadata_location FROM skade.load_table('vw', 'tbl', 'none')), '/elsewhere') AS swapped,
       skade.table_exists('vw', 'tbl') AS table_intact;
SELECT pg_temp.err($$SELECT skade.view_pointer('truncate', 'vw', 'tbl', NULL)$$) AS unknown_change;
SELECT pg_temp.err($$SELECT skade.view_pointer('commit', 'vw', 'tbl', NULL, '/a')$$) AS half_a_swap;
SELECT skade.drop_table('vw', 'tbl') IS NOT NULL AS table_dropped;
SELECT skade.drop_namespace('vw');
