/*-------------------------------------------------------------------------
 *
 * rest_http.c
 *	  The REST server's HTTP side: the only file that calls libmicrohttpd.
 *	  Listening sockets, the event loop of a REST worker, and the handler
 *	  that turns libmicrohttpd's callbacks into one RestRequest and its
 *	  RestResponse.
 *
 * Invariants
 *   - Each worker binds its own listening socket for every address of
 *     skade.rest_listen_addresses on skade.rest_port with SO_REUSEPORT: the
 *     kernel spreads new connections over the workers.  Each socket gets one
 *     libmicrohttpd daemon in external epoll mode: libmicrohttpd starts no
 *     thread, and everything runs in the worker's own (only) thread, from
 *     MHD_run, when the worker's WaitEventSet reports a daemon's epoll
 *     descriptor readable, its timeout passes or the latch is set.
 *   - Answers of 8 kB and more are gzip-compressed for clients that accept
 *     gzip (loadTable's metadata is most of them: its route sends the
 *     compressed answer the L0 cache keeps, rest_routes.c).
 *   - Requests are served one at a time per worker.  A body larger than
 *     skade.rest_max_body is not kept (the request is answered 413); idle
 *     connections close after skade.rest_idle_timeout, and so does one whose
 *     request headers have not all arrived that long after it opened or
 *     after its last answer (a client trickling bytes), but never with a
 *     request's bytes unread (one that came while the worker served
 *     another is served); a worker holds at most
 *     skade.rest_max_connections connections.
 *   - Nothing raised in a handler unwinds through libmicrohttpd: each
 *     callback's work runs under PG_TRY, and an error becomes a 500 answer
 *     (the routes turn their own errors into Iceberg's error model first).
 *   - The request path reaches the routes as sent (libmicrohttpd's own
 *     unescaping is turned off) and is split before each segment is
 *     decoded, so a name holding "/" (%2F) stays one segment.
 *
 * Memory: each request's in "skade rest request" (below TopMemoryContext),
 * deleted when libmicrohttpd reports the request complete, which is after
 * the answer was sent: libmicrohttpd sends the answer from there
 * (MHD_RESPMEM_PERSISTENT), without a copy.
 *
 * IDENTIFICATION
 *	  src/rest_http.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <microhttpd.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include "miscadmin.h"
#include "postmaster/interrupt.h"
#include "storage/latch.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "utils/varlena.h"
#include "utils/wait_event.h"

#include "guc.h"
#include "gzip.h"
#include "rest_http.h"
#include "rest_routes.h"

#define MAX_DAEMONS 16

/* per connection-request state (libmicrohttpd's con_cls) */
typedef struct RequestState
{
	MemoryContext cxt;
	RestRequest req;
} RequestState;

/* a connection whose request headers must arrive by a deadline */
typedef struct Pending
{
	struct MHD_Connection *conn;
	TimestampTz deadline;		/* 0: a request is being served */
} Pending;

#define MAX_PENDING 4096

/* ---- Local variables ---- */

static struct MHD_Daemon *daemons[MAX_DAEMONS];
static int	ndaemons = 0;
static Pending pending[MAX_PENDING];
static int	npending = 0;

static void open_daemons(void);
static int	listen_socket(const struct addrinfo *ai);
static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
							  const char *method, const char *version,
							  const char *upload, size_t *upload_size, void **state);
static void completed(void *cls, struct MHD_Connection *conn, void **state,
					  enum MHD_RequestTerminationCode why);
static size_t no_unescape(void *cls, struct MHD_Connection *conn, char *s);
static RequestState *begin_request(struct MHD_Connection *conn, const char *url,
								   const char *method);
static enum MHD_Result answer(struct MHD_Connection *conn, RestResponse *resp);
static List *split_path(const char *path);
static void compress(const RestRequest *req, RestResponse *resp);
static void notify_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
							  enum MHD_ConnectionNotificationCode code);
static void set_deadline(struct MHD_Connection *conn, bool serving);
static void cut_slow(void);
static char *decode(char *s);

/*
 * SkadeRestServe
 *		The worker's life once connected: listen, serve until shutdown.
 */
