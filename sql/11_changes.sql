
/* ---------------------------------------------------------------- the change feed */

/*
 * One row per commit-log row written since 1.14, in its transaction
 * (src/catalog/change_feed.c): the catalog writers that were in progress
 * when its seq was taken, and the snapshot ids the change added and
 * removed (NULL: unknown, e.g. its metadata was unreadable at commit, a
 * view, a drop) and the table's uuid as the metadata read at commit has it.  Never changed; rows stay when their log rows move to the
 * archive.
 */
CREATE TABLE skade.commit_log_feed (
	seq				bigint PRIMARY KEY,
	pending_xacts	xid8[] NOT NULL,
	snapshot_ids_added bigint[],
	snapshot_ids_removed bigint[],
	object_uuid		uuid
);
-- the transaction of each change, for the REST events' request ids
CREATE INDEX commit_log_xact_idx ON skade.commit_log (xact_id);
CREATE INDEX commit_log_archive_xact_idx ON skade.commit_log_archive (xact_id);
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
					c.previous_metadata_location, c.prev_namespace, c.prev_name, c.committed_at, c.committed_by,
					c.xact_id
			   FROM skade.commit_log c
			  WHERE c.seq OPERATOR(pg_catalog.>) after_seq AND c.catalog_name OPERATOR(pg_catalog.=) cat
				AND c.op NOT IN ('grant', 'revoke')
			  ORDER BY c.seq LIMIT max_rows)
			UNION ALL
			(SELECT a.seq, a.op, a.table_namespace, a.table_name, a.iceberg_type, a.metadata_location,
					a.previous_metadata_location, a.prev_namespace, a.prev_name, a.committed_at, a.committed_by,
					a.xact_id
			   FROM skade.commit_log_archive a
			  WHERE a.seq OPERATOR(pg_catalog.>) after_seq AND a.catalog_name OPERATOR(pg_catalog.=) cat
				AND a.op NOT IN ('grant', 'revoke')
			  ORDER BY a.seq LIMIT max_rows)) l
		ORDER BY l.seq LIMIT max_rows),
	page AS (
		SELECT log.*, f.pending_xacts, f.snapshot_ids_added, f.snapshot_ids_removed
		  FROM log LEFT JOIN skade.commit_log_feed f
			ON f.seq OPERATOR(pg_catalog.=) log.seq AND f.seq OPERATOR(pg_catalog.>) after_seq),
	-- the first change a writer with a lower seq may still precede (or the caller's own,
	-- which may yet roll back): nothing from there on yet
	held AS (
		SELECT min(p.seq) AS seq FROM page p
		 WHERE (cardinality(p.pending_xacts) OPERATOR(pg_catalog.>) 0 AND skade.feed_held(p.pending_xacts))
			OR p.xact_id OPERATOR(pg_catalog.=) pg_current_xact_id_if_assigned())
	SELECT p.seq, p.op, p.table_namespace::text, p.table_name::text, p.metadata_location,
		   p.previous_metadata_location, p.snapshot_ids_added, p.snapshot_ids_removed, p.committed_at,
		   p.committed_by, lower(coalesce(p.iceberg_type, 'TABLE')), p.prev_namespace, p.prev_name
	  FROM page p
	 WHERE p.seq OPERATOR(pg_catalog.<) coalesce((SELECT h.seq FROM held h), 9223372036854775807)
	 ORDER BY p.seq;
END
$changes$;

/*
 * skade.rest_events(request, catalog): the answer of the REST route
 * POST /v1/{prefix}/events (the events proposal, apache/iceberg#12584) from
 * skade.changes(): {"continuation-token", "events"}.  The token is the last
 * position read ("s1." and a seq; any other is 400); a page reads at most
 * page-size changes (default 100, at most 1000) and answers those the filters
 * keep, so it may hold fewer events than it advanced over.  An event names its
 * change's seq (event-id), its transaction (request-id) and how many changes
 * that transaction logged.  register, rename and drop of a table are the
 * proposal's register-table, rename-table and drop-table; a change whose
 * required fields skade does not have -- the updates of create-table and
 * update-table (the log records pointers, not the updates), a uuid skade
 * could not read, a view's changes, adopt -- is an implementation type
 * "x-skade-<op>" carrying what the log has.  No namespace events yet.
 */
