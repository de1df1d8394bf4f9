-- update_table(): a commit with the Iceberg REST CommitTableRequest's
-- requirements and updates, applied by skade (Java's TableMetadata.Builder
-- rules), written as the next metadata file and committed through the same
-- compare-and-swap the JDBC clients run.
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
	SELECT regexp_replace(regexp_replace(loc, '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}', '<uuid>'),
						  '^.*/', '')
$$;
SELECT skade.create_namespace('ut', '{"location": "/tmp/skade_regress/wh/ut"}');
SELECT pg_temp.masked(skade.create_table('ut', 't', '{"fields": [{"id": 1, "name": "id", "required": true, "type": "long"}]}')) AS created;
SELECT (metadata::jsonb)->>'table-uuid' AS uuid FROM skade.load_table('ut', 't') \gset

-- an append as a REST client sends it: its requirements hold, three updates
SELECT pg_temp.masked(skade.update_table('ut', 't',
  format('[{"type": "assert-table-uuid", "uuid": "%s"}, {"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": null}]', upper(:'uuid'))::jsonb,
  '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 11, "sequence-number": 1, "timestamp-ms": 1700000000000,
     "manifest-list": "file:/tmp/skade_regress/wh/ut/t/metadata/snap-11.avro", "summary": {"operation": "append"}, "schema-id": 0}},
    {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 11, "type": "branch"},
    {"action": "set-properties", "updates": {"owner": "ana"}}]')) AS appended;
SELECT m->'current-snapshot-id' AS current, m->'last-sequence-number' AS seq, m->'refs' AS refs,
       m->'snapshot-log' AS log, m->'properties'->'owner' AS owner,
       jsonb_array_length(m->'metadata-log') AS metadata_log
FROM (SELECT metadata::jsonb AS m FROM skade.load_table('ut', 't')) x;
-- logged as an API commit, its snapshot known to time travel
SELECT op, source, pg_temp.masked(metadata_location) AS location, pg_temp.masked(previous_metadata_location) AS previous, snapshot_id
FROM skade.commit_log WHERE table_namespace = 'ut' ORDER BY seq;
SELECT snapshot_id, name FROM skade.resolve_many(ARRAY[11]);

-- no change: no new file
SELECT skade.update_table('ut', 't', '[]', '[]') = (SELECT metadata_location FROM skade.load_table('ut', 't', 'none')) AS unchanged;
SELECT skade.update_table('ut', 't', '[]', '[{"action": "set-properties", "updates": {}}, {"action": "set-location", "location": "/tmp/skade_regress/wh/ut/t"}]')
       = (SELECT metadata_location FROM skade.load_table('ut', 't', 'none')) AS unchanged_too;

-- every requirement, failing: 40001 naming it
SELECT pg_temp.err(format($$SELECT skade.update_table('ut', 't', %L, '[]')$$, r)) AS failed
FROM unnest(ARRAY[
  '[{"type": "assert-create"}]',
  '[{"type": "assert-table-uuid", "uuid": "00000000-0000-0000-0000-000000000000"}]',
  '[{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": null}]',
  '[{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": 10}]',
  '[{"type": "assert-ref-snapshot-id", "ref": "dev", "snapshot-id": 11}]',
  '[{"type": "assert-last-assigned-field-id", "last-assigned-field-id": 5}]',
  '[{"type": "assert-current-schema-id", "current-schema-id": 1}]',
  '[{"type": "assert-last-assigned-partition-id", "last-assigned-partition-id": 1000}]',
  '[{"type": "assert-default-spec-id", "default-spec-id": 1}]',
  '[{"type": "assert-default-sort-order-id", "default-sort-order-id": 1}]',
  '[{"type": "assert-something"}]']) r;
-- ... and holding
SELECT pg_temp.masked(skade.update_table('ut', 't', '[{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": 11},
  {"type": "assert-ref-snapshot-id", "ref": "dev"}, {"type": "assert-last-assigned-field-id", "last-assigned-field-id": 1},
  {"type": "assert-current-schema-id", "current-schema-id": 0}, {"type": "assert-last-assigned-partition-id", "last-assigned-partition-id": 999},
  {"type": "assert-default-spec-id", "default-spec-id": 0}, {"type": "assert-default-sort-order-id", "default-sort-order-id": 0}]',
  '[{"action": "set-snapshot-ref", "ref-name": "dev", "snapshot-id": 11, "type": "tag", "max-ref-age-ms": 86400000}]')) AS tagged;

