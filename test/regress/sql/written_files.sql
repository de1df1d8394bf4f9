-- What becomes of the files skade writes (written_files.c): each is in the
-- journal before it holds anything; a transaction that aborts (or a
-- savepoint rolled back) takes its files with it; a transaction that never
-- committed and could not clean up (here a prepared transaction rolled back
-- by another backend; a crash in t/017_orphans.pl) leaves an orphan that
-- skade.orphan_files() lists and skade.sweep_orphan_files() removes; and
-- expire_snapshots(delete_files => true) removes what it frees at commit.
\pset null '(null)'
SET skade.allowed_roots = '/tmp/skade_regress,/tmp/skade-fixture2';
SET skade.write_roots = '/tmp/skade_regress/wh,/tmp/skade-fixture2';
CREATE FUNCTION pg_temp.err(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE q;
	RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE || ': ' || regexp_replace(SQLERRM, '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}', '<uuid>', 'g');
END $$;
CREATE FUNCTION pg_temp.present(loc text) RETURNS boolean LANGUAGE sql AS $$
	SELECT (pg_stat_file(regexp_replace(loc, '^file:', ''), true)).size IS NOT NULL
$$;
CREATE FUNCTION pg_temp.prop(k text) RETURNS jsonb LANGUAGE sql AS $$
	SELECT jsonb_build_array(jsonb_build_object('action', 'set-properties', 'updates', jsonb_build_object(k, '1')))
$$;

SELECT skade.create_namespace('wf', '{"location": "/tmp/skade_regress/wh/wf"}');
SELECT skade.create_table('wf', 't', '{"fields": [{"id": 1, "name": "id", "required": true, "type": "long"}]}') AS created \gset
-- a committed file: in the journal, its transaction committed
SELECT state, present FROM skade.written_files() WHERE location = :'created';

-- an update rolled back: its file goes with it (fast path and engine)
BEGIN;
SELECT skade.update_table('wf', 't', '[]', pg_temp.prop('a')) AS fast_rolled \gset
SET LOCAL skade.update_fast_path = off;
SELECT skade.update_table('wf', 't', '[]', pg_temp.prop('b')) AS slow_rolled \gset
SELECT pg_temp.present(:'fast_rolled') AS fast_inside, pg_temp.present(:'slow_rolled') AS slow_inside;
SELECT state FROM skade.written_files() WHERE location = :'slow_rolled';
ROLLBACK;
SELECT pg_temp.present(:'fast_rolled') AS fast_after, pg_temp.present(:'slow_rolled') AS slow_after;
SELECT state, present FROM skade.written_files() WHERE location IN (:'fast_rolled', :'slow_rolled');
-- a savepoint rolled back in a transaction that commits; an error after the
-- write (the statement's subtransaction in pg_temp.err)
BEGIN;
SAVEPOINT s;
SELECT skade.update_table('wf', 't', '[]', pg_temp.prop('c')) AS in_savepoint \gset
ROLLBACK TO SAVEPOINT s;
SELECT skade.update_table('wf', 't', '[]', pg_temp.prop('d')) AS kept \gset
COMMIT;
SELECT pg_temp.present(:'in_savepoint') AS savepoint_file, pg_temp.present(:'kept') AS committed_file;
SELECT pg_temp.err($$SELECT skade.update_table('wf', 't', '[]', pg_temp.prop('e')), 1 / 0$$) AS error_after_write;
SELECT count(*) AS files_of_e FROM skade.written_files() w WHERE w.present AND w.state <> 'committed';
SELECT count(*) AS orphans FROM skade.orphan_files();

-- a prepared transaction rolled back by another command: nobody holds its
-- list of files, the journal does
BEGIN;
SELECT skade.update_table('wf', 't', '[]', pg_temp.prop('f')) AS prepared \gset
PREPARE TRANSACTION 'skade_wf';
SELECT state FROM skade.written_files() WHERE location = :'prepared';
SELECT count(*) AS orphans_while_prepared FROM skade.orphan_files();
ROLLBACK PREPARED 'skade_wf';
SELECT pg_temp.present(:'prepared') AS left_behind;
SELECT location = :'prepared' AS is_the_orphan FROM skade.orphan_files();
-- only the owner or a superuser sweeps; only orphans are removed
SET ROLE skade_writer;
SELECT pg_temp.err($$SELECT * FROM skade.sweep_orphan_files()$$) AS writer_sweeps;
SELECT pg_temp.err($$SELECT * FROM skade.orphan_files()$$) AS writer_lists;
RESET ROLE;
SELECT pg_temp.err(format('SELECT skade.remove_written_file(%L)', :'kept')) AS committed_file;
SELECT pg_temp.err($$SELECT skade.remove_written_file('/tmp/skade_regress/wh/wf/elsewhere.json')$$) AS not_listed;
SELECT location = :'prepared' AS swept, removed FROM skade.sweep_orphan_files();
SELECT pg_temp.present(:'prepared') AS after_sweep, count(*) AS orphans_left FROM skade.orphan_files();
-- the pointer never saw any of them
SELECT metadata_location = :'kept' AS pointer_is_kept FROM skade.load_table('wf', 't', 'none');
SELECT count(*) AS logged FROM skade.commit_log
 WHERE metadata_location IN (:'fast_rolled', :'slow_rolled', :'in_savepoint', :'prepared');
-- the sweep compacted the journal: committed entries and removed files left it
SELECT count(*) AS journal_entries FROM skade.written_files();

-- expire_snapshots deleting what it frees, on a copy of Java's fixture
SELECT skade.register_table('wf', 'exp',
	'/tmp/skade-fixture2/java/fixtures/events/metadata/00004-c91ef392-1928-4306-bd9c-e5269c849709.metadata.json') > 0 AS registered;
SELECT count(*) AS snapshots, (SELECT count(*) FROM skade.files('wf', 'exp')) AS data_files FROM skade.snapshots('wf', 'exp');
-- rolled back: nothing deleted
BEGIN;
CREATE TEMP TABLE freed AS SELECT * FROM skade.expire_snapshots('wf', 'exp', older_than => now(), delete_files => true);
SELECT kind, count(*) AS files, bool_and(pg_temp.present(file_path)) AS present_before_commit FROM freed GROUP BY kind;
ROLLBACK;
SELECT count(*) AS snapshots_after_rollback FROM skade.snapshots('wf', 'exp');
-- a file outside skade.write_roots: refused, nothing expired
SET skade.write_roots = '/tmp/skade_regress/wh';
SELECT pg_temp.err($$SELECT * FROM skade.expire_snapshots('wf', 'exp', older_than => now(), delete_files => true)$$) AS outside_roots;
SELECT count(*) AS snapshots_kept FROM skade.snapshots('wf', 'exp');
SET skade.write_roots = '/tmp/skade_regress/wh,/tmp/skade-fixture2';
-- committed: the files are gone; the table reads as before
CREATE TEMP TABLE freed AS SELECT * FROM skade.expire_snapshots('wf', 'exp', older_than => now(), delete_files => true);
SELECT kind, count(*) AS files, bool_or(pg_temp.present(file_path)) AS any_left FROM freed GROUP BY kind;
SELECT count(*) AS snapshots, (SELECT count(*) FROM skade.files('wf', 'exp')) AS data_files,
	   (SELECT bool_and(pg_temp.present(file_path)) FROM skade.files('wf', 'exp')) AS data_present
FROM skade.snapshots('wf', 'exp');
-- a transaction that deletes files at commit cannot be prepared
BEGIN;
SELECT skade.delete_at_commit(ARRAY['/tmp/skade-fixture2/nothing']) AS registered;
PREPARE TRANSACTION 'skade_del';
SELECT pg_temp.err($$SELECT skade.delete_at_commit(ARRAY['/etc/passwd'])$$) AS outside;
SELECT pg_temp.err($$SELECT skade.delete_at_commit(ARRAY['s3://bucket/x'])$$) AS remote;
BEGIN READ ONLY;
SELECT pg_temp.err($$SELECT skade.delete_at_commit(ARRAY['/tmp/skade-fixture2/nothing'])$$) AS read_only;
ROLLBACK;
