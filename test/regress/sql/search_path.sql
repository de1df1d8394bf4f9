-- No escalation through search_path: a role that is only skade_writer puts
-- its own "=" operators ahead of pg_catalog, then drives every write path
-- (client INSERT/UPDATE/DELETE/TRUNCATE, the SQL API, resolve_commit_log)
-- and the index worker (through ALTER DATABASE ... SET search_path).  The
-- trap logs and makes its owner superuser whenever it runs as anybody else;
-- it must never run, and the role must stay what it is.
\pset null '(null)'
SET skade.allowed_roots = '/tmp/skade_regress/root';
CREATE ROLE skade_test_mallory LOGIN IN ROLE skade_writer;
CREATE SCHEMA m AUTHORIZATION skade_test_mallory;
SELECT skade.create_namespace('trap');

SET ROLE skade_test_mallory;
CREATE TABLE m.trap_log (ran_as name, what text);
GRANT INSERT ON m.trap_log TO PUBLIC;
CREATE FUNCTION m.trap(what text) RETURNS void LANGUAGE plpgsql AS $f$
BEGIN
	IF current_user OPERATOR(pg_catalog.<>) 'skade_test_mallory' THEN
		INSERT INTO m.trap_log VALUES (current_user, what);
		EXECUTE 'ALTER ROLE skade_test_mallory SUPERUSER';
	END IF;
END $f$;
-- "=" for every type skade compares: text, varchar, name, bigint, oid
CREATE FUNCTION m.eq_text(a text, b text) RETURNS boolean LANGUAGE plpgsql AS $f$
BEGIN PERFORM m.trap('text = text'); RETURN a OPERATOR(pg_catalog.=) b; END $f$;
CREATE FUNCTION m.eq_varchar(a varchar, b varchar) RETURNS boolean LANGUAGE plpgsql AS $f$
BEGIN PERFORM m.trap('varchar = varchar'); RETURN a OPERATOR(pg_catalog.=) b; END $f$;
CREATE FUNCTION m.eq_name(a name, b name) RETURNS boolean LANGUAGE plpgsql AS $f$
BEGIN PERFORM m.trap('name = name'); RETURN a OPERATOR(pg_catalog.=) b; END $f$;
CREATE FUNCTION m.eq_int8(a bigint, b bigint) RETURNS boolean LANGUAGE plpgsql AS $f$
BEGIN PERFORM m.trap('bigint = bigint'); RETURN a OPERATOR(pg_catalog.=) b; END $f$;
CREATE FUNCTION m.eq_oid(a oid, b oid) RETURNS boolean LANGUAGE plpgsql AS $f$
BEGIN PERFORM m.trap('oid = oid'); RETURN a OPERATOR(pg_catalog.=) b; END $f$;
CREATE OPERATOR m.= (LEFTARG = text, RIGHTARG = text, FUNCTION = m.eq_text);
CREATE OPERATOR m.= (LEFTARG = varchar, RIGHTARG = varchar, FUNCTION = m.eq_varchar);
CREATE OPERATOR m.= (LEFTARG = name, RIGHTARG = name, FUNCTION = m.eq_name);
CREATE OPERATOR m.= (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = m.eq_int8);
CREATE OPERATOR m.= (LEFTARG = oid, RIGHTARG = oid, FUNCTION = m.eq_oid);

SET search_path = m, pg_catalog, public;
-- the trap works: mallory's own comparisons use it (as herself: not logged)
SELECT 'a'::text = 'a'::text AS own_eq, count(*) AS logged FROM m.trap_log;

-- the clients' path: INSERT (create), UPDATE (commit, rename), DELETE (drop);
-- the metadata is readable, so each change also writes skade.snapshot_map
INSERT INTO public.iceberg_tables VALUES ('skade', 'trap', 'c1',
	'file:///tmp/skade_regress/root/00003-v2.metadata.json', NULL, 'TABLE');
UPDATE public.iceberg_tables SET metadata_location = 'file:///tmp/skade_regress/root/00004-v2next.metadata.json'
	WHERE table_name OPERATOR(pg_catalog.=) 'c1';
UPDATE public.iceberg_tables SET table_name = 'c2' WHERE table_name OPERATOR(pg_catalog.=) 'c1';
DELETE FROM public.iceberg_tables WHERE table_name OPERATOR(pg_catalog.=) 'c2';

-- the SQL API
SELECT skade.register_table('trap', 'a1', 'file:///tmp/skade_regress/root/00003-v2.metadata.json') > 0 AS registered;
SELECT skade.commit_table('trap', 'a1', 'file:///tmp/skade_regress/root/00003-v2.metadata.json',
	'file:///tmp/skade_regress/root/00004-v2next.metadata.json') > 0 AS committed;
SELECT skade.rename_table('trap', 'a1', 'trap', 'a2') > 0 AS renamed;
SELECT count(*) AS changed FROM skade.commit_transaction(
	'[{"namespace": "trap", "name": "a2",
	   "expected_location": "file:///tmp/skade_regress/root/00004-v2next.metadata.json",
	   "new_location": "file:///tmp/skade_regress/root/00003-v2.metadata.json"}]');
SELECT skade.drop_table('trap', 'a2') IS NOT NULL AS dropped;
-- SECURITY DEFINER: late resolution of unreadable commits (earlier tests
-- left unreadable ones behind: their warnings are not the point here)
SET client_min_messages = error;
SELECT skade.resolve_commit_log() >= 0 AS resolved;
RESET client_min_messages;
-- reads that consult skade.snapshot_map from the heap
SET skade.index_enabled = off;
SELECT count(*) AS rows FROM skade.resolve_many(ARRAY[3051729675574597000]);
RESET skade.index_enabled;
RESET ROLE;

-- TRUNCATE, by a role that may (the owner of an adopted catalog, say)
BEGIN;
GRANT TRUNCATE ON public.iceberg_tables TO skade_test_mallory;
SET LOCAL ROLE skade_test_mallory;
SET LOCAL search_path = m, pg_catalog, public;
INSERT INTO public.iceberg_tables VALUES ('skade', 'trap', 't1',
	'file:///tmp/skade_regress/root/00003-v2.metadata.json', NULL, 'TABLE');
TRUNCATE public.iceberg_tables;
SET LOCAL search_path = pg_catalog, public;
RESET ROLE;
SELECT rolsuper AS mallory_is_superuser FROM pg_roles WHERE rolname = 'skade_test_mallory';
SELECT count(*) AS trap_ran FROM m.trap_log;
ROLLBACK;

-- the index worker, under a database-level trap search_path: restarted so
-- that it connects with it
SELECT format('ALTER DATABASE %I SET search_path = m, pg_catalog, public', current_database()) \gexec
SELECT pg_terminate_backend(worker_pid, 10000) FROM skade.index_status();
SELECT skade.rebuild_index() > 0 AS rebuilt;
SELECT format('ALTER DATABASE %I RESET search_path', current_database()) \gexec

-- nothing ran as anybody but mallory; she is still no superuser
SELECT ran_as, what FROM m.trap_log;
SELECT rolsuper AS mallory_is_superuser FROM pg_roles WHERE rolname = 'skade_test_mallory';
-- and every change was logged as hers
SELECT op, source, committed_by, table_name FROM skade.commit_log
WHERE table_namespace = 'trap' ORDER BY seq;

DROP SCHEMA m CASCADE;
SELECT skade.drop_namespace('trap');
DROP ROLE skade_test_mallory;
