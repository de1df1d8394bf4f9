/*-------------------------------------------------------------------------
 *
 * rest_request.h
 *	  A REST request and its answer: what the routes see, as bytes between
 *	  the listener and an executor, and the decoding of paths and query
 *	  arguments (see rest_request.c).
 *
 * IDENTIFICATION
 *	  src/rest/rest_request.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_REST_REQUEST_H
#define SKADE_REST_REQUEST_H

#include "lib/stringinfo.h"
#include "nodes/pg_list.h"

/* a query argument as sent (percent-encoded) */
typedef struct RestArg
{
	char	   *name;
	char	   *value;			/* NULL for "?name" without "=" */
} RestArg;

/* a request, as the routes see it (all palloc'd in the request's context) */
typedef struct RestRequest
{
	const char *method;
	const char *raw_path;		/* as sent: percent-encoded, query removed */
	List	   *segments;		/* the path's segments, each percent-decoded */
	List	   *args;			/* RestArg, as sent (RestQueryArg decodes) */
	const char *authorization;	/* headers, NULL when absent */
	const char *if_none_match;
	const char *idempotency_key;
	const char *accept_encoding;
	const char *access_delegation;	/* X-Iceberg-Access-Delegation */
	StringInfoData body;
	bool		body_too_large;	/* (the listener answers it 413 itself) */
} RestRequest;

/* an answer */
typedef struct RestResponse
{
	int			status;
	StringInfoData body;		/* JSON, or empty */
	const char *etag;			/* quoted, or NULL */
	bool		gzip;			/* body is gzip-compressed */
	int			retry_after;	/* seconds for Retry-After; 0: none */
	const char *route;			/* the route pattern that answered (metrics) */
	bool		replayed;		/* an Idempotency-Key replay (metrics) */
} RestResponse;

/*
 * Answers of at least REST_GZIP_MIN bytes are gzip-compressed (at zlib's
 * fastest level: a 6 MB metadata answer in a few ms) for clients that accept it
 */
#define REST_GZIP_MIN	8192
#define REST_GZIP_LEVEL 1


extern bool RestAcceptsGzip(const RestRequest *req);
extern const char *RestQueryArg(const RestRequest *req, const char *name);
/* decode s in place (%XX, "+" a space); false for a NUL or bytes not UTF-8 */
extern bool RestDecode(char *s);
extern const char *RestPathProblem(const RestRequest *req);
extern void RestRequestWriteHead(StringInfo out, const RestRequest *req);
extern RestRequest *RestRequestRead(const char *data, Size len);
extern void RestResponseWriteHead(StringInfo out, const RestResponse *resp);
extern void RestResponseRead(const char *data, Size len, RestResponse *resp);
extern void RestErrorAnswer(RestResponse *resp, int status, const char *type, const char *message);

#endif							/* SKADE_REST_REQUEST_H */
