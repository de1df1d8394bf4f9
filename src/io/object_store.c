/*-------------------------------------------------------------------------
 *
 * object_store.c
 *	  s3:// locations (s3a:// and s3n:// read as s3://): reads confined to
 *	  the s3:// entries of skade.allowed_roots, create-only writes and
 *	  removals confined to those of skade.write_roots; where requests go and
 *	  with which key.
 *
 * Invariants
 *   - A location is s3://bucket/key: a bucket of 3 to 63 letters, digits,
 *     '.', '-' or '_', a key of at most 1024 bytes with no control
 *     characters and no "." or ".." segment (a server or proxy could
 *     resolve them; S3 itself would not).  The key is compared with the
 *     roots as the literal string it is: s3://b/p allows keys "p" and
 *     "p/..." of bucket b, s3://b the whole bucket.  A location outside the
 *     roots is 42501 before anything is requested, whether or not it
 *     exists; objects are named in messages only as given.
 *   - Requests go to skade.s3_endpoint (AWS when empty) for the region and
 *     addressing of skade.s3_region and skade.s3_path_style; every request
 *     names its route (route.h), and a namespace route's s3.endpoint,
 *     s3.region and s3.path-style-access properties (or the nearest
 *     ancestor's that sets them) override them, but an endpoint must be
 *     skade.s3_endpoint or one of skade.s3_allowed_endpoints (42501
 *     otherwise): a namespace property, which writers set, never sends a
 *     request anywhere a superuser did not allow.  What an object was
 *     created by is journalled with its route as resolved (route_text), so
 *     the sweep asks where it was written.
 *   - The key comes from skade.s3_credentials_file (owned by the server's OS
 *     user, no group or other access, else 42501; profile AWS_PROFILE or
 *     "default") or else from the server's environment; it is never a
 *     setting and never appears in a message.
 *   - Objects are immutable by name, so what was read is cached by the
 *     callers like a local file; the "real path" of an object is its
 *     canonical s3://bucket/key, checked against the roots in force on
 *     every cache hit (SkadeObjectAllowed).
 *   - Writes are PUT with If-None-Match: * (an existing object is 58P02,
 *     never replaced), journalled before the request like local files
 *     (written_files.c); a create retried after a lost answer whose object
 *     then exists counts as done only if the object holds our bytes.
 *   - A request that fails (after the retries: s3_client.c) is 42501 for
 *     401/403, 58P01 for 404, 58P02 for an existing object on create,
 *     53000 for throttling (429, 503 SlowDown), 08006 for an outage (no
 *     connection, refused, timed out, dropped mid-answer, or another 5xx),
 *     its message naming the host asked and never the key, and 58030 for a
 *     body that disagrees with its length or ETag or any other answer.
 *   - Removal (at commit, abort and by the sweep) is one DELETE that waits
 *     but cannot be interrupted, runs no SQL (the route of each object is
 *     pinned, and the key loaded, when the removal is registered:
 *     SkadeObjectWritable) and reports an errno instead of raising.
 *
 * Memory: results in CurrentMemoryContext; the key lives in the "skade
 * object store" context until its file or the environment changes, the
 * last route resolved in "skade object route" for one transaction, the
 * prefetched objects in "skade object prefetch" until read or the next
 * prefetch.
 *
 * IDENTIFICATION
 *	  src/io/object_store.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include <sys/stat.h>
#include <unistd.h>

#include "access/xact.h"
#include "storage/fd.h"
#include "storage/proc.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "utils/varlena.h"

#include "util/guc.h"
#include "io/object_store.h"
#include "util/location.h"
#include "io/s3_client.h"
#include "util/sigv4.h"


/* where requests for one object go */
typedef struct S3Target
{
	char	   *url;
	char	   *host;
	char	   *canonical_uri;
	char	   *region;
} S3Target;

/* an object fetched ahead of its read */
typedef struct Prefetched
{
	char	   *canonical;
	char	   *route;			/* route_text of its route */
	S3Call	   *call;
	bool		started;
} Prefetched;

/* where an object's requests go (NULL / -1: the cluster's setting) */
typedef struct Route
{
	char	   *endpoint;		/* allowed, as normalised (endpoint_normal) */
	char	   *region;
	int			path_style;
	char	   *sts_endpoint;	/* vended credentials (not journalled) */
	char	   *role_arn;
	char	   *external_id;
} Route;

#define SETTINGS_ROUTE	{NULL, NULL, -1, NULL, NULL, NULL}

/* the route of an object a removal may come for, fixed while SQL can run */
typedef struct Pinned
{
	char	   *canonical;
	Route		route;
} Pinned;

/* the namespace route resolved last, valid for one transaction */
typedef struct Resolved
{
	char	   *catalog;		/* NULL: none */
	char	   *ns;
	LocalTransactionId lxid;	/* the transaction resolved in */
	Route		route;
} Resolved;

/* ---- Local variables ---- */

static MemoryContext store_cxt = NULL;
static MemoryContext route_cxt = NULL;	/* "skade object route": last */
static Resolved last = {NULL, NULL, InvalidLocalTransactionId, SETTINGS_ROUTE};
static S3Credentials cred;
static char *cred_source = NULL;	/* file path + mtime, or "env" + values' hash */
static List *pinned = NIL;		/* Pinned, in TopTransactionContext (NIL once
								 * that goes: forget_pinned) */
