/*-------------------------------------------------------------------------
 *
 * bound_json.h
 *	  Column statistics and bounds of a data file as readable JSON.
 *
 * IDENTIFICATION
 *	  src/bound_json.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_BOUND_JSON_H
#define SKADE_BOUND_JSON_H

#include "lib/stringinfo.h"

#include "metadata_json.h"
#include "scan_filter.h"

extern void SkadeAppendColumnsJson(StringInfo out, const SkadeColumn *cols, int ncols,
								   const SkadeColumnStats *stats, const char *file);
extern bool SkadeStatsReadable(const SkadeColumn *cols, int ncols,
							   const SkadeColumnStats *stats);
extern bool SkadeBoundReadable(const SkadeColumn *c, const char *p, size_t len);
extern void SkadeAppendBound(StringInfo out, const SkadeColumn *c, const char *p, size_t len,
							 const char *which, const char *file);
extern void SkadeAppendHex(StringInfo out, const char *p, size_t len);

#endif							/* SKADE_BOUND_JSON_H */
