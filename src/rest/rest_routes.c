/*-------------------------------------------------------------------------
 *
 * rest_routes.c
 *	  The Iceberg REST catalog's routes: which request does what, as which
 *	  role, and how an error is answered.
 *
 * Invariants
 *   - Every request but an unknown route runs in one transaction of its own
 *     (started and committed here), as the role its credentials map to
 *     (SetUserIdAndSecContext): a static token, a bearer JWT or the
 *     anonymous role, as rest_auth.c decides (else 401).  The role
 *     then meets the same privileges as in SQL: every route works through
 *     skade's SQL API (SPI, statements naming their schemas), so REST, SQL
 *     and JDBC writers serialize on the same row locks and the commit log
 *     records all three.  loadTable alone calls skade's C directly (no
 *     statement, no copy of the text before the answer), after checking
 *     the privileges skade.load_table() would need.
 *   - A route's path is /v1/{prefix}/...: the prefix is the catalog (the
 *     JDBC catalog_name), as GET /v1/config?warehouse=<catalog> announces;
 *     a namespace segment's levels are separated by 0x1F and become the
 *     dotted JDBC name (a level holding "." cannot be stored: 400).
 *   - A body reaches no JSON parser unless it is UTF-8 and nests at most
 *     REST_MAX_NESTING arrays and objects (else 400: the parser's recursion
 *     would end in a 500).
 *   - An error inside a route is caught here, its transaction aborted, and
 *     it is answered in Iceberg's error model ({"error": {message, type,
 *     code}}) with the status its SQLSTATE stands for (see error_answer):
 *     a client's mistake 4xx, an outage 503 (with Retry-After), 500 only
 *     for a fault of skade.  A non-superuser never reads a server path in
 *     an answer: a file error, or a message naming a path the request did
 *     not, is answered in general terms and logged.
 *   - An Idempotency-Key answer is stored per (role OID, key) with the
 *     method, route and body SHA-256 it answered, for 30 minutes: the same
 *     request gets it again only once its role passes the privilege checks
 *     of the route's SQL function (as the role); another request with the
 *     key is 422.  Expired answers are swept by each keyed change and by
 *     SkadeRestSweepIdempotency (a worker's idle loop).
 *   - Views are served from skade's view functions (create_view,
 *     update_view, view_metadata, ...: the extension's script), a missing one
 *     answered NoSuchViewException.
 *   - loadTable's body is the metadata text as the cache holds it, spliced
 *     in, never rebuilt; gzip-compressed once per metadata file and mode and
 *     kept in the L0 cache beside it (a derived entry, l0_cache.c); its ETag
 *     names the metadata location and the snapshots mode, and If-None-Match
 *     is answered 304 from the table's pointer alone.
 *
 * Memory: the request's context (the executor's, rest_worker.c); what SPI returns is copied
 * there before the transaction ends.
 *
 * IDENTIFICATION
 *	  src/rest/rest_routes.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "catalog/tables.h"
#include "catalog/catalog_store.h"
#include "util/guc.h"
#include "util/gzip.h"
#include "cache/l0_cache.h"
#include "io/object_store.h"
#include "rest/rest_auth.h"
#include "rest/rest_delegation.h"
#include "rest/rest_http.h"
#include "rest/rest_request.h"
#include "rest/rest_routes.h"
#include "writer/commit_group.h"
#include "util/sigv4.h"
#include "util/skade_limits.h"
#include "util/location.h"

#define MAX_ARGS 8

/* the end of a table answer with nothing delegated */
#define UNDELEGATED_TAIL ",\"config\":{}}"

/* a table or view identifier of namespace $1 and name n, as JSON */
#define IDENTIFIER_SQL \
	"pg_catalog.jsonb_build_object('namespace', pg_catalog.to_jsonb(pg_catalog.string_to_array($1, '.')), 'name', n)"

/* what a route works on */
typedef struct Ctx
{
	RestRequest *req;
	RestResponse *resp;
	MemoryContext cxt;			/* the request's */
	const char *catalog;		/* the prefix */
	char	   *ns;				/* dotted, or NULL */
	char	   *name;			/* table or view, or NULL */
	bool		view;			/* a view route (for the error type) */
	bool		named;			/* the path names the table or view */
	bool		bad_ns;			/* a level of the path's namespace holds "." */
	char	   *source;			/* rename: "ns.name" moved */
	char	   *target;			/* create, register, rename: "ns.name" made */
	char	   *target_kind;	/* what held target before: TABLE, VIEW or NULL */
	const struct Route *route;	/* the route taken */
	Oid			role;			/* the request's role, once authenticated */
	bool		superuser;		/* ... is a superuser (sees server paths) */
	int			undelegated_len;	/* > 0: the answer's length before its delegated
									 * config (what an Idempotency-Key keeps) */
} Ctx;

typedef void (*Handler) (Ctx *x);

typedef struct Route
{
	const char *method;
	const char *pattern;		/* after "v1/": {p} prefix, {ns} namespace, {t} table */
	Handler		handler;
	const char *function;		/* the SQL function whose privileges a replay of
								 * its answer needs: changes only, else NULL */
} Route;

static void config(Ctx *x);
static void list_namespaces(Ctx *x);
static void create_namespace(Ctx *x);
static void load_namespace(Ctx *x);
static void namespace_exists(Ctx *x);
static void drop_namespace(Ctx *x);
static void update_properties(Ctx *x);
static void list_tables(Ctx *x);
static void create_table(Ctx *x);
static void load_table(Ctx *x);
static void table_exists(Ctx *x);
static void commit_table(Ctx *x);
static void drop_table(Ctx *x);
static void register_table(Ctx *x);
static void report_metrics(Ctx *x);
static void rename_table(Ctx *x);
static void commit_transaction(Ctx *x);
static void list_views(Ctx *x);
static void create_view(Ctx *x);
static void load_view(Ctx *x);
static void view_exists(Ctx *x);
static void replace_view(Ctx *x);
static void drop_view(Ctx *x);
static void rename_view(Ctx *x);
static void view_answer(Ctx *x);
static void register_view(Ctx *x);
static void plan_scan(Ctx *x);
static void fetch_plan(Ctx *x);
static void cancel_plan(Ctx *x);
static void fetch_tasks(Ctx *x);
static void metrics_access(Ctx *x);
static void load_credentials(Ctx *x);
static void sign_request(Ctx *x);
static void events(Ctx *x);

static const Route routes[] = {
	{"GET", "config", config, NULL},
	{"GET", "{p}/namespaces", list_namespaces, NULL},
	{"POST", "{p}/namespaces", create_namespace, "skade.create_namespace(text,jsonb,text)"},
	{"GET", "{p}/namespaces/{ns}", load_namespace, NULL},
	{"HEAD", "{p}/namespaces/{ns}", namespace_exists, NULL},
	{"DELETE", "{p}/namespaces/{ns}", drop_namespace, "skade.drop_namespace(text,text)"},
	{"POST", "{p}/namespaces/{ns}/properties", update_properties, "skade.update_namespace_properties(text,jsonb,text[],text)"},
	{"GET", "{p}/namespaces/{ns}/tables", list_tables, NULL},
	{"POST", "{p}/namespaces/{ns}/tables", create_table, "skade.create_table(text,text,jsonb,jsonb,jsonb,jsonb,text,integer,text)"},
	{"GET", "{p}/namespaces/{ns}/tables/{t}", load_table, NULL},
	{"HEAD", "{p}/namespaces/{ns}/tables/{t}", table_exists, NULL},
	{"POST", "{p}/namespaces/{ns}/tables/{t}", commit_table, "skade.update_table(text,text,jsonb,jsonb,text)"},
	{"DELETE", "{p}/namespaces/{ns}/tables/{t}", drop_table, "skade.drop_table(text,text,text)"},
	{"POST", "{p}/namespaces/{ns}/register", register_table, "skade.register_table(text,text,text,text)"},
	{"POST", "{p}/namespaces/{ns}/tables/{t}/metrics", report_metrics, NULL},
	{"POST", "{p}/tables/rename", rename_table, "skade.rename_table(text,text,text,text,text)"},
	{"POST", "{p}/transactions/commit", commit_transaction, "skade.update_table(text,text,jsonb,jsonb,text)"},
	{"GET", "{p}/namespaces/{ns}/views", list_views, NULL},
	{"POST", "{p}/namespaces/{ns}/views", create_view, "skade.create_view(text,text,jsonb,text)"},
	{"GET", "{p}/namespaces/{ns}/views/{v}", load_view, NULL},
	{"HEAD", "{p}/namespaces/{ns}/views/{v}", view_exists, NULL},
	{"POST", "{p}/namespaces/{ns}/views/{v}", replace_view, "skade.update_view(text,text,jsonb,jsonb,text)"},
	{"DELETE", "{p}/namespaces/{ns}/views/{v}", drop_view, "skade.drop_view(text,text,text)"},
	{"POST", "{p}/views/rename", rename_view, "skade.rename_view(text,text,text,text,text)"},
	{"POST", "{p}/namespaces/{ns}/register-view", register_view, "skade.register_view(text,text,text,text)"},
	{"POST", "{p}/namespaces/{ns}/tables/{t}/plan", plan_scan, "skade.plan_table_scan(text,text,jsonb,text)"},
	{"GET", "{p}/namespaces/{ns}/tables/{t}/plan/{id}", fetch_plan, NULL},
	{"DELETE", "{p}/namespaces/{ns}/tables/{t}/plan/{id}", cancel_plan, NULL},
	{"POST", "{p}/namespaces/{ns}/tables/{t}/tasks", fetch_tasks, NULL},
	{"GET", "{p}/namespaces/{ns}/tables/{t}/credentials", load_credentials, NULL},
	{"POST", "{p}/namespaces/{ns}/tables/{t}/sign", sign_request, NULL},
	{"POST", "{p}/events", events, "skade.rest_events(jsonb,text)"},
};

