/*-------------------------------------------------------------------------
 *
 * shmem.c
 *	  skade's own fixed shared-memory struct (SkadeShared: counters, the
 *	  journal's lock) and the "was skade preloaded?" guard used by every
 *	  function that needs shared memory.
 *
 * The segment exists only when skade is in shared_preload_libraries.  In
 * any other backend skade_shared stays NULL, and SkadeRequireShared()
 * raises OBJECT_NOT_IN_PREREQUISITE_STATE with a hint.  The trigger
 * functions that log pointer changes do not need shared memory, so JDBC
 * clients' commits keep being logged even in a misconfigured server.
 *
 * skade.c requests and initialises this struct beside the caches' and the
 * index's parts (the hooks are installed there, once).  Locking: the
 * counters are atomics; journal_lock guards journal_compacted
 * (written_files.c); decode_helpers is an atomic (manifest_helper.c).
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

#include "util/shmem.h"

SkadeShared *skade_shared = NULL;

/*
 * SkadeSharedShmemRequest
 *		Request the struct's space and its lock (from the
 *		shmem_request_hook).
 */
void
SkadeSharedShmemRequest(void)
{
	RequestAddinShmemSpace(MAXALIGN(sizeof(SkadeShared)));
	RequestNamedLWLockTranche("skade", 1);
}

/*
 * SkadeSharedShmemInit
 *		Attach the struct, initialising it when first created (from the
 *		shmem_startup_hook, holding AddinShmemInitLock).
 */
void
SkadeSharedShmemInit(void)
{
	bool		found;

	skade_shared = ShmemInitStruct("skade", sizeof(SkadeShared), &found);
	if (!found)
	{
		skade_shared->journal_lock = &(GetNamedLWLockTranche("skade"))[0].lock;
		skade_shared->journal_compacted = 0;
		pg_atomic_init_u64(&skade_shared->commits, 0);
		pg_atomic_init_u64(&skade_shared->conflicts, 0);
		pg_atomic_init_u64(&skade_shared->rebased, 0);
		pg_atomic_init_u64(&skade_shared->group_commits, 0);
		pg_atomic_init_u64(&skade_shared->group_members, 0);
		pg_atomic_init_u64(&skade_shared->update_c, 0);
		pg_atomic_init_u64(&skade_shared->update_engine, 0);
		pg_atomic_init_u64(&skade_shared->s3_requests, 0);
		pg_atomic_init_u64(&skade_shared->s3_retries, 0);
		pg_atomic_init_u32(&skade_shared->decode_helpers, 0);
	}
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
