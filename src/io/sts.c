/*-------------------------------------------------------------------------
 *
 * sts.c
 *	  Vended credentials: STS AssumeRole with an inline session policy
 *	  scoped to one table's location, cached per process until shortly
 *	  before they expire.
 *
 * Invariants
 *   - Credentials are asked for only for a prefix SkadeObjectPrefixRoute
 *     accepted (inside skade.allowed_roots, and skade.write_roots when
 *     they may write), and only when a role ARN is configured
 *     (skade.s3_sts_role_arn, or the namespace's client.assume-role.arn).
 *   - The session policy allows, on the prefix and nothing else: reading
 *     (s3:GetObject, s3:GetObjectVersion; s3:ListBucket with s3:prefix
 *     below the prefix's "/"; s3:GetBucketLocation) and, when write,
 *     writing (s3:PutObject, s3:DeleteObject, the multipart actions).  The
 *     effective access is the intersection with the role's own policies
 *     (the STS server's business).  A prefix holding a policy wildcard or
 *     variable ('*', '?', '$') is refused: it would widen the policy.
 *   - The call is a SigV4-signed POST (service "sts") with skade's own key
 *     over s3_client.c; its answer's credentials are checked (characters,
 *     lengths, an expiration in the future) before they are used.
 *   - Credentials are never logged, never stored in a table and never in
 *     shared memory: they live in this process's "skade vended
 *     credentials" context, keyed by everything that made them (access,
 *     prefix, endpoint, role, external id, region, duration), and are
 *     zeroed when dropped.  An entry is used until a quarter of its life,
 *     at most 5 minutes, is left.
 *   - Errors: STS unreachable, timing out or answering 5xx/429 is 08006
 *     (an outage: REST answers 503 with Retry-After); STS refusing (4xx)
 *     is 42501 naming STS's error code (its message, which may name the
 *     role, is logged only); an answer skade cannot read (too big, no
 *     credentials, characters or an expiration it does not accept, or
 *     credentials already expired by this server's clock) is 08P01: an
 *     outage of the STS as far as clients can tell (503).
 *
 * IDENTIFICATION
 *	  src/io/sts.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "util/guc.h"
#include "io/s3_client.h"
#include "util/sigv4.h"
#include "io/sts.h"

#define MAX_ENTRIES		256
#define MAX_ANSWER		(64 * 1024)
#define STS_TIMEOUT_MS	15000
#define MAX_MARGIN_MS	(5 * 60 * 1000)

typedef struct Entry
{
	char	   *key;
	SkadeVended cred;
	int64		refresh_at_ms;	/* used until then */
} Entry;

static MemoryContext cache_cxt = NULL;
static List *entries = NIL;		/* Entry, in cache_cxt */

static char *cache_key(const SkadeObjectPrefix *p, bool write);
static Entry *cache_find(const char *key, int64 now_ms);
static void cache_put(const char *key, const SkadeVended *v, int64 now_ms);
static void entry_drop(Entry *e);
static char *session_policy(const SkadeObjectPrefix *p, bool write);
static char *assume_role_body(const SkadeObjectPrefix *p, bool write);
static void call_sts(const SkadeObjectPrefix *p, bool write, SkadeVended *out);
static void read_answer(const S3Call *c, SkadeVended *out);
static char *checked(const StringInfoData *body, const char *name, size_t max, const char *allowed);
static int64 now_ms(void);

/*
 * SkadeVendCredentials
 *		Credentials for the prefix p (read-only, or read-write when write),
 *		from the cache or from STS.  false (nothing vended) when no role is
 *		configured.  Results in CurrentMemoryContext.
 */