static bool match(const Route *r, RestRequest *req, Ctx *x, bool *path_ok);
static bool acceptable_body(Ctx *x);
static char *dotted(const char *segment);
static void run(Ctx *x, Handler h);
static Oid	authenticate(Ctx *x);
static bool keyed(Ctx *x);
static bool acceptable_key(Ctx *x);
static bool stored_answer(Ctx *x, char **status, char **body);
static void replay(Ctx *x, const char *status, const char *body);
static void remember(Ctx *x);
static const char **key_args(Ctx *x, const char **args);
static void require_route_privilege(Ctx *x);
static void answer_error(Ctx *x, int status, const char *type, const char *message);
static void error_answer(Ctx *x, ErrorData *e);
static char *quoted(const char *msg);
static const char *iceberg_message(Ctx *x, ErrorData *e, const char *type, const char *msg);
static bool names_server_path(Ctx *x, const char *msg);
static bool named_by_request(Ctx *x, const char *token, size_t len);
static void note_target(Ctx *x, const char *ns_json_sql, const char *name_sql, const char *source_sql);
static char *q1(Ctx *x, const char *sql, int nargs, const char **args);
static bool qrow(Ctx *x, const char *sql, int nargs, const char **args, int ncols, char **out);
static void json_body(Ctx *x, int status, const char *sql, int nargs, const char **args);
static void paged(Ctx *x, const char *set_sql, const char *key, const char *item_sql, const char *ns);
static void table_answer(Ctx *x, const char *mode, bool cached_gzip);
static void append_answer(StringInfo b, const char *location, const struct varlena *json);
static void append_head(StringInfo b, const char *location, const struct varlena *json);
static bool delegated_tail(Ctx *x, const char *location, bool refs, StringInfo tail);
static RestTableRef table_ref(Ctx *x);
static RestTableRef loaded_table_ref(Ctx *x);
static void *gzipped(StringInfo b, Size *size);
static void *gzip_answer(const struct varlena *json, void *arg, Size *size);
static void *gzip_head(const struct varlena *json, void *arg, Size *size);
static void require_load_privilege(void);
static void require_privilege(const char *signature);
static char *etag_of(const char *location, const char *mode);
static bool etag_matches(const char *header, const char *etag);
static bool vended_asked(Ctx *x, const char *metadata_location);
static void redelegate(Ctx *x);

/*
 * SkadeRestRoute
 *		Answer req (never raises for what a request holds).
 */
void
SkadeRestRoute(RestRequest *req, RestResponse *resp)
{
	Ctx			x = {0};
	bool		path_ok = false;
	int			i;

	x.req = req;
	x.resp = resp;
	x.cxt = CurrentMemoryContext;
	resp->status = 500;
	if (strcmp(req->raw_path, "/metrics") == 0 && strcmp(req->method, "GET") == 0)
	{
		/* (the listener answers loopback clients itself and renders the rest) */
		static const Route metrics = {"GET", "metrics", metrics_access, NULL};

		resp->route = metrics.pattern;
		x.route = &metrics;
		x.catalog = "";
		run(&x, metrics_access);
		return;
	}
	if (list_length(req->segments) < 2 || strcmp(linitial(req->segments), "v1") != 0)
	{
		answer_error(&x, 404, "NoSuchEndpointException", "no such endpoint");
		return;
	}
	for (i = 0; i < lengthof(routes); i++)
		if (match(&routes[i], req, &x, &path_ok))
		{
			resp->route = routes[i].pattern;
			if (x.bad_ns)
				answer_error(&x, 400, "IllegalArgumentException",
							 "a namespace level cannot hold \".\" in this catalog");
			else if (acceptable_body(&x))
			{
				x.route = &routes[i];
				run(&x, routes[i].handler);
			}
			return;
		}
	if (path_ok)
		answer_error(&x, 405, "BadRequestException", "method not allowed on this route");
	else
		answer_error(&x, 404, "NoSuchEndpointException", "no such endpoint");
}

/* Does req take route r?  Captures its prefix, namespace and table. */
static bool
match(const Route *r, RestRequest *req, Ctx *x, bool *path_ok)
{
	char	   *pattern = pstrdup(r->pattern);
	char	   *save = NULL;
	char	   *p;
	ListCell   *lc = list_second_cell(req->segments);
	const char *catalog = NULL;
	const char *ns = NULL;
	const char *name = NULL;

	for (p = strtok_r(pattern, "/", &save); p; p = strtok_r(NULL, "/", &save))
	{
		const char *seg;

		if (lc == NULL)
			return false;
		seg = lfirst(lc);
		if (strcmp(p, "{p}") == 0)
			catalog = seg;
		else if (strcmp(p, "{ns}") == 0)
			ns = seg;
		else if (strcmp(p, "{t}") == 0 || strcmp(p, "{v}") == 0)
			name = seg;
		else if (strcmp(p, "{id}") == 0)
			;					/* a plan id: none is kept (plans complete at once) */
		else if (strcmp(p, seg) != 0)
			return false;
		lc = lnext(req->segments, lc);
	}
	if (lc != NULL)
		return false;
	*path_ok = true;
	if (strcmp(r->method, req->method) != 0)
		return false;
	x->catalog = catalog && catalog[0] ? catalog : NULL;
	x->ns = ns ? dotted(ns) : NULL;
	x->bad_ns = ns && x->ns == NULL;
	x->name = name ? pstrdup(name) : NULL;
	x->view = strstr(r->pattern, "views") != NULL;
	x->named = name != NULL;
	return true;
}

/*
 * Iceberg's metadata nests a few levels deep; a body nested deeper than this
 * is refused before it reaches the JSON parser (whose recursion would hit
 * the stack depth limit: a 500)
 */
#define REST_MAX_NESTING 512

/*
 * A request body is UTF-8 and nests at most REST_MAX_NESTING arrays and
 * objects (brackets outside strings), else the answer is 400 (false); that
 * it is JSON is for the parser to say.
 */
static bool
acceptable_body(Ctx *x)
{
	const char *p = x->req->body.data;
	const char *end = p + x->req->body.len;
	bool		in_string = false;
	int			depth = 0;

	if (x->req->body.len == 0)
		return true;
	if (pg_encoding_verifymbstr(PG_UTF8, p, x->req->body.len) != x->req->body.len)
	{
		answer_error(x, 400, "BadRequestException", "the request body is not valid UTF-8");
		return false;
	}
	for (; p < end; p++)
	{
		if (in_string)
		{
			if (*p == '\\')
				p++;			/* the escaped character, whatever it is */
			else if (*p == '"')
				in_string = false;
		}
		else if (*p == '"')
			in_string = true;
		else if (*p == '[' || *p == '{')
		{
			if (++depth > REST_MAX_NESTING)
			{
				answer_error(x, 400, "BadRequestException",
							 psprintf("the request body nests deeper than %d levels", REST_MAX_NESTING));
				return false;
			}
		}
		else if (*p == ']' || *p == '}')
			depth--;
	}
	return true;
}

/*
 * A namespace segment (levels separated by 0x1F) as its dotted name; NULL
 * when a level holds a "." (the JDBC name could not tell it from two).
 */
static char *
dotted(const char *segment)
{
	char	   *s = pstrdup(segment);
	char	   *p;

	if (strchr(s, '.'))
		return NULL;
	for (p = s; *p; p++)
		if (*p == '\x1f')
			*p = '.';
	return s;
}

/* ----------------------------------------------------------- the frame */

/*
 * Run route h in a transaction of its own, as the request's role; an
 * error becomes the answer.
 */
static void
run(Ctx *x, Handler h)
{
	ErrorData  *volatile edata = NULL;
	Oid			save_user;
	int			save_sec;

	pgstat_report_activity(STATE_RUNNING, psprintf("%s %s", x->req->method, x->req->raw_path));
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PG_TRY();
	{
		Oid			role;

		PushActiveSnapshot(GetTransactionSnapshot());
		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "SPI_connect failed");
		role = authenticate(x);
		if (OidIsValid(role) && acceptable_key(x))
		{
			char	   *status = NULL;
			char	   *body = NULL;
			bool		stored;

			x->role = role;
			x->superuser = superuser_arg(role);
			/* as the worker: the answers are the extension owner's */
			stored = keyed(x) && stored_answer(x, &status, &body);
			GetUserIdAndSecContext(&save_user, &save_sec);
			SetUserIdAndSecContext(role, save_sec | SECURITY_LOCAL_USERID_CHANGE);
			if (x->catalog == NULL)
				x->catalog = SkadeResolveCatalog(NULL);
			if (stored)
				replay(x, status, body);
			else
				h(x);
			SetUserIdAndSecContext(save_user, save_sec);
			if (!stored)
				remember(x);
		}
		SPI_finish();
		PopActiveSnapshot();
		CommitTransactionCommand();
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(x->cxt);
		edata = CopyErrorData();
		FlushErrorState();
		AbortCurrentTransaction();
	}
	PG_END_TRY();
	MemoryContextSwitchTo(x->cxt);
	if (edata)
		error_answer(x, edata);
	pgstat_report_activity(STATE_IDLE, NULL);
}