CREATE FUNCTION skade.rest_events(request jsonb, catalog text DEFAULT NULL) RETURNS jsonb
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $events$
DECLARE
	cat text := coalesce(catalog, current_setting('skade.catalog'));
	token text := request->>'continuation-token';
	pos bigint;
	size integer;
	since bigint;
	k text;
	last_seq bigint;
	events jsonb;
BEGIN
	IF jsonb_typeof(request) IS DISTINCT FROM 'object' THEN
		RAISE EXCEPTION 'the request must be a JSON object' USING ERRCODE = 'invalid_parameter_value';
	END IF;
	FOR k IN SELECT jsonb_object_keys(request) LOOP
		IF k NOT IN ('continuation-token', 'page-size', 'since-timestamp-ms', 'operation-types',
					 'catalog-objects-by-name', 'catalog-objects-by-uuid', 'object-types', 'custom-filters') THEN
			RAISE EXCEPTION 'unknown field % in the events request', k USING ERRCODE = 'invalid_parameter_value';
		END IF;
	END LOOP;
	IF request ? 'custom-filters' AND request->'custom-filters' <> '{}' THEN
		RAISE EXCEPTION 'this server knows no custom filters' USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF (request ? 'continuation-token' AND jsonb_typeof(request->'continuation-token') <> 'string')
	   OR (token IS NOT NULL AND token !~ '^s1\.[0-9]{1,18}$') THEN
		RAISE EXCEPTION 'continuation-token % was not issued by this server', request->'continuation-token'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF request ? 'page-size' AND (jsonb_typeof(request->'page-size') <> 'number'
	   OR request->>'page-size' !~ '^[0-9]{1,9}$' OR (request->>'page-size')::integer < 1) THEN
		RAISE EXCEPTION 'page-size must be a positive integer' USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF request ? 'since-timestamp-ms' AND (jsonb_typeof(request->'since-timestamp-ms') <> 'number'
	   OR request->>'since-timestamp-ms' !~ '^-?[0-9]{1,15}$') THEN
		RAISE EXCEPTION 'since-timestamp-ms must be an integer' USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF EXISTS (SELECT 1 FROM (VALUES ('operation-types'), ('catalog-objects-by-name'), ('catalog-objects-by-uuid'),
								  ('object-types')) f(k)
			   WHERE request ? f.k AND jsonb_typeof(request->f.k) <> 'array')
	   OR EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(request->'catalog-objects-by-name', '[]')) o
				  WHERE jsonb_typeof(o) <> 'array' OR EXISTS (SELECT 1 FROM jsonb_array_elements(o) l
															  WHERE jsonb_typeof(l) <> 'string'))
	   OR EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(request->'operation-types', '[]')
													 || coalesce(request->'object-types', '[]')
													 || coalesce(request->'catalog-objects-by-uuid', '[]')) e
				  WHERE jsonb_typeof(e) <> 'string') THEN
		RAISE EXCEPTION 'operation-types, object-types and catalog-objects-by-uuid are arrays of strings, catalog-objects-by-name one of arrays of strings'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	size := least(coalesce((request->>'page-size')::integer, 100), 1000);
	IF token IS NOT NULL THEN
		pos := substr(token, 4)::bigint;
	ELSIF request ? 'since-timestamp-ms' THEN
		-- a starting point by time (the first request only): just before this catalog's
		-- first change stamped at or after it (none: after the last)
		since := (request->>'since-timestamp-ms')::bigint;
		SELECT coalesce(min(l.seq) - 1, (SELECT coalesce(max(m.seq), 0) FROM skade.commit_log m)) INTO pos FROM (
			SELECT c.seq FROM skade.commit_log c
			 WHERE c.catalog_name OPERATOR(pg_catalog.=) cat
			   AND c.committed_at OPERATOR(pg_catalog.>=) to_timestamp(since / 1000.0)
			UNION ALL
			SELECT a.seq FROM skade.commit_log_archive a
			 WHERE a.catalog_name OPERATOR(pg_catalog.=) cat
			   AND a.committed_at OPERATOR(pg_catalog.>=) to_timestamp(since / 1000.0)) l;
	ELSE
		pos := 0;
	END IF;

	WITH page AS (
		SELECT c.*, f.object_uuid, l.xact_id
		  FROM skade.changes(pos, size, cat) c
		  LEFT JOIN skade.commit_log_feed f ON f.seq OPERATOR(pg_catalog.=) c.seq
		  LEFT JOIN LATERAL (SELECT x.xact_id FROM skade.commit_log x WHERE x.seq OPERATOR(pg_catalog.=) c.seq
							 UNION ALL
							 SELECT y.xact_id FROM skade.commit_log_archive y WHERE y.seq OPERATOR(pg_catalog.=) c.seq) l ON true),
	counts AS (
		-- the changes each transaction of the page logged in this catalog
		SELECT x.xact_id, count(*) AS n FROM (
			SELECT r.xact_id FROM skade.commit_log r
			 WHERE r.xact_id IN (SELECT pg.xact_id FROM page pg) AND r.catalog_name OPERATOR(pg_catalog.=) cat
			   AND r.op NOT IN ('grant', 'revoke')
			UNION ALL
			SELECT r.xact_id FROM skade.commit_log_archive r
			 WHERE r.xact_id IN (SELECT pg.xact_id FROM page pg) AND r.catalog_name OPERATOR(pg_catalog.=) cat
			   AND r.op NOT IN ('grant', 'revoke')) x
		 GROUP BY x.xact_id),
	ev AS (
		SELECT p.*,
			   -- the uuid read at commit, else the last one the table had
			   coalesce(p.object_uuid, (SELECT f2.object_uuid FROM skade.commit_log c2
										  JOIN skade.commit_log_feed f2 ON f2.seq OPERATOR(pg_catalog.=) c2.seq
										 WHERE c2.catalog_name OPERATOR(pg_catalog.=) cat
										   AND c2.table_namespace OPERATOR(pg_catalog.=) coalesce(p.previous_namespace, p.namespace)
										   AND c2.table_name OPERATOR(pg_catalog.=) coalesce(p.previous_name, p.name)
										   AND c2.seq OPERATOR(pg_catalog.<) p.seq AND f2.object_uuid IS NOT NULL
										   -- (not an earlier table of the same name)
										   AND NOT EXISTS (SELECT 1 FROM skade.commit_log c3
														   WHERE c3.catalog_name OPERATOR(pg_catalog.=) cat
															 AND c3.table_namespace OPERATOR(pg_catalog.=) c2.table_namespace
															 AND c3.table_name OPERATOR(pg_catalog.=) c2.table_name
															 AND c3.op IN ('drop', 'create', 'register')
															 AND c3.seq OPERATOR(pg_catalog.>) c2.seq
															 AND c3.seq OPERATOR(pg_catalog.<) p.seq)
										 ORDER BY c2.seq DESC LIMIT 1)) AS uuid,
			   string_to_array(p.namespace, '.') || p.name AS path,
			   jsonb_build_object('namespace', to_jsonb(string_to_array(p.namespace, '.')), 'name', p.name) AS ident,
			   jsonb_build_object('namespace', to_jsonb(string_to_array(p.previous_namespace, '.')),
								  'name', p.previous_name) AS source_ident
		  FROM page p),
	typed AS (
		SELECT e.*,
			   CASE WHEN e.object_type = 'table' AND e.uuid IS NOT NULL AND e.op = 'register' THEN 'register-table'
					WHEN e.object_type = 'table' AND e.uuid IS NOT NULL AND e.op = 'drop' THEN 'drop-table'
					WHEN e.object_type = 'table' AND e.uuid IS NOT NULL AND e.op = 'rename' THEN 'rename-table'
					ELSE 'x-skade-' || e.object_type || '-' || e.op END AS operation_type
		  FROM ev e)
	SELECT max(t.seq), coalesce(jsonb_agg(jsonb_build_object(
			'event-id', t.seq::text,
			'request-id', t.xact_id::text,
			'request-event-count', (SELECT k.n FROM counts k WHERE k.xact_id OPERATOR(pg_catalog.=) t.xact_id),
			'timestamp-ms', (extract(epoch FROM t.committed_at) * 1000)::bigint,
			'actor', jsonb_build_object('id', t.committed_by),
			'operation', jsonb_strip_nulls(CASE
				WHEN t.operation_type = 'rename-table' THEN jsonb_build_object('operation-type', t.operation_type,
					'source', t.source_ident, 'destination', t.ident, 'table-uuid', t.uuid)
				WHEN t.operation_type IN ('register-table', 'drop-table') THEN jsonb_build_object(
					'operation-type', t.operation_type, 'identifier', t.ident, 'table-uuid', t.uuid)
				ELSE jsonb_build_object('operation-type', t.operation_type, 'identifier', t.ident,
					CASE WHEN t.object_type = 'view' THEN 'view-uuid' ELSE 'table-uuid' END, t.uuid,
					'source', CASE WHEN t.op = 'rename' THEN t.source_ident END,
					'metadata-location', t.metadata_location,
					'previous-metadata-location', t.previous_metadata_location,
					'snapshot-ids-added', to_jsonb(t.snapshot_ids_added),
					'snapshot-ids-removed', to_jsonb(t.snapshot_ids_removed)) END)) ORDER BY t.seq)
			FILTER (WHERE (NOT request ? 'operation-types' OR request->'operation-types' ? t.operation_type)
				AND (NOT request ? 'object-types' OR request->'object-types' ? t.object_type)
				AND (NOT request ? 'catalog-objects-by-uuid' OR request->'catalog-objects-by-uuid' ? t.uuid::text)
				AND (NOT request ? 'catalog-objects-by-name' OR EXISTS (
					-- a prefix of the object's levels (namespace levels, then its name)
					SELECT 1 FROM jsonb_array_elements(request->'catalog-objects-by-name') o,
						   LATERAL (SELECT ARRAY(SELECT jsonb_array_elements_text(o)) AS levels) w
					 WHERE cardinality(w.levels) OPERATOR(pg_catalog.<=) cardinality(t.path)
					   AND t.path[1:cardinality(w.levels)] OPERATOR(pg_catalog.=) w.levels))),
			'[]'::jsonb)
	  INTO last_seq, events
	  FROM typed t;
	RETURN jsonb_build_object('continuation-token', 's1.' || coalesce(last_seq, pos), 'events', events);
