-- skade.manifests(), skade.files() and skade.plan_files() across Iceberg
-- format versions and Avro codecs, and on bad manifests (test/data/avro):
--   v1          format v1, pyiceberg 0.12.0 (manifests and lists: deflate)
--   v2_null, v2_deflate, v2_snappy
--               format v2, pyiceberg 0.12.0 with write.avro.compression-codec
--               null, gzip (= deflate), snappy: the same rows
--   v3          format v3, Java Iceberg 1.12.0 (deflate), + a timestamp_ns column
--   zstd        format v2, pyiceberg with codec zstd: not read by skade
--   bad_*, exotic_types, corrupt_*, short_manifest
--               v2_deflate's metadata with the manifest of its first append
--               re-written (test/data/avro/make_fixtures.py)
-- Every good table: partitioned by identity(category) and day(ts); three
-- appends of 4, 2 and 3 rows in 3, 1 and 2 Parquet files (9 rows, 6 files).
\pset null '(null)'
\set VERBOSITY default
-- the fixtures are this run's copy (test/regress_prepare.sh), under /tmp/skade-fixtures/avro
\set ECHO none
CREATE FUNCTION pg_temp.sh(cmd text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE format('COPY (SELECT 1 WHERE false) TO PROGRAM %L', cmd);
END $$;
-- a path without the fixture root, UUIDs and snapshot ids
CREATE FUNCTION pg_temp.p(s text) RETURNS text LANGUAGE sql AS $$
	SELECT regexp_replace(regexp_replace(regexp_replace(s,
		'(file://)?/tmp/skade-fixtures/avro/', '', 'g'),
		'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}', '<uuid>', 'g'),
		'snap-[0-9]+-', 'snap-<id>-', 'g')
$$;
-- the SQLSTATE, message and detail of a failing call
CREATE FUNCTION pg_temp.err(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	d text;
BEGIN
	EXECUTE q;
	RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS d = PG_EXCEPTION_DETAIL;
	RETURN SQLSTATE || ': ' || pg_temp.p(SQLERRM) || coalesce(' DETAIL: ' || pg_temp.p(nullif(d, '')), '');
END $$;
-- a location as a local path
CREATE FUNCTION pg_temp.local(path text) RETURNS text LANGUAGE sql AS $$
	SELECT regexp_replace(path, '^file://', '')
$$;
-- a data file as its partition directory
CREATE FUNCTION pg_temp.part(file_path text) RETURNS text LANGUAGE sql AS $$
	SELECT regexp_replace(file_path, '^.*/data/(.*)/[^/]*$', '\1')
$$;
-- the files plan_files() keeps, as partition directories
CREATE FUNCTION pg_temp.plan(t text, filter jsonb) RETURNS text LANGUAGE sql AS $$
	SELECT coalesce(string_agg(pg_temp.part(file_path), ' ' ORDER BY pg_temp.part(file_path)), '(none)')
	FROM skade.plan_files('avro', t, filter, NULL)
$$;
-- tables.tsv: table, current metadata file, format version, codec of its oldest manifest
CREATE TEMP TABLE fx (name text, loc text, format_version int, codec text);
COPY fx FROM PROGRAM 'tail -n +2 /tmp/skade-fixtures/avro/tables.tsv';
\set ECHO all
SET skade.allowed_roots = '/tmp/skade-fixtures';

SELECT skade.create_namespace('avro');
SELECT name, format_version, codec, skade.register_table('avro', name, 'file://' || loc) > 0 AS registered
FROM fx ORDER BY name;
CREATE TEMP VIEW good(t) AS VALUES ('v1'), ('v2_null'), ('v2_deflate'), ('v2_snappy'), ('v3');

-- the manifest lists: one manifest per append (3), as written by each client.
-- v1 lists have no content or sequence numbers: 'data' and 0.  Every
-- manifest's length is its file's size; its snapshot is one of the table's.
-- Partition summaries decoded by the spec: category 'a'..'c' (a null in the
-- third append), day(ts) as a date.  (Ordered by rows: 4, 2, 3 were appended.)
SELECT t, sequence_number AS seq, min_sequence_number AS min_seq, content, partition_spec_id AS spec,
	   added_files_count AS files, added_rows_count AS rows,
	   existing_files_count + deleted_files_count + existing_rows_count + deleted_rows_count AS other,
	   length = (pg_stat_file(pg_temp.local(path))).size AS length_ok,
	   added_snapshot_id IN (SELECT snapshot_id FROM skade.snapshots('avro', t)) AS snapshot_ok,
	   partitions
FROM good, LATERAL skade.manifests('avro', t)
ORDER BY t, added_rows_count, sequence_number;
-- the codec each manifest list and manifest was written with (their header)
SELECT t, count(*) AS manifests,
	   bool_and(pg_read_binary_file(pg_temp.local(m.path)) LIKE ('%avro.codec_' || c || '%')::bytea) AS manifests_codec,
	   bool_and(pg_read_binary_file(pg_temp.local(s.manifest_list)) LIKE ('%avro.codec_' || c || '%')::bytea) AS lists_codec
FROM (VALUES ('v1', 'deflate'), ('v2_null', 'null'), ('v2_deflate', 'deflate'),
			 ('v2_snappy', 'snappy'), ('v3', 'deflate')) v(t, c),
	 LATERAL skade.snapshots('avro', t) s,
	 LATERAL skade.manifests('avro', t, s.snapshot_id) m
GROUP BY t ORDER BY t;
-- every snapshot of every table: files and rows add up to the summaries the
-- clients wrote; the v1 table's snapshots have sequence number 0 throughout
SELECT t, s.sequence_number AS snap_seq, count(f.*) AS files, (s.summary->>'total-data-files')::int AS summary_files,
	   sum(f.record_count) AS rows, (s.summary->>'total-records')::int AS summary_rows,
	   array_agg(DISTINCT f.sequence_number) AS file_seqs, array_agg(DISTINCT f.file_sequence_number) AS file_file_seqs
FROM good, LATERAL skade.snapshots('avro', t) s,
	 LATERAL skade.files('avro', t, s.snapshot_id) f
GROUP BY t, s.snapshot_id, s.sequence_number, s.summary
ORDER BY t, sum(f.record_count);

-- the live files of the current snapshot: partition (identity category,
-- day(ts) as days since 1970: 19783 = 2024-03-01), record counts, sequence
-- numbers (v1: 0), status; each file's size is the Parquet file's
SELECT t, pg_temp.part(file_path) AS dir, content, file_format, partition_spec_id AS spec, partition,
	   record_count AS rows, status, sequence_number AS seq, file_sequence_number AS file_seq,
	   snapshot_id IN (SELECT snapshot_id FROM skade.snapshots('avro', t)) AS snapshot_ok,
	   file_size_in_bytes = (pg_stat_file(pg_temp.local(file_path))).size AS size_ok
FROM good, LATERAL skade.files('avro', t)
ORDER BY t, dir;

-- column statistics decoded by the schema: long, string, timestamp, double
-- (pyiceberg, v2 deflate)
SELECT pg_temp.part(file_path) AS dir, c.key AS col, c.value->'id' AS id,
	   c.value->'lower' AS lower, c.value->'upper' AS upper,
	   c.value->'value_count' AS values, c.value->'null_count' AS nulls, c.value->'nan_count' AS nans
FROM skade.files('avro', 'v2_deflate'), jsonb_each(columns) c
ORDER BY dir, id;
-- ... the same in every pyiceberg table whatever its codec or format version
SELECT t, count(*) AS files, count(*) FILTER (WHERE f.columns = r.columns AND f.partition = r.partition
										 AND f.record_count = r.record_count) AS same_as_v2_deflate
FROM (VALUES ('v1'), ('v2_null'), ('v2_snappy')) v(t), LATERAL skade.files('avro', t) f
	 LEFT JOIN skade.files('avro', 'v2_deflate') r ON pg_temp.part(r.file_path) = pg_temp.part(f.file_path)
GROUP BY t ORDER BY t;
-- ... and as Java wrote them in the v3 table (with NaN counts), plus the
-- timestamp_ns column ts_ns = ts + 123 ns, its bounds shown to the nanosecond
SELECT pg_temp.part(file_path) AS dir, c.key AS col, c.value->'id' AS id,
	   c.value->'lower' AS lower, c.value->'upper' AS upper,
	   c.value->'value_count' AS values, c.value->'null_count' AS nulls, c.value->'nan_count' AS nans
FROM skade.files('avro', 'v3'), jsonb_each(columns) c
ORDER BY dir, id;

-- plan_files in every format and codec keeps the files whose statistics
-- allow a match
SELECT t, f AS filter, pg_temp.plan(t, f::jsonb) AS files
FROM good, (VALUES
	('{"type": "eq", "term": "category", "value": "a"}'),
	('{"type": "eq", "term": "id", "value": 4}'),
	('{"type": "gt", "term": "id", "value": 6}'),
	('{"type": "is-null", "term": "category"}'),
	('{"type": "is-null", "term": "amount"}'),
	('{"type": "lt", "term": "ts", "value": "2024-03-01T09:00:00"}'),
	('{"type": "and", "left": {"type": "eq", "term": "category", "value": "a"}, "right": {"type": "gt-eq", "term": "amount", "value": 50}}')
) v(f)
ORDER BY f, t;
-- a timestamp_ns column (v3): an ISO literal, and a number (nanoseconds since
-- 1970: 2024-03-01T08:00:00.000000123, the lower bound of one file)
SELECT pg_temp.plan('v3', '{"type": "gt", "term": "ts_ns", "value": "2024-03-03T00:00:00"}');
SELECT pg_temp.plan('v3', '{"type": "eq", "term": "ts_ns", "value": 1709280000000000123}');
SELECT pg_temp.plan('v3', '{"type": "lt", "term": "ts_ns", "value": 1709280000000000123}');
-- ISO literals keep their nanoseconds (PostgreSQL's own parser stops at
-- microseconds): the file whose lower bound is .000000123 matches eq and lt .000000124
SELECT pg_temp.plan('v3', '{"type": "eq", "term": "ts_ns", "value": "2024-03-01T08:00:00.000000123"}');
SELECT pg_temp.plan('v3', '{"type": "lt", "term": "ts_ns", "value": "2024-03-01T08:00:00.000000124"}');
SELECT pg_temp.plan('v3', '{"type": "lt", "term": "ts_ns", "value": "2024-03-01T08:00:00.000000123"}');
-- a literal a nanosecond timestamp cannot hold (after 2262), or an infinite
-- one: datetime_field_overflow, not a plan that wraps around
SELECT pg_temp.err($$SELECT count(*) FROM skade.plan_files('avro', 'v3', '{"type": "lt", "term": "ts_ns", "value": "2300-01-01T00:00:00"}')$$);
SELECT pg_temp.err($$SELECT count(*) FROM skade.plan_files('avro', 'v3', '{"type": "lt", "term": "ts", "value": "infinity"}')$$);

-- bad input: every failure is an error with its SQLSTATE, never a crash

-- zstandard, written by pyiceberg (manifest lists and manifests): feature_not_supported
SELECT pg_temp.err($$SELECT count(*) FROM skade.manifests('avro', 'zstd')$$);
SELECT pg_temp.err($$SELECT count(*) FROM skade.files('avro', 'zstd')$$);
-- a zstandard manifest in a deflate manifest list: the list reads, the manifest does not
SELECT count(*) FROM skade.manifests('avro', 'bad_zstd_manifest');
SELECT pg_temp.err($$SELECT count(*) FROM skade.files('avro', 'bad_zstd_manifest')$$);
SELECT pg_temp.err($$SELECT count(*) FROM skade.plan_files('avro', 'bad_zstd_manifest', '{"type": "eq", "term": "category", "value": "a"}')$$);

-- a lower bound of 3 bytes for the long column id: data_corrupted, in
-- files() and when plan_files() prunes by it or returns the file
SELECT pg_temp.err($$SELECT count(*) FROM skade.files('avro', 'bad_bound_length')$$);
SELECT pg_temp.err($$SELECT count(*) FROM skade.plan_files('avro', 'bad_bound_length', '{"type": "eq", "term": "id", "value": 1}')$$);
SELECT pg_temp.err($$SELECT count(*) FROM skade.plan_files('avro', 'bad_bound_length', '{"type": "eq", "term": "category", "value": "a"}')$$);
-- ... whereas pruning that file away first is fine
SELECT pg_temp.plan('bad_bound_length', '{"type": "eq", "term": "category", "value": "c"}');

-- data_file.content 7 (0 data, 1 position deletes, 2 equality deletes): data_corrupted
SELECT pg_temp.err($$SELECT count(*) FROM skade.files('avro', 'bad_content')$$);
SELECT pg_temp.err($$SELECT count(*) FROM skade.plan_files('avro', 'bad_content', 'true')$$);

-- column types skade has no decoder for (geometry, variant): their bounds
-- come out as hex (geometry: x 10.5, y 59.25 .. x 11.75, y 60.5 as doubles)
SELECT pg_temp.part(file_path) AS dir, columns->'geo' AS geo, columns->'doc' AS doc
FROM skade.files('avro', 'exotic_types') WHERE columns ? 'geo';
SELECT count(*) AS files, count(*) FILTER (WHERE columns ? 'geo') AS with_geo FROM skade.files('avro', 'exotic_types');
-- filters on them: no pruning by bounds skade cannot read (nor an error for a
-- string literal on geometry); null counts still prune
SELECT pg_temp.plan('exotic_types', '{"type": "eq", "term": "geo", "value": "x"}');
SELECT pg_temp.plan('exotic_types', '{"type": "not-null", "term": "doc"}');
SELECT pg_temp.plan('exotic_types', '{"type": "is-null", "term": "doc"}');
SELECT pg_temp.plan('exotic_types', '{"type": "eq", "term": "category", "value": "b"}');

-- a deflate block with 8 bytes in its middle flipped (same length): data_corrupted
SELECT count(*) FROM skade.manifests('avro', 'corrupt_deflate');
SELECT pg_temp.err($$SELECT count(*) FROM skade.files('avro', 'corrupt_deflate')$$);
-- a snappy block whose CRC-32 (its last 4 bytes) is flipped
SELECT pg_temp.err($$SELECT count(*) FROM skade.files('avro', 'corrupt_snappy')$$);
-- a block of codec null with 8 bytes flipped, where the first data file's
-- path starts: its length reads as -63
SELECT pg_temp.err($$SELECT count(*) FROM skade.files('avro', 'corrupt_null')$$);

-- a manifest 10 bytes shorter than the manifest_length its list records
SELECT pg_temp.err($$SELECT count(*) FROM skade.files('avro', 'short_manifest')$$);
-- ... and cut inside its header
SELECT pg_temp.sh('head -c 100 ' || pg_temp.local(path) || ' > /tmp/skade-fixtures/avro/m.avro && mv /tmp/skade-fixtures/avro/m.avro ' || pg_temp.local(path))
FROM skade.manifests('avro', 'short_manifest') WHERE sequence_number = 1;
SELECT pg_temp.err($$SELECT count(*) FROM skade.files('avro', 'short_manifest')$$);

-- the session still works, and so do the good tables
SELECT count(*) AS files, sum(record_count) AS rows FROM skade.files('avro', 'v2_snappy');
RESET skade.allowed_roots;
