/*-------------------------------------------------------------------------
 *
 * sigv4.h
 *	  AWS Signature Version 4 (header form) over PostgreSQL's own SHA-256
 *	  and HMAC, for skade's S3 client.
 *
 * IDENTIFICATION
 *	  src/util/sigv4.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_SIGV4_H
#define SKADE_SIGV4_H

#include "lib/stringinfo.h"

typedef struct SkadeSigV4Header
{
	const char *name;
	const char *value;
} SkadeSigV4Header;

typedef struct SkadeSigV4Request
{
	const char *method;			/* "GET", "PUT", ... */
	const char *canonical_uri;	/* path exactly as sent on the wire, already
								 * percent-encoded (S3 style: every key
								 * segment encoded once, '/' kept); used as
								 * is */
	const char *query;			/* query string as sent (encoded), or NULL /
								 * "": the signer sorts the parameters by
								 * name then value as SigV4 requires; "a" and
								 * "a=" both mean an empty value */
	const SkadeSigV4Header *headers;	/* every header to sign; must include
										 * host and x-amz-date */
	int			nheaders;		/* names in any case (lowercased by the
								 * signer), values trimmed and inner
								 * whitespace runs squeezed to one space;
								 * sorted by the signer */
	const char *payload_hash;	/* lowercase hex SHA-256 of the body, or
								 * "UNSIGNED-PAYLOAD" */
	const char *region;
	const char *service;		/* "s3" */
	const char *amz_date;		/* YYYYMMDD'T'HHMMSS'Z', validated (else
								 * ERROR 22023) */
	const char *access_key;
	const char *secret_key;
} SkadeSigV4Request;

/*
 * The Authorization header's value ("AWS4-HMAC-SHA256 Credential=...,
 * SignedHeaders=..., Signature=...").  If not NULL, *canonical_request and
 * *string_to_sign receive those texts (palloc'd).
 */
extern char *SkadeSigV4Authorization(const SkadeSigV4Request *r, char **canonical_request,
									 char **string_to_sign);
/* lowercase hex SHA-256 of data (hex has room for 65 bytes) */
extern void SkadeSha256Hex(const void *data, size_t len, char *hex);
/*
 * RFC 3986 encoding as SigV4 requires: A-Z a-z 0-9 - _ . ~ kept, '/' kept
 * if keep_slash, every other byte %XX uppercase
 */
extern void SkadeUriEncode(StringInfo out, const char *s, size_t len, bool keep_slash);

#endif							/* SKADE_SIGV4_H */