void
SkadeRestServe(int worker)
{
	WaitEventSet *set;
	int			i;

	open_daemons();
	set = CreateWaitEventSet(TopMemoryContext, ndaemons + 2);
	AddWaitEventToSet(set, WL_LATCH_SET, PGINVALID_SOCKET, MyLatch, NULL);
	AddWaitEventToSet(set, WL_EXIT_ON_PM_DEATH, PGINVALID_SOCKET, NULL, NULL);
	for (i = 0; i < ndaemons; i++)
	{
		const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemons[i],
															   MHD_DAEMON_INFO_EPOLL_FD);

		AddWaitEventToSet(set, WL_SOCKET_READABLE, info->epoll_fd, NULL, NULL);
	}
	ereport(LOG,
			(errmsg("skade REST worker %d listening on port %d", worker, skade_rest_port)));

	while (!ShutdownRequestPending)
	{
		WaitEvent	ev[MAX_DAEMONS + 2];
		long		timeout = 1000;

		for (i = 0; i < ndaemons; i++)
		{
			MHD_UNSIGNED_LONG_LONG t;

			if (MHD_get_timeout(daemons[i], &t) == MHD_YES && (long long) t < timeout)
				timeout = (long) t;
		}
		(void) WaitEventSetWait(set, timeout, ev, lengthof(ev), PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		for (i = 0; i < ndaemons; i++)
			MHD_run(daemons[i]);
		cut_slow();
	}
	for (i = 0; i < ndaemons; i++)
		MHD_stop_daemon(daemons[i]);
	FreeWaitEventSet(set);
}

/*
 * RestQueryArg
 *		The query argument name of the request (decoded), or NULL.
 */
const char *
RestQueryArg(const RestRequest *req, const char *name)
{
	const char *v = MHD_lookup_connection_value((struct MHD_Connection *) req->connection,
												MHD_GET_ARGUMENT_KIND, name);

	/* (libmicrohttpd's unescaping is off: see no_unescape) */
	return v ? decode(pstrdup(v)) : NULL;
}

/* ------------------------------------------------------------ sockets */

/* A daemon on a socket of every listen address (ERROR if none). */
static void
open_daemons(void)
{
	char	   *raw = pstrdup(skade_rest_listen_addresses ? skade_rest_listen_addresses : "");
	List	   *hosts;
	ListCell   *lc;
	char		port[16];

	snprintf(port, sizeof(port), "%d", skade_rest_port);
	if (!SplitGUCList(raw, ',', &hosts))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid list syntax in skade.rest_listen_addresses")));
	foreach(lc, hosts)
	{
		const char *host = lfirst(lc);
		struct addrinfo hints = {0};
		struct addrinfo *res;
		struct addrinfo *ai;
		int			rc;

		hints.ai_family = AF_UNSPEC;
		hints.ai_socktype = SOCK_STREAM;
		hints.ai_flags = AI_PASSIVE;
		rc = getaddrinfo(strcmp(host, "*") == 0 ? NULL : host, port, &hints, &res);
		if (rc != 0)
			ereport(ERROR,
					(errcode(ERRCODE_CONFIG_FILE_ERROR),
					 errmsg("could not resolve REST listen address \"%s\": %s", host, gai_strerror(rc))));
		for (ai = res; ai && ndaemons < MAX_DAEMONS; ai = ai->ai_next)
		{
			int			fd = listen_socket(ai);
			struct MHD_Daemon *d;

			if (fd < 0)
				continue;
			d = MHD_start_daemon(MHD_USE_EPOLL | MHD_USE_SUPPRESS_DATE_NO_CLOCK, 0,
								 NULL, NULL, handle, NULL,
								 MHD_OPTION_LISTEN_SOCKET, (MHD_socket) fd,
								 MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int) skade_rest_idle_timeout,
								 MHD_OPTION_CONNECTION_LIMIT, (unsigned int) skade_rest_max_connections,
								 MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
								 MHD_OPTION_NOTIFY_CONNECTION, notify_connection, NULL,
								 MHD_OPTION_UNESCAPE_CALLBACK, no_unescape, NULL,
								 MHD_OPTION_END);
			if (d == NULL)
			{
				close(fd);
				ereport(ERROR,
						(errcode(ERRCODE_INTERNAL_ERROR),
						 errmsg("could not start the REST server on \"%s\"", host)));
			}
			daemons[ndaemons++] = d;
		}
		freeaddrinfo(res);
	}
	if (ndaemons == 0)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIG_FILE_ERROR),
				 errmsg("the REST server could not listen on any of \"%s\" port %d",
						skade_rest_listen_addresses, skade_rest_port)));
}