static MemoryContextCallback pinned_cb;
static MemoryContext prefetch_cxt = NULL;
static List *prefetched = NIL;	/* Prefetched, in order, not yet read */
static int	prefetch_outstanding = 0;	/* of those, started */
static bool prefetch_callback = false;

static bool in_roots(const char *setting, const S3Location *o);
static void target(const S3Location *o, const Route *r, S3Target *t);
static Route route_of(const SkadeRoute *route);
static Route route_copy(const Route *r);
static void resolve_namespace(const char *catalog, const char *ns, Route *r);
static char *route_text(const Route *r);
static bool route_parse(const char *text, Route *r);
static bool endpoint_allowed(const char *endpoint, const char *primary);
static char *endpoint_normal(const char *e, size_t len);
static const S3Credentials *credentials(void);
static void load_credentials_file(const char *path);
static S3Call *new_call(const char *method, const S3Location *o, const Route *r,
						size_t cap, const S3Credentials *key);
pg_noreturn static void report(const char *verb, const char *location, const S3Call *c);
static MemoryContext store_context(void);
static void prefetch_top_up(void);
static void prefetch_drop(Prefetched *p);
static void prefetch_reset(void);
static void prefetch_at_end(XactEvent event, void *arg);
static void pin_route(const S3Location *o, const Route *r);
static void forget_pinned(void *arg);

static SkadeNamespacePropertiesFn read_properties = NULL;
static const SkadeWriteJournal *write_journal = NULL;

/* SkadeSetWriteJournal: the journal every create goes through (skade.c) */
void
SkadeSetWriteJournal(const SkadeWriteJournal *j)
{
	write_journal = j;
}

/*
 * SkadeWriteJournalOf
 *		The journal; nothing is ever created without one.
 */
const SkadeWriteJournal *
SkadeWriteJournalOf(void)
{
	if (write_journal == NULL)
		elog(ERROR, "skade: no journal of written files");
	return write_journal;
}

/*
 * SkadeObjectSetPropertiesReader
 *		How the namespace overrides are read (skade.c: the catalog's
 *		StoreNamespaceProperties); until it is given, no namespace
 *		overrides anything.
 */
void
SkadeObjectSetPropertiesReader(SkadeNamespacePropertiesFn reader)
{
	read_properties = reader;
}

/*
 * SkadeObjectRead
 *		The bytes of the object at location by route (at most cap; gzip is
 *		the caller's business).  *real_path: its canonical location.
 */
StringInfo
SkadeObjectRead(const SkadeRoute *route, const char *location, size_t cap, char **real_path)
{
	S3Location	o;
	S3Call	   *c = NULL;
	ListCell   *lc;
	StringInfo	buf;
	Route		r;
	char	   *text;

	SkadeS3Parse(location, &o, "read", true, false);
	if (!in_roots(skade_allowed_roots, &o))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("cannot read \"%s\": it is outside skade.allowed_roots", location),
				 errhint("A superuser can allow s3://bucket/prefix entries in skade.allowed_roots.")));
	r = route_of(route);
	text = route_text(&r);
	foreach(lc, prefetched)
	{
		Prefetched *p = lfirst(lc);

		if (strcmp(p->canonical, o.canonical) == 0 &&
			(p->route == NULL ? text == NULL : text != NULL && strcmp(p->route, text) == 0))
		{
			/* reads come in order: what was passed over will not be read */
			while (linitial(prefetched) != p)
				prefetch_drop(linitial(prefetched));
			prefetched = list_delete_first(prefetched);
			if (p->started)
			{
				prefetch_outstanding--;
				c = p->call;
			}
			/* the next one starts before this one is waited for */
			prefetch_top_up();
			if (c)
				S3Finish(c, true);
			break;
		}
	}
	if (c != NULL && c->status == 200 && !c->too_big && !c->corrupt)
	{
		/* from the prefetch's memory: copied, and freed there */
		buf = makeStringInfo();
		appendBinaryStringInfo(buf, c->body_out.data ? c->body_out.data : "", c->body_out.len);
		if (c->body_out.data)
			pfree(c->body_out.data);
	}
	else
	{
		c = new_call("GET", &o, &r, cap, NULL);
		S3Perform(&c, 1, true);
		if (c->status != 200 || c->too_big || c->corrupt)
			report("read", location, c);
		/* the body was received into this context: it is the answer */
		buf = palloc(sizeof(StringInfoData));
		*buf = c->body_out;
		if (buf->data == NULL)
			initStringInfo(buf);
	}
	if (real_path)
		*real_path = o.canonical;
	return buf;
}

/*
 * SkadeObjectPrefetch
 *		Fetch the objects among locations (allowed, s3://) by route ahead of the
 *		SkadeObjectRead calls that follow, in order: at most
 *		skade.s3_max_concurrency are started and not yet read at any time,
 *		and each read starts the next before it waits, so transfers go on
 *		while the caller works on what it read.  Failures are left for those
 *		reads to retry and report.  Replaces what an earlier prefetch left;
 *		what is left at transaction end is abandoned.
 */
