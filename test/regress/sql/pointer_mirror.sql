-- The L1 pointer mirror: answers from shared memory, but never differently
-- from the heap for the caller's snapshot.  (Concurrent readers and writers
-- at both isolation levels: specs/mirror_snapshots.spec, t/004.)
\pset null '(null)'
SELECT skade.create_namespace('mir');
SELECT skade.register_table('mir', 't', 'file:///m/v1') > 0;
SELECT pointer_hits AS h0 FROM skade.cache_stats() \gset
-- warm: answered by the mirror
SELECT metadata_location FROM skade.load_table('mir', 't', snapshots => 'none');
SELECT skade.table_exists('mir', 't');
SELECT pointer_hits - :h0 AS mirror_hits FROM skade.cache_stats();

-- a JDBC client's commit is seen at once
UPDATE iceberg_tables SET metadata_location = 'file:///m/v2', previous_metadata_location = 'file:///m/v1'
WHERE catalog_name = 'skade' AND table_namespace = 'mir' AND table_name = 't' AND metadata_location = 'file:///m/v1';
SELECT metadata_location, previous_metadata_location FROM skade.load_table('mir', 't', snapshots => 'none');
-- ... so is a change of previous_metadata_location alone
UPDATE iceberg_tables SET previous_metadata_location = NULL WHERE table_namespace = 'mir' AND table_name = 't';
SELECT metadata_location, previous_metadata_location FROM skade.load_table('mir', 't', snapshots => 'none');

-- own uncommitted changes are seen by their transaction only, and vanish on rollback
BEGIN;
SELECT skade.commit_table('mir', 't', 'file:///m/v2', 'file:///m/v3') > 0;
SELECT metadata_location FROM skade.load_table('mir', 't', snapshots => 'none');
ROLLBACK;
SELECT metadata_location FROM skade.load_table('mir', 't', snapshots => 'none');

-- a rolled-back subtransaction is not installed when the transaction commits
BEGIN;
SAVEPOINT s1;
SELECT skade.commit_table('mir', 't', 'file:///m/v2', 'file:///m/v-sub') > 0;
ROLLBACK TO SAVEPOINT s1;
SELECT skade.commit_table('mir', 't', 'file:///m/v2', 'file:///m/v4') > 0;
SAVEPOINT s2;
SELECT skade.commit_table('mir', 't', 'file:///m/v4', 'file:///m/v5') > 0;
RELEASE SAVEPOINT s2;
COMMIT;
SELECT metadata_location, previous_metadata_location FROM skade.load_table('mir', 't', snapshots => 'none');
SELECT metadata_location FROM iceberg_tables WHERE table_namespace = 'mir' AND table_name = 't';

-- renames, views and drops
SELECT skade.rename_table('mir', 't', 'mir', 't2') > 0;
SELECT skade.table_exists('mir', 't'), skade.table_exists('mir', 't2');
SELECT metadata_location FROM skade.load_table('mir', 't2', snapshots => 'none');
UPDATE iceberg_tables SET iceberg_type = 'VIEW' WHERE table_namespace = 'mir' AND table_name = 't2';
SELECT skade.table_exists('mir', 't2');
SELECT skade.load_table('mir', 't2', snapshots => 'none');
UPDATE iceberg_tables SET iceberg_type = 'TABLE' WHERE table_namespace = 'mir' AND table_name = 't2';
SELECT skade.table_exists('mir', 't2');
DELETE FROM iceberg_tables WHERE table_namespace = 'mir' AND table_name = 't2';
SELECT skade.table_exists('mir', 't2');
SELECT skade.load_table('mir', 't2', snapshots => 'none');

-- TRUNCATE empties the mirror with the table
SELECT skade.register_table('mir', 'u', 'file:///m/u1') > 0;
SELECT skade.table_exists('mir', 'u');
BEGIN;
TRUNCATE iceberg_tables;
SELECT skade.table_exists('mir', 'u');
ROLLBACK;
SELECT skade.table_exists('mir', 'u');
TRUNCATE iceberg_tables;
SELECT skade.table_exists('mir', 'u');

-- disabling the trigger detaches the catalog (changes would go unseen)
SELECT skade.register_table('mir', 'w', 'file:///m/w1') > 0;
ALTER TABLE iceberg_tables DISABLE TRIGGER skade_log_pointer_change;
SELECT skade.table_exists('mir', 'w');
ALTER TABLE iceberg_tables ENABLE TRIGGER skade_log_pointer_change;
SELECT skade.table_exists('mir', 'w');
ALTER TABLE iceberg_tables ENABLE ALWAYS TRIGGER skade_log_pointer_change;
SELECT skade.table_exists('mir', 'w');

SELECT skade.drop_table('mir', 'w');
SELECT skade.drop_namespace('mir');
