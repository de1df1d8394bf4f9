/*-------------------------------------------------------------------------
 *
 * blob_cache.c
 *	  A shared-memory cache of immutable blobs keyed by file location: the
 *	  machinery behind the L0 metadata cache (l0_cache.c) and the L0.5
 *	  manifest cache (manifest_cache.c).
 *
 * Invariants: the files cached are immutable and named by their location,
 * so an entry can only ever be evicted, never be stale.  A blob is what a
 * loader decoded from the file, stored as one flat, position-independent
 * chunk after a copy of its location (a lookup compares the location, so a
 * 64-bit hash collision is a miss that is served uncached, never a wrong
 * answer).
 *
 * Memory: each instance owns a DSA area created in place inside the main
 * shared memory segment and limited to exactly its configured size, so a
 * cache never grows past its setting and needs no DSM segments; its index
 * is a fixed-size shared HTAB (HASH_FIXED_SIZE) and its clock a fixed array
 * of as many slots.  When an allocation or an index slot is missing, the
 * clock hand sweeps for a victim (an unpinned ready entry not used since the
 * hand last passed it: second chance), until the blob fits; the sweep is
 * amortised O(1) per eviction and never more than two turns of the clock.
 * A blob over three quarters of the area is served without being cached.
 *
 * Confinement: each entry also records the real path of the file it was
 * decoded from, and every hit is admitted by the instance's admit callback
 * (SkadePathAllowed: inside the allowed roots in force now); a hit that is
 * not admitted is served by the loader, which then refuses it, exactly as
 * an uncached read would.
 *
 * Locking: one LWLock per instance.  Readers take it shared for the lookup
 * and either run a short visitor in place (which must copy what it keeps)
 * or pin the entry and use it with no lock held; the only exclusive
 * holders are fill completion, eviction and reset, which do no I/O and copy
 * nothing under the lock: a fill allocates its chunk under the lock, copies
 * the blob into it with no lock held (the entry is still FILLING, invisible
 * to readers, skipped by eviction and reset), then publishes it.  Pins are
 * counted in the entry, remembered by the backend, and dropped when the
 * caller is done (SkadeBlobCacheRelease, e.g. after one manifest of a
 * files() call) or else at the end of its transaction (commit, abort,
 * prepare) or at backend exit, so an ERROR or cancel never leaves one
 * behind; eviction and reset skip pinned entries.  Each backend counts the
 * bytes it holds pinned per instance, so a caller can bound them
 * (SkadeBlobCachePinIfCached's budget).  A filler may pin the entry it has
 * just published and use it in place (SkadeBlobCacheGetInPlace), so that
 * its first use costs no more copies than a hit.
 *
 * Coalescing: the first backend to miss inserts a FILLING entry and runs
 * the loader without any lock; others that miss on the same location wait
 * on a condition variable (counted as coalesced waits) and then use the
 * result.  If the filler fails (ERROR, cancel, FATAL) its FILLING entry is
 * removed (PG_CATCH, or a before_shmem_exit callback) and the waiters try
 * themselves, so nothing half-built is ever visible.  A helper may fill
 * ahead of its readers (SkadeBlobCachePrefill: only what is neither cached
 * nor being filled); its readers then wait for it or hit.
 *
 * IDENTIFICATION
 *	  src/cache/blob_cache.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "access/detoast.h"
#include "access/xact.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/condition_variable.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/dsa.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "cache/blob_cache.h"

#define MAX_CACHES	4

typedef enum BlobState
{
	BLOB_FILLING,
	BLOB_READY
} BlobState;

typedef struct BlobEntry
{
	uint64		key;			/* hash of the location (HTAB key) */
	BlobState	state;
	int			filler_pid;		/* FILLING: who fills it */
	dsa_pointer chunk;			/* location, origin, then the blob; allocated
								 * at the end of a fill, valid when READY */
	uint32		origin_off;		/* offset of the origin (real path) in the chunk */
	uint32		blob_off;		/* offset of the blob in the chunk */
	uint32		size;			/* bytes of the blob */
	int32		slot;			/* READY: its place on the clock */
	pg_atomic_uint32 referenced;	/* used since the hand last passed */
	pg_atomic_uint32 pins;		/* backends using the blob in place */
} BlobEntry;

typedef struct BlobShared
{
	LWLock		lock;
	ConditionVariable filled;	/* broadcast when any fill ends */
	pg_atomic_uint64 hits;
	pg_atomic_uint64 misses;
	pg_atomic_uint64 coalesced;
	pg_atomic_uint64 evictions;
	uint64		entries;		/* READY entries (under lock) */
	uint64		bytes;			/* their blob bytes (under lock) */
	Size		capacity;		/* bytes of the DSA area */
	int			tranche_id;
	/* the clock (under lock): READY entries by slot, a free-slot stack */
	uint32		nslots;
	uint32		hand;
	uint32		nfree;
	BlobEntry **ring;			/* [nslots]; NULL: a free slot */
	uint32	   *free_slots;		/* [nslots] */
} BlobShared;

