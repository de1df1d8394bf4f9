/* skade--1.6--1.7.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION skade UPDATE TO '1.7'" to load this file. \quit

/*
 * 1.7: an Idempotency-Key answer is bound to the role's OID, the method, the
 * route and the SHA-256 of the body in columns of their own (the key was
 * role || ':' || key, which two roles could share, and the body was never
 * compared), and swept by time.  The stored answers live 30 minutes: they
 * are dropped with the old table, not converted.
 */
DROP TABLE skade.rest_idempotency;
CREATE TABLE skade.rest_idempotency (
	role_oid oid NOT NULL,
	key text NOT NULL,
	method text NOT NULL,
	route text NOT NULL,
	body_sha256 bytea NOT NULL,
	status integer NOT NULL,
	body text NOT NULL,
	created_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
	PRIMARY KEY (role_oid, key)
);
CREATE INDEX rest_idempotency_created_at ON skade.rest_idempotency (created_at);
REVOKE ALL ON skade.rest_idempotency FROM PUBLIC;
