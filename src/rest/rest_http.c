/*-------------------------------------------------------------------------
 *
 * rest_http.c
 *	  The REST listener's HTTP side: the only file that calls
 *	  libmicrohttpd.  Listening sockets, the listener's event loop, the
 *	  deadlines of every connection, and the handler that turns
 *	  libmicrohttpd's callbacks into one RestRequest handed to an executor
 *	  (rest_pool.c) and its answer sent back.
 *
 * Invariants
 *   - One listener process serves every connection: one libmicrohttpd
 *     daemon per address of skade.rest_listen_addresses in external epoll
 *     mode (no thread of its own), run from the listener's WaitEventSet.
 *     The listener never waits for a request's work: a complete request is
 *     handed to the pool and its connection suspended until the answer
 *     comes back; meanwhile others are read, queued and answered.
 *   - With TLS (rest_tls.c) the daemons of skade.rest_port speak only TLS
 *     1.2+, those of skade.rest_plaintext_port plain HTTP; with a client
 *     CA a request whose connection presented no certificate of that CA is
 *     answered 401 here.  A reload that changes the files starts a new
 *     daemon with them on (a duplicate of) each listening socket before the
 *     old one is quiesced (MHD_quiesce_daemon); the old daemon serves its
 *     connections to their end, then stops: no connection is cut by a
 *     certificate rotation, and one that fails keeps the old daemon.
 *   - Every phase of a connection has a deadline, checked every TICK_MS:
 *     waiting for a request's headers (from the connection's start or its
 *     last answer) skade.rest_idle_timeout; receiving its body
 *     skade.rest_body_timeout in all, after its first second at least
 *     skade.rest_min_body_rate bytes a second on average, and never
 *     skade.rest_idle_timeout without a byte; sending an answer
 *     skade.rest_body_timeout plus its size at that rate.  A request being
 *     run has no deadline here: the executor's timeouts bound it.  A
 *     connection past its deadline is shut down (never one whose request
 *     bytes are unread: a request that came is served).
 *   - At most skade.rest_max_connections connections are kept: a new one
 *     past it takes the place of the connection furthest behind (never
 *     answered before served ones; then waiting longest for headers, or
 *     slowest below the minimum rate), or is closed when every other is
 *     being served.
 *   - A path or query argument that decodes to a NUL or to bytes that are
 *     not UTF-8 is answered 400 here, as is a body over
 *     skade.rest_max_body (413, once all of it was read), and GET /metrics
 *     from a loopback address (rest_metrics.c; unless
 *     skade.rest_metrics_loopback is off); everything else goes to an
 *     executor (GET /metrics from elsewhere too: it authenticates the
 *     caller, a role with pg_monitor's privileges, and the listener renders
 *     the figures).
 *   - Nothing raised in a callback unwinds through libmicrohttpd: each
 *     callback's work runs under PG_TRY, and an error becomes a 500.
 *   - The request path reaches the routes as sent (libmicrohttpd's own
 *     unescaping is turned off) and is split before each segment is
 *     decoded, so a name holding "/" (%2F) stays one segment.
 *
 * Memory: each request's in "skade rest request" (below TopMemoryContext),
 * deleted when libmicrohttpd reports the request complete, which is after
 * the answer was sent (MHD_RESPMEM_PERSISTENT, no copy) — or, when the
 * client went away while an executor runs it, once its answer came back.
 * Connections' state in "skade rest connections".
 *
 * IDENTIFICATION
 *	  src/rest/rest_http.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include <fcntl.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/ilist.h"
#include "miscadmin.h"
#include "postmaster/interrupt.h"
#include "storage/latch.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "utils/varlena.h"
#include "utils/wait_event.h"

#include "util/guc.h"
#include "rest/rest_http.h"
#include "rest/rest_metrics.h"
#include "rest/rest_pool.h"
#include "rest/rest_request.h"
#include "rest/rest_tls.h"

#define MAX_DAEMONS 16
#define TICK_MS 100
#define MAX_FDS 65536

/* where a connection is */
typedef enum Phase
{
	PH_IDLE,					/* waiting for a request's headers */
	PH_BODY,					/* headers in, body arriving */
	PH_WAITING,					/* queued or running in an executor */
	PH_SENDING,					/* the answer is queued */
} Phase;

typedef struct Request Request;

/* a connection (libmicrohttpd's socket context) */
typedef struct Conn
{
	dlist_node	node;
	struct MHD_Connection *mhd;
	int			fd;
	bool		loopback;
	Phase		phase;
	TimestampTz since;			/* the phase's start */
	uint64		bytes;			/* body bytes received, or the answer's size */
	TimestampTz last_bytes;		/* when body bytes last came */
	uint64		served;			/* answers sent on it */
	bool		cut;			/* shut down: closing */
} Conn;

