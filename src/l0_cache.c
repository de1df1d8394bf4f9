/*-------------------------------------------------------------------------
 *
 * l0_cache.c
 *	  L0: parsed table metadata in shared memory, keyed by metadata
 *	  location, shared by every backend.
 *
 * A metadata file is immutable and named by its location, so an entry can
 * only ever be evicted, never be stale.  Each entry holds one flat SkadeMeta
 * blob (metadata_json.h): the summary, the file's text and its refs-only
 * variant.
 *
 * Memory: blobs live in a DSA area created in place inside the main shared
 * memory segment, sized by skade.metadata_cache_size and limited to exactly
 * that size, so the cache never grows past its setting and needs no DSM
 * segments.  The index is a fixed-size shared HTAB keyed by a 64-bit hash
 * of the location (the blob holds the location; a collision is a miss that
 * is served uncached).  When an allocation or an index slot is missing,
 * the least recently used ready entry is evicted, until it fits; a blob
 * larger than the whole cache is served without being cached.
 *
 * Locking: one LWLock (tranche "skade_l0").  Readers take it shared for the
 * lookup and the copy-out of what they asked for, so readers never block
 * each other; the only exclusive holders are fill completion, eviction and
 * reset, which do no I/O under the lock.  Most readers copy out under the
 * lock and hold nothing afterwards.  skade.table_metadata() instead pins
 * the entry and returns a datum pointing into the cache (no copy of a
 * multi-megabyte text); pins are counted in the entry, remembered by the
 * backend, and dropped at the end of its transaction (commit, abort,
 * prepare) or at backend exit, so an ERROR or cancel never leaves one
 * behind.  Eviction and reset skip pinned entries.
 *
 * Coalescing: the first backend to miss inserts a FILLING entry and reads
 * and parses the file without any lock; others that miss on the same
 * location wait on a condition variable (counted as coalesced waits) and
 * then copy the result.  If the filler fails (ERROR, cancel, or FATAL) its
 * FILLING entry is removed (PG_CATCH, or a before_shmem_exit callback) and
 * the waiters try themselves, so nothing half-built is ever visible.
 *
 * IDENTIFICATION
 *	  src/l0_cache.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "common/hashfn.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/condition_variable.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/dsa.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "file_access.h"
#include "guc.h"
#include "l0_cache.h"
#include "pointer_mirror.h"
#include "shmem.h"

PG_FUNCTION_INFO_V1(skade_cache_stats);
PG_FUNCTION_INFO_V1(skade_cache_reset);

typedef enum L0State
{
	L0_FILLING,
	L0_READY
} L0State;

typedef struct L0Entry
{
	uint64		key;			/* hash of the location (HTAB key) */
	L0State		state;
	int			filler_pid;		/* FILLING: who fills it */
	dsa_pointer blob;			/* READY: the SkadeMeta */
	uint32		size;
	pg_atomic_uint64 last_used; /* LRU tick */
	pg_atomic_uint32 pins;		/* backends using the blob in place */
} L0Entry;

typedef struct L0Shared
{
	LWLock		lock;
	ConditionVariable filled;	/* broadcast when any fill ends */
	pg_atomic_uint64 tick;
	pg_atomic_uint64 hits;
	pg_atomic_uint64 misses;
	pg_atomic_uint64 coalesced;
	pg_atomic_uint64 evictions;
	uint64		entries;		/* READY entries (under lock) */
	uint64		bytes;			/* their blob bytes (under lock) */
	Size		capacity;		/* bytes of the DSA area */
	int			tranche_id;
} L0Shared;

/* ---- Local variables ---- */

static L0Shared *l0 = NULL;
static HTAB *l0_index = NULL;
static void *l0_area_space = NULL;
static dsa_area *l0_area = NULL;	/* this backend's attachment */
static uint64 pending_fill = 0;	/* key of a FILLING entry this backend owns */
static bool exit_callback_registered = false;
static List *pinned = NIL;		/* L0Entry pointers this backend pinned, in TopMemoryContext */

