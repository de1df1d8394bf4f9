/*-------------------------------------------------------------------------
 *
 * rest_http.h
 *	  The REST server's HTTP side over libmicrohttpd (see rest_http.c) and
 *	  what a request and its answer are to the routes (rest_routes.c).
 *
 * IDENTIFICATION
 *	  src/rest_http.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_REST_HTTP_H
#define SKADE_REST_HTTP_H

#include "lib/stringinfo.h"
#include "nodes/pg_list.h"

/* a request, as the routes see it (all palloc'd in the request's context) */
typedef struct RestRequest
{
	const char *method;
	const char *raw_path;		/* as sent: percent-encoded, query removed */
	List	   *segments;		/* the path's segments, each percent-decoded */
	const char *authorization;	/* headers, NULL when absent */
	const char *if_none_match;
	const char *idempotency_key;
	const char *accept_encoding;
	StringInfoData body;
	bool		body_too_large;
	void	   *connection;		/* for query arguments (RestQueryArg) */
} RestRequest;

/* an answer */
typedef struct RestResponse
{
	int			status;
	StringInfoData body;		/* JSON, or empty */
	const char *etag;			/* quoted, or NULL */
	bool		gzip;			/* body is gzip-compressed */
	int			retry_after;	/* Retry-After in seconds, 0 = no header */
} RestResponse;

/*
 * Answers of at least REST_GZIP_MIN bytes are gzip-compressed (at zlib's
 * fastest level: a 6 MB metadata answer in a few ms) for clients that accept it
 */
#define REST_GZIP_MIN	8192
#define REST_GZIP_LEVEL 1

extern void SkadeRestServe(int worker);
extern bool RestAcceptsGzip(const RestRequest *req);
extern const char *RestQueryArg(const RestRequest *req, const char *name);

#endif							/* SKADE_REST_HTTP_H */
