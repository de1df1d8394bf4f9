/* skade--1.2--1.3.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION skade UPDATE TO '1.3'" to load this file. \quit

/*
 * 1.3: table maintenance completes -- expire_snapshots deletes the files it
 * frees (at commit), metadata files of aborted commits are recorded and
 * swept, rewrite_manifests merges small manifests.  Every object here is
 * also in skade--1.3.sql, spelled identically (t/013_upgrade.pl compares a
 * fresh 1.3 with 1.0 updated through every script).
 */