bool
SkadeVendCredentials(const SkadeObjectPrefix *p, bool write, SkadeVended *out)
{
	char	   *key;
	Entry	   *e;
	int64		now = now_ms();

	if (p->role_arn == NULL || p->role_arn[0] == '\0')
		return false;
	key = cache_key(p, write);
	e = cache_find(key, now);
	if (e == NULL)
	{
		SkadeVended fresh;

		call_sts(p, write, &fresh);
		cache_put(key, &fresh, now);
		*out = fresh;
		return true;
	}
	out->access_key = pstrdup(e->cred.access_key);
	out->secret_key = pstrdup(e->cred.secret_key);
	out->session_token = pstrdup(e->cred.session_token);
	out->expires_at_ms = e->cred.expires_at_ms;
	return true;
}

/*
 * SkadeVendedForget
 *		Drop every cached credential (zeroed).
 */
void
SkadeVendedForget(void)
{
	ListCell   *lc;

	foreach(lc, entries)
		entry_drop(lfirst(lc));
	list_free(entries);
	entries = NIL;
}

/* ------------------------------------------------------------ cache */

/* Everything that made a credential, as one string. */
static char *
cache_key(const SkadeObjectPrefix *p, bool write)
{
	return psprintf("%c\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%d", write ? 'w' : 'r', p->location,
					p->sts_endpoint, p->role_arn, p->external_id, p->region,
					skade_s3_vended_credentials_duration);
}

/* The entry of key still to be used at now, expired ones dropped. */
static Entry *
cache_find(const char *key, int64 now)
{
	ListCell   *lc;
	Entry	   *found = NULL;

	foreach(lc, entries)
	{
		Entry	   *e = lfirst(lc);

		if (e->refresh_at_ms <= now)
		{
			entry_drop(e);
			entries = foreach_delete_current(entries, lc);
		}
		else if (strcmp(e->key, key) == 0)
			found = e;
	}
	return found;
}

/* Keep v under key until a quarter of its life (at most 5 min) is left. */
static void
cache_put(const char *key, const SkadeVended *v, int64 now)
{
	MemoryContext old;
	Entry	   *e;
	int64		margin = Min(MAX_MARGIN_MS, (v->expires_at_ms - now) / 4);

	if (v->expires_at_ms - margin <= now)
		return;					/* (a clock far from STS's: not kept) */
	if (cache_cxt == NULL)
		cache_cxt = AllocSetContextCreate(TopMemoryContext, "skade vended credentials",
										  ALLOCSET_SMALL_SIZES);
	if (list_length(entries) >= MAX_ENTRIES)
	{
		entry_drop(linitial(entries));
		entries = list_delete_first(entries);
	}
	old = MemoryContextSwitchTo(cache_cxt);
	e = palloc0(sizeof(Entry));
	e->key = pstrdup(key);
	e->cred.access_key = pstrdup(v->access_key);
	e->cred.secret_key = pstrdup(v->secret_key);
	e->cred.session_token = pstrdup(v->session_token);
	e->cred.expires_at_ms = v->expires_at_ms;
	e->refresh_at_ms = v->expires_at_ms - margin;
	entries = lappend(entries, e);
	MemoryContextSwitchTo(old);
}

/* Zero and free an entry. */
static void
entry_drop(Entry *e)
{
	explicit_bzero(e->cred.secret_key, strlen(e->cred.secret_key));
	explicit_bzero(e->cred.session_token, strlen(e->cred.session_token));
	pfree(e->cred.access_key);
	pfree(e->cred.secret_key);
	pfree(e->cred.session_token);
	pfree(e->key);
	pfree(e);
}

/* ------------------------------------------------------------- STS */

/*
 * The inline session policy: the prefix's objects (and listing below it),
 * read-only or read-write.
 */
