/*-------------------------------------------------------------------------
 *
 * rest_delegation.c
 *	  Access delegation on the REST catalog: which mode a client asked for
 *	  (X-Iceberg-Access-Delegation), the storage credentials and config a
 *	  table answer carries, the credentials route and the signing route.
 *
 * Invariants
 *   - Only s3:// tables are delegated, for the access the request's role
 *     has on the table: read, or write when it may write it (skade.grants),
 *     holds UPDATE on iceberg_tables (what a commit needs), the location
 *     lies inside skade.write_roots and the server is not a hot standby.  The location must lie inside
 *     skade.allowed_roots: object_store.c refuses it otherwise (42501).
 *   - vended-credentials: STS credentials scoped to the table's location
 *     (sts.c) as one storage-credentials entry (prefix: the location as
 *     the metadata writes it) and as the legacy config keys.  When STS is
 *     configured but cannot be reached (08xxx), a client that also accepts
 *     remote-signing gets that instead; one that asked for vended credentials alone gets the
 *     error (an outage: 503 with Retry-After).  No role ARN configured:
 *     nothing is vended (the answer carries no credentials).
 *   - remote-signing: the config names the table's own signing route
 *     (s3.signer.endpoint, rest.remote-signing.endpoint); no key leaves
 *     the server.
 *   - A signing request is signed only if everything in it is understood
 *     and allowed: an http(s) URI of the table's endpoint (scheme and host
 *     compared with the route skade itself would use), a path below the
 *     table's prefix (compared literally: no "." or ".." segment, no %2E or
 *     %2F, no backslash), or the bucket itself for a listing whose prefix
 *     is below the table's or a DeleteObjects whose every key is; query
 *     parameters from a fixed list; the method the role's access allows
 *     (GET, HEAD: read; PUT, POST, DELETE: write); no header that reaches
 *     beyond the object (x-amz-copy-source, ACLs, grants, tagging, object
 *     lock); a payload hash that is a SHA-256, UNSIGNED-PAYLOAD or an
 *     unsigned trailer, never a chunk signature (it would need the key).
 *     Anything else is 403 (42501) and nothing is signed; a body that is
 *     too big or malformed is 400.
 *   - The signature covers host, x-amz-date (now), x-amz-content-sha256,
 *     skade's session token if any, and the client's headers S3 gives a
 *     meaning to (x-amz-*, content-md5, content-type, range, if-*); the
 *     answer holds only the headers to add (Java keeps the request's own).
 *
 * Memory: the request's context.
 *
 * IDENTIFICATION
 *	  src/rest/rest_delegation.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "access/xlog.h"
#include "catalog/namespace.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "pgtime.h"
#include "utils/acl.h"
#include "utils/formatting.h"
#include "utils/json.h"
#include "utils/timestamp.h"

#include "format/json_alloc.h"
#include "cache/l0_cache.h"
#include "io/object_store.h"
#include "catalog/privileges.h"
#include "rest/rest_delegation.h"
#include "io/s3_client.h"
#include "util/sigv4.h"
#include "io/sts.h"
#include "util/location.h"

#define MAX_SIGN_BODY	(1024 * 1024)
#define MAX_SIGN_HEADERS 64

typedef struct SignCtx
{
	const RestTableRef *t;
	SkadeObjectPrefix route;
	const char *method;
	const char *uri;
	char	   *scheme;
	char	   *authority;
	char	   *path;
	char	   *query;
	const char *body;
	bool		write;
	SkadeSigV4Header headers[MAX_SIGN_HEADERS];
	int			nheaders;
	const char *payload_hash;
} SignCtx;

static bool may_write(const RestTableRef *t);
static void put_route_config(StringInfo b, const SkadeObjectPrefix *r);
static void put_vended(StringInfo b, const SkadeVended *v, const RestTableRef *t);
static void put_key(StringInfo b, bool *first, const char *key, const char *value);
static char *route_path(const RestTableRef *t, const char *suffix);
pg_noreturn static void refuse(const char *why);
static void sign_parse(SignCtx *s, const char *body);
static void sign_check_target(SignCtx *s);
static void sign_check_query(SignCtx *s, bool object);
static void sign_check_delete(SignCtx *s);
static void sign_headers(SignCtx *s, json_t *headers);
static bool below_prefix(const SignCtx *s, const char *key);
static void *derive_location(const struct varlena *json, void *arg, Size *size);

/*
 * RestTableLocation
 *		The "location" of the table metadata json at metadata_location (by route; kept
 *		in the L0 cache beside it: parsed once per metadata file); NULL if
 *		it has none.
 */