/* a request (libmicrohttpd's con_cls) */
struct Request
{
	MemoryContext cxt;
	struct MHD_Connection *mhd;
	Conn	   *conn;
	RestRequest r;
	RestJob		job;
	bool		in_pool;		/* the pool holds job */
	bool		suspended;
	bool		orphan;			/* its connection is gone; the pool has it */
	bool		answered;
	bool		queued;			/* the answer is queued on the connection */
	RestResponse resp;
	TimestampTz start;			/* the whole request in */
};

/* ---- Local variables ---- */

/* a libmicrohttpd daemon: one listening socket */
typedef struct Daemon
{
	struct MHD_Daemon *mhd;
	bool		main_port;		/* on skade.rest_port (else the plaintext port) */
	RestTls    *tls;			/* its certificate (NULL: plain HTTP) */
	bool		draining;		/* quiesced: serves its connections, accepts none */
} Daemon;

static Daemon daemons[MAX_DAEMONS];
static int	ndaemons = 0;
static RestTls *tls_now = NULL; /* the main port's, for new daemons */
static bool wait_set_stale = false;
static dlist_head conns = DLIST_STATIC_INIT(conns);
static int	nlive = 0;			/* connections not cut */
static MemoryContext conn_cxt = NULL;

static void open_daemons(void);
static void open_port(const char *host, int port, bool main_port);
static struct MHD_Daemon *start_daemon(int fd, RestTls *tls);
static bool tls_usable(RestTls *tls);
static void reload_tls(void);
static void drain_daemons(void);
static WaitEventSet *wait_set(WaitEventSet *old);
static bool peer_acceptable(struct MHD_Connection *mhd);
static enum MHD_Result refuse_at_once(Request *rq, int status, const char *type, const char *message);
static int	listen_socket(const struct addrinfo *ai);
static unsigned int connection_cap(void);
static enum MHD_Result handle(void *cls, struct MHD_Connection *mhd, const char *url,
							  const char *method, const char *version,
							  const char *upload, size_t *upload_size, void **state);
static void completed(void *cls, struct MHD_Connection *mhd, void **state,
					  enum MHD_RequestTerminationCode why);
static size_t no_unescape(void *cls, struct MHD_Connection *mhd, char *s);
static Request *begin_request(struct MHD_Connection *mhd, const char *url, const char *method);
static enum MHD_Result collect_arg(void *cls, enum MHD_ValueKind kind, const char *key,
								   const char *value);
static bool body_length_known(struct MHD_Connection *mhd);
static void set_target(Request *rq);
static void take_body(Request *rq, const char *data, size_t n);
static enum MHD_Result request_in(Request *rq);
static void answer_here(Request *rq, int status, const char *type, const char *message);
static void job_done(RestJob *job, RestResponse *resp);
static enum MHD_Result send_answer(Request *rq);
static void notify_connection(void *cls, struct MHD_Connection *mhd, void **socket_context,
							  enum MHD_ConnectionNotificationCode code);
static Conn *conn_of(struct MHD_Connection *mhd);
static bool is_loopback(struct MHD_Connection *mhd);
static void enter(Conn *c, Phase phase, uint64 bytes);
static void reclaim(Conn *newcomer);
static void enforce_deadlines(void);
static void cut(Conn *c, RestCut why);
static bool unread(const Conn *c);

/*
 * SkadeRestListen
 *		The listener's life: listen, serve until shutdown.
 */
void
SkadeRestListen(void)
{
	WaitEventSet *set;
	int			i;

	conn_cxt = AllocSetContextCreate(TopMemoryContext, "skade rest connections",
									 ALLOCSET_DEFAULT_SIZES);
	if (RestTlsConfigured() && !MHD_is_feature_supported(MHD_FEATURE_TLS))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("skade.rest_tls_cert_file is set, but this libmicrohttpd has no TLS")));
	tls_now = RestTlsLoad(ERROR);
	if (tls_now && !tls_usable(tls_now))
		ereport(ERROR,
				(errcode(ERRCODE_CONFIG_FILE_ERROR),
				 errmsg("the REST server cannot use skade.rest_tls_cert_file and skade.rest_tls_key_file"),
				 errdetail("libmicrohttpd refused them: not a certificate and its key in PEM form.")));
	open_daemons();
	RestPoolStart(job_done);
	set = wait_set(NULL);
	ereport(LOG,
			(errmsg("skade REST listener on port %d%s", skade_rest_port,
					tls_now ? (tls_now->ca ? " (TLS, client certificates)" : " (TLS)") : "")));

	while (!ShutdownRequestPending)
	{
		WaitEvent	ev[MAX_DAEMONS + 2];
		long		timeout = TICK_MS;

		for (i = 0; i < ndaemons; i++)
		{
			MHD_UNSIGNED_LONG_LONG t;

			if (MHD_get_timeout(daemons[i].mhd, &t) == MHD_YES && (long long) t < timeout)
				timeout = (long) t;
		}
		(void) WaitEventSetWait(set, timeout, ev, lengthof(ev), PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
			reload_tls();
		}
		for (i = 0; i < ndaemons; i++)
			MHD_run(daemons[i].mhd);
		RestPoolPoll();
		/* answers that came back resumed their connections: send them */
		for (i = 0; i < ndaemons; i++)
			MHD_run(daemons[i].mhd);
		enforce_deadlines();
		drain_daemons();
		if (wait_set_stale)
			set = wait_set(set);
	}
	RestPoolStop();
	for (i = 0; i < ndaemons; i++)
		MHD_run(daemons[i].mhd);
	for (i = 0; i < ndaemons; i++)
		MHD_stop_daemon(daemons[i].mhd);
	FreeWaitEventSet(set);
}

