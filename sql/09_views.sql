CREATE FUNCTION skade.view_metadata(namespace text, name text, catalog text DEFAULT NULL)
	RETURNS text AS 'MODULE_PATHNAME', 'skade_view_metadata' LANGUAGE C STABLE
	PARALLEL RESTRICTED;
CREATE FUNCTION skade.write_view_metadata(location text, metadata jsonb,
										  namespace text DEFAULT NULL, catalog text DEFAULT NULL)
	RETURNS text AS 'MODULE_PATHNAME', 'skade_write_view_metadata' LANGUAGE C;

-- list_views: the views of a namespace
-- view_pointer: the one change of a view's row each view function makes,
-- logged as an API change (view_api.c): op create/register (a: location),
-- commit (a -> b), rename (to namespace a, name b) or drop; rows changed
CREATE FUNCTION skade.view_pointer(op text, namespace text, name text, catalog text,
								   a text DEFAULT NULL, b text DEFAULT NULL) RETURNS bigint
	AS 'MODULE_PATHNAME', 'skade_view_pointer' LANGUAGE C;

CREATE FUNCTION skade.list_views(namespace text, catalog text DEFAULT NULL) RETURNS SETOF text
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $lv$
BEGIN
	IF NOT skade.namespace_exists(namespace, catalog) THEN
		RAISE EXCEPTION 'namespace "%" does not exist', namespace USING ERRCODE = 'invalid_schema_name';
	END IF;
	RETURN QUERY SELECT t.table_name::text FROM public.iceberg_tables t
	 WHERE t.catalog_name = coalesce(catalog, current_setting('skade.catalog'))
	   AND t.table_namespace = namespace
	   AND t.iceberg_type = 'VIEW'
	 ORDER BY t.table_name COLLATE "C";
END
$lv$;

-- view_exists
CREATE FUNCTION skade.view_exists(namespace text, name text, catalog text DEFAULT NULL) RETURNS boolean
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $ve$
	SELECT EXISTS (SELECT 1 FROM public.iceberg_tables t
				   WHERE t.catalog_name = coalesce(catalog, current_setting('skade.catalog'))
					 AND t.table_namespace = namespace
					 AND t.table_name = name
					 AND t.iceberg_type = 'VIEW')
$ve$;

/*
 * apply_view_updates: Java's ViewMetadata.Builder over base: assign-uuid
 * (never another), upgrade-format-version (1), set-location,
 * set-properties, remove-properties, add-schema (an equal schema is
 * reused, else the next id), add-view-version (schema-id -1: the last added
 * schema; an equal version is reused, else the next id; one SQL query per
 * dialect), set-current-view-version (-1: the last added version; a change
 * logs the version in version-log); then at most
 * version.history.num-entries (10) versions are kept, the current always.
 * Bad updates are 22023.
 */
