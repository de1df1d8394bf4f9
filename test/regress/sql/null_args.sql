-- NULL in every argument position of every function of schemas skade and
-- skade_test (the functions only the tests use: test/functions.sql), read
-- from pg_proc (a new function cannot skip this test: its rows appear
-- below).  Each call is a clear error with a proper SQLSTATE, or a
-- documented result; never a crash, never an internal error (class XX).
-- The other arguments get ordinary values; every call is rolled back.
\pset null '(null)'
SET skade.allowed_roots = '/tmp/skade_regress/root';
SELECT skade.create_namespace('na');
SELECT skade.register_table('na', 't', '/tmp/skade_regress/root/00003-v2.metadata.json') > 0 AS registered;
-- an ordinary value for an argument, by its name and type
CREATE FUNCTION pg_temp.sample(arg text, t regtype) RETURNS text LANGUAGE sql AS $$
	SELECT CASE
		WHEN arg IN ('namespace', 'new_namespace', 'parent') THEN quote_literal('na')
		WHEN arg = 'name' THEN quote_literal('t')
		WHEN arg = 'new_name' THEN quote_literal('t2')
		WHEN arg = 'catalog' THEN quote_literal('skade')
		WHEN arg = 'snapshots' THEN quote_literal('all')
		WHEN arg IN ('metadata_location', 'expected_location', 'new_location')
			THEN quote_literal('/tmp/skade_regress/root/00003-v2.metadata.json')
		WHEN arg = 'filter' THEN quote_literal('true') || '::jsonb'
		WHEN arg = 'changes' THEN quote_literal('[]') || '::jsonb'
		WHEN arg = 'snapshot_id' THEN '3051729675574597002::bigint'
		WHEN t = 'text'::regtype THEN quote_literal('x')
		WHEN t = 'jsonb'::regtype THEN quote_literal('{}') || '::jsonb'
		WHEN t = 'bigint'::regtype THEN '1::bigint'
		WHEN t = 'integer'::regtype THEN '1'
		WHEN t = 'boolean'::regtype THEN 'false'
		WHEN t = 'bigint[]'::regtype THEN quote_literal('{3051729675574597002}') || '::bigint[]'
		WHEN t = 'text[]'::regtype THEN quote_literal('{}') || '::text[]'
		WHEN t = 'timestamp with time zone'::regtype
			THEN quote_literal('2030-01-01 00:00+00') || '::timestamptz'
	END
$$;
CREATE TEMP TABLE outcome (fn text, pos int, outcome text);
DO $$
DECLARE
	f record;
	i int;
	args text[];
	call text;
	res text;
BEGIN
	FOR f IN SELECT p.oid, p.proname, p.proargtypes::regtype[] AS types, p.pronargs,
					p.proargnames AS names, p.pronamespace::regnamespace AS nsp
			 FROM pg_proc p
			 WHERE p.pronamespace IN ('skade'::regnamespace, 'skade_test'::regnamespace)
			   AND p.prorettype <> 'trigger'::regtype AND p.pronargs > 0
			 ORDER BY p.proname, p.oid LOOP
		FOR i IN 1 .. f.pronargs LOOP
			args := ARRAY[]::text[];
			FOR k IN 1 .. f.pronargs LOOP
				args := args || CASE WHEN k = i THEN format('NULL::%s', f.types[k - 1])
								ELSE pg_temp.sample(f.names[k], f.types[k - 1]) END;
			END LOOP;
			call := format('SELECT CASE WHEN count(*) = 0 THEN ''no rows''
									  WHEN bool_and(t IS NULL) THEN ''null''
									  ELSE count(*) || '' row(s)'' END
							FROM %s.%I(%s) t', f.nsp, f.proname, array_to_string(args, ', '));
			BEGIN
				EXECUTE call INTO res;
				RAISE EXCEPTION USING ERRCODE = 'P0099', MESSAGE = res;
			EXCEPTION
				WHEN SQLSTATE 'P0099' THEN
					INSERT INTO outcome VALUES (f.proname, i, 'ok: ' || SQLERRM);
				WHEN OTHERS THEN
					INSERT INTO outcome VALUES (f.proname, i, SQLSTATE || ' ' || SQLERRM);
			END;
		END LOOP;
	END LOOP;
END
$$;
-- every position of every function, with what it does
SELECT fn, pos, outcome FROM outcome ORDER BY fn, pos;
-- none of them is an internal error
SELECT count(*) AS internal_errors FROM outcome WHERE outcome LIKE 'XX%';

SELECT skade.drop_table('na', 't') IS NOT NULL AS dropped;
SELECT skade.drop_namespace('na');
RESET skade.allowed_roots;
