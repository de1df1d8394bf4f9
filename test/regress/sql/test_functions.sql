-- The functions only the tests use are not in the extension: the suite creates them
-- (test/functions.sql, schema skade_test) for the tests that follow.
SELECT count(*) AS test_functions_in_the_extension FROM pg_depend d JOIN pg_proc p ON p.oid = d.objid
WHERE d.refclassid = 'pg_extension'::regclass AND d.classid = 'pg_proc'::regclass
  AND p.proname IN ('index_check', 'stree64_selftest', 'stree64_bench', 'sigv4_sign');
\getenv abs_srcdir PG_ABS_SRCDIR
\set ECHO none
\i :abs_srcdir/test/functions.sql
\set ECHO all
SELECT p.proname FROM pg_proc p WHERE p.pronamespace = 'skade_test'::regnamespace ORDER BY 1;
