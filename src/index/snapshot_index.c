/*-------------------------------------------------------------------------
 *
 * snapshot_index.c
 *	  The STree64 snapshot index: shared state, publication of immutable
 *	  generations in DSM, the "dirty since the build" sets, and routing of
 *	  lookups between the tree and the heap (skade.snapshot_map).
 *
 * Invariant: a lookup is answered from the tree only where the tree's
 * answer equals the heap's answer for the caller's snapshot.
 *   - The index worker builds a generation from snapshot_map under one MVCC
 *     snapshot B and publishes it with B's xmax.  A reader uses it only if
 *     its own snapshot's xmin >= that xmax: then every transaction that B
 *     saw as committed is committed for the reader too.  Older snapshots
 *     (e.g. long REPEATABLE READ transactions) use the heap.
 *   - Every change to snapshot_map marks, before its writer commits, the
 *     snapshot ids it adds and the tables it moves or drops as dirty
 *     (TRUNCATE: everything).  A dirty id, or a tree answer naming a dirty
 *     table, goes to the heap.  So newer commits come from a live tail on
 *     the heap, and entries removed since the build are never served.  At
 *     publication, dirty marks whose writers B saw as finished are dropped
 *     (their effects are in the tree); the others stay.  A mark made by
 *     several writers is dropped only once B's xmin is past the newest of
 *     them, since transactions do not commit in xid order.  If a dirty set
 *     overflows, everything is dirty until a build's xmin is past the
 *     newest overflowing writer.
 *   - The dirty marks are those of the current generation: a lookup checks,
 *     under the lock, that the generation it mapped is still current, and
 *     otherwise uses the heap (a newer publication has dropped marks that
 *     the older tree still needed).
 *   - A transaction that changed snapshot_map itself uses the heap.
 *   - An id the tree does not have and that is not dirty is unknown.
 *   - A generation describes one skade.snapshot_map: that of the worker's
 *     database (skade.database), identified by its relation (so a dropped
 *     and re-created extension does not inherit the old tree).  Readers of
 *     another database or another snapshot_map, on a hot standby (replay
 *     marks nothing dirty; the worker runs only once recovery is over), or
 *     with skade.index_enabled = off, use the heap.  Writers in other
 *     databases mark nothing (their changes are not the tree's).
 *   - The dirty sets are fixed-size shared tables (HASH_FIXED_SIZE): when
 *     one is full, everything is dirty (see above); never more memory.
 *
 * Publication (a DSM handle and a generation): the worker
 * builds a segment, pins it, swaps (handle, gen) under the index LWLock,
 * then unpins the previous one, which disappears when its last reader
 * detaches.  Backends attach lazily under the shared lock (so the handle
 * cannot be unpinned meanwhile), validate magic and generation, keep the
 * mapping while it is current, detach the previous generation when they
 * switch, and at the end of a transaction detach a generation that is no
 * longer current (an idle session holds at most the current one, which the
 * worker keeps anyway); no pointer into a generation outlives one SQL call.  A handle
 * being built is recorded so that a worker killed mid-build frees it on
 * restart (at most one attempt, never an error loop).
 *
 * Locking: one LWLock (tranche "skade_index") for the published state and
 * the dirty sets; writers take it exclusive briefly to mark, readers shared
 * for one batch of checks.  Counters are atomics.
 *
 * IDENTIFICATION
 *	  src/index/snapshot_index.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "access/transam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "commands/dbcommands.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "pgstat.h"
#include "storage/condition_variable.h"
#include "storage/dsm.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "util/guc.h"
#include "util/safe_sql.h"
#include "util/shmem.h"
#include "index/snapshot_index.h"
#include "index/stree64.h"

#define INDEX_MAGIC			0x534b5449	/* "SKTI" */
#define DIRTY_IDS_MAX		65536
#define DIRTY_TABLES_MAX	4096
#define CHUNK				256	/* ids checked per lock hold, prefetched together */
#define SKADE_ABSENT_BACKOFF_MAX_S	60

typedef struct IndexShared
{
	LWLock		lock;
	int			tranche_id;
	/* the published generation */
	dsm_handle	handle;
	uint64		gen;
	pg_atomic_uint64 gen_hint;
	Oid			dboid;			/* database it describes */
	Oid			worker_dboid;	/* the worker's database (InvalidOid: not yet known) */
	TransactionId build_xmax;	/* readers need snapshot xmin >= this */
	uint64		entries;
	uint64		bytes;
	double		build_ms;
	TimestampTz built_at;
	dsm_handle	building;		/* being built (freed by a restarted worker) */
	/* rebuild triggers and statistics */
	pg_atomic_uint64 commits_since;
	pg_atomic_uint64 misses_since;
	pg_atomic_uint64 tree_answers;
	pg_atomic_uint64 heap_answers;
	uint64		requested;		/* skade.rebuild_index() calls (under lock) */
	uint64		done;
	ConditionVariable rebuilt;
	Latch	   *worker_latch;
	int			worker_pid;
	/* dirty since the build */
	bool		all_dirty;
	TransactionId all_dirty_xid;
	int64		ndirty_ids;
	int64		ndirty_tables;
} IndexShared;

typedef struct DirtyEntry
{
	uint64		key;
	TransactionId xid_min;		/* oldest and newest writer that marked it */
	TransactionId xid_max;
} DirtyEntry;

/* the published segment */
typedef struct IndexSegment
{
	uint32		magic;
	uint32		pad;
	uint64		gen;
	uint64		n;
	uint64		ntables;
	uint64		tree_off;
	uint64		payload_off;
	uint64		tables_off;
	uint64		strings_off;
	uint64		total;
	Oid			map_relid;		/* the skade.snapshot_map it was built from */
} IndexSegment;

