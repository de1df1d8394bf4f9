/* skade--1.6--1.7.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION skade UPDATE TO '1.7'" to load this file. \quit

/*
 * 1.7: an Idempotency-Key answer is bound to the role's OID, the method, the
 * route and the SHA-256 of the body in columns of their own (the key was
 * role || ':' || key, which two roles could share, and the body was never
 * compared), and swept by time.  The stored answers live 30 minutes: they
 * are dropped with the old table, not converted.
 */
DROP TABLE skade.rest_idempotency;
CREATE TABLE skade.rest_idempotency (
	role_oid oid NOT NULL,
	key text NOT NULL,
	method text NOT NULL,
	route text NOT NULL,
	body_sha256 bytea NOT NULL,
	status integer NOT NULL,
	body text NOT NULL,
	created_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
	PRIMARY KEY (role_oid, key)
);
CREATE INDEX rest_idempotency_created_at ON skade.rest_idempotency (created_at);
REVOKE ALL ON skade.rest_idempotency FROM PUBLIC;

/*
 * A name that becomes a directory of a default location must be one path
 * component: "..", "a/b" or a control character made the table's metadata
 * land outside its namespace's directory (42602 now).  create_namespace
 * checks the levels of a namespace without a location in C.
 */
CREATE FUNCTION skade.path_component(name text, what text DEFAULT 'table')
	RETURNS text AS 'MODULE_PATHNAME', 'skade_path_component' LANGUAGE C IMMUTABLE STRICT
	PARALLEL SAFE;
REVOKE ALL ON FUNCTION skade.path_component(text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION skade.path_component(text, text) TO skade_writer;

CREATE OR REPLACE FUNCTION skade.new_table_metadata(namespace text, name text, schema jsonb,
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

CREATE OR REPLACE FUNCTION skade.create_view(namespace text, name text, request jsonb, catalog text DEFAULT NULL)
	RETURNS text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $cv$
DECLARE
	cat text := coalesce(catalog, current_setting('skade.catalog'));
	loc text := request->>'location';
	m jsonb;
	file text;
BEGIN
	IF namespace IS NULL OR name IS NULL OR request IS NULL THEN
		RAISE EXCEPTION 'namespace, name and request must not be NULL' USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF NOT skade.namespace_exists(namespace, cat) THEN
		RAISE EXCEPTION 'namespace "%" does not exist', namespace USING ERRCODE = 'invalid_schema_name';
	END IF;
	IF EXISTS (SELECT 1 FROM public.iceberg_tables t
			   WHERE t.catalog_name = cat AND t.table_namespace = namespace
				 AND t.table_name = name) THEN
		RAISE EXCEPTION '% "%.%" already exists',
			(SELECT lower(coalesce(t.iceberg_type, 'TABLE')) FROM public.iceberg_tables t
			  WHERE t.catalog_name = cat AND t.table_namespace = namespace AND t.table_name = name),
			namespace, name USING ERRCODE = 'unique_violation';
	END IF;
	IF loc IS NULL THEN
		loc := skade.namespace_properties(namespace, cat)->>'location';
		IF loc IS NULL THEN
			RAISE EXCEPTION 'view "%.%" has no location', namespace, name USING ERRCODE = 'invalid_parameter_value',
				HINT = 'Pass location, set the namespace''s "location" property, or set skade.warehouse.';
		END IF;
		-- the name becomes a directory: one path component (else 42602)
		loc := rtrim(loc, '/') || '/' || skade.path_component(name, 'view');
	END IF;
	m := skade.apply_view_updates(
		jsonb_build_object('format-version', 1, 'current-version-id', -1, 'versions', '[]'::jsonb,
						   'version-log', '[]'::jsonb, 'schemas', '[]'::jsonb, 'properties', '{}'::jsonb),
		jsonb_build_array(
			jsonb_build_object('action', 'assign-uuid', 'uuid', gen_random_uuid()::text),
			jsonb_build_object('action', 'set-location', 'location', loc),
			jsonb_build_object('action', 'set-properties', 'updates', coalesce(request->'properties', '{}')),
			jsonb_build_object('action', 'add-schema', 'schema', request->'schema'),
			jsonb_build_object('action', 'add-view-version', 'view-version',
							   coalesce(request->'view-version', 'null') || '{"schema-id": -1}'),
			jsonb_build_object('action', 'set-current-view-version', 'view-version-id', -1)));
	file := coalesce(rtrim(m->'properties'->>'write.metadata.path', '/'), (m->>'location') || '/metadata')
		|| '/00000-' || gen_random_uuid()::text || '.metadata.json';
	PERFORM skade.write_view_metadata(file, m, namespace, cat);
	PERFORM skade.view_pointer('create', namespace, name, cat, file);
	RETURN file;
END
$cv$;