const char *
RestTableLocation(const SkadeRoute *route, const char *metadata_location, bool refs)
{
	Size		size;
	const char *loc = L0FetchDerivedPinned(route, metadata_location, refs, "table-location",
										   derive_location, NULL, &size);

	return size > 1 ? pstrdup(loc) : NULL;
}

/* L0Deriver: the metadata's "location" ("" when absent), NUL-terminated */
static void *
derive_location(const struct varlena *json, void *arg, Size *size)
{
	json_error_t err;
	json_t	   *root = SkadeJsonLoad(VARDATA_ANY(json), VARSIZE_ANY_EXHDR(json), 0, &err, NULL);
	json_t	   *v = root ? json_object_get(root, "location") : NULL;
	char	   *out = pstrdup(json_is_string(v) ? json_string_value(v) : "");

	if (root)
		json_decref(root);
	*size = strlen(out) + 1;
	return out;
}

/*
 * RestDelegationAsked
 *		The modes of X-Iceberg-Access-Delegation (comma-separated, in the
 *		client's order of preference) skade serves, into modes[0..1]; how many.
 */
int
RestDelegationAsked(const RestRequest *req, RestDelegation *modes)
{
	char	   *copy;
	char	   *save = NULL;
	char	   *tok;
	int			n = 0;

	if (req->access_delegation == NULL)
		return 0;
	copy = pstrdup(req->access_delegation);
	for (tok = strtok_r(copy, ",", &save); tok && n < 2; tok = strtok_r(NULL, ",", &save))
	{
		RestDelegation m = REST_DELEGATE_NONE;
		size_t		len;

		while (*tok == ' ' || *tok == '\t')
			tok++;
		len = strlen(tok);
		while (len > 0 && (tok[len - 1] == ' ' || tok[len - 1] == '\t'))
			tok[--len] = '\0';
		if (pg_strcasecmp(tok, "vended-credentials") == 0)
			m = REST_DELEGATE_VENDED;
		else if (pg_strcasecmp(tok, "remote-signing") == 0)
			m = REST_DELEGATE_SIGNING;
		if (m != REST_DELEGATE_NONE && (n == 0 || modes[0] != m))
			modes[n++] = m;
	}
	return n;
}

/*
 * RestDelegationConfig
 *		The "config" object of a table answer (into config, braces included)
 *		and its "storage-credentials" array (into creds; left empty when
 *		none), as the request asked for them.
 */
