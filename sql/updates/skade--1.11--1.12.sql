/* skade--1.11--1.12.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION skade UPDATE TO '1.12'" to load this file. \quit

-- the cluster's commit counters (cluster-wide, since the server started, not
-- transactional): pointer changes logged, CAS commits lost through the SQL API,
-- stale appends rebased, group commits and the commits they made for others,
-- and commits to existing tables through update_table by the engine that
-- applied them (update_c: the C path, update_plpgsql: the PL/pgSQL engine)
CREATE FUNCTION skade.commit_stats(OUT commits bigint, OUT conflicts bigint, OUT rebased bigint,
								   OUT group_commits bigint, OUT grouped bigint,
								   OUT update_c bigint, OUT update_plpgsql bigint)
	RETURNS record AS 'MODULE_PATHNAME', 'skade_commit_stats' LANGUAGE C VOLATILE
	PARALLEL RESTRICTED;
REVOKE ALL ON FUNCTION skade.commit_stats() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION skade.commit_stats() TO skade_reader, skade_user;
