/* skade--1.2--1.3.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION skade UPDATE TO '1.3'" to load this file. \quit

/*
 * 1.3: table maintenance completes -- expire_snapshots deletes the files it
 * frees (at commit), files of aborted commits are recorded and swept,
 * rewrite_manifests merges small manifests, update_table has a C fast path
 * and follows Java's builder more closely.  Every object here is
 * also in skade--1.3.sql, spelled identically (t/013_upgrade.pl compares a
 * fresh 1.3 with 1.0 updated through every script).
 */


/* update_table's builder steps (Java's TableMetadata.Builder rules) */

-- a JSON integer, as Java's JsonUtil.getInt reads one (integral, in int range);
-- anything else (missing, a string, 1.5) is 22023 naming what
CREATE FUNCTION skade.json_int(v jsonb, what text) RETURNS integer
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $f$
BEGIN
	IF jsonb_typeof(v) = 'number' AND v::text ~ '^-?[0-9]{1,10}$'
	   AND v::text::bigint BETWEEN -2147483648 AND 2147483647 THEN
		RETURN v::text::integer;
	END IF;
	RAISE EXCEPTION '% must be an integer, not %', what, coalesce(v::text, 'missing')
		USING ERRCODE = 'invalid_parameter_value';
END
$f$;

-- the type of field id, reached from the schema through structs only (NULL: none)
CREATE FUNCTION skade.source_type(schema jsonb, id integer) RETURNS jsonb
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $f$
	WITH RECURSIVE f(field) AS (
		SELECT e FROM jsonb_array_elements(coalesce(schema->'fields', '[]')) e
		UNION ALL
		SELECT e FROM f, jsonb_array_elements(f.field->'type'->'fields') e
		 WHERE jsonb_typeof(f.field->'type') = 'object' AND f.field->'type'->>'type' = 'struct')
	SELECT field->'type' FROM f WHERE field->'id' = to_jsonb(id) LIMIT 1
$f$;

-- why partition field (is_spec) or sort field f cannot be bound to schema, NULL
-- if it can: Java's PartitionSpec/SortOrder.checkCompatibility (a primitive
-- source; Transform.canTransform; a partition field's void transform is exempt)
CREATE FUNCTION skade.bind_error(schema jsonb, f jsonb, is_spec boolean) RETURNS text
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $f$
DECLARE
	t jsonb := skade.source_type(schema, (f->>'source-id')::integer);
	tr text := f->>'transform';
	b text;
	ok boolean;