static char *
session_policy(const SkadeObjectPrefix *p, bool write)
{
	StringInfoData b;
	char	   *objects;
	char	   *bucket = psprintf("arn:aws:s3:::%s", p->bucket);
	char	   *below;

	if (strpbrk(p->location, "*?$") != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot vend credentials for \"%s\": it holds '*', '?' or '$'", p->location)));
	objects = p->key[0] ? psprintf("%s/%s/*", bucket, p->key) : psprintf("%s/*", bucket);
	below = p->key[0] ? psprintf("%s/*", p->key) : "*";
	initStringInfo(&b);
	appendStringInfoString(&b, "{\"Version\":\"2012-10-17\",\"Statement\":[");
	appendStringInfoString(&b, "{\"Effect\":\"Allow\",\"Action\":[\"s3:GetObject\",\"s3:GetObjectVersion\"");
	if (write)
		appendStringInfoString(&b, ",\"s3:PutObject\",\"s3:DeleteObject\",\"s3:AbortMultipartUpload\","
							   "\"s3:ListMultipartUploadParts\"");
	appendStringInfoString(&b, "],\"Resource\":[");
	escape_json(&b, objects);
	/* (no ListBucketMultipartUploads: it would name other tables' uploads) */
	appendStringInfoString(&b, "]},{\"Effect\":\"Allow\",\"Action\":[\"s3:ListBucket\"],\"Resource\":[");
	escape_json(&b, bucket);
	appendStringInfoString(&b, "],\"Condition\":{\"StringLike\":{\"s3:prefix\":[");
	escape_json(&b, below);
	appendStringInfoString(&b, "]}}},{\"Effect\":\"Allow\",\"Action\":[\"s3:GetBucketLocation\"],\"Resource\":[");
	escape_json(&b, bucket);
	appendStringInfoString(&b, "]}]}");
	return b.data;
}

/* The form body of the AssumeRole request. */
static char *
assume_role_body(const SkadeObjectPrefix *p, bool write)
{
	StringInfoData b;
	StringInfoData session;
	const char *user = GetUserNameFromId(GetUserId(), false);
	const char *policy = session_policy(p, write);
	const char *c;

	/* the session name names the role asking (for the STS server's audit) */
	initStringInfo(&session);
	appendStringInfoString(&session, "skade-");
	for (c = user; *c && session.len < 64; c++)
		appendStringInfoChar(&session, strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
											  "0123456789+=,.@-_", *c) ? *c : '_');
	initStringInfo(&b);
	appendStringInfo(&b, "Action=AssumeRole&Version=2011-06-15&DurationSeconds=%d&RoleArn=",
					 skade_s3_vended_credentials_duration);
	SkadeUriEncode(&b, p->role_arn, strlen(p->role_arn), false);
	appendStringInfoString(&b, "&RoleSessionName=");
	SkadeUriEncode(&b, session.data, session.len, false);
	appendStringInfoString(&b, "&Policy=");
	SkadeUriEncode(&b, policy, strlen(policy), false);
	if (p->external_id[0])
	{
		appendStringInfoString(&b, "&ExternalId=");
		SkadeUriEncode(&b, p->external_id, strlen(p->external_id), false);
	}
	return b.data;
}