/*
 * The role of the request's credentials (rest_auth.c), or InvalidOid with
 * a 401 answer.  Runs as the worker's superuser, before the switch.
 */
static Oid
authenticate(Ctx *x)
{
	const char *problem;
	Oid			role = RestAuthenticate(x->req->authorization, &problem);

	if (!OidIsValid(role))
		answer_error(x, 401, "NotAuthorizedException", problem);
	return role;
}

/* ------------------------------------------------------- idempotency */

#define IDEMPOTENCY_LIFETIME "30 minutes"
#define IDEMPOTENCY_KEY_MAX 255

/* the expired answers */
#define SWEEP_SQL \
	"DELETE FROM skade.rest_idempotency i WHERE i.created_at OPERATOR(pg_catalog.<)" \
	" (pg_catalog.now() OPERATOR(pg_catalog.-) '" IDEMPOTENCY_LIFETIME "'::pg_catalog.interval)"

/*
 * Does the request's Idempotency-Key count?  On a change route only (one
 * with a SQL function behind it): GET, HEAD, metrics and the plan routes
 * change nothing, so nothing of theirs is stored or replayed.
 */
static bool
keyed(Ctx *x)
{
	/* (the events route only reads, although it is a POST: no key is remembered) */
	return x->req->idempotency_key != NULL && x->route->function != NULL &&
		strcmp(x->req->method, "GET") != 0 && strcmp(x->req->method, "HEAD") != 0 &&
		x->route->handler != events;
}

/*
 * A change request's Idempotency-Key is 1..255 bytes of UTF-8, else the
 * answer is 400 (false).
 */
static bool
acceptable_key(Ctx *x)
{
	const char *k = x->req->idempotency_key;
	int			len;

	if (k == NULL || strcmp(x->req->method, "GET") == 0 || strcmp(x->req->method, "HEAD") == 0)
		return true;
	len = strlen(k);
	if (len == 0 || len > IDEMPOTENCY_KEY_MAX ||
		pg_encoding_verifymbstr(PG_UTF8, k, len) != len)
	{
		answer_error(x, 400, "BadRequestException",
					 psprintf("an Idempotency-Key must be 1 to %d bytes of UTF-8", IDEMPOTENCY_KEY_MAX));
		return false;
	}
	return true;
}

/*
 * What an answer is stored under, as the text arguments $1..$5: the role's
 * OID, the key, the method, the route (the path as sent, and whether a
 * drop purges) and the SHA-256 of the body, in hex.
 */
static const char **
key_args(Ctx *x, const char **args)
{
	const char *purge = RestQueryArg(x->req, "purgeRequested");
	char	   *hex = palloc(65);

	SkadeSha256Hex(x->req->body.data, x->req->body.len, hex);
	args[0] = psprintf("%u", x->role);
	args[1] = x->req->idempotency_key;
	args[2] = x->req->method;
	args[3] = purge && pg_strcasecmp(purge, "true") == 0
		? psprintf("%s?purgeRequested=true", x->req->raw_path) : x->req->raw_path;
	args[4] = hex;
	return args;
}

/*
 * The answer stored for the role's key (unexpired), in *status and *body;
 * false when there is none.  A key used for another request (method, path
 * or body) answers 422 instead of a replay (*status NULL).  The key is
 * locked for the transaction first, so a concurrent retry waits for the
 * original.  Runs as the worker.
 */
static bool
stored_answer(Ctx *x, char **status, char **body)
{
	const char *args[5];
	char	   *row[3];

	key_args(x, args);
	(void) q1(x, "SELECT pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext("
			  "'skade rest ' OPERATOR(pg_catalog.||) $1 OPERATOR(pg_catalog.||) ':' OPERATOR(pg_catalog.||) $2))",
			  2, args);
	if (!qrow(x, "SELECT i.status::pg_catalog.text, i.body,"
			  " (i.method OPERATOR(pg_catalog.=) $3 AND i.route OPERATOR(pg_catalog.=) $4"
			  "  AND i.body_sha256 OPERATOR(pg_catalog.=) pg_catalog.decode($5, 'hex'))"
			  " FROM skade.rest_idempotency i"
			  " WHERE i.role_oid OPERATOR(pg_catalog.=) $1::pg_catalog.oid AND i.key OPERATOR(pg_catalog.=) $2"
			  " AND i.created_at OPERATOR(pg_catalog.>) (pg_catalog.now() OPERATOR(pg_catalog.-) '"
			  IDEMPOTENCY_LIFETIME "'::pg_catalog.interval)", 5, args, 3, row))
		return false;
	*status = strcmp(row[2], "t") == 0 ? row[0] : NULL;
	*body = row[1];
	return true;
}

/*
 * Answer a stored answer again (status NULL: the key's request was another,
 * 422), once the role is known to be allowed to make the request still:
 * the same privileges as the route's SQL function needs.  Runs as the role.
 */
static void
replay(Ctx *x, const char *status, const char *body)
{
	if (status == NULL)
	{
		answer_error(x, 422, "UnprocessableEntityException",
					 "this Idempotency-Key was used for another request");
		return;
	}
	require_route_privilege(x);
	x->resp->status = atoi(status);
	x->resp->replayed = true;
	x->resp->etag = NULL;
	resetStringInfo(&x->resp->body);
	appendStringInfoString(&x->resp->body, body ? body : "");
	redelegate(x);
}

/*
 * A replayed table answer (stored without its delegated config) gets the
 * config and credentials the request asks for now.
 */
static void
redelegate(Ctx *x)
{
	StringInfo	b = &x->resp->body;
	size_t		n = strlen(UNDELEGATED_TAIL);
	const char *location;
	StringInfoData tail;

	if (RestDelegationAsked(x->req, (RestDelegation[2]) {0}) == 0 ||
		b->len < (int) n || strcmp(b->data + b->len - n, UNDELEGATED_TAIL) != 0)
		return;
	if (x->name == NULL && x->req->body.len)	/* create, register: the body names it */
		x->name = q1(x, "SELECT $1::pg_catalog.jsonb ->> 'name'", 1, (const char **) &x->req->body.data);
	if (x->name == NULL)
		return;
	location = q1(x, "SELECT $1::pg_catalog.jsonb ->> 'metadata-location'", 1, (const char **) &b->data);
	initStringInfo(&tail);
	if (location == NULL || !delegated_tail(x, location, false, &tail))
		return;
	b->len -= n;
	b->data[b->len] = '\0';
	appendBinaryStringInfo(b, tail.data, tail.len);
	explicit_bzero(tail.data, tail.len);
}

/*
 * The privileges of the route's SQL function (a drop that purges:
 * purge_table's), as calling it would check them.
 */
static void
require_route_privilege(Ctx *x)
{
	const char *fn = x->route->function;
	const char *purge = RestQueryArg(x->req, "purgeRequested");

	if (fn == NULL)
		return;
	if (x->route->handler == drop_table && purge && pg_strcasecmp(purge, "true") == 0)
		fn = "skade.purge_table(text,text,text)";
	require_privilege(fn);
}

/*
 * Store a keyed change's answer (not a 5xx), after sweeping the expired
 * ones.  Runs as the worker, in the change's transaction.
 */
static void
remember(Ctx *x)
{
	const char *args[7];

	if (!keyed(x) || x->resp->status >= 500)
		return;
	key_args(x, args);
	args[5] = psprintf("%d", x->resp->status);
	args[6] = x->resp->body.data;
	if (x->undelegated_len > 0)
	{
		/* credentials are never stored: a replay delegates afresh */
		args[6] = psprintf("%.*s%s", x->undelegated_len, x->resp->body.data, UNDELEGATED_TAIL);
	}
	(void) q1(x, SWEEP_SQL, 0, NULL);
	(void) q1(x, "INSERT INTO skade.rest_idempotency (role_oid, key, method, route, body_sha256, status, body)"
			  " VALUES ($1::pg_catalog.oid, $2, $3, $4, pg_catalog.decode($5, 'hex'), $6::pg_catalog.int4, $7)"
			  " ON CONFLICT (role_oid, key) DO UPDATE SET method = excluded.method, route = excluded.route,"
			  " body_sha256 = excluded.body_sha256, status = excluded.status, body = excluded.body,"
			  " created_at = excluded.created_at", 7, args);
}

/*
 * SkadeRestSweepIdempotency
 *		Delete the expired Idempotency-Key answers, in a transaction of its
 *		own (call it outside one, e.g. from a REST worker's idle loop).  A
 *		failure is logged as a WARNING and its transaction aborted; a
 *		database without skade has nothing to sweep.
 */
