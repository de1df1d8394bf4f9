/*-------------------------------------------------------------------------
 *
 * pointer_mirror.c
 *	  L1: a shared-memory mirror of iceberg_tables (table -> current and
 *	  previous metadata location) that lets a warm load_table/table_exists
 *	  answer without the planner or the heap, and never answers differently
 *	  from the heap for the caller's snapshot.
 *
 * Invariants
 *   - An entry is keyed by its scope (database, catalog table, commit-log
 *     trigger and that trigger's row version, see MirrorScope) and the
 *     table's catalog/namespace/name.  So two databases, or a catalog table
 *     dropped and re-created (or re-adopted), never see each other's entries,
 *     and after the trigger was disabled or replaced (changes made meanwhile
 *     were not seen) the old entries are simply never found again; nothing
 *     needs flushing on a relcache invalidation (VACUUM, ANALYZE).
 *   - An entry holds a committed row version: its values and the
 *     transaction id (xmin) that wrote them.  Entries come from two places:
 *     a writer's commit (installed in the XACT_EVENT_COMMIT callback, after
 *     the commit is visible) and a reader's heap lookup (only of a version
 *     with no xmax, i.e. the newest one, and only if no change began since
 *     the reader started looking: a global epoch is bumped by every change).
 *   - Before a writer commits, the commit-log trigger marks the entry as
 *     changing (creating a placeholder if needed); the mark is cleared at
 *     commit or abort.  While any change is in flight for a key, or a
 *     TRUNCATE is in flight, readers fall back to the heap.
 *   - A reader uses an entry only if its xmin is visible to the reader's
 *     snapshot (XidInMVCCSnapshot) and the reader's own transaction has no
 *     pending change to that table.  So REPEATABLE READ snapshots older than
 *     the change, own uncommitted changes, aborted writers (never installed)
 *     and in-flight writers all go to the heap.
 *   - Concurrent installs for one key are ordered by a global change
 *     counter taken under the row lock, so an older commit whose callback
 *     runs late never overwrites a newer one.  Subtransaction aborts drop
 *     their pending installs; PREPARE TRANSACTION drops the entries (the
 *     outcome is decided elsewhere; the heap answers meanwhile).
 *   - During recovery (a hot standby) replay fires no trigger: the primary's
 *     trigger also writes a WAL record per noted change (mirror_wal.c) whose
 *     redo removes the entry and bumps the epoch (MirrorRedoChange).  The
 *     heap change precedes that record and the commit follows it, so a fill
 *     of the old version either reads it without xmax before the record
 *     (and the record removes it before the commit) or is refused by the
 *     epoch or the xmax.  A TRUNCATE's record drops the table's entries; its
 *     replayed AccessExclusiveLock already keeps heap readers (so fills)
 *     out until it commits, and, should a reader get past it, the
 *     truncating xid is kept: while a reader's snapshot sees it running,
 *     that reader neither uses nor fills the mirror (standby_refuses).  After
 *     promotion the entries stay valid.
 *   - Size: the table holds at most skade.pointer_cache_entries entries
 *     (HASH_FIXED_SIZE, never more shared memory than its setting).  A change
 *     or a fill that finds no free slot evicts an entry that is not changing
 *     by a clock with second chance (entries hit since the hand last passed
 *     are spared once; no scan of the table per victim); a change that still finds none
 *     falls back to a global in-flight mark, a fill just does not fill.  A
 *     miss always falls back to the heap.
 *   - Views are mirrored too (is_view), so table_exists stays exact.
 *
 * Locking: one LWLock (tranche "skade_l1"), shared for lookups, exclusive
 * for marks, installs and fills; nothing but memcpy happens under it.
 * Backend-local pending changes live in TopTransactionContext.
 *
 * IDENTIFICATION
 *	  src/cache/pointer_mirror.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/transam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_trigger.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/fmgroids.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "util/guc.h"
#include "cache/mirror_wal.h"
#include "cache/pointer_mirror.h"
#include "util/skade_limits.h"

/* catalog \x1f namespace \x1f name */
#define MIRROR_NAMES_LEN	(3 * SKADE_MAX_NAME_LEN + 3)
#define MIRROR_SEP			'\x1f'

