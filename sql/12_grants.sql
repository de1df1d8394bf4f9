-- PUBLIC gets nothing; readers list and load; writers change.
DO $grants$
DECLARE
	f regprocedure;
BEGIN
	FOR f IN SELECT p.oid::regprocedure FROM pg_proc p
			 WHERE p.pronamespace = 'skade'::regnamespace LOOP
		EXECUTE format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', f);
	END LOOP;
END
$grants$;

GRANT EXECUTE ON FUNCTION
	skade.namespace_exists(text, text),
	skade.list_namespaces(text, text),
	skade.namespace_properties(text, text),
	skade.load_table(text, text, text, text),
	skade.load_table_pointers(text, text, text, text),
	skade.table_metadata(text, text, text, text),
	skade.snapshots(text, text, text),
	skade.refs(text, text, text),
	skade.history(text, text, text),
	skade.manifests(text, text, bigint, text),
	skade.files(text, text, bigint, text),
	skade.plan_files(text, text, jsonb, bigint, text),
	skade.cache_stats(),
	skade.commit_stats(),
	skade.resolve_many(bigint[]),
	skade.resolve_locations(bigint[]),
	skade.load_table_at(text, text, bigint, text, text),
	skade.load_table_as_of(text, text, timestamptz, text, text),
	skade.index_status(),
	skade.table_exists(text, text, text),
	skade.list_tables(text, text),
	skade.rest_namespace(jsonb),
	skade.rest_content_file(skade.content_file, jsonb),
	skade.rest_value_map(jsonb, text),
	skade.plan_table_scan(text, text, jsonb, text),
	skade.view_metadata(text, text, text),
	skade.list_views(text, text),
	skade.view_exists(text, text, text),
	skade.changes(bigint, integer, text),
	skade.feed_held(xid8[]),
	skade.rest_events(jsonb, text),
	skade.dropped_tables(text)
	TO skade_reader;
GRANT EXECUTE ON FUNCTION
	skade.create_namespace(text, jsonb, text),
	skade.drop_namespace(text, text),
	skade.update_namespace_properties(text, jsonb, text[], text),
	skade.register_table(text, text, text, text),
	skade.rename_table(text, text, text, text, text),
	skade.drop_table(text, text, text),
	skade.commit_table(text, text, text, text, text),
	skade.commit_transaction(jsonb, text),
	skade.resolve_commit_log(integer),
	skade.rebuild_index(),
	skade.write_table_metadata(text, jsonb, text, text),
	skade.next_metadata_location(text, text, text, text),
	skade.create_table_commit(text, text, text, text),
	skade.fresh_type(jsonb, text, integer, jsonb),
	skade.create_table(text, text, jsonb, jsonb, jsonb, jsonb, text, integer, text),
	skade.new_table_metadata(text, text, jsonb, jsonb, jsonb, jsonb, text, integer, text),
	skade.path_component(text, text),
	skade.empty_table_metadata(text, text, jsonb, text),
	skade.update_table(text, text, jsonb, jsonb, text),
	skade.update_table_fast(text, text, text, jsonb, jsonb, text),
	skade.create_table_fast(text, text, jsonb, jsonb, text),
	skade.add_schema(jsonb, jsonb, integer, integer),
	skade.add_snapshot(jsonb, jsonb, integer),
	skade.set_snapshot_ref(jsonb, jsonb, integer, jsonb, bigint, integer),
	skade.remove_snapshots(jsonb, jsonb, integer, integer),
	skade.upgraded(jsonb, integer),
	skade.add_spec(jsonb, jsonb, integer, integer),
	skade.add_sort_order(jsonb, jsonb, integer, integer),
	skade.expire_snapshots(text, text, timestamptz, integer, boolean, text),
	skade.in_branch_ancestry(jsonb, bigint, text[]),
	skade.prune_commit_log(text, text, bigint, text),
	skade.swap_table(text, text, text, boolean, text),
	skade.rewrite_manifest_files(text, bigint, text, text, text),
	skade.rewrite_manifests(text, text, bigint, text),
	skade.delete_at_commit(text[], text, text),
	skade.expire_files(text, text, bigint[], text),
	skade.purge_table(text, text, text),
	skade.undrop_table(text, text, text, text, bigint),
	skade.undrop_view(text, text, text, text, bigint),
	skade.undrop(text, text, text, text, bigint, text),
	skade.write_view_metadata(text, jsonb, text, text),
	skade.apply_view_updates(jsonb, jsonb),
	skade.create_view(text, text, jsonb, text),
	skade.update_view(text, text, jsonb, jsonb, text),
	skade.drop_view(text, text, text),
	skade.rename_view(text, text, text, text, text),
	skade.register_view(text, text, text, text),
	skade.view_pointer(text, text, text, text, text, text),
	skade.json_int(jsonb, text),
	skade.source_type(jsonb, integer),
	skade.bind_error(jsonb, jsonb, boolean)
	TO skade_writer;

