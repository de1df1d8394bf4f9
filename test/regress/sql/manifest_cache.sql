-- The L0.5 manifest cache (decoded manifests in shared memory, counted in
-- skade.cache_stats()) and pruning by partition: manifests by the manifest
-- list's partition summaries, files by their partition values (identity and
-- day transforms), on tables written by Java (identity(category)) and
-- pyiceberg (identity(category), day(ts)).
\pset null '(null)'
\set ECHO none
-- the Java fixtures (under /tmp/skade-fixtures/java) and the pyiceberg ones
-- (under /tmp/skade-fixture-py) are this run's copies (test/regress_prepare.sh)
SET skade.allowed_roots = '/tmp/skade-fixtures,/tmp/skade-fixture-py';
\set ECHO all
SELECT skade.create_namespace('java');
SELECT skade.register_table('java', 'events',
	'file:///tmp/skade-fixtures/java/fixtures/events/metadata/00004-c91ef392-1928-4306-bd9c-e5269c849709.metadata.json') > 0;
SELECT skade.create_namespace('py');
SELECT skade.register_table('py', 'events',
	'file:///tmp/skade-fixture-py/fixtures/events/metadata/00005-a77c57c8-afa0-4139-a90d-8815af754260.metadata.json') > 0;

-- the cache starts empty; one read of a snapshot decodes each manifest once
SELECT skade.cache_reset();
SELECT count(*) AS files FROM skade.files('java', 'events');
SELECT manifest_hits, manifest_misses, manifest_entries, manifest_bytes > 0 AS has_bytes,
	   manifest_capacity >= 1024 * 1024 AS capacity_is_set
FROM skade.cache_stats();
-- and later reads of the same manifests are hits, with the same answer
SELECT count(*) AS files FROM skade.files('java', 'events');
SELECT manifest_hits, manifest_misses, manifest_entries FROM skade.cache_stats();
-- an older snapshot's two manifests are shared with the current one: hits
SELECT count(*) AS files
FROM skade.files('java', 'events', (SELECT snapshot_id FROM skade.snapshots('java', 'events')
									ORDER BY sequence_number LIMIT 1 OFFSET 1));
SELECT manifest_hits, manifest_misses, manifest_entries FROM skade.cache_stats();

-- partition summaries, decoded by the spec: identity bounds as strings, day
-- bounds as dates
SELECT content, added_files_count, existing_files_count, partitions
FROM skade.manifests('py', 'events') ORDER BY sequence_number;

-- manifest pruning: category = 'c' lives in one of the three Java manifests;
-- the others are ruled out by their summaries and never read
SELECT skade.cache_reset();
SELECT partition->>'category' AS category, record_count
FROM skade.plan_files('java', 'events', '{"type": "eq", "term": "category", "value": "c"}');
SELECT manifest_misses AS manifests_read FROM skade.cache_stats();
-- a filter the summaries cannot decide reads all three
SELECT count(*) AS files
FROM skade.plan_files('java', 'events', '{"type": "gt", "term": "id", "value": 0}');
SELECT manifest_misses AS manifests_read FROM skade.cache_stats();

-- file pruning by partition value: day(ts) prunes by the day a file holds,
-- at both ends of the day
SELECT partition, record_count
FROM skade.plan_files('py', 'events', '{"type": "lt", "term": "ts", "value": "2024-03-02T00:00:00"}')
ORDER BY partition::text;
SELECT partition, record_count
FROM skade.plan_files('py', 'events', '{"type": "gt-eq", "term": "ts", "value": "2024-03-02T23:59:59.999999"}')
ORDER BY partition::text;
SELECT count(*) AS files_for_a_later_day
FROM skade.plan_files('py', 'events', '{"type": "gt-eq", "term": "ts", "value": "2024-03-03T00:00:00"}');
-- identity: equality, in, not-eq and null tests on the partition column
SELECT count(*) AS files
FROM skade.plan_files('py', 'events', '{"type": "in", "term": "category", "values": ["a", "zz"]}');
SELECT count(*) AS files FROM skade.files('py', 'events') WHERE partition->>'category' = 'a';
SELECT count(*) AS files
FROM skade.plan_files('py', 'events', '{"type": "is-null", "term": "category"}');
SELECT count(*) AS files
FROM skade.plan_files('py', 'events', '{"type": "not", "child": {"type": "not-null", "term": "category"}}');
-- an or of both partition columns keeps files either side may match
SELECT count(*) AS files
FROM skade.plan_files('py', 'events', '{"type": "or",
	"left": {"type": "eq", "term": "category", "value": "zz"},
	"right": {"type": "lt", "term": "ts", "value": "2024-03-02T00:00:00"}}');
-- every file the filter could match is kept: each file of the snapshot whose
-- partition satisfies the filter is in the plan
SELECT count(*) AS missing
FROM skade.files('py', 'events') f
WHERE f.content = 'data' AND (f.partition->>'ts_day')::date < date '2024-03-02'
  AND f.file_path NOT IN (SELECT file_path FROM skade.plan_files('py', 'events',
		'{"type": "lt", "term": "ts", "value": "2024-03-02T00:00:00"}'));

-- a table without delete files: every planned data file lists none; files()
-- does not plan, so its delete_files is NULL
SELECT DISTINCT content, delete_files FROM skade.plan_files('py', 'events', 'true');
SELECT DISTINCT content, delete_files IS NULL AS not_planned FROM skade.files('py', 'events');

-- rows of a statement outside a transaction block point into the cached
-- manifests (held to the end of the statement's transaction): they stay
-- intact through a cache reset in the same statement, copied by PL/pgSQL's
-- RETURN QUERY and read after it, and equal the rows of a transaction block
-- (copies)
CREATE FUNCTION pg_temp.files_then_reset() RETURNS SETOF skade.content_file
LANGUAGE plpgsql AS $$
BEGIN
	RETURN QUERY SELECT * FROM skade.files('py', 'events');
	PERFORM skade.cache_reset();
	RETURN QUERY SELECT * FROM skade.plan_files('py', 'events', 'true');
	PERFORM skade.cache_reset();
END $$;
CREATE TEMP TABLE held AS
SELECT file_path, columns, manifest, delete_files IS NULL AS from_files FROM pg_temp.files_then_reset();
BEGIN;
CREATE TEMP TABLE copied AS
SELECT file_path, columns, manifest, false AS from_files FROM skade.plan_files('py', 'events', 'true')
UNION ALL
SELECT file_path, columns, manifest, true FROM skade.files('py', 'events');
COMMIT;
SELECT count(*) AS rows, count(*) FILTER (WHERE c.file_path IS NULL) AS differ
FROM held h LEFT JOIN copied c USING (file_path, columns, manifest, from_files);

SELECT skade.drop_table('java', 'events') IS NOT NULL, skade.drop_table('py', 'events') IS NOT NULL;
SELECT skade.drop_namespace('java'), skade.drop_namespace('py');