/*
 * A pin this backend holds: the blob address it handed out (the key), the
 * entry, and how many times it was handed out (one pin in the entry, its
 * bytes counted once, however often a statement asks for the same blob).
 */
typedef struct PinnedBlob
{
	const void *blob;
	SkadeBlobCache *cache;
	BlobEntry  *entry;
	Size		size;
	uint64		uses;
} PinnedBlob;

struct SkadeBlobCache
{
	const char *name;
	SkadeBlobAdmit admit;		/* may a hit be served? (NULL: always) */
	BlobShared *shared;
	HTAB	   *index;
	void	   *area_space;
	dsa_area   *area;			/* this backend's attachment */
	uint64		pending_fill;	/* key of a FILLING entry this backend owns */
	Size		pinned_bytes;	/* blob bytes this backend holds pinned */
};

/* ---- Local variables ---- */

static SkadeBlobCache *caches[MAX_CACHES];
static int	ncaches = 0;
static bool callbacks_registered = false;
static HTAB *pinned = NULL;		/* PinnedBlob by blob, in TopMemoryContext */

static Size area_size(Size capacity);
static dsa_area *attach(SkadeBlobCache *c);
static uint64 location_key(const char *location);
static const void *find_ready(SkadeBlobCache *c, uint64 key, const char *location,
							  BlobEntry **entry_out);
static const void *fetch(SkadeBlobCache *c, const char *location, SkadeBlobLoader loader,
						 void *larg, SkadeBlobVisitor visitor, void *varg, bool pin,
						 Size budget, bool *in_place, Size *size);
static const void *pin_ready(SkadeBlobCache *c, uint64 key, const char *location,
							  Size budget, Size *size);
static void *load_filling(SkadeBlobCache *c, uint64 key, const char *location,
						  SkadeBlobLoader loader, void *larg, Size *size);
static void *load_uncached(const char *location, SkadeBlobLoader loader, void *larg,
						   Size *size);
static void finish_fill(SkadeBlobCache *c, uint64 key, const char *location,
						const char *origin, const void *blob, Size size);
static void clock_add(BlobShared *s, BlobEntry *entry);
static void remove_entry(SkadeBlobCache *c, BlobEntry *entry);
static void abandon_fill(SkadeBlobCache *c);
static void abandon_fills_at_exit(int code, Datum arg);
static bool evict_one(SkadeBlobCache *c);
static void pin_entry(SkadeBlobCache *c, BlobEntry *entry, const void *blob);
static void release_pins(void);
static void claim_fill(SkadeBlobCache *c, BlobEntry *entry, uint64 key);
static BlobEntry *enter_entry(SkadeBlobCache *c, uint64 key, bool *found);
static const char *ready_chunk(SkadeBlobCache *c, const BlobEntry *entry,
							   const char *location);
static bool over_budget(SkadeBlobCache *c, const BlobEntry *entry, const void *blob,
						Size budget);
static void xact_callback(XactEvent event, void *arg);

/* ---------------------------------------------------------------- shmem */

static Size
area_size(Size capacity)
{
	return Max(capacity, dsa_minimum_size() + 65536);
}

/* Shared memory one instance needs (called from the shmem request hook). */
Size
SkadeBlobCacheShmemSize(Size capacity, long max_entries)
{
	Size		size = MAXALIGN(sizeof(BlobShared));

	size = add_size(size, hash_estimate_size(max_entries, sizeof(BlobEntry)));
	size = add_size(size, mul_size(max_entries, sizeof(BlobEntry *) + sizeof(uint32)));
	size = add_size(size, area_size(capacity));
	return size;
}

/*
 * SkadeBlobCacheShmemInit
 *		Create or attach one instance's shared state (shmem startup hook;
 *		the caller holds AddinShmemInitLock).  name names its shared
 *		structures and its LWLock tranche; it must be a constant string.
 */