/* TRUNCATEs of iceberg_tables a standby remembers before it stops mirroring */
#define MIRROR_STANDBY_TRUNCATES	8

/* zero-padded: hashed and compared as scope + the names string */
typedef struct MirrorKey
{
	MirrorScope scope;
	char		names[MIRROR_NAMES_LEN];
} MirrorKey;

typedef struct MirrorEntry
{
	MirrorKey	key;
	int			changing;		/* writers in flight for this key */
	bool		valid;			/* holds a committed version */
	bool		is_view;
	bool		location_null;
	bool		previous_null;
	TransactionId xmin;			/* writer of the version held */
	uint64		order;			/* change counter of the version held */
	uint32		slot;			/* its place on the clock */
	pg_atomic_uint32 referenced;	/* hit since the hand last passed */
	char		location[SKADE_MAX_LOCATION_LEN + 1];
	char		previous[SKADE_MAX_LOCATION_LEN + 1];
} MirrorEntry;

typedef struct MirrorShared
{
	LWLock		lock;
	int			tranche_id;
	int			global_changing;	/* TRUNCATEs / overflowed marks in flight */
	uint64		entries;		/* valid entries (under lock) */
	uint64		slots;			/* entries in the table, valid or not */
	uint64		evictions;		/* under lock */
	/* recovery: TRUNCATEs replayed (see standby_refuses); off when full */
	int			nstandby_truncates;
	TransactionId standby_truncates[MIRROR_STANDBY_TRUNCATES];
	bool		standby_off;
	pg_atomic_uint64 epoch;		/* bumped by every change event */
	pg_atomic_uint64 order;		/* change counter */
	pg_atomic_uint64 hits;
	pg_atomic_uint64 misses;
	/* the clock (under lock): entries by slot, a stack of free slots */
	uint32		nslots;
	uint32		hand;
	uint32		nfree;
	MirrorEntry **ring;			/* [nslots]; NULL: a free slot */
	uint32	   *free_slots;		/* [nslots] */
} MirrorShared;

/* a change of this backend's transaction, applied at commit */
typedef struct MirrorPending
{
	MirrorKey	key;
	bool		global;			/* TRUNCATE or overflow: no entry marked */
	bool		truncate;
	bool		removed;
	bool		aborted;		/* its subtransaction rolled back */
	bool		is_view;
	char	   *location;
	char	   *previous;
	TransactionId xid;
	uint64		order;
	int			nest_level;
} MirrorPending;

/* ---- Local variables ---- */

static MirrorShared *l1 = NULL;
static HTAB *l1_index = NULL;
static List *pending = NIL;		/* of MirrorPending, in TopTransactionContext */

/* MirrorScopeOf's last answer, until a relcache invalidation */
static MirrorScope scope_cache;
static bool scope_cache_valid = false;

static bool make_key(MirrorKey *key, const MirrorScope *scope, const char *catalog,
					 const char *ns, const char *name);
static uint32 key_hash(const void *key, Size keysize);
static int	key_match(const void *a, const void *b, Size keysize);
static bool own_pending(const MirrorKey *key);
static MirrorEntry *enter_entry(const MirrorKey *key);
static bool evict_one(void);
static Size clock_size(void);
static void remove_entry(MirrorEntry *e);
static void scope_invalidate(Datum arg, Oid relid);
static bool standby_refuses(Snapshot snap);
static void set_values(MirrorEntry *e, const char *location, const char *previous, bool is_view);
static void mirror_xact_callback(XactEvent event, void *arg);
static void mirror_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
									SubTransactionId parentSubid, void *arg);
static void end_pending(bool commit, bool drop_entries);
static void invalidate_scope(const MirrorScope *scope);

/* ---------------------------------------------------------------- setup */

Size
MirrorShmemSize(void)
{
	Size		size = MAXALIGN(sizeof(MirrorShared));

	if (skade_pointer_cache_entries > 0)
	{
		size = add_size(size, clock_size());
		size = add_size(size, hash_estimate_size(skade_pointer_cache_entries,
												 sizeof(MirrorEntry)));
	}
	return size;
}

