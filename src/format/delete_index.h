/*-------------------------------------------------------------------------
 *
 * delete_index.h
 *	  The delete files of a snapshot, indexed by partition, and which of
 *	  them apply to a data file (the Iceberg spec's rules).
 *
 * IDENTIFICATION
 *	  src/format/delete_index.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_DELETE_INDEX_H
#define SKADE_DELETE_INDEX_H

#include "nodes/pg_list.h"

#include "format/manifest_blob.h"

/* one live delete file of the snapshot */
typedef struct SkadeDeleteFile
{
	SkadeManifestEntry *entry;	/* a copy, in the index's memory context */
	void	   *owner;			/* the caller's data on its manifest */
	int32		spec_id;
	bool		seq_known;
	int64		seq;			/* data sequence number */
	bool		used;			/* applies to a data file looked up */
} SkadeDeleteFile;

typedef struct SkadeDeleteIndex SkadeDeleteIndex;

extern SkadeDeleteIndex *SkadeDeleteIndexCreate(MemoryContext cxt);
extern void SkadeDeleteIndexAdd(SkadeDeleteIndex *idx, const SkadeManifestEntry *e,
								int32 spec_id, uint64 key, bool comparable, bool unpartitioned,
								bool seq_known, int64 seq, void *owner);
extern List *SkadeDeletesFor(SkadeDeleteIndex *idx, const SkadeManifestEntry *data,
							 uint64 key, bool comparable, bool seq_known, int64 seq,
							 const SkadeColumn *cols, int ncols,
							 const SkadeColumnStats *stats);
extern List *SkadeDeleteIndexFiles(SkadeDeleteIndex *idx);

#endif							/* SKADE_DELETE_INDEX_H */