BEGIN
	IF is_spec AND tr = 'void' THEN
		RETURN NULL;
	ELSIF t IS NULL THEN
		RETURN format('source id %s is not a field of the current schema', f->>'source-id');
	ELSIF jsonb_typeof(t) <> 'string' OR t #>> '{}' = 'variant' THEN
		RETURN format('source id %s is not a primitive field', f->>'source-id');
	END IF;
	b := regexp_replace(t #>> '{}', '[\[(].*$', '');
	ok := CASE WHEN tr = 'identity' THEN b NOT IN ('geometry', 'geography')
			WHEN tr ~ '^bucket\[[0-9]+\]$' THEN b IN ('int', 'long', 'date', 'time', 'timestamp', 'timestamptz',
				'timestamp_ns', 'timestamptz_ns', 'string', 'binary', 'fixed', 'decimal', 'uuid')
			WHEN tr ~ '^truncate\[[0-9]+\]$' THEN b IN ('int', 'long', 'string', 'binary', 'decimal')
			WHEN tr IN ('year', 'month', 'day') THEN b IN ('date', 'timestamp', 'timestamptz', 'timestamp_ns', 'timestamptz_ns')
			WHEN tr = 'hour' THEN b IN ('timestamp', 'timestamptz', 'timestamp_ns', 'timestamptz_ns')
			ELSE true END;
	IF ok THEN
		RETURN NULL;
	END IF;
	RETURN format('transform %s cannot apply to source id %s of type %s', tr, f->>'source-id', t #>> '{}');
END
$f$;

-- add-schema: ids kept as sent; an identical schema is reused (no change when
-- last-column-id stays: last_added is its id, nchanges as it was), else max id + 1
CREATE OR REPLACE FUNCTION skade.add_schema(m jsonb, schema jsonb, idx integer, INOUT nchanges integer,
								 OUT meta jsonb, OUT last_added integer)
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $f$
DECLARE
	norm jsonb;
	found integer;
	highest integer;
	id integer;
BEGIN
	IF jsonb_typeof(schema) IS DISTINCT FROM 'object' THEN
		RAISE EXCEPTION 'updates[%].schema must be an object', idx USING ERRCODE = 'invalid_parameter_value';
	END IF;
	-- structure and types (the fresh ids are thrown away)
	PERFORM skade.fresh_type(jsonb_build_object('type', 'struct', 'fields', schema->'fields'),
							 format('updates[%s].schema', idx), 0, '{}'::jsonb);
	IF (m->>'format-version')::integer < 3 AND schema::text ~ '"(timestamp_ns|timestamptz_ns|variant|unknown|geometry|geography)' THEN
		RAISE EXCEPTION 'updates[%].schema: a type of format version 3 in a v% table', idx, m->>'format-version'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	norm := jsonb_build_object('type', 'struct', 'fields', schema->'fields')
		|| CASE WHEN jsonb_array_length(coalesce(schema->'identifier-field-ids', '[]')) > 0
				THEN jsonb_build_object('identifier-field-ids', schema->'identifier-field-ids') ELSE '{}' END;
	SELECT (x->>'schema-id')::integer INTO found FROM jsonb_array_elements(m->'schemas') x
	 WHERE (x - 'schema-id') = norm LIMIT 1;
	SELECT max(v::text::integer) INTO highest FROM (
		SELECT jsonb_path_query(schema, 'lax $.**.id') v
		UNION ALL SELECT jsonb_path_query(schema, 'lax $.**."element-id"')
		UNION ALL SELECT jsonb_path_query(schema, 'lax $.**."key-id"')
		UNION ALL SELECT jsonb_path_query(schema, 'lax $.**."value-id"')) ids;
	highest := greatest(coalesce(highest, 0), (m->>'last-column-id')::integer);
	IF found IS NOT NULL AND highest = (m->>'last-column-id')::integer THEN
		meta := m;
		last_added := found;	-- reused: no change
		RETURN;
	END IF;
	meta := m || jsonb_build_object('last-column-id', highest);
	IF found IS NULL THEN
		SELECT coalesce(max((x->>'schema-id')::integer), -1) + 1 INTO id FROM jsonb_array_elements(m->'schemas') x;
		meta := jsonb_set(meta, '{schemas}', (m->'schemas') || jsonb_build_array(norm || jsonb_build_object('schema-id', id)));
	ELSE
		id := found;
	END IF;
	last_added := id;
	nchanges := nchanges + 1;
END
$f$;

-- add-snapshot: a new id, sequence numbers forward (v2+), row lineage (v3)
CREATE OR REPLACE FUNCTION skade.add_snapshot(m jsonb, snap jsonb, idx integer) RETURNS jsonb
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $f$
DECLARE
	fv integer := (m->>'format-version')::integer;
	seq bigint;
BEGIN
	-- an absent optional field, whether omitted or sent as null
	IF jsonb_typeof(snap) = 'object' THEN
		snap := jsonb_strip_nulls(snap);
	END IF;
	IF jsonb_typeof(snap) IS DISTINCT FROM 'object' OR jsonb_typeof(snap->'snapshot-id') IS DISTINCT FROM 'number'
	   OR jsonb_typeof(snap->'timestamp-ms') IS DISTINCT FROM 'number'
	   OR (jsonb_typeof(snap->'manifest-list') IS DISTINCT FROM 'string' AND fv > 1)
	   OR jsonb_typeof(snap->'summary'->'operation') IS DISTINCT FROM 'string' THEN
		RAISE EXCEPTION 'updates[%].snapshot needs snapshot-id, timestamp-ms, manifest-list and summary.operation', idx
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(m->'snapshots', '[]')) x
			   WHERE x->'snapshot-id' = snap->'snapshot-id') THEN
		RAISE EXCEPTION 'updates[%]: snapshot % already exists', idx, snap->>'snapshot-id'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF fv = 1 AND coalesce((snap->>'sequence-number')::numeric, 0) <> 0 THEN
		RAISE EXCEPTION 'updates[%]: sequence number % in a v1 table (it must be 0)', idx, snap->>'sequence-number'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF fv >= 2 THEN
		-- none is 0, as Java reads it (and writes 0 as none)
		seq := coalesce((snap->>'sequence-number')::bigint, 0);
		IF snap->>'parent-snapshot-id' IS NOT NULL AND seq <= (m->>'last-sequence-number')::bigint THEN
			RAISE EXCEPTION 'cannot add snapshot with sequence number % older than last sequence number %',
				seq, m->>'last-sequence-number' USING ERRCODE = 'serialization_failure',
				HINT = 'Another commit came first: reload the table and retry.';
		END IF;
		m := m || jsonb_build_object('last-sequence-number', seq);
	END IF;
	IF fv >= 3 THEN
		IF jsonb_typeof(snap->'first-row-id') IS DISTINCT FROM 'number' OR jsonb_typeof(snap->'added-rows') IS DISTINCT FROM 'number'
		   OR (snap->>'first-row-id')::bigint < 0 OR (snap->>'added-rows')::bigint < 0 THEN
			RAISE EXCEPTION 'updates[%].snapshot needs first-row-id and added-rows in a v3 table', idx
				USING ERRCODE = 'invalid_parameter_value';
		END IF;
		IF (snap->>'first-row-id')::bigint < (m->>'next-row-id')::bigint THEN
			RAISE EXCEPTION 'cannot add snapshot: first-row-id % is behind table next-row-id %',
				snap->>'first-row-id', m->>'next-row-id' USING ERRCODE = 'serialization_failure';
		END IF;
		m := m || jsonb_build_object('next-row-id', (m->>'next-row-id')::bigint + (snap->>'added-rows')::bigint);
	END IF;
	RETURN jsonb_set(m, '{snapshots}', coalesce(m->'snapshots', '[]') || jsonb_build_array(snap));
END
$f$;

-- add-spec: bound to the current schema; field ids as sent (missing ones
-- after last-partition-id); a compatible spec (same source ids, transforms
-- and names, position by position) is reused, else max spec id + 1
CREATE OR REPLACE FUNCTION skade.add_spec(m jsonb, spec jsonb, idx integer, INOUT nchanges integer,
							   OUT meta jsonb, OUT last_added integer)
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $f$
DECLARE
	cur jsonb := (SELECT x FROM jsonb_array_elements(m->'schemas') x
				  WHERE x->'schema-id' = m->'current-schema-id');
	fields jsonb := '[]';
	f jsonb;
	k integer := 0;
	next_id integer := (m->>'last-partition-id')::integer;
	fid integer;
	found integer;
	id integer;
