-- skade fuzz finding: memory in avro/plan_files 
-- mutations: blk_deflate_bomb[300MB,count=1]
-- the files under files/ were at /tmp/skade-fuzz.L663XGBzYZ/root/ (paths inside them too);
-- replay with: test/fuzz/run.sh --replay <this directory>
-- (or copy files/ back to that root, with skade.allowed_roots covering it)
-- as role skade_fuzz (SET ROLE or connect as it)
\set ON_ERROR_STOP 0
SELECT skade.create_namespace('fz_avro');
SELECT skade.drop_table('fz_avro', 'a3');
SELECT skade.register_table('fz_avro', 'a3', '/tmp/skade-fuzz.L663XGBzYZ/root/work/avro/00000224.metadata.json');
SELECT * FROM skade.plan_files('fz_avro', 'a3', '{"type": "is-null", "term": "id"}'::jsonb, NULL);
