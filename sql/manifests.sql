-- Manifest lists and manifests read from Avro (libavro-c): skade.manifests()
-- and skade.files() on tables
-- written by Apache Iceberg's Java JdbcCatalog (data/clients/java), every
-- snapshot of them, and corrupt, truncated, foreign-codec and missing files.
\pset null '(null)'
\set VERBOSITY default
-- the fixtures are this run's copy (test/regress_prepare.sh), under /tmp/skade-fixtures/java
\set ECHO none
COPY (SELECT 1) TO PROGRAM 'cp /tmp/skade-fixtures/java/fixtures/events/metadata/snap-2389535939939507238-1-5e66da76-8a0e-4e34-be3c-6a5f6e99120b.avro /tmp/skade-fixtures/java/list.orig';
\set list '/tmp/skade-fixtures/java/fixtures/events/metadata/snap-2389535939939507238-1-5e66da76-8a0e-4e34-be3c-6a5f6e99120b.avro'
-- overwrite the current manifest list of fixtures.events with: cmd < original
CREATE FUNCTION pg_temp.damage(cmd text, list text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE format('COPY (SELECT 1) TO PROGRAM %L',
				   format('%s /tmp/skade-fixtures/java/list.orig > %s', cmd, list));
END $$;
CREATE FUNCTION pg_temp.sh(cmd text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE format('COPY (SELECT 1) TO PROGRAM %L', cmd);
END $$;
-- the SQLSTATE and message of a failing call
CREATE FUNCTION pg_temp.err(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE q;
	RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE || ': ' || regexp_replace(regexp_replace(SQLERRM, '/tmp/skade-fixtures/java/fixtures/events/metadata/', '…/'),
		'has [0-9]+ bytes, but its manifest list says [0-9]+', 'has N bytes, but its manifest list says M');
END $$;
\set ECHO all
SET skade.allowed_roots = '/tmp/skade-fixtures';

SELECT skade.create_namespace('fixtures');
SELECT skade.register_table('fixtures', 'events',
	'file:///tmp/skade-fixtures/java/fixtures/events/metadata/00004-c91ef392-1928-4306-bd9c-e5269c849709.metadata.json') > 0;
SELECT skade.register_table('fixtures', 'events_gz',
	'file:///tmp/skade-fixtures/java/fixtures/events_gz/metadata/00001-ba27ce7f-fb45-47fa-9ffb-c757d75a442a.gz.metadata.json') > 0;

-- the current snapshot: one manifest per append, newest first, format v2
-- (each manifest's length is its file's size: the bytes depend on the
-- compressor that wrote this run's copy of the fixture)
SELECT regexp_replace(path, '^.*/', '') AS manifest,
	   length = (pg_stat_file(regexp_replace(path, '^file://', ''))).size AS length_ok,
	   partition_spec_id, content,
	   sequence_number, min_sequence_number, added_snapshot_id,
	   added_files_count, existing_files_count, deleted_files_count,
	   added_rows_count, existing_rows_count, deleted_rows_count, partitions
FROM skade.manifests('fixtures', 'events');

-- every snapshot: its manifest count and the rows they add up to, which
-- agree with the snapshot summaries Java wrote
SELECT s.sequence_number, count(m.*) AS manifests,
	   sum(m.added_rows_count + m.existing_rows_count) AS rows,
	   (s.summary->>'total-records')::bigint AS summary_rows,
	   sum(m.added_files_count + m.existing_files_count) AS files,
	   (s.summary->>'total-data-files')::bigint AS summary_files
FROM skade.snapshots('fixtures', 'events') s,
	 LATERAL skade.manifests('fixtures', 'events', s.snapshot_id) m
GROUP BY s.snapshot_id, s.sequence_number, s.summary
ORDER BY s.sequence_number;

-- an unpartitioned table: no partition summaries
SELECT content, added_files_count, added_rows_count, partitions
FROM skade.manifests('fixtures', 'events_gz');

-- the live files of the current snapshot, with their statistics decoded by
-- the table schema (long, double, string, timestamptz)
SELECT content, regexp_replace(file_path, '^.*/', '') AS file, file_format, partition_spec_id,
	   partition, record_count, file_size_in_bytes, status, snapshot_id, sequence_number,
	   file_sequence_number, regexp_replace(manifest, '^.*/', '') AS manifest
FROM skade.files('fixtures', 'events')
ORDER BY sequence_number, file;
SELECT regexp_replace(file_path, '^.*/', '') AS file, c.key AS col, c.value->'id' AS id,
	   c.value->'lower' AS lower, c.value->'upper' AS upper,
	   c.value->'value_count' AS values, c.value->'null_count' AS nulls, c.value->'nan_count' AS nans
FROM skade.files('fixtures', 'events'), jsonb_each(columns) c
WHERE sequence_number = 3
ORDER BY file, id;
-- every snapshot: files and rows agree with the summaries Java wrote
SELECT s.sequence_number, count(f.*) AS files, (s.summary->>'total-data-files')::bigint AS summary_files,
	   sum(f.record_count) AS rows, (s.summary->>'total-records')::bigint AS summary_rows,
	   sum(f.file_size_in_bytes) AS bytes, (s.summary->>'total-files-size')::bigint AS summary_bytes
FROM skade.snapshots('fixtures', 'events') s,
	 LATERAL skade.files('fixtures', 'events', s.snapshot_id) f
GROUP BY s.snapshot_id, s.sequence_number, s.summary
ORDER BY s.sequence_number;
-- gzip'd metadata, unpartitioned
SELECT partition, record_count, columns->'category' AS category, columns->'amount' AS amount
FROM skade.files('fixtures', 'events_gz');

-- plan_files: each data file's id range and category, then filters that
-- keep exactly the files whose statistics allow a match
SELECT regexp_replace(file_path, '^.*/', '') AS file, columns->'id'->'lower' AS id_lo,
	   columns->'id'->'upper' AS id_hi, columns->'category'->'lower' AS cat_lo,
	   columns->'category'->'upper' AS cat_hi, columns->'amount'->'lower' AS amount_lo,
	   columns->'amount'->'upper' AS amount_hi
FROM skade.files('fixtures', 'events') ORDER BY file;
CREATE FUNCTION pg_temp.plan(filter jsonb, snap bigint DEFAULT NULL) RETURNS text
LANGUAGE sql AS $$
	SELECT coalesce(string_agg(regexp_replace(file_path, '^.*/\d+-(\d+)-.*-(\d+)\.parquet$', 'w\1/\2'),
						 ' ' ORDER BY file_path), '(none)')
	FROM skade.plan_files('fixtures', 'events', filter, snap)
$$;
SELECT f AS filter, pg_temp.plan(f::jsonb) AS files FROM (VALUES
	('true'), ('false'), ('{"type": "true"}'),
	('{"type": "eq", "term": "id", "value": 7}'),
	('{"type": "eq", "term": "id", "value": 100}'),
	('{"type": "lt", "term": "id", "value": 3}'),
	('{"type": "lt-eq", "term": "id", "value": 3}'),
	('{"type": "gt", "term": "id", "value": 6}'),
	('{"type": "gt-eq", "term": "id", "value": 8}'),
	('{"type": "in", "term": "id", "values": [2, 8]}'),
	('{"type": "not-in", "term": "id", "values": [2, 8]}'),
	('{"type": "not-eq", "term": "id", "value": 7}'),
	('{"type": "eq", "term": {"type": "reference", "term": "category"}, "value": "b"}'),
	('{"type": "starts-with", "term": "category", "value": "c"}'),
	('{"type": "starts-with", "term": "note", "value": "zz"}'),
	('{"type": "is-null", "term": "amount"}'),
	('{"type": "not-null", "term": "amount"}'),
	('{"type": "is-nan", "term": "amount"}'),
	('{"type": "gt", "term": "amount", "value": 75.5}'),
	('{"type": "lt", "term": "ts", "value": "2026-01-15T10:00:00+00:00"}'),
	('{"type": "not", "child": {"type": "lt", "term": "id", "value": 7}}'),
	('{"type": "and", "left": {"type": "gt", "term": "id", "value": 2}, "right": {"type": "eq", "term": "category", "value": "a"}}'),
	('{"type": "or", "left": {"type": "eq", "term": "id", "value": 1}, "right": {"type": "eq", "term": "category", "value": "c"}}'),
	('{"type": "not", "child": {"type": "or", "left": {"type": "lt", "term": "id", "value": 5}, "right": {"type": "eq", "term": "category", "value": "c"}}}')
) v(f);
-- an older snapshot plans over its own files only
SELECT pg_temp.plan('{"type": "gt", "term": "id", "value": 4}',
	(SELECT snapshot_id FROM skade.snapshots('fixtures', 'events') WHERE sequence_number = 2));
-- bad filters, each reported before any manifest is read
SELECT pg_temp.err($$SELECT count(*) FROM skade.plan_files('fixtures', 'events', '{"type": "eq", "term": "nope", "value": 1}')$$);
SELECT pg_temp.err($$SELECT count(*) FROM skade.plan_files('fixtures', 'events', '{"type": "eq", "term": "id", "value": "seven"}')$$);
SELECT pg_temp.err($$SELECT count(*) FROM skade.plan_files('fixtures', 'events', '{"type": "eq", "term": "id", "value": 1.5}')$$);
SELECT pg_temp.err($$SELECT count(*) FROM skade.plan_files('fixtures', 'events', '{"type": "starts-with", "term": "id", "value": "1"}')$$);
SELECT pg_temp.err($$SELECT count(*) FROM skade.plan_files('fixtures', 'events', '{"type": "between", "term": "id", "value": 1}')$$);
SELECT pg_temp.err($$SELECT count(*) FROM skade.plan_files('fixtures', 'events', '{"type": "and", "left": true}')$$);
SELECT pg_temp.err($$SELECT count(*) FROM skade.plan_files('fixtures', 'events', '{"term": "id"}')$$);
SELECT pg_temp.err($$SELECT count(*) FROM skade.plan_files('fixtures', 'events', '[1, 2]')$$);
SELECT pg_temp.err($$SELECT count(*) FROM skade.plan_files('fixtures', 'events', '{"type": "in", "term": "id", "value": 1}')$$);
SELECT pg_temp.err($$SELECT count(*) FROM skade.plan_files('fixtures', 'events', NULL)$$);
SELECT pg_temp.err($$SELECT count(*) FROM skade.plan_files('fixtures', 'events', '{"type": "eq", "term": {"type": "transform", "transform": "day", "term": "ts"}, "value": 1}')$$);
SELECT pg_temp.err($$SELECT count(*) FROM skade.plan_files('fixtures', 'events', '{"type": "eq", "term": "id", "value": 1')$$);

-- a table without snapshots has no manifests
SELECT skade.register_table('fixtures', 'empty',
	'file:///tmp/skade-fixtures/java/fixtures/events/metadata/00000-4383a288-ee99-4cd1-a65f-4025c16f9a50.metadata.json') > 0;
SELECT count(*) FROM skade.manifests('fixtures', 'empty');
SELECT count(*) FROM skade.files('fixtures', 'empty');
SELECT count(*) FROM skade.plan_files('fixtures', 'empty', '{"type": "eq", "term": "id", "value": 1}');

-- bad input
SELECT skade.manifests('fixtures', 'events', 42);
SELECT skade.manifests('fixtures', 'nope');
SELECT pg_temp.damage('head -c 300', :'list');   -- cut inside the header
SELECT pg_temp.err($$SELECT count(*) FROM skade.manifests('fixtures', 'events')$$);
SELECT pg_temp.damage('head -c -30', :'list');   -- cut inside the data block
SELECT pg_temp.err($$SELECT count(*) FROM skade.manifests('fixtures', 'events')$$);
SELECT pg_temp.damage('sed -e 1s/^Obj/Jbo/', :'list');   -- not Avro
SELECT pg_temp.err($$SELECT count(*) FROM skade.manifests('fixtures', 'events')$$);
SELECT pg_temp.damage($$perl -pe 's/\x0edeflate/\x12zstandard/'$$, :'list');   -- zstd
SELECT pg_temp.err($$SELECT count(*) FROM skade.manifests('fixtures', 'events')$$);
SELECT pg_temp.damage($$perl -pe 's/\x0edeflate/\x0csnappy/'$$, :'list');   -- wrong codec
SELECT pg_temp.err($$SELECT count(*) FROM skade.manifests('fixtures', 'events')$$);
SELECT pg_temp.sh('rm ' || :'list');   -- missing
SELECT pg_temp.err($$SELECT count(*) FROM skade.manifests('fixtures', 'events')$$);
-- restored, it reads again (the file was never cached)
SELECT pg_temp.damage('cat', :'list');
SELECT count(*) FROM skade.manifests('fixtures', 'events');
-- a manifest that is not the length its manifest list records (read afresh:
-- a manifest is immutable, so a copy cached before it was damaged is served
-- as it was committed)
SELECT count(*) FROM skade.files('fixtures', 'events');
SELECT pg_temp.sh('cp ' || m || ' /tmp/skade-fixtures/java/manifest.orig && echo junk >> ' || m)
FROM (SELECT path AS m FROM skade.manifests('fixtures', 'events') WHERE sequence_number = 2) x;
SELECT count(*) AS served_from_cache FROM skade.files('fixtures', 'events');
SELECT skade.cache_reset();
SELECT pg_temp.err($$SELECT count(*) FROM skade.files('fixtures', 'events')$$);
SELECT pg_temp.sh('cp /tmp/skade-fixtures/java/manifest.orig ' || m)
FROM (SELECT path AS m FROM skade.manifests('fixtures', 'events') WHERE sequence_number = 2) x;
SELECT count(*) FROM skade.files('fixtures', 'events');
-- a manifest that is gone: files() and plan_files() fail (read afresh), a
-- plan whose summaries rule that manifest out does not need it
SELECT pg_temp.sh('mv ' || m || ' /tmp/skade-fixtures/java/manifest.orig')
FROM (SELECT path AS m FROM skade.manifests('fixtures', 'events') WHERE sequence_number = 2) x;
SELECT skade.cache_reset();
SELECT pg_temp.err($$SELECT count(*) FROM skade.files('fixtures', 'events')$$);
SELECT pg_temp.err($$SELECT count(*) FROM skade.plan_files('fixtures', 'events', '{"type": "not-null", "term": "id"}')$$);
SELECT count(*) AS files_in_c
FROM skade.plan_files('fixtures', 'events', '{"type": "eq", "term": "category", "value": "c"}');
SELECT pg_temp.sh('mv /tmp/skade-fixtures/java/manifest.orig ' || m)
FROM (SELECT path AS m FROM skade.manifests('fixtures', 'events') WHERE sequence_number = 2) x;
SELECT count(*) FROM skade.files('fixtures', 'events');
-- outside the allowed roots
SET skade.allowed_roots = '/tmp/skade-fixtures/java/fixtures/events_gz';
SELECT pg_temp.err($$SELECT count(*) FROM skade.manifests('fixtures', 'events')$$);
RESET skade.allowed_roots;

-- readers may list manifests; PUBLIC may not
CREATE ROLE mf_reader IN ROLE skade_reader;
CREATE ROLE mf_nobody;
SET skade.allowed_roots = '/tmp/skade-fixtures';
SET ROLE mf_nobody;
SELECT count(*) FROM skade.manifests('fixtures', 'events_gz');
RESET ROLE;
SET ROLE mf_reader;
SELECT count(*) FROM skade.manifests('fixtures', 'events_gz');
SELECT count(*) FROM skade.files('fixtures', 'events_gz');
RESET ROLE;
RESET skade.allowed_roots;
DROP ROLE mf_reader, mf_nobody;