SkadeBlobCache *
SkadeBlobCacheShmemInit(const char *name, Size capacity, long max_entries,
						SkadeBlobAdmit admit)
{
	SkadeBlobCache *c;
	bool		found;
	HASHCTL		info;
	int			i;

	for (i = 0; i < ncaches; i++)
		if (strcmp(caches[i]->name, name) == 0)
			break;
	if (i == ncaches)
	{
		if (ncaches == MAX_CACHES)
			elog(ERROR, "too many skade blob caches");
		caches[ncaches++] = MemoryContextAllocZero(TopMemoryContext, sizeof(SkadeBlobCache));
	}
	c = caches[i];
	c->name = name;
	c->admit = admit;
	c->area = NULL;
	c->pending_fill = 0;

	c->shared = ShmemInitStruct(name, MAXALIGN(sizeof(BlobShared)) +
								mul_size(max_entries, sizeof(BlobEntry *) + sizeof(uint32)),
								&found);
	c->area_space = ShmemInitStruct(psprintf("%s area", name), area_size(capacity), &found);
	if (!found)
	{
		BlobShared *s = c->shared;
		dsa_area   *area;

		s->tranche_id = LWLockNewTrancheId();
		LWLockInitialize(&s->lock, s->tranche_id);
		ConditionVariableInit(&s->filled);
		pg_atomic_init_u64(&s->hits, 0);
		pg_atomic_init_u64(&s->misses, 0);
		pg_atomic_init_u64(&s->coalesced, 0);
		pg_atomic_init_u64(&s->evictions, 0);
		s->entries = 0;
		s->bytes = 0;
		s->capacity = area_size(capacity);
		s->nslots = (uint32) max_entries;
		s->hand = 0;
		s->ring = (BlobEntry **) (((char *) s) + MAXALIGN(sizeof(BlobShared)));
		s->free_slots = (uint32 *) (s->ring + max_entries);
		for (s->nfree = 0; s->nfree < s->nslots; s->nfree++)
		{
			s->ring[s->nfree] = NULL;
			s->free_slots[s->nfree] = s->nslots - 1 - s->nfree;
		}

		area = dsa_create_in_place(c->area_space, area_size(capacity), s->tranche_id, NULL);
		dsa_set_size_limit(area, area_size(capacity));
		dsa_pin(area);
		dsa_detach(area);
	}
	LWLockRegisterTranche(c->shared->tranche_id, name);

	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(uint64);
	info.entrysize = sizeof(BlobEntry);
	/* fixed size: a full index evicts, it never takes shared memory others need */
	c->index = ShmemInitHash(psprintf("%s index", name), max_entries, max_entries,
							 &info, HASH_ELEM | HASH_BLOBS | HASH_FIXED_SIZE);
	return c;
}

static dsa_area *
attach(SkadeBlobCache *c)
{
	if (!callbacks_registered)
	{
		RegisterXactCallback(xact_callback, NULL);
		before_shmem_exit(abandon_fills_at_exit, (Datum) 0);
		callbacks_registered = true;
	}
	if (c->area == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

		c->area = dsa_attach_in_place(c->area_space, NULL);
		dsa_pin_mapping(c->area);
		on_shmem_exit(dsa_on_shmem_exit_release_in_place, PointerGetDatum(c->area_space));
		MemoryContextSwitchTo(old);
	}
	return c->area;
}

static uint64
location_key(const char *location)
{
	uint64		key = hash_bytes_extended((const unsigned char *) location,
										  strlen(location), 0x5ade);

	return key ? key : 1;
}

/* ---------------------------------------------------------------- lookups */

/*
 * SkadeBlobCacheVisit
 *		Run visitor on the blob of location: in place under the shared lock
 *		on a hit (the visitor must be short and must copy what it keeps; if
 *		it errors, the lock is released by the abort), else on the freshly
 *		loaded blob, which is cached for every backend.  c NULL (not
 *		preloaded): load and visit.
 */
void
SkadeBlobCacheVisit(SkadeBlobCache *c, const char *location, SkadeBlobLoader loader,
					void *larg, SkadeBlobVisitor visitor, void *varg)
{
	Size		size;

	if (c == NULL)
	{
		void	   *blob = load_uncached(location, loader, larg, &size);

		visitor(blob, size, varg);
		pfree(blob);
		return;
	}
	fetch(c, location, loader, larg, visitor, varg, false, 0, NULL, &size);
}

/*
 * SkadeBlobCacheGet
 *		The blob of location, for use with no lock held until the end of the
 *		current transaction: on a hit a pointer into the cache (the entry is
 *		pinned, never evicted, until the transaction ends), on a miss the
 *		freshly loaded palloc'd blob (which is also cached).  Read only.
 */
const void *
SkadeBlobCacheGet(SkadeBlobCache *c, const char *location, SkadeBlobLoader loader,
				  void *larg, Size *size)
{
	if (c == NULL)
		return load_uncached(location, loader, larg, size);
	return fetch(c, location, loader, larg, NULL, NULL, true, 0, NULL, size);
}

