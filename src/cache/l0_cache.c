/*-------------------------------------------------------------------------
 *
 * l0_cache.c
 *	  L0: parsed table metadata in shared memory, keyed by metadata
 *	  location, shared by every backend; and skade.cache_stats() /
 *	  skade.cache_reset() over every cache.
 *
 * A metadata file is immutable and named by its location, so an entry can
 * only ever be evicted, never be stale.  Each entry holds one flat SkadeMeta
 * blob (metadata_json.h): the summary, the file's text and its refs-only
 * variant.  It is an instance of the shared blob cache (blob_cache.c, which
 * describes eviction, coalesced fills, pins and locking), sized by
 * skade.metadata_cache_size.
 *
 * Readers copy out what they asked for under the cache's shared lock and
 * hold nothing afterwards, except skade.table_metadata(), which pins the
 * entry and returns a datum pointing into the cache (no copy of a
 * multi-megabyte text) until the end of its transaction, and
 * skade.load_table(), whose row carries an indirect TOAST pointer to the
 * pinned text (valid as long as the pin: PostgreSQL detoasts such values
 * before anything keeps them past the transaction).
 *
 * A miss reads the file by the caller's route (route.h): the route a
 * location is read by decides where its requests go, never what the entry
 * is -- an object is named by its location alone.
 *
 * Derived entries: a blob computed from one metadata text alone (the REST
 * server's gzip-compressed loadTable answer) is cached beside it under the
 * key "\001tag\001location", recording the metadata file's real path as its
 * origin, so it is admitted exactly when the metadata is and, like it,
 * never stale; it competes for the same bytes.  No location with a control
 * character is ever looked up (22023), so no location can name a derived
 * entry.
 *
 * IDENTIFICATION
 *	  src/cache/l0_cache.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "access/detoast.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "cache/blob_cache.h"
#include "io/file_access.h"
#include "util/guc.h"
#include "cache/l0_cache.h"
#include "cache/manifest_cache.h"
#include "cache/pointer_mirror.h"
#include "util/shmem.h"

PG_FUNCTION_INFO_V1(skade_cache_stats);
PG_FUNCTION_INFO_V1(skade_cache_reset);

#define CACHE_STATS_COLS 17

/* what a copy-out visitor is asked for */
typedef struct CopyRequest
{
	int			want;
	L0Result   *result;
	L0JsonConsumer consumer;
	void	   *arg;
} CopyRequest;

/* L0VisitSummary's visitor and its argument */
typedef struct SummaryVisit
{
	L0SummaryVisitor visitor;
	void	   *arg;
} SummaryVisit;

/* ---- Local variables ---- */

static SkadeBlobCache *l0 = NULL;

static long l0_max_entries(void);
static void *load_metadata(const char *location, void *arg, Size *size, char **origin);
static const SkadeMeta *pin_meta(const SkadeRoute *route, const char *location, bool *in_place,
								 Size *size);
static void *seed_loader(const char *location, void *arg, Size *size, char **origin);
static void seed_visitor(const void *blob, Size size, void *arg);

/* what L0Seed installs */
typedef struct SeedArg
{
	SkadeMeta  *meta;
	const char *real_path;
} SeedArg;
static void copy_visitor(const void *blob, Size size, void *arg);
static void summary_visitor(const void *blob, Size size, void *arg);
static void put_blob_stats(SkadeBlobCache *c, Datum *values);
static void *load_derived(const char *key, void *arg, Size *size, char **origin);

/* what load_derived builds from */
typedef struct DerivedLoad
{
	const struct varlena *json;
	const char *origin;
	L0Deriver	derive;
	void	   *arg;
} DerivedLoad;

/* ---------------------------------------------------------------- sizing */

static long
l0_max_entries(void)
{
	return Max(128, ((long) skade_metadata_cache_size * 1024L) / 4096);
}

/* Shared memory L0 needs (called from the shmem request hook). */
Size
L0ShmemSize(void)
{
	return SkadeBlobCacheShmemSize((Size) skade_metadata_cache_size * 1024, l0_max_entries());
}