void
SkadeRestSweepIdempotency(void)
{
	MemoryContext cxt = CurrentMemoryContext;

	Assert(!IsTransactionState());
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PG_TRY();
	{
		Oid			nsp;

		PushActiveSnapshot(GetTransactionSnapshot());
		nsp = get_namespace_oid("skade", true);
		if (OidIsValid(nsp) && OidIsValid(get_relname_relid("rest_idempotency", nsp)))
		{
			if (SPI_connect() != SPI_OK_CONNECT)
				elog(ERROR, "SPI_connect failed");
			if (SPI_execute(SWEEP_SQL, false, 0) != SPI_OK_DELETE)
				elog(ERROR, "could not delete the expired Idempotency-Key answers");
			SPI_finish();
		}
		PopActiveSnapshot();
		CommitTransactionCommand();
	}
	PG_CATCH();
	{
		ErrorData  *e;

		MemoryContextSwitchTo(cxt);
		e = CopyErrorData();
		FlushErrorState();
		AbortCurrentTransaction();
		MemoryContextSwitchTo(cxt);
		ereport(WARNING,
				(errcode(e->sqlerrcode),
				 errmsg("could not sweep the expired REST Idempotency-Key answers: %s", e->message)));
		FreeErrorData(e);
	}
	PG_END_TRY();
}

/* ------------------------------------------------------------ answers */

/* An error in Iceberg's model (rest_request.c: a 503 says when to retry). */
static void
answer_error(Ctx *x, int status, const char *type, const char *message)
{
	RestErrorAnswer(x->resp, status, type, message);
}

/* The answer an ERROR stands for, by its SQLSTATE. */
static void
error_answer(Ctx *x, ErrorData *e)
{
	int			status = 500;
	const char *type = "InternalServerError";
	const char *msg = e->message ? e->message : "error";

	switch (e->sqlerrcode)
	{
		case ERRCODE_UNDEFINED_SCHEMA:	/* (= invalid_schema_name) */
		case ERRCODE_INVALID_CATALOG_NAME:	/* a catalog with nothing in it yet */
			status = 404;
			type = "NoSuchNamespaceException";
			break;
		case ERRCODE_UNDEFINED_TABLE:
		case ERRCODE_WRONG_OBJECT_TYPE:	/* a view named on a table route */
			status = 404;
			type = x->view ? "NoSuchViewException" : "NoSuchTableException";
			break;
		case ERRCODE_UNIQUE_VIOLATION:
		case ERRCODE_DUPLICATE_TABLE:
		case ERRCODE_DUPLICATE_SCHEMA:
			status = 409;
			type = "AlreadyExistsException";
			break;
		case ERRCODE_DEPENDENT_OBJECTS_STILL_EXIST:
			status = 409;
			type = "NamespaceNotEmptyException";
			break;
		case ERRCODE_T_R_SERIALIZATION_FAILURE:
		case ERRCODE_T_R_DEADLOCK_DETECTED:
		case ERRCODE_LOCK_NOT_AVAILABLE:
			status = 409;
			type = "CommitFailedException";
			break;
		case ERRCODE_INSUFFICIENT_PRIVILEGE:
			status = 403;
			type = "ForbiddenException";
			break;
		case ERRCODE_FEATURE_NOT_SUPPORTED:
			status = 406;
			type = "UnsupportedOperationException";
			break;
		case ERRCODE_READ_ONLY_SQL_TRANSACTION:	/* a standby */
		case ERRCODE_QUERY_CANCELED:	/* statement_timeout, a cancel */
		case ERRCODE_IO_ERROR:	/* the storage failing: an outage */
			status = 503;
			type = "ServiceUnavailableException";
			break;
		case ERRCODE_UNDEFINED_FILE:
			/* a file named or needed that is not there (Iceberg's servers: 404) */
			status = 404;
			type = "NotFoundException";
			break;
		case ERRCODE_DUPLICATE_FILE:	/* a concurrent writer's file */
			status = 409;
			type = "CommitFailedException";
			break;
		case ERRCODE_INVALID_PARAMETER_VALUE:
		case ERRCODE_NULL_VALUE_NOT_ALLOWED:
		case ERRCODE_NO_DATA_FOUND:	/* a snapshot the table does not have */
			/* Java's clients raise IllegalArgumentException for this type */
			status = 400;
			type = "IllegalArgumentException";
			break;
		default:
			switch (ERRCODE_TO_CATEGORY(e->sqlerrcode))
			{
				case ERRCODE_DATA_EXCEPTION:
				case ERRCODE_SYNTAX_ERROR_OR_ACCESS_RULE_VIOLATION:
				case ERRCODE_PROGRAM_LIMIT_EXCEEDED:	/* what the request holds is too big */
					status = 400;
					type = "BadRequestException";
					break;
				case ERRCODE_INSUFFICIENT_RESOURCES:
				case ERRCODE_CONNECTION_EXCEPTION:	/* the object store unreachable */
					status = 503;
					type = "ServiceUnavailableException";
					break;
			}
			break;
	}
	/* a table or view route whose namespace is missing: the table is */
	if (strcmp(type, "NoSuchNamespaceException") == 0 && x->named)
		type = x->view ? "NoSuchViewException" : "NoSuchTableException";
	msg = iceberg_message(x, e, type, msg);
	/*
	 * Server paths are the superuser's to see: a file error, or a message
	 * naming a path or URI the request did not, is answered in general
	 * terms, its message logged
	 */
	if (!x->superuser &&
		(ERRCODE_TO_CATEGORY(e->sqlerrcode) == ERRCODE_SYSTEM_ERROR || names_server_path(x, msg)))
	{
		ereport(LOG,
				(errmsg("skade REST %s %s: %s", x->req->method, x->req->raw_path, msg)));
		msg = status == 404 ? "the metadata file could not be read: it does not exist"
			: status == 503 ? "the storage is not available; try again"
			: status == 403 ? "a location the request needs is not allowed"
			: "the request failed on a file or location";
		msg = psprintf("%s (the server log has the details)", msg);
	}
	else if (status == 500)
		ereport(LOG,
				(errmsg("skade REST %s %s: %s", x->req->method, x->req->raw_path, msg)));
	answer_error(x, status, type, msg);
}

/*
 * Does msg name an absolute path or a URI (file:, s3://, ...) the request
 * did not name itself?
 */
static bool
names_server_path(Ctx *x, const char *msg)
{
	const char *p;

	for (p = msg; *p; p++)
	{
		const char *start = NULL;
		const char *end;

		if (*p == '/' && (p == msg || strchr(" \"'(=", p[-1]) != NULL) &&
			p[1] != '\0' && p[1] != ' ')
			start = p;			/* an absolute path */
		else if (pg_strncasecmp(p, "file:", 5) == 0 || strncmp(p, "://", 3) == 0)
		{
			/* a URI: back to its scheme */
			for (start = p; start > msg && (isalnum((unsigned char) start[-1]) ||
											start[-1] == '+' || start[-1] == '-' || start[-1] == '.'); start--)
				;
		}
		if (start == NULL)
			continue;
		for (end = p; *end && *end != '"' && *end != '\'' && !isspace((unsigned char) *end); end++)
			;
		if (!named_by_request(x, start, end - start))
			return true;
		p = end - 1;
	}
	return false;
}

/* Does the request's path or body hold the len bytes of token? */
static bool
named_by_request(Ctx *x, const char *token, size_t len)
{
	char	   *t = pnstrdup(token, len);
	ListCell   *lc;

	if (strstr(x->req->raw_path, t) || (x->req->body.len > 0 && strstr(x->req->body.data, t)))
		return true;
	foreach(lc, x->req->segments)
		if (strstr((const char *) lfirst(lc), t))
			return true;
	return false;
}

/* The first "quoted" part of a message, or NULL. */
static char *
quoted(const char *msg)
{
	const char *a = strchr(msg, '"');
	const char *b = a ? strchr(a + 1, '"') : NULL;

	return b ? pnstrdup(a + 1, b - a - 1) : NULL;
}

/*
 * The message Iceberg's own catalogs give for the common errors (clients
 * and Iceberg's conformance tests match on them); any other as it is.
 */
static const char *
iceberg_message(Ctx *x, ErrorData *e, const char *type, const char *msg)
{
	char	   *q = quoted(msg);
	char	   *here = x->ns && x->name ? psprintf("%s.%s", x->ns, x->name) : NULL;

	if (strcmp(type, "NoSuchNamespaceException") == 0)
		return psprintf("Namespace does not exist: %s",
						strncmp(msg, "namespace", 9) == 0 && q ? q : (x->ns ? x->ns : ""));
	if (strcmp(type, "NoSuchTableException") == 0)
		return psprintf("Table does not exist: %s", x->source ? x->source : here ? here : q ? q : "");
	if (strcmp(type, "NoSuchViewException") == 0)
		return psprintf("View does not exist: %s", x->source ? x->source : here ? here : q ? q : "");
	if (strcmp(type, "AlreadyExistsException") == 0)
	{
		/* what holds the name: noted before, else as the message says */
		bool		is_view = x->target_kind ? strcmp(x->target_kind, "VIEW") == 0
			: strncmp(msg, "view", 4) == 0;
		const char *t = x->target ? x->target : q ? q : "";

		if (strncmp(msg, "namespace", 9) == 0)
			return psprintf("Namespace already exists: %s", q ? q : "");
		if (x->source && (is_view || x->view))
			return psprintf("Cannot rename %s to %s. %s already exists", x->source, t,
							is_view ? "View" : "Table");
		if (x->view)
			return is_view ? psprintf("View already exists: %s", t)
				: psprintf("Table with same name already exists: %s", t);
		return is_view ? psprintf("View with same name already exists: %s", t)
			: psprintf("Table already exists: %s", t);
	}
	return msg;
}

/*
 * Note what a create, register or rename targets (and, for a rename, what
 * it moves): the error for an existing name says what holds it.
 */