/* shmem startup hook; the caller holds AddinShmemInitLock */
void
MirrorShmemInit(void)
{
	bool		found;
	HASHCTL		info;

	if (skade_pointer_cache_entries <= 0)
		return;
	l1 = ShmemInitStruct("skade l1", MAXALIGN(sizeof(MirrorShared)) + clock_size(), &found);
	if (!found)
	{
		char	   *clock = ((char *) l1) + MAXALIGN(sizeof(MirrorShared));
		uint32		i;

		l1->nslots = (uint32) skade_pointer_cache_entries;
		l1->hand = 0;
		l1->ring = (MirrorEntry **) clock;
		l1->free_slots = (uint32 *) (clock + MAXALIGN(sizeof(MirrorEntry *) * l1->nslots));
		for (i = 0; i < l1->nslots; i++)
		{
			l1->ring[i] = NULL;
			l1->free_slots[i] = l1->nslots - 1 - i;
		}
		l1->nfree = l1->nslots;
		l1->tranche_id = LWLockNewTrancheId();
		LWLockInitialize(&l1->lock, l1->tranche_id);
		l1->global_changing = 0;
		l1->entries = 0;
		l1->slots = 0;
		l1->evictions = 0;
		pg_atomic_init_u64(&l1->epoch, 1);
		pg_atomic_init_u64(&l1->order, 1);
		pg_atomic_init_u64(&l1->hits, 0);
		pg_atomic_init_u64(&l1->misses, 0);
	}
	LWLockRegisterTranche(l1->tranche_id, "skade_l1");
	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(MirrorKey);
	info.entrysize = sizeof(MirrorEntry);
	info.hash = key_hash;
	info.match = key_match;
	l1_index = ShmemInitHash("skade l1 index", skade_pointer_cache_entries,
							 skade_pointer_cache_entries, &info,
							 HASH_ELEM | HASH_FUNCTION | HASH_COMPARE | HASH_FIXED_SIZE);
}

/* the clock's ring and free-slot stack */
static Size
clock_size(void)
{
	return add_size(MAXALIGN(mul_size(sizeof(MirrorEntry *), skade_pointer_cache_entries)),
					MAXALIGN(mul_size(sizeof(uint32), skade_pointer_cache_entries)));
}

/* _PG_init: the transaction callbacks that apply pending changes */
void
MirrorInit(void)
{
	static const MirrorWalRedo redo = {MirrorRedoChange, MirrorRedoTruncate};

	MirrorWalInit(&redo);
	RegisterXactCallback(mirror_xact_callback, NULL);
	RegisterSubXactCallback(mirror_subxact_callback, NULL);
	CacheRegisterRelcacheCallback(scope_invalidate, (Datum) 0);
}

/*
 * MirrorScopeOf
 *		The scope of entries for catalog table relid kept in step by trigger
 *		tgoid: includes the xmin of the trigger's pg_trigger row, which every
 *		ALTER TABLE ... ENABLE/DISABLE TRIGGER replaces.  Cached until the next
 *		relcache invalidation of that table (those commands send one).
 */
void
MirrorScopeOf(MirrorScope *scope, Oid relid, Oid tgoid)
{
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;

	if (scope_cache_valid && scope_cache.relid == relid && scope_cache.tgoid == tgoid)
	{
		*scope = scope_cache;
		return;
	}
	memset(scope, 0, sizeof(MirrorScope));
	scope->dboid = MyDatabaseId;
	scope->relid = relid;
	scope->tgoid = tgoid;
	rel = table_open(TriggerRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_trigger_oid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(tgoid));
	scan = systable_beginscan(rel, TriggerOidIndexId, true, NULL, 1, &key);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
		scope->tgxmin = HeapTupleHeaderGetRawXmin(tup->t_data);
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	scope_cache = *scope;
	scope_cache_valid = true;
}

static void
scope_invalidate(Datum arg, Oid relid)
{
	if (relid == InvalidOid || relid == scope_cache.relid)
		scope_cache_valid = false;
}

/* ---------------------------------------------------------------- read path */