/* L0's blob cache (NULL until shared memory is set up), for its statistics. */
SkadeBlobCache *
L0Cache(void)
{
	return l0;
}

/* Create or attach L0 (shmem startup hook, under AddinShmemInitLock). */
void
L0ShmemInit(void)
{
	l0 = SkadeBlobCacheShmemInit("skade_l0", (Size) skade_metadata_cache_size * 1024,
								 l0_max_entries(), SkadePathAllowed);
}

/* ---------------------------------------------------------------- lookups */

/*
 * L0Fetch
 *		Copy what "want" asks for of the metadata at location into
 *		result (palloc'd in CurrentMemoryContext): from the cache on a hit,
 *		else after reading and parsing the file once for all backends.
 *		Without shared memory (not preloaded) it reads and parses directly.
 */
void
L0Fetch(const SkadeRoute *route, const char *location, int want, L0Result *result)
{
	CopyRequest req = {want, result, NULL, NULL};

	SkadeRefuseControlChars(location);
	memset(result, 0, sizeof(L0Result));
	SkadeBlobCacheVisit(l0, location, load_metadata, (void *) route, copy_visitor, &req);
}

/*
 * L0Seed
 *		Install the metadata skade has just written at location (from the
 *		file real_path), already parsed as meta, so that the first reader --
 *		the commit-log trigger of the same commit, typically -- does not read
 *		and parse it again.  meta is consumed (freed or taken over).
 */
void
L0Seed(const char *location, SkadeMeta *meta, const char *real_path)
{
	SeedArg		arg = {meta, real_path};

	SkadeRefuseControlChars(location);
	SkadeBlobCacheVisit(l0, location, seed_loader, &arg, seed_visitor, NULL);
}

static void *
seed_loader(const char *location, void *arg, Size *size, char **origin)
{
	SeedArg    *a = arg;

	*size = a->meta->total_size;
	*origin = pstrdup(a->real_path);
	return a->meta;
}

static void
seed_visitor(const void *blob, Size size, void *arg)
{
	/* nothing to copy: installing it was the point */
}

/*
 * L0FetchJson
 *		Hand the metadata text (or its refs variant) of location to consumer
 *		without copying it first: on a hit the datum points into shared
 *		memory and the consumer runs under the cache's shared lock, so it
 *		must copy what it keeps (e.g. form a tuple) and do nothing else.
 */
void
L0FetchJson(const SkadeRoute *route, const char *location, bool refs, L0JsonConsumer consumer,
			void *arg)
{
	L0Result	result;
	CopyRequest req = {refs ? L0_WANT_REFS_JSON : L0_WANT_JSON, &result, consumer, arg};

	SkadeRefuseControlChars(location);
	SkadeBlobCacheVisit(l0, location, load_metadata, (void *) route, copy_visitor, &req);
}

/*
 * The cached metadata of location, pinned until the end of the transaction
 * (*in_place true): a hit, or on a miss the entry just read, parsed and
 * cached; else the freshly parsed palloc'd metadata when it could not be
 * cached (*in_place false).  NULL, with nothing read, when pinning would
 * take this backend's pins over a quarter of the cache (a transaction
 * loading many tables must not keep the cache from evicting).
 */
static const SkadeMeta *
pin_meta(const SkadeRoute *route, const char *location, bool *in_place, Size *size)
{
	Size		budget = SkadeBlobCacheCapacity(l0) / 4;
	/* a hit: the warm path as short as it can be */
	const SkadeMeta *meta = SkadeBlobCachePinIfCached(l0, location, budget, size);

	*in_place = meta != NULL;
	if (meta == NULL)
		meta = SkadeBlobCacheGetInPlace(l0, location, load_metadata, (void *) route, budget, size,
										in_place);
	return meta;
}

/*
 * L0FetchJsonPinned
 *		The metadata text (or refs variant) of location as a datum that
 *		points into the cache itself: no copy.  The entry is pinned (never
 *		evicted) until the end of the current transaction, so the datum stays
 *		valid for the statement's output; on a miss the file is read, parsed
 *		and cached first and the new entry pinned likewise (the first load
 *		copies the text no more than a later one).  A palloc'd text when the
 *		file cannot be cached, and a copy when this backend's pins would then
 *		hold over a quarter of the cache (a transaction loading many tables
 *		must not keep the cache from evicting).
 */