CREATE FUNCTION skade.apply_view_updates(base jsonb, updates jsonb) RETURNS jsonb
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $avu$
DECLARE
	m jsonb := base;
	u jsonb;
	s jsonb;
	ver jsonb;
	i integer := 0;
	v integer;
	sid integer;
	last_schema integer;
	last_version integer;
	keep integer;
	now_ms bigint := (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
BEGIN
	IF updates IS NULL OR jsonb_typeof(updates) <> 'array' THEN
		RAISE EXCEPTION 'updates must be a JSON array' USING ERRCODE = 'invalid_parameter_value';
	END IF;
	FOR u IN SELECT q FROM jsonb_array_elements(updates) q LOOP
		i := i + 1;
		CASE lower(u->>'action')
		WHEN 'assign-uuid' THEN
			IF jsonb_typeof(u->'uuid') IS DISTINCT FROM 'string' THEN
				RAISE EXCEPTION 'updates[%].uuid must be a string', i - 1 USING ERRCODE = 'invalid_parameter_value';
			ELSIF m ? 'view-uuid' AND lower(m->>'view-uuid') <> lower(u->>'uuid') THEN
				RAISE EXCEPTION 'updates[%]: cannot reassign the uuid of a view', i - 1 USING ERRCODE = 'invalid_parameter_value';
			END IF;
			m := m || jsonb_build_object('view-uuid', lower(u->>'uuid'));
		WHEN 'upgrade-format-version' THEN
			v := skade.json_int(u->'format-version', format('updates[%s].format-version', i - 1));
			IF v IS DISTINCT FROM 1 THEN
				RAISE EXCEPTION 'updates[%]: view format version % is not supported', i - 1, coalesce(v::text, 'null')
					USING ERRCODE = 'invalid_parameter_value';
			END IF;
		WHEN 'set-location' THEN
			IF jsonb_typeof(u->'location') IS DISTINCT FROM 'string' THEN
				RAISE EXCEPTION 'updates[%].location must be a string', i - 1 USING ERRCODE = 'invalid_parameter_value';
			END IF;
			m := m || jsonb_build_object('location', rtrim(u->>'location', '/'));
		WHEN 'set-properties' THEN
			s := coalesce(u->'updates', u->'updated');
			IF jsonb_typeof(s) IS DISTINCT FROM 'object' OR EXISTS (
				SELECT 1 FROM jsonb_each(s) p WHERE jsonb_typeof(p.value) <> 'string') THEN
				RAISE EXCEPTION 'updates[%].updates must be an object of strings', i - 1 USING ERRCODE = 'invalid_parameter_value';
			END IF;
			m := jsonb_set(m, '{properties}', coalesce(m->'properties', '{}') || s);
		WHEN 'remove-properties' THEN
			IF jsonb_typeof(u->'removals') IS DISTINCT FROM 'array' THEN
				RAISE EXCEPTION 'updates[%].removals must be an array', i - 1 USING ERRCODE = 'invalid_parameter_value';
			END IF;
			m := jsonb_set(m, '{properties}', coalesce(m->'properties', '{}') -
						   ARRAY(SELECT jsonb_array_elements_text(u->'removals')));
		WHEN 'add-schema' THEN
			s := u->'schema';
			IF jsonb_typeof(s) IS DISTINCT FROM 'object' OR jsonb_typeof(s->'fields') IS DISTINCT FROM 'array' THEN
				RAISE EXCEPTION 'updates[%].schema must be a struct with fields', i - 1 USING ERRCODE = 'invalid_parameter_value';
			END IF;
			SELECT (x->>'schema-id')::integer INTO last_schema FROM jsonb_array_elements(coalesce(m->'schemas', '[]')) x
			 WHERE x->'fields' = s->'fields'
			   AND coalesce(x->'identifier-field-ids', '[]') = coalesce(s->'identifier-field-ids', '[]')
			 LIMIT 1;
			IF last_schema IS NULL THEN
				last_schema := coalesce((SELECT max((x->>'schema-id')::integer) FROM jsonb_array_elements(coalesce(m->'schemas', '[]')) x), -1) + 1;
				m := jsonb_set(m, '{schemas}', coalesce(m->'schemas', '[]') ||
							   jsonb_build_array(s || jsonb_build_object('schema-id', last_schema)));
			END IF;
		WHEN 'add-view-version' THEN
			ver := u->'view-version';
			IF jsonb_typeof(ver) IS DISTINCT FROM 'object' OR jsonb_typeof(ver->'representations') IS DISTINCT FROM 'array' THEN
				RAISE EXCEPTION 'updates[%].view-version must be an object with representations', i - 1
					USING ERRCODE = 'invalid_parameter_value';
			END IF;
			sid := skade.json_int(ver->'schema-id', format('updates[%s].view-version.schema-id', i - 1));
			IF sid = -1 THEN
				IF last_schema IS NULL THEN
					RAISE EXCEPTION 'updates[%]: cannot set the last added schema: no schema has been added', i - 1
						USING ERRCODE = 'invalid_parameter_value';
				END IF;
				sid := last_schema;
			END IF;
			IF NOT EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(m->'schemas', '[]')) x WHERE (x->>'schema-id')::integer = sid) THEN
				RAISE EXCEPTION 'updates[%]: cannot add a version with unknown schema %', i - 1, sid
					USING ERRCODE = 'invalid_parameter_value';
			END IF;
			s := (SELECT to_jsonb(lower(r->>'dialect')) FROM jsonb_array_elements(ver->'representations') r
				  WHERE lower(r->>'type') = 'sql'
				  GROUP BY lower(r->>'dialect') HAVING count(*) > 1 LIMIT 1);
			IF s IS NOT NULL THEN
				RAISE EXCEPTION 'Invalid view version: Cannot add multiple queries for dialect %', s #>> '{}'
					USING ERRCODE = 'invalid_parameter_value';
			END IF;
			ver := ver || jsonb_build_object('schema-id', sid,
				'timestamp-ms', coalesce(ver->'timestamp-ms', to_jsonb(now_ms)));
			SELECT (x->>'version-id')::integer INTO last_version FROM jsonb_array_elements(coalesce(m->'versions', '[]')) x
			 WHERE (x - ARRAY['version-id', 'timestamp-ms'])
				   = (ver - ARRAY['version-id', 'timestamp-ms'])
			 LIMIT 1;
			IF last_version IS NULL THEN
				last_version := coalesce((SELECT max((x->>'version-id')::integer) FROM jsonb_array_elements(coalesce(m->'versions', '[]')) x), 0) + 1;
				m := jsonb_set(m, '{versions}', coalesce(m->'versions', '[]') ||
							   jsonb_build_array(ver || jsonb_build_object('version-id', last_version)));
			END IF;
		WHEN 'set-current-view-version' THEN
			v := skade.json_int(u->'view-version-id', format('updates[%s].view-version-id', i - 1));
			IF v = -1 THEN
				IF last_version IS NULL THEN
					RAISE EXCEPTION 'updates[%]: cannot set the last added view version: no view version has been added', i - 1
						USING ERRCODE = 'invalid_parameter_value';
				END IF;
				v := last_version;
			END IF;
			ver := (SELECT x FROM jsonb_array_elements(coalesce(m->'versions', '[]')) x WHERE (x->>'version-id')::integer = v);
			IF ver IS NULL THEN
				RAISE EXCEPTION 'updates[%]: cannot set current version to unknown version %', i - 1, v
					USING ERRCODE = 'invalid_parameter_value';
			END IF;
			IF (m->>'current-version-id')::integer IS DISTINCT FROM v THEN
				m := m || jsonb_build_object('current-version-id', v,
					'version-log', coalesce(m->'version-log', '[]') ||
						jsonb_build_array(jsonb_build_object('timestamp-ms', ver->'timestamp-ms', 'version-id', v)));
			END IF;
		ELSE
			RAISE EXCEPTION 'updates[%]: unknown view update action %', i - 1, coalesce(u->>'action', 'null')
				USING ERRCODE = 'invalid_parameter_value';
		END CASE;
	END LOOP;
	IF NOT EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(m->'versions', '[]')) x
				   WHERE x->'version-id' = m->'current-version-id') THEN
		RAISE EXCEPTION 'a view needs a current version' USING ERRCODE = 'invalid_parameter_value';
	END IF;
	-- the history kept (the newest versions, the current always)
	keep := greatest(1, coalesce(nullif(m->'properties'->>'version.history.num-entries', '')::integer, 10));
	IF jsonb_array_length(m->'versions') > keep THEN
		m := jsonb_set(m, '{versions}', (SELECT jsonb_agg(x ORDER BY (x->>'version-id')::integer)
			FROM (SELECT x FROM jsonb_array_elements(m->'versions') x
				  ORDER BY (x->'version-id' = m->'current-version-id') DESC,
						   (x->>'version-id')::integer DESC LIMIT keep) k));
		m := jsonb_set(m, '{version-log}', (SELECT coalesce(jsonb_agg(e ORDER BY n), '[]')
			FROM jsonb_array_elements(coalesce(m->'version-log', '[]')) WITH ORDINALITY l(e, n)
			WHERE EXISTS (SELECT 1 FROM jsonb_array_elements(m->'versions') x
						  WHERE x->'version-id' = e->'version-id')));
	END IF;
	RETURN m;
