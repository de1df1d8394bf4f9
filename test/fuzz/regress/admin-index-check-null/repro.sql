-- skade fuzz finding: crash in admin/index_check 
-- mutations: index_check
-- the files under files/ were at /tmp/skade-fuzz.L663XGBzYZ/root/ (paths inside them too);
-- replay with: test/fuzz/run.sh --replay <this directory>
-- (or copy files/ back to that root, with skade.allowed_roots covering it)
-- as role postgres (SET ROLE or connect as it)
\set ON_ERROR_STOP 0
SELECT skade_test.index_check(NULL::bigint[]);
