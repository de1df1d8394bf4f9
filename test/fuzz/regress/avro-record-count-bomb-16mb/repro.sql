-- skade fuzz finding: memory in avro/manifests 
-- mutations: seed:hostile/short_block, blk_deflate_bomb[16MB,count=1048576]
-- the files under files/ were at /tmp/skade-fuzz.MB0TaX15x7/root/ (paths inside them too);
-- replay with: test/fuzz/run.sh --replay <this directory>
-- (or copy files/ back to that root, with skade.allowed_roots covering it)
-- as role skade_fuzz (SET ROLE or connect as it)
\set ON_ERROR_STOP 0
SELECT skade.create_namespace('fz_avro');
SELECT skade.drop_table('fz_avro', 'a2');
SELECT skade.register_table('fz_avro', 'a2', '/tmp/skade-fuzz.MB0TaX15x7/root/work/avro/00008063.metadata.json');
SELECT * FROM skade.manifests('fz_avro', 'a2', NULL);