/*
 * SkadeBlobCacheGetInPlace
 *		The blob of location in place in the cache, pinned until the end of
 *		the current transaction, loading and caching it first on a miss
 *		(*in_place true); or the freshly loaded palloc'd blob when it could
 *		not be cached or pinned (*in_place false).  NULL, with nothing
 *		loaded, on a hit that pinning would take over budget (the bytes this
 *		backend holds pinned in c; 0: no limit): the caller copies instead.
 *		A fill handed out in place saves the caller its copy of the blob.
 */
const void *
SkadeBlobCacheGetInPlace(SkadeBlobCache *c, const char *location, SkadeBlobLoader loader,
						 void *larg, Size budget, Size *size, bool *in_place)
{
	*in_place = false;
	if (c == NULL)
		return load_uncached(location, loader, larg, size);
	return fetch(c, location, loader, larg, NULL, NULL, true, budget, in_place, size);
}

/*
 * SkadeBlobCachePinIfCached
 *		Like SkadeBlobCacheGet on an admitted hit; NULL (and nothing loaded)
 *		otherwise, and also when pinning it would take the bytes this
 *		backend holds pinned in c over budget (0: no limit), so that a long
 *		transaction cannot keep much of the cache from eviction.
 */
const void *
SkadeBlobCachePinIfCached(SkadeBlobCache *c, const char *location, Size budget, Size *size)
{
	const void *blob;

	if (c == NULL)
		return NULL;
	attach(c);
	blob = pin_ready(c, location_key(location), location, budget, size);
	if (blob)
		pg_atomic_fetch_add_u64(&c->shared->hits, 1);
	return blob;
}

/*
 * SkadeBlobCacheContains
 *		Does c hold location now (ready)?  A probe for whoever decides what to
 *		load ahead: it serves nothing, so it counts no hit, marks nothing
 *		used and admits nothing; the answer may be stale at once.
 */
bool
SkadeBlobCacheContains(SkadeBlobCache *c, const char *location)
{
	uint64		key = location_key(location);
	BlobEntry  *entry;
	bool		found;

	if (c == NULL)
		return false;
	attach(c);
	LWLockAcquire(&c->shared->lock, LW_SHARED);
	entry = hash_search(c->index, &key, HASH_FIND, NULL);
	found = ready_chunk(c, entry, location) != NULL;
	LWLockRelease(&c->shared->lock);
	return found;
}

/* The bytes of c's area (its capacity). */
Size
SkadeBlobCacheCapacity(SkadeBlobCache *c)
{
	return c ? c->shared->capacity : 0;
}

/*
 * The READY entry holding location, marked used for the clock; NULL if
 * there is none, if a different location hashed alike, or if the instance
 * does not admit the file it came from.  Caller holds the lock.
 */
static const void *
find_ready(SkadeBlobCache *c, uint64 key, const char *location, BlobEntry **entry_out)
{
	BlobEntry  *entry = hash_search(c->index, &key, HASH_FIND, NULL);
	const char *chunk = ready_chunk(c, entry, location);

	*entry_out = entry;
	if (chunk == NULL)
		return NULL;
	if (c->admit && !c->admit(chunk + entry->origin_off))
		return NULL;
	if (pg_atomic_read_u32(&entry->referenced) == 0)
		pg_atomic_write_u32(&entry->referenced, 1);
	return chunk + entry->blob_off;
}

/*
 * The chunk of entry if it is READY and holds location (a different
 * location may hash alike); NULL otherwise.  Caller holds the lock.
 */
static const char *
ready_chunk(SkadeBlobCache *c, const BlobEntry *entry, const char *location)
{
	const char *chunk;

	if (entry == NULL || entry->state != BLOB_READY)
		return NULL;
	chunk = dsa_get_address(c->area, entry->chunk);
	return strcmp(chunk, location) == 0 ? chunk : NULL;
}

/*
 * SkadeBlobCacheRelease
 *		Give back the pin of a blob SkadeBlobCacheGet returned, before the
 *		transaction ends (a call that is done with it must not keep it from
 *		eviction while its session idles in the transaction).  A palloc'd
 *		blob (a miss) holds no pin: nothing happens.
 */
void
SkadeBlobCacheRelease(const void *blob)
{
	PinnedBlob *p = pinned ? hash_search(pinned, &blob, HASH_FIND, NULL) : NULL;

	if (p == NULL || --p->uses > 0)
		return;
	pg_atomic_fetch_sub_u32(&p->entry->pins, 1);
	p->cache->pinned_bytes -= p->size;
	hash_search(pinned, &blob, HASH_REMOVE, NULL);
}

/*
 * SkadeBlobCachePinnedOrigin
 *		The real path of the file a blob this backend holds pinned was
 *		decoded from (its entry cannot go while pinned); NULL for a blob that
 *		holds no pin (a palloc'd miss).
 */