typedef struct IndexPayload
{
	uint32		table;
	uint32		location;		/* string offset */
} IndexPayload;

typedef struct IndexTable
{
	uint64		hash;
	uint32		catalog;
	uint32		ns;
	uint32		name;
	uint32		pad;
} IndexTable;

#define SEG_AT(seg, off)	(((char *) (seg)) + (off))

/* ---- Local variables ---- */

static IndexShared *ix = NULL;
static HTAB *dirty_ids = NULL;
static HTAB *dirty_tables = NULL;

static dsm_segment *my_seg = NULL;	/* this backend's mapping */
static uint64 my_gen = 0;
static TransactionId my_xmax = InvalidTransactionId;
static Oid	my_db = InvalidOid;
static Oid	my_map_relid = InvalidOid;
static bool own_changes = false;	/* this transaction changed snapshot_map */

/* the worker: when to look for the extension again after finding it absent */
static TimestampTz absent_retry_at = 0;
static int	absent_backoff_s = 0;

static uint64 table_hash(const char *catalog, const char *ns, const char *name);
static void note_dirty(HTAB *set, uint64 key);
static bool dirty_covered_by(const DirtyEntry *e, Snapshot snap);
static IndexSegment *index_attach(void);
static void index_xact_callback(XactEvent event, void *arg);
static Oid	snapshot_map_relid(void);
static void worker_detach(int code, Datum arg);
static void locality_order(const uint64 *pos, int n, uint64 npos, int *order);
static void tree_answer(IndexSegment *seg, const int64 *ids, const bool *nulls, int n,
						const char *catalog, const char *ns, const char *name,
						bool raw_locations, SnapshotHit *hits, bool *need_heap);

/* ---------------------------------------------------------------- setup */

Size
IndexShmemSize(void)
{
	Size		size = MAXALIGN(sizeof(IndexShared));

	size = add_size(size, hash_estimate_size(DIRTY_IDS_MAX, sizeof(DirtyEntry)));
	size = add_size(size, hash_estimate_size(DIRTY_TABLES_MAX, sizeof(DirtyEntry)));
	return size;
}

/* shmem startup hook; the caller holds AddinShmemInitLock */
void
IndexShmemInit(void)
{
	bool		found;
	HASHCTL		info;

	ix = ShmemInitStruct("skade index", MAXALIGN(sizeof(IndexShared)), &found);
	if (!found)
	{
		memset(ix, 0, sizeof(IndexShared));
		ix->tranche_id = LWLockNewTrancheId();
		LWLockInitialize(&ix->lock, ix->tranche_id);
		ix->handle = DSM_HANDLE_INVALID;
		ix->building = DSM_HANDLE_INVALID;
		pg_atomic_init_u64(&ix->gen_hint, 0);
		pg_atomic_init_u64(&ix->commits_since, 0);
		pg_atomic_init_u64(&ix->misses_since, 0);
		pg_atomic_init_u64(&ix->tree_answers, 0);
		pg_atomic_init_u64(&ix->heap_answers, 0);
		ConditionVariableInit(&ix->rebuilt);
	}
	LWLockRegisterTranche(ix->tranche_id, "skade_index");
	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(uint64);
	info.entrysize = sizeof(DirtyEntry);
	dirty_ids = ShmemInitHash("skade index dirty ids", DIRTY_IDS_MAX, DIRTY_IDS_MAX,
							  &info, HASH_ELEM | HASH_BLOBS | HASH_FIXED_SIZE);
	dirty_tables = ShmemInitHash("skade index dirty tables", DIRTY_TABLES_MAX,
								 DIRTY_TABLES_MAX, &info,
								 HASH_ELEM | HASH_BLOBS | HASH_FIXED_SIZE);
}

/* _PG_init: forget own changes at the end of each transaction */
void
IndexInit(void)
{
	RegisterXactCallback(index_xact_callback, NULL);
}

/*
 * IndexSubscribe
 *		Be told of every change of the snapshot map (in every process that
 *		loads skade: a backend whose changes are its own reads them from the
 *		heap, preloaded or not).
 */
void
IndexSubscribe(void)
{
	static const SnapshotMapListener l = {IndexNoteSnapshots, IndexNoteTable, IndexNoteEverything};

	SnapshotMapListen(&l);
}

static void
index_xact_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PREPARE || event == XACT_EVENT_PARALLEL_COMMIT ||
		event == XACT_EVENT_PARALLEL_ABORT)
	{
		own_changes = false;
		/* no pointer into it is live now: let a superseded generation go */
		if (my_seg != NULL && ix != NULL && pg_atomic_read_u64(&ix->gen_hint) != my_gen)
		{
			dsm_detach(my_seg);
			my_seg = NULL;
			my_gen = 0;
		}
	}
}

/* the relation of skade.snapshot_map in this database (InvalidOid: none) */
static Oid
snapshot_map_relid(void)
{
	Oid			nsp = get_namespace_oid("skade", true);

	return OidIsValid(nsp) ? get_relname_relid("snapshot_map", nsp) : InvalidOid;
}

/* Should this backend's writes mark the index dirty?  Caller holds the lock. */
static bool
marks_needed(void)
{
	return !OidIsValid(ix->worker_dboid) || ix->worker_dboid == MyDatabaseId;
}

/* ---------------------------------------------------------------- write side */

static uint64
table_hash(const char *catalog, const char *ns, const char *name)
{
	StringInfoData key;
	uint64		h;

	initStringInfo(&key);
	appendStringInfo(&key, "%s%c%s%c%s", catalog, '\x1f', ns, '\x1f', name);
	h = hash_bytes_extended((const unsigned char *) key.data, key.len, 0x5ade);
	pfree(key.data);
	return h;
}

