/* skade--1.9.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION skade" to load this file. \quit

/*
 * Layout
 * ------
 * public.iceberg_tables and public.iceberg_namespace_properties are THE
 * catalog: the exact tables that stock Iceberg JDBC-catalog clients (Java
 * JdbcCatalog, pyiceberg SqlCatalog, Spark/Trino with a JDBC catalog) read and
 * write, in schema public so that unqualified SQL from every client resolves
 * to them.  They are deliberately NOT members of the extension: the data
 * belongs to the user, is dumped by pg_dump like any table, and survives
 * DROP EXTENSION (which only removes skade's triggers).  skade.attach()
 * (run below, or later through skade.adopt_jdbc_catalog()) installs the
 * column, index, triggers and grants skade needs on them.
 *
 * Schema skade holds the commit log, the SQL API and skade's internals.
 */