/* The listener's events: its latch, the postmaster, every daemon's epoll. */
static WaitEventSet *
wait_set(WaitEventSet *old)
{
	WaitEventSet *set;
	int			i;

	if (old)
		FreeWaitEventSet(old);
	set = CreateWaitEventSet(NULL, ndaemons + 2);
	AddWaitEventToSet(set, WL_LATCH_SET, PGINVALID_SOCKET, MyLatch, NULL);
	AddWaitEventToSet(set, WL_EXIT_ON_PM_DEATH, PGINVALID_SOCKET, NULL, NULL);
	for (i = 0; i < ndaemons; i++)
	{
		const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemons[i].mhd,
															   MHD_DAEMON_INFO_EPOLL_FD);

		AddWaitEventToSet(set, WL_SOCKET_READABLE, info->epoll_fd, NULL, NULL);
	}
	wait_set_stale = false;
	return set;
}

/* ------------------------------------------------------------ sockets */

/*
 * A daemon on a socket of every listen address (ERROR if none), on
 * skade.rest_port and, when set, skade.rest_plaintext_port.
 */
static void
open_daemons(void)
{
	char	   *raw = pstrdup(skade_rest_listen_addresses ? skade_rest_listen_addresses : "");
	List	   *hosts;
	ListCell   *lc;

	if (!SplitGUCList(raw, ',', &hosts))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid list syntax in skade.rest_listen_addresses")));
	foreach(lc, hosts)
	{
		open_port(lfirst(lc), skade_rest_port, true);
		if (skade_rest_plaintext_port > 0)
			open_port(lfirst(lc), skade_rest_plaintext_port, false);
	}
	if (ndaemons == 0)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIG_FILE_ERROR),
				 errmsg("the REST server could not listen on any of \"%s\" port %d",
						skade_rest_listen_addresses, skade_rest_port)));
}

/* A daemon on each address host resolves to, on port. */
static void
open_port(const char *host, int port, bool main_port)
{
	struct addrinfo hints = {0};
	struct addrinfo *res;
	struct addrinfo *ai;
	char		portstr[16];
	int			rc;

	snprintf(portstr, sizeof(portstr), "%d", port);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE;
	rc = getaddrinfo(strcmp(host, "*") == 0 ? NULL : host, portstr, &hints, &res);
	if (rc != 0)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIG_FILE_ERROR),
				 errmsg("could not resolve REST listen address \"%s\": %s", host, gai_strerror(rc))));
	for (ai = res; ai && ndaemons < MAX_DAEMONS; ai = ai->ai_next)
	{
		int			fd = listen_socket(ai);
		RestTls    *tls = main_port ? tls_now : NULL;
		struct MHD_Daemon *d;

		if (fd < 0)
			continue;
		if ((d = start_daemon(fd, tls)) == NULL)
		{
			close(fd);
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("could not start the REST server on \"%s\" port %d", host, port)));
		}
		daemons[ndaemons++] = (Daemon) {d, main_port, tls, false};
	}
	freeaddrinfo(res);
}

/*
 * A daemon on the listening socket fd (-1: none, a trial of tls), speaking
 * TLS with tls when given; NULL when libmicrohttpd refuses.
 */
static struct MHD_Daemon *
start_daemon(int fd, RestTls *tls)
{
	struct MHD_OptionItem o[12];
	int			n = 0;
	unsigned int flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_SUPPRESS_DATE_NO_CLOCK;

#define OPT(opt, v, p) (o[n++] = (struct MHD_OptionItem) {(opt), (intptr_t) (v), (p)})
	if (fd >= 0)
		OPT(MHD_OPTION_LISTEN_SOCKET, fd, NULL);
	else
		flags |= MHD_USE_NO_LISTEN_SOCKET;
	/* no timeout of libmicrohttpd's own: enforce_deadlines keeps them */
	OPT(MHD_OPTION_CONNECTION_TIMEOUT, 0, NULL);
	OPT(MHD_OPTION_CONNECTION_LIMIT, connection_cap(), NULL);
	OPT(MHD_OPTION_NOTIFY_COMPLETED, completed, NULL);
	OPT(MHD_OPTION_NOTIFY_CONNECTION, notify_connection, NULL);
	OPT(MHD_OPTION_UNESCAPE_CALLBACK, no_unescape, NULL);
	if (tls)
	{
		flags |= MHD_USE_TLS;
		OPT(MHD_OPTION_HTTPS_MEM_CERT, 0, tls->cert);
		OPT(MHD_OPTION_HTTPS_MEM_KEY, 0, tls->key);
		OPT(MHD_OPTION_HTTPS_PRIORITIES, 0, REST_TLS_PRIORITIES);
		if (tls->ca)
			OPT(MHD_OPTION_HTTPS_MEM_TRUST, 0, tls->ca);
	}
	OPT(MHD_OPTION_END, 0, NULL);
#undef OPT
	return MHD_start_daemon(flags, 0, NULL, NULL, handle, NULL,
							MHD_OPTION_ARRAY, o, MHD_OPTION_END);
}