/*
 * MirrorLookup
 *		Answer the row of catalog.ns.name from the mirror, for the active
 *		snapshot; false means "ask the heap".  Strings are palloc'd.
 */
bool
MirrorLookup(const MirrorScope *scope, const char *catalog, const char *ns,
			 const char *name, StoreTable *out)
{
	MirrorKey	key;
	MirrorEntry *e;
	bool		hit = false;

	if (l1 == NULL || !make_key(&key, scope, catalog, ns, name) || own_pending(&key) ||
		!ActiveSnapshotSet())
		return false;

	LWLockAcquire(&l1->lock, LW_SHARED);
	e = hash_search(l1_index, &key, HASH_FIND, NULL);
	if (e && e->valid && e->changing == 0 && l1->global_changing == 0 &&
		!XidInMVCCSnapshot(e->xmin, GetActiveSnapshot()) &&
		!standby_refuses(GetActiveSnapshot()))
	{
		out->metadata_location = e->location_null ? NULL : pstrdup(e->location);
		out->previous_metadata_location = e->previous_null ? NULL : pstrdup(e->previous);
		out->is_view = e->is_view;
		out->xmin = e->xmin;
		out->xmax = InvalidTransactionId;
		hit = true;
		if (pg_atomic_read_u32(&e->referenced) == 0)
			pg_atomic_write_u32(&e->referenced, 1);
	}
	LWLockRelease(&l1->lock);
	pg_atomic_fetch_add_u64(hit ? &l1->hits : &l1->misses, 1);
	return hit;
}

/* The change epoch; read it before a heap lookup that may fill. */
uint64
MirrorEpoch(void)
{
	return l1 ? pg_atomic_read_u64(&l1->epoch) : 0;
}

/*
 * MirrorFill
 *		Offer a row version read from the heap.  Taken only if it is the
 *		newest version (no xmax), written by a finished transaction other than
 *		ours, no change happened since "epoch" was read, and this is not a
 *		standby.  A full table gives up an idle entry for it.
 */
void
MirrorFill(const MirrorScope *scope, const char *catalog, const char *ns,
		   const char *name, const StoreTable *row, uint64 epoch)
{
	MirrorKey	key;
	MirrorEntry *e;

	if (l1 == NULL || TransactionIdIsValid(row->xmax) ||
		!TransactionIdIsValid(row->xmin) ||
		TransactionIdIsCurrentTransactionId(row->xmin) || !ActiveSnapshotSet() ||
		!make_key(&key, scope, catalog, ns, name) || own_pending(&key))
		return;
	if ((row->metadata_location && strlen(row->metadata_location) > SKADE_MAX_LOCATION_LEN) ||
		(row->previous_metadata_location &&
		 strlen(row->previous_metadata_location) > SKADE_MAX_LOCATION_LEN))
		return;

	LWLockAcquire(&l1->lock, LW_EXCLUSIVE);
	if (pg_atomic_read_u64(&l1->epoch) == epoch && l1->global_changing == 0 &&
		!standby_refuses(GetActiveSnapshot()))
	{
		e = enter_entry(&key);
		if (e && !e->valid && e->changing == 0)
		{
			e->xmin = row->xmin;
			e->order = 0;
			set_values(e, row->metadata_location, row->previous_metadata_location,
					   row->is_view);
			l1->entries++;
		}
	}
	LWLockRelease(&l1->lock);
}

/* ---------------------------------------------------------------- write path */

/*
 * MirrorNoteChange
 *		Called by the commit-log trigger for every changed row (old and new
 *		identity of a rename separately): mark the key as changing now,
 *		install or remove it when the transaction commits.
 */
