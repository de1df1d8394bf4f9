-- rewrite_manifests(): the small data manifests of the current snapshot
-- merged per partition spec into few, committed as a "replace" snapshot, on
-- tables written by Java (data/clients/java) and pyiceberg
-- (data/clients/python); the files and their sequence numbers stay, time
-- travel to the old snapshot still works.
\pset null '(null)'
-- The fixtures' metadata directories are copied to scratch (their metadata
-- files pointed there; the manifest lists still name the fixtures'
-- manifests, read where they are), so new files go to scratch only.
SET skade.allowed_roots = '/tmp/skade_regress,/tmp/skade-fixtures,/tmp/skade-fixture-py';
SET skade.write_roots = '/tmp/skade_regress/wh';
CREATE FUNCTION pg_temp.err(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE q;
	RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE || ': ' || regexp_replace(regexp_replace(SQLERRM, '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}', '<uuid>'),
		'/tmp/skade[-_a-zA-Z0-9]*/', '…/', 'g');
END $$;
CREATE FUNCTION pg_temp.masked(loc text) RETURNS text LANGUAGE sql AS $$
	SELECT regexp_replace(regexp_replace(loc, '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}', '<uuid>'),
						  '^.*/', '')
$$;
CREATE FUNCTION pg_temp.sh(cmd text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE format('COPY (SELECT 1) TO PROGRAM %L', cmd);
END $$;
-- the live files of a snapshot, as a comparable set
CREATE FUNCTION pg_temp.fileset(ns text, t text, snap bigint) RETURNS TABLE (file_path text, record_count bigint,
	snapshot_id bigint, sequence_number bigint, file_sequence_number bigint, partition jsonb, columns jsonb)
LANGUAGE sql AS $$
	SELECT f.file_path, f.record_count, f.snapshot_id, f.sequence_number, f.file_sequence_number, f.partition, f.columns
	FROM skade.files(ns, t, snap) f WHERE f.content = 'data'
$$;
-- copy table dir src's metadata to scratch dst; its metadata files name dst
CREATE FUNCTION pg_temp.clone(src text, dst text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_temp.sh(format($f$rm -rf %1$s && mkdir -p %1$s && cp -r %2$s/metadata %1$s/ && sed -i -e 's#%2$s/metadata/#%1$s/metadata/#g' -e 's#"location": *"[^"]*"#"location":"%1$s"#' %1$s/metadata/*.metadata.json$f$,
		dst, src));
END $$;
SELECT skade.create_namespace('rw');
SELECT pg_temp.clone('/tmp/skade-fixtures/java/fixtures/events', '/tmp/skade_regress/wh/java');
SELECT pg_temp.clone('/tmp/skade-fixtures/java/fixtures/events', '/tmp/skade_regress/wh/split');
SELECT pg_temp.clone('/tmp/skade-fixtures/java/fixtures/events', '/tmp/skade_regress/wh/confined');
SELECT pg_temp.clone('/tmp/skade-fixtures/java/fixtures/events', '/tmp/skade_regress/wh/bad');
SELECT pg_temp.clone('/tmp/skade-fixture-py/fixtures/events', '/tmp/skade_regress/wh/py');

-- Java: three appends, three manifests of one spec (identity(category))
SELECT skade.register_table('rw', 'java',
	'/tmp/skade_regress/wh/java/metadata/00004-c91ef392-1928-4306-bd9c-e5269c849709.metadata.json') > 0 AS registered;
SELECT metadata::jsonb->>'current-snapshot-id' AS java_before FROM skade.load_table('rw', 'java') \gset
SELECT count(*) AS manifests_before, sum(added_files_count) AS added FROM skade.manifests('rw', 'java');
SELECT pg_temp.masked(metadata_location) AS location, snapshot_id <> :java_before AS new_snapshot,
	   manifests_replaced, manifests_created, manifests_kept, entries_rewritten
FROM skade.rewrite_manifests('rw', 'java');
SELECT metadata::jsonb->>'current-snapshot-id' AS java_after FROM skade.load_table('rw', 'java') \gset
-- one manifest now, every entry EXISTING, added by the new snapshot; its
-- sequence number is the new one, its min the oldest entry's
SELECT pg_temp.masked(path) AS path, partition_spec_id, content, sequence_number, min_sequence_number,
	   added_snapshot_id = :java_after AS added_by_new, added_files_count, existing_files_count, deleted_files_count,
	   added_rows_count, existing_rows_count, deleted_rows_count, partitions
FROM skade.manifests('rw', 'java');
-- the same files, same snapshot ids and sequence numbers, same statistics
SELECT count(*) AS files, count(DISTINCT file_path) AS distinct_files FROM pg_temp.fileset('rw', 'java', :java_after);
(SELECT * FROM pg_temp.fileset('rw', 'java', :java_before) EXCEPT SELECT * FROM pg_temp.fileset('rw', 'java', :java_after))
UNION ALL
(SELECT * FROM pg_temp.fileset('rw', 'java', :java_after) EXCEPT SELECT * FROM pg_temp.fileset('rw', 'java', :java_before));
SELECT DISTINCT status FROM skade.files('rw', 'java');
-- the replace snapshot: parent, sequence number, summary as Java writes it
SELECT s->>'parent-snapshot-id' = :'java_before' AS parent_ok, s->'sequence-number' AS seq,
	   (s->'summary') - 'operation'::text AS summary, s->'summary'->>'operation' AS operation,
	   regexp_replace(pg_temp.masked(s->>'manifest-list'), 'snap-[0-9]+', 'snap-<id>') AS list, m->'last-sequence-number' AS last_seq,
	   m->'refs'->'main'->>'snapshot-id' = :'java_after' AS main_moved
FROM (SELECT metadata::jsonb AS m FROM skade.load_table('rw', 'java')) x,
	 LATERAL (SELECT y FROM jsonb_array_elements(m->'snapshots') y WHERE y->>'snapshot-id' = :'java_after') z(s);
-- time travel to the old snapshot: its three manifests, its files
SELECT count(*) AS old_manifests FROM skade.manifests('rw', 'java', :java_before);
SELECT count(*) AS old_files FROM skade.files('rw', 'java', :java_before);
-- a filtered plan reads the same files, pruned by the new summaries
SELECT regexp_replace(file_path, '^.*/data/', '') AS planned
FROM skade.plan_files('rw', 'java', '{"type": "eq", "term": "category", "value": "b"}') ORDER BY 1;
SELECT regexp_replace(file_path, '^.*/data/', '') AS planned_before
FROM skade.plan_files('rw', 'java', '{"type": "eq", "term": "category", "value": "b"}', :java_before) ORDER BY 1;
-- a second call has nothing to do: no commit
SELECT pg_temp.masked(metadata_location) AS location, snapshot_id = :java_after AS same_snapshot,
	   manifests_replaced, manifests_created, manifests_kept, entries_rewritten
FROM skade.rewrite_manifests('rw', 'java');
SELECT count(*) AS snapshots FROM skade.snapshots('rw', 'java');
SELECT op, source FROM skade.commit_log WHERE table_name = 'java' ORDER BY seq DESC LIMIT 1;

-- pyiceberg: partitioned by identity(category) and day(ts), appends, an
-- overwrite and a copy-on-write delete (manifests with DELETED entries)
SELECT skade.register_table('rw', 'py',
	'/tmp/skade_regress/wh/py/metadata/00005-a77c57c8-afa0-4139-a90d-8815af754260.metadata.json') > 0 AS registered;
SELECT metadata::jsonb->>'current-snapshot-id' AS py_before FROM skade.load_table('rw', 'py') \gset
SELECT count(*) AS manifests_before, sum(deleted_files_count) AS deleted_entries FROM skade.manifests('rw', 'py');
SELECT pg_temp.masked(metadata_location) AS location, manifests_replaced, manifests_created, manifests_kept, entries_rewritten
FROM skade.rewrite_manifests('rw', 'py');
SELECT metadata::jsonb->>'current-snapshot-id' AS py_after FROM skade.load_table('rw', 'py') \gset
SELECT partition_spec_id, sequence_number, min_sequence_number, added_files_count, existing_files_count,
	   deleted_files_count, existing_rows_count, partitions
FROM skade.manifests('rw', 'py');
(SELECT * FROM pg_temp.fileset('rw', 'py', :py_before) EXCEPT SELECT * FROM pg_temp.fileset('rw', 'py', :py_after))
UNION ALL
(SELECT * FROM pg_temp.fileset('rw', 'py', :py_after) EXCEPT SELECT * FROM pg_temp.fileset('rw', 'py', :py_before));
SELECT count(*) AS files FROM pg_temp.fileset('rw', 'py', :py_after);
SELECT regexp_replace(file_path, '^.*/data/', '') AS planned
FROM skade.plan_files('rw', 'py', '{"type": "eq", "term": "category", "value": "b"}') ORDER BY 1;

-- a target about the size of the manifests: the biggest (7480 bytes) is
-- kept, the other two are merged

SELECT skade.register_table('rw', 'split',
	'/tmp/skade_regress/wh/split/metadata/00004-c91ef392-1928-4306-bd9c-e5269c849709.metadata.json') > 0 AS registered;
SELECT manifests_replaced, manifests_created, manifests_kept, entries_rewritten
FROM skade.rewrite_manifests('rw', 'split', target_size_bytes => 7460);
SELECT count(*) AS manifests, sum(existing_files_count) AS files, sum(added_files_count) AS added FROM skade.manifests('rw', 'split');
-- a manifest is closed once its bytes reach the target, checked every 250
-- entries (as Java): a target below what one manifest's header takes still
-- makes one of these four entries
SELECT manifests_replaced, manifests_created, manifests_kept, entries_rewritten
FROM skade.rewrite_manifests('rw', 'split', target_size_bytes => 8000);
SELECT count(*) AS manifests, sum(existing_files_count) AS files, sum(added_files_count) AS added FROM skade.manifests('rw', 'split');
SELECT count(*) AS files_unchanged FROM skade.files('rw', 'split') f JOIN skade.files('rw', 'java') g USING (file_path, sequence_number, file_sequence_number, snapshot_id);

-- errors
SELECT pg_temp.err($$SELECT * FROM skade.rewrite_manifests('rw', 'nope')$$) AS missing_table;
SELECT pg_temp.err($$SELECT * FROM skade.rewrite_manifests('rw', 'java', 0)$$) AS zero_target;
SELECT pg_temp.err($$SELECT * FROM skade.rewrite_manifests(NULL, 'java')$$) AS null_namespace;
BEGIN READ ONLY;
SELECT pg_temp.err($$SELECT * FROM skade.rewrite_manifests('rw', 'java')$$) AS read_only;
ROLLBACK;
-- a table without snapshots: nothing to do
SELECT pg_temp.masked(skade.create_table('rw', 'empty', '{"fields": [{"id": 1, "name": "id", "required": true, "type": "long"}]}',
	location => '/tmp/skade_regress/wh/rw/empty')) AS created;
SELECT snapshot_id, manifests_replaced, manifests_created FROM skade.rewrite_manifests('rw', 'empty');
-- writing outside skade.write_roots: 42501, no commit
SELECT skade.register_table('rw', 'confined',
	'/tmp/skade_regress/wh/confined/metadata/00004-c91ef392-1928-4306-bd9c-e5269c849709.metadata.json') > 0 AS registered;
SET skade.write_roots = '/tmp/skade_regress/elsewhere';
SELECT pg_temp.err($$SELECT * FROM skade.rewrite_manifests('rw', 'confined')$$) AS outside_write_roots;
SET skade.write_roots = '/tmp/skade_regress/wh';
SELECT count(*) AS manifests_unchanged FROM skade.manifests('rw', 'confined');
-- a manifest that is not what its list says (bytes appended): 22SK1, nothing written
SELECT skade.register_table('rw', 'bad',
	'/tmp/skade_regress/wh/bad/metadata/00004-c91ef392-1928-4306-bd9c-e5269c849709.metadata.json') > 0 AS registered;
SELECT pg_temp.sh('cp /tmp/skade-fixtures/java/fixtures/events/metadata/293c279e-c351-4f13-8c7f-d3a85ecb80aa-m0.avro /tmp/skade_regress/m.orig && printf garbage >> /tmp/skade-fixtures/java/fixtures/events/metadata/293c279e-c351-4f13-8c7f-d3a85ecb80aa-m0.avro');
SELECT skade.cache_reset();
SELECT pg_temp.err($$SELECT * FROM skade.rewrite_manifests('rw', 'bad')$$) AS damaged_manifest;
SELECT pg_temp.sh('cp /tmp/skade_regress/m.orig /tmp/skade-fixtures/java/fixtures/events/metadata/293c279e-c351-4f13-8c7f-d3a85ecb80aa-m0.avro');
-- a truncated manifest list: 22SK1
SELECT pg_temp.sh('f=/tmp/skade_regress/wh/bad/metadata/snap-2389535939939507238-1-5e66da76-8a0e-4e34-be3c-6a5f6e99120b.avro; head -c 600 $f > $f.t && mv $f.t $f');
SELECT skade.cache_reset();
SELECT pg_temp.err($$SELECT * FROM skade.rewrite_manifests('rw', 'bad')$$) AS truncated_list;
SELECT count(*) AS nothing_written FROM pg_ls_dir('/tmp/skade_regress/wh/bad/metadata') f WHERE f LIKE '%-m%.avro' AND f NOT LIKE '%-m0.avro';
SELECT count(*) AS snapshots FROM skade.snapshots('rw', 'bad');
