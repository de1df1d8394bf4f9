CREATE FUNCTION skade.create_namespace(namespace text, properties jsonb DEFAULT '{}',
									   catalog text DEFAULT NULL)
	RETURNS void AS 'MODULE_PATHNAME', 'skade_create_namespace' LANGUAGE C;
CREATE FUNCTION skade.drop_namespace(namespace text, catalog text DEFAULT NULL)
	RETURNS void AS 'MODULE_PATHNAME', 'skade_drop_namespace' LANGUAGE C;
CREATE FUNCTION skade.namespace_exists(namespace text, catalog text DEFAULT NULL)
	RETURNS boolean AS 'MODULE_PATHNAME', 'skade_namespace_exists' LANGUAGE C STABLE
	PARALLEL RESTRICTED;
CREATE FUNCTION skade.list_namespaces(parent text DEFAULT NULL, catalog text DEFAULT NULL)
	RETURNS SETOF text AS 'MODULE_PATHNAME', 'skade_list_namespaces' LANGUAGE C STABLE
	ROWS 100 PARALLEL RESTRICTED;
CREATE FUNCTION skade.namespace_properties(namespace text, catalog text DEFAULT NULL)
	RETURNS jsonb AS 'MODULE_PATHNAME', 'skade_namespace_properties' LANGUAGE C STABLE
	PARALLEL RESTRICTED;
CREATE FUNCTION skade.update_namespace_properties(namespace text, updates jsonb DEFAULT '{}',
												  removals text[] DEFAULT '{}',
												  catalog text DEFAULT NULL,
												  OUT updated text[], OUT removed text[],
												  OUT missing text[])
	RETURNS record AS 'MODULE_PATHNAME', 'skade_update_namespace_properties' LANGUAGE C;

/*
 * path_component: name, checked to be one component of a path (not "." or
 * "..", no "/" or control character, 1..255 bytes; else 42602), as a
 * default location derived from a name needs it (new_table_metadata,
 * create_view; create_namespace checks its levels in C).
 */
CREATE FUNCTION skade.path_component(name text, what text DEFAULT 'table')
	RETURNS text AS 'MODULE_PATHNAME', 'skade_path_component' LANGUAGE C IMMUTABLE STRICT
	PARALLEL SAFE;

CREATE FUNCTION skade.register_table(namespace text, name text, metadata_location text,
									 catalog text DEFAULT NULL)
	RETURNS bigint AS 'MODULE_PATHNAME', 'skade_register_table' LANGUAGE C;
CREATE FUNCTION skade.load_table_pointers(namespace text, name text, snapshots text DEFAULT 'all',
										  catalog text DEFAULT NULL,
										  OUT metadata_location text,
										  OUT previous_metadata_location text)
	RETURNS record AS 'MODULE_PATHNAME', 'skade_load_table_pointers' LANGUAGE C STABLE
	PARALLEL RESTRICTED;
/*
 * load_table is SQL that the planner inlines into the caller's FROM clause:
 * its metadata column is then table_metadata's datum, served in place from
 * the cache, and no row is formed or copied around the text.
 */
CREATE FUNCTION skade.load_table(namespace text, name text, snapshots text DEFAULT 'all',
								 catalog text DEFAULT NULL,
								 OUT metadata_location text,
								 OUT previous_metadata_location text,
								 OUT metadata json)
	RETURNS SETOF record LANGUAGE sql STABLE PARALLEL RESTRICTED ROWS 1
	AS $$SELECT p.metadata_location, p.previous_metadata_location,
	skade.table_metadata(namespace, name, snapshots, catalog)
	FROM skade.load_table_pointers(namespace, name, snapshots, catalog) p$$;
CREATE FUNCTION skade.table_metadata(namespace text, name text, snapshots text DEFAULT 'all',
									 catalog text DEFAULT NULL)
	RETURNS json AS 'MODULE_PATHNAME', 'skade_table_metadata_1_1' LANGUAGE C STABLE
	COST 5000 PARALLEL RESTRICTED;
