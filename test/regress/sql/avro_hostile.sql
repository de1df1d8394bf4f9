-- Hostile Avro files (test/data/avro/hostile.py): every one of them crashed a
-- backend (and with it the cluster), took gigabytes of memory or returned
-- garbage rows before skade validated Avro files itself.  Each must now be
-- a clear error naming the file, with a 22SK1 SQLSTATE (malformed file) or
-- 54000 (over skade.max_manifest_size), and the server must stay up.
\pset null '(null)'
\getenv abs_srcdir PG_ABS_SRCDIR
\set ECHO none
SELECT format($$COPY (SELECT 1 WHERE false) TO PROGRAM 'rm -rf /tmp/skade_regress/hostile && python3 %s/test/data/avro/hostile.py /tmp/skade_regress/hostile'$$,
              :'abs_srcdir') \gexec
-- the SQLSTATE and message of a failing call, paths shortened
CREATE FUNCTION pg_temp.err(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	d text;
BEGIN
	EXECUTE q;
	RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS d = PG_EXCEPTION_DETAIL;
	RETURN SQLSTATE || ': ' || replace(SQLERRM, '/tmp/skade_regress/hostile/', '…/')
		|| coalesce(' DETAIL: ' || replace(nullif(d, ''), '/tmp/skade_regress/hostile/', '…/'), '');
END $$;
\set ECHO all
SET skade.allowed_roots = '/tmp/skade_regress/hostile';
SELECT skade.create_namespace('hostile');
SELECT t, skade.register_table('hostile', t, format('/tmp/skade_regress/hostile/%s/metadata/v1.metadata.json', t)) > 0 AS registered
FROM unnest(ARRAY['recursive_schema', 'recursive_union', 'deep_schema', 'array_of_nulls',
                  'undefined_type', 'deflate_bomb', 'snappy_bomb', 'count_bomb', 'short_block',
                  'long_block', 'huge_string', 'negative_size', 'no_sync', 'not_a_list',
                  'not_a_manifest', 'bad_utf8', 'nul_path', 'bad_bound_utf8',
                  'deep_struct', 'parse_budget', 'zero_records', 'nul_bound',
                  'value_bomb']) t;

-- writer schemas libavro would have recursed on, or that Iceberg never writes
SELECT pg_temp.err($$SELECT * FROM skade.manifests('hostile', 'recursive_schema')$$);
SELECT pg_temp.err($$SELECT * FROM skade.files('hostile', 'recursive_union')$$);
SELECT pg_temp.err($$SELECT * FROM skade.plan_files('hostile', 'deep_schema', 'true')$$);
SELECT pg_temp.err($$SELECT * FROM skade.manifests('hostile', 'array_of_nulls')$$);
SELECT pg_temp.err($$SELECT * FROM skade.manifests('hostile', 'undefined_type')$$);
SELECT pg_temp.err($$SELECT * FROM skade.manifests('hostile', 'not_a_list')$$);
SELECT pg_temp.err($$SELECT * FROM skade.files('hostile', 'not_a_manifest')$$);

-- bombs stop at skade.max_manifest_size, counted while decompressing
SET skade.max_manifest_size = '1MB';
SELECT pg_temp.err($$SELECT * FROM skade.manifests('hostile', 'deflate_bomb')$$);
SELECT pg_temp.err($$SELECT * FROM skade.manifests('hostile', 'snappy_bomb')$$);
-- and what libavro-c holds for one record is bounded too (here 80 MB: 7
-- million array elements of a 7 MB record would take it far beyond)
SET skade.max_manifest_size = '8MB';
SELECT pg_temp.err($$SELECT * FROM skade.manifests('hostile', 'value_bomb')$$);
RESET skade.max_manifest_size;
-- under the default the deflate bomb decodes (16 MB), and is still refused:
-- its one record does not use up its block
SELECT pg_temp.err($$SELECT * FROM skade.manifests('hostile', 'deflate_bomb')$$);

-- a million records of zeros: a manifest list entry needs its manifest_path
SELECT pg_temp.err($$SELECT count(*) FROM skade.manifests('hostile', 'zero_records')$$);

-- record counts must fit the block, records must use it up exactly
SELECT pg_temp.err($$SELECT * FROM skade.files('hostile', 'count_bomb')$$);
SELECT pg_temp.err($$SELECT * FROM skade.files('hostile', 'short_block')$$);
SELECT pg_temp.err($$SELECT * FROM skade.files('hostile', 'long_block')$$);

-- lengths: a 1 TB string, a negative block, a block without its sync marker
SELECT pg_temp.err($$SELECT * FROM skade.manifests('hostile', 'huge_string')$$);
SELECT pg_temp.err($$SELECT * FROM skade.manifests('hostile', 'negative_size')$$);
SELECT pg_temp.err($$SELECT * FROM skade.manifests('hostile', 'no_sync')$$);

-- strings that are not UTF-8 text never become text
SELECT pg_temp.err($$SELECT * FROM skade.manifests('hostile', 'bad_utf8')$$);
SELECT pg_temp.err($$SELECT * FROM skade.manifests('hostile', 'nul_path')$$);
-- a string bound: not UTF-8 is an error when its file is returned; one
-- holding a NUL (valid UTF-8, but no text) comes out as hex
SELECT pg_temp.err($$SELECT * FROM skade.files('hostile', 'bad_bound_utf8')$$);
SELECT pg_temp.err($$SELECT * FROM skade.plan_files('hostile', 'bad_bound_utf8', '{"type": "eq", "term": "id", "value": "zz"}')$$);
SELECT columns->'id'->>'lower' AS lower, columns->'id'->>'upper' AS upper
FROM skade.files('hostile', 'nul_bound');

-- hostile metadata: structs nested 100 deep in the current schema, and a
-- file whose parse would take 20 times its size (the budget is 8 times
-- skade.max_metadata_size)
SELECT pg_temp.err($$SELECT * FROM skade.plan_files('hostile', 'deep_struct', 'true')$$);
SET skade.max_metadata_size = '1MB';
SELECT pg_temp.err($$SELECT * FROM skade.snapshots('hostile', 'parse_budget')$$);
RESET skade.max_metadata_size;
SELECT count(*) AS snapshots FROM skade.snapshots('hostile', 'parse_budget');

-- the server is still the same one (no backend crashed)
SELECT count(*) AS tables FROM skade.list_tables('hostile');

SELECT count(*) FROM (SELECT skade.drop_table('hostile', t) FROM skade.list_tables('hostile') t) d;
SELECT skade.drop_namespace('hostile');
RESET skade.allowed_roots;