struct varlena *
L0FetchJsonPinned(const SkadeRoute *route, const char *location, bool refs)
{
	Size		size;
	const SkadeMeta *meta;
	bool		in_place;
	L0Result	r;

	SkadeRefuseControlChars(location);
	meta = pin_meta(route, location, &in_place, &size);
	if (meta)
		return (struct varlena *) (((const char *) meta) +
								   (refs ? meta->refs_json_off : meta->json_off));
	/* over the pin budget: a copy */
	L0Fetch(route, location, refs ? L0_WANT_REFS_JSON : L0_WANT_JSON, &r);
	return r.json;
}

/*
 * L0FetchJsonIndirect
 *		The metadata text (or refs variant) of location as an indirect TOAST
 *		pointer (VARTAG_INDIRECT) to the cache entry, pinned until the end
 *		of the current transaction, so that a row can carry it without a
 *		copy; on a miss the file is read, parsed and cached first, and the
 *		new entry pinned likewise (the first load of a table copies its text
 *		no more than a later one).  The text itself (palloc'd) when the file
 *		could not be cached.  NULL, with nothing read, when this backend's
 *		pins would then hold over a quarter of the cache (a transaction
 *		loading many tables must not keep the cache from evicting: it gets
 *		copies instead, L0FetchJson).
 */
struct varlena *
L0FetchJsonIndirect(const SkadeRoute *route, const char *location, bool refs)
{
	Size		size;
	const SkadeMeta *meta;
	bool		in_place;
	struct varlena *json;

	SkadeRefuseControlChars(location);
	meta = pin_meta(route, location, &in_place, &size);
	if (meta == NULL)
		return NULL;
	json = (struct varlena *) (((const char *) meta) +
							   (refs ? meta->refs_json_off : meta->json_off));
	if (!in_place)
		return json;
	return (struct varlena *) DatumGetPointer(SkadeBlobIndirect(json));
}

/*
 * L0FetchDerivedPinned
 *		The blob derive builds from the metadata text (or refs variant) of
 *		location, cached beside it under tag: pinned until the end of the
 *		transaction on a hit, else freshly built (palloc'd) and cached when
 *		the metadata itself is cached.  *size is its length.
 */
const void *
L0FetchDerivedPinned(const SkadeRoute *route, const char *location, bool refs, const char *tag,
					 L0Deriver derive, void *arg, Size *size)
{
	const SkadeMeta *meta;
	Size		msize;
	DerivedLoad d;

	SkadeRefuseControlChars(location);
	meta = SkadeBlobCachePinIfCached(l0, location, 0, &msize);
	if (meta == NULL)
		/* first read (it fills the cache) or not cacheable: build uncached */
		return derive(L0FetchJsonPinned(route, location, refs), arg, size);
	d.json = (const struct varlena *) (((const char *) meta) +
									   (refs ? meta->refs_json_off : meta->json_off));
	d.origin = SkadeBlobCachePinnedOrigin(meta);
	d.derive = derive;
	d.arg = arg;
	return SkadeBlobCacheGet(l0, psprintf("\001%s%s\001%s", tag, refs ? "-refs" : "", location),
							 load_derived, &d, size);
}

/* SkadeBlobLoader: a derived entry, from the pinned metadata text */
static void *
load_derived(const char *key, void *arg, Size *size, char **origin)
{
	DerivedLoad *d = arg;

	*origin = pstrdup(d->origin ? d->origin : "");
	return d->derive(d->json, d->arg, size);
}

/*
 * L0VisitSummary
 *		Run visitor on the parsed summary of location without copying it: on
 *		a hit, in place under the cache's shared lock (so the visitor must be
 *		short and must not error), else on a freshly read copy.  For lookups
 *		that need a few entries of a large summary, e.g. a binary search.
 */