/* Mark key dirty for the current transaction; caller holds the lock. */
static void
note_dirty(HTAB *set, uint64 key)
{
	TransactionId xid = GetTopTransactionId();
	bool		found;
	DirtyEntry *e = hash_search(set, &key, HASH_ENTER_NULL, &found);

	if (e == NULL)
	{
		if (!ix->all_dirty || TransactionIdFollows(xid, ix->all_dirty_xid))
			ix->all_dirty_xid = xid;
		ix->all_dirty = true;
		return;
	}
	if (!found)
	{
		e->xid_min = e->xid_max = xid;
		if (set == dirty_ids)
			ix->ndirty_ids++;
		else
			ix->ndirty_tables++;
	}
	else
	{
		if (TransactionIdPrecedes(xid, e->xid_min))
			e->xid_min = xid;
		if (TransactionIdFollows(xid, e->xid_max))
			e->xid_max = xid;
	}
}

/*
 * Did every writer that marked e finish before snapshot "snap" (so that the
 * tree built on snap includes all their effects)?  Exact for one writer;
 * with several, all xids up to the newest must be finished (xids do not
 * commit in order, so an older marker may still be running).
 */
static bool
dirty_covered_by(const DirtyEntry *e, Snapshot snap)
{
	if (TransactionIdEquals(e->xid_min, e->xid_max))
		return !XidInMVCCSnapshot(e->xid_max, snap);
	return TransactionIdPrecedes(e->xid_max, snap->xmin);
}

/* New rows for these snapshot ids are about to be committed. */
void
IndexNoteSnapshots(Datum *ids, int n)
{
	int			i;

	own_changes = true;
	if (ix == NULL)
		return;
	LWLockAcquire(&ix->lock, LW_EXCLUSIVE);
	if (marks_needed())
	{
		pg_atomic_fetch_add_u64(&ix->commits_since, 1);
		for (i = 0; i < n; i++)
		{
			uint64		key = (uint64) DatumGetInt64(ids[i]);

			note_dirty(dirty_ids, key);
		}
	}
	LWLockRelease(&ix->lock);
}

/* This table is about to be moved or dropped. */
void
IndexNoteTable(Datum catalog, Datum ns, Datum name)
{
	uint64		key;

	own_changes = true;
	if (ix == NULL)
		return;
	key = table_hash(TextDatumGetCString(catalog), TextDatumGetCString(ns),
					 TextDatumGetCString(name));
	LWLockAcquire(&ix->lock, LW_EXCLUSIVE);
	if (marks_needed())
	{
		pg_atomic_fetch_add_u64(&ix->commits_since, 1);
		note_dirty(dirty_tables, key);
	}
	LWLockRelease(&ix->lock);
}

/* Everything is about to change (TRUNCATE). */
void
IndexNoteEverything(void)
{
	TransactionId xid = GetTopTransactionId();

	own_changes = true;
	if (ix == NULL)
		return;
	LWLockAcquire(&ix->lock, LW_EXCLUSIVE);
	if (marks_needed())
	{
		pg_atomic_fetch_add_u64(&ix->commits_since, 1);
		if (!ix->all_dirty || TransactionIdFollows(xid, ix->all_dirty_xid))
			ix->all_dirty_xid = xid;
		ix->all_dirty = true;
	}
	LWLockRelease(&ix->lock);
}

/* ---------------------------------------------------------------- read side */

/*
 * Map the current generation (if any); NULL if there is none or it is not
 * usable by this backend.  No pointer into the previous generation may be
 * live: callers copy everything out (raw locations, see SnapshotHit, before
 * their next IndexResolve).
 */
static IndexSegment *
index_attach(void)
{
	uint64		hint = pg_atomic_read_u64(&ix->gen_hint);
	dsm_handle	h;
	uint64		g;
	TransactionId xmax;
	Oid			db;
	dsm_segment *seg;
	IndexSegment *hdr;

	if (hint == 0)
		return NULL;
	if (my_seg != NULL && my_gen == hint)
		return (IndexSegment *) dsm_segment_address(my_seg);

	LWLockAcquire(&ix->lock, LW_SHARED);
	h = ix->handle;
	g = ix->gen;
	xmax = ix->build_xmax;
	db = ix->dboid;
	seg = NULL;
	if (h != DSM_HANDLE_INVALID)
	{
		seg = dsm_find_mapping(h);
		if (seg == NULL)
			seg = dsm_attach(h);
	}
	LWLockRelease(&ix->lock);
	if (seg == NULL)
		return NULL;
	hdr = (IndexSegment *) dsm_segment_address(seg);
	if (hdr->magic != INDEX_MAGIC || hdr->gen != g)
	{
		if (seg != my_seg)
			dsm_detach(seg);
		return NULL;
	}
	dsm_pin_mapping(seg);
	if (my_seg != NULL && my_seg != seg)
		dsm_detach(my_seg);
	my_seg = seg;
	my_gen = g;
	my_xmax = xmax;
	my_db = db;
	my_map_relid = hdr->map_relid;
	return hdr;
}

/*
 * The order to visit ids[0..n) in: by their position in the tree (a
 * counting sort on the position's high bits, about 256 entries a bucket),
 * so that the keys, the payload and the strings are read front to back
 * rather than at random; a few ids are visited as given.
 */
