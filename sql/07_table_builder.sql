-- One new metadata file, create-only under skade.write_roots; content checked
-- by skade's own reader; Iceberg's file names only (metadata_write.c)
CREATE FUNCTION skade.write_table_metadata(location text, metadata jsonb,
										   namespace text DEFAULT NULL, catalog text DEFAULT NULL)
	RETURNS text AS 'MODULE_PATHNAME', 'skade_write_table_metadata' LANGUAGE C;
-- The location of the metadata file after previous (NULL: the first), in the
-- metadata_path directory (the write.metadata.path property) or the table's
-- location's metadata/, gzip'd for the codec gzip (metadata_write.c): the one
-- place the names are made (create/update_table, create/update_view)
CREATE FUNCTION skade.next_metadata_location(previous text, table_location text,
											 metadata_path text, codec text)
	RETURNS text AS 'MODULE_PATHNAME', 'skade_next_metadata_location' LANGUAGE C;
-- the pointer of a table create_table() wrote: register_table, logged "create"
CREATE FUNCTION skade.create_table_commit(namespace text, name text, metadata_location text,
										  catalog text DEFAULT NULL)
	RETURNS bigint AS 'MODULE_PATHNAME', 'skade_create_table_commit' LANGUAGE C;

/*
 * fresh_type: a schema type with Iceberg's fresh field ids, as Java's
 * TypeUtil.assignFreshIds numbers them: a struct's fields first, in order,
 * then each field's type; a list's element id, then the element; a map's
 * key and value ids, then the key and the value.  next_id is the last id
 * given; id_map collects {"old id": new id} for identifier fields and
 * partition and sort sources.  Malformed input is 22023 naming its path.
 */
CREATE FUNCTION skade.fresh_type(t jsonb, path text, INOUT next_id integer,
								 INOUT id_map jsonb, OUT result jsonb)
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $fresh$
DECLARE
	f jsonb;
	fields jsonb := '[]';
	ids integer[] := '{}';
	i integer := 0;
	r record;
