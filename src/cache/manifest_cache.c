/*-------------------------------------------------------------------------
 *
 * manifest_cache.c
 *	  L0.5: Iceberg manifests decoded once from Avro into flat blobs
 *	  (SkadeManifest, format/manifest_blob.h) and kept in shared memory, keyed by
 *	  manifest path, for skade.files() and skade.plan_files().
 *
 * Invariants: a manifest is immutable and named by its path, so a cached
 * blob is never stale; it holds exactly the live entries of the file
 * (status ADDED or EXISTING, in file order) with every field as recorded:
 * nothing is inherited here, so one blob serves every snapshot that reads
 * it.  Each entry also carries its partition as jsonb and, when the
 * manifest records its schema and every bound is readable, its statistics
 * as skade.files() returns them (jsonb decoded by that schema), so a warm
 * plan builds no JSON.  An entry with an invalid status or
 * content type, or without data_file.file_path, fails the decode (nothing
 * is cached).  It is an instance of the shared blob cache (blob_cache.c:
 * eviction, coalesced fills, pins, locking), byte-bounded by
 * skade.manifest_cache_size; callers get a blob pinned until they release
 * it (ManifestRelease) or their transaction ends, and read it with no lock
 * held; ManifestGetHeld hands it out in place for the whole transaction
 * of a statement outside a transaction block (within a quarter of the
 * cache per backend), so that rows may point into it; ManifestPrefill
 * lets the decode helper (manifest_helper.c) fill ahead.
 *
 * Decoding a manifest into its blob, and reading an entry's statistics
 * (ManifestEntryStats), is manifest_decode.c's (skade's own Avro record
 * decoder, avro_decode.c); this file keeps the blobs, and reads manifest
 * lists through the cache for the Avro reader (ManifestListOpen).  A miss
 * reads the file by the caller's route (route.h): where its requests go,
 * never what the entry is.
 *
 * Memory: a decode leaves only the blob, palloc'd in the caller's context.
 *
 * IDENTIFICATION
 *	  src/cache/manifest_cache.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "access/xact.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"

#include "format/avro_reader.h"
#include "io/file_access.h"
#include "util/guc.h"
#include "cache/manifest_cache.h"
#include "util/location.h"
#include "format/manifest_decode.h"
#include "util/skade_limits.h"

/* ---- Local variables ---- */

static SkadeBlobCache *manifest_cache = NULL;

static long max_entries(void);
static void *load_manifest(const char *path, void *arg, Size *size, char **origin);
static void *load_list(const char *key, void *arg, Size *size, char **origin);

/* a manifest list's bytes in the cache: data, NUL, real path, NUL */
#define LIST_KEY_PREFIX "\001list\001"
typedef struct ManifestListBlob
{
	Size		len;
	char		data[FLEXIBLE_ARRAY_MEMBER];
} ManifestListBlob;

/* what load_manifest reads */
typedef struct ManifestLoad
{
	const SkadeRoute *route;
	int64		expected_length;
} ManifestLoad;

/* ---------------------------------------------------------------- shmem */

static long
max_entries(void)
{
	/* index slots for manifests of ~2 kB (one small append each) */
	return Max(128, ((long) skade_manifest_cache_size * 1024L) / 2048);
}

Size
ManifestCacheShmemSize(void)
{
	return SkadeBlobCacheShmemSize((Size) skade_manifest_cache_size * 1024, max_entries());
}

/* Create or attach L0.5 (shmem startup hook, under AddinShmemInitLock). */
void
ManifestCacheShmemInit(void)
{
	manifest_cache = SkadeBlobCacheShmemInit("skade_manifests",
											 (Size) skade_manifest_cache_size * 1024,
											 max_entries(), SkadePathAllowed);
}

/* the cache instance (NULL when skade was not preloaded) */
SkadeBlobCache *
ManifestCache(void)
{
	return manifest_cache;
}

/*
 * ManifestGet
 *		The decoded manifest at path: pinned in the cache until
 *		ManifestRelease or the end of the transaction, or freshly decoded (and cached) on a miss.  It must
 *		have expected_length bytes (-1: not recorded), else 22SK1.
 */
const SkadeManifest *
ManifestGet(const SkadeRoute *route, const char *path, int64 expected_length)
{
	Size		size;
	const SkadeManifest *m;
	ManifestLoad l = {route, expected_length};

	/* (no path with a control character is looked up: manifest lists' keys have one) */
	SkadeRefuseControlChars(path);
	m = SkadeBlobCacheGet(manifest_cache, path, load_manifest, &l, &size);

	SkadeAvroCheckLength(path, m->file_size, expected_length);
	return m;
}

/*
 * ManifestGetHeld
 *		Like ManifestGet, but when it can, the blob in place in the cache and
 *		held pinned until the end of the transaction (*held), so that rows
 *		may point into it (SkadeBlobIndirect) rather than copy: on a hit, and
 *		on a miss once it is cached, as long as this backend then holds at
 *		most a quarter of the cache pinned (a transaction planning many
 *		tables must not keep the cache from evicting), and only outside a
 *		transaction block, whose transaction ends with the statement (a
 *		session idle in its transaction block keeps nothing pinned).
 *		Otherwise exactly ManifestGet (*held false: release it with
 *		ManifestRelease); a held blob is never released by the caller.
 */
