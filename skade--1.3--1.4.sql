/* skade--1.3--1.4.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION skade UPDATE TO '1.4'" to load this file. \quit

/*
 * 1.4: tables on object storage (s3://).  Every object here is also in
 * skade--1.4.sql, spelled identically (t/013_upgrade.pl compares a fresh
 * 1.4 with 1.0 updated through every script).
 */