CREATE FUNCTION skade.table_exists(namespace text, name text, catalog text DEFAULT NULL)
	RETURNS boolean AS 'MODULE_PATHNAME', 'skade_table_exists' LANGUAGE C STABLE
	PARALLEL RESTRICTED;
CREATE FUNCTION skade.list_tables(namespace text, catalog text DEFAULT NULL)
	RETURNS SETOF text AS 'MODULE_PATHNAME', 'skade_list_tables' LANGUAGE C STABLE
	ROWS 100 PARALLEL RESTRICTED;
CREATE FUNCTION skade.rename_table(namespace text, name text, new_namespace text,
								   new_name text, catalog text DEFAULT NULL)
	RETURNS bigint AS 'MODULE_PATHNAME', 'skade_rename_table' LANGUAGE C;
CREATE FUNCTION skade.drop_table(namespace text, name text, catalog text DEFAULT NULL)
	RETURNS text AS 'MODULE_PATHNAME', 'skade_drop_table' LANGUAGE C;
CREATE FUNCTION skade.commit_table(namespace text, name text, expected_location text,
								   new_location text, catalog text DEFAULT NULL)
	RETURNS bigint AS 'MODULE_PATHNAME', 'skade_commit_table' LANGUAGE C;
CREATE FUNCTION skade.commit_transaction(changes jsonb, catalog text DEFAULT NULL)
	RETURNS TABLE (namespace text, name text, metadata_location text, seq bigint)
	AS 'MODULE_PATHNAME', 'skade_commit_transaction' LANGUAGE C
	ROWS 10;

/* ------------------------------------------------------------ table metadata */

CREATE FUNCTION skade.snapshots(namespace text, name text, catalog text DEFAULT NULL)
	RETURNS TABLE (snapshot_id bigint, parent_id bigint, sequence_number bigint,
				   committed_at timestamptz, operation text, manifest_list text,
				   summary jsonb, schema_id integer, is_current boolean)
	AS 'MODULE_PATHNAME', 'skade_snapshots' LANGUAGE C STABLE
	COST 5000 ROWS 100 PARALLEL RESTRICTED;
CREATE FUNCTION skade.refs(namespace text, name text, catalog text DEFAULT NULL)
	RETURNS TABLE (name text, type text, snapshot_id bigint, max_ref_age_ms bigint,
				   max_snapshot_age_ms bigint, min_snapshots_to_keep integer)
	AS 'MODULE_PATHNAME', 'skade_refs' LANGUAGE C STABLE
	COST 5000 ROWS 10 PARALLEL RESTRICTED;
CREATE FUNCTION skade.history(namespace text, name text, catalog text DEFAULT NULL)
	RETURNS TABLE (made_current_at timestamptz, snapshot_id bigint, parent_id bigint,
				   is_current_ancestor boolean)
	AS 'MODULE_PATHNAME', 'skade_history' LANGUAGE C STABLE
	COST 5000 ROWS 100 PARALLEL RESTRICTED;

CREATE FUNCTION skade.cache_stats(OUT hits bigint, OUT misses bigint,
								  OUT coalesced_waits bigint, OUT evictions bigint,
								  OUT entries bigint, OUT bytes bigint, OUT capacity bigint,
								  OUT pointer_hits bigint, OUT pointer_misses bigint,
								  OUT pointer_entries bigint,
								  OUT manifest_hits bigint, OUT manifest_misses bigint,
								  OUT manifest_coalesced_waits bigint, OUT manifest_evictions bigint,
								  OUT manifest_entries bigint, OUT manifest_bytes bigint,
								  OUT manifest_capacity bigint)
	RETURNS record AS 'MODULE_PATHNAME', 'skade_cache_stats' LANGUAGE C VOLATILE
	PARALLEL RESTRICTED;