static void
note_target(Ctx *x, const char *ns_json_sql, const char *name_sql, const char *source_sql)
{
	const char *args[2] = {x->req->body.data, x->catalog};
	char	   *ns = x->ns;
	char	   *sql;

	if (ns_json_sql)
		ns = q1(x, psprintf("SELECT skade.rest_namespace(%s)", ns_json_sql), 1, args);
	x->target = psprintf("%s.%s", ns ? ns : "", q1(x, psprintf("SELECT %s", name_sql), 1, args));
	if (source_sql)
		x->source = q1(x, psprintf("SELECT skade.rest_namespace(%s) || '.' || (%s)",
								   source_sql, "$1::pg_catalog.jsonb -> 'source' ->> 'name'"), 1, args);
	sql = psprintf("SELECT t.iceberg_type FROM public.iceberg_tables t"
				   " WHERE t.catalog_name OPERATOR(pg_catalog.=) $2"
				   " AND t.table_namespace OPERATOR(pg_catalog.=) %s AND t.table_name OPERATOR(pg_catalog.=) (%s)",
				   ns_json_sql ? psprintf("skade.rest_namespace(%s)", ns_json_sql) : quote_literal_cstr(ns ? ns : ""),
				   name_sql);
	x->target_kind = q1(x, sql, 2, args);
}

/* -------------------------------------------------------------- SQL */

/*
 * Run sql with text arguments (NULL: SQL NULL); the first column of its
 * first row as text in the request's context, or NULL.
 */
static char *
q1(Ctx *x, const char *sql, int nargs, const char **args)
{
	char	   *v;

	return qrow(x, sql, nargs, args, 1, &v) ? v : NULL;
}

/*
 * Run sql like q1; its first row's first ncols columns as text in out
 * (NULL for SQL NULL), or false when it returns no row.
 */
static bool
qrow(Ctx *x, const char *sql, int nargs, const char **args, int ncols, char **out)
{
	Oid			types[MAX_ARGS];
	Datum		values[MAX_ARGS];
	char		nulls[MAX_ARGS];
	int			i;

	Assert(nargs <= MAX_ARGS);
	for (i = 0; i < nargs; i++)
	{
		types[i] = TEXTOID;
		values[i] = args[i] ? CStringGetTextDatum(args[i]) : (Datum) 0;
		nulls[i] = args[i] ? ' ' : 'n';
	}
	if (SPI_execute_with_args(sql, nargs, types, values, nargs > 0 ? nulls : NULL, false, 0) < 0)
		elog(ERROR, "could not run a REST statement");
	if (SPI_processed == 0 || SPI_tuptable == NULL)
		return false;
	Assert(ncols <= SPI_tuptable->tupdesc->natts);
	for (i = 0; i < ncols; i++)
	{
		char	   *v = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, i + 1);

		out[i] = v ? MemoryContextStrdup(x->cxt, v) : NULL;
	}
	return true;
}

/* Answer status with the JSON text sql returns. */
static void
json_body(Ctx *x, int status, const char *sql, int nargs, const char **args)
{
	char	   *json = q1(x, sql, nargs, args);

	x->resp->status = status;
	resetStringInfo(&x->resp->body);
	if (json)
		appendStringInfoString(&x->resp->body, json);
}

/* ------------------------------------------------------------ routes */

/* GET /v1/config[?warehouse=catalog] */
static void
config(Ctx *x)
{
	const char *warehouse = RestQueryArg(x->req, "warehouse");
	const char *catalog = warehouse && warehouse[0] ? warehouse : x->catalog;
	StringInfo	b = &x->resp->body;
	StringInfoData prefix;
	int			i;

	initStringInfo(&prefix);
	SkadeUriEncode(&prefix, catalog, strlen(catalog), false);
	x->resp->status = 200;
	appendStringInfoString(b, "{\"defaults\":{},\"overrides\":{\"prefix\":");
	escape_json(b, prefix.data);
	appendStringInfoString(b, "},\"endpoints\":[");
	for (i = 1; i < lengthof(routes); i++)
	{
		StringInfoData e;
		const char *p;

		/* the spec's names for the path parameters */
		initStringInfo(&e);
		appendStringInfo(&e, "%s /v1/", routes[i].method);
		for (p = routes[i].pattern; *p; p++)
		{
			if (strncmp(p, "{p}", 3) == 0)
				appendStringInfoString(&e, "{prefix}"), p += 2;
			else if (strncmp(p, "{ns}", 4) == 0)
				appendStringInfoString(&e, "{namespace}"), p += 3;
			else if (strncmp(p, "{t}", 3) == 0)
				appendStringInfoString(&e, "{table}"), p += 2;
			else if (strncmp(p, "{v}", 3) == 0)
				appendStringInfoString(&e, "{view}"), p += 2;
			else if (strncmp(p, "{id}", 4) == 0)
				appendStringInfoString(&e, "{plan-id}"), p += 3;
			else
				appendStringInfoChar(&e, *p);
		}
		if (i > 1)
			appendStringInfoChar(b, ',');
		escape_json(b, e.data);
	}
	appendStringInfoString(b, "],\"idempotency-key-lifetime\":\"PT30M\"}");
}

/*
 * Answer one page of names (from set_sql, whose $1 and $2 are the
 * namespace or parent and the catalog) as {key: [item...],
 * "next-page-token"}: pageToken is the last name of the page before,
 * pageSize how many (all when absent).
 */
static void
paged(Ctx *x, const char *set_sql, const char *key, const char *item_sql, const char *ns)
{
	const char *args[4] = {ns, x->catalog,
	RestQueryArg(x->req, "pageToken"), RestQueryArg(x->req, "pageSize")};

	json_body(x, 200,
			  psprintf("WITH all_n AS (SELECT n FROM %s n WHERE $3 IS NULL OR n OPERATOR(pg_catalog.>) $3),"
					   " page AS (SELECT n FROM all_n ORDER BY n"
					   "          LIMIT coalesce(nullif($4, '')::pg_catalog.int4, 2147483647))"
					   " SELECT pg_catalog.jsonb_build_object('%s',"
					   "   coalesce((SELECT pg_catalog.jsonb_agg(%s ORDER BY n) FROM page), '[]'::pg_catalog.jsonb),"
					   "   'next-page-token', CASE WHEN (SELECT count(*) FROM all_n) OPERATOR(pg_catalog.>)"
					   "                               (SELECT count(*) FROM page)"
					   "                          THEN (SELECT max(n) FROM page) END)::text",
					   set_sql, key, item_sql),
			  4, args);
}

/* GET /v1/{prefix}/namespaces[?parent=&pageToken=&pageSize=] */
static void
list_namespaces(Ctx *x)
{
	const char *parent = RestQueryArg(x->req, "parent");

	x->ns = parent ? dotted(parent) : NULL;	/* (for the error) */
	if (parent && x->ns == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a namespace level cannot hold \".\" in this catalog")));
	paged(x, "skade.list_namespaces($1, $2)", "namespaces",
		  "pg_catalog.to_jsonb(pg_catalog.string_to_array(n, '.'))", x->ns);
}

/* POST /v1/{prefix}/namespaces {namespace, properties} */
static void
create_namespace(Ctx *x)
{
	const char *args[2] = {x->req->body.data, x->catalog};

	(void) q1(x, "SELECT skade.create_namespace(skade.rest_namespace($1::pg_catalog.jsonb -> 'namespace'),"
			  " coalesce($1::pg_catalog.jsonb -> 'properties', '{}'), $2)", 2, args);
	json_body(x, 200,
			  "SELECT pg_catalog.jsonb_build_object('namespace', $1::pg_catalog.jsonb -> 'namespace',"
			  " 'properties', skade.namespace_properties(skade.rest_namespace($1::pg_catalog.jsonb -> 'namespace'), $2))::text",
			  2, args);
}

/* GET /v1/{prefix}/namespaces/{namespace} */
static void
load_namespace(Ctx *x)
{
	const char *args[2] = {x->ns, x->catalog};

	json_body(x, 200,
			  "SELECT pg_catalog.jsonb_build_object('namespace', pg_catalog.to_jsonb(pg_catalog.string_to_array($1, '.')),"
			  " 'properties', skade.namespace_properties($1, $2))::text", 2, args);
}

/* HEAD /v1/{prefix}/namespaces/{namespace} */
static void
namespace_exists(Ctx *x)
{
	const char *args[2] = {x->ns, x->catalog};
	char	   *v = q1(x, "SELECT skade.namespace_exists($1, $2)", 2, args);

	x->resp->status = v && strcmp(v, "t") == 0 ? 204 : 404;
}

/* DELETE /v1/{prefix}/namespaces/{namespace} */
static void
drop_namespace(Ctx *x)
{
	const char *args[2] = {x->ns, x->catalog};

	(void) q1(x, "SELECT skade.drop_namespace($1, $2)", 2, args);
	x->resp->status = 204;
}

/* POST /v1/{prefix}/namespaces/{namespace}/properties {removals, updates} */
static void
update_properties(Ctx *x)
{
	const char *args[3] = {x->ns, x->catalog, x->req->body.data};

	json_body(x, 200,
			  "SELECT pg_catalog.jsonb_build_object('updated', pg_catalog.to_jsonb(coalesce(u.updated, '{}')),"
			  " 'removed', pg_catalog.to_jsonb(coalesce(u.removed, '{}')),"
			  " 'missing', pg_catalog.to_jsonb(coalesce(u.missing, '{}')))::text"
			  " FROM skade.update_namespace_properties($1,"
			  "   coalesce($3::pg_catalog.jsonb -> 'updates', '{}'),"
			  "   ARRAY(SELECT pg_catalog.jsonb_array_elements_text(coalesce($3::pg_catalog.jsonb -> 'removals', '[]'))),"
			  "   $2) u", 3, args);
}

