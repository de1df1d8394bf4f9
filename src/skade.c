/*-------------------------------------------------------------------------
 *
 * skade.c
 *	  Module entry point: PG_MODULE_MAGIC and _PG_init, which only fans out
 *	  to the subsystems' initialisers.
 *
 * GUCs are defined in every process that loads the library, so that
 * SET skade.* works even when skade was not preloaded.  Shared memory is
 * requested only while shared_preload_libraries is processed; functions
 * that need it check SkadeRequireShared() and fail with a hint otherwise.
 *
 * IDENTIFICATION
 *	  src/skade.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/shmem.h"

#include "cache/l0_cache.h"
#include "cache/manifest_cache.h"
#include "cache/pointer_mirror.h"
#include "catalog/catalog_store.h"
#include "catalog/change_feed.h"
#include "catalog/restore.h"
#include "format/avro_reader.h"
#include "format/metadata_json.h"
#include "index/index_worker.h"
#include "index/snapshot_index.h"
#include "index/stree64.h"
#include "io/object_store.h"
#include "io/written_files.h"
#include "rest/rest_worker.h"
#include "util/guc.h"
#include "util/shmem.h"
#include "writer/commit_group.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static void skade_shmem_request(void);
static void skade_shmem_startup(void);

void
_PG_init(void)
{
	SkadeGucInit();
	SkadeJsonInit();
	SkadeAvroInit();
	STree64SelectImpl();
	SkadeRestoreInit();
	SkadeObjectSetPropertiesReader(StoreNamespaceProperties);
	IndexSubscribe();
	SkadeWrittenSubscribe();

	if (!process_shared_preload_libraries_in_progress)
		return;

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = skade_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = skade_shmem_startup;
	MirrorInit();
	IndexInit();
	SkadeWrittenInit();

	/*
	 * No background workers in binary-upgrade mode (-b, a server pg_upgrade
	 * runs), as PostgreSQL does for its logical replication launcher: the
	 * index worker's connection to skade.database would make pg_restore's
	 * DROP DATABASE of "postgres" (and template1) fail ("is being accessed
	 * by other users"), and the REST listener would open a TCP port where
	 * pg_upgrade admits no connection but its own.
	 */
	if (IsBinaryUpgrade)
		return;
	SkadeIndexWorkerRegister();
	SkadeRestWorkersRegister();
}

/* every part of skade's shared memory, requested once */
static void
skade_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	SkadeSharedShmemRequest();
	SkadeGroupShmemRequest();
	SkadeFeedShmemRequest();
	RequestAddinShmemSpace(L0ShmemSize());
	RequestAddinShmemSpace(ManifestCacheShmemSize());
	RequestAddinShmemSpace(MirrorShmemSize());
	RequestAddinShmemSpace(IndexShmemSize());
}

/* attach (first: create) every part, under AddinShmemInitLock */
static void
skade_shmem_startup(void)
{
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	/* reset in case this is a restart within the postmaster */
	skade_shared = NULL;

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	SkadeSharedShmemInit();
	SkadeGroupShmemInit();
	SkadeFeedShmemInit();
	L0ShmemInit();
	ManifestCacheShmemInit();
	MirrorShmemInit();
	IndexShmemInit();
	LWLockRelease(AddinShmemInitLock);
}
