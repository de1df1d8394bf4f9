-- rewrite_manifests(): the small data manifests of the current snapshot
-- merged per partition spec into few, committed as a "replace" snapshot, on
-- tables written by Java (test/data/clients/java) and pyiceberg
-- (test/data/clients/python); the files and their sequence numbers stay, time
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
	EXECUTE format('COPY (SELECT 1 WHERE false) TO PROGRAM %L', cmd);
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
-- the records of an Avro file (deflate or null codec), decoded by a small
-- stdlib-only Python reader, one jsonb per record; the first is the header
-- without its schemas: {"header": {...}}
\set ECHO none
SELECT pg_temp.sh('mkdir -p /tmp/skade_regress/py');
COPY (SELECT unnest(string_to_array($py$
import json, sys, zlib
class R:
    def __init__(s, b):
        s.b, s.i = b, 0
    def long(s):
        n = k = 0
        while True:
            c = s.b[s.i]
            s.i += 1
            n |= (c & 127) << k
            k += 7
            if c < 128:
                return (n >> 1) ^ -(n & 1)
    def raw(s, n):
        s.i += n
        return s.b[s.i - n:s.i]
    def bytes(s):
        return s.raw(s.long())
def dec(r, t, names):
    if isinstance(t, list):
        return dec(r, t[r.long()], names)
    if isinstance(t, dict):
        k = t['type']
        if k == 'record':
            names[t['name']] = t
            return {f['name']: dec(r, f['type'], names) for f in t['fields']}
        if k == 'array':
            out = []
            while True:
                n = r.long()
                if n == 0:
                    return out
                if n < 0:
                    r.long()
                    n = -n
                out += [dec(r, t['items'], names) for _ in range(n)]
        if k == 'fixed':
            names[t['name']] = t
            return r.raw(t['size']).hex()
        return dec(r, k, names)
    if t in names:
        return dec(r, names[t], names)
    if t == 'null':
        return None
    if t in ('int', 'long'):
        return r.long()
    if t == 'boolean':
        return r.raw(1)[0] == 1
    if t in ('float', 'double'):
        return r.raw(4 if t == 'float' else 8).hex()
    if t == 'string':
        return r.bytes().decode()
    return r.bytes().hex()
r = R(open(sys.argv[1], 'rb').read())
r.i = 4
meta = {}
while True:
    n = r.long()
    if n == 0:
        break
    if n < 0:
        r.long()
        n = -n
    for _ in range(n):
        k = r.bytes().decode()
        meta[k] = r.bytes().decode()
sync = r.raw(16)
schema = json.loads(meta['avro.schema'])
print(json.dumps({'header': {k: v for k, v in meta.items() if 'schema' not in k and k != 'partition-spec'}}))
while r.i < len(r.b):
    n = r.long()
    block = r.bytes()
    if meta.get('avro.codec') == 'deflate':
        block = zlib.decompress(block, -15)
    br = R(block)
    for _ in range(n):
        print(json.dumps(dec(br, schema, {})))
    r.raw(16)
$py$, E'\n'))) TO '/tmp/skade_regress/py/avro_dump.py';
CREATE FUNCTION pg_temp.avro(path text) RETURNS SETOF jsonb LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_temp.sh(format('python3 /tmp/skade_regress/py/avro_dump.py %s > /tmp/skade_regress/py/out.json', path));
	RETURN QUERY SELECT l::jsonb FROM unnest(string_to_array(rtrim(pg_read_file('/tmp/skade_regress/py/out.json'), E'\n'), E'\n')) l;
END $$;
\set ECHO all
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

