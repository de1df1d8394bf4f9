/*-------------------------------------------------------------------------
 *
 * rest_worker.c
 *	  The background workers that serve skade's Iceberg REST catalog:
 *	  skade.rest_workers of them when skade.rest_port is set, each a
 *	  session on skade.rest_database serving requests one at a time
 *	  (rest_http.c: the HTTP side; rest_routes.c: what each route does).
 *
 * Invariants
 *   - Registered only while preloading, and only with a port: no port, no
 *     worker and no socket.
 *   - A worker connects as the bootstrap superuser with search_path pinned
 *     to pg_catalog, pg_temp (every statement it runs names its schema);
 *     each request runs in its own transaction as the role its credentials
 *     map to (rest_routes.c), never as the superuser.
 *   - SIGTERM stops a worker cleanly (the daemons are stopped, connections
 *     closed) with exit code 1, so that one terminated alone is started
 *     again (at shutdown the postmaster starts none); SIGHUP rereads the
 *     settings; an ERROR outside a request or a
 *     crash ends it and the postmaster starts it again after a second.  A
 *     worker starts once the server is consistent, so a hot standby serves
 *     reads (writes answer 503: the transaction is read-only).
 *   - pg_stat_activity shows each worker ("skade rest worker N") with the
 *     request it is serving.
 *
 * IDENTIFICATION
 *	  src/rest_worker.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "utils/guc.h"

#include "guc.h"
#include "rest_http.h"
#include "rest_worker.h"

/*
 * SkadeRestWorkersRegister
 *		Register the REST workers (called from _PG_init while preloading).
 */
void
SkadeRestWorkersRegister(void)
{
	int			i;

	if (!process_shared_preload_libraries_in_progress || skade_rest_port == 0)
		return;
	for (i = 0; i < skade_rest_workers; i++)
	{
		BackgroundWorker worker = {0};

		worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
		worker.bgw_start_time = BgWorkerStart_ConsistentState;
		worker.bgw_restart_time = 1;
		worker.bgw_main_arg = Int32GetDatum(i);
		snprintf(worker.bgw_library_name, BGW_MAXLEN, "skade");
		snprintf(worker.bgw_function_name, BGW_MAXLEN, "skade_rest_worker_main");
		snprintf(worker.bgw_name, BGW_MAXLEN, "skade rest worker %d", i);
		snprintf(worker.bgw_type, BGW_MAXLEN, "skade rest worker");
		RegisterBackgroundWorker(&worker);
	}
}

/* The worker's entry point. */
void
skade_rest_worker_main(Datum arg)
{
	int			worker = DatumGetInt32(arg);

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(skade_rest_database, NULL, 0);
	SetConfigOption("search_path", "pg_catalog, pg_temp", PGC_SUSET, PGC_S_OVERRIDE);
	SetConfigOption("application_name", "skade rest", PGC_USERSET, PGC_S_SESSION);
	pgstat_report_appname("skade rest");
	SkadeRestServe(worker);
	/* not 0: a worker ended by pg_terminate_backend is started again */
	proc_exit(1);
}
