/*-------------------------------------------------------------------------
 *
 * partition_stats.h
 *	  Partition values and partition summaries projected onto the source
 *	  columns' statistics, so a filter on the columns can prune by them.
 *
 * IDENTIFICATION
 *	  src/format/partition_stats.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_PARTITION_STATS_H
#define SKADE_PARTITION_STATS_H

#include "format/metadata_json.h"
#include "format/scan_filter.h"

typedef enum SkadeTransform
{
	SKADE_TR_IDENTITY,
	SKADE_TR_YEAR,
	SKADE_TR_MONTH,
	SKADE_TR_DAY,
	SKADE_TR_HOUR,
	SKADE_TR_BUCKET,
	SKADE_TR_TRUNCATE,
	SKADE_TR_VOID,
	SKADE_TR_OTHER				/* unknown: never used to prune */
} SkadeTransform;

/* a partition field bound to a schema */
typedef struct SkadeBoundPartition
{
	const SkadePartitionField *field;
	SkadeTransform transform;
	int32		param;			/* N of bucket[N], W of truncate[W] */
	int			source;			/* index of the source column; -1 if absent */
} SkadeBoundPartition;

/* one partition value or summary bound in single-value form (len -1: null) */
typedef struct SkadePartitionDatum
{
	const char *p;
	int			len;
} SkadePartitionDatum;

extern SkadeBoundPartition *SkadeBindPartition(const SkadePartitionField *fields, int nfields,
											   const SkadeColumn *cols, int ncols);
extern void SkadeStatsFromPartition(const SkadeBoundPartition *parts, int nparts,
									const SkadeColumn *cols, const SkadePartitionDatum *values,
									SkadeColumnStats *stats);
extern void SkadeStatsFromSummary(const SkadeBoundPartition *part, const SkadeColumn *cols,
								  int contains_null, SkadePartitionDatum lower,
								  SkadePartitionDatum upper, SkadeColumnStats *stats);

#endif							/* SKADE_PARTITION_STATS_H */