BEGIN
	IF jsonb_typeof(spec) IS DISTINCT FROM 'object' OR jsonb_typeof(coalesce(spec->'fields', '[]')) <> 'array' THEN
		RAISE EXCEPTION 'updates[%].spec must be an object with a fields array', idx USING ERRCODE = 'invalid_parameter_value';
	END IF;
	FOR f IN SELECT e FROM jsonb_array_elements(coalesce(spec->'fields', '[]')) e LOOP
		IF jsonb_typeof(f->'source-id') IS DISTINCT FROM 'number' OR jsonb_typeof(f->'transform') IS DISTINCT FROM 'string'
		   OR coalesce(f->>'name', '') = '' THEN
			RAISE EXCEPTION 'updates[%].spec.fields[%] needs source-id, transform and name', idx, k
				USING ERRCODE = 'invalid_parameter_value';
		END IF;
		IF skade.bind_error(cur, f, true) IS NOT NULL THEN
			RAISE EXCEPTION 'updates[%].spec.fields[%]: %', idx, k, skade.bind_error(cur, f, true)
				USING ERRCODE = 'invalid_parameter_value';
		END IF;
		-- a partition name may be a column's only if that column is its source
		IF skade.source_type(cur, (f->>'source-id')::integer) IS NOT NULL AND EXISTS (
			SELECT 1 FROM jsonb_array_elements(cur->'fields') c WHERE c->>'name' = f->>'name' AND c->'id' <> f->'source-id') THEN
			RAISE EXCEPTION 'updates[%].spec.fields[%]: name "%" is another column of the schema', idx, k, f->>'name'
				USING ERRCODE = 'invalid_parameter_value';
		END IF;
		IF EXISTS (SELECT 1 FROM jsonb_array_elements(fields) g WHERE g->>'name' = f->>'name') THEN
			RAISE EXCEPTION 'updates[%].spec.fields[%]: name "%" is used twice', idx, k, f->>'name'
				USING ERRCODE = 'invalid_parameter_value';
		END IF;
		IF jsonb_typeof(f->'field-id') = 'number' THEN
			fid := (f->>'field-id')::integer;
		ELSE
			next_id := next_id + 1;
			fid := next_id;
		END IF;
		next_id := greatest(next_id, fid);
		IF (m->>'format-version')::integer = 1 AND fid <> 1000 + k THEN
			RAISE EXCEPTION 'updates[%].spec does not use the sequential field ids v1 requires', idx
				USING ERRCODE = 'invalid_parameter_value';
		END IF;
		fields := fields || jsonb_build_array(jsonb_build_object('name', f->'name', 'transform', f->'transform',
			'source-id', f->'source-id', 'field-id', fid));
		k := k + 1;
	END LOOP;
	SELECT (x->>'spec-id')::integer INTO found FROM jsonb_array_elements(m->'partition-specs') x
	 WHERE jsonb_array_length(x->'fields') = k
	   AND NOT EXISTS (SELECT 1 FROM generate_series(0, k - 1) n
					   WHERE (x->'fields'->n->'source-id', x->'fields'->n->'transform', x->'fields'->n->'name')
							 IS DISTINCT FROM (fields->n->'source-id', fields->n->'transform', fields->n->'name'))
	 ORDER BY (x->>'spec-id')::integer LIMIT 1;
	IF found IS NOT NULL THEN
		meta := m;
		last_added := found;	-- reused: no change
		RETURN;
	END IF;
	SELECT coalesce(max((x->>'spec-id')::integer), -1) + 1 INTO id FROM jsonb_array_elements(m->'partition-specs') x;
	meta := m || jsonb_build_object('last-partition-id', greatest((m->>'last-partition-id')::integer, next_id),
		'partition-specs', (m->'partition-specs') || jsonb_build_array(jsonb_build_object('spec-id', id, 'fields', fields)));
	last_added := id;
	nchanges := nchanges + 1;
END
$f$;

-- add-sort-order: unsorted is 0; an equal order is reused, else max id + 1
CREATE OR REPLACE FUNCTION skade.add_sort_order(m jsonb, ord jsonb, idx integer, INOUT nchanges integer,
									 OUT meta jsonb, OUT last_added integer)
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $f$
DECLARE
	cur jsonb := (SELECT x FROM jsonb_array_elements(m->'schemas') x
				  WHERE x->'schema-id' = m->'current-schema-id');
	fields jsonb := '[]';
	f jsonb;
	k integer := 0;
	found integer;
	id integer;
BEGIN
	IF jsonb_typeof(ord) IS DISTINCT FROM 'object' OR jsonb_typeof(coalesce(ord->'fields', '[]')) <> 'array' THEN
		RAISE EXCEPTION 'updates[%].sort-order must be an object with a fields array', idx USING ERRCODE = 'invalid_parameter_value';
	END IF;
	FOR f IN SELECT e FROM jsonb_array_elements(coalesce(ord->'fields', '[]')) e LOOP
		IF jsonb_typeof(f->'source-id') IS DISTINCT FROM 'number' OR jsonb_typeof(f->'transform') IS DISTINCT FROM 'string'
		   OR NOT (f->>'direction') IN ('asc', 'desc') OR NOT (f->>'null-order') IN ('nulls-first', 'nulls-last') THEN
			RAISE EXCEPTION 'updates[%].sort-order.fields[%] needs source-id, transform, direction asc|desc and null-order nulls-first|nulls-last',
				idx, k USING ERRCODE = 'invalid_parameter_value';
		END IF;
		IF skade.bind_error(cur, f, false) IS NOT NULL THEN
			RAISE EXCEPTION 'updates[%].sort-order.fields[%]: %', idx, k, skade.bind_error(cur, f, false)
				USING ERRCODE = 'invalid_parameter_value';
		END IF;
		fields := fields || jsonb_build_array(jsonb_build_object('transform', f->'transform', 'source-id', f->'source-id',
			'direction', f->'direction', 'null-order', f->'null-order'));
		k := k + 1;
	END LOOP;
	-- the request's id is not kept, but Java's parser binds it: 0 is the unsorted order's only
	IF (skade.json_int(ord->'order-id', format('updates[%s].sort-order.order-id', idx)) = 0) <> (k = 0) THEN
		RAISE EXCEPTION 'updates[%].sort-order: order id 0 is for the unsorted order, and the unsorted order''s id is 0', idx
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	SELECT (x->>'order-id')::integer INTO found FROM jsonb_array_elements(m->'sort-orders') x
	 WHERE x->'fields' = fields ORDER BY (x->>'order-id')::integer LIMIT 1;
	IF found IS NOT NULL THEN
		meta := m;
		last_added := found;	-- reused: no change
		RETURN;
	END IF;
	IF k = 0 THEN
		id := 0;
	ELSE
		SELECT greatest(coalesce(max((x->>'order-id')::integer), 0), 0) + 1 INTO id FROM jsonb_array_elements(m->'sort-orders') x;
	END IF;
	meta := m || jsonb_build_object('sort-orders',
		(m->'sort-orders') || jsonb_build_array(jsonb_build_object('order-id', id, 'fields', fields)));
	last_added := id;
	nchanges := nchanges + 1;
END
$f$;

-- update_table's fast path (commit_fast.c): the common shapes (appends, ref
-- moves, property changes on v2 tables) committed in C by splicing the base
-- text; NULL when the commit is left to update_table's engine (which then
-- raises every error); skade.update_fast_path = off disables it
CREATE FUNCTION skade.update_table_fast(namespace text, name text, base_location text,
										requirements jsonb, updates jsonb, catalog text)
	RETURNS text AS 'MODULE_PATHNAME', 'skade_update_table_fast' LANGUAGE C STRICT;

