-- The AWS Signature Version 4 signer of skade's S3 client, for tests and
-- debugging: signs exactly the request given (headers as 'name:value'
-- elements; query NULL = none) and reads no server secret
CREATE FUNCTION skade.sigv4_sign(method text, canonical_uri text, query text, headers text[],
								 payload_hash text, region text, service text, amz_date text,
								 access_key text, secret_key text,
								 OUT canonical_request text, OUT string_to_sign text,
								 OUT authorization text)
	RETURNS record AS 'MODULE_PATHNAME', 'skade_sigv4_sign' LANGUAGE C IMMUTABLE
	PARALLEL SAFE;

/* ------------------------------------------------------------------ privileges */

