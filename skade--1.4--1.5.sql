/* skade--1.4--1.5.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION skade UPDATE TO '1.5'" to load this file. \quit

/*
 * 1.5: views changed through skade's functions (create_view, update_view,
 * register_view, drop_view, rename_view: the REST view routes) are logged
 * as API changes (source 'api', op create/commit/register/drop/rename),
 * as tables are.
 */
