/*-------------------------------------------------------------------------
 *
 * index_worker.c
 *	  "skade index worker": a static background worker, connected to the
 *	  database named by skade.database, that rebuilds the STree64 snapshot
 *	  index from skade.snapshot_map and publishes each generation in DSM
 *	  (snapshot_index.c does the building and publishing).
 *
 * It wakes every second, or at once when skade.rebuild_index() sets its
 * latch, and rebuilds when asked to, when it has never built, or when a
 * trigger setting is reached (commits since the build, lookups the tree
 * could not answer, a time ceiling).  While the extension is not installed
 * in its database it looks again after a back-off of up to a minute.  It
 * runs as the bootstrap superuser, so its search_path is pinned to
 * pg_catalog, pg_temp above any database-level setting (safe_sql.c) and it
 * finds the extension by a catalog lookup, not SQL.  SIGHUP reloads the settings; SIGTERM
 * (die) ends it.  Any ERROR ends it and the postmaster restarts it after
 * SKADE_WORKER_RESTART_S seconds; a restarted worker frees a segment its
 * predecessor left half-published, and the previous generation stays in
 * use until the next one is published.  A crash of the whole server
 * discards every DSM segment.
 *
 * IDENTIFICATION
 *	  src/index/index_worker.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"

#include "util/guc.h"
#include "index/index_worker.h"
#include "util/safe_sql.h"
#include "index/snapshot_index.h"

#define SKADE_WORKER_RESTART_S	5
#define SKADE_WORKER_NAP_MS		1000

/*
 * SkadeIndexWorkerRegister
 *		Register the static worker (from _PG_init, while preloading).
 */
void
SkadeIndexWorkerRegister(void)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = SKADE_WORKER_RESTART_S;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "skade");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "skade_index_worker_main");
	snprintf(worker.bgw_name, BGW_MAXLEN, "skade index worker");
	snprintf(worker.bgw_type, BGW_MAXLEN, "skade index worker");
	RegisterBackgroundWorker(&worker);
}

void
skade_index_worker_main(Datum arg)
{
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(skade_database, NULL, 0);
	/* no ALTER DATABASE ... SET search_path may redirect what it runs */
	SkadeSafeSqlPinProcess();
	pgstat_report_appname("skade index worker");
	IndexWorkerAttach(MyLatch);

	for (;;)
	{
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 SKADE_WORKER_NAP_MS, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		if (IndexRebuildDue())
			IndexRebuild();
	}
}