END
$events$;

/* ---------------------------------------------------------------- undrop */

/*
 * dropped_tables: the tables and views dropped within skade.drop_retention
 * (from any path: skade.drop_table(), a REST drop, a JDBC client's DELETE, a
 * TRUNCATE) and not restored since -- a drop is restored once its last
 * pointer is registered again after it (skade.undrop_table() registers it).
 * One row per drop, newest first; restorable: the name is free now.
 */
CREATE FUNCTION skade.dropped_tables(catalog text DEFAULT NULL)
	RETURNS TABLE (namespace text, name text, object_type text, dropped_at timestamptz,
				   dropped_by name, metadata_location text, seq bigint, restorable boolean)
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $dropped$
	WITH d AS (
		SELECT c.seq, c.table_namespace, c.table_name, c.iceberg_type, c.committed_at, c.committed_by,
			   c.previous_metadata_location, c.catalog_name
		  FROM skade.commit_log c
		 WHERE c.op OPERATOR(pg_catalog.=) 'drop'
		   AND c.catalog_name OPERATOR(pg_catalog.=) coalesce(catalog, current_setting('skade.catalog'))
		   AND c.previous_metadata_location IS NOT NULL
		   AND c.committed_at OPERATOR(pg_catalog.>=)
			   (now() OPERATOR(pg_catalog.-) current_setting('skade.drop_retention')::interval)
		UNION ALL
		SELECT a.seq, a.table_namespace, a.table_name, a.iceberg_type, a.committed_at, a.committed_by,
			   a.previous_metadata_location, a.catalog_name
		  FROM skade.commit_log_archive a
		 WHERE a.op OPERATOR(pg_catalog.=) 'drop'
		   AND a.catalog_name OPERATOR(pg_catalog.=) coalesce(catalog, current_setting('skade.catalog'))
		   AND a.previous_metadata_location IS NOT NULL
		   AND a.committed_at OPERATOR(pg_catalog.>=)
			   (now() OPERATOR(pg_catalog.-) current_setting('skade.drop_retention')::interval))
	SELECT d.table_namespace, d.table_name, lower(coalesce(d.iceberg_type, 'TABLE')), d.committed_at,
		   d.committed_by, d.previous_metadata_location, d.seq,
		   NOT EXISTS (SELECT 1 FROM public.iceberg_tables t
						WHERE t.catalog_name OPERATOR(pg_catalog.=) d.catalog_name
						  AND t.table_namespace OPERATOR(pg_catalog.=) d.table_namespace
						  AND t.table_name OPERATOR(pg_catalog.=) d.table_name)
	  FROM d
	 WHERE NOT EXISTS (SELECT 1 FROM skade.commit_log r
						WHERE r.op OPERATOR(pg_catalog.=) 'register' AND r.seq OPERATOR(pg_catalog.>) d.seq
						  AND r.catalog_name OPERATOR(pg_catalog.=) d.catalog_name
						  AND r.metadata_location OPERATOR(pg_catalog.=) d.previous_metadata_location)
	 ORDER BY d.seq DESC
