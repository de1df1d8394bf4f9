/*-------------------------------------------------------------------------
 *
 * rest_worker.c
 *	  The background workers that serve skade's Iceberg REST catalog when
 *	  skade.rest_port is set: one listener ("skade rest listener": HTTP,
 *	  rest_http.c; connected to no database) and its executors ("skade rest
 *	  worker N": dynamic workers it starts, rest_pool.c), each a session on
 *	  skade.rest_database that answers one request at a time
 *	  (rest_routes.c) under the REST timeouts.
 *
 * Invariants
 *   - The listener is registered only while preloading, and only with a
 *     port: no port, no worker and no socket.  SIGTERM stops it cleanly
 *     with exit code 1, so that one terminated alone is started again (at
 *     shutdown the postmaster starts none); its executors see their queues
 *     detached and exit.
 *   - An executor connects as the bootstrap superuser with search_path
 *     pinned to pg_catalog, pg_temp (every statement it runs names its
 *     schema); each request runs in its own transaction as the role its
 *     credentials map to (rest_routes.c), never as the superuser, with
 *     lock_timeout = skade.rest_lock_timeout and a statement timeout of
 *     skade.rest_statement_timeout armed around the whole request (a
 *     background worker gets no statement_timeout of its own).  SIGTERM
 *     (pg_terminate_backend) ends it as it ends a session: the request it
 *     runs is rolled back.  It starts once the server is consistent, so a
 *     hot standby serves reads (writes answer 503: read-only).
 *   - pg_stat_activity shows each executor with the request it serves.
 *   - A crash of either (a signal, not an ERROR) takes the cluster through
 *     crash recovery, as any process attached to shared memory does.
 *
 * IDENTIFICATION
 *	  src/rest/rest_worker.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/shm_mq.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/timeout.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "util/guc.h"
#include "util/gzip.h"
#include "rest/rest_http.h"
#include "rest/rest_pool.h"
#include "rest/rest_request.h"
#include "rest/rest_routes.h"
#include "rest/rest_worker.h"

#define SWEEP_INTERVAL_MS	60000

static void serve(shm_mq_handle *out, const char *data, Size len);
static void run_request(RestRequest *req, RestResponse *resp);
static void compress(const RestRequest *req, RestResponse *resp);
static void set_lock_timeout(void);

/*
 * SkadeRestWorkersRegister
 *		Register the listener (called from _PG_init while preloading).
 */
void
SkadeRestWorkersRegister(void)
{
	BackgroundWorker worker = {0};

	if (!process_shared_preload_libraries_in_progress || skade_rest_port == 0)
		return;
	/* (connected to no database: only so that pg_stat_activity shows it) */
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_ConsistentState;
	worker.bgw_restart_time = 1;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "skade");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "skade_rest_listener_main");
	snprintf(worker.bgw_name, BGW_MAXLEN, "skade rest listener");
	snprintf(worker.bgw_type, BGW_MAXLEN, "skade rest listener");
	RegisterBackgroundWorker(&worker);
}

/* The listener's entry point. */
void
skade_rest_listener_main(Datum arg)
{
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	/* it runs no statement to cancel: pg_cancel_backend must not end it */
	pqsignal(SIGINT, SIG_IGN);
	pgstat_report_appname("skade rest");
	/* the TLS files' fingerprint hashes with PostgreSQL's cryptohash: it tracks a resource owner */
	CurrentResourceOwner = ResourceOwnerCreate(NULL, "skade rest listener");
	SkadeRestListen();
	/* not 0: a listener ended by pg_terminate_backend is started again */
	proc_exit(1);
}

/* An executor's entry point: requests from its queue until it is detached. */
void
skade_rest_executor_main(Datum arg)
{
	shm_mq_handle *in;
	shm_mq_handle *out;
	bool		sweeper = strcmp(MyBgworkerEntry->bgw_name, "skade rest worker 0") == 0;
	TimestampTz last_sweep = 0;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(skade_rest_database, NULL, 0);
	SetConfigOption("search_path", "pg_catalog, pg_temp", PGC_SUSET, PGC_S_OVERRIDE);
	SetConfigOption("application_name", "skade rest", PGC_USERSET, PGC_S_SESSION);
	pgstat_report_appname("skade rest");
	SkadeRestWarmUp();
	RestExecutorAttach(arg, &in, &out);

	for (;;)
	{
		Size		n;
		void	   *data;
		shm_mq_result r;

		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		r = shm_mq_receive(in, &n, &data, true);
		if (r == SHM_MQ_DETACHED)
			break;
		if (r == SHM_MQ_SUCCESS)
		{
			serve(out, data, n);
			continue;
		}
		if (sweeper && TimestampDifferenceExceeds(last_sweep, GetCurrentTimestamp(), SWEEP_INTERVAL_MS))
		{
			SkadeRestSweepIdempotency();
			last_sweep = GetCurrentTimestamp();
		}
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 SWEEP_INTERVAL_MS, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
	/* retired by the listener, or the listener is gone */
	proc_exit(0);
}

/* Answer the request of one message and send the answer back. */
static void
serve(shm_mq_handle *out, const char *data, Size len)
{
	MemoryContext cxt = AllocSetContextCreate(TopMemoryContext, "skade rest request",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	RestRequest *req = RestRequestRead(data, len);
	RestResponse resp = {0};
	StringInfoData head;
	shm_mq_iovec iov[2];

	initStringInfo(&resp.body);
	run_request(req, &resp);
	initStringInfo(&head);
	RestResponseWriteHead(&head, &resp);
	iov[0].data = head.data;
	iov[0].len = head.len;
	iov[1].data = resp.body.data;
	iov[1].len = resp.body.len;
	MemoryContextSwitchTo(old);
	if (shm_mq_sendv(out, iov, 2, false, true) != SHM_MQ_SUCCESS)
		proc_exit(0);			/* the listener is gone */
	MemoryContextDelete(cxt);
}

/*
 * Route req under the REST timeouts; what the route could not answer
 * (out of memory and the like) is a 500.
 */
static void
run_request(RestRequest *req, RestResponse *resp)
{
	MemoryContext cxt = CurrentMemoryContext;

	set_lock_timeout();
	enable_timeout_after(STATEMENT_TIMEOUT, skade_rest_statement_timeout);
	PG_TRY();
	{
		SkadeRestRoute(req, resp);
		compress(req, resp);
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(cxt);
		EmitErrorReport();
		FlushErrorState();
		resetStringInfo(&resp->body);
		RestErrorAnswer(resp, 500, "InternalServerError", "internal error");
	}
	PG_END_TRY();
	disable_timeout(STATEMENT_TIMEOUT, false);
	/* a timeout that fired after the route ended cancels nothing */
	QueryCancelPending = false;
}

/* lock_timeout = skade.rest_lock_timeout (set again only when it changed) */
static void
set_lock_timeout(void)
{
	static int	set = -1;

	if (set != skade_rest_lock_timeout)
	{
		char		v[32];

		snprintf(v, sizeof(v), "%d", skade_rest_lock_timeout);
		SetConfigOption("lock_timeout", v, PGC_SUSET, PGC_S_OVERRIDE);
		set = skade_rest_lock_timeout;
	}
}

/*
 * gzip a body worth it (REST_GZIP_MIN bytes) for a client that accepts it;
 * a route may have compressed it already (resp->gzip).  Here, in the
 * executor, so the listener spends no time on it.
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