const char *
SkadeBlobCachePinnedOrigin(const void *blob)
{
	PinnedBlob *p = pinned ? hash_search(pinned, &blob, HASH_FIND, NULL) : NULL;

	return p ? (const char *) blob - p->entry->blob_off + p->entry->origin_off : NULL;
}

/*
 * SkadeBlobIndirect
 *		An indirect TOAST pointer (VARTAG_INDIRECT, palloc'd) to the varlena
 *		value, which lies inside a blob this backend holds pinned until the
 *		end of its transaction (SkadeBlobCacheGetInPlace, or a pinned hit
 *		never released): a row can carry it without a copy, and PostgreSQL
 *		detoasts such a value before anything keeps it past the transaction
 *		(a holdable cursor's store, a procedure's variables after COMMIT), as
 *		it must for any TOAST pointer.
 */
Datum
SkadeBlobIndirect(const struct varlena *value)
{
	struct varatt_indirect redirect;
	struct varlena *ptr = palloc(INDIRECT_POINTER_SIZE);

	redirect.pointer = (struct varlena *) value;
	SET_VARTAG_EXTERNAL(ptr, VARTAG_INDIRECT);
	memcpy(VARDATA_EXTERNAL(ptr), &redirect, sizeof(redirect));
	return PointerGetDatum(ptr);
}

/*
 * Would pinning entry (handing out blob) take this backend's pinned bytes
 * in c over budget (0: no limit)?  Never for a blob it holds already.
 */
static bool
over_budget(SkadeBlobCache *c, const BlobEntry *entry, const void *blob, Size budget)
{
	return budget > 0 && c->pinned_bytes + entry->size > budget &&
		(pinned == NULL || hash_search(pinned, &blob, HASH_FIND, NULL) == NULL);
}

/*
 * Pin an entry until the end of the transaction (caller holds the lock); a
 * blob this backend holds already is counted as one more use of its pin.
 */