void
SkadeObjectPrefetch(const SkadeRoute *route, List *locations, size_t cap)
{
	ListCell   *lc;
	MemoryContext old;
	Route		r = route_of(route);

	if (prefetch_cxt == NULL)
		prefetch_cxt = AllocSetContextCreate(TopMemoryContext, "skade object prefetch",
											 ALLOCSET_DEFAULT_SIZES);
	if (!prefetch_callback)
	{
		RegisterXactCallback(prefetch_at_end, NULL);
		prefetch_callback = true;
	}
	prefetch_reset();
	old = MemoryContextSwitchTo(prefetch_cxt);
	foreach(lc, locations)
	{
		const char *loc = lfirst(lc);
		S3Location	o;

		if (SkadeIsObjectLocation(loc) && SkadeS3Parse(loc, &o, NULL, false, false) &&
			in_roots(skade_allowed_roots, &o))
		{
			Prefetched *p = palloc0(sizeof(Prefetched));

			p->canonical = o.canonical;
			p->route = route_text(&r);
			p->call = new_call("GET", &o, &r, cap, NULL);
			prefetched = lappend(prefetched, p);
		}
	}
	MemoryContextSwitchTo(old);
	prefetch_top_up();
}

/* Start prefetches in order until skade.s3_max_concurrency are outstanding. */
static void
prefetch_top_up(void)
{
	ListCell   *lc;

	foreach(lc, prefetched)
	{
		Prefetched *p = lfirst(lc);
		MemoryContext old;

		if (prefetch_outstanding >= skade_s3_max_concurrency)
			break;
		if (p->started)
			continue;
		old = MemoryContextSwitchTo(prefetch_cxt);
		S3Start(p->call);
		MemoryContextSwitchTo(old);
		p->started = true;
		prefetch_outstanding++;
	}
}

/* Drop the first prefetch (abandoned if started). */
static void
prefetch_drop(Prefetched *p)
{
	prefetched = list_delete_first(prefetched);
	if (p->started)
	{
		S3Abandon(p->call);
		if (p->call->body_out.data)
			pfree(p->call->body_out.data);
		prefetch_outstanding--;
	}
}

/* Forget every prefetch (abandoning what is in flight).  Never raises. */
static void
prefetch_reset(void)
{
	if (prefetched != NIL)
		S3AbandonAll();
	prefetched = NIL;
	prefetch_outstanding = 0;
	if (prefetch_cxt)
		MemoryContextReset(prefetch_cxt);
}

/* At transaction end nothing prefetched is kept (an error may have left some). */
static void
prefetch_at_end(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PREPARE || event == XACT_EVENT_PARALLEL_COMMIT ||
		event == XACT_EVENT_PARALLEL_ABORT)
		prefetch_reset();
}

/*
 * SkadeObjectAllowed
 *		Is the canonical location of an object read earlier inside the
 *		roots in force now?
 */
bool
SkadeObjectAllowed(const char *real_path)
{
	S3Location	o;

	return SkadeS3Parse(real_path, &o, NULL, false, false) && in_roots(skade_allowed_roots, &o);
}

/*
 * SkadeObjectWritable
 *		The write root ("s3://bucket") and key of location, which must lie
 *		inside an s3:// entry of skade.write_roots (42501 otherwise); its
 *		route is pinned for a removal at commit or abort.
 */
void
SkadeObjectWritable(const SkadeRoute *route, const char *location, const char *verb,
					char **root, char **rest)
{
	S3Location	o;
	Route		r;

	SkadeS3Parse(location, &o, verb, true, false);
	if (!in_roots(skade_write_roots, &o))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("cannot %s \"%s\": it is outside skade.write_roots", verb, location),
				 errhint("A superuser can allow s3://bucket/prefix entries in skade.write_roots.")));
	r = route_of(route);
	pin_route(&o, &r);
	*root = psprintf("s3://%s", o.bucket);
	*rest = o.key;
}

/*
 * Remember route r of o for the rest of the transaction, and load the
 * key: a removal at commit or abort, when no SQL may run, finds both.
 */
static void
pin_route(const S3Location *o, const Route *r)
{
	MemoryContext old;
	Pinned	   *p;

	(void) credentials();
	if (pinned == NIL)
	{
		pinned_cb.func = forget_pinned;
		pinned_cb.arg = NULL;
		MemoryContextRegisterResetCallback(TopTransactionContext, &pinned_cb);
	}
	old = MemoryContextSwitchTo(TopTransactionContext);
	p = palloc0(sizeof(Pinned));
	p->canonical = pstrdup(o->canonical);
	p->route.endpoint = r->endpoint ? pstrdup(r->endpoint) : NULL;
	p->route.region = r->region ? pstrdup(r->region) : NULL;
	p->route.path_style = r->path_style;
	pinned = lappend(pinned, p);
	MemoryContextSwitchTo(old);
}

/* TopTransactionContext goes, and the pinned routes with it */
static void
forget_pinned(void *arg)
{
	pinned = NIL;
}

/*
 * SkadeObjectCreate
 *		Create the object at location by route with data, never over an
 *		existing one; journalled first (with the route as resolved),
 *		remembered for the transaction after.  Returns its canonical
 *		location.
 */
