-- What expiring these snapshots leaves unreachable: their manifest lists, the
-- manifests no other snapshot lists, those manifests' live files no other
-- snapshot's manifests hold; each list read once (manifest_api.c)
CREATE FUNCTION skade.expire_files(namespace text, name text, expired bigint[], catalog text DEFAULT NULL)
	RETURNS TABLE (file_path text, kind text)
	AS 'MODULE_PATHNAME', 'skade_expire_files' LANGUAGE C;

/*
 * expire_snapshots: Java's ExpireSnapshots (RemoveSnapshots) on the
 * server.  Keeps main and every ref younger than its max-ref-age-ms (table
 * default history.expire.max-ref-age-ms); along each kept branch, the head
 * and its ancestors while fewer than min-snapshots-to-keep (retain_last,
 * else history.expire.min-snapshots-to-keep, else 1) are kept or they are
 * newer than older_than (else now - history.expire.max-snapshot-age-ms,
 * else 5 days); tags' snapshots; unreferenced snapshots newer than
 * older_than.  The rest is removed by one update_table commit (guarded by
 * the table uuid and main's snapshot).  Returns every file no longer
 * reachable -- the expired snapshots' manifest lists, their manifests that
 * no retained snapshot lists, the live data and delete files of those that
 * no retained manifest has, statistics files no longer referenced -- read
 * before the commit (a manifest that cannot be read fails the call:
 * nothing is expired on a guess).  gc.enabled = false refuses (55000).
 * delete_files: the files returned are removed when the transaction
 * commits (never before; an abort keeps them all); every one must lie
 * inside skade.write_roots, else 42501 and nothing is expired.
 */
