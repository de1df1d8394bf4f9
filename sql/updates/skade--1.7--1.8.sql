/* skade--1.7--1.8.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION skade UPDATE TO '1.8'" to load this file. \quit

/*
 * 1.8: a REST token is bound to its role's OID (a role dropped and created
 * again under its name got the old tokens back), has an id, and is revoked
 * by that id (rest_revoke_token(text) took the secret itself, which
 * log_statement wrote to the server log).  The tokens of 1.7 keep working
 * for the roles they were made for; a token whose role is gone is dropped.
 */
ALTER TABLE skade.rest_tokens RENAME TO rest_tokens_1_7;
ALTER INDEX skade.rest_tokens_pkey RENAME TO rest_tokens_1_7_pkey;
-- 18 names NOT NULL constraints (rest_tokens_token_hash_not_null, ...): out of the way of the
-- new table's (15 to 17 have none of that kind)
DO $nn$
DECLARE
	c record;
BEGIN
	FOR c IN SELECT k.conname FROM pg_catalog.pg_constraint k
			  WHERE k.conrelid OPERATOR(pg_catalog.=) 'skade.rest_tokens_1_7'::pg_catalog.regclass
				AND k.contype OPERATOR(pg_catalog.=) 'n' LOOP
		EXECUTE pg_catalog.format('ALTER TABLE skade.rest_tokens_1_7 RENAME CONSTRAINT %I TO %I',
								  c.conname, c.conname || '_1_7');
	END LOOP;
END
$nn$;
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
INSERT INTO skade.rest_tokens (token_hash, role_oid, role_name, expires_at, created_at, comment)
SELECT o.token_hash, r.oid, o.role_name, o.expires_at, o.created_at, o.comment
  FROM skade.rest_tokens_1_7 o
  JOIN pg_catalog.pg_roles r ON r.rolname OPERATOR(pg_catalog.=) o.role_name
 ORDER BY o.created_at;
-- out of the extension first: that also takes it out of pg_extension.extconfig (a plain
-- DROP TABLE leaves its OID there, and every pg_dump would look for it)
ALTER EXTENSION skade DROP TABLE skade.rest_tokens_1_7;
DROP TABLE skade.rest_tokens_1_7;

DROP FUNCTION skade.rest_create_token(name, interval, text);
DROP FUNCTION skade.rest_revoke_token(text);
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
REVOKE ALL ON FUNCTION skade.rest_create_token(name, interval, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION skade.rest_revoke_token(bigint) FROM PUBLIC;
REVOKE ALL ON FUNCTION skade.rest_list_tokens() FROM PUBLIC;

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

REVOKE ALL ON FUNCTION skade.rest_map_oidc_role(text, text, text, name) FROM PUBLIC;
REVOKE ALL ON FUNCTION skade.rest_unmap_oidc_role(text, text, text) FROM PUBLIC;