void
MirrorNoteChange(const MirrorScope *scope, const char *catalog, const char *ns,
				 const char *name, bool removed, const char *location,
				 const char *previous, bool is_view)
{
	MirrorPending *p;
	MemoryContext old;
	MirrorEntry *e;
	MirrorKey	key;

	/* never mirrored (unusual name): nothing to keep in step */
	if (!make_key(&key, scope, catalog, ns, name))
		return;
	/* standbys forget the entry when they replay this (mirror_wal.c) */
	MirrorWalLogChange(scope, key.names);
	if (l1 == NULL)
		return;
	old = MemoryContextSwitchTo(TopTransactionContext);
	p = palloc0(sizeof(MirrorPending));
	p->key = key;
	/* a value the mirror cannot hold (varchar counts characters) is not mirrored */
	if ((location && strlen(location) > SKADE_MAX_LOCATION_LEN) ||
		(previous && strlen(previous) > SKADE_MAX_LOCATION_LEN))
		removed = true;
	p->removed = removed;
	p->is_view = is_view;
	p->location = location ? pstrdup(location) : NULL;
	p->previous = previous ? pstrdup(previous) : NULL;
	p->xid = GetTopTransactionId();
	p->nest_level = GetCurrentTransactionNestLevel();

	LWLockAcquire(&l1->lock, LW_EXCLUSIVE);
	p->order = pg_atomic_fetch_add_u64(&l1->order, 1);
	e = enter_entry(&p->key);
	if (e)
		e->changing++;
	else
	{
		p->global = true;
		l1->global_changing++;
	}
	pg_atomic_fetch_add_u64(&l1->epoch, 1);
	LWLockRelease(&l1->lock);

	pending = lappend(pending, p);
	MemoryContextSwitchTo(old);
}

/*
 * A TRUNCATE of iceberg_tables: the mirror is bypassed, then the entries of
 * that catalog table are dropped at commit.
 */
void
MirrorNoteTruncate(const MirrorScope *scope)
{
	MirrorPending *p;
	MemoryContext old;

	MirrorWalLogTruncate(scope);
	if (l1 == NULL)
		return;
	old = MemoryContextSwitchTo(TopTransactionContext);
	p = palloc0(sizeof(MirrorPending));
	p->global = true;
	p->truncate = true;
	p->key.scope = *scope;
	p->nest_level = GetCurrentTransactionNestLevel();
	LWLockAcquire(&l1->lock, LW_EXCLUSIVE);
	l1->global_changing++;
	pg_atomic_fetch_add_u64(&l1->epoch, 1);
	LWLockRelease(&l1->lock);
	pending = lappend(pending, p);
	MemoryContextSwitchTo(old);
}

/*
 * Invalidate every entry of scope (database and catalog table, whatever the
 * trigger version); caller holds the lock exclusively.
 */
static void
invalidate_scope(const MirrorScope *scope)
{
	HASH_SEQ_STATUS status;
	MirrorEntry *e;

	hash_seq_init(&status, l1_index);
	while ((e = hash_seq_search(&status)) != NULL)
	{
		if (e->key.scope.dboid != scope->dboid || e->key.scope.relid != scope->relid)
			continue;
		if (e->valid)
			l1->entries--;
		e->valid = false;
		if (e->changing == 0)
			remove_entry(e);
	}
}

/* ---------------------------------------------------------------- redo */

/* Replay of a change noted on the primary: the entry goes. */
void
MirrorRedoChange(const MirrorScope *scope, const char *names)
{
	MirrorKey	key;
	MirrorEntry *e;

	if (l1 == NULL)
		return;
	memset(&key, 0, sizeof(key));
	key.scope = *scope;
	strlcpy(key.names, names, sizeof(key.names));
	LWLockAcquire(&l1->lock, LW_EXCLUSIVE);
	e = hash_search(l1_index, &key, HASH_FIND, NULL);
	if (e)
	{
		if (e->valid)
			l1->entries--;
		e->valid = false;
		if (e->changing == 0)
			remove_entry(e);
	}
	pg_atomic_fetch_add_u64(&l1->epoch, 1);
	LWLockRelease(&l1->lock);
}

/* Replay of a TRUNCATE by xid: the table's entries go, and xid is remembered. */
void
MirrorRedoTruncate(const MirrorScope *scope, TransactionId xid)
{
	if (l1 == NULL)
		return;
	LWLockAcquire(&l1->lock, LW_EXCLUSIVE);
	invalidate_scope(scope);
	if (l1->nstandby_truncates < MIRROR_STANDBY_TRUNCATES)
		l1->standby_truncates[l1->nstandby_truncates++] = xid;
	else
		l1->standby_off = true;
	pg_atomic_fetch_add_u64(&l1->epoch, 1);
	LWLockRelease(&l1->lock);
}