char *
SkadeObjectCreate(const SkadeRoute *route, const char *location, const char *data, size_t len)
{
	char	   *root;
	char	   *key;
	S3Location	o;
	S3Call	   *c;
	Route		r = route_of(route);

	SkadeObjectWritable(route, location, "write", &root, &key);
	SkadeS3Parse(location, &o, "write", true, false);
	/* built (its route checked) before anything is journalled */
	c = new_call("PUT", &o, &r, 64 * 1024, NULL);
	SkadeWriteJournalOf()->journal(location, route_text(&r));
	c->body = data;
	c->body_len = len;
	c->create_only = true;
	c->content_type = (len >= 2 && (unsigned char) data[0] == 0x1f && (unsigned char) data[1] == 0x8b)
		? "application/gzip" : (strstr(o.key, ".json") ? "application/json" : "application/octet-stream");
	S3Perform(&c, 1, true);
	if (c->status == 412 && c->attempts > 1)
	{
		/* an earlier attempt may have created it: ours if it holds our bytes */
		S3Call	   *g = new_call("GET", &o, &r, len + 1, NULL);

		S3Perform(&g, 1, true);
		if (g->status == 200 && !g->corrupt && (size_t) g->body_out.len == len &&
			memcmp(g->body_out.data, data, len) == 0)
			c->status = 200;
	}
	if (c->status < 200 || c->status > 299)
		report("write", location, c);
	SkadeWriteJournalOf()->remember(root, key);
	return o.canonical;
}

/*
 * SkadeObjectRemove
 *		Delete the object key of root ("s3://bucket"): 0, ENOENT, EACCES or
 *		EIO.  One attempt, not interruptible (commit and abort run it).
 */
int
SkadeObjectRemove(const char *root, const char *rest)
{
	char	   *location = psprintf("%s/%s", root, rest);
	S3Location	o;
	S3Call	   *c;
	Route		r = SETTINGS_ROUTE;
	ListCell   *lc;
	int			save = skade_s3_max_retries;

	if (!SkadeS3Parse(location, &o, NULL, false, false))
		return EINVAL;
	if (cred_source == NULL)
		return EACCES;			/* no key was ever loaded: nothing to sign with */
	foreach(lc, pinned)
	{
		Pinned	   *p = lfirst(lc);

		if (strcmp(p->canonical, o.canonical) == 0)
			r = p->route;
	}
	c = new_call("DELETE", &o, &r, 64 * 1024, &cred);
	skade_s3_max_retries = 0;
	PG_TRY();
	{
		S3Perform(&c, 1, false);
	}
	PG_FINALLY();
	{
		skade_s3_max_retries = save;
	}
	PG_END_TRY();
	if (c->status == 204 || c->status == 200)
		return 0;
	return c->status == 404 ? ENOENT : c->status == 403 ? EACCES : EIO;
}

/*
 * SkadeObjectsAbsent
 *		The locations among the given (s3://, inside the read or write roots;
 *		each by the route of the same place in routes) whose HEAD says 404
 *		-- asked skade.s3_max_concurrency at a time.  Any other answer or
 *		failure counts as present.
 */
List *
SkadeObjectsAbsent(List *locations, List *routes)
{
	List	   *calls = NIL;
	List	   *names = NIL;
	List	   *absent = NIL;
	int			i;

	for (i = 0; i < list_length(locations); i++)
	{
		const char *loc = list_nth(locations, i);
		const SkadeRoute *sr = list_nth(routes, i);
		S3Location	o;
		Route		r = SETTINGS_ROUTE;

		if (!SkadeS3Parse(loc, &o, NULL, false, false) ||
			!(in_roots(skade_allowed_roots, &o) || in_roots(skade_write_roots, &o)))
			continue;
		if (sr->resolved && !route_parse(sr->resolved, &r))
			continue;			/* an endpoint no longer allowed is not asked: present */
		if (!sr->resolved)
			r = route_of(sr);
		calls = lappend(calls, new_call("HEAD", &o, &r, 64 * 1024, NULL));
		names = lappend(names, (char *) loc);
	}
	for (i = 0; i < list_length(calls); i += skade_s3_max_concurrency)
	{
		int			n = Min(skade_s3_max_concurrency, list_length(calls) - i);
		S3Call	  **batch = palloc(sizeof(S3Call *) * n);
		int			j;

		for (j = 0; j < n; j++)
			batch[j] = list_nth(calls, i + j);
		S3Perform(batch, n, true);
		for (j = 0; j < n; j++)
			if (batch[j]->status == 404)
				absent = lappend(absent, list_nth(names, i + j));
	}
	return absent;
}

/*
 * SkadeObjectProbe
 *		Could the object at location be read: OK when it is a well-formed
 *		location inside the roots (no request is made; the read may still
 *		fail), DENIED outside them, FAILED when malformed.
 */
SkadeReadStatus
SkadeObjectProbe(const char *location)
{
	S3Location	o;

	if (!SkadeS3Parse(location, &o, NULL, false, false))
		return SKADE_READ_FAILED;
	return in_roots(skade_allowed_roots, &o) ? SKADE_READ_OK : SKADE_READ_DENIED;
}

/* -------------------------------------------------------- locations */

/*
 * Is the object inside an s3:// entry of the roots setting?  The entries
 * of the last two settings asked about (allowed_roots, write_roots) are
 * kept, parsed, until the setting changes: cache hits ask on every read.
 */
