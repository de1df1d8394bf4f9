-- Every string skade reads from a file is UTF-8 (Iceberg's encoding) and
-- becomes text as it is: the database must be UTF8 too.
DO $encoding$
BEGIN
	IF pg_catalog.getdatabaseencoding() OPERATOR(pg_catalog.<>) 'UTF8' THEN
		RAISE EXCEPTION 'skade needs a UTF8 database, not %', pg_catalog.getdatabaseencoding()
			USING ERRCODE = 'feature_not_supported',
				  DETAIL = 'Iceberg metadata and manifests hold UTF-8 text, which skade returns as text, json and jsonb.',
				  HINT = 'Create the database with ENCODING ''UTF8'' (from template0).';
	END IF;
END
$encoding$;

-- schema skade: made by CREATE EXTENSION itself (skade.control names it),
-- so it is not a member and pg_dump dumps it before CREATE EXTENSION

-- Roles: created once per cluster, kept across DROP EXTENSION.
DO $roles$
BEGIN
	IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'skade_reader') THEN
		CREATE ROLE skade_reader NOLOGIN;
	END IF;
	IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'skade_writer') THEN
		CREATE ROLE skade_writer NOLOGIN;
	END IF;
	IF NOT pg_has_role('skade_writer', 'skade_reader', 'MEMBER') THEN
		GRANT skade_reader TO skade_writer;
	END IF;
END
$roles$;

GRANT USAGE ON SCHEMA skade TO skade_reader;

/*
 * The commit log: append-only, one row per pointer change, written by the
 * C trigger on iceberg_tables in the same transaction as the change, from
 * the SQL API and from plain DML alike.
 */