/* Ask STS for credentials for p. */
static void
call_sts(const SkadeObjectPrefix *p, bool write, SkadeVended *out)
{
	S3Call		c = {0};
	S3Call	   *calls[1] = {&c};
	const char *endpoint = p->sts_endpoint[0] ? p->sts_endpoint
		: psprintf("https://sts.%s.amazonaws.com", p->region);
	char	   *authority = pstrdup(strstr(endpoint, "://") + 3);
	char	   *body = assume_role_body(p, write);
	char	   *scheme = pnstrdup(endpoint, strstr(endpoint, "://") - endpoint);
	const char *host;

	if (authority[0] && authority[strlen(authority) - 1] == '/')
		authority[strlen(authority) - 1] = '\0';
	host = authority;
	c.method = "POST";
	c.url = psprintf("%s://%s/", scheme, host);
	c.host = host;
	c.canonical_uri = "/";
	c.body = body;
	c.body_len = strlen(body);
	c.content_type = "application/x-www-form-urlencoded; charset=utf-8";
	c.max_bytes = MAX_ANSWER;
	c.region = p->region;
	c.service = "sts";
	c.cred = SkadeObjectKey();
	c.timeout_ms = Min(skade_s3_request_timeout, STS_TIMEOUT_MS);
	S3Perform(calls, 1, true);
	explicit_bzero(body, strlen(body));
	if (c.too_big)
		ereport(ERROR,
				(errcode(ERRCODE_PROTOCOL_VIOLATION),
				 errmsg("cannot vend credentials: the STS endpoint %s answered more than %d bytes",
						host, MAX_ANSWER)));
	if (c.status == 0 || c.status == 429 || c.status >= 500)
		ereport(ERROR,
				(errcode(ERRCODE_CONNECTION_FAILURE),
				 errmsg("cannot vend credentials: the STS endpoint %s %s", host,
						c.status ? psprintf("answered %d", c.status)
						: c.timed_out ? "did not answer in time" : "could not be reached")));
	if (c.status != 200)
	{
		ereport(LOG,
				(errmsg("skade: STS at %s refused AssumeRole (%d %s): %s", host, c.status,
						c.s3_code ? c.s3_code : "", c.s3_message ? c.s3_message : "")));
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("cannot vend credentials: STS refused AssumeRole (%d%s%s)", c.status,
						c.s3_code ? " " : "", c.s3_code ? c.s3_code : ""),
				 errhint("The server log has STS's message; check skade.s3_sts_role_arn, its trust policy and skade's key.")));
	}
	read_answer(&c, out);
	explicit_bzero(c.body_out.data, c.body_out.len);
}

/* The credentials of an AssumeRole answer, checked. */
static void
read_answer(const S3Call *c, SkadeVended *out)
{
	char	   *expiration;
	const char *alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	TimestampTz ts = 0;
	MemoryContext cxt = CurrentMemoryContext;
	bool		readable = true;

	out->access_key = checked(&c->body_out, "AccessKeyId", 128, alnum);
	out->secret_key = checked(&c->body_out, "SecretAccessKey", 256, NULL);
	out->session_token = checked(&c->body_out, "SessionToken", 8192, NULL);
	expiration = checked(&c->body_out, "Expiration", 40, "0123456789-T:.Z+");
	PG_TRY();
	{
		ts = DatumGetTimestampTz(DirectFunctionCall3(timestamptz_in, CStringGetDatum(expiration),
													 ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1)));
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(cxt);
		FlushErrorState();
		readable = false;
	}
	PG_END_TRY();
	if (!readable || TIMESTAMP_NOT_FINITE(ts))
		ereport(ERROR,
				(errcode(ERRCODE_PROTOCOL_VIOLATION),
				 errmsg("cannot vend credentials: STS answered an expiration skade cannot read")));
	out->expires_at_ms = (int64) ((ts - SetEpochTimestamp()) / 1000);
	if (out->expires_at_ms <= now_ms())
		ereport(ERROR,
				(errcode(ERRCODE_PROTOCOL_VIOLATION),
				 errmsg("cannot vend credentials: STS answered credentials that have already expired"),
				 errhint("The server's clock may be far from the STS server's.")));
}

/*
 * The element name of an STS answer: present, at most max bytes, and of
 * the characters allowed (NULL: printable ASCII but blanks, '<', '>',
 * '&', '"' and '\\').
 */
static char *
checked(const StringInfoData *body, const char *name, size_t max, const char *allowed)
{
	char	   *v = S3XmlElement(body, name, max);
	const char *p;
	bool		ok = v != NULL && v[0] != '\0';

	for (p = v; ok && *p; p++)
		ok = allowed ? strchr(allowed, *p) != NULL
			: (*p > ' ' && *p < 0x7f && strchr("<>&\"\\", *p) == NULL);
	if (!ok)
		ereport(ERROR,
				(errcode(ERRCODE_PROTOCOL_VIOLATION),
				 errmsg("cannot vend credentials: STS answered no readable %s", name)));
	return v;
}

/* Milliseconds since the Unix epoch. */
static int64
now_ms(void)
{
	return (int64) ((GetCurrentTimestamp() - SetEpochTimestamp()) / 1000);
}