END
$avu$;

/*
 * create_view: a new view from a REST CreateViewRequest {name, location,
 * schema, view-version, properties}: written to
 * <location>/metadata/00000-<uuid>.metadata.json (location: the request's,
 * else the namespace's location and the name) and added as a 'VIEW' row
 * (logged "create").  Returns the metadata location.
 */
CREATE FUNCTION skade.create_view(namespace text, name text, request jsonb, catalog text DEFAULT NULL)
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
	file := skade.next_metadata_location(NULL, m->>'location', m->'properties'->>'write.metadata.path',
										 m->'properties'->>'write.metadata.compression-codec');
	PERFORM skade.write_view_metadata(file, m, namespace, cat);
	PERFORM skade.view_pointer('create', namespace, name, cat, file);
	RETURN file;
END
$cv$;

/*
 * update_view: a REST CommitViewRequest {requirements, updates} applied to
 * the view under its row lock (assert-view-uuid the only requirement: 40001
 * when it fails), written as the next metadata file and swapped in by the
 * JDBC clients' compare-and-swap UPDATE (logged "commit").  Returns the
 * metadata location (unchanged when nothing changed).
 */
CREATE FUNCTION skade.update_view(namespace text, name text, requirements jsonb DEFAULT '[]',
								  updates jsonb DEFAULT '[]', catalog text DEFAULT NULL)
	RETURNS text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $uv$
DECLARE
	cat text := coalesce(catalog, current_setting('skade.catalog'));
	base_location text;
	base jsonb;
	m jsonb;
	r jsonb;
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
	file := skade.next_metadata_location(base_location, m->>'location',
										 m->'properties'->>'write.metadata.path',
										 m->'properties'->>'write.metadata.compression-codec');
	PERFORM skade.write_view_metadata(file, m, namespace, cat);
	PERFORM skade.view_pointer('commit', namespace, name, cat, base_location, file);
	RETURN file;
END
$uv$;

-- register_view: an existing view metadata file as a new view (read first:
-- it must be view metadata), logged "register"
CREATE FUNCTION skade.register_view(namespace text, name text, metadata_location text,
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

-- drop_view
CREATE FUNCTION skade.drop_view(namespace text, name text, catalog text DEFAULT NULL) RETURNS void
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

-- rename_view: to another name (and namespace) not taken by a table or view
CREATE FUNCTION skade.rename_view(namespace text, name text, new_namespace text, new_name text,
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

/* ------------------------------------------------------------ REST catalog */

/*
 * rest_tokens: the static credentials of skade's REST catalog
 * (rest_auth.c): the SHA-256 of each token, the role its requests run as
 * -- bound by OID, so a role dropped and created again under the same name
 * does not inherit the old one's tokens; role_name is the name at creation,
 * for Basic credentials and for people -- and when it expires.  A token
 * reads skade_<token_id>_<secret>: its id is what rest_revoke_token and
 * rest_list_tokens name, the secret is shown once.  Only the owner reads
 * the table; tokens are made, listed and revoked by the functions below
 * (superuser: they are the owner's).  A logical dump restored into another
 * cluster gives roles new OIDs: tokens must be made again there (pg_upgrade
 * keeps role OIDs, and the tokens with them).
 */
