/* skade--1.3--1.4.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION skade UPDATE TO '1.4'" to load this file. \quit

/*
 * 1.4: tables on object storage (s3://): write_table_metadata takes the
 * table's namespace (whose s3.* properties apply), create_table passes it;
 * sigv4_sign exposes the request signer for tests and debugging; the REST
 * catalog's tokens (rest_tokens, rest_create_token, rest_revoke_token) and
 * rest_namespace.  Every
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
 * create_table: a new Iceberg table, as a REST catalog's CreateTableRequest
 * makes it (Java's TableMetadata.newTableMetadata): fresh column ids from 1,
 * partition field ids from 1000, sort order 1 (0 when unsorted), schema,
 * spec and order ids 0; "format-version" among the properties sets the
 * format; reserved properties are not kept and Parquet defaults to zstd, as
 * Java persists them.  The location is the argument, else the
 * namespace's location (its property, else skade.warehouse/<levels>)
 * followed by /<name>.  Writes <location>/metadata/00000-<uuid>.metadata.json
 * (.gz.metadata.json with write.metadata.compression-codec = gzip; the
 * directory from write.metadata.path) under skade.write_roots, then adds the
 * pointer through the same INSERT the JDBC clients run (logged "create").
 * Returns the metadata location.
 */
CREATE OR REPLACE FUNCTION skade.create_table(namespace text, name text, schema jsonb,
								   partition_spec jsonb DEFAULT NULL, sort_order jsonb DEFAULT NULL,
								   properties jsonb DEFAULT '{}', location text DEFAULT NULL,
								   format_version integer DEFAULT 2, catalog text DEFAULT NULL)
	RETURNS text
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
	dir text;
	file text;
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
	IF EXISTS (SELECT 1 FROM public.iceberg_tables t
			   WHERE t.catalog_name OPERATOR(pg_catalog.=) coalesce(catalog, current_setting('skade.catalog'))
				 AND t.table_namespace OPERATOR(pg_catalog.=) namespace
				 AND t.table_name OPERATOR(pg_catalog.=) name) THEN
		RAISE EXCEPTION 'table or view "%.%" already exists', namespace, name USING ERRCODE = 'unique_violation';
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
	dir := coalesce(rtrim(props->>'write.metadata.path', '/'), loc OPERATOR(pg_catalog.||) '/metadata');
	file := dir OPERATOR(pg_catalog.||) '/00000-' OPERATOR(pg_catalog.||) gen_random_uuid()::text
		OPERATOR(pg_catalog.||) CASE WHEN lower(props->>'write.metadata.compression-codec') OPERATOR(pg_catalog.=) 'gzip'
								THEN '.gz.metadata.json' ELSE '.metadata.json' END;

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

	PERFORM skade.write_table_metadata(file, meta, namespace, catalog);
	PERFORM skade.create_table_commit(namespace, name, file, catalog);
	RETURN file;
END
$create$;

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

/* ------------------------------------------------------------------ privileges */

-- PUBLIC gets nothing (as skade--1.4.sql's loop over every function)
REVOKE ALL ON FUNCTION
	skade.write_table_metadata(text, jsonb, text, text),
	skade.sigv4_sign(text, text, text, text[], text, text, text, text, text, text),
	skade.rest_create_token(name, interval, text),
	skade.rest_revoke_token(text),
	skade.rest_namespace(jsonb)
FROM PUBLIC;
GRANT EXECUTE ON FUNCTION
	skade.sigv4_sign(text, text, text, text[], text, text, text, text, text, text),
	skade.rest_namespace(jsonb)
TO skade_reader;
GRANT EXECUTE ON FUNCTION
	skade.write_table_metadata(text, jsonb, text, text),
	-- (update_table's engine runs them as the caller: 1.3 left writers
	-- without them, so a writer's schema, spec or order change failed)
	skade.json_int(jsonb, text),
	skade.source_type(jsonb, integer),
	skade.bind_error(jsonb, jsonb, boolean)
TO skade_writer;
