/*-------------------------------------------------------------------------
 *
 * l0_cache.h
 *	  The L0 metadata cache in shared memory: parsed metadata keyed by
 *	  metadata location.
 *
 * IDENTIFICATION
 *	  src/cache/l0_cache.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_L0_CACHE_H
#define SKADE_L0_CACHE_H

#include "format/metadata_json.h"
#include "io/route.h"

/* what a caller wants copied out of an entry */
#define L0_WANT_SUMMARY		0x01	/* the SkadeMeta summary, without texts */
#define L0_WANT_JSON		0x02	/* the file's text */
#define L0_WANT_REFS_JSON	0x04	/* the refs-only variant */

typedef struct L0Result
{
	SkadeMeta  *summary;		/* palloc'd copy, if asked for */
	struct varlena *json;		/* palloc'd text/json datum, if asked for */
} L0Result;

/* receives a metadata text datum that is only valid during the call */
typedef void (*L0JsonConsumer) (struct varlena *json, void *arg);

extern Size L0ShmemSize(void);
extern void L0ShmemInit(void);
extern struct SkadeBlobCache *L0Cache(void);
extern void L0Fetch(const SkadeRoute *route, const char *location, int want, L0Result *result);
extern void L0Seed(const char *location, SkadeMeta *meta, const char *real_path);
/* runs on the summary in place; must copy what it keeps and do nothing else */
typedef void (*L0SummaryVisitor) (const SkadeMeta *meta, void *arg);

extern struct varlena *L0FetchJsonPinned(const SkadeRoute *route, const char *location, bool refs);
extern struct varlena *L0FetchJsonIndirect(const SkadeRoute *route, const char *location,
										   bool refs);
extern void L0VisitSummary(const SkadeRoute *route, const char *location,
						   L0SummaryVisitor visitor, void *arg);
/* builds a palloc'd blob of *size bytes from a metadata text */
typedef void *(*L0Deriver) (const struct varlena *json, void *arg, Size *size);

extern const void *L0FetchDerivedPinned(const SkadeRoute *route, const char *location, bool refs,
										const char *tag,
										L0Deriver derive, void *arg, Size *size);
extern void L0FetchJson(const SkadeRoute *route, const char *location, bool refs,
						L0JsonConsumer consumer, void *arg);

#endif							/* SKADE_L0_CACHE_H */