$dropped$;

/*
 * undrop_table / undrop_view: restore a dropped table or view under its name
 * or new_name by registering its last metadata again (so the files must still
 * be there: a purged table cannot come back); drop_seq picks one drop of
 * several (skade.dropped_tables().seq), else the latest.  A name taken in the
 * meantime is refused (42P07), so is a drop outside skade.drop_retention or
 * already restored (42P01).  Returns the commit-log seq of the registration.
 */
CREATE FUNCTION skade.undrop_table(namespace text, name text, new_name text DEFAULT NULL,
								   catalog text DEFAULT NULL, drop_seq bigint DEFAULT NULL)
	RETURNS bigint
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $undrop$
BEGIN
	RETURN skade.undrop(namespace, name, new_name, catalog, drop_seq, 'table');
END
$undrop$;
CREATE FUNCTION skade.undrop_view(namespace text, name text, new_name text DEFAULT NULL,
								  catalog text DEFAULT NULL, drop_seq bigint DEFAULT NULL)
	RETURNS bigint
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $undrop$
BEGIN
	RETURN skade.undrop(namespace, name, new_name, catalog, drop_seq, 'view');
END
$undrop$;
CREATE FUNCTION skade.undrop(namespace text, name text, new_name text, catalog text, drop_seq bigint,
							 kind text)
	RETURNS bigint
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $undrop$
DECLARE
	cat text := coalesce(catalog, current_setting('skade.catalog'));
	target text := coalesce(new_name, name);
	d record;