/* GET /v1/{prefix}/namespaces/{namespace}/tables[?pageToken=&pageSize=] */
static void
list_tables(Ctx *x)
{
	paged(x, "skade.list_tables($1, $2)", "identifiers", IDENTIFIER_SQL, x->ns);
}

/* POST /v1/{prefix}/namespaces/{namespace}/tables (CreateTableRequest) */
static void
create_table(Ctx *x)
{
	const char *args[3] = {x->ns, x->catalog, x->req->body.data};
	char	   *staged = q1(x, "SELECT coalesce(($1::pg_catalog.jsonb ->> 'stage-create')::boolean, false)",
							1, &args[2]);

	x->name = q1(x, "SELECT $1::pg_catalog.jsonb ->> 'name'", 1, &args[2]);
	note_target(x, NULL, "$1::pg_catalog.jsonb ->> 'name'", NULL);

	if (staged && strcmp(staged, "t") == 0)
	{
		/* a create transaction: the metadata it starts from, nothing written */
		char	   *meta = q1(x, "SELECT skade.new_table_metadata($1, $3::pg_catalog.jsonb ->> 'name',"
							  " $3::pg_catalog.jsonb -> 'schema', $3::pg_catalog.jsonb -> 'partition-spec',"
							  " $3::pg_catalog.jsonb -> 'write-order', coalesce($3::pg_catalog.jsonb -> 'properties', '{}'),"
							  " $3::pg_catalog.jsonb ->> 'location', 2, $2)::text", 3, args);

		RestTableRef t = table_ref(x);
		StringInfoData config;
		StringInfoData creds;

		t.location = q1(x, "SELECT $1::pg_catalog.jsonb ->> 'location'", 1, (const char **) &meta);
		initStringInfo(&config);
		initStringInfo(&creds);
		RestDelegationConfig(x->req, &t, &config, &creds);
		x->resp->status = 200;
		resetStringInfo(&x->resp->body);
		appendStringInfo(&x->resp->body, "{\"metadata-location\":null,\"metadata\":%s", meta);
		x->undelegated_len = x->resp->body.len;
		appendStringInfo(&x->resp->body, ",\"config\":%s", config.data);
		if (creds.len)
			appendStringInfo(&x->resp->body, ",\"storage-credentials\":%s", creds.data);
		appendStringInfoChar(&x->resp->body, '}');
		return;
	}
	(void) q1(x, "SELECT skade.create_table($1, $3::pg_catalog.jsonb ->> 'name',"
			  " $3::pg_catalog.jsonb -> 'schema', $3::pg_catalog.jsonb -> 'partition-spec',"
			  " $3::pg_catalog.jsonb -> 'write-order', coalesce($3::pg_catalog.jsonb -> 'properties', '{}'),"
			  " $3::pg_catalog.jsonb ->> 'location', 2, $2)", 3, args);
	table_answer(x, "all", false);
}

/* GET /v1/{prefix}/namespaces/{namespace}/tables/{table}[?snapshots=all|refs] */
static void
load_table(Ctx *x)
{
	const char *mode = RestQueryArg(x->req, "snapshots");
	StoreTable	t;

	mode = mode && mode[0] ? mode : "all";
	if (strcmp(mode, "all") != 0 && strcmp(mode, "refs") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("snapshots must be all or refs, not \"%s\"", mode)));
	/* If-None-Match from the pointer alone (the role must be allowed to load) */
	if (x->req->if_none_match && SkadeLookupTable(x->catalog, x->ns, x->name, &t) &&
		!t.is_view && t.metadata_location && !vended_asked(x, t.metadata_location) &&
		etag_matches(x->req->if_none_match, etag_of(t.metadata_location, mode)))
	{
		require_load_privilege();
		x->resp->status = 304;
		x->resp->etag = etag_of(t.metadata_location, mode);
		return;
	}
	table_answer(x, mode, true);
}

/*
 * Did the request ask for vended credentials for a table on object storage
 * (whose answer a 304 would leave without fresh ones)?
 */
static bool
vended_asked(Ctx *x, const char *metadata_location)
{
	RestDelegation modes[2];
	int			n = RestDelegationAsked(x->req, modes);

	return SkadeIsObjectLocation(metadata_location) &&
		((n > 0 && modes[0] == REST_DELEGATE_VENDED) || (n > 1 && modes[1] == REST_DELEGATE_VENDED));
}

/* HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table} */
static void
table_exists(Ctx *x)
{
	const char *args[3] = {x->ns, x->name, x->catalog};
	char	   *v = q1(x, "SELECT skade.table_exists($1, $2, $3)", 3, args);

	x->resp->status = v && strcmp(v, "t") == 0 ? 204 : 404;
}

/* POST /v1/{prefix}/namespaces/{namespace}/tables/{table} {requirements, updates} */
static void
commit_table(Ctx *x)
{
	const char *args[4] = {x->ns, x->name, x->catalog, x->req->body.data};

	/* concurrent appends share one commit (commit_group.c); a keyed
	 * request's stored answer must commit with its own change */
	if (skade_group_commit && !keyed(x))
	{
		SkadeGroupResult g;

		require_privilege(x->route->function);
		require_privilege("skade.update_table_fast(text,text,text,jsonb,jsonb,text)");
		g = SkadeGroupCommit(x->catalog, x->ns, x->name, x->req->body.data);
		if (g == SKADE_GROUP_COMMITTED)
		{
			/* durable already: a late cancel must not answer it as failed */
			HOLD_CANCEL_INTERRUPTS();
			table_answer(x, "all", false);
			RESUME_CANCEL_INTERRUPTS();
			return;
		}
		if (g == SKADE_GROUP_LED)
		{
			table_answer(x, "all", false);
			return;
		}
	}
	(void) q1(x, "SELECT skade.update_table($1, $2,"
			  " coalesce($4::pg_catalog.jsonb -> 'requirements', '[]'),"
			  " coalesce($4::pg_catalog.jsonb -> 'updates', '[]'), $3)", 4, args);
	table_answer(x, "all", false);
}

/* DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}[?purgeRequested=true] */
static void
drop_table(Ctx *x)
{
	const char *args[3] = {x->ns, x->name, x->catalog};
	const char *purge = RestQueryArg(x->req, "purgeRequested");

	if (purge && pg_strcasecmp(purge, "true") == 0)
		(void) q1(x, "SELECT skade.purge_table($1, $2, $3)", 3, args);
	else
		(void) q1(x, "SELECT skade.drop_table($1, $2, $3)", 3, args);
	x->resp->status = 204;
}

/* POST /v1/{prefix}/namespaces/{namespace}/register {name, metadata-location} */
static void
register_table(Ctx *x)
{
	const char *args[3] = {x->ns, x->catalog, x->req->body.data};

	x->name = q1(x, "SELECT $1::pg_catalog.jsonb ->> 'name'", 1, &args[2]);
	note_target(x, NULL, "$1::pg_catalog.jsonb ->> 'name'", NULL);
	(void) q1(x, "SELECT skade.register_table($1, $3::pg_catalog.jsonb ->> 'name',"
			  " $3::pg_catalog.jsonb ->> 'metadata-location', $2)", 3, args);
	table_answer(x, "all", false);
}

/*
 * POST .../tables/{table}/metrics: a well-formed report is accepted and
 * dropped, as Iceberg's reference server does (clients report on staged
 * tables too, before they exist).
 */
static void
report_metrics(Ctx *x)
{
	(void) q1(x, "SELECT $1::pg_catalog.jsonb IS NOT NULL", 1, (const char **) &x->req->body.data);
	x->resp->status = 204;
}

/* POST /v1/{prefix}/tables/rename {source, destination} */
static void
rename_table(Ctx *x)
{
	const char *args[2] = {x->req->body.data, x->catalog};

	note_target(x, "$1::pg_catalog.jsonb -> 'destination' -> 'namespace'",
				"$1::pg_catalog.jsonb -> 'destination' ->> 'name'",
				"$1::pg_catalog.jsonb -> 'source' -> 'namespace'");
	(void) q1(x, "SELECT skade.rename_table("
			  " skade.rest_namespace($1::pg_catalog.jsonb -> 'source' -> 'namespace'),"
			  " $1::pg_catalog.jsonb -> 'source' ->> 'name',"
			  " skade.rest_namespace($1::pg_catalog.jsonb -> 'destination' -> 'namespace'),"
			  " $1::pg_catalog.jsonb -> 'destination' ->> 'name', $2)", 2, args);
	x->resp->status = 204;
}

/*
 * POST /v1/{prefix}/events {continuation-token, page-size, filters}: the
 * change feed in the events proposal's shape (skade.rest_events()), what
 * the caller may read of it (the commit log's row-level security)
 */
static void
events(Ctx *x)
{
	const char *args[2] = {x->req->body.data, x->catalog};

	json_body(x, 200, "SELECT skade.rest_events($1::pg_catalog.jsonb, $2)::text", 2, args);
}