BEGIN
	IF jsonb_typeof(t) OPERATOR(pg_catalog.=) 'string' THEN
		IF NOT (t #>> '{}') OPERATOR(pg_catalog.~) '^(boolean|int|long|float|double|date|time|timestamp|timestamptz|timestamp_ns|timestamptz_ns|string|uuid|binary|variant|unknown|decimal\(\d+, *\d+\)|fixed\[\d+\]|geometry(\(.*\))?|geography(\(.*\))?)$' THEN
			RAISE EXCEPTION 'schema: % has unknown type %', path, t USING ERRCODE = 'invalid_parameter_value';
		END IF;
		result := t;
		RETURN;
	END IF;
	IF jsonb_typeof(t) OPERATOR(pg_catalog.<>) 'object' OR NOT t ? 'type' THEN
		RAISE EXCEPTION 'schema: % is not a type', path USING ERRCODE = 'invalid_parameter_value';
	END IF;
	CASE t->>'type'
	WHEN 'struct' THEN
		IF jsonb_typeof(t->'fields') IS DISTINCT FROM 'array' THEN
			RAISE EXCEPTION 'schema: %.fields must be an array', path
				USING ERRCODE = 'invalid_parameter_value';
		END IF;
		FOR f IN SELECT e FROM jsonb_array_elements(t->'fields') e LOOP
			IF jsonb_typeof(f->'name') IS DISTINCT FROM 'string' OR NOT f ? 'type'
			   OR jsonb_typeof(f->'required') IS DISTINCT FROM 'boolean' THEN
				RAISE EXCEPTION 'schema: field % of % needs "name" (string), "required" (boolean) and "type"',
					i, path USING ERRCODE = 'invalid_parameter_value';
			END IF;
			next_id := next_id OPERATOR(pg_catalog.+) 1;
			ids := ids OPERATOR(pg_catalog.||) next_id;
			IF f ? 'id' THEN
				id_map := id_map OPERATOR(pg_catalog.||) jsonb_build_object(f->>'id', next_id);
			END IF;
			i := i OPERATOR(pg_catalog.+) 1;
		END LOOP;
		i := 0;
		FOR f IN SELECT e FROM jsonb_array_elements(t->'fields') e LOOP
			i := i OPERATOR(pg_catalog.+) 1;
			SELECT * INTO r FROM skade.fresh_type(f->'type', path OPERATOR(pg_catalog.||) '.' OPERATOR(pg_catalog.||) (f->>'name'),
												  next_id, id_map);
			next_id := r.next_id;
			id_map := r.id_map;
			fields := fields OPERATOR(pg_catalog.||) jsonb_build_array(
				f OPERATOR(pg_catalog.||) jsonb_build_object('id', ids[i], 'type', r.result));
		END LOOP;
		result := jsonb_build_object('type', 'struct', 'fields', fields);
	WHEN 'list' THEN
		IF NOT t ? 'element' OR jsonb_typeof(t->'element-required') IS DISTINCT FROM 'boolean' THEN
			RAISE EXCEPTION 'schema: % (list) needs "element" and "element-required"', path
				USING ERRCODE = 'invalid_parameter_value';
		END IF;
		next_id := next_id OPERATOR(pg_catalog.+) 1;
		result := t OPERATOR(pg_catalog.||) jsonb_build_object('element-id', next_id);
		IF t ? 'element-id' THEN
			id_map := id_map OPERATOR(pg_catalog.||) jsonb_build_object(t->>'element-id', next_id);
		END IF;
		SELECT * INTO r FROM skade.fresh_type(t->'element', path OPERATOR(pg_catalog.||) '.element', next_id, id_map);
		next_id := r.next_id;
		id_map := r.id_map;
		result := result OPERATOR(pg_catalog.||) jsonb_build_object('element', r.result);
	WHEN 'map' THEN
		IF NOT (t ? 'key' AND t ? 'value') OR jsonb_typeof(t->'value-required') IS DISTINCT FROM 'boolean' THEN
			RAISE EXCEPTION 'schema: % (map) needs "key", "value" and "value-required"', path
				USING ERRCODE = 'invalid_parameter_value';
		END IF;
		result := t OPERATOR(pg_catalog.||) jsonb_build_object('key-id', next_id OPERATOR(pg_catalog.+) 1,
												'value-id', next_id OPERATOR(pg_catalog.+) 2);
		IF t ? 'key-id' THEN
			id_map := id_map OPERATOR(pg_catalog.||) jsonb_build_object(t->>'key-id', next_id OPERATOR(pg_catalog.+) 1);
		END IF;
		IF t ? 'value-id' THEN
			id_map := id_map OPERATOR(pg_catalog.||) jsonb_build_object(t->>'value-id', next_id OPERATOR(pg_catalog.+) 2);
		END IF;
		next_id := next_id OPERATOR(pg_catalog.+) 2;
		SELECT * INTO r FROM skade.fresh_type(t->'key', path OPERATOR(pg_catalog.||) '.key', next_id, id_map);
		next_id := r.next_id;
		id_map := r.id_map;
		result := result OPERATOR(pg_catalog.||) jsonb_build_object('key', r.result);
		SELECT * INTO r FROM skade.fresh_type(t->'value', path OPERATOR(pg_catalog.||) '.value', next_id, id_map);
		next_id := r.next_id;
		id_map := r.id_map;
		result := result OPERATOR(pg_catalog.||) jsonb_build_object('value', r.result);
	ELSE
		RAISE EXCEPTION 'schema: % has unknown type "%"', path, t->>'type'
			USING ERRCODE = 'invalid_parameter_value';
	END CASE;
END
$fresh$;

/*
 * new_table_metadata: the metadata of a new Iceberg table, as a REST
 * catalog's CreateTableRequest makes it (Java's
 * TableMetadata.newTableMetadata): fresh column ids from 1, partition field
 * ids from 1000, sort order 1 (0 when unsorted), schema, spec and order ids
 * 0; "format-version" among the properties sets the format; reserved
 * properties are not kept and Parquet defaults to zstd, as Java persists
 * them.  The location is the argument, else the namespace's location (its
 * property, else skade.warehouse/<levels>) followed by /<name>.  The
 * namespace must exist and the table must not.  Nothing is written (a
 * staged create answers with it).
 */
CREATE FUNCTION skade.new_table_metadata(namespace text, name text, schema jsonb,
								   partition_spec jsonb DEFAULT NULL, sort_order jsonb DEFAULT NULL,
								   properties jsonb DEFAULT '{}', location text DEFAULT NULL,
								   format_version integer DEFAULT 2, catalog text DEFAULT NULL)
	RETURNS jsonb
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $create$
DECLARE
	fv integer := format_version;
	props jsonb := coalesce(properties, '{}');
	fresh record;
	new_schema jsonb;
	spec_fields jsonb := '[]';
	order_fields jsonb := '[]';
	f jsonb;
	i integer := 0;
	src text;
	loc text := location;
	now_ms bigint := (extract(epoch FROM clock_timestamp()) OPERATOR(pg_catalog.*) 1000)::bigint;
	spec jsonb;
	sort jsonb;
	meta jsonb;
BEGIN
	IF namespace IS NULL OR name IS NULL OR schema IS NULL OR props IS NULL OR fv IS NULL THEN
		RAISE EXCEPTION 'namespace, name, schema, properties and format_version must not be NULL'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF jsonb_typeof(props) OPERATOR(pg_catalog.<>) 'object' OR EXISTS (
		SELECT 1 FROM jsonb_each(props) p WHERE jsonb_typeof(p.value) OPERATOR(pg_catalog.<>) 'string') THEN
		RAISE EXCEPTION 'properties must be a JSON object of strings' USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF props ? 'format-version' THEN
		fv := CASE WHEN props->>'format-version' ~ '^[0-9]{1,2}$' THEN (props->>'format-version')::integer ELSE -1 END;
	END IF;
	-- what Java persists: zstd for Parquet unless said otherwise, no reserved keys
	props := jsonb_build_object('write.parquet.compression-codec', 'zstd') OPERATOR(pg_catalog.||)
		(props OPERATOR(pg_catalog.-) ARRAY['format-version', 'uuid', 'snapshot-count', 'current-snapshot-id',
			'current-snapshot-summary', 'current-snapshot-timestamp-ms', 'current-schema',
			'default-partition-spec', 'default-sort-order']);
	IF fv IS NULL OR fv NOT BETWEEN 1 AND 3 THEN
		RAISE EXCEPTION 'format version % is not supported', coalesce(fv::text, 'NULL')
			USING ERRCODE = 'feature_not_supported', HINT = 'Iceberg format versions 1, 2 and 3 are.';
	END IF;
	IF NOT skade.namespace_exists(namespace, catalog) THEN
		RAISE EXCEPTION 'namespace "%" does not exist', namespace USING ERRCODE = 'invalid_schema_name';
	END IF;
	-- (what holds the name is said: "view" or "table")
	IF EXISTS (SELECT 1 FROM public.iceberg_tables t
			   WHERE t.catalog_name OPERATOR(pg_catalog.=) coalesce(catalog, current_setting('skade.catalog'))
				 AND t.table_namespace OPERATOR(pg_catalog.=) namespace
				 AND t.table_name OPERATOR(pg_catalog.=) name) THEN
		RAISE EXCEPTION '% "%.%" already exists',
			(SELECT lower(coalesce(t.iceberg_type, 'TABLE')) FROM public.iceberg_tables t
			  WHERE t.catalog_name OPERATOR(pg_catalog.=) coalesce(catalog, current_setting('skade.catalog'))
				AND t.table_namespace OPERATOR(pg_catalog.=) namespace AND t.table_name OPERATOR(pg_catalog.=) name),
			namespace, name USING ERRCODE = 'unique_violation';
	END IF;

	-- the schema: fresh ids; identifier fields follow their columns
	SELECT * INTO fresh FROM skade.fresh_type(jsonb_build_object('type', 'struct', 'fields', schema->'fields'),
											  'schema', 0, '{}'::jsonb);
	new_schema := jsonb_build_object('type', 'struct', 'schema-id', 0, 'fields', fresh.result->'fields');
	IF jsonb_array_length(coalesce(schema->'identifier-field-ids', '[]')) OPERATOR(pg_catalog.>) 0 THEN
		new_schema := new_schema OPERATOR(pg_catalog.||) jsonb_build_object('identifier-field-ids',
			(SELECT jsonb_agg((fresh.id_map->>(x::text))::integer) FROM jsonb_array_elements_text(schema->'identifier-field-ids') x));
	END IF;

	-- the spec: field ids from 1000, sources through the fresh ids
	FOR f IN SELECT e FROM jsonb_array_elements(coalesce(partition_spec->'fields', '[]')) e LOOP
		src := fresh.id_map->>(f->>'source-id');
		IF src IS NULL OR jsonb_typeof(f->'transform') IS DISTINCT FROM 'string' OR jsonb_typeof(f->'name') IS DISTINCT FROM 'string' THEN
			RAISE EXCEPTION 'partition_spec: field % needs a "source-id" of the schema, a "transform" and a "name"', i
				USING ERRCODE = 'invalid_parameter_value';
		END IF;
		spec_fields := spec_fields OPERATOR(pg_catalog.||) jsonb_build_array(jsonb_build_object(
			'name', f->'name', 'transform', f->'transform', 'source-id', src::integer, 'field-id', 1000 OPERATOR(pg_catalog.+) i));
		i := i OPERATOR(pg_catalog.+) 1;
	END LOOP;
	spec := jsonb_build_object('spec-id', 0, 'fields', spec_fields);

	-- the sort order: 1, or 0 when unsorted
	i := 0;
	FOR f IN SELECT e FROM jsonb_array_elements(coalesce(sort_order->'fields', '[]')) e LOOP
		src := fresh.id_map->>(f->>'source-id');
		IF src IS NULL OR jsonb_typeof(f->'transform') IS DISTINCT FROM 'string'
		   OR NOT (f->>'direction') IN ('asc', 'desc') OR NOT (f->>'null-order') IN ('nulls-first', 'nulls-last') THEN
			RAISE EXCEPTION 'sort_order: field % needs a "source-id" of the schema, a "transform", "direction" asc|desc and "null-order" nulls-first|nulls-last', i
				USING ERRCODE = 'invalid_parameter_value';
		END IF;
		order_fields := order_fields OPERATOR(pg_catalog.||) jsonb_build_array(jsonb_build_object(
			'transform', f->'transform', 'source-id', src::integer, 'direction', f->'direction', 'null-order', f->'null-order'));
		i := i OPERATOR(pg_catalog.+) 1;
	END LOOP;
	sort := jsonb_build_object('order-id', CASE WHEN i OPERATOR(pg_catalog.>) 0 THEN 1 ELSE 0 END, 'fields', order_fields);

	-- where
	IF loc IS NULL THEN
		loc := skade.namespace_properties(namespace, catalog)->>'location';
		IF loc IS NULL THEN
			RAISE EXCEPTION 'table "%.%" has no location', namespace, name
				USING ERRCODE = 'invalid_parameter_value',
					  HINT = 'Pass location, set the namespace''s "location" property, or set skade.warehouse.';
		END IF;
		-- the name becomes a directory: one path component (else 42602)
		loc := rtrim(loc, '/') OPERATOR(pg_catalog.||) '/' OPERATOR(pg_catalog.||) skade.path_component(name, 'table');
	END IF;
	loc := rtrim(loc, '/');
	meta := jsonb_build_object(
		'format-version', fv,
		'table-uuid', gen_random_uuid()::text,
		'location', loc,
		'last-sequence-number', 0,
		'last-updated-ms', now_ms,
		'last-column-id', fresh.next_id,
		'current-schema-id', 0,
		'schemas', jsonb_build_array(new_schema),
		'default-spec-id', 0,
		'partition-specs', jsonb_build_array(spec),
		'last-partition-id', 999 OPERATOR(pg_catalog.+) jsonb_array_length(spec_fields),
		'default-sort-order-id', sort->'order-id',
		'sort-orders', jsonb_build_array(sort),
		'properties', props,
		'current-snapshot-id', -1,
		'refs', '{}'::jsonb,
		'snapshots', '[]'::jsonb,
		'statistics', '[]'::jsonb,
		'partition-statistics', '[]'::jsonb,
		'snapshot-log', '[]'::jsonb,
		'metadata-log', '[]'::jsonb);
	IF fv OPERATOR(pg_catalog.=) 1 THEN
		-- v1 readers want the current schema and spec at the top level too
		meta := (meta OPERATOR(pg_catalog.-) 'last-sequence-number') OPERATOR(pg_catalog.||) jsonb_build_object(
			'schema', new_schema, 'partition-spec', spec_fields);
	ELSIF fv OPERATOR(pg_catalog.=) 3 THEN
		meta := meta OPERATOR(pg_catalog.||) jsonb_build_object('next-row-id', 0, 'current-snapshot-id', NULL);
	END IF;

	RETURN meta;
END
$create$;

/*
 * create_table: new_table_metadata written to
 * <location>/metadata/00000-<uuid>.metadata.json (.gz.metadata.json with
 * write.metadata.compression-codec = gzip; the directory from
 * write.metadata.path) under skade.write_roots, then the pointer added
 * through the same INSERT the JDBC clients run (logged "create").
 * Returns the metadata location.
 */
CREATE FUNCTION skade.create_table(namespace text, name text, schema jsonb,
								   partition_spec jsonb DEFAULT NULL, sort_order jsonb DEFAULT NULL,
								   properties jsonb DEFAULT '{}', location text DEFAULT NULL,
								   format_version integer DEFAULT 2, catalog text DEFAULT NULL)
	RETURNS text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $create$
DECLARE
	meta jsonb := skade.new_table_metadata(namespace, name, schema, partition_spec, sort_order,
										   properties, location, format_version, catalog);
	props jsonb := meta->'properties';
	file text := skade.next_metadata_location(NULL, meta->>'location', props->>'write.metadata.path',
											  props->>'write.metadata.compression-codec');
BEGIN
	PERFORM skade.write_table_metadata(file, meta, namespace, catalog);
	PERFORM skade.create_table_commit(namespace, name, file, catalog);
	RETURN file;
END
$create$;

-- m at format version v (> its own): v2 has a last-sequence-number, v3 a next-row-id
CREATE FUNCTION skade.upgraded(m jsonb, v integer) RETURNS jsonb
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp
RETURN m || jsonb_build_object('format-version', v)
	|| CASE WHEN m ? 'last-sequence-number' THEN '{}' ELSE '{"last-sequence-number": 0}' END::jsonb
	|| CASE WHEN v >= 3 AND NOT m ? 'next-row-id' THEN '{"next-row-id": 0}' ELSE '{}' END::jsonb;

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
CREATE FUNCTION skade.add_schema(m jsonb, schema jsonb, idx integer, INOUT nchanges integer,
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
CREATE FUNCTION skade.add_snapshot(m jsonb, snap jsonb, idx integer) RETURNS jsonb
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

-- set-snapshot-ref: replaced whole; main moves the current snapshot and the log
CREATE FUNCTION skade.set_snapshot_ref(m jsonb, u jsonb, idx integer, added jsonb, now_ms bigint,
									   INOUT nchanges integer, OUT meta jsonb)
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $f$
DECLARE
	name text := u->>'ref-name';
	kind text := lower(u->>'type');
	ref jsonb;
	k text;
BEGIN
	IF name IS NULL OR jsonb_typeof(u->'snapshot-id') IS DISTINCT FROM 'number' OR kind NOT IN ('branch', 'tag') THEN
		RAISE EXCEPTION 'updates[%] needs ref-name, snapshot-id and type branch|tag', idx
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF kind = 'tag' AND (u ? 'min-snapshots-to-keep' OR u ? 'max-snapshot-age-ms') THEN
		RAISE EXCEPTION 'updates[%]: tags do not keep snapshots', idx USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF name = 'main' AND kind <> 'branch' THEN
		RAISE EXCEPTION 'updates[%]: cannot set main to a tag, it must be a branch', idx
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	ref := jsonb_build_object('snapshot-id', u->'snapshot-id', 'type', kind);
	FOREACH k IN ARRAY ARRAY['min-snapshots-to-keep', 'max-snapshot-age-ms', 'max-ref-age-ms'] LOOP
		IF u->k IS NOT NULL AND jsonb_typeof(u->k) <> 'null' THEN
			IF jsonb_typeof(u->k) <> 'number' OR (u->>k)::numeric <= 0 THEN
				RAISE EXCEPTION 'updates[%].% must be a positive number', idx, k USING ERRCODE = 'invalid_parameter_value';
			END IF;
			ref := ref || jsonb_build_object(k, u->k);
		END IF;
	END LOOP;
	IF m->'refs'->name = ref THEN
		meta := m;
		RETURN;
	END IF;
	IF NOT EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(m->'snapshots', '[]')) x
				   WHERE x->'snapshot-id' = u->'snapshot-id') THEN
		RAISE EXCEPTION 'updates[%]: cannot set % to unknown snapshot %', idx, name, u->>'snapshot-id'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	meta := jsonb_set(m, '{refs}', coalesce(m->'refs', '{}') || jsonb_build_object(name, ref));
	IF name = 'main' THEN
		meta := meta || jsonb_build_object('current-snapshot-id', u->'snapshot-id',
			'snapshot-log', coalesce(m->'snapshot-log', '[]') || jsonb_build_array(jsonb_build_object(
				'timestamp-ms', coalesce(added->(u->>'snapshot-id'), to_jsonb(now_ms)),
				'snapshot-id', u->'snapshot-id')));
	END IF;
	nchanges := nchanges + 1;
