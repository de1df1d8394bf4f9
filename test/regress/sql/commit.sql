-- Compare-and-swap commits: commit_table and commit_transaction.
\pset null '(null)'
SELECT skade.create_namespace('c');
SELECT skade.register_table('c', 'a', 'file:///wh/a/00000.metadata.json') > 0;
SELECT skade.register_table('c', 'b', 'file:///wh/b/00000.metadata.json') > 0;

SELECT skade.commit_table('c', 'a', 'file:///wh/a/00000.metadata.json',
                          'file:///wh/a/00001.metadata.json') > 0 AS committed;
SELECT * FROM skade.load_table('c', 'a', snapshots => 'none');

-- a stale expected location loses: 40001 with the current location
\set VERBOSITY default
SELECT skade.commit_table('c', 'a', 'file:///wh/a/00000.metadata.json',
                          'file:///wh/a/00002.metadata.json');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM skade.load_table('c', 'a', snapshots => 'none');
SELECT skade.commit_table('c', 'missing', 'file:///x', 'file:///y');
\echo :LAST_ERROR_SQLSTATE

-- a rolled-back commit leaves no trace
BEGIN;
SELECT skade.commit_table('c', 'a', 'file:///wh/a/00001.metadata.json',
                          'file:///wh/a/rolled-back.metadata.json') > 0;
ROLLBACK;
SELECT metadata_location FROM skade.load_table('c', 'a', snapshots => 'none');
SELECT count(*) FROM skade.commit_log WHERE metadata_location LIKE '%rolled-back%';

-- several tables, all or nothing
SELECT namespace, name, metadata_location FROM skade.commit_transaction('[
  {"namespace": "c", "name": "b", "expected_location": "file:///wh/b/00000.metadata.json",
   "new_location": "file:///wh/b/00001.metadata.json"},
  {"namespace": "c", "name": "a", "expected_location": "file:///wh/a/00001.metadata.json",
   "new_location": "file:///wh/a/00002.metadata.json"}]');
-- ... both or neither: the second change is stale, so b is not committed either
SELECT * FROM skade.commit_transaction('[
  {"namespace": "c", "name": "b", "expected_location": "file:///wh/b/00001.metadata.json",
   "new_location": "file:///wh/b/00002.metadata.json"},
  {"namespace": "c", "name": "a", "expected_location": "file:///wh/a/00001.metadata.json",
   "new_location": "file:///wh/a/00003.metadata.json"}]');
\echo :LAST_ERROR_SQLSTATE
SELECT name, metadata_location FROM skade.load_table('c', 'a', snapshots => 'none') CROSS JOIN (VALUES ('a')) v(name)
UNION ALL
SELECT name, metadata_location FROM skade.load_table('c', 'b', snapshots => 'none') CROSS JOIN (VALUES ('b')) v(name);

-- malformed changes: nothing applied
SELECT * FROM skade.commit_transaction(NULL);
SELECT * FROM skade.commit_transaction('{}');
SELECT * FROM skade.commit_transaction('"x"');
SELECT * FROM skade.commit_transaction('[]');
SELECT * FROM skade.commit_transaction('[1]');
SELECT * FROM skade.commit_transaction('[{"namespace": "c", "name": "a", "expected_location": "x"}]');
SELECT * FROM skade.commit_transaction('[{"namespace": "c", "name": "a", "expected_location": "x", "new_location": 5}]');
SELECT * FROM skade.commit_transaction('[{"namespace": "c", "name": "a", "expected_location": "x", "new_location": "y", "extra": 1}]');
SELECT * FROM skade.commit_transaction('[{"namespace": "c..d", "name": "a", "expected_location": "x", "new_location": "y"}]');
SELECT * FROM skade.commit_transaction('[
  {"namespace": "c", "name": "a", "expected_location": "file:///wh/a/00002.metadata.json", "new_location": "y1"},
  {"namespace": "c", "name": "a", "expected_location": "y1", "new_location": "y2"}]');
SELECT * FROM skade.commit_transaction('[{"namespace": "c", "name": "nope", "expected_location": "x", "new_location": "y"}]');
SELECT 'not json'::jsonb;

SELECT metadata_location FROM skade.load_table('c', 'a', snapshots => 'none');
SELECT op, table_name, metadata_location, previous_metadata_location
FROM skade.commit_log WHERE table_namespace = 'c' ORDER BY seq;

SELECT skade.drop_table('c', 'a') IS NOT NULL, skade.drop_table('c', 'b') IS NOT NULL;
SELECT skade.drop_namespace('c');