BEGIN
	IF namespace IS NULL OR name IS NULL THEN
		RAISE EXCEPTION 'namespace and name must not be NULL' USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF kind IS NULL OR kind NOT IN ('table', 'view') THEN
		RAISE EXCEPTION 'kind must be table or view' USING ERRCODE = 'invalid_parameter_value';
	END IF;
	SELECT * INTO d FROM skade.dropped_tables(cat) x
	 WHERE x.namespace OPERATOR(pg_catalog.=) undrop.namespace AND x.name OPERATOR(pg_catalog.=) undrop.name
	   AND x.object_type OPERATOR(pg_catalog.=) kind
	   AND (drop_seq IS NULL OR x.seq OPERATOR(pg_catalog.=) drop_seq)
	 ORDER BY x.seq DESC LIMIT 1;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'no dropped % "%.%" in catalog "%" to restore', kind, namespace, name, cat
			USING ERRCODE = 'undefined_table',
				  HINT = format('skade.dropped_tables() lists what was dropped within skade.drop_retention (%s) and not restored.',
								current_setting('skade.drop_retention'));
	END IF;
	IF EXISTS (SELECT 1 FROM public.iceberg_tables t
				WHERE t.catalog_name OPERATOR(pg_catalog.=) cat
				  AND t.table_namespace OPERATOR(pg_catalog.=) namespace
				  AND t.table_name OPERATOR(pg_catalog.=) target) THEN
		RAISE EXCEPTION 'cannot restore % "%.%": the name "%.%" is taken in catalog "%"', kind, namespace, name,
			namespace, target, cat
			USING ERRCODE = 'duplicate_table', HINT = 'Restore it under another name (new_name).';
	END IF;
	IF kind OPERATOR(pg_catalog.=) 'view' THEN
		PERFORM skade.register_view(namespace, target, d.metadata_location, cat);
		RETURN (SELECT max(c.seq) FROM skade.commit_log c
				 WHERE c.catalog_name OPERATOR(pg_catalog.=) cat AND c.table_namespace OPERATOR(pg_catalog.=) namespace
				   AND c.table_name OPERATOR(pg_catalog.=) target);
	END IF;
	RETURN skade.register_table(namespace, target, d.metadata_location, cat);
END
$undrop$;
