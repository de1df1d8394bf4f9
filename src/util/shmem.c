/*-------------------------------------------------------------------------
 *
 * shmem.c
 *	  skade's fixed shared-memory segment: request, startup, and the
 *	  "was skade preloaded?" guard used by every function that needs it.
 *
 * The segment exists only when skade is in shared_preload_libraries.  In
 * any other backend skade_shared stays NULL, and SkadeRequireShared()
 * raises OBJECT_NOT_IN_PREREQUISITE_STATE with a hint.  The trigger
 * functions that log pointer changes do not need shared memory, so JDBC
 * clients' commits keep being logged even in a misconfigured server.
 *
 * The subsystems that live in shared memory (L0 metadata cache, L0.5
 * manifest cache, L1 pointer mirror, time-travel index) size and initialise
 * their parts from here; their locking is described in their own files.  The counters here are atomics and need no
 * lock.
 *
 * IDENTIFICATION
 *	  src/util/shmem.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/shmem.h"

#include "cache/l0_cache.h"
#include "cache/manifest_cache.h"
#include "cache/pointer_mirror.h"
#include "util/shmem.h"
#include "index/snapshot_index.h"

SkadeShared *skade_shared = NULL;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static void skade_shmem_request(void);
static void skade_shmem_startup(void);

/*
 * SkadeShmemInit
 *		Install the shared-memory hooks.  Called from _PG_init only while
 *		shared_preload_libraries is being processed.
 */
void
SkadeShmemInit(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = skade_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = skade_shmem_startup;
}

/*
 * SkadeRequireShared
 *		Error out unless skade's shared memory is available.
 */
void
SkadeRequireShared(void)
{
	if (skade_shared == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("skade must be loaded via shared_preload_libraries"),
				 errhint("Add skade to shared_preload_libraries in postgresql.conf and restart the server.")));
}

static void
skade_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();

	RequestAddinShmemSpace(MAXALIGN(sizeof(SkadeShared)));
	RequestAddinShmemSpace(L0ShmemSize());
	RequestAddinShmemSpace(ManifestCacheShmemSize());
	RequestAddinShmemSpace(MirrorShmemSize());
	RequestAddinShmemSpace(IndexShmemSize());
	RequestNamedLWLockTranche("skade", 2);
}

static void
skade_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	/* reset in case this is a restart within the postmaster */
	skade_shared = NULL;

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	skade_shared = ShmemInitStruct("skade", sizeof(SkadeShared), &found);
	if (!found)
	{
		skade_shared->lock = &(GetNamedLWLockTranche("skade"))[0].lock;
		skade_shared->journal_lock = &(GetNamedLWLockTranche("skade"))[1].lock;
		skade_shared->journal_compacted = 0;
		pg_atomic_init_u64(&skade_shared->commits, 0);
		pg_atomic_init_u64(&skade_shared->api_commits, 0);
		pg_atomic_init_u64(&skade_shared->conflicts, 0);
		pg_atomic_init_u64(&skade_shared->s3_requests, 0);
		pg_atomic_init_u64(&skade_shared->s3_retries, 0);
		pg_atomic_init_u32(&skade_shared->decode_helpers, 0);
	}
	L0ShmemInit();
	ManifestCacheShmemInit();
	MirrorShmemInit();
	IndexShmemInit();
	LWLockRelease(AddinShmemInitLock);
}
