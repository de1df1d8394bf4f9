CREATE TABLE skade.commit_log (
	seq				bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	op				text NOT NULL,	-- create register commit rename drop adopt
	source			text NOT NULL,	-- api | sql
	catalog_name	text NOT NULL,
	table_namespace	text NOT NULL,
	table_name		text NOT NULL,
	iceberg_type	text,
	metadata_location text,
	previous_metadata_location text,
	prev_namespace	text,
	prev_name		text,
	committed_at	timestamptz NOT NULL DEFAULT clock_timestamp(),
	committed_by	name NOT NULL DEFAULT current_user,
	xact_id			xid8 NOT NULL DEFAULT pg_current_xact_id(),
	snapshot_id		bigint,
	detail			jsonb		-- grant, revoke: {"access", "grantee", "on"}
);
COMMENT ON TABLE skade.commit_log IS
	'append-only log of every iceberg_tables pointer change (SQL API and JDBC DML)';
CREATE INDEX commit_log_table_idx
	ON skade.commit_log (catalog_name, table_namespace, table_name, seq);
SELECT pg_catalog.pg_extension_config_dump('skade.commit_log', '');
SELECT pg_catalog.pg_extension_config_dump('skade.commit_log_seq_seq', '');
GRANT SELECT ON skade.commit_log TO skade_reader;

/*
 * Snapshot resolution, from heap tables alone: for each table, each snapshot
 * id with the metadata that first made it current (made_current) and the
 * first metadata that contained it.  Written by the commit-log trigger when
 * the new metadata is readable (else later, by skade.resolve_commit_log());
 * rows follow renames and vanish with their table.  A snapshot resolves to
 * its made_current row if any, else its first row.  The STree64 index is
 * built from this table.
 */
CREATE TABLE skade.snapshot_map (
	catalog_name	text NOT NULL,
	table_namespace	text NOT NULL,
	table_name		text NOT NULL,
	snapshot_id		bigint NOT NULL,
	made_current	boolean NOT NULL,
	seq				bigint NOT NULL,	-- the commit_log row of that metadata
	metadata_location text NOT NULL,
	committed_at	timestamptz NOT NULL,
	PRIMARY KEY (catalog_name, table_namespace, table_name, snapshot_id, made_current)
);
CREATE INDEX snapshot_map_id_idx ON skade.snapshot_map (snapshot_id, made_current DESC, seq);
SELECT pg_catalog.pg_extension_config_dump('skade.snapshot_map', '');
GRANT SELECT ON skade.snapshot_map TO skade_reader;

/* ---------------------------------------------------------------- internals */

-- These run the log INSERT as the owner of skade.commit_log (see commit_log.c).
CREATE FUNCTION skade.log_pointer_change() RETURNS trigger
	AS 'MODULE_PATHNAME', 'skade_log_pointer_change'
	LANGUAGE C;
CREATE FUNCTION skade.log_truncate() RETURNS trigger
	AS 'MODULE_PATHNAME', 'skade_log_truncate'
	LANGUAGE C;
CREATE FUNCTION skade.commit_log_append_only() RETURNS trigger
	AS 'MODULE_PATHNAME', 'skade_commit_log_append_only'
	LANGUAGE C;

CREATE TRIGGER commit_log_append_only
	BEFORE UPDATE OR DELETE ON skade.commit_log
	FOR EACH ROW EXECUTE FUNCTION skade.commit_log_append_only();
CREATE TRIGGER commit_log_no_truncate
	BEFORE TRUNCATE ON skade.commit_log
	FOR EACH STATEMENT EXECUTE FUNCTION skade.commit_log_append_only();

/* ------------------------------------------------------------ privileges per object */

/*
 * Privileges per catalog, namespace and table or view (privileges.c).  A
 * member of skade_user may read or write what skade.grants gives one of its
 * roles, and nothing else; skade_reader and skade_writer stay database-wide,
 * and a role in neither skade_user nor those keeps what its own privileges
 * on the catalog tables give.  Row-level security on the catalog tables
 * applies the same rule to the SQL API, to the JDBC clients' own statements
 * and to REST.
 */