END
$f$;

-- remove-snapshots: with their statistics and the refs that named them; the
-- snapshot log loses them (and, as Java does, the history before a gap)
CREATE FUNCTION skade.remove_snapshots(m jsonb, ids jsonb, idx integer, INOUT nchanges integer,
									   OUT meta jsonb)
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $f$
DECLARE
	gone jsonb;
	kept jsonb;
	log jsonb := '[]';
	r record;
BEGIN
	IF jsonb_typeof(ids) IS DISTINCT FROM 'array' THEN
		RAISE EXCEPTION 'updates[%].snapshot-ids must be an array', idx USING ERRCODE = 'invalid_parameter_value';
	END IF;
	SELECT coalesce(jsonb_agg(x->'snapshot-id'), '[]') INTO gone FROM jsonb_array_elements(coalesce(m->'snapshots', '[]')) x
	 WHERE x->'snapshot-id' IN (SELECT jsonb_array_elements(ids));
	IF jsonb_array_length(gone) = 0 THEN
		meta := m;
		RETURN;
	END IF;
	SELECT coalesce(jsonb_agg(x), '[]') INTO kept FROM jsonb_array_elements(m->'snapshots') x
	 WHERE NOT x->'snapshot-id' IN (SELECT jsonb_array_elements(gone));
	meta := m || jsonb_build_object('snapshots', kept);
	meta := meta || jsonb_build_object(
		'statistics', (SELECT coalesce(jsonb_agg(x), '[]') FROM jsonb_array_elements(coalesce(m->'statistics', '[]')) x
					   WHERE NOT x->'snapshot-id' IN (SELECT jsonb_array_elements(gone))),
		'partition-statistics', (SELECT coalesce(jsonb_agg(x), '[]') FROM jsonb_array_elements(coalesce(m->'partition-statistics', '[]')) x
								 WHERE NOT x->'snapshot-id' IN (SELECT jsonb_array_elements(gone))),
		'refs', (SELECT coalesce(jsonb_object_agg(k, v), '{}') FROM jsonb_each(coalesce(m->'refs', '{}')) t(k, v)
				 WHERE NOT v->'snapshot-id' IN (SELECT jsonb_array_elements(gone))));
	IF (m->'current-snapshot-id') IN (SELECT jsonb_array_elements(gone)) THEN
		meta := meta || jsonb_build_object('current-snapshot-id',
			CASE WHEN (m->>'format-version')::integer >= 3 THEN NULL ELSE -1 END);
	END IF;
	FOR r IN SELECT x FROM jsonb_array_elements(coalesce(m->'snapshot-log', '[]')) x LOOP
		IF r.x->'snapshot-id' IN (SELECT jsonb_array_elements(gone)) THEN
			log := '[]';
		ELSIF r.x->'snapshot-id' IN (SELECT y->'snapshot-id' FROM jsonb_array_elements(kept) y) THEN
			log := log || jsonb_build_array(r.x);
		END IF;
	END LOOP;
	meta := meta || jsonb_build_object('snapshot-log', log);
	nchanges := nchanges + jsonb_array_length(gone);
