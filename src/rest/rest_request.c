/*-------------------------------------------------------------------------
 *
 * rest_request.c
 *	  A REST request and its answer as bytes, between the listener that
 *	  parsed it (rest_http.c) and the executor that answers it
 *	  (rest_worker.c); the decoding of a request's path and query
 *	  arguments; answers in Iceberg's error model.
 *
 * Invariants
 *   - A message is a head of fields (int32 numbers; strings as an int32
 *     length, -1 for NULL, and their bytes) followed by the body, whose
 *     length the head ends with: the listener sends the body from where it
 *     was received (shm_mq_sendv), never copied into the head.
 *   - A path or query argument is decoded as Iceberg's RESTUtil.decodeString
 *     does (%XX, "+" for a space).  One that decodes to a NUL or to bytes
 *     that are not UTF-8 is refused whole (RestPathProblem: the listener
 *     answers 400 before any executor sees it), so a name never means less
 *     than it says ("t1%00evil" is not "t1") and no error echoes bytes that
 *     are not text.
 *   - Reading a message never trusts its lengths: a truncated or
 *     inconsistent message is an ERROR (it can only come from a bug).
 *
 * IDENTIFICATION
 *	  src/rest/rest_request.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "mb/pg_wchar.h"
#include "utils/json.h"

#include "rest/rest_request.h"

/* a cursor over a message */
typedef struct Reader
{
	const char *p;
	const char *end;
} Reader;

static void put_int(StringInfo out, int32 v);
static void put_str(StringInfo out, const char *s);
static int32 get_int(Reader *r);
static char *get_str(Reader *r);
static List *split_path(const char *path);

/* ------------------------------------------------------------ decoding */

/*
 * Decode s in place as Iceberg's RESTUtil.decodeString does (URL form
 * decoding: %XX, and "+" for a space, as Java's clients encode names).
 * False when it decodes to a NUL or to bytes that are not UTF-8.
 */
bool
RestDecode(char *s)
{
	char	   *w = s;
	char	   *r = s;
	bool		ok = true;

	while (*r)
	{
		if (r[0] == '%' && isxdigit((unsigned char) r[1]) && isxdigit((unsigned char) r[2]))
		{
			char		hex[3] = {r[1], r[2], '\0'};
			char		c = (char) strtol(hex, NULL, 16);

			if (c == '\0')
			{
				ok = false;
				c = '?';
			}
			*w++ = c;
			r += 3;
		}
		else if (*r == '+')
		{
			*w++ = ' ';
			r++;
		}
		else
			*w++ = *r++;
	}
	*w = '\0';
	return ok && pg_verify_mbstr(PG_UTF8, s, w - s, true);
}

/* "/v1/a/b%2Fc" -> ("v1", "a", "b/c"); empty segments are kept. */
static List *
split_path(const char *path)
{
	List	   *out = NIL;
	const char *p = path;

	if (*p == '/')
		p++;
	for (;;)
	{
		size_t		n = strcspn(p, "/");
		char	   *seg = pnstrdup(p, n);

		(void) RestDecode(seg);
		out = lappend(out, seg);
		if (p[n] == '\0')
			break;
		p += n + 1;
	}
	return out;
}

/*
 * RestPathProblem
 *		Why req's path or query cannot be taken as sent (a segment or an
 *		argument decodes to a NUL or to bytes that are not UTF-8), or NULL.
 */
const char *
RestPathProblem(const RestRequest *req)
{
	const char *p = req->raw_path;
	ListCell   *lc;

	if (!pg_verify_mbstr(PG_UTF8, p, strlen(p), true))
		return "the request path is not UTF-8";
	for (;;)
	{
		size_t		n = strcspn(p, "/");
		char	   *seg = pnstrdup(p, n);
		bool		ok = RestDecode(seg);

		pfree(seg);
		if (!ok)
			return "a path segment decodes to a NUL byte or to bytes that are not UTF-8";
		if (p[n] == '\0')
			break;
		p += n + 1;
	}
	foreach(lc, req->args)
	{
		RestArg    *a = lfirst(lc);
		char	   *name = pstrdup(a->name);
		char	   *value = a->value ? pstrdup(a->value) : NULL;

		if (!RestDecode(name) || (value && !RestDecode(value)))
			return "a query argument decodes to a NUL byte or to bytes that are not UTF-8";
	}
	return NULL;
}

/*
 * RestQueryArg
 *		The query argument name of the request (decoded), or NULL.
 */
const char *
RestQueryArg(const RestRequest *req, const char *name)
{
	ListCell   *lc;

	foreach(lc, req->args)
	{
		RestArg    *a = lfirst(lc);
		char	   *n = pstrdup(a->name);

		(void) RestDecode(n);
		if (strcmp(n, name) == 0)
		{
			char	   *v = pstrdup(a->value ? a->value : "");

			(void) RestDecode(v);
			return v;
		}
	}
	return NULL;
}

/*
 * RestAcceptsGzip
 *		Does the client accept gzip: a token "gzip" in Accept-Encoding not
 *		weighted q=0?
 */