CREATE FUNCTION skade.expire_snapshots(namespace text, name text, older_than timestamptz DEFAULT NULL,
									   retain_last integer DEFAULT NULL, delete_files boolean DEFAULT false,
									   catalog text DEFAULT NULL)
	RETURNS TABLE (file_path text, kind text)
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $expire$
DECLARE
	cat text := coalesce(catalog, current_setting('skade.catalog'));
	m jsonb;
	props jsonb;
	now_ms bigint := (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
	cutoff bigint;
	keep_min integer;
	max_ref_age bigint;
	keep bigint[] := '{}';
	drop_refs text[] := '{}';
	r record;
	cur bigint;
	n integer;
	snap jsonb;
	branch_cutoff bigint;
	expired bigint[];
	ups jsonb := '[]';
	byid jsonb;
	branch_ids bigint[];
BEGIN
	IF namespace IS NULL OR name IS NULL OR delete_files IS NULL THEN
		RAISE EXCEPTION 'namespace, name and delete_files must not be NULL' USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF retain_last IS NOT NULL AND retain_last < 1 THEN
		RAISE EXCEPTION 'retain_last must be at least 1' USING ERRCODE = 'invalid_parameter_value';
	END IF;
	m := skade.table_metadata(namespace, name, catalog => cat)::jsonb;
	props := coalesce(m->'properties', '{}');
	IF lower(props->>'gc.enabled') = 'false' THEN
		RAISE EXCEPTION 'cannot expire snapshots of "%.%": gc.enabled is false', namespace, name
			USING ERRCODE = 'object_not_in_prerequisite_state';
	END IF;
	cutoff := coalesce((extract(epoch FROM older_than) * 1000)::bigint,
					   now_ms - coalesce((props->>'history.expire.max-snapshot-age-ms')::bigint, 432000000));
	keep_min := coalesce(retain_last, (props->>'history.expire.min-snapshots-to-keep')::integer, 1);
	max_ref_age := (props->>'history.expire.max-ref-age-ms')::bigint;
	-- snapshots by id: every walk below looks one up per step
	byid := coalesce((SELECT jsonb_object_agg(x->>'snapshot-id', x) FROM jsonb_array_elements(m->'snapshots') x), '{}');

	-- refs: main always; others while younger than their max-ref-age-ms
	FOR r IN SELECT k, v FROM jsonb_each(coalesce(m->'refs', '{}')) t(k, v) LOOP
		snap := byid->(r.v->>'snapshot-id');
		IF r.k <> 'main' AND (snap IS NULL OR now_ms - (snap->>'timestamp-ms')::bigint >
							  coalesce((r.v->>'max-ref-age-ms')::bigint, max_ref_age, 9223372036854775807)) THEN
			drop_refs := drop_refs || r.k;
			CONTINUE;
		END IF;
		IF snap IS NULL THEN
			CONTINUE;
		END IF;
		keep := keep || (snap->>'snapshot-id')::bigint;
		IF r.v->>'type' = 'branch' THEN
			-- the branch's ancestors while few enough or young enough
			branch_cutoff := CASE WHEN r.v ? 'max-snapshot-age-ms' THEN now_ms - (r.v->>'max-snapshot-age-ms')::bigint ELSE cutoff END;
			cur := (snap->>'parent-snapshot-id')::bigint;
			n := 1;
			WHILE cur IS NOT NULL LOOP
				snap := byid->(cur::text);
				EXIT WHEN snap IS NULL;
				EXIT WHEN NOT (n < coalesce((r.v->>'min-snapshots-to-keep')::integer, keep_min)
							   OR (snap->>'timestamp-ms')::bigint >= branch_cutoff);
				keep := keep || cur;
				n := n + 1;
				cur := (snap->>'parent-snapshot-id')::bigint;
			END LOOP;
		END IF;
	END LOOP;
	-- unreferenced but young snapshots stay too (those in a kept branch's
	-- ancestry that did not qualify above go)
	-- (the ancestries of the branches that stay, each walked once)
	branch_ids := '{}';
	FOR r IN SELECT k, v FROM jsonb_each(coalesce(m->'refs', '{}')) t(k, v)
			 WHERE v->>'type' = 'branch' AND NOT k = ANY (drop_refs) LOOP
		cur := (r.v->>'snapshot-id')::bigint;
		WHILE cur IS NOT NULL LOOP
			branch_ids := branch_ids || cur;
			cur := (byid->(cur::text)->>'parent-snapshot-id')::bigint;
		END LOOP;
	END LOOP;
	SELECT array_agg(s.id) INTO expired
	  FROM (SELECT (x->>'snapshot-id')::bigint AS id, (x->>'timestamp-ms')::bigint AS ts
			  FROM jsonb_array_elements(coalesce(m->'snapshots', '[]')) x) s
	 WHERE NOT EXISTS (SELECT 1 FROM unnest(keep) k WHERE k = s.id)
	   AND NOT (s.ts >= cutoff AND NOT EXISTS (SELECT 1 FROM unnest(branch_ids) b WHERE b = s.id));
	expired := coalesce(expired, '{}');
	IF cardinality(expired) = 0 AND cardinality(drop_refs) = 0 THEN
		RETURN;
	END IF;

	-- what becomes unreachable, read before anything changes
	CREATE TEMP TABLE IF NOT EXISTS skade_expire_out (file_path text, kind text) ON COMMIT DROP;
	TRUNCATE skade_expire_out;
	INSERT INTO skade_expire_out
		SELECT f.file_path, f.kind FROM skade.expire_files(namespace, name, expired, cat) f
		UNION ALL
		SELECT s->>'statistics-path', 'statistics'
		  FROM jsonb_array_elements(coalesce(m->'statistics', '[]') || coalesce(m->'partition-statistics', '[]')) s
		 WHERE (s->>'snapshot-id')::bigint = ANY (expired);
	IF delete_files THEN
		-- checked against skade.write_roots now, removed at commit
		PERFORM skade.delete_at_commit(ARRAY(SELECT o.file_path FROM skade_expire_out o), namespace, cat);
	END IF;

	-- the commit
	ups := (SELECT coalesce(jsonb_agg(jsonb_build_object('action', 'remove-snapshot-ref', 'ref-name', d)), '[]')
			FROM unnest(drop_refs) d);
	IF cardinality(expired) > 0 THEN
		ups := ups || jsonb_build_array(jsonb_build_object('action', 'remove-snapshots', 'snapshot-ids', to_jsonb(expired)));
	END IF;
	PERFORM skade.update_table(namespace, name,
		jsonb_build_array(jsonb_build_object('type', 'assert-table-uuid', 'uuid', m->'table-uuid'),
						  jsonb_build_object('type', 'assert-ref-snapshot-id', 'ref', 'main',
											 'snapshot-id', m->'refs'->'main'->'snapshot-id')),
		ups, cat);

	RETURN QUERY SELECT o.file_path, o.kind FROM skade_expire_out o;
END
$expire$;

-- The files of a rewrite_manifests commit (manifest_write.c): the current
-- snapshot's small data manifests merged per partition spec, and the manifest
-- list of the replacing snapshot, written under metadata_dir (read and written
-- by the route of the table's namespace, when given); NULL when there is
-- nothing to rewrite.  Returns the new snapshot's id, sequence number and
-- manifest list and the counts of its summary.
CREATE FUNCTION skade.rewrite_manifest_files(metadata text, target_size_bytes bigint, metadata_dir text,
											 namespace text DEFAULT NULL, catalog text DEFAULT NULL)
	RETURNS jsonb AS 'MODULE_PATHNAME', 'skade_rewrite_manifest_files' LANGUAGE C;

/*
 * rewrite_manifests: merge the many small data manifests that per-commit
 * appends leave into few, grouped by partition spec and ordered by partition
 * within a spec, each about target_size_bytes (default 8 MiB, the default
 * of Java's commit.manifest.target-size-bytes), as Java's RewriteManifests
 * does.  Per spec, only data manifests smaller than the target are rewritten,
 * and only when there are two or more; delete manifests are kept.  Live
 * entries become EXISTING with their snapshot id and sequence numbers;
 * deleted entries are dropped.  Committed as a "replace" snapshot of main
 * (summary: manifests-created, manifests-kept, manifests-replaced,
 * entries-processed, changed-partition-count and the parent's totals) through
 * update_table with assert-table-uuid and assert-ref-snapshot-id main: a
 * concurrent commit fails it with 40001 (the abort removes the files it wrote).
 * Returns one row: the table's metadata location after the call, the
 * snapshot that is current, and the counts (all 0 when nothing was to do:
 * no snapshot, or at most one small data manifest per spec; no commit then).
 * Format v3: the rewritten data files keep their row ids (first_row_id
 * written explicitly); the new manifests get fresh first_row_id ranges from
 * the table's next-row-id, which grows by their rows, as Java's does.
 */
CREATE FUNCTION skade.rewrite_manifests(namespace text, name text, target_size_bytes bigint DEFAULT 8388608,
										catalog text DEFAULT NULL)
	RETURNS TABLE (metadata_location text, snapshot_id bigint, manifests_replaced integer,
				   manifests_created integer, manifests_kept integer, entries_rewritten bigint)
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $rewrite$
DECLARE
	cat text := coalesce(catalog, current_setting('skade.catalog'));
	mt text;
	m jsonb;
	props jsonb;
	w jsonb;
	parent jsonb;
	summary jsonb;
	snap jsonb;
	main_ref jsonb;
	reqs jsonb;
	k text;
	loc text;
BEGIN
	IF namespace IS NULL OR name IS NULL OR target_size_bytes IS NULL THEN
		RAISE EXCEPTION 'namespace, name and target_size_bytes must not be NULL' USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF target_size_bytes <= 0 THEN
		RAISE EXCEPTION 'target_size_bytes must be positive' USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF current_setting('transaction_read_only')::boolean THEN
		RAISE EXCEPTION 'cannot rewrite manifests of "%.%" in a read-only transaction', namespace, name
			USING ERRCODE = 'read_only_sql_transaction';
	END IF;
	mt := skade.table_metadata(namespace, name, catalog => cat)::text;
	m := mt::jsonb;
	props := coalesce(m->'properties', '{}');
	w := skade.rewrite_manifest_files(mt, target_size_bytes,
		coalesce(rtrim(props->>'write.metadata.path', '/'), rtrim(m->>'location', '/') OPERATOR(pg_catalog.||) '/metadata'),
		namespace, cat);
	IF w IS NULL THEN
		RETURN QUERY SELECT l.metadata_location, nullif((m->>'current-snapshot-id')::bigint, -1), 0, 0,
							(SELECT count(*)::integer FROM skade.manifests(namespace, name, NULL, cat)), 0::bigint
					   FROM skade.load_table(namespace, name, 'none', cat) l;
		RETURN;
	END IF;

	parent := (SELECT x FROM jsonb_array_elements(m->'snapshots') x WHERE x->'snapshot-id' = m->'current-snapshot-id');
	summary := jsonb_build_object('operation', 'replace',
								  'manifests-created', w->>'manifests-created',
								  'manifests-kept', w->>'manifests-kept',
								  'manifests-replaced', w->>'manifests-replaced',
								  'entries-processed', w->>'entries-processed',
								  'changed-partition-count', '0');
	FOREACH k IN ARRAY ARRAY['total-records', 'total-files-size', 'total-data-files', 'total-delete-files',
							 'total-position-deletes', 'total-equality-deletes'] LOOP
		IF parent->'summary' ? k THEN
			summary := summary || jsonb_build_object(k, parent->'summary'->>k);
		END IF;
	END LOOP;
	snap := jsonb_build_object('snapshot-id', w->'snapshot-id', 'parent-snapshot-id', parent->'snapshot-id',
							   'timestamp-ms', (extract(epoch FROM clock_timestamp()) * 1000)::bigint,
							   'summary', summary, 'manifest-list', w->'manifest-list',
							   'schema-id', m->'current-schema-id');
	IF (m->>'format-version')::integer >= 2 THEN
		snap := snap || jsonb_build_object('sequence-number', w->'sequence-number');
	END IF;
	-- v3 row lineage: the ranges the new manifest list assigned (Java's SnapshotProducer)
	IF (m->>'format-version')::integer >= 3 THEN
		snap := snap || jsonb_build_object('first-row-id', w->'first-row-id', 'added-rows', w->'added-rows');
	END IF;
	-- main keeps its retention settings; it is replaced whole
	main_ref := coalesce(m->'refs'->'main', '{}') || jsonb_build_object('action', 'set-snapshot-ref', 'ref-name', 'main',
		'type', 'branch', 'snapshot-id', w->'snapshot-id');
	reqs := jsonb_build_array(jsonb_build_object('type', 'assert-ref-snapshot-id', 'ref', 'main',
		'snapshot-id', parent->'snapshot-id'));
	IF m ? 'table-uuid' THEN
		reqs := reqs || jsonb_build_array(jsonb_build_object('type', 'assert-table-uuid', 'uuid', m->'table-uuid'));
	END IF;
	loc := skade.update_table(namespace, name, reqs,
		jsonb_build_array(jsonb_build_object('action', 'add-snapshot', 'snapshot', snap), main_ref), cat);
	RETURN QUERY SELECT loc, (w->>'snapshot-id')::bigint, (w->>'manifests-replaced')::integer,
						(w->>'manifests-created')::integer, (w->>'manifests-kept')::integer,
						(w->>'entries-processed')::bigint;
END
$rewrite$;

-- Is snapshot id in the ancestry of a branch that stays (for expire_snapshots)?
CREATE FUNCTION skade.in_branch_ancestry(m jsonb, id bigint, dropped text[]) RETURNS boolean
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $f$
DECLARE
	r record;
	cur bigint;
	snap jsonb;
BEGIN
	FOR r IN SELECT k, v FROM jsonb_each(coalesce(m->'refs', '{}')) t(k, v)
			 WHERE v->>'type' = 'branch' AND NOT k = ANY (dropped) LOOP
		cur := (r.v->>'snapshot-id')::bigint;
		WHILE cur IS NOT NULL LOOP
			IF cur = id THEN
				RETURN true;
			END IF;
			snap := (SELECT x FROM jsonb_array_elements(m->'snapshots') x WHERE (x->>'snapshot-id')::bigint = cur);
			cur := (snap->>'parent-snapshot-id')::bigint;
		END LOOP;
	END LOOP;
	RETURN false;
END
$f$;

/*
 * The commit log is append-only; rows leave it only whole, moved with their
 * seq into this archive by skade.prune_commit_log() (and swap_table), never
 * updated, never destroyed.
 */
CREATE TABLE skade.commit_log_archive (
	seq				bigint PRIMARY KEY,
	op				text NOT NULL,
	source			text NOT NULL,
	catalog_name	text NOT NULL,
	table_namespace	text NOT NULL,
	table_name		text NOT NULL,
	iceberg_type	text,
	metadata_location text,
	previous_metadata_location text,
	prev_namespace	text,
	prev_name		text,
	committed_at	timestamptz NOT NULL,
	committed_by	name NOT NULL,
	xact_id			xid8 NOT NULL,
	snapshot_id		bigint,
	retired_at		timestamptz NOT NULL,
	detail			jsonb
);
SELECT pg_catalog.pg_extension_config_dump('skade.commit_log_archive', '');
GRANT SELECT ON skade.commit_log_archive TO skade_reader;

-- retire a table's log rows with seq < before (and the snapshot_map rows they wrote)
CREATE FUNCTION skade.prune_commit_log(namespace text, name text, before bigint, catalog text DEFAULT NULL)
	RETURNS bigint AS 'MODULE_PATHNAME', 'skade_prune_commit_log' LANGUAGE C;

/*
 * swap_table: rebuild-and-swap in one transaction.  live takes temp's
 * metadata (the same compare-and-swap a client commit runs), temp's pointer
 * is dropped; both rows are locked first, in name order, so live never
 * resolves to nothing and no commit slips in between.  With prune_log the
 * older log rows of live and every row of temp move to the archive: live's
 * history starts again at this swap (time travel forgets the retired
 * snapshots).  Returns live's new metadata location.
 */
CREATE FUNCTION skade.swap_table(namespace text, live text, temp text, prune_log boolean DEFAULT true,
								 catalog text DEFAULT NULL) RETURNS text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $swap$
DECLARE
	cat text := coalesce(catalog, current_setting('skade.catalog'));
	live_loc text;
	temp_loc text;
	seq bigint;
BEGIN
	IF namespace IS NULL OR live IS NULL OR temp IS NULL OR prune_log IS NULL THEN
		RAISE EXCEPTION 'namespace, live, temp and prune_log must not be NULL' USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF live = temp THEN
		RAISE EXCEPTION 'cannot swap "%.%" with itself', namespace, live USING ERRCODE = 'invalid_parameter_value';
	END IF;
	PERFORM 1 FROM public.iceberg_tables t
	 WHERE t.catalog_name = cat AND t.table_namespace = namespace AND t.table_name IN (live, temp)
	 ORDER BY t.table_name FOR UPDATE;
	SELECT t.metadata_location INTO live_loc FROM public.iceberg_tables t
	 WHERE t.catalog_name = cat AND t.table_namespace = namespace AND t.table_name = live
	   AND coalesce(t.iceberg_type, 'TABLE') = 'TABLE';
	IF NOT FOUND THEN
		RAISE EXCEPTION 'table "%.%" does not exist in catalog "%"', namespace, live, cat USING ERRCODE = 'undefined_table';
	END IF;
	SELECT t.metadata_location INTO temp_loc FROM public.iceberg_tables t
	 WHERE t.catalog_name = cat AND t.table_namespace = namespace AND t.table_name = temp
	   AND coalesce(t.iceberg_type, 'TABLE') = 'TABLE';
	IF NOT FOUND THEN
		RAISE EXCEPTION 'table "%.%" does not exist in catalog "%"', namespace, temp, cat USING ERRCODE = 'undefined_table';
	END IF;
	IF temp_loc IS NULL THEN
		RAISE EXCEPTION 'table "%.%" has no metadata location', namespace, temp USING ERRCODE = 'object_not_in_prerequisite_state';
	END IF;
	seq := skade.commit_table(namespace, live, live_loc, temp_loc, cat);
	PERFORM skade.drop_table(namespace, temp, cat);
	IF prune_log THEN
		PERFORM skade.prune_commit_log(namespace, live, seq, cat);
		PERFORM skade.prune_commit_log(namespace, temp, 9223372036854775807, cat);
	END IF;
	RETURN temp_loc;
END
$swap$;

/* ---------------------------------------------------------- written files */

-- The journal of files skade wrote in this database (written_files.c): each
-- with the (sub)transaction that wrote it, its state (running, committed,
-- aborted, unknown) and whether the file is still there
CREATE FUNCTION skade.written_files()
	RETURNS TABLE (location text, xid xid8, state text, present boolean)
	AS 'MODULE_PATHNAME', 'skade_written_files' LANGUAGE C STRICT;
-- remove one file the journal lists whose writing transaction aborted
CREATE FUNCTION skade.remove_written_file(location text) RETURNS boolean
	AS 'MODULE_PATHNAME', 'skade_remove_written_file' LANGUAGE C STRICT;
-- rewrite the journal without what no longer matters; the lines kept
CREATE FUNCTION skade.compact_written_files() RETURNS bigint
	AS 'MODULE_PATHNAME', 'skade_compact_written_files' LANGUAGE C STRICT;
-- remove these files (inside skade.write_roots; objects by the route of the
-- namespace, when given) when this transaction commits
CREATE FUNCTION skade.delete_at_commit(locations text[], namespace text DEFAULT NULL,
										catalog text DEFAULT NULL) RETURNS integer
	AS 'MODULE_PATHNAME', 'skade_delete_at_commit' LANGUAGE C;

/*
 * orphan_files: files skade wrote in this database for a transaction that
 * never committed and that are still there -- what an abort could not
 * remove, or what a crash between writing and committing left -- and that
 * no table pointer or commit-log entry (archived ones included) names.
 */
CREATE FUNCTION skade.orphan_files()
	RETURNS TABLE (location text, xid xid8)
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $orphans$
	WITH w AS MATERIALIZED (SELECT * FROM skade.written_files())
	SELECT DISTINCT w.location, w.xid FROM w
	 WHERE w.present AND w.state = 'aborted'
	   AND NOT EXISTS (SELECT 1 FROM w o WHERE o.location OPERATOR(pg_catalog.=) w.location
						  AND o.state OPERATOR(pg_catalog.<>) 'aborted')
	   AND NOT EXISTS (SELECT 1 FROM public.iceberg_tables t
					   WHERE w.location OPERATOR(pg_catalog.=) ANY (ARRAY[t.metadata_location, t.previous_metadata_location]))
	   AND NOT EXISTS (SELECT 1 FROM skade.commit_log c
					   WHERE w.location OPERATOR(pg_catalog.=) ANY (ARRAY[c.metadata_location, c.previous_metadata_location]))
	   AND NOT EXISTS (SELECT 1 FROM skade.commit_log_archive c
					   WHERE w.location OPERATOR(pg_catalog.=) ANY (ARRAY[c.metadata_location, c.previous_metadata_location]))
	 ORDER BY 1
$orphans$;

-- sweep_orphan_files: removes the orphan files (above), compacts the journal
CREATE FUNCTION skade.sweep_orphan_files()
	RETURNS TABLE (location text, removed boolean)
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $sweep$
DECLARE
	f record;
BEGIN
	FOR f IN SELECT o.location FROM skade.orphan_files() o LOOP
		location := f.location;
		removed := skade.remove_written_file(f.location);
		RETURN NEXT;
	END LOOP;
	PERFORM skade.compact_written_files();
END
$sweep$;

/*
 * purge_table: drop the table and, once the drop commits, delete every file
 * it can reach -- its metadata files (current and logged), statistics,
 * manifest lists, manifests and the data and delete files of every
 * snapshot (a REST drop with purgeRequested).  Every one must lie under
 * skade.write_roots (42501 otherwise: nothing is dropped).  Returns how
 * many files will go.
 */
CREATE FUNCTION skade.purge_table(namespace text, name text, catalog text DEFAULT NULL)
	RETURNS integer
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $purge$
DECLARE
	loc text := (SELECT l.metadata_location FROM skade.load_table(namespace, name, 'none', catalog) l);
	meta jsonb := skade.table_metadata(namespace, name, catalog => catalog)::jsonb;
	files text[];
BEGIN
	SELECT coalesce(array_agg(DISTINCT f), '{}') INTO files FROM (
		SELECT loc AS f
		UNION ALL SELECT e->>'metadata-file' FROM jsonb_array_elements(coalesce(meta->'metadata-log', '[]')) e
		UNION ALL SELECT e->>'statistics-path' FROM jsonb_array_elements(coalesce(meta->'statistics', '[]')) e
		UNION ALL SELECT e->>'statistics-path' FROM jsonb_array_elements(coalesce(meta->'partition-statistics', '[]')) e
		UNION ALL SELECT s->>'manifest-list' FROM jsonb_array_elements(coalesce(meta->'snapshots', '[]')) s
		UNION ALL SELECT m.path FROM jsonb_array_elements(coalesce(meta->'snapshots', '[]')) s,
			LATERAL skade.manifests(namespace, name, (s->>'snapshot-id')::bigint, catalog) m
		UNION ALL SELECT c.file_path FROM jsonb_array_elements(coalesce(meta->'snapshots', '[]')) s,
			LATERAL skade.files(namespace, name, (s->>'snapshot-id')::bigint, catalog) c) x
	 WHERE f IS NOT NULL;
	PERFORM skade.delete_at_commit(files, namespace, catalog);
	PERFORM skade.drop_table(namespace, name, catalog);
	RETURN cardinality(files);
END
$purge$;

/* ------------------------------------------------------------------ views */

/*
 * Iceberg views, kept as the JDBC catalog keeps them (rows of
 * public.iceberg_tables with iceberg_type 'VIEW'), their metadata written
 * by skade as Java's ViewMetadata.Builder builds it.  (The functions pin
 * search_path, so their operators are pg_catalog's.)  view_metadata reads
 * the current file (confined like any read), write_view_metadata writes a
 * new one create-only (view_api.c).
 */
