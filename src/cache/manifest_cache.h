/*-------------------------------------------------------------------------
 *
 * manifest_cache.h
 *	  L0.5: Iceberg manifests decoded once into flat, position-independent
 *	  blobs (SkadeManifest) and kept in shared memory, keyed by manifest
 *	  path.
 *
 * IDENTIFICATION
 *	  src/cache/manifest_cache.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_MANIFEST_CACHE_H
#define SKADE_MANIFEST_CACHE_H

#include "cache/blob_cache.h"
#include "format/avro_reader.h"
#include "format/manifest_blob.h"
#include "format/metadata_json.h"
#include "format/scan_filter.h"
#include "io/route.h"

extern Size ManifestCacheShmemSize(void);
extern void ManifestCacheShmemInit(void);
extern SkadeBlobCache *ManifestCache(void);
extern const SkadeManifest *ManifestGet(const SkadeRoute *route, const char *path,
										int64 expected_length);
extern const SkadeManifest *ManifestGetHeld(const SkadeRoute *route, const char *path,
											int64 expected_length, bool *held);
extern void ManifestRelease(const SkadeManifest *m);
extern bool ManifestPrefill(const char *path, int64 expected_length);
extern bool ManifestIsCached(const char *path);
extern StringInfo ManifestListBytes(const SkadeRoute *route, const char *path, char **real_path);
extern SkadeAvroFile *ManifestListOpen(const SkadeRoute *route, const char *location);

#endif							/* SKADE_MANIFEST_CACHE_H */
