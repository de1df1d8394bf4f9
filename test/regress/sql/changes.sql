-- skade.changes(): the commit log as an exact, resumable feed of the catalog's
-- changes (the ordering guarantee under concurrency: test/isolation/specs/change_feed.spec)
\pset null '(null)'
SET skade.allowed_roots = '/tmp/skade_regress';
SET skade.write_roots = '/tmp/skade_regress/wh';
SELECT coalesce(max(seq), 0) AS s0 FROM skade.commit_log \gset
SELECT skade.create_namespace('chg', '{"location": "/tmp/skade_regress/wh/chg"}');

-- tables with metadata: the snapshot ids each commit added and removed
SELECT skade.create_table('chg', 't', '{"fields": [{"id": 1, "name": "id", "required": true, "type": "long"}]}') IS NOT NULL AS created;
SELECT skade.update_table('chg', 't', '[]', '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 71, "sequence-number": 1,
    "timestamp-ms": 1764000000000, "manifest-list": "/m/snap-71.avro", "summary": {"operation": "append"}}},
  {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 71, "type": "branch"}]') IS NOT NULL AS committed;
SELECT skade.update_table('chg', 't', '[]', '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 72, "parent-snapshot-id": 71,
    "sequence-number": 2, "timestamp-ms": 1764000001000, "manifest-list": "/m/snap-72.avro", "summary": {"operation": "append"}}},
  {"action": "add-snapshot", "snapshot": {"snapshot-id": 73, "parent-snapshot-id": 72,
    "sequence-number": 3, "timestamp-ms": 1764000002000, "manifest-list": "/m/snap-73.avro", "summary": {"operation": "append"}}},
  {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 73, "type": "branch"}]') IS NOT NULL AS committed;
SELECT skade.update_table('chg', 't', '[]', '[{"action": "remove-snapshots", "snapshot-ids": [71, 72]}]') IS NOT NULL AS committed;
-- pointers only (no readable metadata: the snapshots are unknown), a JDBC
-- client's own DML, a rename, a drop, a grant (logged, not a change of an object)
SELECT skade.register_table('chg', 'r', 'file:///c/r/v1.metadata.json') > 0 AS registered;
UPDATE iceberg_tables SET metadata_location = 'file:///c/r/v2.metadata.json', previous_metadata_location = 'file:///c/r/v1.metadata.json'
  WHERE catalog_name = 'skade' AND table_namespace = 'chg' AND table_name = 'r' AND metadata_location = 'file:///c/r/v1.metadata.json';
SELECT skade.rename_table('chg', 'r', 'chg', 'r2') > 0 AS renamed;
CREATE ROLE chg_user;
GRANT skade_user TO chg_user;
SELECT skade.grant('read', 'chg_user', 'chg', 't');
SELECT skade.drop_table('chg', 'r2') IS NOT NULL AS dropped;

SELECT seq - :s0 AS n, op, namespace, name, object_type, previous_namespace AS prev_ns, previous_name AS prev_name,
       regexp_replace(metadata_location, '[0-9a-f]{8}-[0-9a-f-]{27}', '<uuid>') AS location,
       regexp_replace(previous_metadata_location, '[0-9a-f]{8}-[0-9a-f-]{27}', '<uuid>') AS previous,
       snapshot_ids_added AS added, snapshot_ids_removed AS removed, committed_by = current_user AS by_me
FROM skade.changes(:s0);
-- every log row since has its feed row; nobody else was writing
SELECT count(*) AS log_rows, count(f.seq) AS feed_rows, bool_and(f.pending_xacts = '{}') AS none_pending
FROM skade.commit_log l LEFT JOIN skade.commit_log_feed f USING (seq) WHERE l.seq > :s0;

-- resumable from any position, a page at a time
SELECT seq - :s0 AS n, op FROM skade.changes(:s0 + 2, 2);
SELECT seq - :s0 AS n, op FROM skade.changes(:s0 + 8, 5);
SELECT count(*) AS after_the_end FROM skade.changes((SELECT max(seq) FROM skade.commit_log));
-- another catalog's changes are its own
SELECT count(*) AS other_catalog FROM skade.changes(:s0, 1000, 'elsewhere');
-- rows moved to the archive are still handed out, in the same place
SELECT skade.prune_commit_log('chg', 't', :s0 + 3) AS pruned;
SELECT string_agg((seq - :s0)::text || ':' || op, ' ' ORDER BY seq) AS feed FROM skade.changes(:s0);

-- members of skade_user see what they may read: t, not r
SET ROLE chg_user;
SELECT seq - :s0 AS n, op, name FROM skade.changes(:s0);
SELECT count(*) AS feed_rows_seen FROM skade.commit_log_feed WHERE seq > :s0;
RESET ROLE;
-- nobody writes the feed but skade
CREATE ROLE chg_writer;
GRANT skade_writer TO chg_writer;
SET ROLE chg_writer;
INSERT INTO skade.commit_log_feed VALUES (0, '{}');
RESET ROLE;

-- bad input
SELECT * FROM skade.changes(NULL);
SELECT * FROM skade.changes(0, NULL);
SELECT * FROM skade.changes(0, 0);
SELECT * FROM skade.changes(0, 100001);
SELECT count(*) AS from_before_the_start FROM skade.changes(-5, 1) WHERE seq > 0;

SELECT skade.revoke('read', 'chg_user', 'chg', 't');
SELECT skade.drop_table('chg', 't') IS NOT NULL AS dropped;
SELECT skade.drop_namespace('chg');
DROP ROLE chg_user, chg_writer;
