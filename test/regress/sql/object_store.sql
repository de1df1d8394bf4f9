-- Object storage (s3://) without a server: which locations are objects,
-- the confinement to the s3:// entries of the roots (nothing requested
-- outside them), namespace endpoints limited to allowed ones, the key's
-- file guarded, and an endpoint that does not answer.  (Requests against a
-- real S3 server: test/s3, test/faults/s3.sh.)
\pset null '(null)'
\set ECHO none
CREATE FUNCTION pg_temp.err(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE q;
	RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE || ': ' || SQLERRM;
END $$;
CREATE SEQUENCE pg_temp.probe_seq;
-- a table at a location (as a JDBC client registers it), then read it
CREATE FUNCTION pg_temp.probe(ns text, loc text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	t text := 'o' || nextval('pg_temp.probe_seq');
BEGIN
	INSERT INTO public.iceberg_tables (catalog_name, table_namespace, table_name,
									   metadata_location, previous_metadata_location, iceberg_type)
	VALUES ('skade', ns, t, loc, NULL, 'TABLE');
	RETURN pg_temp.err(format('SELECT count(*) FROM skade.snapshots(%L, %L)', ns, t));
END $$;
\set ECHO all

-- the roots take s3:// entries beside directories (a bucket, or a prefix)
SET skade.allowed_roots = '/tmp/skade_regress, s3://wh-bucket/warehouse, s3a://whole-bucket/';
SET skade.write_roots = 's3://wh-bucket/warehouse/';
SHOW skade.allowed_roots;
SHOW skade.write_roots;
-- entries that are no bucket[/prefix] are refused
SET skade.allowed_roots = 's3://x';
SET skade.allowed_roots = 's3://wh-bucket/a/../b';
SET skade.write_roots = E's3://wh-bucket/a\001b';
SET skade.allowed_roots = '/tmp/skade_regress, s3://wh-bucket/warehouse, s3a://whole-bucket/';
-- endpoints are http(s)://host[:port] and nothing more
SET skade.s3_endpoint = 'ftp://127.0.0.1';
SET skade.s3_endpoint = 'http://user@127.0.0.1:1';
SET skade.s3_endpoint = 'http://127.0.0.1:1/path';
SET skade.s3_endpoint = 'http://127.0.0.1:1';
SET skade.s3_path_style = on;
SET skade.s3_max_retries = 0;

SELECT skade.create_namespace('obj');
-- outside the roots, malformed, or not an object location: refused before
-- any request (the endpoint does not even answer)
SELECT l, pg_temp.probe('obj', l)
FROM unnest(ARRAY['s3://other-bucket/warehouse/t/metadata/v1.metadata.json',
                  's3://wh-bucket/warehouse-2/t/v1.metadata.json',
                  's3://wh-bucket/warehouse/../secret/v1.metadata.json',
                  's3n://wh-bucket/warehouse/./v1.metadata.json',
                  's3://wh-bucket/',
                  's3://ab/warehouse/v1.metadata.json',
                  's3://wh bucket/warehouse/v1.metadata.json',
                  'gs://wh-bucket/warehouse/v1.metadata.json']) AS l;

-- no key: the server's environment has none and no file is set
SELECT pg_temp.probe('obj', 's3://wh-bucket/warehouse/t/v1.metadata.json');
-- the key's file must be the server's own and private
COPY (SELECT 1 WHERE false) TO PROGRAM 'printf "[default]\naws_access_key_id = AKIDEXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY\n" > /tmp/skade_regress/s3-credentials && chmod 644 /tmp/skade_regress/s3-credentials';
COPY (SELECT 1 WHERE false) TO PROGRAM 'printf "[other]\naws_access_key_id = AKIDEXAMPLE\naws_secret_access_key = x\n" > /tmp/skade_regress/s3-credentials-other && chmod 600 /tmp/skade_regress/s3-credentials-other';
SET skade.s3_credentials_file = '/tmp/skade_regress/no-such-file';
SELECT pg_temp.probe('obj', 's3://wh-bucket/warehouse/t/v1.metadata.json');
SET skade.s3_credentials_file = '/tmp/skade_regress/s3-credentials';
SELECT pg_temp.probe('obj', 's3://wh-bucket/warehouse/t/v1.metadata.json');
-- no [default] profile in it
SET skade.s3_credentials_file = '/tmp/skade_regress/s3-credentials-other';
SELECT pg_temp.probe('obj', 's3://wh-bucket/warehouse/t/v1.metadata.json');
COPY (SELECT 1 WHERE false) TO PROGRAM 'chmod 600 /tmp/skade_regress/s3-credentials';
SET skade.s3_credentials_file = '/tmp/skade_regress/s3-credentials';
-- private now: accepted; the endpoint does not answer
SELECT pg_temp.probe('obj', 's3://wh-bucket/warehouse/t/v1.metadata.json');
SELECT pg_temp.probe('obj', 's3a://whole-bucket/any/where/v1.metadata.json');

-- a namespace's s3.endpoint must be skade.s3_endpoint or an allowed one
SELECT skade.create_namespace('obj_evil', '{"s3.endpoint": "http://127.0.0.1:9"}');
SELECT skade.create_namespace('obj_evil.child');
SELECT pg_temp.probe('obj_evil', 's3://wh-bucket/warehouse/e/v1.metadata.json');
SELECT pg_temp.probe('obj_evil.child', 's3://wh-bucket/warehouse/e/v1.metadata.json');
SET skade.s3_allowed_endpoints = 'http://127.0.0.1:9/';
-- allowed now: it is asked (and does not answer)
SET skade.s3_connect_timeout = 50;
SELECT regexp_replace(pg_temp.probe('obj_evil.child', 's3://wh-bucket/warehouse/e/v1.metadata.json'), 'timed out|failed', 'failed') AS asked;
RESET skade.s3_connect_timeout;
RESET skade.s3_allowed_endpoints;

-- every combination of the two settings: a namespace endpoint is asked
-- (08006: nothing listens there) when it is skade.s3_endpoint or one of
-- skade.s3_allowed_endpoints, each setting read on its own (either may be
-- empty) and endpoints compared without a trailing slash; else 42501 with
-- no request.  (p1 .. p3 are 127.0.0.1 ports 1, 9 and 2; p9x port 99.)
SET client_min_messages = error;
SELECT skade.create_namespace('obj_p1', '{"s3.endpoint": "http://127.0.0.1:1"}');
SELECT skade.create_namespace('obj_p1s', '{"s3.endpoint": "http://127.0.0.1:1/"}');
SELECT skade.create_namespace('obj_p2', '{"s3.endpoint": "http://127.0.0.1:9"}');
SELECT skade.create_namespace('obj_p3', '{"s3.endpoint": "http://127.0.0.1:2/"}');
SELECT skade.create_namespace('obj_p9x', '{"s3.endpoint": "http://127.0.0.1:99"}');
SELECT pg_temp.probe(n, 's3://wh-bucket/warehouse/p/v1.metadata.json') IS NOT NULL
FROM unnest(ARRAY['obj_p1', 'obj_p1s', 'obj_p2', 'obj_p3', 'obj_p9x']) AS n;
RESET client_min_messages;
CREATE FUNCTION pg_temp.policy() RETURNS TABLE (endpoint text, allowed text, ns_endpoint text, sqlstate text)
LANGUAGE sql AS $$
	SELECT current_setting('skade.s3_endpoint'), current_setting('skade.s3_allowed_endpoints'), e,
		   split_part(pg_temp.err(format('SELECT count(*) FROM skade.snapshots(%L, %L)', n, t.table_name)), ':', 1)
	FROM (VALUES (1, 'obj_p1', 'http://127.0.0.1:1'), (2, 'obj_p1s', 'http://127.0.0.1:1/'),
				 (3, 'obj_p2', 'http://127.0.0.1:9'), (4, 'obj_p3', 'http://127.0.0.1:2/'),
				 (5, 'obj_p9x', 'http://127.0.0.1:99')) AS v(i, n, e)
	JOIN public.iceberg_tables t ON t.table_namespace = n
	ORDER BY i
$$;
SET skade.s3_endpoint = '';
SET skade.s3_allowed_endpoints = '';
SELECT * FROM pg_temp.policy();
SET skade.s3_endpoint = 'http://127.0.0.1:1';
SELECT * FROM pg_temp.policy();
SET skade.s3_endpoint = 'http://127.0.0.1:1/';
SELECT * FROM pg_temp.policy();
SET skade.s3_endpoint = '';
SET skade.s3_allowed_endpoints = 'http://127.0.0.1:9';
SELECT * FROM pg_temp.policy();
SET skade.s3_allowed_endpoints = 'http://127.0.0.1:9/', 'http://127.0.0.1:2';
SELECT * FROM pg_temp.policy();
SET skade.s3_endpoint = 'http://127.0.0.1:1';
SELECT * FROM pg_temp.policy();
-- empty entries in the list are no entries
SET skade.s3_allowed_endpoints = ' , http://127.0.0.1:2/,,';
SELECT * FROM pg_temp.policy();
SET skade.s3_endpoint = 'http://127.0.0.1:1';
RESET skade.s3_allowed_endpoints;
SELECT skade.create_namespace('obj_region', '{"s3.region": "eu-west-1/../x"}');
SELECT pg_temp.probe('obj_region', 's3://wh-bucket/warehouse/r/v1.metadata.json');

-- writes: only below an s3:// entry of skade.write_roots
SELECT regexp_replace(pg_temp.err($$SELECT skade.create_table('obj', 'w1', '{"type":"struct","fields":[]}', location => 's3://whole-bucket/t')$$), '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}', '<uuid>');
SELECT regexp_replace(pg_temp.err($$SELECT skade.create_table('obj', 'w2', '{"type":"struct","fields":[]}', location => 's3://wh-bucket/warehouse/obj/w2')$$), '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}', '<uuid>');
SELECT count(*) FROM public.iceberg_tables WHERE table_name IN ('w1', 'w2');

-- a non-superuser cannot widen any of it
CREATE ROLE obj_writer LOGIN;
GRANT skade_writer TO obj_writer;
SET ROLE obj_writer;
SET skade.allowed_roots = 's3://other-bucket';
SET skade.s3_endpoint = 'http://127.0.0.1:2';
SET skade.s3_credentials_file = '/tmp/x';
SET skade.s3_sts_endpoint = 'http://127.0.0.1:2';
SET skade.s3_sts_role_arn = 'arn:aws:iam::1:role/any';
SET skade.s3_sts_external_id = 'x';
SET skade.s3_vended_credentials_duration = '12h';
RESET ROLE;
DROP ROLE obj_writer;

-- vended credentials' settings: an STS endpoint is an endpoint; a lifetime of 1min to 12h
SET skade.s3_sts_endpoint = 'http://127.0.0.1:2/path';
SET skade.s3_sts_endpoint = 'ftp://sts.example';
SET skade.s3_sts_endpoint = 'https://sts.eu-west-1.amazonaws.com';
SHOW skade.s3_sts_endpoint;
SELECT left(pg_temp.err($$SET skade.s3_vended_credentials_duration = '59s'$$), 5);
SELECT left(pg_temp.err($$SET skade.s3_vended_credentials_duration = '13h'$$), 5);
SET skade.s3_vended_credentials_duration = '15min';
SHOW skade.s3_vended_credentials_duration;
RESET skade.s3_vended_credentials_duration;
SHOW skade.s3_vended_credentials_duration;
RESET ALL;
DELETE FROM public.iceberg_tables WHERE table_namespace LIKE 'obj%';
SELECT skade.drop_namespace('obj_evil.child');
SELECT skade.drop_namespace(n) FROM unnest(ARRAY['obj_evil', 'obj_region', 'obj', 'obj_p1', 'obj_p1s', 'obj_p2', 'obj_p3', 'obj_p9x']) AS n;
