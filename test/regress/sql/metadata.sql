-- Table metadata: confined file access, gzip, parsing and validation,
-- load_table with metadata ('all' | 'refs' | 'none'), snapshots(), refs(),
-- history(), warming at commit, continuity checks, late resolution.
\pset null '(null)'
\set VERBOSITY default
\getenv abs_srcdir PG_ABS_SRCDIR
-- a fixed scratch tree, so that messages (which name files) are stable:
--   /tmp/skade_regress/root      allowed: the fixtures, a directory, a FIFO, symlinks
--   /tmp/skade_regress/outside   not allowed
\set ECHO none
SELECT format($$COPY (SELECT 1 WHERE false) TO PROGRAM 'rm -rf /tmp/skade_regress && mkdir -p /tmp/skade_regress/root/dir /tmp/skade_regress/outside && cp %s/test/data/metadata/*.json /tmp/skade_regress/root/ && mkfifo /tmp/skade_regress/root/fifo.metadata.json && echo {} > /tmp/skade_regress/outside/secret.metadata.json && ln -s /tmp/skade_regress/outside/secret.metadata.json /tmp/skade_regress/root/escape.metadata.json && ln -s 00003-v2.metadata.json /tmp/skade_regress/root/inside-link.metadata.json'$$,
              :'abs_srcdir') \gexec
\set ECHO all
SET skade.allowed_roots = '/tmp/skade_regress/root';

SELECT skade.create_namespace('md');
SELECT skade.register_table('md', 'v2', 'file:///tmp/skade_regress/root/00003-v2.metadata.json') > 0;

-- the metadata, byte for byte
SELECT metadata_location, json_typeof(metadata),
       metadata::text = pg_read_file('/tmp/skade_regress/root/00003-v2.metadata.json') AS identical
FROM skade.load_table('md', 'v2');
-- refs: only the snapshots that branches and tags point at; log trimmed
SELECT json_array_length(metadata->'snapshots') AS snapshots,
       json_array_length(metadata->'snapshot-log') AS log,
       metadata->>'table-uuid' AS uuid, metadata->'refs'->'main'->>'snapshot-id' AS main
FROM skade.load_table('md', 'v2', snapshots => 'refs');
SELECT (SELECT array_agg(s->>'snapshot-id' ORDER BY s->>'snapshot-id') FROM json_array_elements(metadata->'snapshots') s)
FROM skade.load_table('md', 'v2', snapshots => 'refs');
SELECT metadata FROM skade.load_table('md', 'v2', snapshots => 'none');
SELECT * FROM skade.load_table('md', 'v2', snapshots => 'some');
-- the metadata alone, as a scalar
SELECT skade.table_metadata('md', 'v2')::text = pg_read_file('/tmp/skade_regress/root/00003-v2.metadata.json') AS identical,
       skade.table_metadata('md', 'v2', snapshots => 'refs')::text =
         (SELECT metadata::text FROM skade.load_table('md', 'v2', snapshots => 'refs')) AS same_refs,
       skade.table_metadata('md', 'v2', snapshots => 'none') IS NULL AS none_is_null;
SELECT skade.table_metadata('md', 'nope');

SELECT snapshot_id, parent_id, sequence_number, committed_at, operation, schema_id, is_current,
       summary->>'added-records' AS added, manifest_list LIKE 'file:/warehouse/%' AS ml
FROM skade.snapshots('md', 'v2');
SELECT * FROM skade.refs('md', 'v2') ORDER BY name;
SELECT * FROM skade.history('md', 'v2');

-- format versions 1 (no refs: main is the current snapshot) and 3, no snapshots
SELECT skade.register_table('md', 'v1', 'file:/tmp/skade_regress/root/00001-v1.metadata.json') > 0;
SELECT snapshot_id, sequence_number, operation, is_current FROM skade.snapshots('md', 'v1');
SELECT name, type, snapshot_id FROM skade.refs('md', 'v1');
SELECT metadata->>'format-version' FROM skade.load_table('md', 'v1');
SELECT skade.register_table('md', 'v3', 'file://localhost/tmp/skade_regress/root/00001-v3.metadata.json') > 0;
SELECT metadata->>'format-version', json_array_length(metadata->'snapshots') FROM skade.load_table('md', 'v3');
SELECT skade.register_table('md', 'empty', '/tmp/skade_regress/root/00000-empty.metadata.json') > 0;
SELECT count(*) FROM skade.snapshots('md', 'empty');
SELECT count(*) FROM skade.refs('md', 'empty');
SELECT metadata->'current-snapshot-id' FROM skade.load_table('md', 'empty', snapshots => 'refs');