static void
locality_order(const uint64 *pos, int n, uint64 npos, int *order)
{
	const int	nbuckets = 4096;
	int		   *start;
	int			shift = 0;
	int			i;

	if (n < 256)
	{
		for (i = 0; i < n; i++)
			order[i] = i;
		return;
	}
	while ((npos >> shift) >= (uint64) nbuckets)
		shift++;
	start = palloc0(sizeof(int) * (nbuckets + 1));
	for (i = 0; i < n; i++)
		start[(pos[i] >> shift) + 1]++;
	for (i = 1; i <= nbuckets; i++)
		start[i] += start[i - 1];
	for (i = 0; i < n; i++)
		order[start[pos[i] >> shift]++] = i;
	pfree(start);
}

/*
 * Answer ids[0..n) from the mapped generation seg where the tree answers as
 * the heap would; mark need_heap[k] for the others (dirty, stale, or
 * another table than asked for).  Texts are copied out of the segment,
 * except locations when raw_locations (see SnapshotHit).
 */
static void
tree_answer(IndexSegment *seg, const int64 *ids, const bool *nulls, int n,
			const char *catalog, const char *ns, const char *name,
			bool raw_locations, SnapshotHit *hits, bool *need_heap)
{
	const STree64 *tree = (const STree64 *) SEG_AT(seg, seg->tree_off);
	const int64 *keys = STree64Keys(tree);
	const IndexPayload *payload = (const IndexPayload *) SEG_AT(seg, seg->payload_off);
	const IndexTable *tables = (const IndexTable *) SEG_AT(seg, seg->tables_off);
	const char *strings = SEG_AT(seg, seg->strings_off);
	uint64		want_table = catalog ? table_hash(catalog, ns, name) : 0;
	uint64	   *pos = palloc(sizeof(uint64) * (n + 1));
	int		   *order = palloc(sizeof(int) * (n + 1));
	bool		stale = false;
	bool		any_dirty_ids;
	bool		any_dirty_tables;
	int			base;
	/* text datums of the tables answered so far, made once each */
	Datum	   *tdatums = palloc0(sizeof(Datum) * 3 * (seg->ntables + 1));

	/*
	 * Search in slices, checking each hit while its key is still cached;
	 * an id the tree does not hold gets position seg->n (unknown).
	 */
	for (base = 0; base < n; base += CHUNK)
	{
		int			cnt = Min(n - base, CHUNK);
		int			q;

		STree64LowerBoundBatch(tree, ids + base, pos + base, cnt);
		for (q = base; q < base + cnt; q++)
			if (pos[q] < seg->n && keys[pos[q]] != ids[q])
				pos[q] = seg->n;
	}
	locality_order(pos, n, seg->n, order);
	for (base = 0; base < n; base += CHUNK)
	{
		int			cnt = Min(n - base, CHUNK);
		int			q;

		/* keys, payload and strings are scattered reads: prefetch them */
		for (q = 0; q < cnt; q++)
			if (pos[order[base + q]] < seg->n)
				__builtin_prefetch(&payload[pos[order[base + q]]]);
		for (q = 0; q < cnt && !raw_locations; q++)
			if (pos[order[base + q]] < seg->n)
				__builtin_prefetch(strings + payload[pos[order[base + q]]].location);
		LWLockAcquire(&ix->lock, LW_SHARED);
		any_dirty_ids = ix->ndirty_ids > 0;
		any_dirty_tables = ix->ndirty_tables > 0;
		/*
		 * The dirty marks describe the current generation only: a newer one
		 * has dropped the marks that ours still needed.
		 */
		stale = stale || ix->gen != my_gen;
		for (q = 0; q < cnt; q++)
		{
			int			k = order[base + q];
			uint64		p = pos[k];
			const IndexTable *tb;

			if (nulls && nulls[k])
				continue;
			if (stale || ix->all_dirty ||
				(any_dirty_ids && hash_search(dirty_ids, &ids[k], HASH_FIND, NULL) != NULL))
			{
				need_heap[k] = true;
				continue;
			}
			if (p >= seg->n)
				continue;		/* unknown */
			tb = &tables[payload[p].table];
			if ((any_dirty_tables && hash_search(dirty_tables, &tb->hash, HASH_FIND, NULL) != NULL) ||
				(catalog && (tb->hash != want_table ||
							 strcmp(strings + tb->catalog, catalog) != 0 ||
							 strcmp(strings + tb->ns, ns) != 0 ||
							 strcmp(strings + tb->name, name) != 0)))
			{
				/* changed since the build, or another table than asked for */
				need_heap[k] = true;
				continue;
			}
			if (tdatums[3 * payload[p].table] == (Datum) 0)
			{
				tdatums[3 * payload[p].table] = CStringGetTextDatum(strings + tb->catalog);
				tdatums[3 * payload[p].table + 1] = CStringGetTextDatum(strings + tb->ns);
				tdatums[3 * payload[p].table + 2] = CStringGetTextDatum(strings + tb->name);
			}
			hits[k].found = true;
			hits[k].catalog = tdatums[3 * payload[p].table];
			hits[k].ns = tdatums[3 * payload[p].table + 1];
			hits[k].name = tdatums[3 * payload[p].table + 2];
			if (raw_locations)
				hits[k].raw_location = strings + payload[p].location;
			else
				hits[k].location = CStringGetTextDatum(strings + payload[p].location);
		}
		LWLockRelease(&ix->lock);
	}
	pfree(pos);
	pfree(order);
}

/*
 * IndexResolve
 *		Resolve ids[0..n) (restricted to one table when catalog is given),
 *		from the tree where it answers as the heap would, else from the heap.
 */