static bool
in_roots(const char *setting, const S3Location *o)
{
	static char *parsed_for[2] = {NULL, NULL};
	static List *parsed[2] = {NIL, NIL};
	static int	next = 0;
	const char *value = setting ? setting : "";
	ListCell   *lc;
	int			i;

	for (i = 0; i < 2; i++)
		if (parsed_for[i] && strcmp(parsed_for[i], value) == 0)
			break;
	if (i == 2)
	{
		MemoryContext old = MemoryContextSwitchTo(store_context());
		List	   *dirs;
		List	   *prefixes;

		if (!SkadeSplitRoots(value, &dirs, &prefixes))
			prefixes = NIL;
		i = next;
		next = 1 - next;
		if (parsed_for[i])
			pfree(parsed_for[i]);
		list_free_deep(parsed[i]);
		parsed[i] = prefixes;
		parsed_for[i] = pstrdup(value);
		MemoryContextSwitchTo(old);
	}
	foreach(lc, parsed[i])
		if (SkadeS3PrefixContains(lfirst(lc), o))
			return true;
	return false;
}

/*
 * SkadeObjectPrefixRoute
 *		Where a client's requests for the objects below the location prefix
 *		go by route, for access delegation: the prefix
 *		must lie inside skade.allowed_roots (42501 otherwise, before
 *		anything is asked); p->writable says whether it lies inside
 *		skade.write_roots too.
 */
void
SkadeObjectPrefixRoute(const SkadeRoute *route, const char *location, SkadeObjectPrefix *p)
{
	S3Location	o;
	S3Target	t;
	Route		r = route_of(route);
	char	   *copy = pstrdup(location);
	size_t		n = strlen(copy);

	while (n > 0 && copy[n - 1] == '/')
		copy[--n] = '\0';
	SkadeS3Parse(copy, &o, "give access to", true, true);
	if (!in_roots(skade_allowed_roots, &o))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("cannot give access to \"%s\": it is outside skade.allowed_roots", location)));
	p->writable = in_roots(skade_write_roots, &o);
	target(&o, &r, &t);
	p->location = o.canonical;
	p->bucket = o.bucket;
	p->key = o.key;
	p->url = t.url;
	p->host = t.host;
	p->region = t.region;
	p->endpoint = r.endpoint ? r.endpoint : (skade_s3_endpoint ? skade_s3_endpoint : "");
	p->path_style = r.path_style >= 0 ? r.path_style : skade_s3_path_style;
	p->sts_endpoint = r.sts_endpoint ? r.sts_endpoint
		: (skade_s3_sts_endpoint ? skade_s3_sts_endpoint : "");
	p->role_arn = r.role_arn ? r.role_arn
		: (skade_s3_sts_role_arn ? skade_s3_sts_role_arn : "");
	p->external_id = r.external_id ? r.external_id
		: (skade_s3_sts_external_id ? skade_s3_sts_external_id : "");
}

/*
 * SkadeObjectKey
 *		skade's own key (the credentials file, else the environment): for
 *		the STS call and remote signing.
 */
const S3Credentials *
SkadeObjectKey(void)
{
	return credentials();
}

/* --------------------------------------------------------- requests */

/* The URL, Host and canonical path of a request for o by route r. */
static void
target(const S3Location *o, const Route *r, S3Target *t)
{
	const char *endpoint = skade_s3_endpoint ? skade_s3_endpoint : "";
	bool		path_style = skade_s3_path_style;
	const char *scheme;
	char	   *authority;
	StringInfoData key;

	t->region = skade_s3_region && skade_s3_region[0] ? skade_s3_region : "us-east-1";
	if (r->endpoint)
		endpoint = r->endpoint;
	if (r->region)
		t->region = r->region;
	if (r->path_style >= 0)
		path_style = r->path_style;
	if (strspn(t->region, "abcdefghijklmnopqrstuvwxyz0123456789-") != strlen(t->region))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("S3 region \"%s\" is not valid", t->region)));
	if (endpoint[0] == '\0')
		endpoint = psprintf("https://s3.%s.amazonaws.com", t->region);
	scheme = strncmp(endpoint, "https://", 8) == 0 ? "https" : "http";
	authority = pstrdup(strstr(endpoint, "://") + 3);
	if (authority[0] && authority[strlen(authority) - 1] == '/')
		authority[strlen(authority) - 1] = '\0';

	initStringInfo(&key);
	SkadeUriEncode(&key, o->key, strlen(o->key), true);
	if (path_style)
	{
		t->host = authority;
		t->canonical_uri = psprintf("/%s/%s", o->bucket, key.data);
	}
	else
	{
		t->host = psprintf("%s.%s", o->bucket, authority);
		t->canonical_uri = psprintf("/%s", key.data);
	}
	t->url = psprintf("%s://%s%s", scheme, t->host, t->canonical_uri);
}

/*
 * The route a request goes by (its strings palloc'd in CurrentMemoryContext):
 * a namespace's overrides, resolved once per transaction; a route the
 * journal recorded; or the settings alone.
 */
