-- Manifest lists and manifests read from Avro (libavro-c): skade.manifests()
-- and skade.files() on tables
-- written by Apache Iceberg's Java JdbcCatalog (test/data/clients/java), every
-- snapshot of them, and corrupt, truncated, foreign-codec and missing files.
\pset null '(null)'
\set VERBOSITY default
-- the fixtures are this run's copy (test/regress_prepare.sh), under /tmp/skade-fixtures/java
\set ECHO none
COPY (SELECT 1 WHERE false) TO PROGRAM 'cp /tmp/skade-fixtures/java/fixtures/events/metadata/snap-2389535939939507238-1-5e66da76-8a0e-4e34-be3c-6a5f6e99120b.avro /tmp/skade-fixtures/java/list.orig';
\set list '/tmp/skade-fixtures/java/fixtures/events/metadata/snap-2389535939939507238-1-5e66da76-8a0e-4e34-be3c-6a5f6e99120b.avro'
-- overwrite the current manifest list of fixtures.events with: cmd < original
CREATE FUNCTION pg_temp.damage(cmd text, list text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE format('COPY (SELECT 1 WHERE false) TO PROGRAM %L',
				   format('%s /tmp/skade-fixtures/java/list.orig > %s', cmd, list));
END $$;
CREATE FUNCTION pg_temp.sh(cmd text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE format('COPY (SELECT 1 WHERE false) TO PROGRAM %L', cmd);
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

-- plan_files on decimal, uuid, binary and fixed columns: tables whose
-- bounds, partition values and partition summaries test/data/avro/typed_bounds.py
-- writes byte by byte (its banner lists them; no data file exists)
\getenv abs_srcdir PG_ABS_SRCDIR
\set ECHO none
SELECT format($$COPY (SELECT 1 WHERE false) TO PROGRAM 'rm -rf /tmp/skade_regress/typed && python3 %s/test/data/avro/typed_bounds.py /tmp/skade_regress/typed'$$,
              :'abs_srcdir') \gexec
\set ECHO all
SET skade.allowed_roots = '/tmp/skade-fixtures,/tmp/skade_regress/typed';
SELECT t, skade.register_table('fixtures', t, format('/tmp/skade_regress/typed/%s/metadata/v1.metadata.json', t)) > 0 AS registered
FROM unnest(ARRAY['typed', 'typed_part', 'typed_summary', 'typed_bad']) t;
-- the files' bounds: decimals of 1 to 16 bytes (f4's lower one
-- sign-extended to 16), uuids on both sides of the high bit, binary bounds
-- truncated to 16 bytes as Java writes them (f2: values of 20 bytes
-- starting with 16 "a"), f5 all null, f6 without statistics
SELECT regexp_replace(file_path, '^.*/', '') AS file, c.key AS col, c.value->'lower' AS lower,
	   c.value->'upper' AS upper, c.value->'null_count' AS nulls
FROM skade.files('fixtures', 'typed'), jsonb_each(columns) c
ORDER BY file, (c.value->'id')::int;
-- the statistics and partitions laid out in jsonb's binary form by skade are
-- byte for byte what PostgreSQL's own builder makes of the same JSON, from
-- the cache (held in place) and from a fresh read alike
CREATE FUNCTION pg_temp.jsonb_exact(tab text) RETURNS text LANGUAGE sql AS $$
	SELECT format('%s files, %s differ', count(*),
				  count(*) FILTER (WHERE jsonb_send(columns) <> jsonb_send(columns::text::jsonb)
								   OR jsonb_send(partition) <> jsonb_send(partition::text::jsonb)))
	FROM skade.files('fixtures', tab)
$$;
SELECT skade.cache_reset();
SELECT t, pg_temp.jsonb_exact(t) AS fresh, pg_temp.jsonb_exact(t) AS cached
FROM unnest(ARRAY['typed', 'typed_part', 'events', 'events_gz']) t;
CREATE FUNCTION pg_temp.tplan(tab text, filter jsonb) RETURNS text LANGUAGE sql AS $$
	SELECT coalesce(string_agg(regexp_replace(file_path, '^.*/(\w+)\.parquet$', '\1'), ' '
							   ORDER BY file_path), '(none)')
	FROM skade.plan_files('fixtures', tab, filter)
$$;
-- decimal(9,2): by value at scale 2; a number or a string, any scale or an
-- exponent; a literal scale 2 cannot hold equals nothing and compares exactly
SELECT f AS filter, pg_temp.tplan('typed', f::jsonb) AS files FROM (VALUES
	('{"type": "eq", "term": "price", "value": 12.34}'),
	('{"type": "eq", "term": "price", "value": "12.34"}'),
	('{"type": "eq", "term": "price", "value": "12.340"}'),
	('{"type": "eq", "term": "price", "value": 12.345}'),
	('{"type": "lt", "term": "price", "value": 12.345}'),
	('{"type": "gt", "term": "price", "value": 12.345}'),
	('{"type": "gt-eq", "term": "price", "value": 12.341}'),
	('{"type": "lt-eq", "term": "price", "value": 12.339}'),
	('{"type": "gt", "term": "price", "value": "45.00"}'),
	('{"type": "lt", "term": "price", "value": -0.005}'),
	('{"type": "gt", "term": "price", "value": -0.005}'),
	('{"type": "eq", "term": "price", "value": -12.5}'),
	('{"type": "in", "term": "price", "values": [12.345, 45.01, "-0.011"]}'),
	('{"type": "in", "term": "price", "values": [12.345, "0.001"]}'),
	('{"type": "not-eq", "term": "price", "value": 12.34}'),
	('{"type": "not-eq", "term": "price", "value": 12.345}'),
	('{"type": "not-in", "term": "price", "values": [12.34, 1]}'),
	('{"type": "eq", "term": "price", "value": 1e3}'),
	('{"type": "eq", "term": "price", "value": "1.2345E+3"}'),
	('{"type": "gt", "term": "price", "value": 1e40}'),
	('{"type": "lt", "term": "price", "value": "-1e40"}'),
	('{"type": "is-null", "term": "price"}'),
	('{"type": "not-null", "term": "price"}'),
	('{"type": "not", "child": {"type": "lt", "term": "price", "value": 12.345}}')
) v(f);
-- decimal(38,10): 16-byte values at both ends of its range
SELECT f AS filter, pg_temp.tplan('typed', f::jsonb) AS files FROM (VALUES
	('{"type": "eq", "term": "big", "value": "12345678901234567890.123456789"}'),
	('{"type": "gt", "term": "big", "value": 9999999999999999999999999999.9999999999}'),
	('{"type": "lt", "term": "big", "value": "-9999999999999999999999999999.99999999995"}'),
	('{"type": "lt-eq", "term": "big", "value": "-9999999999999999999999999999.9999999999"}'),
	('{"type": "gt-eq", "term": "big", "value": 1e27}'),
	('{"type": "eq", "term": "big", "value": -1}')
) v(f);
-- uuid: unsigned bytes (f2 spans 1000... to 9000..., f3 is above 8000...)
SELECT f AS filter, pg_temp.tplan('typed', f::jsonb) AS files FROM (VALUES
	('{"type": "eq", "term": "u", "value": "90000000-0000-0000-0000-000000000000"}'),
	('{"type": "eq", "term": "u", "value": "8fffffff-ffff-ffff-ffff-fffffffffffe"}'),
	('{"type": "lt", "term": "u", "value": "10000000-0000-0000-0000-000000000000"}'),
	('{"type": "gt", "term": "u", "value": "f0000000-0000-0000-0000-000000000000"}'),
	('{"type": "gt-eq", "term": "u", "value": "80000000-0000-0000-0000-000000000000"}'),
	('{"type": "eq", "term": "u", "value": "C0FFEE00-0000-4000-8000-000000000000"}'),
	('{"type": "not-eq", "term": "u", "value": "c0ffee00-0000-4000-8000-000000000000"}'),
	('{"type": "in", "term": "u", "values": ["00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff"]}')
) v(f);
-- binary (hex, or skade's \x form): unsigned bytes, a prefix first; f2's
-- truncated bounds keep every value that starts with 16 "a"
SELECT f AS filter, pg_temp.tplan('typed', f::jsonb) AS files FROM (VALUES
	('{"type": "eq", "term": "b", "value": "6162"}'),
	('{"type": "eq", "term": "b", "value": "6161616161616161616161616161616161616161"}'),
	('{"type": "eq", "term": "b", "value": "\\x616161"}'),
	('{"type": "lt", "term": "b", "value": "00"}'),
	('{"type": "lt-eq", "term": "b", "value": ""}'),
	('{"type": "gt", "term": "b", "value": "ff"}'),
	('{"type": "gt-eq", "term": "b", "value": "80"}'),
	('{"type": "gt", "term": "b", "value": "616161616161616161616161616161616161"}'),
	('{"type": "not-eq", "term": "b", "value": "6162"}'),
	('{"type": "not-eq", "term": "b", "value": "00"}')
) v(f);
-- fixed[4]
SELECT f AS filter, pg_temp.tplan('typed', f::jsonb) AS files FROM (VALUES
	('{"type": "eq", "term": "fx", "value": "80000000"}'),
	('{"type": "gt", "term": "fx", "value": "7fffffff"}'),
	('{"type": "lt", "term": "fx", "value": "00000001"}'),
	('{"type": "lt-eq", "term": "fx", "value": "FFFFFF00"}'),
	('{"type": "in", "term": "fx", "values": ["0000ffff", "ffffffff"]}'),
	('{"type": "and", "left": {"type": "gt", "term": "price", "value": 12.345}, "right": {"type": "lt", "term": "u", "value": "80000000-0000-0000-0000-000000000000"}}')
) v(f);
-- literals of these types that are not ones, and bounds of the wrong length
CREATE FUNCTION pg_temp.errd(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	d text;
BEGIN
	EXECUTE q;
	RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS d = PG_EXCEPTION_DETAIL;
	RETURN SQLSTATE || ': ' || regexp_replace(SQLERRM, '/tmp/skade_regress/typed/', '…/')
		|| coalesce(' DETAIL: ' || nullif(d, ''), '');
END $$;
SELECT pg_temp.errd(format($$SELECT count(*) FROM skade.plan_files('fixtures', 'typed', %L)$$, f))
FROM (VALUES
	('{"type": "eq", "term": "price", "value": true}'),
	('{"type": "eq", "term": "price", "value": "12,34"}'),
	('{"type": "eq", "term": "price", "value": "NaN"}'),
	('{"type": "eq", "term": "price", "value": "1e"}'),
	('{"type": "eq", "term": "u", "value": 1}'),
	('{"type": "eq", "term": "u", "value": "c0ffee00-0000-4000-8000-00000000000"}'),
	('{"type": "eq", "term": "u", "value": "c0ffee00x0000-4000-8000-000000000000"}'),
	('{"type": "eq", "term": "b", "value": "abc"}'),
	('{"type": "eq", "term": "b", "value": "zz"}'),
	('{"type": "eq", "term": "fx", "value": "0001"}'),
	('{"type": "starts-with", "term": "b", "value": "61"}')
) v(f);
SELECT pg_temp.errd($$SELECT count(*) FROM skade.plan_files('fixtures', 'typed_bad', '{"type": "eq", "term": "price", "value": 1}')$$);
SELECT pg_temp.errd($$SELECT count(*) FROM skade.plan_files('fixtures', 'typed_bad', '{"type": "gt", "term": "u", "value": "00000000-0000-0000-0000-000000000000"}')$$);
-- (a filter on another column keeps the file, whose row shows its bounds: an error too)
SELECT pg_temp.errd($$SELECT count(*) FROM skade.plan_files('fixtures', 'typed_bad', '{"type": "eq", "term": "id", "value": 1}')$$);

-- partition values: truncate[500](price) (p1: 10.00 to 14.99, p2: -5.00 to
-- -0.01), bucket[4](u) (p1 holds 6ba7b810-..., p2 f79c3e09-...),
-- truncate[2](b) (p1: "ab"..., p2: ffff..., p3: exactly "a"), identity(fx)
-- and identity(big); p3 is null but for b
SELECT f AS filter, pg_temp.tplan('typed_part', f::jsonb) AS files FROM (VALUES
	('{"type": "eq", "term": "price", "value": 12.34}'),
	('{"type": "eq", "term": "price", "value": 15}'),
	('{"type": "eq", "term": "price", "value": 12.345}'),
	('{"type": "lt", "term": "price", "value": 0}'),
	('{"type": "gt-eq", "term": "price", "value": 14.99}'),
	('{"type": "eq", "term": "u", "value": "6ba7b810-9dad-11d1-80b4-00c04fd430c8"}'),
	('{"type": "eq", "term": "u", "value": "f79c3e09-677c-4bbd-a479-3f349cb785e7"}'),
	('{"type": "in", "term": "u", "values": ["6ba7b810-9dad-11d1-80b4-00c04fd430c8", "f79c3e09-677c-4bbd-a479-3f349cb785e7"]}'),
	('{"type": "eq", "term": "b", "value": "6162"}'),
	('{"type": "eq", "term": "b", "value": "616263"}'),
	('{"type": "eq", "term": "b", "value": "6163"}'),
	('{"type": "gt-eq", "term": "b", "value": "6163"}'),
	('{"type": "eq", "term": "b", "value": "61"}'),
	('{"type": "lt", "term": "b", "value": "6162"}'),
	('{"type": "eq", "term": "fx", "value": "80000000"}'),
	('{"type": "not-eq", "term": "fx", "value": "00000001"}'),
	('{"type": "is-null", "term": "fx"}'),
	('{"type": "eq", "term": "big", "value": 1.5}'),
	('{"type": "eq", "term": "big", "value": "1.50000000001"}'),
	('{"type": "lt", "term": "big", "value": -1.99999999999}')
) v(f);
-- partition summaries: typed_summary's one manifest is gone, so a plan
-- that needs it fails; its summaries say price 100.00 to 104.99, u in
-- 6ba7b810-...'s bucket, b starting with "zz", fx 0000abcd, big 7
CREATE FUNCTION pg_temp.reads(filter jsonb) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	PERFORM count(*) FROM skade.plan_files('fixtures', 'typed_summary', filter);
	RETURN 'pruned by its summaries';
EXCEPTION WHEN OTHERS THEN
	RETURN 'reads the manifest: ' || SQLSTATE;
END $$;
SELECT f AS filter, pg_temp.reads(f::jsonb) AS manifest FROM (VALUES
	('{"type": "eq", "term": "price", "value": 100.01}'),
	('{"type": "eq", "term": "price", "value": 105}'),
	('{"type": "eq", "term": "price", "value": 100.005}'),
	('{"type": "eq", "term": "u", "value": "6ba7b810-9dad-11d1-80b4-00c04fd430c8"}'),
	('{"type": "eq", "term": "u", "value": "f79c3e09-677c-4bbd-a479-3f349cb785e7"}'),
	('{"type": "eq", "term": "b", "value": "7a7a"}'),
	('{"type": "eq", "term": "b", "value": "7a7b"}'),
	('{"type": "lt", "term": "b", "value": "7a"}'),
	('{"type": "eq", "term": "fx", "value": "0000abcd"}'),
	('{"type": "eq", "term": "fx", "value": "0000abce"}'),
	('{"type": "eq", "term": "big", "value": 7}'),
	('{"type": "gt", "term": "big", "value": 7}')
) v(f);
SET skade.allowed_roots = '/tmp/skade-fixtures';

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
