-- skade.durability maps onto synchronous_commit for transactions that
-- change a pointer, through either path, and never leaks past them.
SELECT skade.create_namespace('dur');
SELECT skade.register_table('dur', 't', 'file:///d/v0') > 0;

SET skade.durability = 'eventual';
BEGIN;
SHOW synchronous_commit;
SELECT skade.commit_table('dur', 't', 'file:///d/v0', 'file:///d/v1') > 0;
SHOW synchronous_commit;
COMMIT;
SHOW synchronous_commit;

-- JDBC clients' UPDATE gets the same treatment
BEGIN;
UPDATE iceberg_tables SET metadata_location = 'file:///d/v2', previous_metadata_location = 'file:///d/v1'
  WHERE catalog_name = 'skade' AND table_namespace = 'dur' AND table_name = 't' AND metadata_location = 'file:///d/v1';
SHOW synchronous_commit;
COMMIT;

-- reads change nothing
BEGIN;
SELECT metadata_location FROM skade.load_table('dur', 't', snapshots => 'none');
SHOW synchronous_commit;
COMMIT;

-- immediate: even a session running with synchronous_commit = off waits
SET skade.durability = 'immediate';
SET synchronous_commit = off;
BEGIN;
SELECT skade.commit_table('dur', 't', 'file:///d/v2', 'file:///d/v3') > 0;
SHOW synchronous_commit;
COMMIT;
SHOW synchronous_commit;
RESET synchronous_commit;
RESET skade.durability;

SELECT skade.drop_table('dur', 't');
SELECT skade.drop_namespace('dur');