void
RestDelegationConfig(const RestRequest *req, const RestTableRef *t, StringInfo config,
					 StringInfo creds)
{
	RestDelegation modes[2];
	int			n = RestDelegationAsked(req, modes);
	SkadeObjectPrefix route;
	SkadeVended v;
	bool		write;
	int			i;

	appendStringInfoChar(config, '{');
	if (n == 0 || t->location == NULL || !SkadeIsObjectLocation(t->location))
	{
		appendStringInfoChar(config, '}');
		return;
	}
	SkadeObjectPrefixRoute(SKADE_ROUTE(t->catalog, t->ns), t->location, &route);
	write = route.writable && may_write(t);
	put_route_config(config, &route);
	for (i = 0; i < n; i++)
	{
		if (modes[i] == REST_DELEGATE_SIGNING)
		{
			char	   *endpoint = route_path(t, "sign");
			bool		first = false;

			put_key(config, &first, "s3.remote-signing-enabled", "true");
			put_key(config, &first, "s3.signer", "S3V4RestSigner");
			put_key(config, &first, "s3.signer.endpoint", endpoint);
			put_key(config, &first, "rest.remote-signing.endpoint", endpoint);
			put_key(config, &first, "py-io-impl", "pyiceberg.io.fsspec.FsspecFileIO");
			break;
		}
		if (i + 1 < n)
		{
			/* remote signing next: an STS failure falls back to it */
			MemoryContext cxt = CurrentMemoryContext;
			bool		got = false;

			PG_TRY();
			{
				got = SkadeVendCredentials(&route, write, &v);
			}
			PG_CATCH();
			{
				ErrorData  *e;

				MemoryContextSwitchTo(cxt);
				e = CopyErrorData();
				/* an outage falls back; anything else (a cancel) goes on */
				if (ERRCODE_TO_CATEGORY(e->sqlerrcode) != ERRCODE_CONNECTION_EXCEPTION)
					PG_RE_THROW();
				EmitErrorReport();
				FlushErrorState();
			}
			PG_END_TRY();
			if (!got)
				continue;
		}
		else if (!SkadeVendCredentials(&route, write, &v))
			break;
		put_vended(config, &v, t);
		appendStringInfoString(creds, "[{\"prefix\":");
		escape_json(creds, t->location);
		appendStringInfoString(creds, ",\"config\":{");
		put_route_config(creds, &route);
		put_vended(creds, &v, t);
		appendStringInfoString(creds, "}}]");
		explicit_bzero(v.secret_key, strlen(v.secret_key));
		explicit_bzero(v.session_token, strlen(v.session_token));
		break;
	}
	appendStringInfoChar(config, '}');
}

/*
 * RestCredentialsAnswer
 *		GET .../tables/{table}/credentials: {"storage-credentials": [...]}
 *		for the same scope a loadTable asking for vended credentials gets
 *		(an empty list when none are vended).
 */
void
RestCredentialsAnswer(const RestTableRef *t, StringInfo body)
{
	RestRequest req = {0};
	StringInfoData config;
	StringInfoData creds;

	req.access_delegation = "vended-credentials";
	initStringInfo(&config);
	initStringInfo(&creds);
	RestDelegationConfig(&req, t, &config, &creds);
	explicit_bzero(config.data, config.len);
	appendStringInfo(body, "{\"storage-credentials\":%s}", creds.len ? creds.data : "[]");
	explicit_bzero(creds.data, creds.len);
}

/* May the current role write t's files: a writer of the table that may commit (on a primary)? */
static bool
may_write(const RestTableRef *t)
{
	Oid			tables = RangeVarGetRelid(makeRangeVar("public", "iceberg_tables", -1), NoLock, true);

	/* (a hot standby commits nothing: what a writer wrote there would be orphaned) */
	return !RecoveryInProgress() &&
		SkadeMay(SKADE_ACCESS_WRITE, t->catalog, t->ns, t->name) && OidIsValid(tables) &&
		pg_class_aclcheck(tables, GetUserId(), ACL_UPDATE) == ACLCHECK_OK;
}

/* The endpoint, region and addressing a client needs for the route. */
static void
put_route_config(StringInfo b, const SkadeObjectPrefix *r)
{
	bool		first = true;

	if (r->endpoint[0])
		put_key(b, &first, "s3.endpoint", r->endpoint);
	put_key(b, &first, "s3.region", r->region);
	put_key(b, &first, "client.region", r->region);
	put_key(b, &first, "s3.path-style-access", r->path_style ? "true" : "false");
}