/*
 * During recovery: may a reader with snapshot snap not use the mirror?  Yes
 * while a replayed TRUNCATE is running for it (its rows were no xmax), or
 * after too many TRUNCATEs to remember.  Caller holds the lock.
 */
static bool
standby_refuses(Snapshot snap)
{
	int			i;

	if (l1->nstandby_truncates == 0 && !l1->standby_off)
		return false;
	if (!RecoveryInProgress())
		return false;
	if (l1->standby_off)
		return true;
	for (i = 0; i < l1->nstandby_truncates; i++)
		if (XidInMVCCSnapshot(l1->standby_truncates[i], snap))
			return true;
	return false;
}

void
MirrorStats(int64 *hits, int64 *misses, int64 *entries)
{
	*hits = *misses = *entries = 0;
	if (l1 == NULL)
		return;
	*hits = pg_atomic_read_u64(&l1->hits);
	*misses = pg_atomic_read_u64(&l1->misses);
	LWLockAcquire(&l1->lock, LW_SHARED);
	*entries = l1->entries;
	LWLockRelease(&l1->lock);
}

/* ---------------------------------------------------------------- callbacks */

static void
mirror_xact_callback(XactEvent event, void *arg)
{
	if (pending == NIL)
		return;
	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
			end_pending(true, false);
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
			end_pending(false, false);
			break;
		case XACT_EVENT_PREPARE:
			end_pending(false, true);
			break;
		default:
			break;
	}
}

static void
mirror_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
						SubTransactionId parentSubid, void *arg)
{
	ListCell   *lc;
	int			level = GetCurrentTransactionNestLevel();

	if (pending == NIL)
		return;
	foreach(lc, pending)
	{
		MirrorPending *p = lfirst(lc);

		if (p->nest_level < level)
			continue;
		if (event == SUBXACT_EVENT_ABORT_SUB)
			p->aborted = true;
		else if (event == SUBXACT_EVENT_COMMIT_SUB)
			p->nest_level = level - 1;
	}
}

/*
 * Apply (commit) or drop (abort) this transaction's pending changes; with
 * drop_entries (PREPARE), remove the entries so the heap answers until the
 * prepared transaction is resolved.
 */
static void
end_pending(bool commit, bool drop_entries)
{
	ListCell   *lc;

	LWLockAcquire(&l1->lock, LW_EXCLUSIVE);
	foreach(lc, pending)
	{
		MirrorPending *p = lfirst(lc);
		MirrorEntry *e;

		if (p->global)
		{
			l1->global_changing--;
			if (p->truncate && commit && !p->aborted)
				invalidate_scope(&p->key.scope);
			continue;
		}
		e = hash_search(l1_index, &p->key, HASH_FIND, NULL);
		if (e == NULL)
			continue;
		e->changing--;
		if (commit && !p->aborted && p->order > e->order)
		{
			if (p->removed)
			{
				if (e->valid)
					l1->entries--;
				e->valid = false;
			}
			else
			{
				if (!e->valid)
					l1->entries++;
				set_values(e, p->location, p->previous, p->is_view);
				e->xmin = p->xid;
			}
			e->order = p->order;
		}
		if (drop_entries && e->valid)
		{
			e->valid = false;
			l1->entries--;
		}
		if (!e->valid && e->changing == 0)
			remove_entry(e);
	}
	pg_atomic_fetch_add_u64(&l1->epoch, 1);
	LWLockRelease(&l1->lock);
	pending = NIL;				/* the list lives in TopTransactionContext */
}

/* ---------------------------------------------------------------- helpers */