/*
 * update_table: one commit of the Iceberg REST CommitTableRequest kind.
 * requirements (all 8 kinds) are checked against the current metadata
 * (40001 naming the one that failed); updates are applied in order with
 * Java's TableMetadata.Builder rules; no change writes no file.  Otherwise
 * the next %05d-<uuid>.metadata.json is written (metadata-log appended and
 * trimmed to write.metadata.previous-versions-max) and the pointer moves by
 * skade.commit_table(): the same compare-and-swap UPDATE JDBC clients run,
 * under the row lock taken first.  Returns the (new or unchanged) location.
 * The encryption-key actions are refused with 0A000.
 */
CREATE OR REPLACE FUNCTION skade.update_table(namespace text, name text, requirements jsonb DEFAULT '[]',
								   updates jsonb DEFAULT '[]', catalog text DEFAULT NULL)
	RETURNS text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $update$
DECLARE
	cat text := coalesce(catalog, current_setting('skade.catalog'));
	base_location text;
	base jsonb;
	m jsonb;
	r jsonb;
	u jsonb;
	i integer := 0;
	changes integer := 0;
	now_ms bigint := (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
	added_snapshots jsonb := '{}';
	main_added jsonb := '[]';
	last_added_schema integer;
	last_added_spec integer;
	last_added_order integer;
	reused integer;
	added jsonb := '{"schemas": [], "specs": [], "orders": []}';	-- ids this commit added
	list text;
	v integer;
	s jsonb;
	ref jsonb;
	props jsonb;
	maxlog integer;
	version bigint;
	dir text;
	file text;
BEGIN
	IF namespace IS NULL OR name IS NULL OR requirements IS NULL OR updates IS NULL THEN
		RAISE EXCEPTION 'namespace, name, requirements and updates must not be NULL'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF jsonb_typeof(requirements) <> 'array' OR jsonb_typeof(updates) <> 'array' THEN
		RAISE EXCEPTION 'requirements and updates must be JSON arrays' USING ERRCODE = 'invalid_parameter_value';
	END IF;
	-- the row lock first: commits to this table (API or JDBC) queue here
	SELECT t.metadata_location INTO base_location FROM public.iceberg_tables t
	 WHERE t.catalog_name = cat AND t.table_namespace = namespace AND t.table_name = name
	   AND coalesce(t.iceberg_type, 'TABLE') = 'TABLE'
	   FOR UPDATE;
	IF NOT FOUND THEN
		IF EXISTS (SELECT 1 FROM jsonb_array_elements(requirements) q WHERE lower(q->>'type') = 'assert-create') THEN
			RAISE EXCEPTION 'requirement assert-create: use skade.create_table() to create "%.%"', namespace, name
				USING ERRCODE = 'feature_not_supported';
		END IF;
		RAISE EXCEPTION 'table "%.%" does not exist in catalog "%"', namespace, name, cat USING ERRCODE = 'undefined_table';
	END IF;
	-- the common shapes in C (commit_fast.c); NULL: this engine commits
	file := skade.update_table_fast(namespace, name, base_location, requirements, updates, cat);
	IF file IS NOT NULL THEN
		RETURN file;
	END IF;
	base := skade.table_metadata(namespace, name, catalog => cat)::jsonb;
	IF (SELECT l.metadata_location FROM skade.load_table(namespace, name, 'none', cat) l) IS DISTINCT FROM base_location THEN
		RAISE EXCEPTION 'table "%.%" changed while it was read', namespace, name USING ERRCODE = 'serialization_failure';
	END IF;
	m := base;

	-- every requirement is read before any is checked (Java parses the request
	-- first): a malformed one, or assert-create among others, is 22023
	SELECT x.n - 1, x.q INTO v, r FROM jsonb_array_elements(requirements) WITH ORDINALITY x(q, n)
	 WHERE NOT coalesce(CASE lower(x.q->>'type')
		WHEN 'assert-create' THEN NOT EXISTS (SELECT 1 FROM jsonb_array_elements(requirements) y
											  WHERE lower(y->>'type') IS DISTINCT FROM 'assert-create')
		WHEN 'assert-table-uuid' THEN jsonb_typeof(x.q->'uuid') = 'string'
		WHEN 'assert-ref-snapshot-id' THEN jsonb_typeof(x.q->'ref') = 'string'
			AND (coalesce(jsonb_typeof(x.q->'snapshot-id'), 'null') = 'null' OR x.q->>'snapshot-id' ~ '^-?[0-9]+$')
		ELSE x.q->>CASE lower(x.q->>'type') WHEN 'assert-last-assigned-field-id' THEN 'last-assigned-field-id'
			WHEN 'assert-current-schema-id' THEN 'current-schema-id'
			WHEN 'assert-last-assigned-partition-id' THEN 'last-assigned-partition-id'
			WHEN 'assert-default-spec-id' THEN 'default-spec-id'
			WHEN 'assert-default-sort-order-id' THEN 'default-sort-order-id' END ~ '^-?[0-9]{1,10}$' END, false)
	 ORDER BY x.n LIMIT 1;
	IF FOUND THEN
		RAISE EXCEPTION 'requirements[%] is malformed: %', v, r
			USING ERRCODE = 'invalid_parameter_value',
			HINT = 'assert-create takes no other requirement; the others need their value field.';
	END IF;

	-- requirements, all against the same base
	FOR r IN SELECT q FROM jsonb_array_elements(requirements) q LOOP
		i := i + 1;
		CASE lower(r->>'type')
		WHEN 'assert-create' THEN
			RAISE EXCEPTION 'requirement assert-create failed: table "%.%" already exists', namespace, name
				USING ERRCODE = 'serialization_failure';
		WHEN 'assert-table-uuid' THEN
			IF lower(r->>'uuid') IS DISTINCT FROM lower(base->>'table-uuid') THEN
				RAISE EXCEPTION 'requirement assert-table-uuid failed: uuid is %, not %', base->>'table-uuid', r->>'uuid'
					USING ERRCODE = 'serialization_failure';
			END IF;
		WHEN 'assert-ref-snapshot-id' THEN
			ref := base->'refs'->(r->>'ref');
			IF ref IS NOT NULL AND r->'snapshot-id' IS NULL OR ref IS NOT NULL AND jsonb_typeof(r->'snapshot-id') = 'null' THEN
				RAISE EXCEPTION 'requirement assert-ref-snapshot-id failed: % % was created concurrently', ref->>'type', r->>'ref'
					USING ERRCODE = 'serialization_failure';
			ELSIF ref IS NOT NULL AND (ref->>'snapshot-id')::bigint IS DISTINCT FROM (r->>'snapshot-id')::bigint THEN
				RAISE EXCEPTION 'requirement assert-ref-snapshot-id failed: % % has changed: expected id % != %',
					ref->>'type', r->>'ref', r->>'snapshot-id', ref->>'snapshot-id' USING ERRCODE = 'serialization_failure';
			ELSIF ref IS NULL AND r->>'snapshot-id' IS NOT NULL THEN
				RAISE EXCEPTION 'requirement assert-ref-snapshot-id failed: branch or tag % is missing, expected %',
					r->>'ref', r->>'snapshot-id' USING ERRCODE = 'serialization_failure';
			END IF;
		WHEN 'assert-last-assigned-field-id' THEN
			IF (base->>'last-column-id')::integer IS DISTINCT FROM (r->>'last-assigned-field-id')::integer THEN
				RAISE EXCEPTION 'requirement assert-last-assigned-field-id failed: expected id %, not %',
					r->>'last-assigned-field-id', base->>'last-column-id' USING ERRCODE = 'serialization_failure';
			END IF;
		WHEN 'assert-current-schema-id' THEN
			IF (base->>'current-schema-id')::integer IS DISTINCT FROM (r->>'current-schema-id')::integer THEN
				RAISE EXCEPTION 'requirement assert-current-schema-id failed: expected id %, not %',
					r->>'current-schema-id', base->>'current-schema-id' USING ERRCODE = 'serialization_failure';
			END IF;
		WHEN 'assert-last-assigned-partition-id' THEN
			IF (base->>'last-partition-id')::integer IS DISTINCT FROM (r->>'last-assigned-partition-id')::integer THEN
				RAISE EXCEPTION 'requirement assert-last-assigned-partition-id failed: expected id %, not %',
					r->>'last-assigned-partition-id', base->>'last-partition-id' USING ERRCODE = 'serialization_failure';
			END IF;
		WHEN 'assert-default-spec-id' THEN
			IF (base->>'default-spec-id')::integer IS DISTINCT FROM (r->>'default-spec-id')::integer THEN
				RAISE EXCEPTION 'requirement assert-default-spec-id failed: expected id %, not %',
					r->>'default-spec-id', base->>'default-spec-id' USING ERRCODE = 'serialization_failure';
			END IF;
		WHEN 'assert-default-sort-order-id' THEN
			IF (base->>'default-sort-order-id')::integer IS DISTINCT FROM (r->>'default-sort-order-id')::integer THEN
				RAISE EXCEPTION 'requirement assert-default-sort-order-id failed: expected id %, not %',
					r->>'default-sort-order-id', base->>'default-sort-order-id' USING ERRCODE = 'serialization_failure';
			END IF;
		ELSE
			RAISE EXCEPTION 'requirements[%]: unknown requirement %', i - 1, coalesce(r->'type', 'null'::jsonb)
				USING ERRCODE = 'invalid_parameter_value';
		END CASE;
	END LOOP;

	-- updates, in order
	i := 0;
	FOR u IN SELECT q FROM jsonb_array_elements(updates) q LOOP
		i := i + 1;
		CASE lower(u->>'action')
		WHEN 'assign-uuid' THEN
			IF jsonb_typeof(u->'uuid') IS DISTINCT FROM 'string' THEN
				RAISE EXCEPTION 'updates[%].uuid must be a string', i - 1 USING ERRCODE = 'invalid_parameter_value';
			ELSIF lower(u->>'uuid') <> lower(m->>'table-uuid') THEN
				RAISE EXCEPTION 'updates[%]: cannot change the uuid of an existing table', i - 1
					USING ERRCODE = 'invalid_parameter_value';
			END IF;
		WHEN 'upgrade-format-version' THEN
			v := skade.json_int(u->'format-version', format('updates[%s].format-version', i - 1));
			IF v IS NULL OR v > 3 THEN
				RAISE EXCEPTION 'updates[%]: cannot upgrade to format version %', i - 1, coalesce(u->>'format-version', 'null')
					USING ERRCODE = 'invalid_parameter_value';
			ELSIF v < (m->>'format-version')::integer THEN
				RAISE EXCEPTION 'updates[%]: cannot downgrade v% table to v%', i - 1, m->>'format-version', v
					USING ERRCODE = 'invalid_parameter_value';
			ELSIF v > (m->>'format-version')::integer THEN
				m := skade.upgraded(m, v);
				changes := changes + 1;
			END IF;
		WHEN 'set-properties' THEN
			props := coalesce(u->'updates', u->'updated');
			IF jsonb_typeof(props) IS DISTINCT FROM 'object' OR EXISTS (
				SELECT 1 FROM jsonb_each(props) p WHERE jsonb_typeof(p.value) <> 'string') THEN
				RAISE EXCEPTION 'updates[%].updates must be an object of strings', i - 1 USING ERRCODE = 'invalid_parameter_value';
			END IF;
			IF props <> '{}' THEN
				-- as Java's client does: format-version is an upgrade, reserved keys are not kept
				IF props ? 'format-version' THEN
					v := CASE WHEN props->>'format-version' ~ '^[0-9]{1,2}$' THEN (props->>'format-version')::integer END;
					IF v IS NULL OR v > 3 OR v < (m->>'format-version')::integer THEN
						RAISE EXCEPTION 'updates[%]: format-version % cannot be set', i - 1, props->>'format-version'
							USING ERRCODE = 'invalid_parameter_value';
					ELSIF v > (m->>'format-version')::integer THEN
						m := skade.upgraded(m, v);
					END IF;
				END IF;
				m := jsonb_set(m, '{properties}', coalesce(m->'properties', '{}') || (props - ARRAY['format-version', 'uuid',
					'snapshot-count', 'current-snapshot-id', 'current-snapshot-summary', 'current-snapshot-timestamp-ms',
					'current-schema', 'default-partition-spec', 'default-sort-order']));
				changes := changes + 1;
			END IF;
		WHEN 'remove-properties' THEN
			IF jsonb_typeof(coalesce(u->'removals', u->'removed')) IS DISTINCT FROM 'array' THEN
				RAISE EXCEPTION 'updates[%].removals must be an array of strings', i - 1 USING ERRCODE = 'invalid_parameter_value';
			END IF;
			IF jsonb_array_length(coalesce(u->'removals', u->'removed')) > 0 THEN
				m := jsonb_set(m, '{properties}', coalesce(m->'properties', '{}') -
					ARRAY(SELECT jsonb_array_elements_text(coalesce(u->'removals', u->'removed'))));
				changes := changes + 1;
			END IF;
		WHEN 'set-location' THEN
			IF jsonb_typeof(u->'location') IS DISTINCT FROM 'string' THEN
				RAISE EXCEPTION 'updates[%].location must be a string', i - 1 USING ERRCODE = 'invalid_parameter_value';
			END IF;
			IF u->>'location' <> m->>'location' THEN
				m := m || jsonb_build_object('location', rtrim(u->>'location', '/'));
				changes := changes + 1;
			END IF;
		WHEN 'add-schema' THEN
			-- reusing a schema with no change, the last added one is that schema only if
			-- this commit added it (Java's Builder.addSchemaInternal)
			v := changes;
			SELECT a.meta, a.nchanges, a.last_added INTO m, changes, reused
			  FROM skade.add_schema(m, u->'schema', i - 1, changes) a;
			last_added_schema := CASE WHEN changes > v THEN reused
				WHEN last_added_schema IS NOT NULL AND added->'schemas' @> to_jsonb(reused) THEN reused END;
			IF changes > v THEN
				added := jsonb_set(added, '{schemas}', (added->'schemas') || to_jsonb(reused));
			END IF;
		WHEN 'set-current-schema' THEN
			v := skade.json_int(u->'schema-id', format('updates[%s].schema-id', i - 1));
			IF v = -1 THEN
				IF last_added_schema IS NULL THEN
					RAISE EXCEPTION 'updates[%]: cannot set last added schema: no schema has been added', i - 1
						USING ERRCODE = 'invalid_parameter_value';
				END IF;
				v := last_added_schema;
			END IF;
			IF v IS DISTINCT FROM (m->>'current-schema-id')::integer THEN
				IF NOT EXISTS (SELECT 1 FROM jsonb_array_elements(m->'schemas') x WHERE (x->>'schema-id')::integer = v) THEN
					RAISE EXCEPTION 'updates[%]: cannot set current schema to unknown schema %', i - 1, v
						USING ERRCODE = 'invalid_parameter_value';
				END IF;
				m := m || jsonb_build_object('current-schema-id', v);
				IF (m->>'format-version')::integer = 1 THEN
					m := m || jsonb_build_object('schema', (SELECT x FROM jsonb_array_elements(m->'schemas') x
														   WHERE (x->>'schema-id')::integer = v));
				END IF;
				changes := changes + 1;
			END IF;
		WHEN 'add-snapshot' THEN
			m := skade.add_snapshot(m, u->'snapshot', i - 1);
			added_snapshots := added_snapshots || jsonb_build_object(u->'snapshot'->>'snapshot-id', u->'snapshot'->'timestamp-ms');
			changes := changes + 1;
		WHEN 'set-snapshot-ref' THEN
			SELECT a.meta, a.nchanges INTO m, changes
			  FROM skade.set_snapshot_ref(m, u, i - 1, added_snapshots, now_ms, changes) a;
			IF u->>'ref-name' = 'main' AND added_snapshots ? (u->>'snapshot-id') THEN
				main_added := main_added || jsonb_build_array(u->'snapshot-id');
			END IF;
		WHEN 'remove-snapshot-ref' THEN
			IF jsonb_typeof(u->'ref-name') IS DISTINCT FROM 'string' THEN
				RAISE EXCEPTION 'updates[%].ref-name must be a string', i - 1 USING ERRCODE = 'invalid_parameter_value';
			END IF;
			IF m->'refs' ? (u->>'ref-name') THEN
				m := jsonb_set(m, '{refs}', (m->'refs') - (u->>'ref-name'));
				changes := changes + 1;
			END IF;
			IF u->>'ref-name' = 'main' THEN
				m := m || jsonb_build_object('current-snapshot-id',
					CASE WHEN (m->>'format-version')::integer >= 3 THEN NULL ELSE -1 END);
			END IF;
		WHEN 'remove-snapshots' THEN
			SELECT a.meta, a.nchanges INTO m, changes
			  FROM skade.remove_snapshots(m, u->'snapshot-ids', i - 1, changes) a;
		WHEN 'add-spec' THEN
			-- reusing a spec, the last added one becomes it if the previous last added
			-- one was added by this commit (Java's Builder.addPartitionSpecInternal)
			v := changes;
			SELECT a.meta, a.nchanges, a.last_added INTO m, changes, reused
			  FROM skade.add_spec(m, u->'spec', i - 1, changes) a;
			last_added_spec := CASE WHEN changes > v THEN reused
				WHEN last_added_spec IS NOT NULL AND added->'specs' @> to_jsonb(last_added_spec) THEN reused END;
			IF changes > v THEN
				added := jsonb_set(added, '{specs}', (added->'specs') || to_jsonb(reused));
			END IF;
		WHEN 'set-default-spec' THEN
			v := skade.json_int(u->'spec-id', format('updates[%s].spec-id', i - 1));
			IF v = -1 THEN
				IF last_added_spec IS NULL THEN
					RAISE EXCEPTION 'updates[%]: cannot set last added spec: no spec has been added', i - 1
						USING ERRCODE = 'invalid_parameter_value';
				END IF;
				v := last_added_spec;
			END IF;
			-- (an unknown id is refused at the end, as Java's build() does)
			IF v IS DISTINCT FROM (m->>'default-spec-id')::integer THEN
				m := m || jsonb_build_object('default-spec-id', v);
				changes := changes + 1;
			END IF;
		WHEN 'add-sort-order' THEN
			-- (the same rule as add-spec: Java's Builder.addSortOrderInternal)
			v := changes;
			SELECT a.meta, a.nchanges, a.last_added INTO m, changes, reused
			  FROM skade.add_sort_order(m, u->'sort-order', i - 1, changes) a;
			last_added_order := CASE WHEN changes > v THEN reused
				WHEN last_added_order IS NOT NULL AND added->'orders' @> to_jsonb(last_added_order) THEN reused END;
			IF changes > v THEN
				added := jsonb_set(added, '{orders}', (added->'orders') || to_jsonb(reused));
			END IF;
		WHEN 'set-default-sort-order' THEN
			v := skade.json_int(u->'sort-order-id', format('updates[%s].sort-order-id', i - 1));
			IF v = -1 THEN
				IF last_added_order IS NULL THEN
					RAISE EXCEPTION 'updates[%]: cannot set last added sort order: no sort order has been added', i - 1
						USING ERRCODE = 'invalid_parameter_value';
				END IF;
				v := last_added_order;
			END IF;
			-- (an unknown id is refused at the end, as Java's build() does)
			IF v IS DISTINCT FROM (m->>'default-sort-order-id')::integer THEN
				m := m || jsonb_build_object('default-sort-order-id', v);
				changes := changes + 1;
			END IF;
		WHEN 'set-statistics', 'set-partition-statistics' THEN
			s := CASE lower(u->>'action') WHEN 'set-statistics' THEN u->'statistics' ELSE u->'partition-statistics' END;
			IF jsonb_typeof(s) IS DISTINCT FROM 'object' OR jsonb_typeof(s->'snapshot-id') IS DISTINCT FROM 'number'
			   OR jsonb_typeof(s->'statistics-path') IS DISTINCT FROM 'string'
			   OR jsonb_typeof(s->'file-size-in-bytes') IS DISTINCT FROM 'number' THEN
				RAISE EXCEPTION 'updates[%] needs a statistics file with snapshot-id, statistics-path and file-size-in-bytes', i - 1
					USING ERRCODE = 'invalid_parameter_value';
			END IF;
			list := CASE lower(u->>'action') WHEN 'set-statistics' THEN 'statistics' ELSE 'partition-statistics' END;
			m := jsonb_set(m, ARRAY[list],
				(SELECT coalesce(jsonb_agg(x), '[]') FROM jsonb_array_elements(coalesce(m->list, '[]')) x
				  WHERE x->'snapshot-id' <> s->'snapshot-id') || jsonb_build_array(s));
			changes := changes + 1;
		WHEN 'remove-statistics', 'remove-partition-statistics' THEN
			list := CASE lower(u->>'action') WHEN 'remove-statistics' THEN 'statistics' ELSE 'partition-statistics' END;
			IF NOT coalesce(u->>'snapshot-id' ~ '^-?[0-9]+$' AND jsonb_typeof(u->'snapshot-id') = 'number', false) THEN
				RAISE EXCEPTION 'updates[%].snapshot-id must be a number', i - 1 USING ERRCODE = 'invalid_parameter_value';
			END IF;
			IF EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(m->list, '[]')) x
					   WHERE x->'snapshot-id' = u->'snapshot-id') THEN
				m := jsonb_set(m, ARRAY[list],
					(SELECT coalesce(jsonb_agg(x), '[]') FROM jsonb_array_elements(m->list) x
					  WHERE x->'snapshot-id' <> u->'snapshot-id'));
				changes := changes + 1;
			END IF;
		WHEN 'remove-partition-specs' THEN
			IF jsonb_typeof(u->'spec-ids') IS DISTINCT FROM 'array' THEN
				RAISE EXCEPTION 'updates[%].spec-ids must be an array', i - 1 USING ERRCODE = 'invalid_parameter_value';
			ELSIF m->'default-spec-id' IN (SELECT jsonb_array_elements(u->'spec-ids')) THEN
				RAISE EXCEPTION 'updates[%]: cannot remove the default partition spec', i - 1 USING ERRCODE = 'invalid_parameter_value';
			END IF;
			IF jsonb_array_length(u->'spec-ids') > 0 THEN
				m := jsonb_set(m, '{partition-specs}', (SELECT coalesce(jsonb_agg(x), '[]') FROM jsonb_array_elements(m->'partition-specs') x
					WHERE NOT x->'spec-id' IN (SELECT jsonb_array_elements(u->'spec-ids'))));
				changes := changes + 1;
			END IF;
		WHEN 'remove-schemas' THEN
			IF jsonb_typeof(u->'schema-ids') IS DISTINCT FROM 'array' THEN
				RAISE EXCEPTION 'updates[%].schema-ids must be an array', i - 1 USING ERRCODE = 'invalid_parameter_value';
			ELSIF m->'current-schema-id' IN (SELECT jsonb_array_elements(u->'schema-ids')) THEN
				RAISE EXCEPTION 'updates[%]: cannot remove the current schema', i - 1 USING ERRCODE = 'invalid_parameter_value';
			END IF;
			IF jsonb_array_length(u->'schema-ids') > 0 THEN
				m := jsonb_set(m, '{schemas}', (SELECT coalesce(jsonb_agg(x), '[]') FROM jsonb_array_elements(m->'schemas') x
					WHERE NOT x->'schema-id' IN (SELECT jsonb_array_elements(u->'schema-ids'))));
				changes := changes + 1;
			END IF;
		ELSE
			IF lower(u->>'action') IN ('add-encryption-key', 'remove-encryption-key') THEN
				RAISE EXCEPTION 'updates[%]: action % is not supported', i - 1, u->>'action'
					USING ERRCODE = 'feature_not_supported', DETAIL = 'skade does not manage table encryption keys.';
			END IF;
			RAISE EXCEPTION 'updates[%]: unknown action %', i - 1, coalesce(u->'action', 'null'::jsonb)
				USING ERRCODE = 'invalid_parameter_value';
		END CASE;
	END LOOP;

	IF changes = 0 THEN
		RETURN base_location;
	END IF;
	-- snapshots this commit added and made main, then replaced as main in the
	-- same commit, leave no snapshot-log entry (Java's intermediate snapshots)
	IF EXISTS (SELECT 1 FROM jsonb_array_elements(main_added) x WHERE x <> m->'current-snapshot-id') THEN
		m := jsonb_set(m, '{snapshot-log}', (SELECT coalesce(jsonb_agg(e ORDER BY n), '[]')
			FROM jsonb_array_elements(m->'snapshot-log') WITH ORDINALITY l(e, n)
			WHERE e->'snapshot-id' = m->'current-snapshot-id'
			   OR NOT e->'snapshot-id' IN (SELECT jsonb_array_elements(main_added))));
	END IF;

	-- what Java's build() and TableMetadata constructor refuse (22023): a
	-- default spec or sort order the current schema cannot bind, a snapshot
	-- newer than last-sequence-number, a snapshot log out of order (by more
	-- than Java's minute of clock skew) or ahead of this commit
	IF NOT EXISTS (SELECT 1 FROM jsonb_array_elements(m->'partition-specs') x WHERE x->'spec-id' = m->'default-spec-id') THEN
		RAISE EXCEPTION 'cannot set default spec to unknown spec %', m->>'default-spec-id'
			USING ERRCODE = 'invalid_parameter_value';
	ELSIF NOT EXISTS (SELECT 1 FROM jsonb_array_elements(m->'sort-orders') x WHERE x->'order-id' = m->'default-sort-order-id') THEN
		RAISE EXCEPTION 'cannot set default sort order to unknown order %', m->>'default-sort-order-id'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF (m->>'format-version')::integer = 1 THEN
		m := m || jsonb_build_object('partition-spec', (SELECT x->'fields' FROM jsonb_array_elements(m->'partition-specs') x
														 WHERE x->'spec-id' = m->'default-spec-id'));
	END IF;
	s := (SELECT x FROM jsonb_array_elements(m->'schemas') x WHERE x->'schema-id' = m->'current-schema-id');
	SELECT e INTO list FROM (
		SELECT skade.bind_error(s, f, true) e FROM jsonb_array_elements(m->'partition-specs') p,
			   jsonb_array_elements(p->'fields') f WHERE p->'spec-id' = m->'default-spec-id'
		UNION ALL
		SELECT skade.bind_error(s, f, false) FROM jsonb_array_elements(m->'sort-orders') o,
			   jsonb_array_elements(o->'fields') f WHERE o->'order-id' = m->'default-sort-order-id') b
	 WHERE e IS NOT NULL LIMIT 1;
	IF list IS NOT NULL THEN
		RAISE EXCEPTION 'the default partition spec or sort order does not fit the current schema: %', list
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF (SELECT max((x->>'sequence-number')::bigint) FROM jsonb_array_elements(coalesce(m->'snapshots', '[]')) x)
	   > coalesce((m->>'last-sequence-number')::bigint, 0) THEN
		RAISE EXCEPTION 'a snapshot has a sequence number greater than last sequence number %', m->>'last-sequence-number'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF EXISTS (SELECT 1 FROM (SELECT (e->>'timestamp-ms')::bigint t,
									 lag((e->>'timestamp-ms')::bigint) OVER (ORDER BY n) prev
								FROM jsonb_array_elements(coalesce(m->'snapshot-log', '[]')) WITH ORDINALITY l(e, n)) x
			   WHERE t < prev - 60000)
	   OR (m->'snapshot-log'->-1->>'timestamp-ms')::bigint > now_ms + 60000 THEN
		RAISE EXCEPTION 'the snapshot log would go back in time or run ahead of this commit (by more than a minute)'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;

	-- the new file: next version, metadata-log, timestamps
	props := coalesce(m->'properties', '{}');
	maxlog := greatest(1, coalesce(nullif(props->>'write.metadata.previous-versions-max', '')::integer, 100));
	m := m || jsonb_build_object('last-updated-ms', now_ms,
		'metadata-log', (SELECT coalesce(jsonb_agg(e ORDER BY n), '[]')
						 FROM (SELECT e, n FROM jsonb_array_elements(
								   coalesce(base->'metadata-log', '[]') || jsonb_build_array(jsonb_build_object(
									   'timestamp-ms', base->'last-updated-ms', 'metadata-file', base_location)))
								   WITH ORDINALITY x(e, n)
							   ORDER BY n DESC LIMIT maxlog) l));
	version := coalesce(substring(base_location FROM '/([0-9]+)-[^/]*$')::bigint, 0) + 1;
	dir := coalesce(rtrim(props->>'write.metadata.path', '/'), rtrim(m->>'location', '/') || '/metadata');
	file := dir || '/' || lpad(version::text, greatest(5, length(version::text)), '0') || '-'
		|| gen_random_uuid()::text
		|| CASE WHEN lower(props->>'write.metadata.compression-codec') = 'gzip'
				THEN '.gz.metadata.json' ELSE '.metadata.json' END;
	PERFORM skade.write_table_metadata(file, m);
	PERFORM skade.commit_table(namespace, name, base_location, file, cat);
	RETURN file;
END
$update$;

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
CREATE OR REPLACE FUNCTION skade.expire_snapshots(namespace text, name text, older_than timestamptz DEFAULT NULL,
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
		PERFORM skade.delete_at_commit(ARRAY(SELECT o.file_path FROM skade_expire_out o));
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
-- list of the replacing snapshot, written under metadata_dir; NULL when there
-- is nothing to rewrite.  Returns the new snapshot's id, sequence number and
-- manifest list and the counts of its summary.
CREATE FUNCTION skade.rewrite_manifest_files(metadata text, target_size_bytes bigint, metadata_dir text)
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
		coalesce(rtrim(props->>'write.metadata.path', '/'), rtrim(m->>'location', '/') OPERATOR(pg_catalog.||) '/metadata'));
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
-- remove these files (inside skade.write_roots) when this transaction commits
CREATE FUNCTION skade.delete_at_commit(locations text[]) RETURNS integer
	AS 'MODULE_PATHNAME', 'skade_delete_at_commit' LANGUAGE C STRICT;

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

/* ------------------------------------------------------------------ privileges */

-- the new functions: PUBLIC gets nothing (as skade--1.3.sql's loop over
-- every function); writers run the table maintenance, the fast path and
-- deferred removals; the journal and the sweep are the owner's
REVOKE ALL ON FUNCTION
	skade.json_int(jsonb, text),
	skade.source_type(jsonb, integer),
	skade.bind_error(jsonb, jsonb, boolean),
	skade.update_table_fast(text, text, text, jsonb, jsonb, text),
	skade.rewrite_manifest_files(text, bigint, text),
	skade.rewrite_manifests(text, text, bigint, text),
	skade.written_files(),
	skade.remove_written_file(text),
	skade.compact_written_files(),
	skade.delete_at_commit(text[]),
	skade.expire_files(text, text, bigint[], text),
	skade.orphan_files(),
	skade.sweep_orphan_files()
FROM PUBLIC;
GRANT EXECUTE ON FUNCTION
	skade.update_table_fast(text, text, text, jsonb, jsonb, text),
	skade.rewrite_manifest_files(text, bigint, text),
	skade.rewrite_manifests(text, text, bigint, text),
	skade.delete_at_commit(text[]),
	skade.expire_files(text, text, bigint[], text)
TO skade_writer;
