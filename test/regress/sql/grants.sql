-- Privileges per catalog, namespace and table or view (skade.grant,
-- skade_user): every action on every path, for each kind of grant.  Each
-- cell runs as the role in a subtransaction that is rolled back, so every
-- cell starts from the same catalog.  'ok' (or 'ok: result') or the SQLSTATE.
-- (a catalog of its own: what the other tests leave in skade's does not show)
SET skade.catalog = 'gcat';
SELECT skade.create_namespace('g');
SELECT skade.create_namespace('g.sub');
SELECT skade.create_namespace('h');
SELECT skade.register_table('g', 't1', 'file:///p/g1') > 0;
SELECT skade.register_table('g', 't2', 'file:///p/g2') > 0;
SELECT skade.register_table('g.sub', 't3', 'file:///p/g3') > 0;
SELECT skade.register_table('h', 't4', 'file:///p/h4') > 0;
INSERT INTO iceberg_tables VALUES ('gcat', 'g', 'v1', 'file:///p/gv1', NULL, 'VIEW');

CREATE ROLE g_ns_reader LOGIN IN ROLE skade_user;
CREATE ROLE g_ns_writer LOGIN IN ROLE skade_user;
CREATE ROLE g_tbl_writer LOGIN IN ROLE skade_user;
CREATE ROLE g_cat_reader LOGIN IN ROLE skade_user;
CREATE ROLE g_nobody LOGIN IN ROLE skade_user;
CREATE ROLE g_group NOLOGIN;
CREATE ROLE g_member LOGIN IN ROLE skade_user, g_group;
CREATE ROLE g_db_reader LOGIN IN ROLE skade_reader;
CREATE ROLE g_mixed LOGIN IN ROLE skade_user, skade_reader;

SELECT skade.grant('read', 'g_ns_reader', 'g');
SELECT skade.grant('write', 'g_ns_writer', 'g');
SELECT skade.grant('write', 'g_tbl_writer', 'g', 't1');
SELECT skade.grant('read', 'g_cat_reader', NULL);
SELECT skade.grant('write', 'g_group', 'h');
SELECT skade.grant('write', 'g_mixed', 'g.sub', 't3');
-- a grant to a role outside skade_user is kept, and said to change nothing yet
SELECT skade.grant('read', 'g_db_reader', 'h');
-- read beside write changes nothing; write replaces read
SELECT skade.grant('read', 'g_ns_writer', 'g');
SELECT skade.grant('write', 'g_db_reader', 'h');
SELECT grantee, access, catalog_name, namespace, name FROM skade.grants ORDER BY grantee::text, 3, 4, 5;

CREATE FUNCTION pg_temp.try_as(r text, stmt text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	res text;
	val text;
BEGIN
	BEGIN
		EXECUTE format('SET LOCAL ROLE %I', r);
		EXECUTE stmt INTO val;
		res := 'ok' || coalesce(': ' || val, '');
		RAISE EXCEPTION USING ERRCODE = 'P0099';	-- undo the change
	EXCEPTION
		WHEN SQLSTATE 'P0099' THEN NULL;
		WHEN OTHERS THEN res := SQLSTATE;
	END;
	RETURN res;
END
$$;

\pset format aligned
SELECT a.action,
	   pg_temp.try_as('g_ns_reader', a.stmt) AS ns_reader,
	   pg_temp.try_as('g_ns_writer', a.stmt) AS ns_writer,
	   pg_temp.try_as('g_tbl_writer', a.stmt) AS tbl_writer,
	   pg_temp.try_as('g_cat_reader', a.stmt) AS cat_reader,
	   pg_temp.try_as('g_member', a.stmt) AS group_h,
	   pg_temp.try_as('g_nobody', a.stmt) AS nobody,
	   pg_temp.try_as('g_db_reader', a.stmt) AS db_reader
FROM (VALUES
	(1, 'list top', $q$SELECT string_agg(n, ',' ORDER BY n) FROM skade.list_namespaces() n$q$),
	(2, 'list g', $q$SELECT string_agg(n, ',' ORDER BY n) FROM skade.list_namespaces('g') n$q$),
	(3, 'tables g', $q$SELECT string_agg(n, ',' ORDER BY n) FROM skade.list_tables('g') n$q$),
	(4, 'tables h', $q$SELECT string_agg(n, ',' ORDER BY n) FROM skade.list_tables('h') n$q$),
	(5, 'views g', $q$SELECT string_agg(n, ',' ORDER BY n) FROM skade.list_views('g') n$q$),
	(6, 'exists h', $q$SELECT skade.namespace_exists('h')$q$),
	(7, 'props g', $q$SELECT skade.namespace_properties('g')$q$),
	(8, 'load g.t1', $q$SELECT metadata_location FROM skade.load_table('g', 't1', snapshots => 'none')$q$),
	(9, 'load g.t2', $q$SELECT metadata_location FROM skade.load_table('g', 't2', snapshots => 'none')$q$),
	(10, 'load g.sub.t3', $q$SELECT metadata_location FROM skade.load_table('g.sub', 't3', snapshots => 'none')$q$),
	(11, 'load h.t4', $q$SELECT metadata_location FROM skade.load_table('h', 't4', snapshots => 'none')$q$),
	(12, 'load g.none', $q$SELECT metadata_location FROM skade.load_table('g', 'none', snapshots => 'none')$q$),
	(13, 'view g.v1', $q$SELECT skade.view_exists('g', 'v1')$q$),
	(14, 'commit g.t1', $q$SELECT skade.commit_table('g', 't1', 'file:///p/g1', 'file:///p/g1b') > 0$q$),
	(15, 'commit g.t2', $q$SELECT skade.commit_table('g', 't2', 'file:///p/g2', 'file:///p/g2b') > 0$q$),
	(16, 'commit h.t4', $q$SELECT skade.commit_table('h', 't4', 'file:///p/h4', 'file:///p/h4b') > 0$q$),
	(17, 'commit h.none', $q$SELECT skade.commit_table('h', 'none', 'file:///p/h4', 'file:///p/h4b') > 0$q$),
	(18, 'register g.n', $q$SELECT skade.register_table('g', 'n', 'file:///p/gn') > 0$q$),
	(19, 'register h.n', $q$SELECT skade.register_table('h', 'n', 'file:///p/hn') > 0$q$),
	(20, 'rename g.t1', $q$SELECT skade.rename_table('g', 't1', 'g', 't1r') > 0$q$),
	(21, 'rename g.t1>h', $q$SELECT skade.rename_table('g', 't1', 'h', 't1') > 0$q$),
	(22, 'drop g.t1', $q$SELECT skade.drop_table('g', 't1')$q$),
	(23, 'drop h.t4', $q$SELECT skade.drop_table('h', 't4')$q$),
	(24, 'drop view g.v1', $q$SELECT skade.drop_view('g', 'v1')$q$),
	(25, 'create ns g.x', $q$SELECT skade.create_namespace('g.x')$q$),
	(26, 'create ns q', $q$SELECT skade.create_namespace('q')$q$),
	(27, 'props set g', $q$SELECT skade.update_namespace_properties('g', '{"k": "v"}')::text$q$),
	(28, 'drop ns g.sub', $q$SELECT skade.drop_namespace('g.sub')$q$),
	(29, 'jdbc select', $q$SELECT string_agg(table_namespace || '.' || table_name, ',' ORDER BY 1) FROM iceberg_tables WHERE catalog_name = 'gcat'$q$),
	(30, 'jdbc ns rows', $q$SELECT string_agg(DISTINCT namespace, ',') FROM iceberg_namespace_properties WHERE catalog_name = 'gcat'$q$),
	(31, 'jdbc commit g.t1', $q$WITH u AS (UPDATE iceberg_tables SET metadata_location = 'file:///p/x', previous_metadata_location = metadata_location WHERE catalog_name = 'gcat' AND table_namespace = 'g' AND table_name = 't1' AND metadata_location = 'file:///p/g1' RETURNING 1) SELECT count(*) FROM u$q$),
	(32, 'jdbc commit h.t4', $q$WITH u AS (UPDATE iceberg_tables SET metadata_location = 'file:///p/x', previous_metadata_location = metadata_location WHERE catalog_name = 'gcat' AND table_namespace = 'h' AND table_name = 't4' AND metadata_location = 'file:///p/h4' RETURNING 1) SELECT count(*) FROM u$q$),
	(33, 'jdbc create g.j', $q$INSERT INTO iceberg_tables VALUES ('gcat', 'g', 'j', 'file:///p/j', NULL, 'TABLE') RETURNING table_name$q$),
	(34, 'jdbc create h.j', $q$INSERT INTO iceberg_tables VALUES ('gcat', 'h', 'j', 'file:///p/j', NULL, 'TABLE') RETURNING table_name$q$),
	(35, 'jdbc drop g.t2', $q$WITH d AS (DELETE FROM iceberg_tables WHERE catalog_name = 'gcat' AND table_namespace = 'g' AND table_name = 't2' RETURNING 1) SELECT count(*) FROM d$q$),
	(36, 'jdbc drop h.t4', $q$WITH d AS (DELETE FROM iceberg_tables WHERE catalog_name = 'gcat' AND table_namespace = 'h' AND table_name = 't4' RETURNING 1) SELECT count(*) FROM d$q$),
	(37, 'jdbc ns create g.y', $q$INSERT INTO iceberg_namespace_properties VALUES ('gcat', 'g.y', 'exists', 'true') RETURNING namespace$q$),
	(38, 'log rows', $q$SELECT string_agg(DISTINCT table_namespace || '.' || table_name, ',') FROM skade.commit_log WHERE catalog_name = 'gcat'$q$),
	(39, 'log grants', $q$SELECT count(*) FROM skade.commit_log WHERE catalog_name = 'gcat' AND op IN ('grant', 'revoke')$q$),
	(40, 'snapshot map', $q$SELECT count(*) FROM skade.snapshot_map WHERE catalog_name = 'gcat'$q$),
	(41, 'may g.t1 write', $q$SELECT skade.may('write', 'g', 't1')$q$)
) a(ord, action, stmt)
ORDER BY a.ord;

-- skade_user with skade_reader: reads everything, writes what it is granted
SELECT a.action, pg_temp.try_as('g_mixed', a.stmt) AS mixed
FROM (VALUES
	(1, 'tables h', $q$SELECT string_agg(n, ',' ORDER BY n) FROM skade.list_tables('h') n$q$),
	(2, 'commit g.sub.t3', $q$SELECT skade.commit_table('g.sub', 't3', 'file:///p/g3', 'file:///p/g3b') > 0$q$),
	(3, 'commit h.t4', $q$SELECT skade.commit_table('h', 't4', 'file:///p/h4', 'file:///p/h4b') > 0$q$)
) a(ord, action, stmt) ORDER BY a.ord;

-- what a refusal says
SET ROLE g_ns_reader;
SELECT skade.commit_table('g', 't1', 'file:///p/g1', 'file:///p/g1b');
SELECT skade.create_namespace('g.x');
SELECT skade.load_table('h', 't4');
SELECT skade.load_table('h', 'no_such_table');
RESET ROLE;

-- a metadata file is written only in a namespace where the role may write something (its
-- name checked after that: 22023 means the privilege check let it through)
SELECT pg_temp.try_as(r, $q$SELECT skade.write_table_metadata('x', '{}', 'g')$q$) AS in_g,
	   pg_temp.try_as(r, $q$SELECT skade.write_table_metadata('x', '{}', 'h')$q$) AS in_h,
	   pg_temp.try_as(r, $q$SELECT skade.write_table_metadata('x', '{}')$q$) AS unnamed,
	   pg_temp.try_as(r, $q$SELECT skade.write_view_metadata('x', '{}', 'h')$q$) AS view_in_h, r
FROM unnest(ARRAY['g_ns_writer', 'g_tbl_writer', 'g_ns_reader', 'g_member']) r;

-- a grant takes effect at once, and so does a revoke (in this session, and in this transaction)
BEGIN;
SELECT pg_temp.try_as('g_nobody', $q$SELECT skade.table_exists('h', 't4')$q$);
SELECT skade.grant('read', 'g_nobody', 'h', 't4');
SELECT pg_temp.try_as('g_nobody', $q$SELECT skade.table_exists('h', 't4')$q$);
ROLLBACK;
SELECT pg_temp.try_as('g_nobody', $q$SELECT skade.table_exists('h', 't4')$q$);
SELECT skade.revoke('write', 'g_ns_writer', 'g');
SELECT pg_temp.try_as('g_ns_writer', $q$SELECT skade.commit_table('g', 't1', 'file:///p/g1', 'file:///p/g1b') > 0$q$) AS after_revoke_write,
	   pg_temp.try_as('g_ns_writer', $q$SELECT skade.table_exists('g', 't1')$q$) AS still_reads;
SELECT skade.revoke('read', 'g_ns_writer', 'g');
SELECT pg_temp.try_as('g_ns_writer', $q$SELECT skade.table_exists('g', 't1')$q$) AS after_revoke_read;
SELECT skade.revoke('read', 'g_ns_writer', 'g');
-- membership counts as it changes
REVOKE g_group FROM g_member;
SELECT pg_temp.try_as('g_member', $q$SELECT skade.table_exists('h', 't4')$q$) AS left_group;
GRANT g_group TO g_member;
SELECT pg_temp.try_as('g_member', $q$SELECT skade.table_exists('h', 't4')$q$) AS rejoined;

-- the log has every change of a grant, by whom
SELECT op, catalog_name, table_namespace, table_name, committed_by, detail
FROM skade.commit_log WHERE catalog_name = 'gcat' AND op IN ('grant', 'revoke') ORDER BY seq;

-- bad input
SELECT skade.grant('own', 'g_nobody', 'g');
SELECT skade.grant(NULL, 'g_nobody', 'g');
SELECT skade.grant('read', NULL, 'g');
SELECT skade.grant('read', 'no_such_role', 'g');
SELECT skade.grant('read', 'g_nobody', NULL, 't1');
SELECT skade.grant('read', 'g_nobody', 'a..b');
SELECT skade.grant('read', 'g_nobody', 'g', E'bad\x01name');
SELECT skade.may('maybe', 'g');
SELECT skade.may(NULL, 'g');
-- only whoever may run skade.grant (superusers, unless granted) changes grants
SET ROLE g_ns_writer;
SELECT skade.grant('write', 'g_ns_writer', 'h');
SELECT * FROM skade.grants;
INSERT INTO skade.grants VALUES ('g_ns_writer', 'write', 'gcat', 'h', NULL, 'x', now());
RESET ROLE;

-- a dropped role's grants stop counting; a role of the same name is someone else
SELECT skade.grant('read', 'g_member', 'g', 't2');
DROP ROLE g_member;
CREATE ROLE g_member LOGIN IN ROLE skade_user;
SELECT pg_temp.try_as('g_member', $q$SELECT skade.table_exists('g', 't2')$q$) AS recreated;

-- time travel: the snapshot index answers only what the role may read (as the
-- heap's snapshot_map does under row-level security)
SET skade.allowed_roots = '/tmp/skade_regress/root';
SELECT skade.register_table('g', 'tt', 'file:///tmp/skade_regress/root/00003-v2.metadata.json') > 0;
SELECT skade.rebuild_index() > 0 AS published;
SELECT tree_answers AS t0 FROM skade.index_status() \gset
SELECT pg_temp.try_as('g_ns_reader', $q$SELECT regexp_replace(metadata_location, '^.*/', '') FROM skade.load_table_at('g', 'tt', 3051729675574597000, snapshots => 'none')$q$) AS reader_at,
	   pg_temp.try_as('g_member', $q$SELECT regexp_replace(metadata_location, '^.*/', '') FROM skade.load_table_at('g', 'tt', 3051729675574597000, snapshots => 'none')$q$) AS member_at,
	   pg_temp.try_as('g_member', $q$SELECT regexp_replace(metadata_location, '^.*/', '') FROM skade.load_table_at('g', 'nope', 3051729675574597000, snapshots => 'none')$q$) AS member_absent;
-- the same snapshot ids may be other tests' tables too: a role that may read nothing gets nothing
SELECT pg_temp.try_as('g_nobody', $q$SELECT count(*) FILTER (WHERE name IS NOT NULL) FROM skade.resolve_many(ARRAY[3051729675574597000, 3051729675574597001, 3051729675574597002])$q$) AS nobody_resolves,
	   pg_temp.try_as('g_nobody', $q$SELECT count(*) FILTER (WHERE l IS NOT NULL) FROM unnest(skade.resolve_locations(ARRAY[3051729675574597000, 3051729675574597002])) l$q$) AS nobody_locations,
	   pg_temp.try_as('g_ns_reader', $q$SELECT string_agg(DISTINCT catalog_name || '.' || table_namespace || '.' || table_name, ',') FROM skade.snapshot_map$q$) AS reader_map;
SELECT count(*) FILTER (WHERE name IS NOT NULL) > 0 AS superuser_resolves
FROM skade.resolve_many(ARRAY[3051729675574597000, 3051729675574597001, 3051729675574597002]);
SELECT tree_answers > :t0 AS index_answered FROM skade.index_status();
RESET skade.allowed_roots;

-- clean up
DELETE FROM skade.grants;
DROP ROLE g_ns_reader, g_ns_writer, g_tbl_writer, g_cat_reader, g_nobody, g_group, g_member,
	g_db_reader, g_mixed;
DELETE FROM iceberg_tables WHERE catalog_name = 'gcat';
DELETE FROM iceberg_namespace_properties WHERE catalog_name = 'gcat';
RESET skade.catalog;
