CREATE SEQUENCE skade.rest_token_id_seq;
CREATE TABLE skade.rest_tokens (
	token_id bigint NOT NULL DEFAULT pg_catalog.nextval('skade.rest_token_id_seq'),
	token_hash bytea NOT NULL,
	role_oid oid NOT NULL,
	role_name name NOT NULL,
	expires_at timestamptz,
	created_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
	comment text,
	CONSTRAINT rest_tokens_pkey PRIMARY KEY (token_id),
	CONSTRAINT rest_tokens_token_hash_key UNIQUE (token_hash)
);
ALTER SEQUENCE skade.rest_token_id_seq OWNED BY skade.rest_tokens.token_id;
REVOKE ALL ON skade.rest_tokens FROM PUBLIC;
REVOKE ALL ON SEQUENCE skade.rest_token_id_seq FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('skade.rest_tokens', '');
SELECT pg_catalog.pg_extension_config_dump('skade.rest_token_id_seq', '');

/*
 * rest_oidc_roles: which role a bearer JWT of an OpenID issuer runs as
 * (rest_oidc.c): a row maps the tokens of issuer whose claim -- a dotted
 * path into the token's claims, e.g. sub, groups, realm_access.roles --
 * equals value, or is an array holding it, to a role (bound by OID, as
 * tokens are).  A "sub" row beats the others; the rows that decide must
 * name one role.  Without a row, skade.rest_oidc_role_claim names the
 * role.  Only the owner reads it; rows are made by the functions below.
 */
CREATE TABLE skade.rest_oidc_roles (
	issuer text NOT NULL,
	claim text NOT NULL,
	value text NOT NULL,
	role_oid oid NOT NULL,
	role_name name NOT NULL,
	created_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
	CONSTRAINT rest_oidc_roles_pkey PRIMARY KEY (issuer, claim, value)
);
REVOKE ALL ON skade.rest_oidc_roles FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('skade.rest_oidc_roles', '');

/*
 * rest_idempotency: the answers of REST requests that carried an
 * Idempotency-Key, stored in the transaction that made the change (a 5xx or
 * an error is never stored); a replay within the lifetime the config
 * announces (30 minutes) gets the stored answer when it is the same request
 * (method, route and SHA-256 of the body) and its role may still make it,
 * another request with the key 422.  A key is the role's own (role_oid).
 * Expired answers are swept by time (created_at).  Only the owner reads it.
 */
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

-- rest_create_token: a new token for role, skade_<id>_<secret> (shown once, stored hashed)
CREATE FUNCTION skade.rest_create_token(role name, valid_for interval DEFAULT '90 days',
										comment text DEFAULT NULL)
	RETURNS text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $token$
DECLARE
	r record;
	id bigint;
	token text;
BEGIN
	SELECT a.oid, a.rolcanlogin, a.rolsuper INTO r FROM pg_catalog.pg_roles a
	 WHERE a.rolname OPERATOR(pg_catalog.=) role;
	IF role IS NULL OR NOT FOUND THEN
		RAISE EXCEPTION 'role "%" does not exist', role USING ERRCODE = 'undefined_object';
	END IF;
	IF NOT r.rolcanlogin THEN
		RAISE EXCEPTION 'role "%" cannot log in', role USING ERRCODE = 'object_not_in_prerequisite_state',
			HINT = 'A REST token works only for a role with LOGIN: ALTER ROLE ... LOGIN.';
	END IF;
	IF r.rolsuper AND NOT pg_catalog.current_setting('skade.rest_allow_superuser')::boolean THEN
		RAISE EXCEPTION 'role "%" is a superuser', role USING ERRCODE = 'object_not_in_prerequisite_state',
			HINT = 'REST requests do not run as a superuser unless skade.rest_allow_superuser is on.';
	END IF;
	id := pg_catalog.nextval('skade.rest_token_id_seq');
	token := 'skade_' || id || '_' || replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', '');
	INSERT INTO skade.rest_tokens (token_id, token_hash, role_oid, role_name, expires_at, comment)
	VALUES (id, sha256(convert_to(token, 'UTF8')), r.oid, role,
			now() OPERATOR(pg_catalog.+) valid_for, comment);
	RETURN token;
END
$token$;

