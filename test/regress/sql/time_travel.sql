-- Time travel: snapshot resolution from the heap (skade.snapshot_map), the
-- STree64 index built by the worker, routing that never answers differently
-- from the heap, load_table_at, load_table_as_of, resolve_many.
-- (skade.conf: the worker serves this database and rebuilds only on request.)
\pset null '(null)'
\set VERBOSITY default
SET skade.allowed_roots = '/tmp/skade_regress/root';
SELECT skade.create_namespace('tt');
-- 00003-v2: snapshots ...000, ...001, ...002 (current); 00004-v2next adds ...003 (current)
SELECT skade.register_table('tt', 'a', 'file:///tmp/skade_regress/root/00003-v2.metadata.json') > 0;
SELECT skade.commit_table('tt', 'a', 'file:///tmp/skade_regress/root/00003-v2.metadata.json',
                          'file:///tmp/skade_regress/root/00004-v2next.metadata.json') > 0;
-- what the commits recorded: the current snapshot of each, and the snapshots each introduced
SELECT snapshot_id, made_current, table_name,
       regexp_replace(metadata_location, '^.*/', '') AS file
FROM skade.snapshot_map ORDER BY snapshot_id, made_current DESC;

-- the heap answers before any index exists
SELECT * FROM skade.resolve_many(ARRAY[3051729675574597000, 3051729675574597002,
                                       3051729675574597003, 42, NULL, -5]);

-- the worker builds and publishes a generation
SELECT skade.rebuild_index() > 0 AS published;
SELECT entries, coverage, dirty_ids, dirty_tables, all_dirty, worker_pid IS NOT NULL AS worker
FROM skade.index_status();
SELECT tree_answers AS t0, heap_answers AS h0 FROM skade.index_status() \gset
SELECT snapshot_id, name, regexp_replace(metadata_location, '^.*/', '') AS file
FROM skade.resolve_many(ARRAY[3051729675574597000, 3051729675574597002,
                              3051729675574597003, 42, NULL, -5]);
SELECT tree_answers - :t0 AS tree, heap_answers - :h0 AS heap FROM skade.index_status();
SELECT skade_test.index_check(ARRAY[3051729675574597000, 3051729675574597001, 3051729675574597002,
                               3051729675574597003, 42, NULL]) AS mismatches;

-- load_table_at: the metadata that holds each snapshot
SELECT snapshot_id, regexp_replace(metadata_location, '^.*/', '') AS file,
       metadata->>'current-snapshot-id' AS current_there
FROM unnest(ARRAY[3051729675574597000, 3051729675574597001, 3051729675574597002,
                  3051729675574597003]) id, skade.load_table_at('tt', 'a', id);
SELECT snapshot_id, metadata IS NULL AS no_metadata
FROM skade.load_table_at('tt', 'a', 3051729675574597001, snapshots => 'none');
SELECT json_array_length(metadata->'snapshots') AS ref_snapshots
FROM skade.load_table_at('tt', 'a', 3051729675574597001, snapshots => 'refs');
SELECT skade.load_table_at('tt', 'a', 42);
SELECT skade.load_table_at('tt', 'a', -1);
SELECT skade.load_table_at('tt', 'a', NULL);
SELECT skade.load_table_at('tt', 'nope', 3051729675574597000);

-- load_table_as_of: the snapshot current at a time, by the snapshot log
SET timezone = 'UTC';
SELECT ts, snapshot_id, made_current_at, regexp_replace(metadata_location, '^.*/', '') AS file
FROM unnest(ARRAY['2023-11-14 22:13:20+00', '2023-11-14 22:13:59+00', '2023-11-14 22:14:20+00',
                  '2023-11-14 22:16:20+00', 'infinity']::timestamptz[]) ts,
     skade.load_table_as_of('tt', 'a', ts);
SELECT skade.load_table_as_of('tt', 'a', '2023-11-14 22:13:19.999+00');
SELECT skade.load_table_as_of('tt', 'a', NULL);
SELECT snapshot_id, metadata IS NULL AS no_metadata
FROM skade.load_table_as_of('tt', 'a', 'infinity', snapshots => 'none');
RESET timezone;