-- schema evolution: a new schema (ids as sent), made current by -1
SELECT pg_temp.masked(skade.update_table('ut', 't', '[{"type": "assert-last-assigned-field-id", "last-assigned-field-id": 1}]',
  '[{"action": "add-schema", "schema": {"type": "struct", "schema-id": 9, "fields": [
      {"id": 1, "name": "id", "required": true, "type": "long"}, {"id": 2, "name": "d", "required": false, "type": "string"}]}},
    {"action": "set-current-schema", "schema-id": -1}]')) AS evolved;
SELECT m->'current-schema-id' AS schema_id, m->'last-column-id' AS last_column_id,
       jsonb_path_query_array(m, '$.schemas[*]."schema-id"') AS schemas
FROM (SELECT metadata::jsonb AS m FROM skade.load_table('ut', 't')) x;
-- the same schema again is reused: no change
SELECT skade.update_table('ut', 't', '[]', '[{"action": "add-schema", "schema": {"type": "struct", "fields": [
      {"id": 1, "name": "id", "required": true, "type": "long"}, {"id": 2, "name": "d", "required": false, "type": "string"}]}}]')
   = (SELECT metadata_location FROM skade.load_table('ut', 't', 'none')) AS reused;

-- a second snapshot, then expire the first: refs naming it go, the log follows
SELECT pg_temp.masked(skade.update_table('ut', 't', '[]',
  '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 12, "parent-snapshot-id": 11, "sequence-number": 2, "timestamp-ms": 1700000001000,
     "manifest-list": "file:/tmp/skade_regress/wh/ut/t/metadata/snap-12.avro", "summary": {"operation": "append"}, "schema-id": 1}},
    {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 12, "type": "branch"},
    {"action": "remove-snapshots", "snapshot-ids": [11, 99]}]')) AS expired;
SELECT jsonb_path_query_array(m, '$.snapshots[*]."snapshot-id"') AS snapshots, m->'refs' AS refs, m->'snapshot-log' AS log
FROM (SELECT metadata::jsonb AS m FROM skade.load_table('ut', 't')) x;

-- bad updates: clear errors, the pointer unchanged, no file
SELECT metadata_location AS before FROM skade.load_table('ut', 't', 'none') \gset
SELECT pg_temp.err(format($$SELECT skade.update_table('ut', 't', '[]', %L)$$, u)) AS refused
FROM unnest(ARRAY[
  '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 13, "parent-snapshot-id": 12, "sequence-number": 2, "timestamp-ms": 1, "manifest-list": "x", "summary": {"operation": "append"}}}]',
  '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 12, "sequence-number": 3, "timestamp-ms": 1, "manifest-list": "x", "summary": {"operation": "append"}}}]',
  '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 14}}]',
  '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 88, "parent-snapshot-id": 12, "sequence-number": 9, "timestamp-ms": 4102444800000, "manifest-list": "x", "summary": {"operation": "append"}}},
    {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 88, "type": "branch"}]',
  '[{"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 77, "type": "branch"}]',
  '[{"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 12, "type": "tag"}]',
  '[{"action": "set-current-schema", "schema-id": 7}]',
  '[{"action": "set-current-schema", "schema-id": -1}]',
  '[{"action": "upgrade-format-version", "format-version": 1}]',
  '[{"action": "assign-uuid", "uuid": "00000000-0000-0000-0000-000000000000"}]',
  '[{"action": "add-schema", "schema": {"type": "struct", "fields": [{"id": 3, "name": "n", "required": false, "type": "timestamp_ns"}]}}]',
  '[{"action": "add-encryption-key", "encryption-key": {"key-id": "k"}}]',
  '[{"action": "set-default-spec", "spec-id": 5}]',
  '[{"action": "set-default-spec", "spec-id": -1}]',
  '[{"action": "add-spec", "spec": {"fields": [{"source-id": 77, "transform": "identity", "name": "x"}]}}]',
  '[{"action": "add-sort-order", "sort-order": {"fields": [{"source-id": 1, "transform": "identity", "direction": "up", "null-order": "nulls-first"}]}}]',
  '[{"action": "set-default-sort-order", "sort-order-id": -1}]',
  '[{"action": "remove-partition-specs", "spec-ids": [0]}]',
  '[{"action": "remove-schemas", "schema-ids": [1]}]',
  '[{"action": "set-statistics", "statistics": {"snapshot-id": 12}}]',
  '[{"action": "frobnicate"}]',
  '[{"action": "set-properties", "updates": {"a": 1}}]']) u;