/* A non-blocking listening socket on ai, shared by the workers; -1 on failure. */
static int
listen_socket(const struct addrinfo *ai)
{
	int			fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
							ai->ai_protocol);
	int			one = 1;

	if (fd < 0)
		return -1;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
		setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) != 0 ||
		(ai->ai_family == AF_INET6 &&
		 setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) != 0) ||
		bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 ||
		listen(fd, 128) != 0)
	{
		int			err = errno;

		close(fd);
		ereport(LOG,
				(errmsg("skade REST server: could not listen on a socket: %s", strerror(err))));
		return -1;
	}
	return fd;
}

/* ------------------------------------------------- libmicrohttpd's side */

/* The raw path is kept: the routes decode segment by segment. */
static size_t
no_unescape(void *cls, struct MHD_Connection *conn, char *s)
{
	return strlen(s);
}

/*
 * libmicrohttpd's access handler: called first with the headers, then with
 * each piece of the body, then once more to answer.  Never raises.
 */
static enum MHD_Result
handle(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
	   const char *version, const char *upload, size_t *upload_size, void **state)
{
	RequestState *rs = *state;
	RestResponse resp;
	enum MHD_Result result = MHD_NO;
	volatile bool failed = false;

	PG_TRY();
	{
		if (rs == NULL)
		{
			*state = begin_request(conn, url, method);
			set_deadline(conn, true);	/* the headers are in */
			result = MHD_YES;
		}
		else if (*upload_size > 0)
		{
			if ((size_t) rs->req.body.len + *upload_size > (size_t) skade_rest_max_body)
				rs->req.body_too_large = true;
			else
			{
				MemoryContext old = MemoryContextSwitchTo(rs->cxt);

				appendBinaryStringInfo(&rs->req.body, upload, *upload_size);
				MemoryContextSwitchTo(old);
			}
			*upload_size = 0;
			result = MHD_YES;
		}
		else
		{
			MemoryContext old = MemoryContextSwitchTo(rs->cxt);

			memset(&resp, 0, sizeof(resp));
			initStringInfo(&resp.body);
			rs->req.connection = conn;
			SkadeRestRoute(&rs->req, &resp);
			compress(&rs->req, &resp);
			MemoryContextSwitchTo(old);
			result = answer(conn, &resp);
		}
	}
	PG_CATCH();
	{
		/* (the routes catch their own: this is out of memory and the like) */
		EmitErrorReport();
		FlushErrorState();
		failed = true;
	}
	PG_END_TRY();
	if (failed)
	{
		static const char body[] =
			"{\"error\":{\"message\":\"internal error\",\"type\":\"InternalServerError\",\"code\":500}}";
		struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), (void *) body,
																 MHD_RESPMEM_PERSISTENT);

		result = MHD_queue_response(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, r);
		MHD_destroy_response(r);
	}
	return result;
}