/* POST /v1/{prefix}/transactions/commit {table-changes}: all or none */
static void
commit_transaction(Ctx *x)
{
	const char *args[2] = {x->req->body.data, x->catalog};

	/* in a fixed order, so that two such commits lock tables alike */
	(void) q1(x, "SELECT count(skade.update_table(c.ns, c.name, c.requirements, c.updates, $2))"
			  " FROM (SELECT skade.rest_namespace(e -> 'identifier' -> 'namespace') AS ns,"
			  "              e -> 'identifier' ->> 'name' AS name,"
			  "              coalesce(e -> 'requirements', '[]') AS requirements,"
			  "              coalesce(e -> 'updates', '[]') AS updates"
			  "       FROM pg_catalog.jsonb_array_elements($1::pg_catalog.jsonb -> 'table-changes') e"
			  "       ORDER BY 1, 2) c", 2, args);
	x->resp->status = 204;
}

/* ------------------------------------------------------ scan planning */

/*
 * POST .../tables/{table}/plan (PlanTableScanRequest): planned at once by
 * plan_files(), answered "completed" with every task (pyiceberg 0.12 cannot
 * poll); no plan is kept.
 */
static void
plan_scan(Ctx *x)
{
	const char *args[4] = {x->ns, x->name, x->catalog, x->req->body.len ? x->req->body.data : "{}"};

	StringInfoData tail;
	const char *location;
	RestTableRef t;

	json_body(x, 200, "SELECT skade.plan_table_scan($1, $2, $4::pg_catalog.jsonb, $3)::text", 4, args);
	if (RestDelegationAsked(x->req, (RestDelegation[2]) {0}) == 0 || x->resp->body.len < 2)
		return;
	(void) SkadeLoadTablePinned(x->catalog, x->ns, x->name, false, &location);
	t = table_ref(x);
	t.location = RestTableLocation(SKADE_ROUTE(x->catalog, x->ns), location, false);
	{
		StringInfoData config;

		initStringInfo(&config);
		initStringInfo(&tail);
		RestDelegationConfig(x->req, &t, &config, &tail);
	}
	if (tail.len && x->resp->body.data[x->resp->body.len - 1] == '}')
	{
		x->resp->body.data[--x->resp->body.len] = '\0';
		appendStringInfo(&x->resp->body, ",\"storage-credentials\":%s}", tail.data);
	}
}

/* GET .../tables/{table}/credentials[?planId=]: fresh credentials, same scope */
static void
load_credentials(Ctx *x)
{
	RestTableRef t = loaded_table_ref(x);

	resetStringInfo(&x->resp->body);
	RestCredentialsAnswer(&t, &x->resp->body);
	x->resp->status = 200;
}

/* POST .../tables/{table}/sign (RemoteSignRequest): a signed S3 request */
static void
sign_request(Ctx *x)
{
	RestTableRef t = loaded_table_ref(x);

	resetStringInfo(&x->resp->body);
	RestSignAnswer(x->req, &t, &x->resp->body);
	x->resp->status = 200;
}

/* The table the route names. */
static RestTableRef
table_ref(Ctx *x)
{
	RestTableRef t = {x->catalog, x->ns, x->name, NULL};

	return t;
}

/*
 * The table the route names, with its location, for a role that may load
 * it (absent, 404, to one that may not read it).
 */
static RestTableRef
loaded_table_ref(Ctx *x)
{
	RestTableRef t = table_ref(x);
	const char *location;

	require_load_privilege();
	(void) SkadeLoadTablePinned(x->catalog, x->ns, x->name, false, &location);
	t.location = RestTableLocation(SKADE_ROUTE(x->catalog, x->ns), location, false);
	return t;
}

/* GET .../plan/{plan-id}: plans are not kept, so none is known */
static void
fetch_plan(Ctx *x)
{
	answer_error(x, 404, "NoSuchPlanIdException", "no such plan: plans complete when they are made");
}

/* DELETE .../plan/{plan-id}: nothing runs to be cancelled */
static void
cancel_plan(Ctx *x)
{
	x->resp->status = 204;
}

/* POST .../tables/{table}/tasks: no plan tasks are ever handed out */
static void
fetch_tasks(Ctx *x)
{
	answer_error(x, 404, "NoSuchPlanTaskException", "no such plan task: plans answer all their tasks at once");
}

/* -------------------------------------------------------------- views */

/* GET /v1/{prefix}/namespaces/{namespace}/views[?pageToken=&pageSize=] */
static void
list_views(Ctx *x)
{
	paged(x, "skade.list_views($1, $2)", "identifiers", IDENTIFIER_SQL, x->ns);
}

/* POST /v1/{prefix}/namespaces/{namespace}/views (CreateViewRequest) */
static void
create_view(Ctx *x)
{
	const char *args[3] = {x->ns, x->catalog, x->req->body.data};

	x->name = q1(x, "SELECT $1::pg_catalog.jsonb ->> 'name'", 1, &args[2]);
	note_target(x, NULL, "$1::pg_catalog.jsonb ->> 'name'", NULL);
	(void) q1(x, "SELECT skade.create_view($1, $3::pg_catalog.jsonb ->> 'name', $3::pg_catalog.jsonb, $2)",
			  3, args);
	view_answer(x);
}

/* GET /v1/{prefix}/namespaces/{namespace}/views/{view} */
static void
load_view(Ctx *x)
{
	view_answer(x);
}

/* HEAD /v1/{prefix}/namespaces/{namespace}/views/{view} */
static void
view_exists(Ctx *x)
{
	const char *args[3] = {x->ns, x->name, x->catalog};
	char	   *v = q1(x, "SELECT skade.view_exists($1, $2, $3)", 3, args);

	x->resp->status = v && strcmp(v, "t") == 0 ? 204 : 404;
}

/* POST /v1/{prefix}/namespaces/{namespace}/views/{view} {requirements, updates} */
static void
replace_view(Ctx *x)
{
	const char *args[4] = {x->ns, x->name, x->catalog, x->req->body.data};

	(void) q1(x, "SELECT skade.update_view($1, $2,"
			  " coalesce($4::pg_catalog.jsonb -> 'requirements', '[]'),"
			  " coalesce($4::pg_catalog.jsonb -> 'updates', '[]'), $3)", 4, args);
	view_answer(x);
}

/* DELETE /v1/{prefix}/namespaces/{namespace}/views/{view} */
static void
drop_view(Ctx *x)
{
	const char *args[3] = {x->ns, x->name, x->catalog};

	(void) q1(x, "SELECT skade.drop_view($1, $2, $3)", 3, args);
	x->resp->status = 204;
}

/* POST /v1/{prefix}/views/rename {source, destination} */
static void
rename_view(Ctx *x)
{
	const char *args[2] = {x->req->body.data, x->catalog};

	note_target(x, "$1::pg_catalog.jsonb -> 'destination' -> 'namespace'",
				"$1::pg_catalog.jsonb -> 'destination' ->> 'name'",
				"$1::pg_catalog.jsonb -> 'source' -> 'namespace'");
	(void) q1(x, "SELECT skade.rename_view("
			  " skade.rest_namespace($1::pg_catalog.jsonb -> 'source' -> 'namespace'),"
			  " $1::pg_catalog.jsonb -> 'source' ->> 'name',"
			  " skade.rest_namespace($1::pg_catalog.jsonb -> 'destination' -> 'namespace'),"
			  " $1::pg_catalog.jsonb -> 'destination' ->> 'name', $2)", 2, args);
	x->resp->status = 204;
}

/* POST /v1/{prefix}/namespaces/{namespace}/register-view {name, metadata-location} */
static void
register_view(Ctx *x)
{
	const char *args[3] = {x->ns, x->catalog, x->req->body.data};

	x->view = true;
	x->name = q1(x, "SELECT $1::pg_catalog.jsonb ->> 'name'", 1, &args[2]);
	note_target(x, NULL, "$1::pg_catalog.jsonb ->> 'name'", NULL);
	(void) q1(x, "SELECT skade.register_view($1, $3::pg_catalog.jsonb ->> 'name',"
			  " $3::pg_catalog.jsonb ->> 'metadata-location', $2)", 3, args);
	view_answer(x);
}

/* Answer {"metadata-location", "metadata", "config"} for x's view. */
static void
view_answer(Ctx *x)
{
	const char *args[3] = {x->ns, x->name, x->catalog};
	char	   *location = q1(x, "SELECT t.metadata_location FROM public.iceberg_tables t"
							  " WHERE t.catalog_name OPERATOR(pg_catalog.=) $3"
							  " AND t.table_namespace OPERATOR(pg_catalog.=) $1"
							  " AND t.table_name OPERATOR(pg_catalog.=) $2"
							  " AND t.iceberg_type OPERATOR(pg_catalog.=) 'VIEW'", 3, args);
	char	   *meta = q1(x, "SELECT skade.view_metadata($1, $2, $3)::pg_catalog.jsonb::text", 3, args);
	StringInfo	b = &x->resp->body;

	resetStringInfo(b);
	appendStringInfoString(b, "{\"metadata-location\":");
	escape_json(b, location ? location : "");
	appendStringInfo(b, ",\"metadata\":%s,\"config\":{}}", meta);
	x->resp->status = 200;
}

/* ------------------------------------------------------- loadTable body */