SELECT metadata_location = :'before' AS unchanged FROM skade.load_table('ut', 't', 'none');
SELECT pg_temp.err($$SELECT skade.update_table('ut', 'nope', '[]', '[]')$$) AS missing;

-- partition specs and sort orders: added (ids from the table), made default by -1, reused when equal
SELECT pg_temp.masked(skade.update_table('ut', 't', '[{"type": "assert-last-assigned-partition-id", "last-assigned-partition-id": 999}]',
  '[{"action": "add-spec", "spec": {"spec-id": 7, "fields": [{"source-id": 2, "transform": "identity", "name": "d"},
                                                                {"source-id": 1, "transform": "bucket[8]", "name": "id_bucket"}]}},
    {"action": "set-default-spec", "spec-id": -1},
    {"action": "add-sort-order", "sort-order": {"order-id": 4, "fields": [{"source-id": 1, "transform": "identity", "direction": "desc", "null-order": "nulls-last"}]}},
    {"action": "set-default-sort-order", "sort-order-id": -1}]')) AS specs;
SELECT m->'default-spec-id' AS spec, m->'last-partition-id' AS last_partition_id, m->'partition-specs'->1 AS new_spec,
       m->'default-sort-order-id' AS sort_order, m->'sort-orders'->1 AS new_order
FROM (SELECT metadata::jsonb AS m FROM skade.load_table('ut', 't')) x;
SELECT skade.update_table('ut', 't', '[]', '[{"action": "add-spec", "spec": {"fields": [{"source-id": 2, "transform": "identity", "name": "d", "field-id": 1000},
                                                                {"source-id": 1, "transform": "bucket[8]", "name": "id_bucket", "field-id": 1001}]}},
    {"action": "add-sort-order", "sort-order": {"order-id": 0, "fields": []}}]')
   = (SELECT metadata_location FROM skade.load_table('ut', 't', 'none')) AS both_reused;
