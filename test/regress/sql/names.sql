-- Argument validation: NULLs, empty and over-long names, empty namespace
-- levels, control characters.  Every error leaves the catalog unchanged.
SELECT skade.create_namespace(NULL);
SELECT skade.create_namespace('');
SELECT skade.create_namespace(repeat('n', 256));
SELECT skade.create_namespace(repeat('n', 255)) IS NULL AS created_255;
SELECT skade.drop_namespace(repeat('n', 255));
SELECT skade.create_namespace('a..b');
SELECT skade.create_namespace('.a');
SELECT skade.create_namespace('a.');
SELECT skade.create_namespace('.');
SELECT skade.create_namespace(E'tab\there');
SELECT skade.create_namespace('ok', NULL);
SELECT skade.create_namespace('ok', '[]');
SELECT skade.create_namespace('ok', '{"n": 1}');
SELECT skade.create_namespace('ok', jsonb_build_object('k', repeat('v', 1001)));
SELECT skade.create_namespace('ok', jsonb_build_object(repeat('k', 256), 'v'));
SELECT skade.create_namespace('ok', '{"exists": "false"}');
SELECT skade.create_namespace('ok', '{}', '');
SELECT skade.create_namespace('ok', '{}', repeat('c', 256));

SELECT skade.create_namespace('ok');
SELECT skade.register_table('ok', NULL, 'file:///x');
SELECT skade.register_table('ok', '', 'file:///x');
SELECT skade.register_table('ok', repeat('t', 256), 'file:///x');
SELECT skade.register_table('ok', 't', NULL);
SELECT skade.register_table('ok', 't', '');
SELECT skade.register_table('ok', 't', 'file:///' || repeat('x', 1000));
SELECT skade.register_table('ok', 't', E'file:///x\n.metadata.json');
SELECT skade.register_table('ok..x', 't', 'file:///x');
SELECT skade.load_table(NULL, 't', snapshots => 'none');
SELECT skade.commit_table('ok', 't', NULL, 'file:///y');
SELECT skade.rename_table('ok', 't', 'ok', NULL);

-- nothing was changed by any of the above
SELECT count(*) AS tables FROM iceberg_tables;
SELECT namespace, property_key FROM iceberg_namespace_properties ORDER BY 1, 2;
SELECT count(*) AS log_rows FROM skade.commit_log WHERE table_namespace = 'ok';
SELECT skade.drop_namespace('ok');