static Route
route_of(const SkadeRoute *route)
{
	Route		r = SETTINGS_ROUTE;
	MemoryContext old;

	if (route == NULL)
		elog(ERROR, "skade: an object request without a route");
	if (route->resolved)
	{
		if (!route_parse(route->resolved, &r))
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("the S3 endpoint an object was written to is not allowed now"),
					 errhint("A superuser can allow it in skade.s3_allowed_endpoints.")));
		return r;
	}
	if (route->catalog == NULL || route->ns == NULL || read_properties == NULL)
		return r;
	if (last.catalog && last.lxid == PGPROC_LXID(MyProc) &&
		strcmp(last.catalog, route->catalog) == 0 && strcmp(last.ns, route->ns) == 0)
		return route_copy(&last.route);
	last.catalog = NULL;		/* until resolved: an error leaves none */
	if (route_cxt == NULL)
		route_cxt = AllocSetContextCreate(TopMemoryContext, "skade object route",
										  ALLOCSET_SMALL_SIZES);
	MemoryContextReset(route_cxt);
	resolve_namespace(route->catalog, route->ns, &r);
	old = MemoryContextSwitchTo(route_cxt);
	last.catalog = pstrdup(route->catalog);
	last.ns = pstrdup(route->ns);
	last.lxid = PGPROC_LXID(MyProc);
	last.route = r;
	MemoryContextSwitchTo(old);
	return route_copy(&r);
}

/*
 * r with its strings copied into CurrentMemoryContext: what a caller keeps
 * outlives the next resolution, which resets route_cxt.
 */
static Route
route_copy(const Route *r)
{
	Route		c = *r;
	char	  **s[5] = {&c.endpoint, &c.region, &c.sts_endpoint, &c.role_arn, &c.external_id};
	int			i;

	for (i = 0; i < 5; i++)
		if (*s[i])
			*s[i] = pstrdup(*s[i]);
	return c;
}

/*
 * The s3.* properties of namespace ns of catalog or its nearest ancestors
 * into r (strings in route_cxt); an endpoint must be allowed.
 */
static void
resolve_namespace(const char *catalog, const char *ns, Route *r)
{
	char	   *n = pstrdup(ns);

	for (;;)
	{
		/* from a tuple: a short varlena header, detoasted to a plain one */
		Jsonb	   *props = DatumGetJsonbP(PointerGetDatum(read_properties(catalog, n)));
		const char *keys[6] = {"s3.endpoint", "s3.region", "s3.path-style-access",
		"sts.endpoint", "client.assume-role.arn", "client.assume-role.external-id"};
		char	  **strings[6] = {&r->endpoint, &r->region, NULL,
		&r->sts_endpoint, &r->role_arn, &r->external_id};
		int			i;
		char	   *dot;

		for (i = 0; i < 6; i++)
		{
			JsonbValue	k;
			JsonbValue *v;
			char	   *s;

			k.type = jbvString;
			k.val.string.val = (char *) keys[i];
			k.val.string.len = strlen(keys[i]);
			v = findJsonbValueFromContainer(&props->root, JB_FOBJECT, &k);
			if (v == NULL || v->type != jbvString)
				continue;
			s = MemoryContextStrdup(route_cxt,
									pnstrdup(v->val.string.val, v->val.string.len));
			if (strings[i] && *strings[i] == NULL)
				*strings[i] = s;	/* (the nearest namespace's) */
			else if (i == 2 && r->path_style < 0)
				r->path_style = pg_strcasecmp(s, "true") == 0;
		}
		dot = strrchr(n, '.');
		if (dot == NULL)
			break;
		*dot = '\0';
	}
	if (r->endpoint && !endpoint_allowed(r->endpoint, skade_s3_endpoint))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("S3 endpoint \"%s\" of namespace \"%s\" is not allowed", r->endpoint, ns),
				 errhint("A superuser can allow it in skade.s3_allowed_endpoints.")));
	if (r->sts_endpoint && !endpoint_allowed(r->sts_endpoint, skade_s3_sts_endpoint))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("STS endpoint \"%s\" of namespace \"%s\" is not allowed", r->sts_endpoint, ns),
				 errhint("A superuser can allow it in skade.s3_allowed_endpoints.")));
	if (r->endpoint)
		r->endpoint = MemoryContextStrdup(route_cxt,
										  endpoint_normal(r->endpoint, strlen(r->endpoint)));
	if (r->region && strspn(r->region, "abcdefghijklmnopqrstuvwxyz0123456789-") != strlen(r->region))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("S3 region \"%s\" of namespace \"%s\" is not valid", r->region, ns)));
}

/*
 * The route as the journal records it: "<endpoint>\t<region>\t<path style>"
 * (empty, empty, -1: the setting), NULL for the settings alone.  The
 * endpoint is allowed (no control characters), the region letters, digits
 * and '-'; the vending properties are not part of where objects are.
 */
static char *
route_text(const Route *r)
{
	if (r->endpoint == NULL && r->region == NULL && r->path_style < 0)
		return NULL;
	return psprintf("%s\t%s\t%d", r->endpoint ? r->endpoint : "",
					r->region ? r->region : "", r->path_style);
}

/* route_text's text -> r (palloc'd strings); false when malformed or not allowed */
static bool
route_parse(const char *text, Route *r)
{
	const char *tab1 = strchr(text, '\t');
	const char *tab2 = tab1 ? strchr(tab1 + 1, '\t') : NULL;

	if (tab2 == NULL)
		return false;
	r->endpoint = tab1 > text ? pnstrdup(text, tab1 - text) : NULL;
	r->region = tab2 > tab1 + 1 ? pnstrdup(tab1 + 1, tab2 - tab1 - 1) : NULL;
	if (strcmp(tab2 + 1, "-1") == 0)
		r->path_style = -1;
	else if (strcmp(tab2 + 1, "0") == 0 || strcmp(tab2 + 1, "1") == 0)
		r->path_style = tab2[1] - '0';
	else
		return false;
	/* (allowed when it was written; perhaps no longer) */
	return r->endpoint == NULL || endpoint_allowed(r->endpoint, skade_s3_endpoint);
}

