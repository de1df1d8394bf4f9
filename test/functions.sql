-- The SQL-callable functions of skade that only the tests and benchmarks use: compiled into
-- the library, never created by CREATE EXTENSION.  A suite runs this file as a superuser in a
-- database where skade is installed; the functions are in schema skade_test, open to all
-- (they read no secret and change nothing).
CREATE SCHEMA IF NOT EXISTS skade_test;
GRANT USAGE ON SCHEMA skade_test TO PUBLIC;

-- the snapshot index's answers through its routing (the tree where allowed) and from the heap
-- alone, on the same snapshot: how many differ
CREATE OR REPLACE FUNCTION skade_test.index_check(snapshot_ids bigint[]) RETURNS bigint
	AS '$libdir/skade', 'skade_index_check' LANGUAGE C STABLE
	COST 10000 PARALLEL RESTRICTED;

-- STree64 against a binary search, every implementation, on random trees
CREATE OR REPLACE FUNCTION skade_test.stree64_selftest()
	RETURNS TABLE (n bigint, duplicates boolean, queries bigint, scalar_mismatches bigint,
				   avx2_mismatches bigint, batch_mismatches bigint, implementation text)
	AS '$libdir/skade', 'skade_stree64_selftest' LANGUAGE C VOLATILE
	ROWS 10;
-- ns per lookup of each implementation
CREATE OR REPLACE FUNCTION skade_test.stree64_bench(n bigint, queries bigint)
	RETURNS TABLE (method text, ns_per_lookup double precision)
	AS '$libdir/skade', 'skade_stree64_bench' LANGUAGE C VOLATILE
	ROWS 10;

-- the AWS Signature Version 4 signer of skade's S3 client: signs exactly the request given
-- (headers as 'name:value' elements; query NULL = none) and reads no server secret
CREATE OR REPLACE FUNCTION skade_test.sigv4_sign(method text, canonical_uri text, query text,
								 headers text[], payload_hash text, region text, service text,
								 amz_date text, access_key text, secret_key text,
								 OUT canonical_request text, OUT string_to_sign text,
								 OUT authorization text)
	RETURNS record AS '$libdir/skade', 'skade_sigv4_sign' LANGUAGE C IMMUTABLE
	PARALLEL SAFE;
