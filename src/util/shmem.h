/*-------------------------------------------------------------------------
 *
 * shmem.h
 *	  skade's fixed shared-memory state.
 *
 * IDENTIFICATION
 *	  src/util/shmem.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_SHMEM_H
#define SKADE_SHMEM_H

#include "port/atomics.h"
#include "storage/lwlock.h"

typedef struct SkadeShared
{
	pg_atomic_uint64 commits;	/* pointer changes logged (all paths) */
	pg_atomic_uint64 conflicts; /* CAS commits lost through the SQL API */
	pg_atomic_uint64 rebased;	/* stale appends rebased (commit_rebase.c) */
	pg_atomic_uint64 group_commits; /* groups that committed others' commits
									 * (commit_group.c) */
	pg_atomic_uint64 group_members; /* commits made by another's group */
	pg_atomic_uint64 update_c;	/* update_table commits the C path made or
								 * found unchanging (commit_fast.c) */
	pg_atomic_uint64 update_engine; /* ... it left to the PL/pgSQL engine */
	LWLock	   *journal_lock;	/* the journal of written files: shared to
								 * append, exclusive to compact */
	uint64		journal_compacted;	/* its size after the last compaction
									 * (journal_lock) */
	pg_atomic_uint64 s3_requests;	/* S3 request attempts, every backend */
	pg_atomic_uint64 s3_retries;	/* of which retries */
	pg_atomic_uint32 decode_helpers;	/* manifest helpers started and not yet
										 * exited (manifest_helper.c) */
} SkadeShared;

extern SkadeShared *skade_shared;

extern void SkadeSharedShmemRequest(void);
extern void SkadeSharedShmemInit(void);
extern void SkadeRequireShared(void);

#endif							/* SKADE_SHMEM_H */