/* Build the key; false if a part is too long or holds the separator. */
static bool
make_key(MirrorKey *key, const MirrorScope *scope, const char *catalog,
		 const char *ns, const char *name)
{
	size_t		lc = strlen(catalog),
				ln = strlen(ns),
				lt = strlen(name);

	if (lc > SKADE_MAX_NAME_LEN || ln > SKADE_MAX_NAME_LEN || lt > SKADE_MAX_NAME_LEN ||
		memchr(catalog, MIRROR_SEP, lc) || memchr(ns, MIRROR_SEP, ln) ||
		memchr(name, MIRROR_SEP, lt))
		return false;
	memset(key, 0, sizeof(MirrorKey));
	key->scope = *scope;
	memcpy(key->names, catalog, lc);
	key->names[lc] = MIRROR_SEP;
	memcpy(key->names + lc + 1, ns, ln);
	key->names[lc + 1 + ln] = MIRROR_SEP;
	memcpy(key->names + lc + 2 + ln, name, lt);
	return true;
}

/* dynahash: the scope's bytes and the names string (not the zero padding) */
static uint32
key_hash(const void *key, Size keysize)
{
	const MirrorKey *k = key;

	return hash_combine(hash_bytes((const unsigned char *) &k->scope, sizeof(MirrorScope)),
						hash_bytes((const unsigned char *) k->names, strlen(k->names)));
}

static int
key_match(const void *a, const void *b, Size keysize)
{
	const MirrorKey *ka = a;
	const MirrorKey *kb = b;

	if (memcmp(&ka->scope, &kb->scope, sizeof(MirrorScope)) != 0)
		return 1;
	return strcmp(ka->names, kb->names);
}

/* Does this backend's transaction have a pending change to key? */
static bool
own_pending(const MirrorKey *key)
{
	ListCell   *lc;

	foreach(lc, pending)
	{
		MirrorPending *p = lfirst(lc);

		if (p->global || key_match(&p->key, key, sizeof(MirrorKey)) == 0)
			return true;
	}
	return false;
}

/*
 * Find or create the entry for key, evicting an idle entry if the table is
 * full; NULL if nothing can be evicted.  Caller holds the lock exclusively.
 */
static MirrorEntry *
enter_entry(const MirrorKey *key)
{
	MirrorEntry *e;
	bool		found;

	e = hash_search(l1_index, key, HASH_FIND, NULL);
	if (e)
		return e;
	if (l1->slots >= (uint64) skade_pointer_cache_entries && !evict_one())
		return NULL;
	e = hash_search(l1_index, key, HASH_ENTER_NULL, &found);
	if (e == NULL)
		return NULL;
	Assert(l1->nfree > 0);
	l1->slots++;
	e->slot = l1->free_slots[--l1->nfree];
	l1->ring[e->slot] = e;
	pg_atomic_init_u32(&e->referenced, 1);
	e->changing = 0;
	e->valid = false;
	e->order = 0;
	e->xmin = InvalidTransactionId;
	return e;
}

/*
 * Remove an entry no writer is changing, by the clock: the hand passes
 * over entries hit since it last passed (clearing the mark: a second
 * chance) and takes the first unmarked one -- amortised O(1), never more
 * than two turns; false if every entry is being changed.  Caller holds the
 * lock exclusively.
 */
static bool
evict_one(void)
{
	uint32		steps;

	for (steps = 0; steps < 2 * l1->nslots; steps++)
	{
		MirrorEntry *e = l1->ring[l1->hand];

		l1->hand = (l1->hand + 1) % l1->nslots;
		if (e == NULL || e->changing > 0)
			continue;
		if (pg_atomic_read_u32(&e->referenced) != 0)
		{
			pg_atomic_write_u32(&e->referenced, 0);
			continue;
		}
		if (e->valid)
			l1->entries--;
		l1->evictions++;
		remove_entry(e);
		return true;
	}
	return false;
}

/* Drop e from the table; caller holds the lock exclusively. */
static void
remove_entry(MirrorEntry *e)
{
	MirrorKey	key = e->key;

	l1->ring[e->slot] = NULL;
	l1->free_slots[l1->nfree++] = e->slot;
	hash_search(l1_index, &key, HASH_REMOVE, NULL);
	l1->slots--;
}

static void
set_values(MirrorEntry *e, const char *location, const char *previous, bool is_view)
{
	e->valid = true;
	e->is_view = is_view;
	e->location_null = location == NULL;
	e->previous_null = previous == NULL;
	if (location)
		strlcpy(e->location, location, sizeof(e->location));
	if (previous)
		strlcpy(e->previous, previous, sizeof(e->previous));
}