-- the cluster's commit counters (cluster-wide, since the server started, not
-- transactional): pointer changes logged, CAS commits lost through the SQL API,
-- stale appends rebased, group commits and the commits they made for others,
-- and commits to existing tables through update_table by the engine that
-- applied them (update_c: the C path, update_plpgsql: the PL/pgSQL engine)
CREATE FUNCTION skade.commit_stats(OUT commits bigint, OUT conflicts bigint, OUT rebased bigint,
								   OUT group_commits bigint, OUT grouped bigint,
								   OUT update_c bigint, OUT update_plpgsql bigint)
	RETURNS record AS 'MODULE_PATHNAME', 'skade_commit_stats' LANGUAGE C VOLATILE
	PARALLEL RESTRICTED;
CREATE FUNCTION skade.cache_reset() RETURNS void
	AS 'MODULE_PATHNAME', 'skade_cache_reset' LANGUAGE C VOLATILE;

-- fills snapshot_id of logged changes whose metadata was unreadable at commit
CREATE FUNCTION skade.resolve_commit_log(max_rows integer DEFAULT NULL) RETURNS bigint
	AS 'MODULE_PATHNAME', 'skade_resolve_commit_log' LANGUAGE C VOLATILE
	SECURITY DEFINER SET search_path = pg_catalog, pg_temp;

/* ----------------------------------------------------------- time travel */

-- planner support: one row per array element (as unnest)
CREATE FUNCTION skade.resolve_many_support(internal) RETURNS internal
	AS 'MODULE_PATHNAME', 'skade_resolve_many_support' LANGUAGE C STRICT;
CREATE FUNCTION skade.resolve_many(snapshot_ids bigint[])
	RETURNS TABLE (snapshot_id bigint, catalog text, namespace text, name text,
				   metadata_location text)
	AS 'MODULE_PATHNAME', 'skade_resolve_many' LANGUAGE C STABLE
	COST 100 PARALLEL RESTRICTED SUPPORT skade.resolve_many_support;
CREATE FUNCTION skade.resolve_locations(snapshot_ids bigint[]) RETURNS text[]
	AS 'MODULE_PATHNAME', 'skade_resolve_locations' LANGUAGE C STABLE
	PARALLEL RESTRICTED;
CREATE FUNCTION skade.load_table_at(namespace text, name text, snapshot_id bigint,
									snapshots text DEFAULT 'all', catalog text DEFAULT NULL,
									OUT snapshot_id bigint, OUT metadata_location text,
									OUT metadata json)
	RETURNS record AS 'MODULE_PATHNAME', 'skade_load_table_at_1_1' LANGUAGE C STABLE
	COST 5000 PARALLEL RESTRICTED;
CREATE FUNCTION skade.load_table_as_of(namespace text, name text, ts timestamptz,
									   snapshots text DEFAULT 'all', catalog text DEFAULT NULL,
									   OUT snapshot_id bigint, OUT made_current_at timestamptz,
									   OUT metadata_location text, OUT metadata json)
	RETURNS record AS 'MODULE_PATHNAME', 'skade_load_table_as_of_1_1' LANGUAGE C STABLE
	COST 5000 PARALLEL RESTRICTED;
CREATE FUNCTION skade.rebuild_index() RETURNS bigint
	AS 'MODULE_PATHNAME', 'skade_rebuild_index' LANGUAGE C VOLATILE;
CREATE FUNCTION skade.index_status(OUT enabled boolean, OUT database text,
								   OUT worker_pid integer, OUT generation bigint,
								   OUT entries bigint, OUT coverage double precision,
								   OUT bytes bigint, OUT build_ms double precision,
								   OUT built_at timestamptz, OUT commits_since_build bigint,
								   OUT misses_since_build bigint, OUT dirty_ids bigint,
								   OUT dirty_tables bigint, OUT all_dirty boolean,
								   OUT tree_answers bigint, OUT heap_answers bigint,
								   OUT implementation text)
	RETURNS record AS 'MODULE_PATHNAME', 'skade_index_status' LANGUAGE C VOLATILE
	PARALLEL RESTRICTED;

