/* skade--1.3--1.4.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION skade UPDATE TO '1.4'" to load this file. \quit

/*
 * 1.4: tables on object storage (s3://): write_table_metadata takes the
 * table's namespace (whose s3.* properties apply), create_table passes it;
 * create_table's metadata comes from new_table_metadata (a REST staged
 * create answers with it) and update_table commits a create transaction
 * (assert-create) from empty_table_metadata;
 * sigv4_sign exposes the request signer for tests and debugging; the REST
 * catalog's tokens (rest_tokens, rest_create_token, rest_revoke_token),
 * idempotency keys (rest_idempotency) and rest_namespace; Iceberg views
 * (create_view, update_view, view_metadata, list_views, drop_view,
 * rename_view).  Every
 * object here is also in skade--1.4.sql, spelled identically
 * (t/013_upgrade.pl compares a fresh 1.4 with 1.0 updated through every
 * script).
 */


/* ------------------------------------------------------- writing metadata */

-- One new metadata file, create-only under skade.write_roots; content checked
-- by skade's own reader; Iceberg's file names only (metadata_write.c)
-- (two new arguments: a new signature, so the old function goes first)
DROP FUNCTION skade.write_table_metadata(text, jsonb);
CREATE FUNCTION skade.write_table_metadata(location text, metadata jsonb,
										   namespace text DEFAULT NULL, catalog text DEFAULT NULL)
	RETURNS text AS 'MODULE_PATHNAME', 'skade_write_table_metadata' LANGUAGE C;

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
		loc := rtrim(loc, '/') OPERATOR(pg_catalog.||) '/' OPERATOR(pg_catalog.||) name;
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
CREATE OR REPLACE FUNCTION skade.create_table(namespace text, name text, schema jsonb,
								   partition_spec jsonb DEFAULT NULL, sort_order jsonb DEFAULT NULL,
								   properties jsonb DEFAULT '{}', location text DEFAULT NULL,
								   format_version integer DEFAULT 2, catalog text DEFAULT NULL)
	RETURNS text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $create$
DECLARE
	meta jsonb := skade.new_table_metadata(namespace, name, schema, partition_spec, sort_order,
										   properties, location, format_version, catalog);
	props jsonb := meta->'properties';
	dir text := coalesce(rtrim(props->>'write.metadata.path', '/'),
						 (meta->>'location') OPERATOR(pg_catalog.||) '/metadata');
	file text := dir OPERATOR(pg_catalog.||) '/00000-' OPERATOR(pg_catalog.||) gen_random_uuid()::text
		OPERATOR(pg_catalog.||) CASE WHEN lower(props->>'write.metadata.compression-codec') OPERATOR(pg_catalog.=) 'gzip'
								THEN '.gz.metadata.json' ELSE '.metadata.json' END;
BEGIN
	PERFORM skade.write_table_metadata(file, meta, namespace, catalog);
	PERFORM skade.create_table_commit(namespace, name, file, catalog);
	RETURN file;
END
$create$;

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
	version := CASE WHEN creating THEN 0
			   ELSE coalesce(substring(base_location FROM '/([0-9]+)-[^/]*$')::bigint, 0) + 1 END;
	dir := coalesce(rtrim(props->>'write.metadata.path', '/'), rtrim(m->>'location', '/') || '/metadata');
	file := dir || '/' || lpad(version::text, greatest(5, length(version::text)), '0') || '-'
		|| gen_random_uuid()::text
		|| CASE WHEN lower(props->>'write.metadata.compression-codec') = 'gzip'
				THEN '.gz.metadata.json' ELSE '.metadata.json' END;
	PERFORM skade.write_table_metadata(file, m, namespace, cat);
	IF creating THEN
		PERFORM skade.create_table_commit(namespace, name, file, cat);
	ELSE
		PERFORM skade.commit_table(namespace, name, base_location, file, cat);
	END IF;
	RETURN file;
END
$update$;

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
	PERFORM skade.delete_at_commit(files);
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
CREATE FUNCTION skade.view_metadata(namespace text, name text, catalog text DEFAULT NULL)
	RETURNS text AS 'MODULE_PATHNAME', 'skade_view_metadata' LANGUAGE C STABLE
	PARALLEL RESTRICTED;
