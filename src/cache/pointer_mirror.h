/*-------------------------------------------------------------------------
 *
 * pointer_mirror.h
 *	  L1: table -> current metadata location, mirrored in shared memory.
 *
 * IDENTIFICATION
 *	  src/cache/pointer_mirror.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_POINTER_MIRROR_H
#define SKADE_POINTER_MIRROR_H

#include "cache/mirror_wal.h"

/*
 * One iceberg_tables row (results are palloc'd in the caller's context):
 * what catalog_store.c reads from the heap, and the mirror keeps.
 */
typedef struct StoreTable
{
	char	   *metadata_location;
	char	   *previous_metadata_location;
	bool		is_view;
	TransactionId xmin;			/* of the row version read */
	TransactionId xmax;
} StoreTable;

/* MirrorScope, what an entry belongs to: cache/mirror_wal.h (its records name it) */

extern Size MirrorShmemSize(void);
extern void MirrorShmemInit(void);
extern void MirrorInit(void);

extern void MirrorScopeOf(MirrorScope *scope, Oid relid, Oid tgoid);

/* read path */
extern bool MirrorLookup(const MirrorScope *scope, const char *catalog, const char *ns,
						 const char *name, StoreTable *out);
extern uint64 MirrorEpoch(void);
extern void MirrorFill(const MirrorScope *scope, const char *catalog, const char *ns,
					   const char *name, const StoreTable *row, uint64 epoch);

/* write path (the commit-log trigger) */
extern void MirrorNoteChange(const MirrorScope *scope, const char *catalog, const char *ns,
							 const char *name, bool removed, const char *location,
							 const char *previous, bool is_view);
extern void MirrorNoteTruncate(const MirrorScope *scope);

/* redo of mirror_wal.c's records (standbys, crash recovery) */
extern void MirrorRedoChange(const MirrorScope *scope, const char *names);
extern void MirrorRedoTruncate(const MirrorScope *scope, TransactionId xid);

/* statistics */
extern void MirrorStats(int64 *hits, int64 *misses, int64 *entries);

#endif							/* SKADE_POINTER_MIRROR_H */
