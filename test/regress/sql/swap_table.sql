-- swap_table(): rebuild-and-swap.  live takes temp's metadata and temp
-- disappears in one transaction; with prune_log the older history of both
-- moves to skade.commit_log_archive (the log itself stays append-only) and
-- time travel forgets the retired snapshots.
\pset null '(null)'
SET skade.allowed_roots = '/tmp/skade_regress';
SET skade.write_roots = '/tmp/skade_regress/wh';
CREATE FUNCTION pg_temp.err(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE q;
	RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE || ': ' || SQLERRM;
END $$;
CREATE FUNCTION pg_temp.masked(loc text) RETURNS text LANGUAGE sql AS $$
	SELECT regexp_replace(regexp_replace(loc, '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}', '<uuid>'), '^.*/wh/', '')
$$;
SELECT skade.create_namespace('sw', '{"location": "/tmp/skade_regress/wh/sw"}');
SELECT pg_temp.masked(skade.create_table('sw', 'live', '{"fields": [{"id": 1, "name": "id", "required": true, "type": "long"}]}')) AS live;
SELECT pg_temp.masked(skade.update_table('sw', 'live', '[]', '[
  {"action": "add-snapshot", "snapshot": {"snapshot-id": 101, "sequence-number": 1, "timestamp-ms": 1700000000000, "manifest-list": "x", "summary": {"operation": "append"}}},
  {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 101, "type": "branch"}]')) AS live_appended;
SELECT pg_temp.masked(skade.create_table('sw', 'live_rebuilt', '{"fields": [{"id": 1, "name": "id", "required": true, "type": "long"}]}')) AS temp;
SELECT pg_temp.masked(skade.update_table('sw', 'live_rebuilt', '[]', '[
  {"action": "add-snapshot", "snapshot": {"snapshot-id": 201, "sequence-number": 1, "timestamp-ms": 1700000001000, "manifest-list": "y", "summary": {"operation": "replace"}}},
  {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 201, "type": "branch"}]')) AS temp_rebuilt;
SELECT table_name, op FROM skade.commit_log WHERE table_namespace = 'sw' ORDER BY seq;
SELECT snapshot_id, name FROM skade.resolve_many(ARRAY[101, 201]);

-- bad calls change nothing
SELECT pg_temp.err($$SELECT skade.swap_table('sw', 'live', 'live')$$) AS itself;
SELECT pg_temp.err($$SELECT skade.swap_table('sw', 'live', 'nope')$$) AS no_temp;
SELECT pg_temp.err($$SELECT skade.swap_table('sw', 'nope', 'live_rebuilt')$$) AS no_live;
-- the log itself stays append-only for everyone else
SELECT pg_temp.err($$DELETE FROM skade.commit_log WHERE table_namespace = 'sw'$$) AS delete_refused;

-- (the new metadata belongs to another table: skade.validate_commits warns)
SET client_min_messages = error;
SELECT pg_temp.masked(skade.swap_table('sw', 'live', 'live_rebuilt')) AS swapped;
RESET client_min_messages;
SELECT pg_temp.masked(metadata_location) AS live_now, skade.table_exists('sw', 'live_rebuilt') AS temp_exists
FROM skade.load_table('sw', 'live', 'none');
-- live's history starts at the swap; the rest is in the archive, seq for seq
SELECT table_name, op, pg_temp.masked(metadata_location) AS location FROM skade.commit_log WHERE table_namespace = 'sw' ORDER BY seq;
SELECT table_name, op FROM skade.commit_log_archive WHERE table_namespace = 'sw' ORDER BY seq;
SELECT (SELECT count(*) FROM skade.commit_log WHERE table_namespace = 'sw')
     + (SELECT count(*) FROM skade.commit_log_archive WHERE table_namespace = 'sw') AS rows_kept;
-- time travel: the retired snapshot is forgotten, the swapped-in one resolves to live
SELECT snapshot_id, name FROM skade.resolve_many(ARRAY[101, 201]);
SELECT skade_test.index_check(ARRAY[101, 201]) AS index_mismatches;
-- and live takes commits on top
SELECT pg_temp.masked(skade.update_table('sw', 'live', '[{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": 201}]',
  '[{"action": "set-properties", "updates": {"swapped": "yes"}}]')) AS after_swap;

-- without pruning the history stays
SELECT pg_temp.masked(skade.create_table('sw', 'other', '{"fields": [{"id": 1, "name": "id", "required": true, "type": "long"}]}')) AS other;
SET client_min_messages = error;
SELECT pg_temp.masked(skade.swap_table('sw', 'live', 'other', prune_log => false)) AS swapped_again;
RESET client_min_messages;
SELECT table_name, op FROM skade.commit_log WHERE table_namespace = 'sw' ORDER BY seq;