CREATE FUNCTION skade.write_view_metadata(location text, metadata jsonb,
										  namespace text DEFAULT NULL, catalog text DEFAULT NULL)
	RETURNS text AS 'MODULE_PATHNAME', 'skade_write_view_metadata' LANGUAGE C;

-- list_views: the views of a namespace
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
	INSERT INTO public.iceberg_tables (catalog_name, table_namespace, table_name, metadata_location,
									   previous_metadata_location, iceberg_type)
	VALUES (cat, namespace, name, file, NULL, 'VIEW');
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
	UPDATE public.iceberg_tables t SET metadata_location = file, previous_metadata_location = base_location
	 WHERE t.catalog_name = cat AND t.table_namespace = namespace
	   AND t.table_name = name AND t.metadata_location = base_location;
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
	INSERT INTO public.iceberg_tables (catalog_name, table_namespace, table_name, metadata_location,
									   previous_metadata_location, iceberg_type)
	VALUES (cat, namespace, name, metadata_location, NULL, 'VIEW');
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
	DELETE FROM public.iceberg_tables t
	 WHERE t.catalog_name = coalesce(catalog, current_setting('skade.catalog'))
	   AND t.table_namespace = namespace AND t.table_name = name
	   AND t.iceberg_type = 'VIEW';
	IF NOT FOUND THEN
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
	UPDATE public.iceberg_tables t SET table_namespace = new_namespace, table_name = new_name
	 WHERE t.catalog_name = cat AND t.table_namespace = namespace
	   AND t.table_name = name AND t.iceberg_type = 'VIEW';
END
$rv$;

/* ------------------------------------------------------------ REST catalog */

/*
 * rest_tokens: the credentials of skade's REST catalog (rest_routes.c):
 * the SHA-256 of each token, the role its requests run as, and when it
 * expires.  Only the owner reads it; tokens are made and revoked by the
 * functions below (superuser: they are the owner's).
 */
CREATE TABLE skade.rest_tokens (
	token_hash bytea PRIMARY KEY,
	role_name name NOT NULL,
	expires_at timestamptz,
	created_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
	comment text
);
REVOKE ALL ON skade.rest_tokens FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('skade.rest_tokens', '');

/*
 * rest_idempotency: the answers of REST requests that carried an
 * Idempotency-Key, stored in the transaction that made the change (a 5xx or
 * an error is never stored); a replay within the lifetime the config
 * announces (30 minutes) gets the stored answer.  Only the owner reads it.
 */
CREATE TABLE skade.rest_idempotency (
	key text PRIMARY KEY,
	route text NOT NULL,
	status integer NOT NULL,
	body text NOT NULL,
	created_at timestamptz NOT NULL DEFAULT pg_catalog.now()
);
REVOKE ALL ON skade.rest_idempotency FROM PUBLIC;

-- rest_create_token: a new token for role (shown once, stored hashed)
CREATE FUNCTION skade.rest_create_token(role name, valid_for interval DEFAULT '90 days',
										comment text DEFAULT NULL)
	RETURNS text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $token$
DECLARE
	token text := 'skade_' || replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', '');
BEGIN
	IF role IS NULL OR NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles r WHERE r.rolname OPERATOR(pg_catalog.=) role) THEN
		RAISE EXCEPTION 'role "%" does not exist', role USING ERRCODE = 'undefined_object';
	END IF;
	INSERT INTO skade.rest_tokens (token_hash, role_name, expires_at, comment)
	VALUES (sha256(convert_to(token, 'UTF8')), role,
			now() OPERATOR(pg_catalog.+) valid_for, comment);
	RETURN token;
END
$token$;

-- rest_revoke_token: the token no longer works (true if it was known)
CREATE FUNCTION skade.rest_revoke_token(token text) RETURNS boolean
LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $revoke$
	WITH d AS (DELETE FROM skade.rest_tokens t
			   WHERE t.token_hash OPERATOR(pg_catalog.=) sha256(convert_to(token, 'UTF8'))
			   RETURNING 1)
	SELECT count(*) OPERATOR(pg_catalog.>) 0 FROM d
$revoke$;