-- statistics: set (replacing that snapshot's), removed; an old spec and schema dropped
SELECT pg_temp.masked(skade.update_table('ut', 't', '[]',
  '[{"action": "set-statistics", "statistics": {"snapshot-id": 12, "statistics-path": "/s/a.puffin", "file-size-in-bytes": 10, "file-footer-size-in-bytes": 2, "blob-metadata": []}},
    {"action": "set-statistics", "statistics": {"snapshot-id": 12, "statistics-path": "/s/b.puffin", "file-size-in-bytes": 11, "file-footer-size-in-bytes": 2, "blob-metadata": []}},
    {"action": "set-partition-statistics", "partition-statistics": {"snapshot-id": 12, "statistics-path": "/s/p.parquet", "file-size-in-bytes": 5}},
    {"action": "remove-partition-specs", "spec-ids": [0]},
    {"action": "remove-schemas", "schema-ids": [0]}]')) AS housekeeping;
SELECT jsonb_path_query_array(m, '$.statistics[*]."statistics-path"') AS stats, jsonb_array_length(m->'partition-statistics') AS pstats,
       jsonb_path_query_array(m, '$."partition-specs"[*]."spec-id"') AS specs, jsonb_path_query_array(m, '$.schemas[*]."schema-id"') AS schemas
FROM (SELECT metadata::jsonb AS m FROM skade.load_table('ut', 't')) x;
SELECT pg_temp.masked(skade.update_table('ut', 't', '[]',
  '[{"action": "remove-statistics", "snapshot-id": 12}, {"action": "remove-partition-statistics", "snapshot-id": 12}]')) AS removed_stats;
SELECT m->'statistics' AS stats, m->'partition-statistics' AS pstats
FROM (SELECT metadata::jsonb AS m FROM skade.load_table('ut', 't')) x;

-- upgrade to v3: row lineage from then on
-- (a format-version property is an upgrade, as Java's client sends it; reserved keys are not kept)
SELECT pg_temp.masked(skade.update_table('ut', 't', '[]', '[{"action": "set-properties", "updates": {"format-version": "3", "uuid": "x", "tier": "gold"}}]')) AS v3;
SELECT m->'properties' AS properties FROM (SELECT metadata::jsonb AS m FROM skade.load_table('ut', 't')) x;
SELECT pg_temp.err($$SELECT skade.update_table('ut', 't', '[]',
  '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 15, "parent-snapshot-id": 12, "sequence-number": 3, "timestamp-ms": 1700000002000,
     "manifest-list": "x", "summary": {"operation": "append"}}}]')$$) AS no_lineage;
SELECT pg_temp.masked(skade.update_table('ut', 't', '[]',
  '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 15, "parent-snapshot-id": 12, "sequence-number": 3, "timestamp-ms": 1700000002000,
     "manifest-list": "x", "summary": {"operation": "append"}, "first-row-id": 0, "added-rows": 40}}]')) AS with_lineage;
SELECT m->'format-version' AS fv, m->'next-row-id' AS next_row_id,
       (SELECT count(*) FROM skade.commit_log WHERE table_namespace = 'ut') AS log_rows
FROM (SELECT metadata::jsonb AS m FROM skade.load_table('ut', 't')) x;

-- several tables at once: commit_transaction takes server-side commits
-- ({namespace, name, requirements, updates}) beside pointer swaps, all or nothing
SELECT pg_temp.masked(skade.create_table('ut', 'u', '{"fields": [{"id": 1, "name": "id", "required": true, "type": "long"}]}')) AS created_u;
SELECT skade.register_table('ut', 'p', '/tmp/skade_regress/wh/ut/p/v1.metadata.json') > 0 AS registered_p;
SELECT namespace, name, pg_temp.masked(metadata_location) AS location, seq IS NOT NULL AS logged
FROM skade.commit_transaction('[
  {"namespace": "ut", "name": "u", "requirements": [{"type": "assert-current-schema-id", "current-schema-id": 0}],
   "updates": [{"action": "set-properties", "updates": {"batch": "1"}}]},
  {"namespace": "ut", "name": "p", "expected_location": "/tmp/skade_regress/wh/ut/p/v1.metadata.json",
   "new_location": "/tmp/skade_regress/wh/ut/p/v2.metadata.json"},
  {"namespace": "ut", "name": "t", "updates": []}]') ORDER BY name;
SELECT (metadata::jsonb)->'properties'->'batch' AS batch FROM skade.load_table('ut', 'u');
-- one failing requirement: nothing of the three happens
SELECT pg_temp.err($$SELECT * FROM skade.commit_transaction('[
  {"namespace": "ut", "name": "p", "expected_location": "/tmp/skade_regress/wh/ut/p/v2.metadata.json",
   "new_location": "/tmp/skade_regress/wh/ut/p/v3.metadata.json"},
  {"namespace": "ut", "name": "u", "updates": [{"action": "set-properties", "updates": {"batch": "2"}}]},
  {"namespace": "ut", "name": "t", "requirements": [{"type": "assert-current-schema-id", "current-schema-id": 0}],
   "updates": [{"action": "set-properties", "updates": {"batch": "2"}}]}]')$$) AS all_or_nothing;
SELECT (SELECT metadata_location FROM skade.load_table('ut', 'p', 'none')) = '/tmp/skade_regress/wh/ut/p/v2.metadata.json' AS p_unchanged,
       (SELECT (metadata::jsonb)->'properties'->>'batch' FROM skade.load_table('ut', 'u')) AS u_batch;
SELECT pg_temp.err($$SELECT * FROM skade.commit_transaction('[{"namespace": "ut", "name": "u", "updates": {}}]')$$) AS not_an_array;
SELECT pg_temp.err($$SELECT * FROM skade.commit_transaction('[{"namespace": "ut", "name": "u", "updates": [], "new_location": "x"}]')$$) AS mixed_keys;

-- expire_snapshots on a table Java wrote (test/data/clients/java: three appends)
SET skade.allowed_roots = '/tmp/skade_regress,/tmp/skade-fixtures';
SET skade.write_roots = '/tmp/skade_regress/wh,/tmp/skade-fixtures';
SELECT skade.register_table('ut', 'exp',
	'/tmp/skade-fixtures/java/fixtures/events/metadata/00004-c91ef392-1928-4306-bd9c-e5269c849709.metadata.json') > 0 AS registered;
SELECT count(*) AS snapshots FROM skade.snapshots('ut', 'exp');
SELECT count(*) AS data_files_before FROM skade.files('ut', 'exp');
SELECT pg_temp.err($$SELECT * FROM skade.expire_snapshots('ut', 'exp', retain_last => 0)$$) AS retain_nothing;
-- young snapshots stay: nothing to do, no new file
SELECT count(*) AS expired_young FROM skade.expire_snapshots('ut', 'exp', older_than => '2000-01-01');
SELECT pg_temp.masked(metadata_location) AS still FROM skade.load_table('ut', 'exp', 'none');
-- keep two: the oldest goes; its manifest list is unreachable (its manifest stays listed by the others)
SELECT kind, regexp_replace(file_path, '^.*/', '') AS file FROM skade.expire_snapshots('ut', 'exp', older_than => now(), retain_last => 2);
SELECT count(*) AS snapshots, pg_temp.masked((SELECT metadata_location FROM skade.load_table('ut', 'exp', 'none'))) AS location
FROM skade.snapshots('ut', 'exp');
SELECT op, source FROM skade.commit_log WHERE table_name = 'exp' ORDER BY seq DESC LIMIT 1;
-- every row pyiceberg or Java would read is still there
SELECT count(*) AS data_files FROM skade.files('ut', 'exp');
-- gc.enabled = false refuses
SELECT skade.update_table('ut', 'exp', '[]', '[{"action": "set-properties", "updates": {"gc.enabled": "false"}}]') IS NOT NULL AS set;
SELECT pg_temp.err($$SELECT * FROM skade.expire_snapshots('ut', 'exp', older_than => now())$$) AS gc_disabled;

-- two snapshots added and made main one after the other in one commit: the
-- one replaced within the commit leaves no snapshot-log entry (as in Java)
SELECT pg_temp.masked(skade.update_table('ut', 'u', '[]',
  '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 31, "sequence-number": 1, "timestamp-ms": 1700000031000, "manifest-list": "x", "summary": {"operation": "append"}}},
    {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 31, "type": "branch"},
    {"action": "add-snapshot", "snapshot": {"snapshot-id": 32, "parent-snapshot-id": 31, "sequence-number": 2, "timestamp-ms": 1700000032000, "manifest-list": "x", "summary": {"operation": "append"}}},
    {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 32, "type": "branch"}]')) AS intermediate;
SELECT m->'current-snapshot-id' AS current, m->'snapshot-log' AS log
FROM (SELECT metadata::jsonb AS m FROM skade.load_table('ut', 'u')) x;

-- optional snapshot fields sent as null are absent (a REST client may send them so;
-- skade's own reader refuses a null parent-snapshot-id)
SELECT pg_temp.masked(skade.update_table('ut', 'u', '[]',
  '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 41, "parent-snapshot-id": null, "sequence-number": 3,
     "timestamp-ms": 1700000041000, "manifest-list": "x", "summary": {"operation": "append"}, "schema-id": null}}]')) AS nulls_absent;
SELECT (SELECT x FROM jsonb_array_elements(m->'snapshots') x WHERE x->'snapshot-id' = '41') ?| ARRAY['parent-snapshot-id', 'schema-id'] AS null_kept
FROM (SELECT metadata::jsonb AS m FROM skade.load_table('ut', 'u')) x;

-- cases Java's reference harness (test/interop/java UpdateTableRandomTest) found
SELECT pg_temp.masked(skade.create_table('ut', 'h',
  '{"fields": [{"id": 1, "name": "id", "required": true, "type": "long"}, {"id": 2, "name": "ts", "required": false, "type": "timestamptz"},
               {"id": 3, "name": "s", "required": false, "type": "string"}]}',
  '{"fields": [{"name": "ts_day", "transform": "day", "source-id": 2}]}')) AS h;
SELECT pg_temp.masked(skade.create_table('ut', 'h1', '{"fields": [{"id": 1, "name": "id", "required": true, "type": "long"}]}',
  format_version => 1)) AS h1;
-- a malformed requirement is 22023 even after a failing one; assert-create takes no other
SELECT pg_temp.err($$SELECT skade.update_table('ut', 'h', '[{"type": "assert-current-schema-id", "current-schema-id": 7}, {"type": "assert-default-spec-id"}]', '[]')$$) AS malformed_requirement;
SELECT pg_temp.err($$SELECT skade.update_table('ut', 'h', '[{"type": "assert-create"}, {"type": "assert-current-schema-id", "current-schema-id": 0}]', '[]')$$) AS create_and_more;
-- ids that are no JSON integers, missing fields: 22023 (not 22P02, not accepted)
SELECT pg_temp.err($$SELECT skade.update_table('ut', 'h', '[]', '[{"action": "set-current-schema", "schema-id": "x"}]')$$) AS string_id;
SELECT pg_temp.err($$SELECT skade.update_table('ut', 'h', '[]', '[{"action": "set-default-sort-order", "sort-order-id": 1.5}]')$$) AS fraction_id;
SELECT pg_temp.err($$SELECT skade.update_table('ut', 'h', '[]', '[{"action": "remove-snapshot-ref"}]')$$) AS no_ref_name;
SELECT pg_temp.err($$SELECT skade.update_table('ut', 'h', '[]', '[{"action": "remove-statistics"}]')$$) AS no_snapshot_id;
-- a partition transform must fit its source, a name may not be another column's
SELECT pg_temp.err($$SELECT skade.update_table('ut', 'h', '[]', '[{"action": "add-spec", "spec": {"fields": [{"name": "s_day", "transform": "day", "source-id": 3, "field-id": 1001}]}}]')$$) AS day_of_string;
SELECT pg_temp.err($$SELECT skade.update_table('ut', 'h', '[]', '[{"action": "add-spec", "spec": {"fields": [{"name": "s", "transform": "bucket[4]", "source-id": 1, "field-id": 1001}]}}]')$$) AS name_of_other_column;
-- the request's order-id is checked as Java binds it: 0 is the unsorted order's only
SELECT pg_temp.err($$SELECT skade.update_table('ut', 'h', '[]', '[{"action": "add-sort-order", "sort-order": {"order-id": 1, "fields": []}}]')$$) AS unsorted_id_1;
SELECT pg_temp.err($$SELECT skade.update_table('ut', 'h', '[]', '[{"action": "add-sort-order", "sort-order": {"order-id": 0, "fields": [{"transform": "identity", "source-id": 1, "direction": "asc", "null-order": "nulls-first"}]}}]')$$) AS sorted_id_0;
-- a current schema without the default spec's source is refused (Java's build())
SELECT pg_temp.err($$SELECT skade.update_table('ut', 'h', '[]', '[{"action": "add-schema", "schema": {"type": "struct", "fields": [{"id": 1, "name": "id", "required": true, "type": "long"}]}},
  {"action": "set-current-schema", "schema-id": -1}]')$$) AS spec_source_dropped;
-- an unknown default spec is refused at the end: an add-spec later in the commit may make it
SELECT pg_temp.err($$SELECT skade.update_table('ut', 'h', '[]', '[{"action": "set-default-spec", "spec-id": 9}]')$$) AS unknown_spec;
SELECT pg_temp.masked(skade.update_table('ut', 'h', '[]', '[{"action": "set-default-spec", "spec-id": 1},
  {"action": "add-spec", "spec": {"fields": [{"name": "id_b", "transform": "bucket[4]", "source-id": 1, "field-id": 1001}]}}]')) AS spec_added_later;
SELECT m->'default-spec-id' AS default_spec FROM (SELECT metadata::jsonb AS m FROM skade.load_table('ut', 'h')) x;
-- -1 after a reused spec: the reused one, when this commit added a spec before (Java's rule)
SELECT pg_temp.masked(skade.update_table('ut', 'h', '[]', '[{"action": "add-spec", "spec": {"fields": [{"name": "id_t", "transform": "truncate[10]", "source-id": 1, "field-id": 1002}]}},
  {"action": "add-spec", "spec": {"fields": [{"name": "ts_day", "transform": "day", "source-id": 2, "field-id": 1000}]}},
  {"action": "set-default-spec", "spec-id": -1}]')) AS reused_spec;
SELECT m->'default-spec-id' AS default_spec, jsonb_array_length(m->'partition-specs') AS specs FROM (SELECT metadata::jsonb AS m FROM skade.load_table('ut', 'h')) x;
-- -1 after a schema this commit added and then sent again
SELECT pg_temp.masked(skade.update_table('ut', 'h', '[]', '[{"action": "add-schema", "schema": {"type": "struct", "fields": [{"id": 1, "name": "id", "required": true, "type": "long"},
    {"id": 2, "name": "ts", "required": false, "type": "timestamptz"}, {"id": 3, "name": "s", "required": false, "type": "string"}, {"id": 4, "name": "n", "required": false, "type": "int"}]}},
  {"action": "add-schema", "schema": {"type": "struct", "fields": [{"id": 1, "name": "id", "required": true, "type": "long"},
    {"id": 2, "name": "ts", "required": false, "type": "timestamptz"}, {"id": 3, "name": "s", "required": false, "type": "string"}, {"id": 4, "name": "n", "required": false, "type": "int"}]}},
  {"action": "set-current-schema", "schema-id": -1}]')) AS repeated_schema;
SELECT m->'current-schema-id' AS current_schema FROM (SELECT metadata::jsonb AS m FROM skade.load_table('ut', 'h')) x;
-- sequence numbers: none is 0 (a parentless snapshot may go back, but never below
-- another snapshot's at the end of the commit); v1 takes none but 0
SELECT pg_temp.masked(skade.update_table('ut', 'h', '[]', '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 51, "sequence-number": 5, "timestamp-ms": 1700000051000, "manifest-list": "x", "summary": {"operation": "append"}}}]')) AS seq5;
SELECT pg_temp.err($$SELECT skade.update_table('ut', 'h', '[]', '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 52, "timestamp-ms": 1700000052000, "manifest-list": "x", "summary": {"operation": "append"}}}]')$$) AS seq_behind;
SELECT pg_temp.err($$SELECT skade.update_table('ut', 'h', '[]', '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 52, "parent-snapshot-id": 51, "timestamp-ms": 1700000052000, "manifest-list": "x", "summary": {"operation": "append"}}}]')$$) AS seq_stale;
SELECT pg_temp.err($$SELECT skade.update_table('ut', 'h1', '[]', '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 53, "sequence-number": 1, "timestamp-ms": 1700000053000, "manifest-list": "x", "summary": {"operation": "append"}}}]')$$) AS v1_seq;
-- a v1 table with a snapshot upgraded to v2: its snapshot has no sequence number, which is 0
SELECT pg_temp.masked(skade.update_table('ut', 'h1', '[]', '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 54, "timestamp-ms": 1700000054000, "manifest-list": "x", "summary": {"operation": "append"}}},
  {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 54, "type": "branch"}]')) AS v1_snapshot;
SELECT pg_temp.masked(skade.update_table('ut', 'h1', '[]', '[{"action": "upgrade-format-version", "format-version": 2}]')) AS upgraded;
SELECT pg_temp.masked(skade.update_table('ut', 'h1', '[]', '[{"action": "set-properties", "updates": {"k": "v"}}]')) AS after_upgrade;
SELECT snapshot_id, sequence_number FROM skade.snapshots('ut', 'h1');
-- a snapshot far ahead of the clock may be added, and main rolled back to it (the log
-- takes the commit time); made main in the commit that adds it, it is refused (its
-- time would be the log's), as is a log going back by more than a minute
SELECT pg_temp.masked(skade.update_table('ut', 'h', '[]', '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 55, "parent-snapshot-id": 51, "sequence-number": 6, "timestamp-ms": 4102444800000, "manifest-list": "x", "summary": {"operation": "append"}}},
  {"action": "set-snapshot-ref", "ref-name": "b", "snapshot-id": 55, "type": "branch"}]')) AS future_on_branch;
SELECT pg_temp.err($$SELECT skade.update_table('ut', 'h', '[]', '[{"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 55, "type": "branch"}]')$$) AS rollback_to_future;
SELECT pg_temp.err($$SELECT skade.update_table('ut', 'h', '[]', '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 56, "parent-snapshot-id": 55, "sequence-number": 7, "timestamp-ms": 4102444900000, "manifest-list": "x", "summary": {"operation": "append"}}},
  {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 56, "type": "branch"}]')$$) AS future_main;
SELECT pg_temp.masked(skade.update_table('ut', 'h', '[]', '[{"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 51, "type": "branch"}]')) AS main_now;
SELECT pg_temp.err($$SELECT skade.update_table('ut', 'h', '[]', '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 57, "parent-snapshot-id": 51, "sequence-number": 8, "timestamp-ms": 1600000000000, "manifest-list": "x", "summary": {"operation": "append"}}},
  {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 57, "type": "branch"}]')$$) AS log_back_in_time;
-- a create transaction (a REST staged create, Java's createTransaction):
-- assert-create on a missing table builds it from its updates, as Java's
-- TableMetadata.buildFromEmpty, in one commit with its first snapshot
SELECT pg_temp.masked(skade.update_table('ut', 'ctx', '[{"type": "assert-create"}]', '[
  {"action": "assign-uuid", "uuid": "01234567-89ab-cdef-0123-456789abcdef"},
  {"action": "upgrade-format-version", "format-version": 2},
  {"action": "add-schema", "schema": {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "required": true, "type": "long"}, {"id": 2, "name": "v", "required": false, "type": "string"}]}, "last-column-id": 2},
  {"action": "set-current-schema", "schema-id": -1},
  {"action": "add-spec", "spec": {"spec-id": 0, "fields": [{"name": "id_b", "transform": "bucket[8]", "source-id": 1, "field-id": 1000}]}},
  {"action": "set-default-spec", "spec-id": -1},
  {"action": "add-sort-order", "sort-order": {"order-id": 0, "fields": []}},
  {"action": "set-default-sort-order", "sort-order-id": -1},
  {"action": "set-location", "location": "file:///tmp/skade_regress/wh/ut/ctx"},
  {"action": "set-properties", "updates": {"owner": "ctas"}},
  {"action": "add-snapshot", "snapshot": {"snapshot-id": 70, "sequence-number": 1, "timestamp-ms": 1700000070000, "manifest-list": "x", "summary": {"operation": "append"}}},
  {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 70, "type": "branch"}]')) AS created_by_transaction;
SELECT m->>'table-uuid' AS uuid, m->>'format-version' AS fv, m->'current-schema-id' AS schema,
       m->'default-spec-id' AS spec, m->'last-partition-id' AS last_partition, m->'current-snapshot-id' AS current,
       m->'properties' AS props, jsonb_array_length(m->'metadata-log') AS log
FROM (SELECT skade.table_metadata('ut', 'ctx')::jsonb m) x;
SELECT op, table_name, regexp_replace(metadata_location, '.*/', '') ~ '^00000-' AS first_version
FROM skade.commit_log WHERE table_name = 'ctx';
-- not twice, not into a missing namespace, not without its schema
SELECT pg_temp.err($$SELECT skade.update_table('ut', 'ctx', '[{"type": "assert-create"}]', '[]')$$) AS exists_already;
SELECT pg_temp.err($$SELECT skade.update_table('nons', 'ctx', '[{"type": "assert-create"}]', '[{"action": "set-location", "location": "file:///tmp/skade_regress/wh/x"}]')$$) AS no_namespace;
SELECT pg_temp.err($$SELECT skade.update_table('ut', 'ctx2', '[{"type": "assert-create"}]', '[{"action": "set-location", "location": "file:///tmp/skade_regress/wh/ut/ctx2"}]')$$) AS no_schema;
SELECT count(*) FROM skade.commit_log WHERE table_name = 'ctx2';