/* Does libmicrohttpd take tls (a trial daemon, listening nowhere)? */
static bool
tls_usable(RestTls *tls)
{
	struct MHD_Daemon *d = start_daemon(-1, tls);

	if (d == NULL)
		return false;
	MHD_stop_daemon(d);
	return true;
}

/*
 * After a reload: when the TLS files (or whether TLS is on) changed, each
 * daemon of the main port is replaced by one with the new files on its
 * listening socket: the new daemon starts on a duplicate of the socket,
 * and only then is the old one quiesced (it serves its connections to the
 * end, under the same deadlines, then drain_daemons stops it).  Files that
 * cannot be used, or a daemon that does not start, keep the old one: the
 * port never stops answering.
 */
static void
reload_tls(void)
{
	RestTls    *fresh = RestTlsLoad(WARNING);
	int			i,
				n = ndaemons,
				replacing = 0;

	if (fresh == NULL ? tls_now == NULL && !RestTlsConfigured() :
		(tls_now && strcmp(fresh->fingerprint, tls_now->fingerprint) == 0))
	{
		RestTlsFree(fresh);
		return;
	}
	for (i = 0; i < n; i++)
		replacing += daemons[i].main_port && !daemons[i].draining;
	if ((RestTlsConfigured() && (fresh == NULL || !tls_usable(fresh))) ||
		ndaemons + replacing > MAX_DAEMONS)
	{
		ereport(WARNING,
				(errmsg("the REST server keeps its current TLS certificate: %s",
						ndaemons + replacing > MAX_DAEMONS ?
						"the daemons of the last change are still serving their connections; reload again later" :
						"the new files cannot be used")));
		RestTlsFree(fresh);
		return;
	}
	for (i = 0; i < n; i++)
	{
		Daemon	   *d = &daemons[i];
		const union MHD_DaemonInfo *info;
		int			fd;
		struct MHD_Daemon *next = NULL;

		if (!d->main_port || d->draining)
			continue;
		info = MHD_get_daemon_info(d->mhd, MHD_DAEMON_INFO_LISTEN_FD);
		fd = info ? fcntl(info->listen_fd, F_DUPFD_CLOEXEC, 0) : -1;
		if (fd < 0 || (next = start_daemon(fd, fresh)) == NULL)
		{
			if (fd >= 0)
				close(fd);
			ereport(WARNING,
					(errmsg("the REST server keeps a listening socket on its current TLS certificate: a daemon with the new files did not start")));
			continue;
		}
		daemons[ndaemons++] = (Daemon) {next, true, fresh, false};
		fd = MHD_quiesce_daemon(d->mhd);
		if (fd != MHD_INVALID_SOCKET)
			close(fd);			/* the duplicate keeps the socket */
		d->draining = true;
	}
	tls_now = fresh;
	wait_set_stale = true;
	ereport(LOG,
			(errmsg("skade REST listener: %s", fresh ? "new TLS certificate in use" : "TLS off")));
}

/* Stop each drained daemon without connections, and free its files. */
static void
drain_daemons(void)
{
	int			i,
				j;

	for (i = 0; i < ndaemons; i++)
	{
		Daemon		d = daemons[i];
		const union MHD_DaemonInfo *info;
		bool		shared = false;

		if (!d.draining)
			continue;
		info = MHD_get_daemon_info(d.mhd, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
		if (info && info->num_connections > 0)
			continue;
		MHD_stop_daemon(d.mhd);
		memmove(&daemons[i], &daemons[i + 1], sizeof(Daemon) * (ndaemons - i - 1));
		ndaemons--;
		i--;
		for (j = 0; j < ndaemons; j++)
			shared |= daemons[j].tls == d.tls;
		if (d.tls && !shared && d.tls != tls_now)
			RestTlsFree(d.tls);
		wait_set_stale = true;
	}
}

/*
 * With skade.rest_tls_ca_file, is the client's certificate one of that
 * CA's?  (Plain-HTTP daemons and TLS without a CA: always.)
 */
static bool
peer_acceptable(struct MHD_Connection *mhd)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(mhd, MHD_CONNECTION_INFO_DAEMON);
	int			i;

	for (i = 0; ci && i < ndaemons; i++)
		if (daemons[i].mhd == ci->daemon)
		{
			const union MHD_ConnectionInfo *s;

			if (daemons[i].tls == NULL || daemons[i].tls->ca == NULL)
				return true;
			s = MHD_get_connection_info(mhd, MHD_CONNECTION_INFO_GNUTLS_SESSION);
			return s && RestTlsPeerVerified(s->tls_session);
		}
	return false;
}