END
$f$;

-- add-spec: bound to the current schema; field ids as sent (missing ones
-- after last-partition-id); a compatible spec (same source ids, transforms
-- and names, position by position) is reused, else max spec id + 1
CREATE FUNCTION skade.add_spec(m jsonb, spec jsonb, idx integer, INOUT nchanges integer,
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
CREATE FUNCTION skade.add_sort_order(m jsonb, ord jsonb, idx integer, INOUT nchanges integer,
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

-- update_table's C path (commit_fast.c): a commit to an existing table applied
-- in C by splicing the base text, with the engine's refusals; NULL when the
-- commit is left to update_table's PL/pgSQL engine; skade.update_fast_path =
-- off disables it
CREATE FUNCTION skade.update_table_fast(namespace text, name text, base_location text,
										requirements jsonb, updates jsonb, catalog text)
	RETURNS text AS 'MODULE_PATHNAME', 'skade_update_table_fast' LANGUAGE C STRICT;

-- ... and a staged create committed: the updates applied in C onto
-- update_table's empty table (base, empty_table_metadata), the first file
-- written and the table inserted as create_table_commit inserts it; NULL: the
-- engine's
CREATE FUNCTION skade.create_table_fast(namespace text, name text, base jsonb, updates jsonb,
										catalog text)
	RETURNS text AS 'MODULE_PATHNAME', 'skade_create_table_fast' LANGUAGE C STRICT;

/*
 * empty_table_metadata: the table a create transaction starts from (Java's
 * TableMetadata.buildFromEmpty): no schema, spec, order, property or
 * snapshot yet; its uuid from the updates' assign-uuid, its format from
 * their upgrade-format-version, its location from their set-location (else
 * the namespace's location and the name, as create_table).  The namespace
 * must exist and the table must not.
 */
CREATE FUNCTION skade.empty_table_metadata(namespace text, name text, updates jsonb,
										   catalog text DEFAULT NULL)
	RETURNS jsonb
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $empty$
DECLARE
	fv integer := 2;
	uuid text := gen_random_uuid()::text;
	loc text;
	u jsonb;
	m jsonb;
BEGIN
	IF namespace IS NULL OR name IS NULL OR updates IS NULL THEN
		RAISE EXCEPTION 'namespace, name and updates must not be NULL' USING ERRCODE = 'null_value_not_allowed';
	ELSIF jsonb_typeof(updates) <> 'array' THEN
		RAISE EXCEPTION 'updates must be a JSON array' USING ERRCODE = 'invalid_parameter_value';
	END IF;
	FOR u IN SELECT q FROM jsonb_array_elements(updates) q LOOP
		CASE lower(u->>'action')
		WHEN 'upgrade-format-version' THEN
			fv := skade.json_int(u->'format-version', 'upgrade-format-version');
		WHEN 'assign-uuid' THEN
			uuid := u->>'uuid';
		WHEN 'set-location' THEN
			loc := u->>'location';
		ELSE
		END CASE;
	END LOOP;
	IF fv IS NULL OR fv NOT BETWEEN 1 AND 3 THEN
		RAISE EXCEPTION 'format version % is not supported', coalesce(fv::text, 'NULL')
			USING ERRCODE = 'feature_not_supported', HINT = 'Iceberg format versions 1, 2 and 3 are.';
	END IF;
	IF uuid IS NULL OR uuid !~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN
		RAISE EXCEPTION 'assign-uuid needs a uuid, not %', coalesce(uuid, 'null') USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF loc IS NULL THEN
		-- as create_table places it (and checks the namespace and the name)
		loc := skade.new_table_metadata(namespace, name, '{"type": "struct", "fields": []}',
										catalog => catalog)->>'location';
	ELSIF NOT skade.namespace_exists(namespace, catalog) THEN
		RAISE EXCEPTION 'namespace "%" does not exist', namespace USING ERRCODE = 'invalid_schema_name';
	END IF;
	m := jsonb_build_object(
		'format-version', fv,
		'table-uuid', lower(uuid),
		'location', rtrim(loc, '/'),
		'last-sequence-number', 0,
		'last-updated-ms', (extract(epoch FROM clock_timestamp()) OPERATOR(pg_catalog.*) 1000)::bigint,
		'last-column-id', 0,
		'current-schema-id', -1,
		'schemas', '[]'::jsonb,
		'default-spec-id', 0,
		'partition-specs', '[]'::jsonb,
		'last-partition-id', 999,
		'default-sort-order-id', 0,
		'sort-orders', '[]'::jsonb,
		'properties', '{}'::jsonb,
		'current-snapshot-id', -1,
		'refs', '{}'::jsonb,
		'snapshots', '[]'::jsonb,
		'statistics', '[]'::jsonb,
		'partition-statistics', '[]'::jsonb,
		'snapshot-log', '[]'::jsonb,
		'metadata-log', '[]'::jsonb);
	IF fv OPERATOR(pg_catalog.=) 1 THEN
		m := m OPERATOR(pg_catalog.-) 'last-sequence-number';
	ELSIF fv OPERATOR(pg_catalog.=) 3 THEN
		m := m OPERATOR(pg_catalog.||) jsonb_build_object('next-row-id', 0, 'current-snapshot-id', NULL);
	END IF;
	RETURN m;
END
$empty$;

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
CREATE FUNCTION skade.update_table(namespace text, name text, requirements jsonb DEFAULT '[]',
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
	file text;
	creating boolean := false;
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
		IF requirements = '[{"type": "assert-create"}]'::jsonb
		   OR (jsonb_array_length(requirements) = 1 AND lower(requirements->0->>'type') = 'assert-create') THEN
			-- a staged create committed (a REST create transaction): the
			-- updates build the table from an empty one, as Java's
			-- TableMetadata.buildFromEmpty
			creating := true;
			base := skade.empty_table_metadata(namespace, name, updates, cat);
			requirements := '[]';
			file := skade.create_table_fast(namespace, name, base, updates, cat);
			IF file IS NOT NULL THEN
				RETURN file;
			END IF;
		ELSE
			RAISE EXCEPTION 'table "%.%" does not exist in catalog "%"', namespace, name, cat USING ERRCODE = 'undefined_table';
		END IF;
	ELSE
		-- the common shapes in C (commit_fast.c); NULL: this engine commits
		file := skade.update_table_fast(namespace, name, base_location, requirements, updates, cat);
		IF file IS NOT NULL THEN
			RETURN file;
		END IF;
		base := skade.table_metadata(namespace, name, catalog => cat)::jsonb;
		IF (SELECT l.metadata_location FROM skade.load_table(namespace, name, 'none', cat) l) IS DISTINCT FROM base_location THEN
			RAISE EXCEPTION 'table "%.%" changed while it was read', namespace, name USING ERRCODE = 'serialization_failure';
		END IF;
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
			RAISE EXCEPTION 'Requirement failed: table already exists'
				USING ERRCODE = 'serialization_failure';
		WHEN 'assert-table-uuid' THEN
			IF lower(r->>'uuid') IS DISTINCT FROM lower(base->>'table-uuid') THEN
				RAISE EXCEPTION 'Requirement failed: UUID does not match: expected % != %', r->>'uuid', base->>'table-uuid'
					USING ERRCODE = 'serialization_failure';
			END IF;
		WHEN 'assert-ref-snapshot-id' THEN
			ref := base->'refs'->(r->>'ref');
			IF ref IS NOT NULL AND r->'snapshot-id' IS NULL OR ref IS NOT NULL AND jsonb_typeof(r->'snapshot-id') = 'null' THEN
				RAISE EXCEPTION 'Requirement failed: % % was created concurrently', ref->>'type', r->>'ref'
					USING ERRCODE = 'serialization_failure';
			ELSIF ref IS NOT NULL AND (ref->>'snapshot-id')::bigint IS DISTINCT FROM (r->>'snapshot-id')::bigint THEN
				RAISE EXCEPTION 'Requirement failed: % % has changed: expected id % != %',
					ref->>'type', r->>'ref', r->>'snapshot-id', ref->>'snapshot-id' USING ERRCODE = 'serialization_failure';
			ELSIF ref IS NULL AND r->>'snapshot-id' IS NOT NULL THEN
				RAISE EXCEPTION 'Requirement failed: branch or tag % is missing, expected %',
					r->>'ref', r->>'snapshot-id' USING ERRCODE = 'serialization_failure';
			END IF;
		WHEN 'assert-last-assigned-field-id' THEN
			IF (base->>'last-column-id')::integer IS DISTINCT FROM (r->>'last-assigned-field-id')::integer THEN
				RAISE EXCEPTION 'Requirement failed: last assigned field id changed: expected id % != %',
					r->>'last-assigned-field-id', base->>'last-column-id' USING ERRCODE = 'serialization_failure';
			END IF;
		WHEN 'assert-current-schema-id' THEN
			IF (base->>'current-schema-id')::integer IS DISTINCT FROM (r->>'current-schema-id')::integer THEN
				RAISE EXCEPTION 'Requirement failed: current schema changed: expected id % != %',
					r->>'current-schema-id', base->>'current-schema-id' USING ERRCODE = 'serialization_failure';
			END IF;
		WHEN 'assert-last-assigned-partition-id' THEN
			IF (base->>'last-partition-id')::integer IS DISTINCT FROM (r->>'last-assigned-partition-id')::integer THEN
				RAISE EXCEPTION 'Requirement failed: last assigned partition id changed: expected id % != %',
					r->>'last-assigned-partition-id', base->>'last-partition-id' USING ERRCODE = 'serialization_failure';
			END IF;
		WHEN 'assert-default-spec-id' THEN
			IF (base->>'default-spec-id')::integer IS DISTINCT FROM (r->>'default-spec-id')::integer THEN
				RAISE EXCEPTION 'Requirement failed: default partition spec changed: expected id % != %',
					r->>'default-spec-id', base->>'default-spec-id' USING ERRCODE = 'serialization_failure';
			END IF;
		WHEN 'assert-default-sort-order-id' THEN
			IF (base->>'default-sort-order-id')::integer IS DISTINCT FROM (r->>'default-sort-order-id')::integer THEN
				RAISE EXCEPTION 'Requirement failed: default sort order changed: expected id % != %',
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

	IF changes = 0 AND NOT creating THEN
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
		'metadata-log', CASE WHEN creating THEN '[]'::jsonb ELSE (SELECT coalesce(jsonb_agg(e ORDER BY n), '[]')
						 FROM (SELECT e, n FROM jsonb_array_elements(
								   coalesce(base->'metadata-log', '[]') || jsonb_build_array(jsonb_build_object(
									   'timestamp-ms', base->'last-updated-ms', 'metadata-file', base_location)))
								   WITH ORDINALITY x(e, n)
							   ORDER BY n DESC LIMIT maxlog) l) END);
	file := skade.next_metadata_location(CASE WHEN creating THEN NULL ELSE base_location END,
										 m->>'location', props->>'write.metadata.path',
										 props->>'write.metadata.compression-codec');
	PERFORM skade.write_table_metadata(file, m, namespace, cat);
	IF creating THEN
		PERFORM skade.create_table_commit(namespace, name, file, cat);
	ELSE
		PERFORM skade.commit_table(namespace, name, base_location, file, cat);
	END IF;
	RETURN file;
END
$update$;

