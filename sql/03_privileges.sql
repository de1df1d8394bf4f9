DO $skade_user$
BEGIN
	IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'skade_user') THEN
		CREATE ROLE skade_user NOLOGIN;
	END IF;
END
$skade_user$;
GRANT USAGE ON SCHEMA skade TO skade_user;

-- one row per grant: a catalog (namespace NULL), a namespace and the
-- namespaces below it (name NULL), or one table or view; write implies read
CREATE TABLE skade.grants (
	grantee			regrole NOT NULL,
	access			text NOT NULL CHECK (access IN ('read', 'write')),
	catalog_name	text NOT NULL,
	namespace		text,
	name			text,
	granted_by		name NOT NULL,
	granted_at		timestamptz NOT NULL,
	CHECK (name IS NULL OR namespace IS NOT NULL),
	UNIQUE NULLS NOT DISTINCT (grantee, catalog_name, namespace, name)
);
COMMENT ON TABLE skade.grants IS
	'who may read or write which catalog, namespace, table or view (members of skade_user)';
REVOKE ALL ON skade.grants FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('skade.grants', '');

CREATE FUNCTION skade.grants_changed() RETURNS trigger
	AS 'MODULE_PATHNAME', 'skade_grants_changed' LANGUAGE C;
CREATE TRIGGER grants_changed
	AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON skade.grants
	FOR EACH STATEMENT EXECUTE FUNCTION skade.grants_changed();

-- may the current user read or write the object? (namespace NULL: the catalog;
-- name NULL: the namespace)
CREATE FUNCTION skade.may(access text, namespace text, name text DEFAULT NULL,
						  catalog text DEFAULT NULL) RETURNS boolean
	AS 'MODULE_PATHNAME', 'skade_may' LANGUAGE C STABLE PARALLEL RESTRICTED COST 100;
CREATE FUNCTION skade.may_see_namespace(namespace text, catalog text DEFAULT NULL)
	RETURNS boolean
	AS 'MODULE_PATHNAME', 'skade_may_see_namespace' LANGUAGE C STABLE PARALLEL RESTRICTED COST 100;
-- the write policies' test: true (may write), false (cannot see it), else 42501 (a clear
-- refusal of a change to something the role can see)
CREATE FUNCTION skade.check_write(namespace text, name text, catalog text) RETURNS boolean
	AS 'MODULE_PATHNAME', 'skade_check_write' LANGUAGE C STABLE PARALLEL RESTRICTED COST 1000;
CREATE FUNCTION skade.grant(access text, role name, namespace text, name text DEFAULT NULL,
							catalog text DEFAULT NULL) RETURNS boolean
	AS 'MODULE_PATHNAME', 'skade_grant' LANGUAGE C;
CREATE FUNCTION skade.revoke(access text, role name, namespace text, name text DEFAULT NULL,
							 catalog text DEFAULT NULL) RETURNS boolean
	AS 'MODULE_PATHNAME', 'skade_revoke' LANGUAGE C;

/*
 * attach_policies: the row-level security of the JDBC catalog tables.
 * Members of skade_user see and change the rows skade.may() allows them;
 * everyone else (skade_reader, skade_writer, roles with their own table
 * privileges) every row, as before.  The unrestricted policy does not
 * depend on the extension: after DROP EXTENSION ... CASCADE the clients
 * keep working, and members of skade_user see nothing.  Idempotent.
 */