/*
 * libmicrohttpd's own connection limit: as many descriptors as the process
 * may open (raised to its hard limit), less some for everything else.
 * skade.rest_max_connections (reloadable) is kept below it by reclaim().
 */
static unsigned int
connection_cap(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 1000;
	if (rl.rlim_cur < rl.rlim_max)
	{
		rl.rlim_cur = Min(rl.rlim_max, (rlim_t) MAX_FDS);
		(void) setrlimit(RLIMIT_NOFILE, &rl);
		(void) getrlimit(RLIMIT_NOFILE, &rl);
	}
	return (unsigned int) Max(64, Min(rl.rlim_cur, (rlim_t) MAX_FDS) - 128);
}

/* A non-blocking listening socket on ai; -1 on failure. */
static int
listen_socket(const struct addrinfo *ai)
{
	int			fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
							ai->ai_protocol);
	int			one = 1;

	if (fd < 0)
		return -1;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
		(ai->ai_family == AF_INET6 &&
		 setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) != 0) ||
		bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 ||
		listen(fd, 1024) != 0)
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
no_unescape(void *cls, struct MHD_Connection *mhd, char *s)
{
	return strlen(s);
}

/*
 * libmicrohttpd's access handler: called first with the headers, then with
 * each piece of the body, then once more when all of it is in, and once
 * more after a suspended connection is resumed with its answer.  Never
 * raises.
 */
static enum MHD_Result
handle(void *cls, struct MHD_Connection *mhd, const char *url, const char *method,
	   const char *version, const char *upload, size_t *upload_size, void **state)
{
	Request    *rq = *state;
	enum MHD_Result result = MHD_NO;
	volatile bool failed = false;

	PG_TRY();
	{
		if (rq == NULL)
		{
			*state = rq = begin_request(mhd, url, method);
			result = MHD_YES;
			if (!peer_acceptable(mhd))
				result = refuse_at_once(rq, 401, "NotAuthorizedException",
										"a client certificate of the authority skade.rest_tls_ca_file names is required");
			else if (!body_length_known(mhd))
				result = refuse_at_once(rq, 400, "BadRequestException",
										"a Transfer-Encoding whose last coding is not chunked leaves the body's length unknown");
		}
		else if (*upload_size > 0)
		{
			take_body(rq, upload, *upload_size);
			*upload_size = 0;
			result = MHD_YES;
		}
		else if (!rq->answered)
			result = request_in(rq);
		else
			result = send_answer(rq);
	}
	PG_CATCH();
	{
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

		result = MHD_queue_response(mhd, MHD_HTTP_INTERNAL_SERVER_ERROR, r);
		MHD_destroy_response(r);
	}
	return result;
}

/* Answer a request from its headers alone, never reading its body. */
static enum MHD_Result
refuse_at_once(Request *rq, int status, const char *type, const char *message)
{
	answer_here(rq, status, type, message);
	if (rq->conn)
		enter(rq->conn, PH_WAITING, 0);
	rq->start = GetCurrentTimestamp();
	return send_answer(rq);
}