bool
RestAcceptsGzip(const RestRequest *req)
{
	const char *ae = req->accept_encoding;
	const char *p;
	const char *q;
	const char *end;

	if (ae == NULL || (p = strstr(ae, "gzip")) == NULL)
		return false;
	p += 4;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p != ';')
		return true;
	end = strchr(p, ',');
	q = strstr(p, "q=");
	if (q == NULL || (end && q > end))
		return true;
	return strtod(q + 2, NULL) > 0;
}

/*
 * RestErrorAnswer
 *		resp is an error in Iceberg's model ({"error": {message, type,
 *		code}}); a 503 tells the client when to retry.
 */
void
RestErrorAnswer(RestResponse *resp, int status, const char *type, const char *message)
{
	StringInfo	b = &resp->body;

	resp->status = status;
	resp->etag = NULL;
	resp->gzip = false;
	resp->retry_after = status == 503 ? 1 : 0;
	resetStringInfo(b);
	appendStringInfoString(b, "{\"error\":{\"message\":");
	escape_json(b, message);
	appendStringInfoString(b, ",\"type\":");
	escape_json(b, type);
	appendStringInfo(b, ",\"code\":%d}}", status);
}

/* ------------------------------------------------------------ messages */

static void
put_int(StringInfo out, int32 v)
{
	appendBinaryStringInfo(out, (const char *) &v, sizeof(v));
}

static void
put_str(StringInfo out, const char *s)
{
	if (s == NULL)
	{
		put_int(out, -1);
		return;
	}
	put_int(out, (int32) strlen(s));
	appendBinaryStringInfo(out, s, strlen(s));
}

static int32
get_int(Reader *r)
{
	int32		v;

	if (r->end - r->p < (ptrdiff_t) sizeof(v))
		elog(ERROR, "truncated REST message");
	memcpy(&v, r->p, sizeof(v));
	r->p += sizeof(v);
	return v;
}

/* a string of the message (NULL for -1), palloc'd and terminated */
static char *
get_str(Reader *r)
{
	int32		n = get_int(r);

	if (n == -1)
		return NULL;
	if (n < 0 || r->end - r->p < n)
		elog(ERROR, "truncated REST message");
	r->p += n;
	return pnstrdup(r->p - n, n);
}

/*
 * RestRequestWriteHead
 *		The head of req's message (the body follows it: the caller sends
 *		req->body after it).
 */
void
RestRequestWriteHead(StringInfo out, const RestRequest *req)
{
	ListCell   *lc;

	put_str(out, req->method);
	put_str(out, req->raw_path);
	put_int(out, list_length(req->args));
	foreach(lc, req->args)
	{
		RestArg    *a = lfirst(lc);

		put_str(out, a->name);
		put_str(out, a->value);
	}
	put_str(out, req->authorization);
	put_str(out, req->if_none_match);
	put_str(out, req->idempotency_key);
	put_str(out, req->accept_encoding);
	put_str(out, req->access_delegation);
	put_int(out, req->body.len);
}

/*
 * RestRequestRead
 *		The request of a message (head and body), in CurrentMemoryContext,
 *		its path split into decoded segments.
 */
RestRequest *
RestRequestRead(const char *data, Size len)
{
	Reader		r = {data, data + len};
	RestRequest *req = palloc0(sizeof(RestRequest));
	int			nargs;
	int			i;
	int32		body_len;

	req->method = get_str(&r);
	req->raw_path = get_str(&r);
	nargs = get_int(&r);
	for (i = 0; i < nargs; i++)
	{
		RestArg    *a = palloc(sizeof(RestArg));

		a->name = get_str(&r);
		a->value = get_str(&r);
		req->args = lappend(req->args, a);
	}
	req->authorization = get_str(&r);
	req->if_none_match = get_str(&r);
	req->idempotency_key = get_str(&r);
	req->accept_encoding = get_str(&r);
	req->access_delegation = get_str(&r);
	body_len = get_int(&r);
	if (req->method == NULL || req->raw_path == NULL || body_len < 0 || r.end - r.p != body_len)
		elog(ERROR, "inconsistent REST message");
	initStringInfo(&req->body);
	appendBinaryStringInfo(&req->body, r.p, body_len);
	req->segments = split_path(req->raw_path);
	return req;
}

/* RestResponseWriteHead: the head of resp's message (its body follows). */
void
RestResponseWriteHead(StringInfo out, const RestResponse *resp)
{
	put_int(out, resp->status);
	put_int(out, resp->retry_after);
	put_int(out, (resp->gzip ? 1 : 0) | (resp->replayed ? 2 : 0));
	put_str(out, resp->route);
	put_str(out, resp->etag);
	put_int(out, resp->body.len);
}

/*
 * RestResponseRead
 *		The answer of a message into resp, its strings and body copied into
 *		CurrentMemoryContext.
 */
void
RestResponseRead(const char *data, Size len, RestResponse *resp)
{
	Reader		r = {data, data + len};
	int32		flags;
	int32		body_len;

	resp->status = get_int(&r);
	resp->retry_after = get_int(&r);
	flags = get_int(&r);
	resp->gzip = (flags & 1) != 0;
	resp->replayed = (flags & 2) != 0;
	resp->route = get_str(&r);
	resp->etag = get_str(&r);
	body_len = get_int(&r);
	if (body_len < 0 || r.end - r.p != body_len)
		elog(ERROR, "inconsistent REST message");
	initStringInfo(&resp->body);
	appendBinaryStringInfo(&resp->body, r.p, body_len);
}