/* The credential keys, and where to refresh them. */
static void
put_vended(StringInfo b, const SkadeVended *v, const RestTableRef *t)
{
	bool		first = false;

	put_key(b, &first, "s3.access-key-id", v->access_key);
	put_key(b, &first, "s3.secret-access-key", v->secret_key);
	put_key(b, &first, "s3.session-token", v->session_token);
	put_key(b, &first, "s3.session-token-expires-at-ms", psprintf(INT64_FORMAT, v->expires_at_ms));
	put_key(b, &first, "client.refresh-credentials-enabled", "true");
	put_key(b, &first, "client.refresh-credentials-endpoint", route_path(t, "credentials"));
}

/* ,"key":"value" (no comma before the first) */
static void
put_key(StringInfo b, bool *first, const char *key, const char *value)
{
	if (!*first)
		appendStringInfoChar(b, ',');
	*first = false;
	escape_json(b, key);
	appendStringInfoChar(b, ':');
	escape_json(b, value);
}

/* v1/{prefix}/namespaces/{ns}/tables/{table}/suffix, each segment encoded */
static char *
route_path(const RestTableRef *t, const char *suffix)
{
	StringInfoData b;
	char	   *ns = pstrdup(t->ns);
	char	   *p;

	for (p = ns; *p; p++)
		if (*p == '.')
			*p = '\x1f';
	initStringInfo(&b);
	appendStringInfoString(&b, "v1/");
	SkadeUriEncode(&b, t->catalog, strlen(t->catalog), false);
	appendStringInfoString(&b, "/namespaces/");
	SkadeUriEncode(&b, ns, strlen(ns), false);
	appendStringInfoString(&b, "/tables/");
	SkadeUriEncode(&b, t->name, strlen(t->name), false);
	appendStringInfo(&b, "/%s", suffix);
	return b.data;
}

/* ------------------------------------------------------------ signing */

/*
 * RestSignAnswer
 *		POST .../tables/{table}/sign: the headers that sign the client's S3
 *		request with skade's key, if it is allowed ({"uri", "headers"}).
 */
void
RestSignAnswer(const RestRequest *req, const RestTableRef *t, StringInfo body)
{
	SignCtx		s = {0};
	const S3Credentials *key;
	SkadeSigV4Request r = {0};
	char		amz_date[32];
	pg_time_t	now = timestamptz_to_time_t(GetCurrentTimestamp());
	char	   *auth;

	s.t = t;
	if (t->location == NULL || !SkadeIsObjectLocation(t->location))
		refuse("the table is not on object storage");
	sign_parse(&s, req->body.data);
	SkadeObjectPrefixRoute(SKADE_ROUTE(t->catalog, t->ns), t->location, &s.route);
	if (s.write && !(s.route.writable && may_write(t)))
		refuse(psprintf("%s needs write access to the table", s.method));
	sign_check_target(&s);
	key = SkadeObjectKey();

	pg_strftime(amz_date, sizeof(amz_date), "%Y%m%dT%H%M%SZ", pg_gmtime(&now));
	s.headers[s.nheaders++] = (SkadeSigV4Header) {"host", s.authority};
	s.headers[s.nheaders++] = (SkadeSigV4Header) {"x-amz-date", pstrdup(amz_date)};
	s.headers[s.nheaders++] = (SkadeSigV4Header) {"x-amz-content-sha256", s.payload_hash};
	if (key->session_token)
		s.headers[s.nheaders++] = (SkadeSigV4Header) {"x-amz-security-token", key->session_token};
	r.method = s.method;
	r.canonical_uri = s.path;
	r.query = s.query;
	r.headers = s.headers;
	r.nheaders = s.nheaders;
	r.payload_hash = s.payload_hash;
	r.region = s.route.region;
	r.service = "s3";
	r.amz_date = amz_date;
	r.access_key = key->access_key;
	r.secret_key = key->secret_key;
	auth = SkadeSigV4Authorization(&r, NULL, NULL);

	appendStringInfoString(body, "{\"uri\":");
	escape_json(body, s.uri);
	appendStringInfoString(body, ",\"headers\":{\"Authorization\":[");
	escape_json(body, auth);
	appendStringInfoString(body, "],\"x-amz-date\":[");
	escape_json(body, amz_date);
	appendStringInfoString(body, "],\"x-amz-content-sha256\":[");
	escape_json(body, s.payload_hash);
	appendStringInfoChar(body, ']');
	if (key->session_token)
	{
		appendStringInfoString(body, ",\"x-amz-security-token\":[");
		escape_json(body, key->session_token);
		appendStringInfoChar(body, ']');
	}
	appendStringInfoString(body, "}}");
	explicit_bzero(auth, strlen(auth));
}