static void
pin_entry(SkadeBlobCache *c, BlobEntry *entry, const void *blob)
{
	PinnedBlob *p;
	bool		found;

	if (pinned == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(const void *);
		ctl.entrysize = sizeof(PinnedBlob);
		ctl.hcxt = TopMemoryContext;
		pinned = hash_create("skade pinned blobs", 64, &ctl,
							 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	/* remember the pin first: an ERROR in hash_search must not leak it */
	p = hash_search(pinned, &blob, HASH_ENTER, &found);
	if (found)
	{
		p->uses++;
		return;
	}
	p->cache = c;
	p->entry = entry;
	p->size = entry->size;
	p->uses = 1;
	pg_atomic_fetch_add_u32(&entry->pins, 1);
	c->pinned_bytes += p->size;
}

/* Unpin everything this backend pinned (end of transaction, or exit). */
static void
release_pins(void)
{
	HASH_SEQ_STATUS status;
	PinnedBlob *p;
	int			i;

	if (pinned == NULL)
		return;
	hash_seq_init(&status, pinned);
	while ((p = hash_seq_search(&status)) != NULL)
	{
		pg_atomic_fetch_sub_u32(&p->entry->pins, 1);
		hash_search(pinned, &p->blob, HASH_REMOVE, NULL);
	}
	for (i = 0; i < ncaches; i++)
		caches[i]->pinned_bytes = 0;
}

static void
xact_callback(XactEvent event, void *arg)
{
	if (pinned != NULL && hash_get_num_entries(pinned) > 0 &&
		(event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		 event == XACT_EVENT_PREPARE || event == XACT_EVENT_PARALLEL_COMMIT ||
		 event == XACT_EVENT_PARALLEL_ABORT))
		release_pins();
}

/*
 * Visit (pin false) or pin (pin true) the blob of location, filling the
 * entry on a miss; when pinning, returns the blob: pinned on a hit (NULL,
 * nothing loaded, on a hit that would take this backend's pinned bytes in
 * c over budget, when budget > 0), else palloc'd after the load.  With
 * in_place (pinning), a blob loaded and cached is pinned too and handed
 * out in place, and *in_place says which it is.
 */
static const void *
fetch(SkadeBlobCache *c, const char *location, SkadeBlobLoader loader, void *larg,
	  SkadeBlobVisitor visitor, void *varg, bool pin, Size budget, bool *in_place,
	  Size *size)
{
	BlobShared *s = c->shared;
	uint64		key = location_key(location);
	bool		waited = false;
	void	   *blob;

	attach(c);
	for (;;)
	{
		BlobEntry  *entry;
		const void *hit;
		bool		found;

		LWLockAcquire(&s->lock, LW_SHARED);
		entry = hash_search(c->index, &key, HASH_FIND, NULL);
		if (entry && entry->state == BLOB_READY)
		{
			hit = find_ready(c, key, location, &entry);
			if (hit && pin && over_budget(c, entry, hit, budget))
			{
				LWLockRelease(&s->lock);
				if (waited)
					ConditionVariableCancelSleep();
				return NULL;
			}
			if (hit)
			{
				*size = entry->size;
				if (pin)
					pin_entry(c, entry, hit);
				else
					visitor(hit, entry->size, varg);
			}
			LWLockRelease(&s->lock);
			if (waited)
				ConditionVariableCancelSleep();
			if (hit)
			{
				pg_atomic_fetch_add_u64(&s->hits, 1);
				if (in_place)
					*in_place = pin;
				return pin ? hit : NULL;
			}
			/* another location hashed alike, or not admitted: serve uncached */
			pg_atomic_fetch_add_u64(&s->misses, 1);
			blob = load_uncached(location, loader, larg, size);
			break;
		}
		if (entry && entry->state == BLOB_FILLING)
		{
			/* someone is reading this file: wait for it, don't read twice */
			LWLockRelease(&s->lock);
			if (!waited)
			{
				pg_atomic_fetch_add_u64(&s->coalesced, 1);
				ConditionVariablePrepareToSleep(&s->filled);
				waited = true;
			}
			else
				ConditionVariableSleep(&s->filled, PG_WAIT_EXTENSION);
			continue;
		}
		LWLockRelease(&s->lock);

		/* a miss: claim the fill */
		LWLockAcquire(&s->lock, LW_EXCLUSIVE);
		entry = enter_entry(c, key, &found);
		if (entry == NULL || found)
		{
			LWLockRelease(&s->lock);
			if (entry != NULL)
				continue;		/* somebody else claimed it first */
			/* index full of fills in progress: serve uncached */
			if (waited)
				ConditionVariableCancelSleep();
			pg_atomic_fetch_add_u64(&s->misses, 1);
			blob = load_uncached(location, loader, larg, size);
			break;
		}
		claim_fill(c, entry, key);
		LWLockRelease(&s->lock);
		if (waited)
			ConditionVariableCancelSleep();
		pg_atomic_fetch_add_u64(&s->misses, 1);
		blob = load_filling(c, key, location, loader, larg, size);
		if (pin && in_place)
		{
			const void *cached = pin_ready(c, key, location, budget, size);

			if (cached)
			{
				pfree(blob);
				*in_place = true;
				return cached;
			}
		}
		break;
	}
	if (pin)
		return blob;
	visitor(blob, *size, varg);
	pfree(blob);
	return NULL;
}

/*
 * The index entry of key (*found: it was there), entered if new, evicting
 * while the index is full; NULL if nothing could be evicted (every entry
 * pinned or filling).  Caller holds the lock exclusively.
 */
static BlobEntry *
enter_entry(SkadeBlobCache *c, uint64 key, bool *found)
{
	BlobEntry  *entry = hash_search(c->index, &key, HASH_ENTER_NULL, found);

	while (entry == NULL && evict_one(c))
		entry = hash_search(c->index, &key, HASH_ENTER_NULL, found);
	return entry;
}

/*
 * Mark the new index entry of key FILLING by this backend (caller holds the
 * lock exclusively); it must then load_filling() it.
 */
static void
claim_fill(SkadeBlobCache *c, BlobEntry *entry, uint64 key)
{
	entry->state = BLOB_FILLING;
	entry->filler_pid = MyProcPid;
	entry->chunk = InvalidDsaPointer;
	entry->size = 0;
	entry->slot = -1;
	pg_atomic_init_u32(&entry->referenced, 0);
	pg_atomic_init_u32(&entry->pins, 0);
	c->pending_fill = key;
}

/*
 * SkadeBlobCachePrefill
 *		Load location into c ahead of its readers, unless it is cached or
 *		being loaded already (or the index has no room): false, nothing
 *		done, then; true once it was loaded and cached.  Readers that miss
 *		meanwhile wait for it, as for any fill.
 */
bool
SkadeBlobCachePrefill(SkadeBlobCache *c, const char *location, SkadeBlobLoader loader,
					  void *larg)
{
	uint64		key = location_key(location);
	BlobEntry  *entry;
	bool		found;
	Size		size;

	if (c == NULL)
		return false;
	attach(c);
	LWLockAcquire(&c->shared->lock, LW_EXCLUSIVE);
	entry = enter_entry(c, key, &found);
	if (entry == NULL || found)
	{
		LWLockRelease(&c->shared->lock);
		return false;
	}
	claim_fill(c, entry, key);
	LWLockRelease(&c->shared->lock);
	pg_atomic_fetch_add_u64(&c->shared->misses, 1);
	pfree(load_filling(c, key, location, loader, larg, &size));
	return true;
}

/* load without caching (the origin is of no use then) */
static void *
load_uncached(const char *location, SkadeBlobLoader loader, void *larg, Size *size)
{
	char	   *origin = NULL;

	return loader(location, larg, size, &origin);
}

/*
 * Pin the READY entry of location (one this backend has just filled, or a
 * hit), if it is there (another backend may have evicted a fill at once)
 * and the pin keeps within budget (0: no limit); NULL otherwise.
 */
static const void *
pin_ready(SkadeBlobCache *c, uint64 key, const char *location, Size budget, Size *size)
{
	BlobEntry  *entry;
	const void *blob;

	LWLockAcquire(&c->shared->lock, LW_SHARED);
	blob = find_ready(c, key, location, &entry);
	if (blob && over_budget(c, entry, blob, budget))
		blob = NULL;
	if (blob)
	{
		pin_entry(c, entry, blob);
		*size = entry->size;
	}
	LWLockRelease(&c->shared->lock);
	return blob;
}

/* load with no lock held and publish; never leave the FILLING entry behind */
static void *
load_filling(SkadeBlobCache *c, uint64 key, const char *location, SkadeBlobLoader loader,
			 void *larg, Size *size)
{
	void	   *blob = NULL;
	char	   *origin = NULL;

	PG_TRY();
	{
		blob = loader(location, larg, size, &origin);
		CHECK_FOR_INTERRUPTS(); /* a cancel here must leave nothing behind */
		finish_fill(c, key, location, origin ? origin : "", blob, *size);
	}
	PG_CATCH();
	{
		abandon_fill(c);
		PG_RE_THROW();
	}
	PG_END_TRY();
	return blob;
}

/*
 * Publish a completed fill: allocate its chunk (evicting as needed) under
 * the lock, copy into it with no lock held, then mark it READY; wakes the
 * waiters.  Nothing in between can fail.
 */
static void
finish_fill(SkadeBlobCache *c, uint64 key, const char *location, const char *origin,
			const void *blob, Size size)
{
	BlobShared *s = c->shared;
	dsa_area   *area = attach(c);
	Size		origin_off = strlen(location) + 1;
	Size		blob_off = MAXALIGN(origin_off + strlen(origin) + 1);
	Size		total = blob_off + size;
	dsa_pointer dp = InvalidDsaPointer;
	BlobEntry  *entry;

	LWLockAcquire(&s->lock, LW_EXCLUSIVE);
	/*
	 * A blob over three quarters of the area is served uncached: it would
	 * evict nearly everything and might still not fit the area's free space,
	 * on every request.
	 */
	if (total <= s->capacity / 4 * 3 && size <= PG_UINT32_MAX)
	{
		bool		trimmed = false;

		for (;;)
		{
			dp = dsa_allocate_extended(area, total, DSA_ALLOC_NO_OOM | DSA_ALLOC_HUGE);
			if (DsaPointerIsValid(dp))
				break;
			if (evict_one(c))
				continue;
			/* nothing left to evict: release empty small-object superblocks, once */
			if (trimmed)
				break;
			dsa_trim(area);
			trimmed = true;
		}
	}
	entry = hash_search(c->index, &key, HASH_FIND, NULL);
	Assert(entry && entry->state == BLOB_FILLING && entry->filler_pid == MyProcPid);
	if (!DsaPointerIsValid(dp))
	{
		hash_search(c->index, &key, HASH_REMOVE, NULL); /* does not fit: uncached */
		c->pending_fill = 0;
		LWLockRelease(&s->lock);
		ConditionVariableBroadcast(&s->filled);
		return;
	}
	entry->chunk = dp;
	LWLockRelease(&s->lock);

	/* the copy: the entry is FILLING, so no one else touches the chunk */
	{
		char	   *chunk = dsa_get_address(area, dp);

		strcpy(chunk, location);
		strcpy(chunk + origin_off, origin);
		memcpy(chunk + blob_off, blob, size);
	}

	LWLockAcquire(&s->lock, LW_EXCLUSIVE);
	entry->origin_off = (uint32) origin_off;
	entry->blob_off = (uint32) blob_off;
	entry->size = (uint32) size;
	entry->state = BLOB_READY;
	pg_atomic_write_u32(&entry->referenced, 1);
	clock_add(s, entry);
	s->entries++;
	s->bytes += size;
	c->pending_fill = 0;
	LWLockRelease(&s->lock);
	ConditionVariableBroadcast(&s->filled);
}

/* Remove this backend's FILLING entry (and any chunk it got) after a failed fill. */
static void
abandon_fill(SkadeBlobCache *c)
{
	BlobEntry  *entry;

	if (c->pending_fill == 0)
		return;
	LWLockAcquire(&c->shared->lock, LW_EXCLUSIVE);
	entry = hash_search(c->index, &c->pending_fill, HASH_FIND, NULL);
	if (entry && entry->state == BLOB_FILLING && entry->filler_pid == MyProcPid)
	{
		if (DsaPointerIsValid(entry->chunk))
			dsa_free(attach(c), entry->chunk);
		hash_search(c->index, &c->pending_fill, HASH_REMOVE, NULL);
	}
	c->pending_fill = 0;
	LWLockRelease(&c->shared->lock);
	ConditionVariableBroadcast(&c->shared->filled);
}

static void
abandon_fills_at_exit(int code, Datum arg)
{
	int			i;

	for (i = 0; i < ncaches; i++)
		abandon_fill(caches[i]);
	release_pins();
}

/* ---------------------------------------------------------------- the clock */

/* Give a READY entry a slot on the clock (caller holds the lock exclusively). */
static void
clock_add(BlobShared *s, BlobEntry *entry)
{
	/* there are as many slots as index entries, so one is free */
	Assert(s->nfree > 0);
	entry->slot = (int32) s->free_slots[--s->nfree];
	s->ring[entry->slot] = entry;
}

/*
 * Free a READY entry's chunk, slot and index entry (caller holds the lock
 * exclusively).
 */
static void
remove_entry(SkadeBlobCache *c, BlobEntry *entry)
{
	BlobShared *s = c->shared;

	dsa_free(attach(c), entry->chunk);
	s->ring[entry->slot] = NULL;
	s->free_slots[s->nfree++] = (uint32) entry->slot;
	s->entries--;
	s->bytes -= entry->size;
	hash_search(c->index, &entry->key, HASH_REMOVE, NULL);
}

/*
 * Evict one unpinned READY entry by the clock (second chance): the hand
 * clears the mark of each entry used since it last passed and takes the
 * first unmarked one; false after two turns without a victim.  Caller
 * holds the lock exclusively.
 */
static bool
evict_one(SkadeBlobCache *c)
{
	BlobShared *s = c->shared;
	uint32		steps;

	for (steps = 0; steps < 2 * s->nslots; steps++)
	{
		BlobEntry  *entry = s->ring[s->hand];

		s->hand = (s->hand + 1) % s->nslots;
		if (entry == NULL || entry->state != BLOB_READY ||
			pg_atomic_read_u32(&entry->pins) > 0)
			continue;
		if (pg_atomic_read_u32(&entry->referenced) != 0)
		{
			pg_atomic_write_u32(&entry->referenced, 0);
			continue;
		}
		remove_entry(c, entry);
		pg_atomic_fetch_add_u64(&s->evictions, 1);
		return true;
	}
	return false;
}

/* ---------------------------------------------------------------- stats */

void
SkadeBlobCacheStatsGet(SkadeBlobCache *c, SkadeBlobCacheStats *stats)
{
	BlobShared *s = c->shared;

	stats->hits = pg_atomic_read_u64(&s->hits);
	stats->misses = pg_atomic_read_u64(&s->misses);
	stats->coalesced = pg_atomic_read_u64(&s->coalesced);
	stats->evictions = pg_atomic_read_u64(&s->evictions);
	LWLockAcquire(&s->lock, LW_SHARED);
	stats->entries = s->entries;
	stats->bytes = s->bytes;
	LWLockRelease(&s->lock);
	stats->capacity = s->capacity;
}

/* Drop every entry not being filled or in use, and zero the counters. */
void
SkadeBlobCacheReset(SkadeBlobCache *c)
{
	BlobShared *s = c->shared;
	uint32		i;

	attach(c);
	LWLockAcquire(&s->lock, LW_EXCLUSIVE);
	for (i = 0; i < s->nslots; i++)
	{
		BlobEntry  *entry = s->ring[i];

		/* FILLING entries are not on the clock; in-use ones stay */
		if (entry != NULL && pg_atomic_read_u32(&entry->pins) == 0)
			remove_entry(c, entry);
	}
	/* and give the empty superblocks of small blobs back for large ones */
	dsa_trim(c->area);
	pg_atomic_write_u64(&s->hits, 0);
	pg_atomic_write_u64(&s->misses, 0);
	pg_atomic_write_u64(&s->coalesced, 0);
	pg_atomic_write_u64(&s->evictions, 0);
	LWLockRelease(&s->lock);
}