void
IndexResolve(const int64 *ids, const bool *nulls, int n,
			 const char *catalog, const char *ns, const char *name,
			 bool raw_locations, SnapshotHit *hits)
{
	IndexSegment *seg = NULL;
	bool	   *need_heap = palloc(sizeof(bool) * (n + 1));
	int64		nheap = 0;
	int64		ntree = 0;
	int			i;

	memset(hits, 0, sizeof(SnapshotHit) * n);
	if (ix != NULL && skade_index_enabled && !own_changes && ActiveSnapshotSet() &&
		!RecoveryInProgress())
	{
		seg = index_attach();
		if (seg && (my_db != MyDatabaseId ||
					TransactionIdPrecedes(GetActiveSnapshot()->xmin, my_xmax) ||
					my_map_relid != snapshot_map_relid()))
			seg = NULL;
	}

	for (i = 0; i < n; i++)
		need_heap[i] = !(nulls && nulls[i]) && seg == NULL;

	if (seg != NULL)
		tree_answer(seg, ids, nulls, n, catalog, ns, name, raw_locations, hits, need_heap);

	/* the heap, for everything the tree could not answer */
	for (i = 0; i < n; i++)
		nheap += need_heap[i];
	if (nheap > 0)
	{
		int64	   *sub = palloc(sizeof(int64) * nheap);
		SnapshotHit *subhits = palloc(sizeof(SnapshotHit) * nheap);
		int			m = 0;

		for (i = 0; i < n; i++)
			if (need_heap[i])
				sub[m++] = ids[i];
		SnapshotMapResolveHeap(sub, NULL, m, catalog, ns, name, subhits);
		m = 0;
		for (i = 0; i < n; i++)
			if (need_heap[i])
			{
				hits[i] = subhits[m++];
				hits[i].raw_location = NULL;
			}
		pfree(sub);
		pfree(subhits);
	}
	if (ix != NULL)
	{
		ntree = (seg != NULL) ? n - nheap : 0;
		pg_atomic_fetch_add_u64(&ix->tree_answers, ntree);
		pg_atomic_fetch_add_u64(&ix->heap_answers, nheap);
		if (seg != NULL && nheap > 0)
			pg_atomic_fetch_add_u64(&ix->misses_since, nheap);
	}
	pfree(need_heap);
}

/* ---------------------------------------------------------------- the worker */

/* The index worker announces itself (and frees a segment a predecessor left). */
void
IndexWorkerAttach(Latch *latch)
{
	dsm_handle	leftover;

	LWLockAcquire(&ix->lock, LW_EXCLUSIVE);
	ix->worker_latch = latch;
	ix->worker_pid = MyProcPid;
	ix->worker_dboid = MyDatabaseId;
	leftover = ix->building;
	ix->building = DSM_HANDLE_INVALID;	/* one attempt only: never an error loop */
	LWLockRelease(&ix->lock);
	ConditionVariableBroadcast(&ix->rebuilt);
	on_shmem_exit(worker_detach, (Datum) 0);
	if (leftover != DSM_HANDLE_INVALID)
		dsm_unpin_segment(leftover);
}

static void
worker_detach(int code, Datum arg)
{
	LWLockAcquire(&ix->lock, LW_EXCLUSIVE);
	if (ix->worker_pid == MyProcPid)
	{
		ix->worker_latch = NULL;
		ix->worker_pid = 0;
	}
	LWLockRelease(&ix->lock);
	ConditionVariableBroadcast(&ix->rebuilt);
}

/* Is a rebuild due: asked for, never built, or a trigger setting reached? */
bool
IndexRebuildDue(void)
{
	bool		requested;
	uint64		gen;
	TimestampTz built_at;
	TimestampTz now = GetCurrentTimestamp();
	uint64		commits = pg_atomic_read_u64(&ix->commits_since);
	uint64		misses = pg_atomic_read_u64(&ix->misses_since);

	LWLockAcquire(&ix->lock, LW_SHARED);
	requested = ix->requested > ix->done;
	gen = ix->gen;
	built_at = ix->built_at;
	LWLockRelease(&ix->lock);

	if (requested)
		return true;
	/* the extension was absent: look again only after the back-off */
	if (now < absent_retry_at)
		return false;
	if (gen == 0 || ix->dboid != MyDatabaseId)
		return true;
	if (skade_index_rebuild_commits > 0 && commits >= (uint64) skade_index_rebuild_commits)
		return true;
	if (skade_index_rebuild_misses > 0 && misses >= (uint64) skade_index_rebuild_misses)
		return true;
	return commits > 0 && skade_index_rebuild_interval > 0 &&
		TimestampDifferenceExceeds(built_at, now, skade_index_rebuild_interval * 1000);
}

typedef struct BuildTableEntry
{
	char		key[3 * 256 + 3];
	uint32		index;
} BuildTableEntry;

/* a generation being built, in the worker's build context */
typedef struct IndexBuild
{
	int64	   *keys;
	IndexPayload *payload;
	uint64		n;
	uint64		cap;
	IndexTable *tables;
	uint64		ntables;
	uint64		tcap;
	StringInfoData strings;
	HTAB	   *tindex;			/* "catalog\x1fns\x1fname" -> tables[] index */
} IndexBuild;

static void build_scan(IndexBuild *b, MemoryContext cxt);
static void build_add(IndexBuild *b, int64 id, const char *cat, const char *nsp,
					  const char *nam, const char *loc);
static dsm_segment *build_layout(IndexBuild *b);
static void build_publish(dsm_segment *seg, Snapshot snap, instr_time start,
						  uint64 req_at_start, uint64 commits_at_start,
						  uint64 misses_at_start);
static void build_answer_waiters(uint64 req_at_start);

/*
 * IndexRebuild
 *		Build a new generation from skade.snapshot_map and publish it.  Runs
 *		in the index worker, in its own transaction, under the search_path
 *		the worker pinned at start (safe_sql.c).  When the extension is not
 *		installed in its database, it answers waiting callers and backs off
 *		(1 s, doubling to SKADE_ABSENT_BACKOFF_MAX_S) instead of looking
 *		every second.
 */
