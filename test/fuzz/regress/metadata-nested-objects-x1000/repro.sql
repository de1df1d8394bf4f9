-- skade fuzz finding: memory in metadata/load_table 
-- mutations: json_deep, json_array2, json_add_key, json_swap, ice_field
-- the files under files/ were at /tmp/skade-fuzz.MB0TaX15x7/root/ (paths inside them too);
-- replay with: test/fuzz/run.sh --replay <this directory>
-- (or copy files/ back to that root, with skade.allowed_roots covering it)
-- as role skade_fuzz (SET ROLE or connect as it)
\set ON_ERROR_STOP 0
SELECT skade.create_namespace('fz_meta');
SELECT skade.drop_table('fz_meta', 'm1');
SELECT skade.register_table('fz_meta', 'm1', '/tmp/skade-fuzz.MB0TaX15x7/root/work/metadata/00000769.metadata.json');
SELECT metadata_location, previous_metadata_location, length(metadata::text) FROM skade.load_table('fz_meta', 'm1', snapshots => 'all');
