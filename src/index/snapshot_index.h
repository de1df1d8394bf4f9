/*-------------------------------------------------------------------------
 *
 * snapshot_index.h
 *	  The STree64 snapshot index: built by the index worker from
 *	  skade.snapshot_map, published in DSM, used by lookups only where it
 *	  answers exactly as the heap would.
 *
 * IDENTIFICATION
 *	  src/index/snapshot_index.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_SNAPSHOT_INDEX_H
#define SKADE_SNAPSHOT_INDEX_H

#include "storage/latch.h"

#include "index/snapshot_map.h"

extern Size IndexShmemSize(void);
extern void IndexShmemInit(void);
extern void IndexInit(void);
extern void IndexSubscribe(void);

/* write side (the commit-log trigger, before the writer commits) */
extern void IndexNoteSnapshots(Datum *ids, int n);
extern void IndexNoteTable(Datum catalog, Datum ns, Datum name);
extern void IndexNoteEverything(void);

/* read side */
extern void IndexResolve(const int64 *ids, const bool *nulls, int n,
						 const char *catalog, const char *ns, const char *name,
						 bool raw_locations, SnapshotHit *hits);

/* the worker */
extern void IndexWorkerAttach(Latch *latch);
extern bool IndexRebuildDue(void);
extern void IndexRebuild(void);

#endif							/* SKADE_SNAPSHOT_INDEX_H */
