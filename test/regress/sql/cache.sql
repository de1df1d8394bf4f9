-- The L0 metadata cache: hits, misses, byte-bounded eviction, reset.
-- (skade.conf gives this instance a 1 MB cache; coalescing of concurrent
-- misses is shown in t/003_cache_concurrency.pl.)
\set VERBOSITY default
SET skade.allowed_roots = '/tmp/skade_regress/root';
-- four ~300 kB metadata files: more than the cache holds together
SELECT format($$COPY (SELECT jsonb_build_object('format-version', 2, 'table-uuid', 'u-%s',
  'location', 'file:/wh/big', 'last-updated-ms', 1, 'last-sequence-number', 400,
  'current-schema-id', 0, 'schemas', jsonb_build_array(jsonb_build_object('type', 'struct', 'schema-id', 0, 'fields', '[]'::jsonb)),
  'current-snapshot-id', 400,
  'snapshots', (SELECT jsonb_agg(jsonb_build_object('snapshot-id', i, 'sequence-number', i,
      'timestamp-ms', 1700000000000 + i, 'manifest-list', 'file:/wh/big/metadata/snap-' || i || '-' || repeat('x', 500) || '.avro',
      'summary', jsonb_build_object('operation', 'append', 'added-records', i::text)))
    FROM generate_series(1, 400) i))::text)
  TO '/tmp/skade_regress/root/big%s.metadata.json'$$, n, n)
FROM generate_series(1, 4) n \gexec

SELECT skade.create_namespace('cache');
SELECT skade.register_table('cache', 'big' || n, 'file:///tmp/skade_regress/root/big' || n || '.metadata.json') > 0
FROM generate_series(1, 4) n;

SELECT skade.cache_reset();
SELECT hits, misses, coalesced_waits, evictions, entries, bytes, capacity > 0 AS has_capacity
FROM skade.cache_stats();

-- a miss, then hits
SELECT json_array_length(metadata->'snapshots') FROM skade.load_table('cache', 'big1');
SELECT json_array_length(metadata->'snapshots') FROM skade.load_table('cache', 'big1');
SELECT count(*) FROM skade.snapshots('cache', 'big1');
SELECT hits, misses, evictions, entries FROM skade.cache_stats();

-- loading all four evicts the least recently used; bytes never exceed capacity
SELECT n, json_array_length(metadata->'snapshots')
FROM generate_series(1, 4) n, skade.load_table('cache', 'big' || n);
SELECT misses, evictions > 0 AS evicted, entries < 4 AS some_evicted, bytes <= capacity AS bounded
FROM skade.cache_stats();
-- an evicted entry is simply read again, identical
SELECT metadata::text = pg_read_file('/tmp/skade_regress/root/big1.metadata.json') AS identical
FROM skade.load_table('cache', 'big1');

-- a file larger than the whole cache is served, just not cached
SELECT format($$COPY (SELECT jsonb_build_object('format-version', 2, 'table-uuid', 'huge',
  'location', 'file:/wh/huge', 'last-updated-ms', 1, 'last-sequence-number', 0,
  'current-schema-id', 0, 'schemas', jsonb_build_array(jsonb_build_object('type', 'struct', 'schema-id', 0, 'fields', '[]'::jsonb)),
  'properties', (SELECT jsonb_object_agg('p' || i, repeat('v', 100)) FROM generate_series(1, 12000) i))::text)
  TO '/tmp/skade_regress/root/huge.metadata.json'$$) \gexec
SELECT skade.register_table('cache', 'huge', 'file:///tmp/skade_regress/root/huge.metadata.json') > 0;
SELECT skade.cache_reset();
SELECT length(metadata::text) > 1024 * 1024 AS bigger_than_cache FROM skade.load_table('cache', 'huge');
SELECT length(metadata::text) > 1024 * 1024 AS served_again FROM skade.load_table('cache', 'huge');
SELECT hits, misses, entries FROM skade.cache_stats();

-- six ~60 kB files, each less than a quarter of the cache
SELECT format($$COPY (SELECT jsonb_build_object('format-version', 2, 'table-uuid', 'u-s%s',
  'location', 'file:/wh/small', 'last-updated-ms', 1, 'last-sequence-number', 100,
  'current-schema-id', 0, 'schemas', jsonb_build_array(jsonb_build_object('type', 'struct', 'schema-id', 0, 'fields', '[]'::jsonb)),
  'current-snapshot-id', 100,
  'snapshots', (SELECT jsonb_agg(jsonb_build_object('snapshot-id', i, 'sequence-number', i,
      'timestamp-ms', 1700000000000 + i, 'manifest-list', 'file:/wh/small/metadata/snap-' || i || '-' || repeat('y', 500) || '.avro',
      'summary', jsonb_build_object('operation', 'append', 'added-records', i::text)))
    FROM generate_series(1, 100) i))::text)
  TO '/tmp/skade_regress/root/small%s.metadata.json'$$, n, n)
