
/* ---------------------------------------------------------------- the change feed */

/*
 * One row per commit-log row written since 1.14, in its transaction
 * (src/catalog/change_feed.c): the catalog writers that were in progress
 * when its seq was taken, and the snapshot ids the change added and
 * removed (NULL: unknown, e.g. its metadata was unreadable at commit, a
 * view, a drop).  Never changed; rows stay when their log rows move to the
 * archive.
 */
CREATE TABLE skade.commit_log_feed (
	seq				bigint PRIMARY KEY,
	pending_xacts	xid8[] NOT NULL,
	snapshot_ids_added bigint[],
	snapshot_ids_removed bigint[]
);
COMMENT ON TABLE skade.commit_log_feed IS
	'per commit-log row: the catalog writers in progress when its seq was taken (skade.changes())';
SELECT pg_catalog.pg_extension_config_dump('skade.commit_log_feed', '');

-- is a writer listed in a feed row still in progress in the caller's snapshot?
CREATE FUNCTION skade.feed_held(pending xid8[]) RETURNS boolean
	AS 'MODULE_PATHNAME', 'skade_feed_held' LANGUAGE C STABLE STRICT PARALLEL RESTRICTED COST 1000;

/*
 * skade.changes(after_seq, max_rows, catalog): the changes of the catalog
 * after position after_seq, in seq order, at most max_rows; resume with the
 * last seq returned.  A change is handed out only once every catalog writer
 * that took a lower seq is over in the reader's snapshot, so a position
 * once passed never has a change behind it: a consumer that resumes from
 * its last seq sees every change exactly once, on the primary and on a hot
 * standby (up to what it has replayed).  Rows the caller may not read are
 * left out (the commit log's row-level security); grants and revokes are
 * not changes of the catalog's objects and are left out too.
 */
CREATE FUNCTION skade.changes(after_seq bigint, max_rows integer DEFAULT 1000,
							  catalog text DEFAULT NULL)
	RETURNS TABLE (seq bigint, op text, namespace text, name text, metadata_location text,
				   previous_metadata_location text, snapshot_ids_added bigint[],
				   snapshot_ids_removed bigint[], committed_at timestamptz, committed_by name,
				   object_type text, previous_namespace text, previous_name text)
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $changes$
DECLARE
	cat text := coalesce(catalog, current_setting('skade.catalog'));
BEGIN
	IF after_seq IS NULL OR max_rows IS NULL THEN
		RAISE EXCEPTION 'after_seq and max_rows must not be NULL' USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF max_rows < 1 OR max_rows > 100000 THEN
		RAISE EXCEPTION 'max_rows must be between 1 and 100000, not %', max_rows
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	RETURN QUERY
	WITH log AS (
		-- the next max_rows changes after the position: each of the log and its archive read
		-- in seq order from the position (its primary key), then the two merged
		SELECT l.* FROM (
			(SELECT c.seq, c.op, c.table_namespace, c.table_name, c.iceberg_type, c.metadata_location,
					c.previous_metadata_location, c.prev_namespace, c.prev_name, c.committed_at, c.committed_by
			   FROM skade.commit_log c
			  WHERE c.seq OPERATOR(pg_catalog.>) after_seq AND c.catalog_name OPERATOR(pg_catalog.=) cat
				AND c.op NOT IN ('grant', 'revoke')
			  ORDER BY c.seq LIMIT max_rows)
			UNION ALL
			(SELECT a.seq, a.op, a.table_namespace, a.table_name, a.iceberg_type, a.metadata_location,
					a.previous_metadata_location, a.prev_namespace, a.prev_name, a.committed_at, a.committed_by
			   FROM skade.commit_log_archive a
			  WHERE a.seq OPERATOR(pg_catalog.>) after_seq AND a.catalog_name OPERATOR(pg_catalog.=) cat
				AND a.op NOT IN ('grant', 'revoke')
			  ORDER BY a.seq LIMIT max_rows)) l
		ORDER BY l.seq LIMIT max_rows),
	page AS (
		SELECT log.*, f.pending_xacts, f.snapshot_ids_added, f.snapshot_ids_removed
		  FROM log LEFT JOIN skade.commit_log_feed f
			ON f.seq OPERATOR(pg_catalog.=) log.seq AND f.seq OPERATOR(pg_catalog.>) after_seq),
	-- the first change a writer with a lower seq may still precede: nothing from there on yet
	held AS (
		SELECT min(p.seq) AS seq FROM page p
		 WHERE cardinality(p.pending_xacts) OPERATOR(pg_catalog.>) 0 AND skade.feed_held(p.pending_xacts))
	SELECT p.seq, p.op, p.table_namespace::text, p.table_name::text, p.metadata_location,
		   p.previous_metadata_location, p.snapshot_ids_added, p.snapshot_ids_removed, p.committed_at,
		   p.committed_by, lower(coalesce(p.iceberg_type, 'TABLE')), p.prev_namespace, p.prev_name
	  FROM page p
	 WHERE p.seq OPERATOR(pg_catalog.<) coalesce((SELECT h.seq FROM held h), 9223372036854775807)
	 ORDER BY p.seq;
END
$changes$;
