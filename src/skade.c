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

#include "format/avro_reader.h"
#include "util/guc.h"
#include "index/index_worker.h"
#include "rest/rest_worker.h"
#include "format/metadata_json.h"
#include "cache/mirror_wal.h"
#include "cache/pointer_mirror.h"
#include "catalog/restore.h"
#include "util/shmem.h"
#include "index/snapshot_index.h"
#include "index/stree64.h"
#include "io/written_files.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

void
_PG_init(void)
{
	SkadeGucInit();
	SkadeJsonInit();
	SkadeAvroInit();
	STree64SelectImpl();
	SkadeRestoreInit();

	if (!process_shared_preload_libraries_in_progress)
		return;

	SkadeShmemInit();
	MirrorInit();
	MirrorWalInit();
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