void
IndexRebuild(void)
{
	MemoryContext cxt;
	MemoryContext old;
	instr_time	start;
	Snapshot	snap;
	uint64		req_at_start;
	uint64		commits_at_start;
	uint64		misses_at_start;
	IndexBuild	b;
	dsm_segment *seg;

	INSTR_TIME_SET_CURRENT(start);
	LWLockAcquire(&ix->lock, LW_SHARED);
	req_at_start = ix->requested;
	LWLockRelease(&ix->lock);
	commits_at_start = pg_atomic_read_u64(&ix->commits_since);
	misses_at_start = pg_atomic_read_u64(&ix->misses_since);

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	/* a catalog lookup, not SQL: nothing a database owner set can redirect it */
	if (!OidIsValid(get_extension_oid("skade", true)))
	{
		CommitTransactionCommand();
		ereport(absent_backoff_s == 0 ? LOG : DEBUG1,
				(errmsg("skade index worker: extension \"skade\" is not installed in database \"%s\"",
						skade_database),
				 errdetail("Looking again in %d s.",
						   Min(Max(absent_backoff_s * 2, 1), SKADE_ABSENT_BACKOFF_MAX_S))));
		absent_backoff_s = Min(Max(absent_backoff_s * 2, 1), SKADE_ABSENT_BACKOFF_MAX_S);
		absent_retry_at = TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
													  absent_backoff_s * 1000);
		build_answer_waiters(req_at_start);
		return;
	}
	absent_backoff_s = 0;
	absent_retry_at = 0;

	SPI_connect();
	PushActiveSnapshot(GetTransactionSnapshot());
	snap = GetActiveSnapshot();
	pgstat_report_activity(STATE_RUNNING, "skade: building the snapshot index");

	cxt = AllocSetContextCreate(TopTransactionContext, "skade index build",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(cxt);
	build_scan(&b, cxt);
	seg = build_layout(&b);
	((IndexSegment *) dsm_segment_address(seg))->map_relid = snapshot_map_relid();
	build_publish(seg, snap, start, req_at_start, commits_at_start, misses_at_start);
	MemoryContextSwitchTo(old);

	SPI_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
	pgstat_report_activity(STATE_IDLE, NULL);
}

/* No generation this time: wake the callers of skade.rebuild_index(). */
static void
build_answer_waiters(uint64 req_at_start)
{
	LWLockAcquire(&ix->lock, LW_EXCLUSIVE);
	ix->done = req_at_start;
	ix->built_at = GetCurrentTimestamp();
	LWLockRelease(&ix->lock);
	ConditionVariableBroadcast(&ix->rebuilt);
}

/* Read snapshot_map (one row per snapshot id: its resolution, in key order). */
static void
build_scan(IndexBuild *b, MemoryContext cxt)
{
	HASHCTL		hctl;
	Portal		portal;

	memset(b, 0, sizeof(IndexBuild));
	initStringInfo(&b->strings);
	appendStringInfoChar(&b->strings, '\0');	/* offset 0: "" */
	memset(&hctl, 0, sizeof(hctl));
	hctl.keysize = sizeof(((BuildTableEntry *) 0)->key);
	hctl.entrysize = sizeof(BuildTableEntry);
	hctl.hcxt = cxt;
	b->tindex = hash_create("skade index build tables", 1024, &hctl,
							HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);

	portal = SPI_cursor_open_with_args(NULL,
									   "SELECT DISTINCT ON (snapshot_id) snapshot_id, catalog_name,"
									   " table_namespace, table_name, metadata_location"
									   " FROM skade.snapshot_map"
									   " ORDER BY snapshot_id, made_current DESC, seq",
									   0, NULL, NULL, NULL, true, 0);
	for (;;)
	{
		uint64		r;

		SPI_cursor_fetch(portal, true, 10000);
		if (SPI_processed == 0)
			break;
		for (r = 0; r < SPI_processed; r++)
		{
			HeapTuple	tup = SPI_tuptable->vals[r];
			TupleDesc	desc = SPI_tuptable->tupdesc;
			bool		isnull;
			MemoryContext old = MemoryContextSwitchTo(cxt);

			build_add(b, DatumGetInt64(SPI_getbinval(tup, desc, 1, &isnull)),
					  SPI_getvalue(tup, desc, 2), SPI_getvalue(tup, desc, 3),
					  SPI_getvalue(tup, desc, 4), SPI_getvalue(tup, desc, 5));
			MemoryContextSwitchTo(old);
		}
		SPI_freetuptable(SPI_tuptable);
		CHECK_FOR_INTERRUPTS();
	}
	SPI_cursor_close(portal);
	MemoryContextSwitchTo(cxt);
}