static long l0_max_entries(void);
static Size l0_area_size(void);
static dsa_area *l0_attach(void);
static uint64 location_key(const char *location);
static void fetch(const char *location, int want, L0Result *result,
				  L0JsonConsumer consumer, void *arg);
static bool copy_out(L0Entry *entry, const char *location, int want, L0Result *result,
					 L0JsonConsumer consumer, void *arg);
static void copy_from_blob(const SkadeMeta *meta, int want, L0Result *result,
						   L0JsonConsumer consumer, void *arg);
static SkadeMeta *load_metadata(const char *location);
static void finish_fill(uint64 key, SkadeMeta *meta);
static void abandon_fill(void);
static void abandon_fill_at_exit(int code, Datum arg);
static bool evict_one(void);
static void release_pins(void);
static const SkadeMeta *find_ready(uint64 key, const char *location, L0Entry **entry_out);
static void l0_xact_callback(XactEvent event, void *arg);

/* ---------------------------------------------------------------- sizing */

static long
l0_max_entries(void)
{
	return Max(128, ((long) skade_metadata_cache_size * 1024L) / 4096);
}

static Size
l0_area_size(void)
{
	return Max((Size) skade_metadata_cache_size * 1024, dsa_minimum_size() + 65536);
}

/* Shared memory L0 needs (called from the shmem request hook). */
Size
L0ShmemSize(void)
{
	Size		size = MAXALIGN(sizeof(L0Shared));

	size = add_size(size, hash_estimate_size(l0_max_entries(), sizeof(L0Entry)));
	size = add_size(size, l0_area_size());
	return size;
}

/*
 * L0ShmemInit
 *		Create or attach L0's shared state (shmem startup hook; the caller
 *		holds AddinShmemInitLock).
 */
void
L0ShmemInit(void)
{
	bool		found;
	HASHCTL		info;

	l0 = ShmemInitStruct("skade l0", MAXALIGN(sizeof(L0Shared)), &found);
	l0_area_space = ShmemInitStruct("skade l0 area", l0_area_size(), &found);
	if (!found)
	{
		dsa_area   *area;

		l0->tranche_id = LWLockNewTrancheId();
		LWLockInitialize(&l0->lock, l0->tranche_id);
		ConditionVariableInit(&l0->filled);
		pg_atomic_init_u64(&l0->tick, 1);
		pg_atomic_init_u64(&l0->hits, 0);
		pg_atomic_init_u64(&l0->misses, 0);
		pg_atomic_init_u64(&l0->coalesced, 0);
		pg_atomic_init_u64(&l0->evictions, 0);
		l0->entries = 0;
		l0->bytes = 0;
		l0->capacity = l0_area_size();

		area = dsa_create_in_place(l0_area_space, l0_area_size(), l0->tranche_id, NULL);
		dsa_set_size_limit(area, l0_area_size());
		dsa_pin(area);
		dsa_detach(area);
	}
	LWLockRegisterTranche(l0->tranche_id, "skade_l0");

	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(uint64);
	info.entrysize = sizeof(L0Entry);
	l0_index = ShmemInitHash("skade l0 index", l0_max_entries(), l0_max_entries(),
							 &info, HASH_ELEM | HASH_BLOBS);
}