-- Java, format v3 (test/data/avro/warehouse/v3): three appends, row ids 0-3,
-- 4-5 and 6-8, next-row-id 9.  As Java's RewriteManifests: every data file
-- keeps its row ids, now written explicitly as first_row_id; the new
-- manifest still gets a fresh range from next-row-id (9, for its 9
-- existing rows), so the snapshot has first-row-id 9 and added-rows 9 and
-- next-row-id becomes 18.
SELECT pg_temp.clone('/tmp/skade-fixtures/avro/v3', '/tmp/skade_regress/wh/v3');
SELECT skade.register_table('rw', 'v3', '/tmp/skade_regress/wh/v3/metadata/v4.metadata.json') > 0 AS registered;
SELECT metadata::jsonb->>'current-snapshot-id' AS v3_before FROM skade.load_table('rw', 'v3') \gset
-- the files' row ids before: inherited from their manifests' first_row_id
CREATE TEMP TABLE v3_rows_before AS
	SELECT substring(e->'data_file'->>'file_path' FROM '/data/([^/]*/[^/]*)/') AS file,
		   (m->>'first_row_id')::bigint + sum((e->'data_file'->>'record_count')::bigint)
			   OVER (PARTITION BY m->>'manifest_path' ORDER BY ord ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS inherited,
		   coalesce((m->>'first_row_id')::bigint, -1) AS manifest_first_row_id, e->'data_file'->'first_row_id' AS written
	FROM pg_temp.avro((SELECT s->>'manifest-list' FROM skade.load_table('rw', 'v3') l,
						jsonb_array_elements(l.metadata::jsonb->'snapshots') s WHERE s->>'snapshot-id' = :'v3_before')) m,
		 LATERAL pg_temp.avro(m->>'manifest_path') WITH ORDINALITY x(e, ord)
	WHERE m ? 'manifest_path' AND e ? 'data_file';
SELECT file, coalesce(inherited, manifest_first_row_id) AS row_id, written FROM v3_rows_before ORDER BY 2;
SELECT manifests_replaced, manifests_created, manifests_kept, entries_rewritten
FROM skade.rewrite_manifests('rw', 'v3');
SELECT metadata::jsonb->>'current-snapshot-id' AS v3_after FROM skade.load_table('rw', 'v3') \gset
SELECT s->>'parent-snapshot-id' = :'v3_before' AS parent_ok, s->'sequence-number' AS seq,
	   s->'first-row-id' AS first_row_id, s->'added-rows' AS added_rows, s->'summary'->>'operation' AS operation,
	   m->'next-row-id' AS next_row_id, m->'format-version' AS format_version
FROM (SELECT metadata::jsonb AS m FROM skade.load_table('rw', 'v3')) x,
	 LATERAL (SELECT y FROM jsonb_array_elements(m->'snapshots') y WHERE y->>'snapshot-id' = :'v3_after') z(s);
-- the new manifest list: Java's v3 header and first_row_id 520
SELECT (r->'header') - 'snapshot-id'::text - 'parent-snapshot-id'::text AS list_header
FROM pg_temp.avro((SELECT s->>'manifest-list' FROM skade.load_table('rw', 'v3') l,
					jsonb_array_elements(l.metadata::jsonb->'snapshots') s WHERE s->>'snapshot-id' = :'v3_after')) r
WHERE r ? 'header';
SELECT r - 'manifest_path' - 'manifest_length' - 'added_snapshot_id' - 'partitions' AS list_entry
FROM pg_temp.avro((SELECT s->>'manifest-list' FROM skade.load_table('rw', 'v3') l,
					jsonb_array_elements(l.metadata::jsonb->'snapshots') s WHERE s->>'snapshot-id' = :'v3_after')) r
WHERE r ? 'manifest_path';
-- the new manifest: v3 header, EXISTING entries with each file's first_row_id
-- explicit and equal to its row id before; the other v3 fields null
SELECT r->'header'->>'format-version' AS format_version, r->'header'->>'content' AS content
FROM pg_temp.avro((SELECT path FROM skade.manifests('rw', 'v3'))) r WHERE r ? 'header';
SELECT e->'status' AS status, substring(e->'data_file'->>'file_path' FROM '/data/([^/]*/[^/]*)/') AS file,
	   e->'data_file'->'first_row_id' AS first_row_id, e->'data_file'->'referenced_data_file' AS referenced,
	   e->'data_file'->'content_offset' AS content_offset, e->'data_file'->'content_size_in_bytes' AS content_size,
	   (e->'data_file'->>'first_row_id')::bigint = (SELECT coalesce(b.inherited, b.manifest_first_row_id) FROM v3_rows_before b
		   WHERE b.file = substring(e->'data_file'->>'file_path' FROM '/data/([^/]*/[^/]*)/')) AS same_row_ids
FROM pg_temp.avro((SELECT path FROM skade.manifests('rw', 'v3'))) e WHERE e ? 'data_file' ORDER BY 3;
(SELECT * FROM pg_temp.fileset('rw', 'v3', :v3_before) EXCEPT SELECT * FROM pg_temp.fileset('rw', 'v3', :v3_after))
UNION ALL
(SELECT * FROM pg_temp.fileset('rw', 'v3', :v3_after) EXCEPT SELECT * FROM pg_temp.fileset('rw', 'v3', :v3_before));
SELECT count(*) AS old_manifests FROM skade.manifests('rw', 'v3', :v3_before);

-- a v2 table upgraded to v3 (Java's events, its snapshots without row
-- lineage): the files have no row ids yet (null first_row_id, inherited
-- from the new manifest); the kept manifest gets a range as well, after
-- the new one's
SELECT pg_temp.clone('/tmp/skade-fixtures/java/fixtures/events', '/tmp/skade_regress/wh/up3');
SELECT skade.register_table('rw', 'up3',
	'/tmp/skade_regress/wh/up3/metadata/00004-c91ef392-1928-4306-bd9c-e5269c849709.metadata.json') > 0 AS registered;
SELECT pg_temp.masked(skade.update_table('rw', 'up3', '[]', '[{"action": "upgrade-format-version", "format-version": 3}]')) AS upgraded;
SELECT manifests_replaced, manifests_created, manifests_kept, entries_rewritten
FROM skade.rewrite_manifests('rw', 'up3', target_size_bytes => 7460);
SELECT s->'first-row-id' AS first_row_id, s->'added-rows' AS added_rows, m->'next-row-id' AS next_row_id,
	   m->'current-snapshot-id' = s->'snapshot-id' AS current
FROM (SELECT metadata::jsonb AS m FROM skade.load_table('rw', 'up3')) x,
	 LATERAL (SELECT y FROM jsonb_array_elements(m->'snapshots') y ORDER BY y->'sequence-number' DESC LIMIT 1) z(s);
SELECT r->'added_snapshot_id' = (SELECT metadata::jsonb->'current-snapshot-id' FROM skade.load_table('rw', 'up3')) AS new,
	   r->'existing_rows_count' AS existing_rows, r->'added_rows_count' AS added_rows, r->'first_row_id' AS first_row_id
FROM pg_temp.avro((SELECT s->>'manifest-list' FROM skade.load_table('rw', 'up3') l,
					jsonb_array_elements(l.metadata::jsonb->'snapshots') s
					WHERE s->'snapshot-id' = l.metadata::jsonb->'current-snapshot-id')) r
WHERE r ? 'manifest_path';
SELECT DISTINCT e->'data_file'->'first_row_id' AS new_manifest_first_row_ids
FROM pg_temp.avro((SELECT path FROM skade.manifests('rw', 'up3') WHERE existing_files_count > 0)) e WHERE e ? 'data_file';

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
-- (the byte counts depend on how this run's fixture paths compress: masked)
SELECT regexp_replace(pg_temp.err($$SELECT * FROM skade.rewrite_manifests('rw', 'bad')$$), '[0-9]+ bytes, but its manifest list says [0-9]+', 'N bytes, but its manifest list says M') AS damaged_manifest;
SELECT pg_temp.sh('cp /tmp/skade_regress/m.orig /tmp/skade-fixtures/java/fixtures/events/metadata/293c279e-c351-4f13-8c7f-d3a85ecb80aa-m0.avro');
-- a truncated manifest list: 22SK1
SELECT pg_temp.sh('f=/tmp/skade_regress/wh/bad/metadata/snap-2389535939939507238-1-5e66da76-8a0e-4e34-be3c-6a5f6e99120b.avro; head -c 600 $f > $f.t && mv $f.t $f');
SELECT skade.cache_reset();
SELECT pg_temp.err($$SELECT * FROM skade.rewrite_manifests('rw', 'bad')$$) AS truncated_list;
SELECT count(*) AS nothing_written FROM pg_ls_dir('/tmp/skade_regress/wh/bad/metadata') f WHERE f LIKE '%-m%.avro' AND f NOT LIKE '%-m0.avro';
SELECT count(*) AS snapshots FROM skade.snapshots('rw', 'bad');