/* Add one snapshot id (in key order) and, once, its table. */
static void
build_add(IndexBuild *b, int64 id, const char *cat, const char *nsp, const char *nam,
		  const char *loc)
{
	char		tkey[sizeof(((BuildTableEntry *) 0)->key)];
	BuildTableEntry *te;
	bool		found;

	if (b->n == b->cap)
	{
		b->cap = Max(b->cap * 2, 65536);
		b->keys = b->keys ? repalloc_huge(b->keys, sizeof(int64) * b->cap)
			: palloc_extended(sizeof(int64) * b->cap, MCXT_ALLOC_HUGE);
		b->payload = b->payload ? repalloc_huge(b->payload, sizeof(IndexPayload) * b->cap)
			: palloc_extended(sizeof(IndexPayload) * b->cap, MCXT_ALLOC_HUGE);
	}
	b->keys[b->n] = id;
	snprintf(tkey, sizeof(tkey), "%s%c%s%c%s", cat, '\x1f', nsp, '\x1f', nam);
	te = hash_search(b->tindex, tkey, HASH_ENTER, &found);
	if (!found)
	{
		IndexTable *t;

		if (b->ntables == b->tcap)
		{
			b->tcap = Max(b->tcap * 2, 64);
			b->tables = b->tables ? repalloc(b->tables, sizeof(IndexTable) * b->tcap)
				: palloc(sizeof(IndexTable) * b->tcap);
		}
		te->index = b->ntables;
		t = &b->tables[b->ntables++];
		t->hash = table_hash(cat, nsp, nam);
		t->catalog = b->strings.len;
		appendBinaryStringInfo(&b->strings, cat, strlen(cat) + 1);
		t->ns = b->strings.len;
		appendBinaryStringInfo(&b->strings, nsp, strlen(nsp) + 1);
		t->name = b->strings.len;
		appendBinaryStringInfo(&b->strings, nam, strlen(nam) + 1);
		t->pad = 0;
	}
	b->payload[b->n].table = te->index;
	b->payload[b->n].location = b->strings.len;
	appendBinaryStringInfo(&b->strings, loc, strlen(loc) + 1);
	b->n++;
}

/* Lay the generation out in a new, pinned segment (recorded as being built). */
static dsm_segment *
build_layout(IndexBuild *b)
{
	Size		tree_size = STree64Size(b->n);
	Size		total;
	dsm_segment *seg;
	IndexSegment *hdr;

	total = TYPEALIGN(64, sizeof(IndexSegment));
	total += tree_size;
	total = MAXALIGN(total) + sizeof(IndexPayload) * b->n;
	total = MAXALIGN(total) + sizeof(IndexTable) * b->ntables;
	total = MAXALIGN(total) + b->strings.len;
	seg = dsm_create(total, DSM_CREATE_NULL_IF_MAXSEGMENTS);
	if (seg == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("could not create a dynamic shared memory segment for the snapshot index")));
	LWLockAcquire(&ix->lock, LW_EXCLUSIVE);
	ix->building = dsm_segment_handle(seg);
	LWLockRelease(&ix->lock);
	hdr = (IndexSegment *) dsm_segment_address(seg);
	memset(hdr, 0, sizeof(IndexSegment));
	hdr->n = b->n;
	hdr->ntables = b->ntables;
	hdr->tree_off = TYPEALIGN(64, sizeof(IndexSegment));
	hdr->payload_off = MAXALIGN(hdr->tree_off + tree_size);
	hdr->tables_off = MAXALIGN(hdr->payload_off + sizeof(IndexPayload) * b->n);
	hdr->strings_off = MAXALIGN(hdr->tables_off + sizeof(IndexTable) * b->ntables);
	hdr->total = total;
	STree64Build((STree64 *) SEG_AT(hdr, hdr->tree_off), b->keys, b->n);
	if (b->n > 0)
		memcpy(SEG_AT(hdr, hdr->payload_off), b->payload, sizeof(IndexPayload) * b->n);
	if (b->ntables > 0)
		memcpy(SEG_AT(hdr, hdr->tables_off), b->tables, sizeof(IndexTable) * b->ntables);
	memcpy(SEG_AT(hdr, hdr->strings_off), b->strings.data, b->strings.len);
	hdr->magic = INDEX_MAGIC;
	dsm_pin_segment(seg);
	return seg;
}

/*
 * Publish: swap (handle, gen), prune the dirty marks the tree now covers,
 * wake the waiters; the worker keeps no mapping, and the previous
 * generation goes with its last reader.
 */
static void
build_publish(dsm_segment *seg, Snapshot snap, instr_time start, uint64 req_at_start,
			  uint64 commits_at_start, uint64 misses_at_start)
{
	IndexSegment *hdr = (IndexSegment *) dsm_segment_address(seg);
	instr_time	duration;
	dsm_handle	old_handle;
	HASH_SEQ_STATUS status;
	DirtyEntry *e;

	INSTR_TIME_SET_CURRENT(duration);
	INSTR_TIME_SUBTRACT(duration, start);
	LWLockAcquire(&ix->lock, LW_EXCLUSIVE);
	hdr->gen = ix->gen + 1;
	old_handle = ix->handle;
	ix->handle = dsm_segment_handle(seg);
	ix->building = DSM_HANDLE_INVALID;
	ix->gen = hdr->gen;
	ix->dboid = MyDatabaseId;
	ix->build_xmax = snap->xmax;
	ix->entries = hdr->n;
	ix->bytes = hdr->total;
	ix->build_ms = INSTR_TIME_GET_MILLISEC(duration);
	ix->built_at = GetCurrentTimestamp();
	hash_seq_init(&status, dirty_ids);
	while ((e = hash_seq_search(&status)) != NULL)
		if (dirty_covered_by(e, snap))
		{
			hash_search(dirty_ids, &e->key, HASH_REMOVE, NULL);
			ix->ndirty_ids--;
		}
	hash_seq_init(&status, dirty_tables);
	while ((e = hash_seq_search(&status)) != NULL)
		if (dirty_covered_by(e, snap))
		{
			hash_search(dirty_tables, &e->key, HASH_REMOVE, NULL);
			ix->ndirty_tables--;
		}
	if (ix->all_dirty && TransactionIdPrecedes(ix->all_dirty_xid, snap->xmin))
		ix->all_dirty = false;
	ix->done = req_at_start;
	pg_atomic_write_u64(&ix->gen_hint, ix->gen);
	LWLockRelease(&ix->lock);
	pg_atomic_fetch_sub_u64(&ix->commits_since, commits_at_start);
	pg_atomic_fetch_sub_u64(&ix->misses_since, misses_at_start);
	ConditionVariableBroadcast(&ix->rebuilt);

	dsm_detach(seg);
	if (old_handle != DSM_HANDLE_INVALID)
		dsm_unpin_segment(old_handle);
}

