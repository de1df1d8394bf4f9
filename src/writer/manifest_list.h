/*-------------------------------------------------------------------------
 *
 * manifest_list.h
 *	  Manifest lists read into entries and written back (see
 *	  manifest_list.c).
 *
 * IDENTIFICATION
 *	  src/writer/manifest_list.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_MANIFEST_LIST_H
#define SKADE_MANIFEST_LIST_H

#include "nodes/pg_list.h"

#include "io/route.h"

#define SKADE_LIST_NCOUNTS	6	/* added/existing/deleted files, then rows */

/* a manifest list entry's summary of one partition field */
typedef struct SkadeListSummary
{
	bool		contains_null;
	int			contains_nan;	/* -1: not recorded */
	char	   *lower;			/* NULL: none */
	int			lower_len;
	char	   *upper;
	int			upper_len;
} SkadeListSummary;

/* a manifest list entry, read or to write */
typedef struct SkadeListEntry
{
	char	   *path;
	int64		length;
	int32		spec_id;
	int32		content;		/* 0 data, 1 deletes */
	int64		seq;
	int64		min_seq;
	int64		added_snapshot_id;
	bool		has_count[SKADE_LIST_NCOUNTS];
	int64		count[SKADE_LIST_NCOUNTS];
	int			nsummaries;		/* -1: partitions not recorded */
	SkadeListSummary *summaries;
	char	   *key_metadata;	/* NULL: none */
	int			key_metadata_len;
	bool		has_first_row_id;	/* v3 */
	int64		first_row_id;
	bool		chosen;			/* the caller's mark */
} SkadeListEntry;

/* the snapshot a manifest list belongs to, as its header names it */
typedef struct SkadeListHeader
{
	int			format_version;
	int64		snapshot_id;
	bool		has_parent;
	int64		parent_id;
	int64		seq;			/* v2 and up */
	int64		first_row_id;	/* v3: the first row id it assigns */
} SkadeListHeader;

extern List *SkadeManifestListRead(const SkadeRoute *route, const char *list,
								   int64 snapshot_id, int64 seq);
extern void SkadeManifestListWrite(const SkadeRoute *route, const char *path,
								   const SkadeListHeader *h, List *entries, int64 *next_row_id);

#endif							/* SKADE_MANIFEST_LIST_H */