/* 42501: the signing request is not one skade signs. */
static void
refuse(const char *why)
{
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("not signed: %s", why)));
}

/* The request's method, uri, headers and body (RemoteSignRequest). */
static void
sign_parse(SignCtx *s, const char *text)
{
	json_error_t err;
	json_t	   *root;
	json_t	   *v;
	size_t		len = text ? strlen(text) : 0;

	if (len > MAX_SIGN_BODY)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a signing request is at most %d bytes", MAX_SIGN_BODY)));
	root = len ? SkadeJsonLoad(text, len, JSON_REJECT_DUPLICATES, &err, NULL) : NULL;
	if (root == NULL || !json_is_object(root))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a signing request is a JSON object with method, uri, region and headers")));
	v = json_object_get(root, "method");
	if (!json_is_string(v) || !json_is_string(json_object_get(root, "uri")) ||
		!json_is_object(json_object_get(root, "headers")))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a signing request needs a method, a uri and headers")));
	s->method = pstrdup(json_string_value(v));
	if (strcmp(s->method, "GET") == 0 || strcmp(s->method, "HEAD") == 0)
		s->write = false;
	else if (strcmp(s->method, "PUT") == 0 || strcmp(s->method, "POST") == 0 ||
			 strcmp(s->method, "DELETE") == 0)
		s->write = true;
	else
		refuse(psprintf("method \"%s\" is not one skade signs", s->method));
	s->uri = pstrdup(json_string_value(json_object_get(root, "uri")));
	v = json_object_get(root, "body");
	if (v && !json_is_null(v))
	{
		if (!json_is_string(v))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("a signing request's body is a string")));
		s->body = pstrdup(json_string_value(v));
	}
	sign_headers(s, json_object_get(root, "headers"));
	json_decref(root);
}

/*
 * The headers to sign: those S3 gives a meaning to, refused where they
 * would reach beyond the object; the payload hash checked.
 */