FROM generate_series(1, 6) n \gexec
SELECT skade.register_table('cache', 'small' || n, 'file:///tmp/skade_regress/root/small' || n || '.metadata.json') > 0
FROM generate_series(1, 6) n;

-- table_metadata() serves the text in place, pinning the entry until the
-- transaction ends: a pinned entry survives reset (and eviction)
SELECT skade.cache_reset();
BEGIN;
SELECT octet_length(skade.table_metadata('cache', 'small3')::text) > 0 AS served;
SELECT octet_length(skade.table_metadata('cache', 'small3')::text) > 0 AS served_in_place;
SELECT skade.cache_reset();
SELECT entries AS pinned_entries_kept FROM skade.cache_stats();
COMMIT;
SELECT skade.cache_reset();
SELECT entries AS after_commit FROM skade.cache_stats();
-- an error releases the pins too
BEGIN;
SELECT octet_length(skade.table_metadata('cache', 'small3')::text) > 0 AS served;
SELECT octet_length(skade.table_metadata('cache', 'small3')::text) > 0 AS served_in_place;
SELECT 1 / 0;
ROLLBACK;
SELECT skade.cache_reset();
SELECT entries AS after_rollback FROM skade.cache_stats();

-- load_table() in FROM is inlined: the pointers come from load_table_pointers(),
-- the text from table_metadata(), which runs only when the query uses it
EXPLAIN (VERBOSE, COSTS OFF) SELECT metadata FROM skade.load_table('cache', 'small4');
SELECT skade.cache_reset();
SELECT metadata_location LIKE '%/small4.metadata.json' AS pointer_only FROM skade.load_table('cache', 'small4');
SELECT misses AS no_file_read FROM skade.cache_stats();

-- load_table() in FROM (inlined: table_metadata() beside the pointers) hands
-- out the pinned text itself, not a copy: the
-- value stays right wherever it goes, also where it outlives the pin
SELECT skade.cache_reset();
SELECT count(metadata) FROM generate_series(1, 6) n, skade.load_table('cache', 'small' || n);
BEGIN;
SELECT metadata::text = pg_read_file('/tmp/skade_regress/root/small1.metadata.json') AS identical
FROM skade.load_table('cache', 'small1');
SELECT skade.cache_reset();
SELECT entries AS pinned_entries_kept FROM skade.cache_stats();
SELECT (l).metadata::text = pg_read_file('/tmp/skade_regress/root/small1.metadata.json') AS whole_row
FROM (SELECT l FROM skade.load_table('cache', 'small1') l) s;
SELECT (row_to_json(l)->'metadata')::jsonb = metadata::jsonb AS as_row_value FROM skade.load_table('cache', 'small1') l;
DECLARE held CURSOR WITH HOLD FOR SELECT metadata FROM skade.load_table('cache', 'small1');
CREATE TEMP TABLE kept AS SELECT * FROM skade.load_table('cache', 'small1');
COMMIT;
-- the pin is gone: empty the cache and fill it with others, then read what was kept
SELECT skade.cache_reset();
SELECT count(metadata) FROM generate_series(1, 4) n, skade.load_table('cache', 'big' || n);
FETCH ALL FROM held \gset
SELECT :'metadata' = pg_read_file('/tmp/skade_regress/root/small1.metadata.json') AS held_cursor;
CLOSE held;
SELECT metadata::text = pg_read_file('/tmp/skade_regress/root/small1.metadata.json') AS stored_row FROM kept;
DROP TABLE kept;
-- a procedure's variable across COMMIT
SELECT count(metadata) FROM skade.load_table('cache', 'small2');
DO $$
DECLARE
	v json;
BEGIN
	SELECT metadata INTO v FROM skade.load_table('cache', 'small2');
	COMMIT;
	PERFORM skade.cache_reset();
	PERFORM count(metadata) FROM generate_series(1, 4) n, skade.load_table('cache', 'big' || n);
	RAISE NOTICE 'kept across commit: %', v::text = pg_read_file('/tmp/skade_regress/root/small2.metadata.json');
END $$;
-- one transaction pins at most a quarter of the cache this way; the rest is copied
SELECT skade.cache_reset();
SELECT count(metadata) FROM generate_series(1, 6) n, skade.load_table('cache', 'small' || n);
BEGIN;
SELECT bool_and(metadata::text = pg_read_file('/tmp/skade_regress/root/small' || n || '.metadata.json')) AS all_identical
FROM generate_series(1, 6) n, skade.load_table('cache', 'small' || n);
SELECT skade.cache_reset();
SELECT entries BETWEEN 1 AND 5 AS some_pinned, bytes <= capacity / 4 AS at_most_a_quarter FROM skade.cache_stats();
COMMIT;

-- reset empties it and zeroes the counters
SELECT skade.cache_reset();
SELECT hits, misses, coalesced_waits, evictions, entries, bytes FROM skade.cache_stats();

SELECT count(*) FROM (SELECT skade.drop_table('cache', name) FROM skade.list_tables('cache') name) s;
SELECT skade.drop_namespace('cache');
