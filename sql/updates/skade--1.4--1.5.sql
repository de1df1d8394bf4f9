/* skade--1.4--1.5.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION skade UPDATE TO '1.5'" to load this file. \quit

/*
 * 1.5: views changed through skade's functions (create_view, update_view,
 * register_view, drop_view, rename_view: the REST view routes) are logged
 * as API changes (source 'api', op create/commit/register/drop/rename),
 * as tables are; resolve_locations answers resolve_many's question as one
 * text[] (issue 15: no row per id); rest_value_map is C and
 * rest_content_file loses its SET search_path (plan_table_scan, which pins
 * it, calls them once per planned file: a SQL body parsed again and a SET
 * on each call were most of the work of planning over REST).
 */

CREATE FUNCTION skade.resolve_locations(snapshot_ids bigint[]) RETURNS text[]
	AS 'MODULE_PATHNAME', 'skade_resolve_locations' LANGUAGE C STABLE
	PARALLEL RESTRICTED;
REVOKE ALL ON FUNCTION skade.resolve_locations(bigint[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION skade.resolve_locations(bigint[]) TO skade_reader;

-- view_pointer: the one change of a view's row each view function makes,
-- logged as an API change (view_api.c): op create/register (a: location),
-- commit (a -> b), rename (to namespace a, name b) or drop; rows changed
CREATE FUNCTION skade.view_pointer(op text, namespace text, name text, catalog text,
								   a text DEFAULT NULL, b text DEFAULT NULL) RETURNS bigint
	AS 'MODULE_PATHNAME', 'skade_view_pointer' LANGUAGE C;

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
		loc := rtrim(loc, '/') || '/' || name;
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

CREATE OR REPLACE FUNCTION skade.update_view(namespace text, name text, requirements jsonb DEFAULT '[]',
								  updates jsonb DEFAULT '[]', catalog text DEFAULT NULL)
	RETURNS text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $uv$
DECLARE
	cat text := coalesce(catalog, current_setting('skade.catalog'));
	base_location text;
	base jsonb;
	m jsonb;
	r jsonb;
	version bigint;
	file text;
BEGIN
	IF namespace IS NULL OR name IS NULL OR requirements IS NULL OR updates IS NULL THEN
		RAISE EXCEPTION 'namespace, name, requirements and updates must not be NULL'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF jsonb_typeof(requirements) <> 'array' THEN
		RAISE EXCEPTION 'requirements must be a JSON array' USING ERRCODE = 'invalid_parameter_value';
	END IF;
	SELECT t.metadata_location INTO base_location FROM public.iceberg_tables t
	 WHERE t.catalog_name = cat AND t.table_namespace = namespace
	   AND t.table_name = name AND t.iceberg_type = 'VIEW'
	   FOR UPDATE;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'view "%.%" does not exist in catalog "%"', namespace, name, cat USING ERRCODE = 'undefined_table';
	END IF;
	base := skade.view_metadata(namespace, name, cat)::jsonb;
	FOR r IN SELECT q FROM jsonb_array_elements(requirements) q LOOP
		CASE lower(r->>'type')
		WHEN 'assert-view-uuid' THEN
			IF lower(r->>'uuid') IS DISTINCT FROM lower(base->>'view-uuid') THEN
				RAISE EXCEPTION 'Requirement failed: view UUID does not match: expected % != %', r->>'uuid', base->>'view-uuid'
					USING ERRCODE = 'serialization_failure';
			END IF;
		ELSE
			RAISE EXCEPTION 'unknown view requirement %', coalesce(r->>'type', 'null') USING ERRCODE = 'invalid_parameter_value';
		END CASE;
	END LOOP;
	m := skade.apply_view_updates(base, updates);
	IF m = base THEN
		RETURN base_location;
	END IF;
	version := coalesce(substring(base_location FROM '/([0-9]+)-[^/]*$')::bigint, 0) + 1;
	file := coalesce(rtrim(m->'properties'->>'write.metadata.path', '/'), (m->>'location') || '/metadata')
		|| '/' || lpad(version::text, greatest(5, length(version::text)), '0')
		|| '-' || gen_random_uuid()::text || '.metadata.json';
	PERFORM skade.write_view_metadata(file, m, namespace, cat);
	PERFORM skade.view_pointer('commit', namespace, name, cat, base_location, file);
	RETURN file;
END
$uv$;

CREATE OR REPLACE FUNCTION skade.register_view(namespace text, name text, metadata_location text,
									catalog text DEFAULT NULL) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $regv$
DECLARE
	cat text := coalesce(catalog, current_setting('skade.catalog'));
BEGIN
	IF namespace IS NULL OR name IS NULL OR metadata_location IS NULL THEN
		RAISE EXCEPTION 'namespace, name and metadata_location must not be NULL' USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF NOT skade.namespace_exists(namespace, cat) THEN
		RAISE EXCEPTION 'namespace "%" does not exist', namespace USING ERRCODE = 'invalid_schema_name';
	END IF;
	IF EXISTS (SELECT 1 FROM public.iceberg_tables t
			   WHERE t.catalog_name = cat AND t.table_namespace = namespace AND t.table_name = name) THEN
		RAISE EXCEPTION '% "%.%" already exists',
			(SELECT lower(coalesce(t.iceberg_type, 'TABLE')) FROM public.iceberg_tables t
			  WHERE t.catalog_name = cat AND t.table_namespace = namespace AND t.table_name = name),
			namespace, name USING ERRCODE = 'unique_violation';
	END IF;
	PERFORM skade.view_pointer('register', namespace, name, cat, metadata_location);
	-- readable view metadata, or nothing registered
	IF jsonb_typeof(skade.view_metadata(namespace, name, cat)::jsonb->'view-uuid') IS DISTINCT FROM 'string' THEN
		RAISE EXCEPTION '"%" is not Iceberg view metadata', metadata_location USING ERRCODE = 'invalid_parameter_value';
	END IF;
END
$regv$;

CREATE OR REPLACE FUNCTION skade.drop_view(namespace text, name text, catalog text DEFAULT NULL) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $dv$
BEGIN
	IF namespace IS NULL OR name IS NULL THEN
		RAISE EXCEPTION 'namespace and name must not be NULL' USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF skade.view_pointer('drop', namespace, name, coalesce(catalog, current_setting('skade.catalog'))) = 0 THEN
		RAISE EXCEPTION 'view "%.%" does not exist', namespace, name USING ERRCODE = 'undefined_table';
	END IF;
END
$dv$;

CREATE OR REPLACE FUNCTION skade.rename_view(namespace text, name text, new_namespace text, new_name text,
								  catalog text DEFAULT NULL) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $rv$
DECLARE
	cat text := coalesce(catalog, current_setting('skade.catalog'));
BEGIN
	IF namespace IS NULL OR name IS NULL OR new_namespace IS NULL OR new_name IS NULL THEN
		RAISE EXCEPTION 'namespace, name, new_namespace and new_name must not be NULL'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF NOT skade.view_exists(namespace, name, cat) THEN
		RAISE EXCEPTION 'view "%.%" does not exist', namespace, name USING ERRCODE = 'undefined_table';
	END IF;
	IF NOT skade.namespace_exists(new_namespace, cat) THEN
		RAISE EXCEPTION 'namespace "%" does not exist', new_namespace USING ERRCODE = 'invalid_schema_name';
	END IF;
	IF EXISTS (SELECT 1 FROM public.iceberg_tables t
			   WHERE t.catalog_name = cat AND t.table_namespace = new_namespace
				 AND t.table_name = new_name) THEN
		RAISE EXCEPTION '% "%.%" already exists',
			(SELECT lower(coalesce(t.iceberg_type, 'TABLE')) FROM public.iceberg_tables t
			  WHERE t.catalog_name = cat AND t.table_namespace = new_namespace AND t.table_name = new_name),
			new_namespace, new_name USING ERRCODE = 'unique_violation';
	END IF;
	PERFORM skade.view_pointer('rename', namespace, name, cat, new_namespace, new_name);
END
$rv$;

REVOKE ALL ON FUNCTION skade.view_pointer(text, text, text, text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION skade.view_pointer(text, text, text, text, text, text) TO skade_writer;

CREATE OR REPLACE FUNCTION skade.rest_value_map(columns jsonb, stat text) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'skade_rest_value_map' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE OR REPLACE FUNCTION skade.rest_content_file(f skade.content_file, meta jsonb) RETURNS jsonb
LANGUAGE sql STABLE AS $rcf$
	SELECT jsonb_strip_nulls(jsonb_build_object(
		'spec-id', f.partition_spec_id,
		'content', CASE f.content WHEN 'position_deletes' THEN 'position-deletes'
								  WHEN 'equality_deletes' THEN 'equality-deletes' ELSE 'data' END,
		'file-path', f.file_path,
		'file-format', lower(f.file_format),
		'partition', coalesce((SELECT jsonb_agg(coalesce(f.partition->(pf->>'name'), 'null'::jsonb) ORDER BY o)
							   FROM jsonb_array_elements(meta->'partition-specs') s,
									jsonb_array_elements(s->'fields') WITH ORDINALITY x(pf, o)
							   WHERE (s->>'spec-id')::integer = f.partition_spec_id), '[]'::jsonb),
		'file-size-in-bytes', f.file_size_in_bytes,
		'record-count', f.record_count,
		'column-sizes', skade.rest_value_map(f.columns, 'size'),
		'value-counts', skade.rest_value_map(f.columns, 'value_count'),
		'null-value-counts', skade.rest_value_map(f.columns, 'null_count'),
		'nan-value-counts', skade.rest_value_map(f.columns, 'nan_count'),
		'lower-bounds', skade.rest_value_map(f.columns, 'lower'),
		'upper-bounds', skade.rest_value_map(f.columns, 'upper'),
		'equality-ids', to_jsonb(f.equality_ids),
		'referenced-data-file', f.referenced_data_file,
		'content-offset', f.content_offset,
		'content-size-in-bytes', f.content_size_in_bytes))
$rcf$;