-- gzip, by name and by magic bytes: served inflated
SELECT skade.register_table('md', 'gz', 'file:///tmp/skade_regress/root/00003-v2.gz.metadata.json') > 0;
SELECT metadata::text = pg_read_file('/tmp/skade_regress/root/00003-v2.metadata.json') AS inflated
FROM skade.load_table('md', 'gz');
SELECT skade.register_table('md', 'magic', 'file:///tmp/skade_regress/root/00003-gzip-by-magic.metadata.json') > 0;
SELECT json_array_length(metadata->'snapshots') FROM skade.load_table('md', 'magic');

-- a symlink that stays inside the roots is fine
SELECT skade.register_table('md', 'link', 'file:///tmp/skade_regress/root/inside-link.metadata.json') > 0;
SELECT metadata->>'table-uuid' FROM skade.load_table('md', 'link');

-- bad input: every error names the file, and changes nothing
CREATE FUNCTION pg_temp.try_load(loc text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	msg text; det text; st text;
BEGIN
	INSERT INTO iceberg_tables VALUES ('bad', 'b', 't', loc, NULL, 'TABLE');
	PERFORM * FROM skade.load_table('b', 't', catalog => 'bad');
	RETURN 'loaded';
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL, st = RETURNED_SQLSTATE;
	RETURN st || ': ' || msg || CASE WHEN det <> '' THEN ' / ' || det ELSE '' END;
END $$;
SET client_min_messages = error;	-- the commit-time warnings are tested below
SELECT f, pg_temp.try_load('file:///tmp/skade_regress/root/' || f) AS result
FROM unnest(ARRAY['bad-syntax.metadata.json', 'bad-missing-location.metadata.json',
                  'bad-mistyped-snapshot-id.metadata.json', 'bad-version.metadata.json',
                  'bad-current-snapshot.metadata.json', 'bad-deep.metadata.json',
                  'bad-not-object.metadata.json', 'bad-truncated.gz.metadata.json',
                  'missing.metadata.json', 'dir', 'fifo.metadata.json',
                  'escape.metadata.json', '../outside/secret.metadata.json']) f;
SELECT loc, pg_temp.try_load(loc) AS result
FROM unnest(ARRAY['/dev/zero', 'file:///etc/passwd', 's3://bucket/db/t/metadata/00001.metadata.json',
                  'gs://bucket/x.metadata.json', 'relative/path.metadata.json',
                  E'file:///tmp/skade_regress/root/00003-v2.metadata.json\x01',
                  -- the key of a derived cache entry (REST's gzip answer) is no location
                  E'\x01rest-answer.gz\x01file:///tmp/skade_regress/root/00003-v2.metadata.json']) loc;
-- a gzip bomb and an oversized file stop at skade.max_metadata_size
SET skade.max_metadata_size = '1MB';
SELECT pg_temp.try_load('file:///tmp/skade_regress/root/bomb.gz.metadata.json') AS bomb;
SET skade.max_metadata_size = '1kB';
SELECT pg_temp.try_load('file:///tmp/skade_regress/root/00004-v2next.metadata.json') AS oversized;
RESET skade.max_metadata_size;
-- with no allowed roots there is no file access at all
RESET skade.allowed_roots;
SELECT pg_temp.try_load('file:///tmp/skade_regress/root/00004-v2next.metadata.json') AS disabled;
SET skade.allowed_roots = '/tmp/skade_regress/root';
RESET client_min_messages;
SELECT count(*) AS bad_rows_left FROM iceberg_tables WHERE catalog_name = 'bad';
SET skade.allowed_roots = 'relative/dir';
-- only superusers may change the roots
CREATE ROLE skade_md_writer IN ROLE skade_writer;
SET ROLE skade_md_writer;
SET skade.allowed_roots = '/';
SET skade.max_metadata_size = '1GB';
RESET ROLE;
DROP ROLE skade_md_writer;

-- pointer operations keep working on tables whose metadata is elsewhere
SELECT skade.register_table('md', 's3', 's3://bucket/db/t/metadata/00001.metadata.json') > 0;
SELECT metadata_location FROM skade.load_table('md', 's3', snapshots => 'none');
SELECT skade.commit_table('md', 's3', 's3://bucket/db/t/metadata/00001.metadata.json',
                          's3://bucket/db/t/metadata/00002.metadata.json') > 0;
SELECT skade.table_exists('md', 's3');
SELECT * FROM skade.snapshots('md', 's3');

-- a file that vanished after commit
COPY (SELECT 1 WHERE false) TO PROGRAM 'cp /tmp/skade_regress/root/00001-v3.metadata.json /tmp/skade_regress/root/short-lived.metadata.json';
SELECT skade.register_table('md', 'vanish', 'file:///tmp/skade_regress/root/short-lived.metadata.json') > 0;
SELECT skade.cache_reset();
COPY (SELECT 1 WHERE false) TO PROGRAM 'rm /tmp/skade_regress/root/short-lived.metadata.json';
SELECT * FROM skade.load_table('md', 'vanish');
\echo :LAST_ERROR_SQLSTATE

-- warming at commit: the log records each new metadata's current snapshot;
-- unreadable metadata never fails the commit and stays unresolved
SELECT op, table_name, snapshot_id FROM skade.commit_log
WHERE table_namespace = 'md' ORDER BY seq;
SELECT skade.register_table('md', 'late', 'file:///tmp/skade_regress/root/later.metadata.json') > 0;
SELECT skade.commit_table('md', 'v2', 'file:///tmp/skade_regress/root/00003-v2.metadata.json',
                          'file:///tmp/skade_regress/root/bad-syntax.metadata.json') > 0 AS committed;
SELECT table_name, snapshot_id FROM skade.commit_log
WHERE table_namespace = 'md' AND table_name IN ('late', 'v2') ORDER BY seq;
-- resolved later, once the file is there
COPY (SELECT 1 WHERE false) TO PROGRAM 'cp /tmp/skade_regress/root/00004-v2next.metadata.json /tmp/skade_regress/root/later.metadata.json';
SELECT skade.resolve_commit_log() AS resolved;
SELECT table_name, snapshot_id FROM skade.commit_log
WHERE table_namespace = 'md' AND table_name = 'late';
SELECT skade.resolve_commit_log() AS resolved_again;

-- continuity checks (skade.validate_commits), both paths
SELECT skade.commit_table('md', 'v2', 'file:///tmp/skade_regress/root/bad-syntax.metadata.json',
                          'file:///tmp/skade_regress/root/00003-v2.metadata.json') > 0;
SELECT skade.commit_table('md', 'v2', 'file:///tmp/skade_regress/root/00003-v2.metadata.json',
                          'file:///tmp/skade_regress/root/00004-v2next.metadata.json') > 0 AS continues;
SELECT skade.commit_table('md', 'v2', 'file:///tmp/skade_regress/root/00004-v2next.metadata.json',
                          'file:///tmp/skade_regress/root/00005-other-table.metadata.json') > 0 AS warned;
SET skade.validate_commits = error;
SELECT skade.commit_table('md', 'v2', 'file:///tmp/skade_regress/root/00005-other-table.metadata.json',
                          'file:///tmp/skade_regress/root/00004-v2next.metadata.json');
\echo :LAST_ERROR_SQLSTATE
UPDATE iceberg_tables SET metadata_location = 'file:///tmp/skade_regress/root/00006-seq-back.metadata.json'
WHERE catalog_name = 'skade' AND table_namespace = 'md' AND table_name = 'gz';
\echo :LAST_ERROR_SQLSTATE
SELECT metadata_location FROM skade.load_table('md', 'gz', snapshots => 'none');
SET skade.validate_commits = off;
SELECT skade.commit_table('md', 'v2', 'file:///tmp/skade_regress/root/00005-other-table.metadata.json',
                          'file:///tmp/skade_regress/root/00006-seq-back.metadata.json') > 0 AS unchecked;
RESET skade.validate_commits;

-- clean up
SELECT count(*) FROM (SELECT skade.drop_table('md', name) FROM skade.list_tables('md') name) s;
SELECT skade.drop_namespace('md');