/*
 * Answer {"metadata-location", "metadata", "config"} for x's table, the
 * metadata text spliced in as the cache holds it (pinned: not copied
 * before this).  With cached_gzip (loadTable), a client that accepts gzip
 * gets the compressed answer the cache keeps beside the metadata (made once
 * per metadata file and mode); a change's answer is compressed only after
 * its transaction ended (rest_worker.c), not while it holds the table's row
 * lock.
 */
static void
table_answer(Ctx *x, const char *mode, bool cached_gzip)
{
	bool		refs = strcmp(mode, "refs") == 0;
	const char *location;
	struct varlena *json;
	StringInfoData tail;

	require_load_privilege();
	/* a statement's snapshot, as SPI would take: the route's change is seen */
	PushCopiedSnapshot(GetTransactionSnapshot());
	UpdateActiveSnapshotCommandId();
	json = SkadeLoadTablePinned(x->catalog, x->ns, x->name, refs, &location);
	PopActiveSnapshot();
	resetStringInfo(&x->resp->body);
	initStringInfo(&tail);
	if (delegated_tail(x, location, refs, &tail))
	{
		/* the cached head, and the tail with its credentials on its own */
		if (cached_gzip && VARSIZE_ANY_EXHDR(json) >= REST_GZIP_MIN && RestAcceptsGzip(x->req))
		{
			Size		size;
			const void *gz = L0FetchDerivedPinned(SKADE_ROUTE(x->catalog, x->ns), location, refs,
												  "rest-answer-head.gz", gzip_head,
												  (void *) location, &size);
			StringInfo	z = SkadeGzipLevel(tail.data, tail.len, REST_GZIP_LEVEL);

			/* two gzip members: one stream (RFC 1952 2.2) */
			appendBinaryStringInfo(&x->resp->body, gz, size);
			appendBinaryStringInfo(&x->resp->body, z->data, z->len);
			x->resp->gzip = true;
		}
		else
		{
			append_head(&x->resp->body, location, json);
			x->undelegated_len = x->resp->body.len;
			appendBinaryStringInfo(&x->resp->body, tail.data, tail.len);
		}
		explicit_bzero(tail.data, tail.len);
	}
	else if (cached_gzip && VARSIZE_ANY_EXHDR(json) >= REST_GZIP_MIN && RestAcceptsGzip(x->req))
	{
		Size		size;
		const void *gz = L0FetchDerivedPinned(SKADE_ROUTE(x->catalog, x->ns), location, refs,
											  "rest-answer.gz", gzip_answer,
											  (void *) location, &size);

		appendBinaryStringInfo(&x->resp->body, gz, size);
		x->resp->gzip = true;
	}
	else
		append_answer(&x->resp->body, location, json);
	x->resp->status = 200;
	x->resp->etag = MemoryContextStrdup(x->cxt, etag_of(location, mode));
}

/* The loadTable answer of the metadata text json at location. */
static void
append_answer(StringInfo b, const char *location, const struct varlena *json)
{
	append_head(b, location, json);
	appendStringInfoString(b, ",\"config\":{}}");
}

/* The answer up to its config: {"metadata-location", "metadata" */
static void
append_head(StringInfo b, const char *location, const struct varlena *json)
{
	appendStringInfoString(b, "{\"metadata-location\":");
	escape_json(b, location);
	appendStringInfoString(b, ",\"metadata\":");
	appendBinaryStringInfo(b, VARDATA_ANY(json), VARSIZE_ANY_EXHDR(json));
}

/*
 * The answer's end when the request asks for access delegation for a table
 * on object storage: ,"config":{...}[,"storage-credentials":[...]]}.
 * false (tail empty) when nothing is delegated.
 */
static bool
delegated_tail(Ctx *x, const char *location, bool refs, StringInfo tail)
{
	RestTableRef t = table_ref(x);
	StringInfoData creds;

	if (RestDelegationAsked(x->req, (RestDelegation[2]) {0}) == 0 ||
		!SkadeIsObjectLocation(location))
		return false;
	t.location = RestTableLocation(SKADE_ROUTE(x->catalog, x->ns), location, refs);
	initStringInfo(&creds);
	appendStringInfoString(tail, ",\"config\":");
	RestDelegationConfig(x->req, &t, tail, &creds);
	if (creds.len)
	{
		appendStringInfoString(tail, ",\"storage-credentials\":");
		appendBinaryStringInfo(tail, creds.data, creds.len);
		explicit_bzero(creds.data, creds.len);
	}
	appendStringInfoChar(tail, '}');
	return true;
}

/* The gzip of b's text (b freed), its size in *size. */
static void *
gzipped(StringInfo b, Size *size)
{
	StringInfo	z = SkadeGzipLevel(b->data, b->len, REST_GZIP_LEVEL);

	pfree(b->data);
	*size = z->len;
	return z->data;
}

/* L0Deriver: the gzip-compressed answer's head (arg: the metadata location) */
static void *
gzip_head(const struct varlena *json, void *arg, Size *size)
{
	StringInfoData b;

	initStringInfo(&b);
	append_head(&b, (const char *) arg, json);
	return gzipped(&b, size);
}

/* L0Deriver: the gzip-compressed answer (arg: the metadata location) */
static void *
gzip_answer(const struct varlena *json, void *arg, Size *size)
{
	StringInfoData b;

	initStringInfo(&b);
	append_answer(&b, (const char *) arg, json);
	return gzipped(&b, size);
}

/*
 * The role may load tables: EXECUTE on skade.load_table (USAGE on schema
 * skade included), as the SQL function it stands for would require.
 */
static void
require_load_privilege(void)
{
	require_privilege("skade.load_table(text,text,text,text)");
}

/*
 * The current role may call the function of signature (a regprocedure's
 * text): USAGE on its schema and EXECUTE on it, else 42501.
 */
static void
require_privilege(const char *signature)
{
	Oid			fn = DatumGetObjectId(DirectFunctionCall1(regprocedurein, CStringGetDatum(signature)));

	if (object_aclcheck(NamespaceRelationId, get_func_namespace(fn), GetUserId(), ACL_USAGE) != ACLCHECK_OK)
		aclcheck_error(ACLCHECK_NO_PRIV, OBJECT_SCHEMA, get_namespace_name(get_func_namespace(fn)));
	if (object_aclcheck(ProcedureRelationId, fn, GetUserId(), ACL_EXECUTE) != ACLCHECK_OK)
		aclcheck_error(ACLCHECK_NO_PRIV, OBJECT_FUNCTION, get_func_name(fn));
}

/* The quoted ETag of a table's metadata location in a snapshots mode. */
static char *
etag_of(const char *location, const char *mode)
{
	char		hex[65];
	char	   *s = psprintf("%s\n%s", mode, location);

	SkadeSha256Hex(s, strlen(s), hex);
	return psprintf("\"%.32s\"", hex);
}

/*
 * Does an If-None-Match header name etag?  Loosely: W/ prefixes, quotes and
 * a "-gzip" (or other "-suffix" a proxy adds) are ignored.
 */
static bool
etag_matches(const char *header, const char *etag)
{
	char	   *copy = pstrdup(header);
	char	   *save = NULL;
	char	   *tok;
	size_t		want = strlen(etag) - 2;

	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
	{
		while (*tok == ' ' || *tok == '\t')
			tok++;
		if (strncmp(tok, "W/", 2) == 0)
			tok += 2;
		if (*tok == '"')
			tok++;
		if (strncmp(tok, etag + 1, want) == 0 &&
			(tok[want] == '"' || tok[want] == '-' || tok[want] == '\0'))
			return true;
	}
	return false;
}

/*
 * GET /metrics from a client that is not on loopback: allowed to roles with
 * pg_monitor's privileges, answered 200 with no body (the listener, which
 * keeps the figures, renders them: rest_metrics.c).
 */
static void
metrics_access(Ctx *x)
{
	if (!has_privs_of_role(GetUserId(), ROLE_PG_MONITOR))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("the metrics are served to loopback clients and to roles with the privileges of pg_monitor")));
	x->resp->status = 200;
	resetStringInfo(&x->resp->body);
}

/*
 * SkadeRestWarmUp
 *		Run once by a new executor before its first request: what every
 *		request and a loadTable look up (the token statement, the catalog,
 *		a table's pointer, load_table's privileges), so that its first
 *		requests do not pay for cold caches.  In a transaction of its own,
 *		outside any; an error (skade not installed yet) is dropped: the
 *		requests will say so.
 */
void
SkadeRestWarmUp(void)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PG_TRY();
	{
		RestRequest req = {0};
		RestResponse resp = {0};
		Ctx			x = {0};
		StoreTable	t;
		const char *catalog;

		PushActiveSnapshot(GetTransactionSnapshot());
		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "SPI_connect failed");
		initStringInfo(&resp.body);
		req.method = "GET";
		req.raw_path = "/v1/config";
		req.authorization = "Bearer skade-warm-up";
		x.req = &req;
		x.resp = &resp;
		x.cxt = cxt;
		(void) authenticate(&x);	/* (no such token: a 401) */
		catalog = SkadeResolveCatalog(NULL);
		(void) SkadeLookupTable(catalog, "skade warm-up", "skade warm-up", &t);
		require_load_privilege();
		SPI_finish();
		PopActiveSnapshot();
		CommitTransactionCommand();
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(cxt);
		FlushErrorState();
		AbortCurrentTransaction();
		CurrentResourceOwner = owner;
	}
	PG_END_TRY();
	MemoryContextSwitchTo(cxt);
}
