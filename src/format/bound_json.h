/*-------------------------------------------------------------------------
 *
 * bound_json.h
 *	  Column statistics and bounds of a data file as readable JSON.
 *
 * IDENTIFICATION
 *	  src/format/bound_json.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_BOUND_JSON_H
#define SKADE_BOUND_JSON_H

#include "utils/jsonb.h"

#include "format/metadata_json.h"
#include "format/scan_filter.h"

extern Datum SkadeColumnsJsonb(const SkadeColumn *cols, int ncols,
							   const SkadeColumnStats *stats, const char *file);
extern Datum SkadeColumnsJsonbIfReadable(const SkadeColumn *cols, int ncols,
										 const SkadeColumnStats *stats, const char *file);
extern bool SkadeStatsReadable(const SkadeColumn *cols, int ncols,
							   const SkadeColumnStats *stats);
extern bool SkadeBoundReadable(const SkadeColumn *c, const char *p, size_t len);
extern void SkadeBoundJsonb(const SkadeColumn *c, const char *p, size_t len, const char *which,
							const char *file, JsonbValue *out);
extern void SkadeHexJsonb(const char *p, size_t len, JsonbValue *out);
extern Datum SkadeJsonbObject(JsonbPair *pairs, int n);

/* JsonbValue builders (strings are not copied) */
extern JsonbValue *SkadeJbString(JsonbValue *v, const char *s);
extern JsonbValue *SkadeJbText(JsonbValue *v, const char *s, size_t len);
extern JsonbValue *SkadeJbInt(JsonbValue *v, int64 i);
extern JsonbValue *SkadeJbNumber(JsonbValue *v, const char *text);
extern JsonbValue *SkadeJbBool(JsonbValue *v, bool b);
extern JsonbValue *SkadeJbNull(JsonbValue *v);

#endif							/* SKADE_BOUND_JSON_H */