-- rest_namespace: a REST namespace (an array of levels) as its JDBC name
CREATE FUNCTION skade.rest_namespace(levels jsonb) RETURNS text
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $ns$
BEGIN
	IF levels IS NULL OR jsonb_typeof(levels) OPERATOR(pg_catalog.<>) 'array'
	   OR jsonb_array_length(levels) OPERATOR(pg_catalog.=) 0
	   OR EXISTS (SELECT 1 FROM jsonb_array_elements(levels) e
				  WHERE jsonb_typeof(e) OPERATOR(pg_catalog.<>) 'string'
					 OR e #>> '{}' OPERATOR(pg_catalog.=) ''
					 OR strpos(e #>> '{}', '.') OPERATOR(pg_catalog.>) 0) THEN
		RAISE EXCEPTION 'a namespace is a non-empty array of non-empty names without "."'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	RETURN (SELECT string_agg(e, '.' ORDER BY o) FROM jsonb_array_elements_text(levels) WITH ORDINALITY x(e, o));
END
$ns$;

-- rest_value_map: one statistic of every column as {"keys": [ids], "values": [...]}, or NULL
CREATE FUNCTION skade.rest_value_map(columns jsonb, stat text) RETURNS jsonb
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $rvm$
	SELECT CASE WHEN count(*) > 0 THEN jsonb_build_object(
		'keys', jsonb_agg((c.v->>'id')::integer ORDER BY (c.v->>'id')::integer),
		'values', jsonb_agg(c.v->stat ORDER BY (c.v->>'id')::integer)) END
	FROM jsonb_each(coalesce(columns, '{}')) c(k, v)
	WHERE c.v ? stat AND jsonb_typeof(c.v->stat) <> 'null'
$rvm$;

/*
 * rest_content_file: a file row of files()/plan_files() as the REST
 * protocol's ContentFile (Java's ContentFileParser): partition values in
 * the order of its spec's fields, column statistics as {keys, values} maps
 * by field id, bounds as their JSON values.
 */
CREATE FUNCTION skade.rest_content_file(f skade.content_file, meta jsonb) RETURNS jsonb
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $rcf$
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

/*
 * plan_table_scan: a REST PlanTableScanRequest {snapshot-id, filter, ...}
 * planned at once by plan_files() (answered "completed": pyiceberg 0.12
 * cannot poll): the data files that may match as file-scan-tasks, each with
 * the delete files that apply to it (indexes into delete-files).
 * Incremental scans (start/end-snapshot-id) are not offered (0A000).
 */
CREATE FUNCTION skade.plan_table_scan(namespace text, name text, request jsonb, catalog text DEFAULT NULL)
	RETURNS jsonb
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $pts$
DECLARE
	req jsonb := coalesce(request, '{}');
	meta jsonb;
	snap bigint;
	result jsonb;
BEGIN
	IF namespace IS NULL OR name IS NULL THEN
		RAISE EXCEPTION 'namespace and name must not be NULL' USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF jsonb_typeof(req) <> 'object' THEN
		RAISE EXCEPTION 'a scan planning request is a JSON object' USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF req ? 'start-snapshot-id' OR req ? 'end-snapshot-id' THEN
		RAISE EXCEPTION 'incremental scan planning is not supported' USING ERRCODE = 'feature_not_supported';
	END IF;
	meta := skade.table_metadata(namespace, name, catalog => catalog)::jsonb;
	IF jsonb_typeof(req->'snapshot-id') IS DISTINCT FROM 'null' AND req ? 'snapshot-id' THEN
		IF jsonb_typeof(req->'snapshot-id') <> 'number' OR (req->>'snapshot-id') !~ '^-?[0-9]{1,19}$' THEN
			RAISE EXCEPTION 'snapshot-id must be an integer, not %', req->'snapshot-id' USING ERRCODE = 'invalid_parameter_value';
		END IF;
		snap := (req->>'snapshot-id')::bigint;
	ELSE
		snap := nullif((meta->>'current-snapshot-id')::bigint, -1);
	END IF;
	IF snap IS NULL THEN
		RETURN jsonb_build_object('status', 'completed', 'plan-id', gen_random_uuid()::text,
								  'file-scan-tasks', '[]'::jsonb, 'delete-files', '[]'::jsonb);
	END IF;
	WITH f AS (SELECT row_number() OVER () AS n, p FROM skade.plan_files(namespace, name,
				   coalesce(req->'filter', 'true'::jsonb), snap, catalog) p),
		 d AS (SELECT row_number() OVER (ORDER BY n) - 1 AS idx, p FROM f WHERE (p).content <> 'data')
	SELECT jsonb_build_object('status', 'completed', 'plan-id', gen_random_uuid()::text,
		'file-scan-tasks', coalesce((SELECT jsonb_agg(jsonb_strip_nulls(jsonb_build_object(
				'data-file', skade.rest_content_file(f.p, meta),
				'delete-file-references', (SELECT jsonb_agg(d.idx ORDER BY d.idx) FROM d
										   WHERE (d.p).file_path = ANY ((f.p).delete_files)))) ORDER BY f.n)
			FROM f WHERE (f.p).content = 'data'), '[]'::jsonb),
		'delete-files', coalesce((SELECT jsonb_agg(skade.rest_content_file(d.p, meta) ORDER BY d.idx) FROM d), '[]'::jsonb))
	INTO result;
	RETURN result;
END
$pts$;

/* ------------------------------------------------------------ AWS SigV4 */

-- The AWS Signature Version 4 signer of skade's S3 client, for tests and
-- debugging: signs exactly the request given (headers as 'name:value'
-- elements; query NULL = none) and reads no server secret
CREATE FUNCTION skade.sigv4_sign(method text, canonical_uri text, query text, headers text[],
								 payload_hash text, region text, service text, amz_date text,
								 access_key text, secret_key text,
								 OUT canonical_request text, OUT string_to_sign text,
								 OUT authorization text)
	RETURNS record AS 'MODULE_PATHNAME', 'skade_sigv4_sign' LANGUAGE C IMMUTABLE
	PARALLEL SAFE;

/* ------------------------------------------------------------------ privileges */

-- PUBLIC gets nothing (as skade--1.4.sql's loop over every function)
REVOKE ALL ON FUNCTION
	skade.write_table_metadata(text, jsonb, text, text),
	skade.sigv4_sign(text, text, text, text[], text, text, text, text, text, text),
	skade.rest_create_token(name, interval, text),
	skade.rest_revoke_token(text),
	skade.rest_namespace(jsonb),
	skade.rest_content_file(skade.content_file, jsonb),
	skade.rest_value_map(jsonb, text),
	skade.plan_table_scan(text, text, jsonb, text),
	skade.new_table_metadata(text, text, jsonb, jsonb, jsonb, jsonb, text, integer, text),
	skade.empty_table_metadata(text, text, jsonb, text),
	skade.purge_table(text, text, text),
	skade.view_metadata(text, text, text),
	skade.write_view_metadata(text, jsonb, text, text),
	skade.list_views(text, text),
	skade.view_exists(text, text, text),
	skade.apply_view_updates(jsonb, jsonb),
	skade.create_view(text, text, jsonb, text),
	skade.update_view(text, text, jsonb, jsonb, text),
	skade.drop_view(text, text, text),
	skade.rename_view(text, text, text, text, text),
	skade.register_view(text, text, text, text)
FROM PUBLIC;
GRANT EXECUTE ON FUNCTION
	skade.sigv4_sign(text, text, text, text[], text, text, text, text, text, text),
	skade.rest_namespace(jsonb),
	skade.rest_content_file(skade.content_file, jsonb),
	skade.rest_value_map(jsonb, text),
	skade.plan_table_scan(text, text, jsonb, text),
	skade.view_metadata(text, text, text),
	skade.list_views(text, text),
	skade.view_exists(text, text, text)
TO skade_reader;
GRANT EXECUTE ON FUNCTION
	skade.write_table_metadata(text, jsonb, text, text),
	skade.new_table_metadata(text, text, jsonb, jsonb, jsonb, jsonb, text, integer, text),
	skade.empty_table_metadata(text, text, jsonb, text),
	skade.purge_table(text, text, text),
	skade.write_view_metadata(text, jsonb, text, text),
	skade.apply_view_updates(jsonb, jsonb),
	skade.create_view(text, text, jsonb, text),
	skade.update_view(text, text, jsonb, jsonb, text),
	skade.drop_view(text, text, text),
	skade.rename_view(text, text, text, text, text),
	skade.register_view(text, text, text, text),
	-- (update_table's engine runs them as the caller: 1.3 left writers
	-- without them, so a writer's schema, spec or order change failed)
	skade.json_int(jsonb, text),
	skade.source_type(jsonb, integer),
	skade.bind_error(jsonb, jsonb, boolean)
TO skade_writer;