/* ---------------------------------------------------------------- SQL */

PG_FUNCTION_INFO_V1(skade_rebuild_index);
PG_FUNCTION_INFO_V1(skade_index_status);

/*
 * skade.rebuild_index() -> generation
 *
 * Ask the index worker for a new generation and wait until it is published.
 */
Datum
skade_rebuild_index(PG_FUNCTION_ARGS)
{
	uint64		ticket;
	uint64		gen;
	Latch	   *latch;
	int			i;

	SkadeRequireShared();
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the snapshot index is not built on a hot standby"),
				 errdetail("Replay does not tell the index which snapshots changed; lookups on a standby read skade.snapshot_map."),
				 errhint("Run skade.rebuild_index() on the primary.")));
	if (!skade_index_enabled)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the snapshot index is disabled"),
				 errhint("SET skade.index_enabled = on.")));
	/* a worker being restarted (after an error or a kill) comes back within seconds */
	for (i = 0;; i++)
	{
		bool		running;

		LWLockAcquire(&ix->lock, LW_SHARED);
		running = ix->worker_pid != 0;
		LWLockRelease(&ix->lock);
		if (running)
			break;
		if (i >= 30)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("the skade index worker is not running"),
					 errhint("It starts with the server, for the database named by skade.database (\"%s\").",
							 skade_database)));
		ConditionVariableTimedSleep(&ix->rebuilt, 1000, PG_WAIT_EXTENSION);
	}
	ConditionVariableCancelSleep();
	/* a catalog lookup: never under the index lock */
	if (strcmp(get_database_name(MyDatabaseId), skade_database) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the skade index serves database \"%s\", not this one", skade_database),
				 errhint("Set skade.database and restart to index another database; lookups here use the heap.")));
	LWLockAcquire(&ix->lock, LW_EXCLUSIVE);
	ticket = ++ix->requested;
	latch = ix->worker_latch;
	LWLockRelease(&ix->lock);
	if (latch)
		SetLatch(latch);

	ConditionVariablePrepareToSleep(&ix->rebuilt);
	for (;;)
	{
		bool		done;
		bool		worker;

		LWLockAcquire(&ix->lock, LW_SHARED);
		done = ix->done >= ticket;
		worker = ix->worker_pid != 0;
		gen = ix->gen;
		LWLockRelease(&ix->lock);
		if (done)
			break;
		if (!worker)
		{
			ConditionVariableCancelSleep();
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("the skade index worker stopped before publishing")));
		}
		ConditionVariableTimedSleep(&ix->rebuilt, 1000, PG_WAIT_EXTENSION);
	}
	ConditionVariableCancelSleep();
	PG_RETURN_INT64(gen);
}

/*
 * skade.index_status() -> (enabled, database, worker_pid, generation, entries,
 *		coverage, bytes, build_ms, built_at, commits_since_build,
 *		misses_since_build, dirty_ids, dirty_tables, all_dirty, tree_answers,
 *		heap_answers, implementation)
 */
Datum
skade_index_status(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[17];
	bool		nulls[17] = {0};
	int64		distinct_ids = 0;
	uint64		entries;
	Oid			dboid;
	SkadeSafeSql safe;

	SkadeRequireShared();
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	tupdesc = BlessTupleDesc(tupdesc);

	SkadeSafeSqlBegin(&safe, InvalidOid);
	SPI_connect();
	if (SPI_execute("SELECT count(DISTINCT snapshot_id) FROM skade.snapshot_map", true, 0)
		== SPI_OK_SELECT && SPI_processed == 1)
	{
		bool		isnull;

		distinct_ids = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0],
												   SPI_tuptable->tupdesc, 1, &isnull));
	}
	SPI_finish();
	SkadeSafeSqlEnd(&safe);

	LWLockAcquire(&ix->lock, LW_SHARED);
	values[0] = BoolGetDatum(skade_index_enabled);
	values[1] = CStringGetTextDatum(skade_database);
	values[2] = Int32GetDatum(ix->worker_pid);
	nulls[2] = ix->worker_pid == 0;
	values[3] = Int64GetDatum(ix->gen);
	entries = ix->entries;
	dboid = ix->dboid;
	values[4] = Int64GetDatum(entries);
	values[6] = Int64GetDatum(ix->bytes);
	values[7] = Float8GetDatum(ix->build_ms);
	values[8] = TimestampTzGetDatum(ix->built_at);
	nulls[8] = ix->gen == 0;
	values[11] = Int64GetDatum(ix->ndirty_ids);
	values[12] = Int64GetDatum(ix->ndirty_tables);
	values[13] = BoolGetDatum(ix->all_dirty);
	LWLockRelease(&ix->lock);
	/* coverage: the share of the ids in snapshot_map that the tree can answer */
	values[5] = Float8GetDatum(dboid != MyDatabaseId ? 0.0 :
							   distinct_ids == 0 ? 1.0 :
							   Min(1.0, (double) entries / distinct_ids));
	values[9] = Int64GetDatum(pg_atomic_read_u64(&ix->commits_since));
	values[10] = Int64GetDatum(pg_atomic_read_u64(&ix->misses_since));
	values[14] = Int64GetDatum(pg_atomic_read_u64(&ix->tree_answers));
	values[15] = Int64GetDatum(pg_atomic_read_u64(&ix->heap_answers));
	values[16] = CStringGetTextDatum(STree64ImplName());
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
