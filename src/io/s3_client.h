/*-------------------------------------------------------------------------
 *
 * s3_client.h
 *	  HTTP requests to an S3 endpoint over libcurl: signed, concurrent,
 *	  retried, interruptible (see s3_client.c).
 *
 * IDENTIFICATION
 *	  src/io/s3_client.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_S3_CLIENT_H
#define SKADE_S3_CLIENT_H

#include "lib/stringinfo.h"

typedef struct S3Credentials
{
	char	   *access_key;
	char	   *secret_key;
	char	   *session_token;	/* NULL if none */
} S3Credentials;

#define S3_TRANSPORT_MSG 256

typedef struct S3Call
{
	/* the request */
	const char *method;			/* GET, HEAD, PUT or DELETE */
	const char *url;			/* scheme://host/canonical_uri */
	const char *host;			/* the Host header, as signed */
	const char *canonical_uri;	/* the path as sent (percent-encoded) */
	const char *body;			/* PUT */
	size_t		body_len;
	const char *content_type;	/* PUT */
	bool		create_only;	/* PUT only if absent (If-None-Match: *) */
	size_t		max_bytes;		/* a larger response body fails the call */
	const char *region;
	const char *service;		/* SigV4 service: NULL "s3" (STS: "sts") */
	const S3Credentials *cred;	/* NULL: a plain request, not signed (an
								 * OpenID provider's documents: no x-amz
								 * headers, no ETag check) */
	int			timeout_ms;		/* 0: skade.s3_request_timeout */
	bool		no_retry;		/* one attempt only */

	/* the outcome (of the last attempt) */
	int			status;			/* HTTP status; 0: no response */
	int			attempts;
	bool		timed_out;
	bool		unreachable;	/* no response: the endpoint could not be
								 * reached or stopped answering (connect,
								 * name, TLS, send, receive, time-out) */
	bool		too_big;
	bool		corrupt;		/* its length or ETag disagreed with the body */
	char		transport[S3_TRANSPORT_MSG];	/* why there was no response */
	StringInfoData body_out;	/* the response body */
	char	   *s3_code;		/* <Code> and <Message> of an error body */
	char	   *s3_message;
	bool		done;			/* finished (or abandoned) */
	bool		out_of_memory;
	void	   *priv;			/* s3_client.c's, while in flight */
} S3Call;

extern void S3Perform(S3Call **calls, int n, bool interruptible);
extern void S3Start(S3Call *call);
extern void S3Finish(S3Call *call, bool interruptible);
extern void S3Abandon(S3Call *call);
extern void S3AbandonAll(void);

/* the text of the first <name>...</name> of an XML body, at most max bytes (palloc'd) */
extern char *S3XmlElement(const StringInfoData *body, const char *name, size_t max);

/*
 * An http(s) URL's parts as sent, nothing decoded or normalized (libcurl's
 * URL parser, "." and ".." kept): scheme (lowercase), host[:port], path
 * ("/" when empty) and query (NULL when absent).  False if it is not an
 * absolute http or https URL.
 */
extern bool S3SplitUrl(const char *url, char **scheme, char **authority, char **path,
					   char **query);

#endif							/* SKADE_S3_CLIENT_H */
