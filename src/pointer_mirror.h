/*-------------------------------------------------------------------------
 *
 * pointer_mirror.h
 *	  L1: table -> current metadata location, mirrored in shared memory.
 *
 * IDENTIFICATION
 *	  src/pointer_mirror.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_POINTER_MIRROR_H
#define SKADE_POINTER_MIRROR_H

#include "catalog_store.h"

extern Size MirrorShmemSize(void);
extern void MirrorShmemInit(void);
extern void MirrorInit(void);

/* read path */
extern bool MirrorLookup(const char *catalog, const char *ns, const char *name,
						 StoreTable *out);
extern uint64 MirrorEpoch(void);
extern void MirrorFill(const char *catalog, const char *ns, const char *name,
					   const StoreTable *row, uint64 epoch);

/* write path (the commit-log trigger) */
extern void MirrorNoteChange(const char *catalog, const char *ns, const char *name,
							 bool removed, const char *location,
							 const char *previous, bool is_view);
extern void MirrorNoteTruncate(void);
extern void MirrorFlush(void);

/* statistics */
extern void MirrorStats(int64 *hits, int64 *misses, int64 *entries);

#endif							/* SKADE_POINTER_MIRROR_H */