/* The first call of a request: its context, method, path and headers. */
static RequestState *
begin_request(struct MHD_Connection *conn, const char *url, const char *method)
{
	MemoryContext cxt = AllocSetContextCreate(TopMemoryContext, "skade rest request",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	RequestState *rs = palloc0(sizeof(RequestState));
	const char *h;

	rs->cxt = cxt;
	rs->req.method = pstrdup(method);
	rs->req.raw_path = pstrdup(url);
	rs->req.segments = split_path(url);
#define HEADER(name) ((h = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, name)) ? pstrdup(h) : NULL)
	rs->req.authorization = HEADER("Authorization");
	rs->req.if_none_match = HEADER("If-None-Match");
	rs->req.idempotency_key = HEADER("Idempotency-Key");
	rs->req.accept_encoding = HEADER("Accept-Encoding");
#undef HEADER
	initStringInfo(&rs->req.body);
	MemoryContextSwitchTo(old);
	return rs;
}

/* Queue resp on the connection. */
static enum MHD_Result
answer(struct MHD_Connection *conn, RestResponse *resp)
{
	struct MHD_Response *r;
	enum MHD_Result result;

	/* the body lives in the request's context, deleted only once it is sent */
	r = MHD_create_response_from_buffer(resp->body.len, resp->body.data, MHD_RESPMEM_PERSISTENT);
	if (r == NULL)
		return MHD_NO;
	if (resp->body.len > 0)
		MHD_add_response_header(r, "Content-Type", "application/json");
	if (resp->etag)
		MHD_add_response_header(r, "ETag", resp->etag);
	if (resp->gzip)
		MHD_add_response_header(r, "Content-Encoding", "gzip");
	MHD_add_response_header(r, "Vary", "Accept-Encoding");
	result = MHD_queue_response(conn, resp->status, r);
	MHD_destroy_response(r);
	return result;
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
 * gzip a body worth it (REST_GZIP_MIN bytes) for a client that accepts it;
 * a route may have compressed it already (resp->gzip).
 */
static void
compress(const RestRequest *req, RestResponse *resp)
{
	StringInfo	z;

	if (resp->body.len < REST_GZIP_MIN || resp->gzip || !RestAcceptsGzip(req))
		return;
	z = SkadeGzipLevel(resp->body.data, resp->body.len, REST_GZIP_LEVEL);
	pfree(resp->body.data);
	resp->body = *z;
	resp->gzip = true;
}

/* The request is over (answered, or the connection went): its memory goes. */
static void
completed(void *cls, struct MHD_Connection *conn, void **state,
		  enum MHD_RequestTerminationCode why)
{
	RequestState *rs = *state;

	if (rs)
		MemoryContextDelete(rs->cxt);
	*state = NULL;
	set_deadline(conn, false);	/* the next request's headers are awaited */
}

/* --------------------------------------------------- slow connections */

/*
 * libmicrohttpd reports connections opened and closed: an open one must
 * send its request headers within skade.rest_idle_timeout (its inactivity
 * timeout alone lets a client trickle a byte at a time forever).
 */
static void
notify_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
				  enum MHD_ConnectionNotificationCode code)
{
	int			i;

	if (code == MHD_CONNECTION_NOTIFY_STARTED)
	{
		if (npending < MAX_PENDING)
		{
			pending[npending].conn = conn;
			pending[npending].deadline = 0;
			npending++;
			set_deadline(conn, false);
		}
		return;
	}
	for (i = 0; i < npending; i++)
		if (pending[i].conn == conn)
		{
			pending[i] = pending[--npending];
			break;
		}
}

/* A request is being served (no deadline), or headers are awaited from now. */
static void
set_deadline(struct MHD_Connection *conn, bool serving)
{
	int			i;

	for (i = 0; i < npending; i++)
		if (pending[i].conn == conn)
		{
			pending[i].deadline = serving ? 0 :
				TimestampTzPlusMilliseconds(GetCurrentTimestamp(), skade_rest_idle_timeout * 1000);
			return;
		}
}

/*
 * Shut down the socket of every connection past its deadline: libmicrohttpd
 * sees the end of the stream and closes it the next time it looks.  Not one
 * whose socket holds bytes libmicrohttpd has not read yet: a request that
 * came while this worker was busy serving another connection is served (its
 * deadline stays, so a sender that trickles is still cut once they are read).
 */
static void
cut_slow(void)
{
	TimestampTz now = GetCurrentTimestamp();
	int			i;

	for (i = 0; i < npending; i++)
		if (pending[i].deadline != 0 && now > pending[i].deadline)
		{
			const union MHD_ConnectionInfo *ci =
				MHD_get_connection_info(pending[i].conn, MHD_CONNECTION_INFO_CONNECTION_FD);
			char		b;

			if (ci && recv(ci->connect_fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) > 0)
				continue;		/* unread bytes: read them first */
			if (ci)
				(void) shutdown(ci->connect_fd, SHUT_RDWR);
			pending[i].deadline = 0;
		}
}

/*
 * Decode s in place as Iceberg's RESTUtil.decodeString does (URL form
 * decoding: %XX, and "+" for a space, as Java's clients encode names).
 */
static char *
decode(char *s)
{
	char	   *w = s;
	char	   *r = s;

	while (*r)
	{
		if (r[0] == '%' && isxdigit((unsigned char) r[1]) && isxdigit((unsigned char) r[2]))
		{
			char		hex[3] = {r[1], r[2], '\0'};

			*w++ = (char) strtol(hex, NULL, 16);
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
	return s;
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

		out = lappend(out, decode(pnstrdup(p, n)));
		if (p[n] == '\0')
			break;
		p += n + 1;
	}
	return out;
}