/* ------------------------------------------------------------ privileges of skade_user */

-- skade's own tables: members of skade_user read the rows of what they may
-- read (never the grants); everyone else as the table privileges say
ALTER TABLE skade.commit_log ENABLE ROW LEVEL SECURITY;
CREATE POLICY skade_unrestricted ON skade.commit_log FOR SELECT
	USING (NOT pg_catalog.pg_has_role('skade_user', 'USAGE'));
CREATE POLICY skade_db_wide_read ON skade.commit_log FOR SELECT TO skade_reader USING (true);
CREATE POLICY skade_read ON skade.commit_log FOR SELECT TO skade_user
	USING (op NOT IN ('grant', 'revoke')
		   AND skade.may('read', table_namespace, table_name, catalog_name));
ALTER TABLE skade.commit_log_archive ENABLE ROW LEVEL SECURITY;
CREATE POLICY skade_unrestricted ON skade.commit_log_archive FOR SELECT
	USING (NOT pg_catalog.pg_has_role('skade_user', 'USAGE'));
CREATE POLICY skade_db_wide_read ON skade.commit_log_archive FOR SELECT TO skade_reader USING (true);
CREATE POLICY skade_read ON skade.commit_log_archive FOR SELECT TO skade_user
	USING (op NOT IN ('grant', 'revoke')
		   AND skade.may('read', table_namespace, table_name, catalog_name));
ALTER TABLE skade.snapshot_map ENABLE ROW LEVEL SECURITY;
CREATE POLICY skade_unrestricted ON skade.snapshot_map FOR SELECT
	USING (NOT pg_catalog.pg_has_role('skade_user', 'USAGE'));
CREATE POLICY skade_db_wide_read ON skade.snapshot_map FOR SELECT TO skade_reader USING (true);
CREATE POLICY skade_read ON skade.snapshot_map FOR SELECT TO skade_user
	USING (skade.may('read', table_namespace, table_name, catalog_name));
-- a feed row tells of its log row: readable where that row is
ALTER TABLE skade.commit_log_feed ENABLE ROW LEVEL SECURITY;
CREATE POLICY skade_unrestricted ON skade.commit_log_feed FOR SELECT
	USING (NOT pg_catalog.pg_has_role('skade_user', 'USAGE'));
CREATE POLICY skade_db_wide_read ON skade.commit_log_feed FOR SELECT TO skade_reader USING (true);
CREATE POLICY skade_read ON skade.commit_log_feed FOR SELECT TO skade_user
	USING (EXISTS (SELECT 1 FROM skade.commit_log c WHERE c.seq OPERATOR(pg_catalog.=) commit_log_feed.seq)
		   OR EXISTS (SELECT 1 FROM skade.commit_log_archive a
					  WHERE a.seq OPERATOR(pg_catalog.=) commit_log_feed.seq));
GRANT SELECT ON skade.commit_log_feed TO skade_reader;
GRANT SELECT ON skade.commit_log, skade.commit_log_archive, skade.snapshot_map,
	skade.commit_log_feed TO skade_user;

REVOKE ALL ON FUNCTION skade.may(text, text, text, text), skade.may_see_namespace(text, text),
	skade.check_write(text, text, text), skade.grant(text, name, text, text, text),
	skade.revoke(text, name, text, text, text), skade.grants_changed() FROM PUBLIC;
-- the policies call these for whoever reads the tables; they tell a role only about itself
GRANT EXECUTE ON FUNCTION skade.may(text, text, text, text), skade.may_see_namespace(text, text),
	skade.check_write(text, text, text) TO PUBLIC;

-- skade_user runs what writers run (each object as its grants allow), except what
-- acts on files or the whole catalog by location rather than by table: the index
-- rebuild, deleting files at commit, rewriting manifests (and so purge_table and
-- rewrite_manifests, and expire_snapshots when it deletes files, stay writers')
DO $user_functions$
DECLARE
	f regprocedure;
BEGIN
	FOR f IN SELECT p.oid::regprocedure FROM pg_proc p
			 WHERE p.pronamespace = 'skade'::regnamespace
			   AND has_function_privilege('skade_writer', p.oid, 'EXECUTE')
			   AND p.oid NOT IN ('skade.rebuild_index()'::regprocedure,
								 'skade.delete_at_commit(text[], text, text)'::regprocedure,
								 'skade.rewrite_manifest_files(text, bigint, text, text, text)'::regprocedure)
			 ORDER BY p.oid LOOP
		EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO skade_user', f);
	END LOOP;
END
$user_functions$;