static void
sign_headers(SignCtx *s, json_t *headers)
{
	const char *name;
	json_t	   *values;
	static const char *const refused[] = {"x-amz-copy-source", "x-amz-acl", "x-amz-grant-",
		"x-amz-tagging", "x-amz-object-lock-", "x-amz-bypass-governance-retention",
	"x-amz-website-redirect-location", "x-amz-mfa", "x-amz-write-offset-bytes"};
	static const char *const plain[] = {"content-md5", "content-type", "content-encoding",
	"range", "if-match", "if-none-match", "if-modified-since", "if-unmodified-since"};

	json_object_foreach(headers, name, values)
	{
		char	   *lower = asc_tolower(name, strlen(name));
		StringInfoData value;
		size_t		i;
		bool		sign = strncmp(lower, "x-amz-", 6) == 0;

		initStringInfo(&value);
		if (json_is_string(values))
			appendStringInfoString(&value, json_string_value(values));
		else if (json_is_array(values))
		{
			json_t	   *e;

			json_array_foreach(values, i, e)
			{
				if (!json_is_string(e))
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							 errmsg("a signing request's header values are strings")));
				appendStringInfo(&value, "%s%s", i ? "," : "", json_string_value(e));
			}
		}
		else
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("a signing request's header values are strings")));
		for (i = 0; i < value.len; i++)
			if ((unsigned char) value.data[i] < 0x20 && value.data[i] != '\t')
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("header \"%s\" holds a control character", name)));
		for (i = 0; i < lengthof(refused); i++)
			if (strncmp(lower, refused[i], strlen(refused[i])) == 0)
				refuse(psprintf("header \"%s\" is not signed", name));
		if (strcmp(lower, "authorization") == 0 || strcmp(lower, "x-amz-date") == 0 ||
			strcmp(lower, "x-amz-security-token") == 0 || strcmp(lower, "host") == 0)
			continue;			/* (skade's own) */
		if (strcmp(lower, "x-amz-content-sha256") == 0)
		{
			if (!((value.len == 64 && strspn(value.data, "0123456789abcdef") == 64) ||
				  strcmp(value.data, "UNSIGNED-PAYLOAD") == 0 ||
				  strcmp(value.data, "STREAMING-UNSIGNED-PAYLOAD-TRAILER") == 0))
				refuse("the payload hash is not a SHA-256, UNSIGNED-PAYLOAD or an unsigned trailer");
			s->payload_hash = value.data;
			continue;
		}
		for (i = 0; !sign && i < lengthof(plain); i++)
			sign = strcmp(lower, plain[i]) == 0;
		if (!sign)
			continue;
		if (s->nheaders >= MAX_SIGN_HEADERS - 4)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("a signing request has at most %d headers to sign", MAX_SIGN_HEADERS - 4)));
		s->headers[s->nheaders++] = (SkadeSigV4Header) {lower, value.data};
	}
	if (s->payload_hash == NULL)
		s->payload_hash = "UNSIGNED-PAYLOAD";
}

/*
 * The URI: the table's endpoint, an object below its prefix, or the bucket
 * for a listing or a DeleteObjects below it.
 */
static void
sign_check_target(SignCtx *s)
{
	char	   *scheme;
	char	   *authority;
	char	   *ppath;
	char	   *pquery;
	char	   *bucket_path;
	size_t		plen;
	const char *c;

	if (!S3SplitUrl(s->uri, &s->scheme, &s->authority, &s->path, &s->query) ||
		!S3SplitUrl(s->route.url, &scheme, &authority, &ppath, &pquery))
		refuse("the uri is not an http(s) URL");
	if (strcmp(s->scheme, scheme) != 0 || pg_strcasecmp(s->authority, authority) != 0)
		refuse("the uri is not the table's endpoint");
	for (c = s->path; *c; c++)
		if ((unsigned char) *c <= 0x20 || *c == '\\' || *c == '#' || *c == 0x7f)
			refuse("the uri's path holds a character skade does not sign");
	if (strstr(s->path, "/./") || strstr(s->path, "/../") || strstr(s->path, "//") ||
		pg_strncasecmp(s->path + Max((int) strlen(s->path) - 2, 0), "/.", 2) == 0 ||
		pg_strncasecmp(s->path + Max((int) strlen(s->path) - 3, 0), "/..", 3) == 0 ||
		strcasestr(s->path, "%2e") || strcasestr(s->path, "%2f"))
		refuse("the uri's path has a \".\" or \"..\" segment or an encoded '.' or '/'");
	if (s->query && strchr(s->query, '+'))
		refuse("the uri's query holds '+'");
	plen = strlen(ppath);
	if (strncmp(s->path, ppath, plen) == 0 && s->path[plen] == '/' && s->path[plen + 1] != '\0')
	{
		sign_check_query(s, true);
		return;
	}
	bucket_path = s->route.path_style ? psprintf("/%s", s->route.bucket) : "";
	if (strcmp(s->path, bucket_path) == 0 || strcmp(s->path, psprintf("%s/", bucket_path)) == 0)
	{
		sign_check_query(s, false);
		return;
	}
	refuse("the uri is outside the table's location");
}

