/* skade--1.9--1.10.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION skade UPDATE TO '1.10'" to load this file. \quit

/*
 * The functions only the tests use leave the extension: the test suites
 * create them (test/functions.sql, schema skade_test) where they need them.
 */
DROP FUNCTION skade.index_check(bigint[]);
DROP FUNCTION skade.stree64_selftest();
DROP FUNCTION skade.stree64_bench(bigint, bigint);
DROP FUNCTION skade.sigv4_sign(text, text, text, text[], text, text, text, text, text, text);