const SkadeManifest *
ManifestGetHeld(const SkadeRoute *route, const char *path, int64 expected_length, bool *held)
{
	Size		size;
	const SkadeManifest *m;
	ManifestLoad l = {route, expected_length};

	*held = false;
	if (IsTransactionBlock())
		return ManifestGet(route, path, expected_length);
	SkadeRefuseControlChars(path);
	m = SkadeBlobCacheGetInPlace(manifest_cache, path, load_manifest, &l,
								 SkadeBlobCacheCapacity(manifest_cache) / 4, &size, held);
	if (m == NULL)
		return ManifestGet(route, path, expected_length);	/* over the budget: a copy */
	SkadeAvroCheckLength(path, m->file_size, expected_length);
	return m;
}

/*
 * ManifestPrefill
 *		Decode the local manifest at path into the cache unless it is there
 *		or being decoded already (false then): for a helper decoding ahead.
 */
bool
ManifestPrefill(const char *path, int64 expected_length)
{
	ManifestLoad l = {SKADE_ROUTE_SETTINGS, expected_length};

	SkadeRefuseControlChars(path);
	if (SkadeIsObjectLocation(path))
		elog(ERROR, "skade: the decode helper reads local manifests only");
	return SkadeBlobCachePrefill(manifest_cache, path, load_manifest, &l);
}

/*
 * ManifestListBytes
 *		The bytes of the manifest list at path (an s3:// object: local lists
 *		are read from the file each time), through the cache, under a key no
 *		manifest path can have (a control character); *real_path as
 *		SkadeReadLocation sets it.
 */
StringInfo
ManifestListBytes(const SkadeRoute *route, const char *path, char **real_path)
{
	char	   *key = psprintf("%s%s", LIST_KEY_PREFIX, path);
	Size		size;
	const ManifestListBlob *b = SkadeBlobCacheGet(manifest_cache, key, load_list, (void *) route,
												  &size);
	StringInfo	out = makeStringInfo();

	PG_TRY();
	{
		appendBinaryStringInfo(out, b->data, b->len);
		*real_path = pstrdup(b->data + b->len + 1);
	}
	PG_FINALLY();
	{
		SkadeBlobCacheRelease(b);
	}
	PG_END_TRY();
	return out;
}

/*
 * ManifestListOpen
 *		Open the manifest list at location (by route) for SkadeAvroNext: an
 *		s3:// list through the cache (ManifestListBytes), a local one read
 *		again.
 */
SkadeAvroFile *
ManifestListOpen(const SkadeRoute *route, const char *location)
{
	char	   *real_path;
	StringInfo	bytes = SkadeIsObjectLocation(location)
		? ManifestListBytes(route, location, &real_path)
		: SkadeReadLocation(route, location, &real_path);

	return SkadeAvroOpenBytes(location, bytes, real_path, SKADE_AVRO_MANIFEST_LIST, -1);
}

/* SkadeBlobLoader: a manifest list's bytes (by route arg), then its real path */
static void *
load_list(const char *key, void *arg, Size *size, char **origin)
{
	const char *path = key + strlen(LIST_KEY_PREFIX);
	StringInfo	bytes = SkadeReadLocation((const SkadeRoute *) arg, path, origin);
	Size		olen = strlen(*origin);
	ManifestListBlob *b = palloc(offsetof(ManifestListBlob, data) + bytes->len + 1 + olen + 1);

	b->len = bytes->len;
	memcpy(b->data, bytes->data, bytes->len);
	b->data[b->len] = '\0';
	memcpy(b->data + b->len + 1, *origin, olen + 1);
	*size = offsetof(ManifestListBlob, data) + bytes->len + 1 + olen + 1;
	pfree(bytes->data);
	return b;
}

/*
 * ManifestIsCached
 *		Is the manifest at path in the cache now (for prefetching: the answer
 *		may be stale at once)?
 */
bool
ManifestIsCached(const char *path)
{
	Size		size;
	const void *m = SkadeBlobCachePinIfCached(manifest_cache, path, 0, &size);

	if (m == NULL)
		return false;
	SkadeBlobCacheRelease(m);
	return true;
}

/*
 * ManifestRelease
 *		The caller is done with m (from ManifestGet): unpin it now rather
 *		than at the end of the transaction.
 */
void
ManifestRelease(const SkadeManifest *m)
{
	SkadeBlobCacheRelease(m);
}

/* ---------------------------------------------------------------- loading */

/*
 * SkadeBlobLoader: read the Avro manifest at path (by the ManifestLoad's
 * route) and decode it into a SkadeManifest (manifest_decode.c) that must
 * have the length its manifest list records.
 */
static void *
load_manifest(const char *path, void *arg, Size *size, char **origin)
{
	const ManifestLoad *l = arg;
	StringInfo	bytes = SkadeReadLocation(l->route, path, origin);
	void	   *m = SkadeManifestDecode(path, bytes, l->expected_length, size);

	pfree(bytes->data);
	pfree(bytes);
	return m;
}