/* The first call of a request: its context, method, path, query and headers. */
static Request *
begin_request(struct MHD_Connection *mhd, const char *url, const char *method)
{
	MemoryContext cxt = AllocSetContextCreate(TopMemoryContext, "skade rest request",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	Request    *rq = palloc0(sizeof(Request));
	const char *h;

	rq->cxt = cxt;
	rq->mhd = mhd;
	rq->conn = conn_of(mhd);
	rq->r.method = pstrdup(method);
	rq->r.raw_path = pstrdup(url);
	(void) MHD_get_connection_values(mhd, MHD_GET_ARGUMENT_KIND, collect_arg, rq);
#define HEADER(name) ((h = MHD_lookup_connection_value(mhd, MHD_HEADER_KIND, name)) ? pstrdup(h) : NULL)
	rq->r.authorization = HEADER("Authorization");
	rq->r.if_none_match = HEADER("If-None-Match");
	rq->r.idempotency_key = HEADER("Idempotency-Key");
	rq->r.accept_encoding = HEADER("Accept-Encoding");
	rq->r.access_delegation = HEADER("X-Iceberg-Access-Delegation");
#undef HEADER
	initStringInfo(&rq->r.body);
	rq->job.owner = rq;
	rq->job.body = &rq->r.body;
	rq->job.executor = -1;
	set_target(rq);
	MemoryContextSwitchTo(old);
	if (rq->conn)
		enter(rq->conn, PH_BODY, 0);
	return rq;
}

/*
 * Can the body's end be known: no Transfer-Encoding, or one whose last
 * coding is chunked (RFC 9112 6.3: else the server answers 400 and closes;
 * libmicrohttpd would read the body until the client closes).
 */
static bool
body_length_known(struct MHD_Connection *mhd)
{
	const char *te = MHD_lookup_connection_value(mhd, MHD_HEADER_KIND, "Transfer-Encoding");
	const char *last;
	size_t		n;

	if (te == NULL)
		return true;
	last = strrchr(te, ',');
	last = last ? last + 1 : te;
	while (*last == ' ' || *last == '\t')
		last++;
	n = strlen(last);
	while (n > 0 && (last[n - 1] == ' ' || last[n - 1] == '\t'))
		n--;
	return n == 7 && pg_strncasecmp(last, "chunked", 7) == 0;
}

/* MHD_KeyValueIterator: keep a query argument as sent. */
static enum MHD_Result
collect_arg(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	Request    *rq = cls;
	RestArg    *a = palloc(sizeof(RestArg));

	a->name = pstrdup(key ? key : "");
	a->value = value ? pstrdup(value) : NULL;
	rq->r.args = lappend(rq->r.args, a);
	return MHD_YES;
}

/*
 * What the request may wait for: the table or view its path names
 * (/v1/{prefix}/namespaces/{ns}/tables|views/{name}[/...], as sent), all
 * multi-table commits, or the tables and views created or registered in
 * one namespace (POST /v1/{prefix}/namespaces/{ns}/tables|views|register:
 * each reads or writes storage, which may hang) — reads and changes apart
 * ("r " or "w " before the path: changes waiting for a row lock never hold
 * up reads of the table); whether it is a commit.
 */
static void
set_target(Request *rq)
{
	const char *p = rq->r.raw_path;
	const char *seg[7];
	int			n = 0;
	bool		post = strcmp(rq->r.method, "POST") == 0;
	const char *kind = strcmp(rq->r.method, "GET") == 0 || strcmp(rq->r.method, "HEAD") == 0
		? "r " : "w ";

	while (*p == '/')
		p++;
	while (n < 7)
	{
		seg[n++] = p;
		p += strcspn(p, "/");
		if (*p == '\0')
			break;
		p++;
	}
	if (n >= 4 && strncmp(seg[2], "transactions/", 13) == 0)
	{
		rq->job.target = psprintf("%s%.*s", kind, (int) (seg[2] - rq->r.raw_path + 12), rq->r.raw_path);
		rq->job.commit = post;
	}
	else if (n >= 6 && strncmp(seg[2], "namespaces/", 11) == 0 &&
			 (strncmp(seg[4], "tables/", 7) == 0 || strncmp(seg[4], "views/", 6) == 0))
	{
		size_t		len = (n > 6 ? seg[6] - 1 : seg[5] + strlen(seg[5])) - rq->r.raw_path;

		rq->job.target = psprintf("%s%.*s", kind, (int) len, rq->r.raw_path);
		rq->job.commit = post && n == 6 && strncmp(seg[4], "tables/", 7) == 0;
	}
	else if (post && n == 5 && strncmp(seg[2], "namespaces/", 11) == 0 &&
			 (strcmp(seg[4], "tables") == 0 || strcmp(seg[4], "views") == 0 ||
			  strcmp(seg[4], "register") == 0))
		rq->job.target = psprintf("w %s", rq->r.raw_path);
}

/* A piece of the body (kept while within skade.rest_max_body). */
static void
take_body(Request *rq, const char *data, size_t n)
{
	if (rq->conn)
	{
		rq->conn->bytes += n;
		rq->conn->last_bytes = GetCurrentTimestamp();
	}
	if ((size_t) rq->r.body.len + n > (size_t) skade_rest_max_body)
		rq->r.body_too_large = true;
	else if (!rq->r.body_too_large)
	{
		MemoryContext old = MemoryContextSwitchTo(rq->cxt);

		appendBinaryStringInfo(&rq->r.body, data, n);
		MemoryContextSwitchTo(old);
	}
}

/*
 * All of the request is in: answer it here, or hand it to the pool and
 * suspend the connection until the answer comes back.
 */
static enum MHD_Result
request_in(Request *rq)
{
	const char *problem;

	rq->start = GetCurrentTimestamp();
	if (rq->conn)
		enter(rq->conn, PH_WAITING, 0);
	if (rq->r.body_too_large)
		answer_here(rq, 413, "BadRequestException", "the request body is too large");
	else if ((problem = RestPathProblem(&rq->r)) != NULL)
		answer_here(rq, 400, "BadRequestException", problem);
	else if (strcmp(rq->r.raw_path, "/metrics") == 0 && strcmp(rq->r.method, "GET") == 0 &&
			 rq->conn && rq->conn->loopback && skade_rest_metrics_loopback)
	{
		MemoryContext old = MemoryContextSwitchTo(rq->cxt);

		initStringInfo(&rq->resp.body);
		RestMetricsRender(&rq->resp.body);
		rq->resp.status = 200;
		rq->resp.route = "metrics";
		rq->answered = true;
		MemoryContextSwitchTo(old);
	}
	else
	{
		MemoryContext old = MemoryContextSwitchTo(rq->cxt);

		initStringInfo(&rq->job.head);
		RestRequestWriteHead(&rq->job.head, &rq->r);
		MemoryContextSwitchTo(old);
		rq->in_pool = true;
		RestPoolSubmit(&rq->job);
	}
	if (rq->answered)
		return send_answer(rq);
	MHD_suspend_connection(rq->mhd);
	rq->suspended = true;
	return MHD_YES;
}

/* An answer made by the listener itself. */
static void
answer_here(Request *rq, int status, const char *type, const char *message)
{
	MemoryContext old = MemoryContextSwitchTo(rq->cxt);

	initStringInfo(&rq->resp.body);
	RestErrorAnswer(&rq->resp, status, type, message);
	rq->answered = true;
	MemoryContextSwitchTo(old);
}

/* RestJobDone: the job's answer, kept in its request's context. */
static void
job_done(RestJob *job, RestResponse *resp)
{
	Request    *rq = job->owner;
	MemoryContext old;

	rq->in_pool = false;
	if (rq->orphan)
	{
		/* the client went away: nobody to answer */
		MemoryContextDelete(rq->cxt);
		return;
	}
	old = MemoryContextSwitchTo(rq->cxt);
	rq->resp = *resp;
	initStringInfo(&rq->resp.body);
	appendBinaryStringInfo(&rq->resp.body, resp->body.data, resp->body.len);
	rq->resp.etag = resp->etag ? pstrdup(resp->etag) : NULL;
	rq->resp.route = resp->route ? pstrdup(resp->route) : NULL;
	/* a role with pg_monitor asked for the metrics: the figures are here */
	if (rq->resp.status == 200 && rq->resp.route && strcmp(rq->resp.route, "metrics") == 0)
	{
		resetStringInfo(&rq->resp.body);
		RestMetricsRender(&rq->resp.body);
	}
	MemoryContextSwitchTo(old);
	rq->answered = true;
	if (rq->suspended)
	{
		rq->suspended = false;
		MHD_resume_connection(rq->mhd);
	}
}

/* Queue rq's answer on its connection. */
static enum MHD_Result
send_answer(Request *rq)
{
	RestResponse *resp = &rq->resp;
	struct MHD_Response *r;
	enum MHD_Result result;

	if (rq->queued)
		return MHD_YES;			/* (answered before its body was in) */
	rq->queued = true;
	/* the body lives in the request's context, deleted only once it is sent */
	r = MHD_create_response_from_buffer(resp->body.len, resp->body.data, MHD_RESPMEM_PERSISTENT);
	if (r == NULL)
		return MHD_NO;
	if (resp->body.len > 0)
		MHD_add_response_header(r, "Content-Type",
								strcmp(rq->r.raw_path, "/metrics") == 0 && resp->status == 200
								? "text/plain; version=0.0.4; charset=utf-8" : "application/json");
	if (resp->etag)
		MHD_add_response_header(r, "ETag", resp->etag);
	if (resp->gzip)
		MHD_add_response_header(r, "Content-Encoding", "gzip");
	if (resp->status == 503 && resp->retry_after <= 0)
		resp->retry_after = 1;	/* every 503 says when to come back */
	if (resp->retry_after > 0)
	{
		char		v[16];

		snprintf(v, sizeof(v), "%d", resp->retry_after);
		MHD_add_response_header(r, "Retry-After", v);
	}
	MHD_add_response_header(r, "Vary", "Accept-Encoding");
	result = MHD_queue_response(rq->mhd, resp->status, r);
	MHD_destroy_response(r);
	RestMetricsRequest(rq->r.method, resp->route, resp->status, resp->replayed,
					   (double) (GetCurrentTimestamp() - rq->start) / USECS_PER_SEC);
	if (rq->conn)
	{
		enter(rq->conn, PH_SENDING, resp->body.len);
		rq->conn->served++;
	}
	return result;
}

/*
 * The request is over (answered, or the connection went): its memory goes,
 * unless an executor still runs it (then the answer's arrival frees it).
 */
static void
completed(void *cls, struct MHD_Connection *mhd, void **state,
		  enum MHD_RequestTerminationCode why)
{
	Request    *rq = *state;
	Conn	   *c = conn_of(mhd);

	*state = NULL;
	if (c)
		enter(c, PH_IDLE, 0);	/* the next request's headers are awaited */
	if (rq == NULL)
		return;
	rq->conn = NULL;
	if (rq->in_pool && RestPoolWithdraw(&rq->job))
	{
		rq->orphan = true;
		return;
	}
	MemoryContextDelete(rq->cxt);
}

/* ------------------------------------------------------- connections */

/* libmicrohttpd reports connections opened and closed. */
static void
notify_connection(void *cls, struct MHD_Connection *mhd, void **socket_context,
				  enum MHD_ConnectionNotificationCode code)
{
	Conn	   *c = *socket_context;

	if (code == MHD_CONNECTION_NOTIFY_STARTED)
	{
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(mhd, MHD_CONNECTION_INFO_CONNECTION_FD);

		c = MemoryContextAllocZero(conn_cxt, sizeof(Conn));
		c->mhd = mhd;
		c->fd = ci ? ci->connect_fd : -1;
		c->loopback = is_loopback(mhd);
		enter(c, PH_IDLE, 0);
		dlist_push_tail(&conns, &c->node);
		nlive++;
		*socket_context = c;
		if (nlive > skade_rest_max_connections)
			reclaim(c);
		return;
	}
	if (c == NULL)
		return;
	dlist_delete(&c->node);
	if (!c->cut)
		nlive--;
	pfree(c);
	*socket_context = NULL;
}

static Conn *
conn_of(struct MHD_Connection *mhd)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(mhd, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? (Conn *) ci->socket_context : NULL;
}

/* Is the client on a loopback address (127.0.0.0/8, ::1, ::ffff:127.x)? */
static bool
is_loopback(struct MHD_Connection *mhd)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(mhd, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci ? ci->client_addr : NULL;

	if (sa == NULL)
		return false;
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *) sa)->sin_addr.s_addr) >> 24) == 127;
	if (sa->sa_family == AF_INET6)
	{
		const struct in6_addr *a = &((const struct sockaddr_in6 *) sa)->sin6_addr;

		return IN6_IS_ADDR_LOOPBACK(a) || (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
	}
	return false;
}