-- rest_revoke_token: the token with this id no longer works (true if it was known)
CREATE FUNCTION skade.rest_revoke_token(token_id bigint) RETURNS boolean
LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $revoke$
	WITH d AS (DELETE FROM skade.rest_tokens t
			   WHERE t.token_id OPERATOR(pg_catalog.=) rest_revoke_token.token_id
			   RETURNING 1)
	SELECT count(*) OPERATOR(pg_catalog.>) 0 FROM d
$revoke$;

-- rest_list_tokens: every token (never its secret), whether it works now and why not
CREATE FUNCTION skade.rest_list_tokens()
	RETURNS TABLE (token_id bigint, role name, usable boolean, refused_because text,
				   expires_at timestamptz, created_at timestamptz, comment text)
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $list$
	SELECT t.token_id, t.role_name, w.why IS NULL, w.why, t.expires_at, t.created_at, t.comment
	  FROM skade.rest_tokens t
	  LEFT JOIN pg_catalog.pg_authid a ON a.oid OPERATOR(pg_catalog.=) t.role_oid
	  CROSS JOIN LATERAL (SELECT CASE
			WHEN t.expires_at OPERATOR(pg_catalog.<=) now() THEN 'the token has expired'
			WHEN a.oid IS NULL THEN 'its role no longer exists'
			WHEN a.rolsuper AND NOT current_setting('skade.rest_allow_superuser')::boolean
				THEN 'its role is a superuser'
			WHEN NOT a.rolcanlogin THEN 'its role cannot log in'
			WHEN a.rolvaliduntil OPERATOR(pg_catalog.<) now() THEN 'its role has expired (VALID UNTIL)'
		END AS why) w
	 ORDER BY t.token_id
$list$;

-- rest_map_oidc_role: tokens of issuer whose claim holds value run as role
CREATE FUNCTION skade.rest_map_oidc_role(issuer text, claim text, value text, role name)
	RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $map$
DECLARE
	r oid;
BEGIN
	IF issuer IS NULL OR claim IS NULL OR value IS NULL OR claim OPERATOR(pg_catalog.=) '' THEN
		RAISE EXCEPTION 'issuer, claim and value must be given' USING ERRCODE = 'null_value_not_allowed';
	END IF;
	SELECT a.oid INTO r FROM pg_catalog.pg_roles a WHERE a.rolname OPERATOR(pg_catalog.=) role;
	IF role IS NULL OR r IS NULL THEN
		RAISE EXCEPTION 'role "%" does not exist', role USING ERRCODE = 'undefined_object';
	END IF;
	INSERT INTO skade.rest_oidc_roles AS m (issuer, claim, value, role_oid, role_name)
	VALUES (issuer, claim, value, r, role)
	ON CONFLICT ON CONSTRAINT rest_oidc_roles_pkey
	DO UPDATE SET role_oid = excluded.role_oid, role_name = excluded.role_name, created_at = now();
END
$map$;

-- rest_unmap_oidc_role: the mapping is gone (true if there was one)
CREATE FUNCTION skade.rest_unmap_oidc_role(issuer text, claim text, value text) RETURNS boolean
LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $unmap$
	WITH d AS (DELETE FROM skade.rest_oidc_roles m
			   WHERE m.issuer OPERATOR(pg_catalog.=) rest_unmap_oidc_role.issuer
				 AND m.claim OPERATOR(pg_catalog.=) rest_unmap_oidc_role.claim
				 AND m.value OPERATOR(pg_catalog.=) rest_unmap_oidc_role.value
			   RETURNING 1)
	SELECT count(*) OPERATOR(pg_catalog.>) 0 FROM d
$unmap$;

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
-- (C, rest_json.c: called six times per planned file, where a SQL body was
-- parsed and planned again on each call)
CREATE FUNCTION skade.rest_value_map(columns jsonb, stat text) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'skade_rest_value_map' LANGUAGE C IMMUTABLE PARALLEL SAFE;

/*
 * rest_content_file: a file row of files()/plan_files() as the REST
 * protocol's ContentFile (Java's ContentFileParser): partition values in
 * the order of its spec's fields, column statistics as {keys, values} maps
 * by field id, bounds as their JSON values.  No SET search_path of its own:
 * plan_table_scan, which pins it, calls it once per planned file, and the
 * SET on each call cost more than the work; a direct caller runs it with
 * his own.
 */
CREATE FUNCTION skade.rest_content_file(f skade.content_file, meta jsonb) RETURNS jsonb
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

