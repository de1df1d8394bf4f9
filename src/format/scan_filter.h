/*-------------------------------------------------------------------------
 *
 * scan_filter.h
 *	  Iceberg REST filter expressions (JSON), bound to a table schema and
 *	  evaluated against a data file's column statistics: "may this file
 *	  hold a matching row?"
 *
 * IDENTIFICATION
 *	  src/format/scan_filter.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_SCAN_FILTER_H
#define SKADE_SCAN_FILTER_H

#include "utils/jsonb.h"

#include "format/metadata_json.h"

/* per-column statistics of one data file (bounds in single-value form) */
typedef struct SkadeColumnStats
{
	int64		count[4];		/* size, values, nulls, nans */
	bool		has_count[4];
	const char *bound[2];		/* lower, upper (NULL: none) */
	size_t		bound_len[2];
	bool		upper_strict;	/* every value is below bound[1] (a truncate
								 * partition's prefix, rounded up) */
	int32		bucket_n;		/* > 0: every row's bucket[bucket_n] of the */
	int32		bucket_lo;		/* column is in [bucket_lo, bucket_hi] */
	int32		bucket_hi;
} SkadeColumnStats;

#define SKADE_STAT_VALUES	1
#define SKADE_STAT_NULLS	2
#define SKADE_STAT_NANS		3

typedef struct SkadeFilter SkadeFilter;

extern SkadeFilter *SkadeFilterBuild(Jsonb *filter, const SkadeColumn *cols, int ncols);
extern bool SkadeFilterMayMatch(const SkadeFilter *f, const SkadeColumn *cols, int ncols,
								const SkadeColumnStats *stats, const char *file);
extern bool SkadeBoundLengthOk(const SkadeColumn *c, size_t len);
extern bool SkadeBoundsDisjoint(const SkadeColumn *c, const char *alo, size_t alolen,
								const char *ahi, size_t ahilen, const char *blo, size_t blolen,
								const char *bhi, size_t bhilen);
extern void SkadeCheckBoundLength(const SkadeColumn *c, size_t len, const char *which,
								  const char *file);
extern int64 SkadeLeInt(const char *p, size_t len);
extern double SkadeBoundFloat(const char *p, size_t len);
extern int128 SkadeDecimalBound(const char *p, size_t len);
extern int	SkadeDecimalBytes(int128 v, char *out);
extern int32 SkadeBucketLong(int64 v, int32 n);
extern int32 SkadeBucketBytes(const char *p, size_t len, int32 n);

#endif							/* SKADE_SCAN_FILTER_H */