static void
enter(Conn *c, Phase phase, uint64 bytes)
{
	c->phase = phase;
	c->since = GetCurrentTimestamp();
	c->last_bytes = c->since;
	c->bytes = bytes;
}

/*
 * The server holds more than skade.rest_max_connections: cut the one
 * furthest behind to make room for the newcomer — among connections waiting
 * for headers or a body, those that were never answered first (a client that
 * was served and keeps its connection has shown it is no trickler), each
 * scored by the seconds it has been at it less what its bytes would take at
 * the minimum rate; the newcomer itself if every other one is being served.
 */
static void
reclaim(Conn *newcomer)
{
	TimestampTz now = GetCurrentTimestamp();
	Conn	   *victim = NULL;
	double		worst = 0;
	dlist_iter	it;

	dlist_foreach(it, &conns)
	{
		Conn	   *c = dlist_container(Conn, node, it.cur);
		double		score;

		if (c == newcomer || c->cut || (c->phase != PH_IDLE && c->phase != PH_BODY))
			continue;
		score = (double) (now - c->since) / USECS_PER_SEC;
		if (skade_rest_min_body_rate > 0)
			score -= (double) c->bytes / skade_rest_min_body_rate;
		/* (never answered: ahead of every served one) */
		score = (c->served == 0 ? 1e9 : 0) + Max(score, 0);
		if (victim == NULL || score > worst)
		{
			worst = score;
			victim = c;
		}
	}
	cut(victim ? victim : newcomer, REST_CUT_RECLAIMED);
}

