-- File confinement (skade.allowed_roots) without holes: no existence oracle
-- outside the roots, no symbolic link out of them (and no message naming
-- where one points), and no cache hit around a narrower setting.
\pset null '(null)'
\getenv abs_srcdir PG_ABS_SRCDIR
\set ECHO none
-- /tmp/skade_regress/conf: root/ (allowed) with links in every direction,
-- outside/ (not allowed), and hostile.py's tables (split: a good table whose
-- manifest is in split_manifests/)
SELECT format($$COPY (SELECT 1 WHERE false) TO PROGRAM 'rm -rf /tmp/skade_regress/conf && mkdir -p /tmp/skade_regress/conf/root/sub /tmp/skade_regress/conf/outside && python3 %s/test/data/avro/hostile.py /tmp/skade_regress/conf/avro && cp %s/test/data/metadata/00003-v2.metadata.json /tmp/skade_regress/conf/root/ && cp %s/test/data/metadata/00003-v2.metadata.json /tmp/skade_regress/conf/outside/secret.metadata.json && cd /tmp/skade_regress/conf/root && ln -s /proc/self/environ environ.metadata.json && ln -s /tmp/skade_regress/conf/outside/secret.metadata.json secret.metadata.json && ln -s /tmp/skade_regress/conf/outside/nothing.metadata.json nothing.metadata.json && ln -s ../outside/secret.metadata.json relative-out.metadata.json && ln -s ../00003-v2.metadata.json sub/relative-in.metadata.json && ln -s ../../root/00003-v2.metadata.json sub/out-and-in.metadata.json && ln -s /tmp/skade_regress/conf/root/00003-v2.metadata.json sub/absolute-in.metadata.json && ln -s loop2.metadata.json loop1.metadata.json && ln -s loop1.metadata.json loop2.metadata.json && ln -s sub/../../outside dir-out'$$,
              :'abs_srcdir', :'abs_srcdir', :'abs_srcdir') \gexec
CREATE FUNCTION pg_temp.err(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	d text;
BEGIN
	EXECUTE q;
	RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS d = PG_EXCEPTION_DETAIL;
	RETURN SQLSTATE || ': ' || SQLERRM || coalesce(' DETAIL: ' || nullif(d, ''), '');
END $$;
\set ECHO all
SET skade.allowed_roots = '/tmp/skade_regress/conf/root';
SELECT skade.create_namespace('conf');

-- register a table at a location, then read it: the outcome
CREATE SEQUENCE pg_temp.probe_seq;
CREATE FUNCTION pg_temp.probe(loc text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	t text := 'p' || nextval('pg_temp.probe_seq');
BEGIN
	PERFORM skade.register_table('conf', t, loc);
	RETURN pg_temp.err(format('SELECT count(*) FROM skade.snapshots(%L, %L)', 'conf', t));
END $$;

-- outside the roots: the same error whether the file exists or not, and
-- nothing about where a path leads
SELECT l, pg_temp.probe(l)
FROM unnest(ARRAY['/etc/passwd', '/etc/no-such-file', '/proc/self/environ',
                  '/tmp/skade_regress/conf/outside/secret.metadata.json',
                  '/tmp/skade_regress/conf/outside/nothing.metadata.json',
                  '/tmp/skade_regress/conf/root/../outside/secret.metadata.json']) l;

-- links inside the root are followed while they stay inside; one that
-- leads out is refused the same way whether its target exists or not (also
-- in passing: out-and-in climbs above the root and back)
SELECT l, pg_temp.probe('/tmp/skade_regress/conf/root/' || l)
FROM unnest(ARRAY['environ.metadata.json', 'secret.metadata.json', 'nothing.metadata.json',
                  'relative-out.metadata.json', 'dir-out/secret.metadata.json',
                  'sub/out-and-in.metadata.json', 'loop1.metadata.json', 'sub/relative-in.metadata.json',
                  'sub/absolute-in.metadata.json', 'sub/../00003-v2.metadata.json']) l;

-- a cache hit is checked against the roots in force: metadata (L0) read
-- under wider roots is refused under narrower ones, as an uncached read is
SET skade.allowed_roots = '/tmp/skade_regress/conf';
SELECT skade.register_table('conf', 'avro', '/tmp/skade_regress/conf/avro/split/metadata/v1.metadata.json') > 0 AS registered;
SELECT count(*) AS files FROM skade.files('conf', 'avro');
SELECT entries > 0 AS cached, manifest_entries > 0 AS manifest_cached FROM skade.cache_stats();
SET skade.allowed_roots = '/tmp/skade_regress/conf/root';
SELECT pg_temp.err($$SELECT count(*) FROM skade.snapshots('conf', 'avro')$$) AS metadata_hit;
-- and a manifest (L0.5) read under wider roots is refused under narrower ones
SET skade.allowed_roots = '/tmp/skade_regress/conf/avro/split';
SELECT count(*) AS snapshots FROM skade.snapshots('conf', 'avro');
SELECT pg_temp.err($$SELECT count(*) FROM skade.files('conf', 'avro')$$) AS manifest_hit;
SELECT pg_temp.err($$SELECT count(*) FROM skade.plan_files('conf', 'avro', 'true')$$) AS manifest_hit;
SET skade.allowed_roots = '/tmp/skade_regress/conf';
SELECT count(*) AS files_again FROM skade.files('conf', 'avro');

-- only a superuser sets the roots
CREATE ROLE skade_test_conf IN ROLE skade_reader;
SET ROLE skade_test_conf;
SET skade.allowed_roots = '/';
RESET ROLE;
DROP ROLE skade_test_conf;

SELECT count(*) FROM (SELECT skade.drop_table('conf', t) FROM skade.list_tables('conf') t) d;
SELECT skade.drop_namespace('conf');
RESET skade.allowed_roots;