-- new commits come from the live tail on the heap until the next build
SELECT skade.register_table('tt', 'b', 'file:///tmp/skade_regress/root/00001-v3.metadata.json') > 0;
SELECT dirty_ids > 0 AS tail FROM skade.index_status();
SELECT snapshot_id, name, regexp_replace(metadata_location, '^.*/', '') AS file
FROM skade.resolve_many(ARRAY[3051729675574597000, 3051729675574597003]);
SELECT skade_test.index_check(ARRAY[3051729675574597000, 3051729675574597003, 3051729675574597001])
  AS mismatches;
-- a rename: the snapshots follow the table, never the old name
SELECT skade.rename_table('tt', 'a', 'tt', 'a2') > 0;
SELECT snapshot_id, name FROM skade.resolve_many(ARRAY[3051729675574597001, 3051729675574597003]);
SELECT snapshot_id FROM skade.load_table_at('tt', 'a2', 3051729675574597001);
-- a drop: its snapshots resolve no more
SELECT skade.drop_table('tt', 'b') IS NOT NULL;
SELECT snapshot_id, name FROM skade.resolve_many(ARRAY[3051729675574597000]);
SELECT skade_test.index_check(ARRAY[3051729675574597000, 3051729675574597001, 3051729675574597003])
  AS mismatches;
SELECT skade.rebuild_index() > 0 AS published;
SELECT entries, dirty_ids, dirty_tables FROM skade.index_status();
SELECT snapshot_id, name FROM skade.resolve_many(ARRAY[3051729675574597000, 3051729675574597001]);

-- (a transaction whose snapshot predates a build: specs/index_snapshots.spec)

-- with the index disabled, the same answers from the heap
SET skade.index_enabled = off;
SELECT tree_answers AS t2 FROM skade.index_status() \gset
SELECT snapshot_id, name, regexp_replace(metadata_location, '^.*/', '') AS file
FROM skade.resolve_many(ARRAY[3051729675574597001, 3051729675574597003, 42]);
SELECT tree_answers - :t2 AS tree_used FROM skade.index_status();
SELECT skade.rebuild_index();
RESET skade.index_enabled;

-- resolve_locations: resolve_many's locations as one array, the same answers in
-- the same order, from the tree and from the heap (NULL: unknown id or NULL element)
CREATE TEMP TABLE rl_ids AS
SELECT ARRAY[3051729675574597003, NULL, 42, 3051729675574597000, 3051729675574597003,
             3051729675574597001, -1]::bigint[] AS ids;
SELECT array_length(skade.resolve_locations(ids), 1) AS n,
       skade.resolve_locations(ids) IS NOT DISTINCT FROM
         ARRAY(SELECT r.metadata_location FROM skade.resolve_many(ids) WITH ORDINALITY r(s, c, n, t, metadata_location, o) ORDER BY o) AS same_as_resolve_many,
       (SELECT array_agg(regexp_replace(l, '^.*/', '')) FROM unnest(skade.resolve_locations(ids)) l) AS files
FROM rl_ids;
SET skade.index_enabled = off;
SELECT skade.resolve_locations(ids) IS NOT DISTINCT FROM
         ARRAY(SELECT r.metadata_location FROM skade.resolve_many(ids) WITH ORDINALITY r(s, c, n, t, metadata_location, o) ORDER BY o) AS same_from_heap
FROM rl_ids;
RESET skade.index_enabled;
SELECT skade.resolve_locations('{}') AS empty, skade.resolve_locations(ARRAY[NULL]::bigint[]) AS one_null,
       array_dims(skade.resolve_locations(ARRAY[3051729675574597001])) AS dims;
SELECT skade.resolve_locations(NULL);
SELECT skade.resolve_locations(ARRAY[[1, 2], [3, 4]]::bigint[]);
SELECT cardinality(a), cardinality(array_remove(a, NULL)) AS known
FROM (SELECT skade.resolve_locations(array(SELECT g FROM generate_series(1, 100000) g)) a) x;

-- bad input
SELECT * FROM skade.resolve_many(NULL);
SELECT * FROM skade.resolve_many(ARRAY[[1, 2], [3, 4]]::bigint[]);
SELECT count(*) FROM skade.resolve_many('{}');
SELECT count(*), count(metadata_location) FROM skade.resolve_many(array(SELECT g FROM generate_series(1, 100000) g));

SELECT skade.drop_table('tt', 'a2') IS NOT NULL;
SELECT skade.drop_namespace('tt');
SELECT count(*) AS rows_left FROM skade.snapshot_map;