/*
 * An endpoint as compared: blanks around it, a pair of double quotes (a
 * list entry may be quoted) and trailing slashes removed; NULL when
 * nothing is left.  Letters are compared without case (scheme and host).
 */
static char *
endpoint_normal(const char *e, size_t len)
{
	while (len > 0 && (*e == ' ' || *e == '\t' || *e == '\n' || *e == '\r'))
		e++, len--;
	while (len > 0 && (e[len - 1] == ' ' || e[len - 1] == '\t' || e[len - 1] == '\n' ||
					   e[len - 1] == '\r'))
		len--;
	if (len >= 2 && e[0] == '"' && e[len - 1] == '"')
		e++, len -= 2;
	while (len > 0 && e[len - 1] == '/')
		len--;
	return len > 0 ? pnstrdup(e, len) : NULL;
}

/*
 * Is endpoint primary (skade.s3_endpoint, or skade.s3_sts_endpoint) or one
 * of skade.s3_allowed_endpoints?
 * Each setting is read on its own, and either may be empty; an empty
 * entry of the list is no entry (it allows nothing, and hides nothing).
 */
static bool
endpoint_allowed(const char *endpoint, const char *primary)
{
	const char *list = skade_s3_allowed_endpoints ? skade_s3_allowed_endpoints : "";
	char	   *want;
	char	   *e;

	if (!SkadeEndpointValid(endpoint))
		return false;
	want = endpoint_normal(endpoint, strlen(endpoint));
	if (want == NULL)
		return false;
	e = primary ? endpoint_normal(primary, strlen(primary)) : NULL;
	if (e && pg_strcasecmp(e, want) == 0)
		return true;
	while (*list)
	{
		size_t		n = strcspn(list, ",");

		e = endpoint_normal(list, n);
		if (e && pg_strcasecmp(e, want) == 0)
			return true;
		list += n;
		if (*list == ',')
			list++;
	}
	return false;
}

/*
 * A call of method for o: target (by route r), key (key, else the
 * configured one) and cap filled in.
 */
static S3Call *
new_call(const char *method, const S3Location *o, const Route *r, size_t cap,
		 const S3Credentials *key)
{
	S3Call	   *c = palloc0(sizeof(S3Call));
	S3Target	t;

	target(o, r, &t);
	c->method = method;
	c->url = t.url;
	c->host = t.host;
	c->canonical_uri = t.canonical_uri;
	c->region = t.region;
	c->max_bytes = cap;
	c->cred = key ? key : credentials();
	return c;
}

/* ------------------------------------------------------- credentials */

/* The key to sign with: the credentials file, else the environment. */
static const S3Credentials *
credentials(void)
{
	const char *file = skade_s3_credentials_file;
	char	   *source;

	if (file && file[0])
	{
		struct stat st;

		if (stat(file, &st) != 0)
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("cannot read skade.s3_credentials_file: %m")));
		/* rewritten in place or replaced (a rename), to the nanosecond */
		source = psprintf("%s %lld.%09ld %lld.%09ld %llu %lld", file,
						  (long long) st.st_mtim.tv_sec, (long) st.st_mtim.tv_nsec,
						  (long long) st.st_ctim.tv_sec, (long) st.st_ctim.tv_nsec,
						  (unsigned long long) st.st_ino, (long long) st.st_size);
		if (cred_source == NULL || strcmp(cred_source, source) != 0)
			load_credentials_file(file);
	}
	else
	{
		const char *id = getenv("AWS_ACCESS_KEY_ID");
		const char *secret = getenv("AWS_SECRET_ACCESS_KEY");
		const char *token = getenv("AWS_SESSION_TOKEN");
		MemoryContext cxt = store_context();

		if (id == NULL || secret == NULL || id[0] == '\0' || secret[0] == '\0')
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("no key for S3 requests"),
					 errhint("Set skade.s3_credentials_file, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the server's environment.")));
		source = "env";
		if (cred_source == NULL || strcmp(cred_source, "env") != 0 ||
			strcmp(cred.access_key, id) != 0 || strcmp(cred.secret_key, secret) != 0)
		{
			cred.access_key = MemoryContextStrdup(cxt, id);
			cred.secret_key = MemoryContextStrdup(cxt, secret);
			cred.session_token = token && token[0] ? MemoryContextStrdup(cxt, token) : NULL;
		}
	}
	if (cred_source)
		pfree(cred_source);
	cred_source = MemoryContextStrdup(store_context(), source);
	return &cred;
}