void
L0VisitSummary(const SkadeRoute *route, const char *location, L0SummaryVisitor visitor, void *arg)
{
	SummaryVisit v = {visitor, arg};

	SkadeRefuseControlChars(location);
	SkadeBlobCacheVisit(l0, location, load_metadata, (void *) route, summary_visitor, &v);
}

static void
summary_visitor(const void *blob, Size size, void *arg)
{
	SummaryVisit *v = arg;

	v->visitor((const SkadeMeta *) blob, v->arg);
}

/* SkadeBlobLoader: read (by route arg) and parse one metadata file into a SkadeMeta */
static void *
load_metadata(const char *location, void *arg, Size *size, char **origin)
{
	StringInfo	text = SkadeReadLocation((const SkadeRoute *) arg, location, origin);
	SkadeMeta  *meta;

	CHECK_FOR_INTERRUPTS();
	meta = SkadeParseMetadata(text->data, text->len, location);
	pfree(text->data);
	pfree(text);
	*size = meta->total_size;
	return meta;
}

/*
 * SkadeBlobVisitor: copy the wanted parts of a SkadeMeta into palloc'd
 * memory, or hand the text to the consumer in place.
 */
static void
copy_visitor(const void *blob, Size size, void *arg)
{
	const SkadeMeta *meta = blob;
	CopyRequest *req = arg;

	if (req->consumer)
	{
		uint32		off = (req->want & L0_WANT_JSON) ? meta->json_off : meta->refs_json_off;

		req->consumer((struct varlena *) (((const char *) meta) + off), req->arg);
		return;
	}
	if (req->want & L0_WANT_SUMMARY)
	{
		req->result->summary = palloc(meta->json_off);
		memcpy(req->result->summary, meta, meta->json_off);
	}
	if (req->want & (L0_WANT_JSON | L0_WANT_REFS_JSON))
	{
		uint32		off = (req->want & L0_WANT_JSON) ? meta->json_off : meta->refs_json_off;
		const struct varlena *v = (const struct varlena *) (((const char *) meta) + off);

		req->result->json = palloc(VARSIZE(v));
		memcpy(req->result->json, v, VARSIZE(v));
	}
}

/* ---------------------------------------------------------------- SQL */

/*
 * skade.cache_stats() -> L0's (hits, misses, coalesced_waits, evictions,
 *						   entries, bytes, capacity), the L1 pointer
 *						   mirror's (hits, misses, entries), then the L0.5
 *						   manifest cache's (hits, misses, coalesced_waits,
 *						   evictions, entries, bytes, capacity)
 */
Datum
skade_cache_stats(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[CACHE_STATS_COLS];
	bool		nulls[CACHE_STATS_COLS] = {0};
	int64		phits,
				pmisses,
				pentries;

	SkadeRequireShared();
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	tupdesc = BlessTupleDesc(tupdesc);
	put_blob_stats(l0, &values[0]);
	MirrorStats(&phits, &pmisses, &pentries);
	values[7] = Int64GetDatum(phits);
	values[8] = Int64GetDatum(pmisses);
	values[9] = Int64GetDatum(pentries);
	put_blob_stats(ManifestCache(), &values[10]);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/* a blob cache's (hits, misses, coalesced_waits, evictions, entries, bytes, capacity) */
static void
put_blob_stats(SkadeBlobCache *c, Datum *values)
{
	SkadeBlobCacheStats st;

	SkadeBlobCacheStatsGet(c, &st);
	values[0] = Int64GetDatum(st.hits);
	values[1] = Int64GetDatum(st.misses);
	values[2] = Int64GetDatum(st.coalesced);
	values[3] = Int64GetDatum(st.evictions);
	values[4] = Int64GetDatum(st.entries);
	values[5] = Int64GetDatum(st.bytes);
	values[6] = Int64GetDatum(st.capacity);
}

/* skade.cache_reset(): drop every cached metadata file and manifest, zero the counters. */
Datum
skade_cache_reset(PG_FUNCTION_ARGS)
{
	SkadeRequireShared();
	SkadeBlobCacheReset(l0);
	SkadeBlobCacheReset(ManifestCache());
	PG_RETURN_VOID();
}
