/*-------------------------------------------------------------------------
 *
 * blob_cache.h
 *	  A shared-memory cache of immutable blobs keyed by a file location,
 *	  with clock eviction, coalesced fills and pins (released by the caller
 *	  or at the end of the transaction).  The L0
 *	  metadata cache and the L0.5 manifest cache are two instances.
 *
 * IDENTIFICATION
 *	  src/cache/blob_cache.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_BLOB_CACHE_H
#define SKADE_BLOB_CACHE_H

/* backend-local handle of one cache instance */
typedef struct SkadeBlobCache SkadeBlobCache;

/*
 * reads and decodes the file at location: a palloc'd blob of *size bytes;
 * *origin is set to the real path of the file read (for the admit check)
 */
typedef void *(*SkadeBlobLoader) (const char *location, void *arg, Size *size,
								  char **origin);

/* may a hit on a blob decoded from the file at origin be served now? */
typedef bool (*SkadeBlobAdmit) (const char *origin);

/* runs on a blob in place: under the cache's shared lock on a hit */
typedef void (*SkadeBlobVisitor) (const void *blob, Size size, void *arg);

typedef struct SkadeBlobCacheStats
{
	int64		hits;
	int64		misses;
	int64		coalesced;
	int64		evictions;
	int64		entries;
	int64		bytes;
	int64		capacity;
} SkadeBlobCacheStats;

extern Size SkadeBlobCacheShmemSize(Size capacity, long max_entries);
extern SkadeBlobCache *SkadeBlobCacheShmemInit(const char *name, Size capacity,
											   long max_entries, SkadeBlobAdmit admit);
extern void SkadeBlobCacheVisit(SkadeBlobCache *c, const char *location,
								SkadeBlobLoader loader, void *larg,
								SkadeBlobVisitor visitor, void *varg);
extern const void *SkadeBlobCacheGet(SkadeBlobCache *c, const char *location,
									 SkadeBlobLoader loader, void *larg, Size *size);
extern const void *SkadeBlobCacheGetInPlace(SkadeBlobCache *c, const char *location,
											SkadeBlobLoader loader, void *larg, Size budget,
											Size *size, bool *in_place);
extern bool SkadeBlobCachePrefill(SkadeBlobCache *c, const char *location,
								  SkadeBlobLoader loader, void *larg);
extern void SkadeBlobCacheRelease(const void *blob);
extern Datum SkadeBlobIndirect(const struct varlena *value);
extern const char *SkadeBlobCachePinnedOrigin(const void *blob);
extern const void *SkadeBlobCachePinIfCached(SkadeBlobCache *c, const char *location,
											 Size budget, Size *size);
extern Size SkadeBlobCacheCapacity(SkadeBlobCache *c);
extern bool SkadeBlobCacheContains(SkadeBlobCache *c, const char *location);
extern void SkadeBlobCacheStatsGet(SkadeBlobCache *c, SkadeBlobCacheStats *stats);
extern void SkadeBlobCacheReset(SkadeBlobCache *c);

#endif							/* SKADE_BLOB_CACHE_H */