/* Shut down every connection past its phase's deadline. */
static void
enforce_deadlines(void)
{
	TimestampTz now = GetCurrentTimestamp();
	dlist_iter	it;
	double		rate = skade_rest_min_body_rate;

	dlist_foreach(it, &conns)
	{
		Conn	   *c = dlist_container(Conn, node, it.cur);
		double		secs = (double) (now - c->since) / USECS_PER_SEC;

		if (c->cut)
			continue;
		switch (c->phase)
		{
			case PH_IDLE:
				if (secs > skade_rest_idle_timeout && !unread(c))
					cut(c, REST_CUT_IDLE);
				break;
			case PH_BODY:
				if (secs > skade_rest_body_timeout)
					cut(c, REST_CUT_BODY_DEADLINE);
				else if ((rate > 0 && secs > 1 && (double) c->bytes < rate * (secs - 1)) ||
						 (double) (now - c->last_bytes) / USECS_PER_SEC > skade_rest_idle_timeout)
					cut(c, REST_CUT_SLOW_BODY);
				break;
			case PH_SENDING:
				if (secs > skade_rest_body_timeout + (rate > 0 ? c->bytes / rate : 0))
					cut(c, REST_CUT_SLOW_READER);
				break;
			case PH_WAITING:
				break;
		}
	}
}

/*
 * Shut c's socket down: libmicrohttpd sees the end of the stream and
 * closes the connection the next time it looks.
 */
static void
cut(Conn *c, RestCut why)
{
	if (c->fd >= 0)
		(void) shutdown(c->fd, SHUT_RDWR);
	c->cut = true;
	nlive--;
	RestMetricsCut(why);
}

/* Does c's socket hold bytes libmicrohttpd has not read yet? */
static bool
unread(const Conn *c)
{
	char		b;

	return c->fd >= 0 && recv(c->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
}