/* Read the profile's key from an AWS shared-credentials file. */
static void
load_credentials_file(const char *path)
{
	FILE	   *f;
	struct stat st;
	char		line[2048];
	const char *profile = getenv("AWS_PROFILE");
	bool		in_profile = false;
	S3Credentials got = {0};
	MemoryContext cxt = store_context();

	if (profile == NULL || profile[0] == '\0')
		profile = "default";
	f = AllocateFile(path, "r");
	if (f == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("cannot read skade.s3_credentials_file: %m")));
	if (fstat(fileno(f), &st) != 0 || st.st_uid != geteuid() || (st.st_mode & 077) != 0)
	{
		FreeFile(f);
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("skade.s3_credentials_file must be owned by the server's user and not readable by others"),
				 errhint("chown it to the server's user and chmod it 0600.")));
	}
	while (fgets(line, sizeof(line), f))
	{
		char	   *s = line;
		char	   *eq;
		char	   *v;
		size_t		n;

		n = strcspn(s, "\r\n");
		s[n] = '\0';
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s == '[')
		{
			char	   *close = strchr(s, ']');

			in_profile = close && (size_t) (close - s - 1) == strlen(profile) &&
				strncmp(s + 1, profile, close - s - 1) == 0;
			continue;
		}
		if (!in_profile || (eq = strchr(s, '=')) == NULL)
			continue;
		v = eq + 1;
		while (eq > s && (eq[-1] == ' ' || eq[-1] == '\t'))
			eq--;
		*eq = '\0';
		while (*v == ' ' || *v == '\t')
			v++;
		n = strlen(v);
		while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
			v[--n] = '\0';
		if (strcmp(s, "aws_access_key_id") == 0)
			got.access_key = MemoryContextStrdup(cxt, v);
		else if (strcmp(s, "aws_secret_access_key") == 0)
			got.secret_key = MemoryContextStrdup(cxt, v);
		else if (strcmp(s, "aws_session_token") == 0)
			got.session_token = MemoryContextStrdup(cxt, v);
	}
	explicit_bzero(line, sizeof(line));
	FreeFile(f);
	if (got.access_key == NULL || got.secret_key == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("skade.s3_credentials_file has no key for profile \"%s\"", profile)));
	cred = got;
}

/* ------------------------------------------------------------ errors */

/*
 * Raise the error a failed call stands for (see the banner's SQLSTATEs).
 * An endpoint that cannot be reached, refuses, times out, drops the
 * connection or answers 5xx (but throttling) to the last retry is an
 * outage: 08006, naming the host asked (never the key).
 */
static void
report(const char *verb, const char *location, const S3Call *c)
{
	int			code = ERRCODE_IO_ERROR;
	const char *what;

	if (c->too_big)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("object \"%s\" is too large", location),
				 errdetail("It has more than %zu bytes.", c->max_bytes),
				 errhint("Raise skade.max_metadata_size if the object is legitimate.")));
	if (c->status == 0)
		ereport(ERROR,
				(errcode(c->unreachable ? ERRCODE_CONNECTION_FAILURE : ERRCODE_IO_ERROR),
				 errmsg("could not %s \"%s\": the S3 request to %s %s", verb, location, c->host,
						c->timed_out ? "timed out" : "failed"),
				 errdetail("After %d attempts: %s.", c->attempts, c->transport)));
	if (c->corrupt)
		ereport(ERROR,
				(errcode(ERRCODE_IO_ERROR),
				 errmsg("could not %s \"%s\": the S3 response did not match its length or ETag", verb, location),
				 errdetail("After %d attempts.", c->attempts)));
	if (c->status == 429 ||
		(c->status == 503 && c->s3_code && strcmp(c->s3_code, "SlowDown") == 0))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_RESOURCES),
				 errmsg("could not %s \"%s\": the S3 service asks to slow down", verb, location),
				 errdetail("HTTP %d, S3 error %s%s%s, after %d attempts.", c->status,
						   c->s3_code ? c->s3_code : "(none)",
						   c->s3_message ? ": " : "", c->s3_message ? c->s3_message : "",
						   c->attempts)));
	if (c->status >= 500)
		ereport(ERROR,
				(errcode(ERRCODE_CONNECTION_FAILURE),
				 errmsg("could not %s \"%s\": the S3 request to %s failed", verb, location, c->host),
				 errdetail("HTTP %d, S3 error %s%s%s, after %d attempts.", c->status,
						   c->s3_code ? c->s3_code : "(none)",
						   c->s3_message ? ": " : "", c->s3_message ? c->s3_message : "",
						   c->attempts)));
	switch (c->status)
	{
		case 401:
		case 403:
			code = ERRCODE_INSUFFICIENT_PRIVILEGE;
			what = "access denied";
			break;
		case 404:
			code = ERRCODE_UNDEFINED_FILE;
			what = "no such object";
			break;
		case 409:
		case 412:
			code = ERRCODE_DUPLICATE_FILE;
			what = "the object exists";
			break;
		default:
			what = "the S3 request failed";
			break;
	}
	ereport(ERROR,
			(errcode(code),
			 errmsg("could not %s \"%s\": %s", verb, location, what),
			 errdetail("HTTP %d, S3 error %s%s%s, after %d attempts.", c->status,
					   c->s3_code ? c->s3_code : "(none)",
					   c->s3_message ? ": " : "", c->s3_message ? c->s3_message : "",
					   c->attempts)));
}

static MemoryContext
store_context(void)
{
	if (store_cxt == NULL)
		store_cxt = AllocSetContextCreate(TopMemoryContext, "skade object store",
										  ALLOCSET_SMALL_SIZES);
	return store_cxt;
}