static dsa_area *
l0_attach(void)
{
	if (l0_area == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

		l0_area = dsa_attach_in_place(l0_area_space, NULL);
		dsa_pin_mapping(l0_area);
		on_shmem_exit(dsa_on_shmem_exit_release_in_place, PointerGetDatum(l0_area_space));
		RegisterXactCallback(l0_xact_callback, NULL);
		if (!exit_callback_registered)
		{
			before_shmem_exit(abandon_fill_at_exit, (Datum) 0);
			exit_callback_registered = true;
		}
		MemoryContextSwitchTo(old);
	}
	return l0_area;
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
 * L0Fetch
 *		Copy what "want" asks for of the metadata at location into
 *		result (palloc'd in CurrentMemoryContext): from the cache on a hit,
 *		else after reading and parsing the file once for all backends.
 *		Without shared memory (not preloaded) it reads and parses directly.
 */
void
L0Fetch(const char *location, int want, L0Result *result)
{
	fetch(location, want, result, NULL, NULL);
}

/*
 * L0FetchJson
 *		Hand the metadata text (or its refs variant) of location to consumer
 *		without copying it first: on a hit the datum points into shared
 *		memory and the consumer runs under the cache's shared lock, so it
 *		must copy what it keeps (e.g. form a tuple) and do nothing else.
 */
void
L0FetchJson(const char *location, bool refs, L0JsonConsumer consumer, void *arg)
{
	L0Result	result;

	fetch(location, refs ? L0_WANT_REFS_JSON : L0_WANT_JSON, &result, consumer, arg);
}

/*
 * L0FetchJsonPinned
 *		The metadata text (or refs variant) of location as a datum that
 *		points into the cache itself: no copy.  The entry is pinned (never
 *		evicted) until the end of the current transaction, so the datum stays
 *		valid for the statement's output.  Falls back to a palloc'd copy when
 *		the text cannot be served from the cache.
 */
struct varlena *
L0FetchJsonPinned(const char *location, bool refs)
{
	uint64		key = location_key(location);
	struct varlena *result = NULL;
	L0Entry    *entry;
	L0Result	r;

	if (l0 != NULL)
	{
		const SkadeMeta *meta;

		l0_attach();
		LWLockAcquire(&l0->lock, LW_SHARED);
		meta = find_ready(key, location, &entry);
		if (meta)
		{
			MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

			/* remember the pin first: an ERROR in lappend must not leak it */
			pinned = lappend(pinned, entry);
			pg_atomic_fetch_add_u32(&entry->pins, 1);
			MemoryContextSwitchTo(old);
			result = (struct varlena *) (((const char *) meta) +
										 (refs ? meta->refs_json_off : meta->json_off));
		}
		LWLockRelease(&l0->lock);
		if (result)
		{
			pg_atomic_fetch_add_u64(&l0->hits, 1);
			return result;
		}
	}
	/* a miss: fill (and copy this once) */
	L0Fetch(location, refs ? L0_WANT_REFS_JSON : L0_WANT_JSON, &r);
	return r.json;
}

/*
 * L0VisitSummary
 *		Run visitor on the parsed summary of location without copying it: on
 *		a hit, in place under the cache's shared lock (so the visitor must be
 *		short and must not error), else on a freshly read copy.  For lookups
 *		that need a few entries of a large summary, e.g. a binary search.
 */
void
L0VisitSummary(const char *location, L0SummaryVisitor visitor, void *arg)
{
	uint64		key = location_key(location);
	L0Result	r;

	if (l0 != NULL)
	{
		L0Entry    *entry;
		const SkadeMeta *meta;
		bool		done = false;

		l0_attach();
		LWLockAcquire(&l0->lock, LW_SHARED);
		meta = find_ready(key, location, &entry);
		if (meta)
		{
			visitor(meta, arg);
			done = true;
		}
		LWLockRelease(&l0->lock);
		if (done)
		{
			pg_atomic_fetch_add_u64(&l0->hits, 1);
			return;
		}
	}
	L0Fetch(location, L0_WANT_SUMMARY, &r);
	visitor(r.summary, arg);
	pfree(r.summary);
}

/*
 * The READY entry holding location, touched for LRU; NULL if there is none
 * (or a different location hashed alike).  Caller holds the lock.
 */
static const SkadeMeta *
find_ready(uint64 key, const char *location, L0Entry **entry_out)
{
	L0Entry    *entry = hash_search(l0_index, &key, HASH_FIND, NULL);
	const SkadeMeta *meta;

	*entry_out = entry;
	if (entry == NULL || entry->state != L0_READY)
		return NULL;
	meta = dsa_get_address(l0_area, entry->blob);
	if (strcmp(((const char *) meta) + meta->location, location) != 0)
		return NULL;
	pg_atomic_write_u64(&entry->last_used, pg_atomic_fetch_add_u64(&l0->tick, 1));
	return meta;
}

/* Unpin everything this backend pinned (end of transaction, or exit). */
static void
release_pins(void)
{
	ListCell   *lc;

	foreach(lc, pinned)
		pg_atomic_fetch_sub_u32(&((L0Entry *) lfirst(lc))->pins, 1);
	list_free(pinned);
	pinned = NIL;
}

static void
l0_xact_callback(XactEvent event, void *arg)
{
	if (pinned != NIL &&
		(event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		 event == XACT_EVENT_PREPARE || event == XACT_EVENT_PARALLEL_COMMIT ||
		 event == XACT_EVENT_PARALLEL_ABORT))
		release_pins();
}

/* L0Fetch, or with a consumer, L0FetchJson */
static void
fetch(const char *location, int want, L0Result *result,
	  L0JsonConsumer consumer, void *arg)
{
	uint64		key = location_key(location);
	bool		waited = false;

	memset(result, 0, sizeof(L0Result));
	if (l0 == NULL)
	{
		copy_from_blob(load_metadata(location), want, result, consumer, arg);
		return;
	}
	l0_attach();

	for (;;)
	{
		L0Entry    *entry;
		bool		found;

		LWLockAcquire(&l0->lock, LW_SHARED);
		entry = hash_search(l0_index, &key, HASH_FIND, NULL);
		if (entry && entry->state == L0_READY)
		{
			found = copy_out(entry, location, want, result, consumer, arg);
			LWLockRelease(&l0->lock);
			if (waited)
				ConditionVariableCancelSleep();
			if (found)
			{
				pg_atomic_fetch_add_u64(&l0->hits, 1);
				return;
			}
			/* hash collision with another location: serve uncached */
			pg_atomic_fetch_add_u64(&l0->misses, 1);
			copy_from_blob(load_metadata(location), want, result, consumer, arg);
			return;
		}
		if (entry && entry->state == L0_FILLING)
		{
			/* someone is reading this file: wait for it, don't read twice */
			LWLockRelease(&l0->lock);
			if (!waited)
			{
				pg_atomic_fetch_add_u64(&l0->coalesced, 1);
				ConditionVariablePrepareToSleep(&l0->filled);
				waited = true;
			}
			else
				ConditionVariableSleep(&l0->filled, PG_WAIT_EXTENSION);
			continue;
		}
		LWLockRelease(&l0->lock);

		/* a miss: claim the fill */
		LWLockAcquire(&l0->lock, LW_EXCLUSIVE);
		entry = hash_search(l0_index, &key, HASH_ENTER_NULL, &found);
		while (entry == NULL && evict_one())
			entry = hash_search(l0_index, &key, HASH_ENTER_NULL, &found);
		if (entry == NULL || found)
		{
			LWLockRelease(&l0->lock);
			if (entry == NULL)
			{
				/* index full of fills in progress: serve uncached */
				copy_from_blob(load_metadata(location), want, result, consumer, arg);
				return;
			}
			continue;			/* somebody else claimed it first */
		}
		entry->state = L0_FILLING;
		entry->filler_pid = MyProcPid;
		entry->blob = InvalidDsaPointer;
		entry->size = 0;
		pg_atomic_init_u64(&entry->last_used, 0);
		pg_atomic_init_u32(&entry->pins, 0);
		pending_fill = key;
		LWLockRelease(&l0->lock);
		break;
	}
	if (waited)
		ConditionVariableCancelSleep();
	pg_atomic_fetch_add_u64(&l0->misses, 1);

	if (!exit_callback_registered)
	{
		before_shmem_exit(abandon_fill_at_exit, (Datum) 0);
		exit_callback_registered = true;
	}

	/* read and parse with no lock held; never leave the FILLING entry behind */
	PG_TRY();
	{
		SkadeMeta  *meta = load_metadata(location);

		finish_fill(key, meta);
		copy_from_blob(meta, want, result, consumer, arg);
		pfree(meta);
	}
	PG_CATCH();
	{
		abandon_fill();
		PG_RE_THROW();
	}
	PG_END_TRY();
}

/* Read and parse one metadata file into a palloc'd SkadeMeta. */
static SkadeMeta *
load_metadata(const char *location)
{
	StringInfo	text = SkadeReadLocation(location);
	SkadeMeta  *meta;

	CHECK_FOR_INTERRUPTS();		/* a cancel here must leave nothing behind */
	meta = SkadeParseMetadata(text->data, text->len, location);

	pfree(text->data);
	pfree(text);
	return meta;
}

/* Publish a completed fill, evicting as needed; wakes the waiters. */
static void
finish_fill(uint64 key, SkadeMeta *meta)
{
	dsa_area   *area = l0_attach();
	dsa_pointer dp = InvalidDsaPointer;
	L0Entry    *entry;

	LWLockAcquire(&l0->lock, LW_EXCLUSIVE);
	if (meta->total_size < l0->capacity)
	{
		for (;;)
		{
			dp = dsa_allocate_extended(area, meta->total_size,
									   DSA_ALLOC_NO_OOM | DSA_ALLOC_HUGE);
			if (DsaPointerIsValid(dp) || !evict_one())
				break;
		}
	}
	entry = hash_search(l0_index, &key, HASH_FIND, NULL);
	Assert(entry && entry->state == L0_FILLING && entry->filler_pid == MyProcPid);
	if (DsaPointerIsValid(dp))
	{
		memcpy(dsa_get_address(area, dp), meta, meta->total_size);
		entry->blob = dp;
		entry->size = meta->total_size;
		entry->state = L0_READY;
		pg_atomic_write_u64(&entry->last_used, pg_atomic_fetch_add_u64(&l0->tick, 1));
		l0->entries++;
		l0->bytes += meta->total_size;
	}
	else
		hash_search(l0_index, &key, HASH_REMOVE, NULL);	/* does not fit: uncached */
	pending_fill = 0;
	LWLockRelease(&l0->lock);
	ConditionVariableBroadcast(&l0->filled);
}

/* Remove this backend's FILLING entry after a failed fill. */
static void
abandon_fill(void)
{
	L0Entry    *entry;

	if (pending_fill == 0 || l0 == NULL)
		return;
	LWLockAcquire(&l0->lock, LW_EXCLUSIVE);
	entry = hash_search(l0_index, &pending_fill, HASH_FIND, NULL);
	if (entry && entry->state == L0_FILLING && entry->filler_pid == MyProcPid)
		hash_search(l0_index, &pending_fill, HASH_REMOVE, NULL);
	pending_fill = 0;
	LWLockRelease(&l0->lock);
	ConditionVariableBroadcast(&l0->filled);
}

static void
abandon_fill_at_exit(int code, Datum arg)
{
	abandon_fill();
	release_pins();
}

/*
 * Copy the wanted parts of a READY entry; false if the entry holds another
 * location (hash collision).  Caller holds the lock (shared is enough).
 */
static bool
copy_out(L0Entry *entry, const char *location, int want, L0Result *result,
		 L0JsonConsumer consumer, void *arg)
{
	const SkadeMeta *meta = dsa_get_address(l0_area, entry->blob);

	if (strcmp(((const char *) meta) + meta->location, location) != 0)
		return false;
	pg_atomic_write_u64(&entry->last_used, pg_atomic_fetch_add_u64(&l0->tick, 1));
	copy_from_blob(meta, want, result, consumer, arg);
	return true;
}

/*
 * Copy the wanted parts of a SkadeMeta into palloc'd memory, or hand the
 * text to the consumer in place.
 */
static void
copy_from_blob(const SkadeMeta *meta, int want, L0Result *result,
			   L0JsonConsumer consumer, void *arg)
{
	if (consumer)
	{
		uint32		off = (want & L0_WANT_JSON) ? meta->json_off : meta->refs_json_off;

		consumer((struct varlena *) (((const char *) meta) + off), arg);
		return;
	}
	if (want & L0_WANT_SUMMARY)
	{
		result->summary = palloc(meta->json_off);
		memcpy(result->summary, meta, meta->json_off);
	}
	if (want & (L0_WANT_JSON | L0_WANT_REFS_JSON))
	{
		uint32		off = (want & L0_WANT_JSON) ? meta->json_off : meta->refs_json_off;
		const struct varlena *v = (const struct varlena *) (((const char *) meta) + off);

		result->json = palloc(VARSIZE(v));
		memcpy(result->json, v, VARSIZE(v));
	}
}

/*
 * Evict the least recently used READY entry; false if there is none.
 * Caller holds the lock exclusively.
 */
static bool
evict_one(void)
{
	HASH_SEQ_STATUS status;
	L0Entry    *entry;
	L0Entry    *victim = NULL;
	uint64		oldest = PG_UINT64_MAX;

	hash_seq_init(&status, l0_index);
	while ((entry = hash_seq_search(&status)) != NULL)
	{
		if (entry->state == L0_READY && pg_atomic_read_u32(&entry->pins) == 0 &&
			pg_atomic_read_u64(&entry->last_used) < oldest)
		{
			oldest = pg_atomic_read_u64(&entry->last_used);
			victim = entry;
		}
	}
	if (victim == NULL)
		return false;
	dsa_free(l0_attach(), victim->blob);
	l0->entries--;
	l0->bytes -= victim->size;
	hash_search(l0_index, &victim->key, HASH_REMOVE, NULL);
	pg_atomic_fetch_add_u64(&l0->evictions, 1);
	return true;
}

/* ---------------------------------------------------------------- SQL */

/*
 * skade.cache_stats() -> (hits, misses, coalesced_waits, evictions,
 *						   entries, bytes, capacity) of L0, then the L1
 *						   pointer mirror's (hits, misses, entries)
 */
Datum
skade_cache_stats(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[10];
	bool		nulls[10] = {0};
	int64		phits,
				pmisses,
				pentries;

	SkadeRequireShared();
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	tupdesc = BlessTupleDesc(tupdesc);
	values[0] = Int64GetDatum(pg_atomic_read_u64(&l0->hits));
	values[1] = Int64GetDatum(pg_atomic_read_u64(&l0->misses));
	values[2] = Int64GetDatum(pg_atomic_read_u64(&l0->coalesced));
	values[3] = Int64GetDatum(pg_atomic_read_u64(&l0->evictions));
	LWLockAcquire(&l0->lock, LW_SHARED);
	values[4] = Int64GetDatum(l0->entries);
	values[5] = Int64GetDatum(l0->bytes);
	LWLockRelease(&l0->lock);
	values[6] = Int64GetDatum(l0->capacity);
	MirrorStats(&phits, &pmisses, &pentries);
	values[7] = Int64GetDatum(phits);
	values[8] = Int64GetDatum(pmisses);
	values[9] = Int64GetDatum(pentries);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/* skade.cache_reset(): drop every cached entry and zero the counters. */
Datum
skade_cache_reset(PG_FUNCTION_ARGS)
{
	HASH_SEQ_STATUS status;
	L0Entry    *entry;
	dsa_area   *area;

	SkadeRequireShared();
	area = l0_attach();
	LWLockAcquire(&l0->lock, LW_EXCLUSIVE);
	hash_seq_init(&status, l0_index);
	while ((entry = hash_seq_search(&status)) != NULL)
	{
		if (entry->state != L0_READY || pg_atomic_read_u32(&entry->pins) > 0)
			continue;			/* being filled, or in use: it stays */
		dsa_free(area, entry->blob);
		hash_search(l0_index, &entry->key, HASH_REMOVE, NULL);
	}
	l0->entries = 0;
	l0->bytes = 0;
	hash_seq_init(&status, l0_index);
	while ((entry = hash_seq_search(&status)) != NULL)
	{
		if (entry->state == L0_READY)
		{
			l0->entries++;
			l0->bytes += entry->size;
		}
	}
	pg_atomic_write_u64(&l0->hits, 0);
	pg_atomic_write_u64(&l0->misses, 0);
	pg_atomic_write_u64(&l0->coalesced, 0);
	pg_atomic_write_u64(&l0->evictions, 0);
	LWLockRelease(&l0->lock);
	PG_RETURN_VOID();
}