/*
 * Query parameters: of an object request, the multipart and version ones;
 * of a bucket request, a listing whose prefix lies below the table's (GET)
 * or a DeleteObjects (POST ?delete) whose keys all do.
 */
static void
sign_check_query(SignCtx *s, bool object)
{
	static const char *const object_args[] = {"uploads", "uploadId", "partNumber", "versionId", "x-id"};
	static const char *const bucket_args[] = {"list-type", "prefix", "delimiter", "max-keys",
		"continuation-token", "start-after", "encoding-type", "fetch-owner", "marker",
	"delete", "x-id"};
	char	   *copy = s->query ? pstrdup(s->query) : pstrdup("");
	char	   *save = NULL;
	char	   *tok;
	char	   *prefix = NULL;
	bool		delete = false;

	for (tok = strtok_r(copy, "&", &save); tok; tok = strtok_r(NULL, "&", &save))
	{
		char	   *eq = strchr(tok, '=');
		char	   *value = eq ? pstrdup(eq + 1) : pstrdup("");
		const char *const *allowed = object ? object_args : bucket_args;
		int			n = object ? lengthof(object_args) : lengthof(bucket_args);
		int			i;

		if (eq)
			*eq = '\0';
		if (!RestDecode(tok) || !RestDecode(value))
			refuse("the uri's query does not decode");
		for (i = 0; i < n; i++)
			if (strcmp(tok, allowed[i]) == 0)
				break;
		if (i == n)
			refuse(psprintf("query parameter \"%s\" is not signed", tok));
		if (strcmp(tok, "prefix") == 0)
			prefix = value;
		else if (strcmp(tok, "delete") == 0)
			delete = true;
	}
	if (object)
		return;
	if (delete && strcmp(s->method, "POST") == 0)
	{
		sign_check_delete(s);
		return;
	}
	if (strcmp(s->method, "GET") != 0 || delete || prefix == NULL || !below_prefix(s, prefix))
		refuse("a request for the bucket is signed only to list below the table's location");
}

/* A DeleteObjects body: every key below the prefix; its hash is signed. */
static void
sign_check_delete(SignCtx *s)
{
	const char *p;
	int			keys = 0;
	char		hex[65];

	if (s->body == NULL)
		refuse("a DeleteObjects request is signed only with its body");
	if (strstr(s->body, "<!") || strchr(s->body, '&') || strstr(s->body, ":Key"))
		refuse("the DeleteObjects body holds markup skade does not read");
	for (p = s->body; (p = strstr(p, "<Key")) != NULL; p += 4)
	{
		const char *end;

		if (p[4] != '>')
			refuse("the DeleteObjects body holds markup skade does not read");
		end = strstr(p + 5, "</Key>");
		if (end == NULL || !below_prefix(s, pnstrdup(p + 5, end - (p + 5))))
			refuse("a key of the DeleteObjects request is outside the table's location");
		keys++;
	}
	if (keys == 0)
		refuse("the DeleteObjects request names no key");
	SkadeSha256Hex(s->body, strlen(s->body), hex);
	if (strcmp(s->payload_hash, "UNSIGNED-PAYLOAD") != 0 && strcmp(s->payload_hash, hex) != 0)
		refuse("the DeleteObjects body does not match its hash");
	s->payload_hash = pstrdup(hex);
}

/* Is key (decoded) below the table's prefix ("prefix/...")? */
static bool
below_prefix(const SignCtx *s, const char *key)
{
	size_t		n = strlen(s->route.key);
	const char *k;

	if (strncmp(key, s->route.key, n) != 0 || key[n] != '/')
		return false;
	for (k = key + n + 1; *k;)
	{
		size_t		len = strcspn(k, "/");

		if ((len == 1 && k[0] == '.') || (len == 2 && k[0] == '.' && k[1] == '.'))
			return false;
		k += len;
		if (*k == '/')
			k++;
	}
	return true;
}
