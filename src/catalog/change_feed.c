/*-------------------------------------------------------------------------
 *
 * change_feed.c
 *	  What makes the commit log an exact, resumable feed: each row's seq is
 *	  reserved together with the list of catalog writers still in progress
 *	  at that moment, and that list is kept beside the row
 *	  (skade.commit_log_feed), with the snapshot ids the change added and
 *	  removed and the table's uuid; a notification on channel skade_changes
 *	  wakes consumers.
 *
 * Why a list and not just the seq
 *   seq order is not commit order: a transaction that took seq 100 may
 *   commit after one that took 101.  A consumer that read 101 and moved its
 *   position past it would never see 100.  skade.changes() therefore hands
 *   out a row only when every writer in its list is over in the reader's
 *   snapshot (skade.feed_held()), and stops at the first row that is
 *   not: every row below it is then committed and visible, or never will
 *   be.  The list holds every writer with a lower seq that might still
 *   commit, because seqs are taken in order under FeedShared.lock and a
 *   writer stays listed until its transaction is over.  The rule needs
 *   only the rows and the reader's snapshot, so it holds on a hot standby
 *   too (a writer's commit record precedes, in the WAL, the commit of any
 *   row that listed it), and it is held up only by catalog writers, never
 *   by other long transactions.
 *
 * Invariants
 *   - A seq is taken (nextval of the log's identity sequence) only by
 *     SkadeFeedReserve, under FeedShared.lock held exclusive, and the
 *     caller's top-level transaction id is in FeedShared.xids when the lock
 *     is released; it leaves at the end of that transaction (the commit is
 *     visible by then), or, for a prepared transaction, when a later
 *     reservation finds it no longer in progress.
 *   - The list of a reservation: every other entry whose transaction is in
 *     progress (TransactionIdIsInProgress; entries found over are cleared).
 *   - A feed row is written in the transaction of its log row, never
 *     changed; a log row without one (written before 1.14, or an 'adopt'
 *     row of attach(), written before any writer can run) lists nobody.
 *   - skade_changes is notified once per committing transaction, with its
 *     highest seq, from its pre-commit (a NOTIFY queued earlier would make
 *     the transaction impossible to PREPARE); a prepared transaction's
 *     changes wake nobody: the notification is a hint, never the feed.
 *
 *   - Without shared memory (skade not preloaded) the list is every
 *     transaction running after the seq was taken (reserve_unshared).
 *
 * Locking
 *   FeedShared.lock (exclusive) around the scan of the entries, nextval and
 *   the entry's allocation; an entry is cleared without it (an atomic
 *   write), so a reservation may list a writer that has just ended, which
 *   only makes the list longer than it need be.
 *
 * IDENTIFICATION
 *	  src/catalog/change_feed.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "access/table.h"
#include "access/transam.h"
#include "access/twophase.h"
#include "access/xlog.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "commands/async.h"
#include "commands/sequence.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lmgr.h"
#include "storage/procarray.h"
#include "storage/shmem.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/xid8.h"

#include "catalog/change_feed.h"
#include "util/guc.h"

PG_FUNCTION_INFO_V1(skade_feed_held);

/* columns of skade.commit_log_feed (0-based) */
enum
{
	F_SEQ, F_PENDING, F_ADDED, F_REMOVED, F_UUID, FEED_NCOLS
};

/* one catalog writer: its top-level transaction, and its database */
typedef struct FeedEntry
{
	pg_atomic_uint64 xid;		/* FullTransactionId; 0 free */
	Oid			dbid;			/* InvalidOid: any (seeded at startup) */
} FeedEntry;

typedef struct FeedShared
{
	LWLock	   *lock;
	int			nslots;
	bool		seeded;			/* the transactions running at startup are in */
	FeedEntry	entries[FLEXIBLE_ARRAY_MEMBER];
} FeedShared;

static FeedShared *feed = NULL;

/* this backend's entry in feed->entries for its current transaction, or -1, and whose */
static int	my_slot = -1;
static uint64 my_xid = 0;

/* the highest seq this transaction recorded (0: none), notified at commit */
static int64 notify_seq = 0;
static Oid	cached_feed_relid = InvalidOid;

static int	feed_slots(void);
static void feed_xact_callback(XactEvent event, void *arg);
static int	claim_slot(FullTransactionId me);
static void register_callback(void);
static void seed_running(void);
static FullTransactionId widen(FullTransactionId next, TransactionId x);
static int64 reserve_unshared(Oid seq_relid, Datum *pending);
static Datum xid_array(FullTransactionId *xids, int n);
static void snapshot_diff(const SkadeMeta *meta, const SkadeMeta *old, Datum *added, Datum *removed);
static Datum id_array(int64 *ids, int n);
static bool uuid_text(const char *s);
static Oid	feed_relid(void);
static void feed_invalidate(Datum arg, int cacheid, uint32 hashvalue);
static void insert_feed_row(Oid relid, Datum *values, bool *nulls);

/* ---------------------------------------------------------------- shmem */

/* one entry per backend (each has one transaction at a time) and per prepared transaction */
static int
feed_slots(void)
{
	return MaxBackends + max_prepared_xacts;
}

Size
SkadeFeedShmemSize(void)
{
	return MAXALIGN(add_size(offsetof(FeedShared, entries),
							 mul_size(sizeof(FeedEntry), feed_slots())));
}

void
SkadeFeedShmemRequest(void)
{
	RequestAddinShmemSpace(SkadeFeedShmemSize());
	RequestNamedLWLockTranche("skade change feed", 1);
}

void
SkadeFeedShmemInit(void)
{
	bool		found;
	int			i;

	feed = ShmemInitStruct("skade change feed", SkadeFeedShmemSize(), &found);
	if (found)
		return;
	feed->lock = &(GetNamedLWLockTranche("skade change feed"))[0].lock;
	feed->nslots = feed_slots();
	feed->seeded = false;
	for (i = 0; i < feed->nslots; i++)
	{
		pg_atomic_init_u64(&feed->entries[i].xid, 0);
		feed->entries[i].dbid = InvalidOid;
	}
}

/* ---------------------------------------------------------------- reservation */

/*
 * SkadeFeedReserve
 *		The next seq of the commit log (nextval of seq_relid), and in
 *		*pending the xid8[] of the other catalog writers in progress; the
 *		caller's transaction is listed for the reservations after it until
 *		it ends.
 */
int64
SkadeFeedReserve(Oid seq_relid, Datum *pending)
{
	FullTransactionId me = GetTopFullTransactionId();
	FullTransactionId *others;
	int			nothers = 0;
	int64		seq;
	int			i;

	register_callback();
	if (feed == NULL)
		return reserve_unshared(seq_relid, pending);
	/* the sequence's lock before the feed's: nextval never waits for it under ours */
	LockRelationOid(seq_relid, RowExclusiveLock);
	others = palloc(sizeof(FullTransactionId) * feed->nslots);
	LWLockAcquire(feed->lock, LW_EXCLUSIVE);
	if (!feed->seeded)
		seed_running();
	for (i = 0; i < feed->nslots; i++)
	{
		FeedEntry  *e = &feed->entries[i];
		uint64		x = pg_atomic_read_u64(&e->xid);
		FullTransactionId fx = FullTransactionIdFromU64(x);

		if (x == 0 || FullTransactionIdEquals(fx, me))
			continue;
		if (!TransactionIdIsInProgress(XidFromFullTransactionId(fx)))
		{
			/* over (committed, aborted, a prepared one resolved): no longer listed */
			pg_atomic_compare_exchange_u64(&e->xid, &x, 0);
			continue;
		}
		/* (another database's writers take other seqs) */
		if (OidIsValid(e->dbid) && e->dbid != MyDatabaseId)
			continue;
		others[nothers++] = fx;
	}
	seq = nextval_internal(seq_relid, false);
	if (my_slot < 0 || pg_atomic_read_u64(&feed->entries[my_slot].xid) != U64FromFullTransactionId(me))
		my_slot = claim_slot(me);
	my_xid = U64FromFullTransactionId(me);
	LWLockRelease(feed->lock);
	*pending = xid_array(others, nothers);
	pfree(others);
	return seq;
}

/*
 * The first reservation since the shared memory was made (a start, a
 * crash restart; on a standby just promoted, the first ever): every
 * transaction running now becomes an entry of any database, so that the
 * prepared ones, which outlive restarts and promotions, are listed until
 * they are resolved (feed->lock held exclusive; the others are pruned
 * when they end, as any entry).
 */
static void
seed_running(void)
{
	Snapshot	snap = GetLatestSnapshot();
	FullTransactionId next = ReadNextFullTransactionId();
	uint32		i;
	int			k = 0;

	for (i = 0; i < snap->xcnt && k < feed->nslots; i++)
	{
		feed->entries[k].dbid = InvalidOid;
		pg_atomic_write_u64(&feed->entries[k].xid,
							U64FromFullTransactionId(widen(next, snap->xip[i])));
		k++;
	}
	feed->seeded = true;
}

/* the full id of a running xid (its epoch is next's, or the one before) */
static FullTransactionId
widen(FullTransactionId next, TransactionId x)
{
	uint32		epoch = EpochFromFullTransactionId(next);

	if (x > XidFromFullTransactionId(next) && epoch > 0)
		epoch--;
	return FullTransactionIdFromEpochAndXid(epoch, x);
}

/*
 * Without skade's shared memory (not in shared_preload_libraries: the
 * triggers still log JDBC clients' changes) there is no list of catalog
 * writers: the seq first, then every transaction running after it
 * (a snapshot's xip), a superset of those that took a lower seq and may
 * still commit -- exact too, but held up by any long transaction.
 */
static int64
reserve_unshared(Oid seq_relid, Datum *pending)
{
	int64		seq = nextval_internal(seq_relid, false);
	Snapshot	snap = GetLatestSnapshot();
	FullTransactionId next = ReadNextFullTransactionId();
	TransactionId me = GetTopTransactionIdIfAny();
	FullTransactionId *others = palloc(sizeof(FullTransactionId) * Max(snap->xcnt, 1));
	int			n = 0;
	uint32		i;

	for (i = 0; i < snap->xcnt; i++)
		if (!TransactionIdEquals(snap->xip[i], me))
			others[n++] = widen(next, snap->xip[i]);
	*pending = xid_array(others, n);
	return seq;
}

/* the end-of-transaction callback, once per backend */
static void
register_callback(void)
{
	static bool callback_registered = false;

	if (!callback_registered)
	{
		RegisterXactCallback(feed_xact_callback, NULL);
		callback_registered = true;
	}
}

/* my entry: a seeded one that is mine, else a free one (feed->lock held exclusive) */
static int
claim_slot(FullTransactionId me)
{
	int			i;

	for (i = 0; i < feed->nslots; i++)
		if (pg_atomic_read_u64(&feed->entries[i].xid) == U64FromFullTransactionId(me))
		{
			feed->entries[i].dbid = MyDatabaseId;
			return i;
		}
	for (i = 0; i < feed->nslots; i++)
		if (pg_atomic_read_u64(&feed->entries[i].xid) == 0)
		{
			feed->entries[i].dbid = MyDatabaseId;
			pg_write_barrier();
			pg_atomic_write_u64(&feed->entries[i].xid, U64FromFullTransactionId(me));
			return i;
		}
	/* (cannot happen: an entry per backend and per prepared transaction) */
	ereport(ERROR,
			(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
			 errmsg("skade: no free entry for a catalog writer in the change feed")));
	return -1;
}

/*
 * The transaction is over: its entry goes (the commit is visible by now).
 * A prepared transaction keeps it until a reservation finds it over.
 */
static void
feed_xact_callback(XactEvent event, void *arg)
{
	char		payload[24];

	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
			/* (before PreCommit_Notify, which queues it) */
			if (notify_seq > 0 && skade_notify_changes)
			{
				snprintf(payload, sizeof(payload), INT64_FORMAT, notify_seq);
				Async_Notify(SKADE_CHANGES_CHANNEL, payload);
			}
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PARALLEL_ABORT:
			/*
			 * Only if still mine: a reservation that saw this transaction
			 * over may have cleared the entry and given it to another.
			 */
			if (my_slot >= 0 && feed != NULL)
			{
				uint64		mine = my_xid;

				pg_atomic_compare_exchange_u64(&feed->entries[my_slot].xid, &mine, 0);
			}
			my_slot = -1;
			notify_seq = 0;
			break;
		case XACT_EVENT_PREPARE:
			/* (its commit, later and elsewhere, notifies nobody: the wake-up is a hint) */
			my_slot = -1;
			notify_seq = 0;
			break;
		default:
			break;
	}
}

static Datum
xid_array(FullTransactionId *xids, int n)
{
	Datum	   *elems = palloc(sizeof(Datum) * Max(n, 1));
	int			i;

	for (i = 0; i < n; i++)
		elems[i] = FullTransactionIdGetDatum(xids[i]);
	return PointerGetDatum(construct_array(elems, n, XID8OID, sizeof(FullTransactionId),
										   FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

/* ---------------------------------------------------------------- the feed row */

/*
 * SkadeFeedRecord
 *		Write the feed row of commit-log row seq: its reservation's list, and
 *		(snapshots_known) the snapshot ids in meta and not in old, and in
 *		old and not in meta (either NULL: none); then notify skade_changes.
 *		Before 1.14's script has run (no skade.commit_log_feed), nothing.
 */
void
SkadeFeedRecord(int64 seq, Datum pending, const SkadeMeta *meta, const SkadeMeta *old,
				bool snapshots_known)
{
	Oid			relid = feed_relid();
	Datum		values[FEED_NCOLS];
	bool		nulls[FEED_NCOLS] = {0};
	const char *uuid;

	if (!OidIsValid(relid))
		return;
	values[F_SEQ] = Int64GetDatum(seq);
	values[F_PENDING] = pending;
	nulls[F_ADDED] = nulls[F_REMOVED] = !snapshots_known;
	if (snapshots_known)
		snapshot_diff(meta, old, &values[F_ADDED], &values[F_REMOVED]);
	/* the table's uuid, from the metadata read at commit (either side) */
	uuid = meta && meta->table_uuid ? SkadeMetaStr(meta, meta->table_uuid) :
		old && old->table_uuid ? SkadeMetaStr(old, old->table_uuid) : NULL;
	nulls[F_UUID] = uuid == NULL || !uuid_text(uuid);
	if (!nulls[F_UUID])
		values[F_UUID] = DirectFunctionCall1(uuid_in, CStringGetDatum(uuid));
	insert_feed_row(relid, values, nulls);
	/* notified when the transaction commits, never before (a prepared one: never) */
	notify_seq = Max(notify_seq, seq);
}

static int
int64_cmp(const void *a, const void *b)
{
	int64		x = *(const int64 *) a;
	int64		y = *(const int64 *) b;

	return x < y ? -1 : x > y;
}

/* sorted ids of a summary's snapshots (n: their number) */
static int64 *
sorted_ids(const SkadeMeta *m, int *n)
{
	int64	   *ids;
	uint32		i;

	*n = m ? (int) m->nsnapshots : 0;
	ids = palloc(sizeof(int64) * Max(*n, 1));
	for (i = 0; i < (uint32) *n; i++)
		ids[i] = SkadeMetaSnapshots(m)[i].snapshot_id;
	qsort(ids, *n, sizeof(int64), int64_cmp);
	return ids;
}

/* what meta has and old has not, and the reverse: one merge of the sorted ids */
static void
snapshot_diff(const SkadeMeta *meta, const SkadeMeta *old, Datum *added, Datum *removed)
{
	int			na;
	int			nb;
	int64	   *a = sorted_ids(meta, &na);
	int64	   *b = sorted_ids(old, &nb);
	int64	   *plus = palloc(sizeof(int64) * Max(na, 1));
	int64	   *minus = palloc(sizeof(int64) * Max(nb, 1));
	int			np = 0;
	int			nm = 0;
	int			i = 0;
	int			j = 0;

	while (i < na || j < nb)
	{
		if (j >= nb || (i < na && a[i] < b[j]))
			plus[np++] = a[i++];
		else if (i >= na || b[j] < a[i])
			minus[nm++] = b[j++];
		else
			i++, j++;
	}
	*added = id_array(plus, np);
	*removed = id_array(minus, nm);
}

/* the canonical text of a uuid (8-4-4-4-12 hex digits)? */
static bool
uuid_text(const char *s)
{
	int			i;

	if (strlen(s) != 36)
		return false;
	for (i = 0; i < 36; i++)
		if ((i == 8 || i == 13 || i == 18 || i == 23) ? s[i] != '-' : !isxdigit((unsigned char) s[i]))
			return false;
	return true;
}

static Datum
id_array(int64 *ids, int n)
{
	Datum	   *elems = palloc(sizeof(Datum) * Max(n, 1));
	int			i;

	for (i = 0; i < n; i++)
		elems[i] = Int64GetDatum(ids[i]);
	return PointerGetDatum(construct_array(elems, n, INT8OID, sizeof(int64),
										   FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

/* skade.commit_log_feed's OID (InvalidOid: not there yet), until the next pg_class invalidation */
static Oid
feed_relid(void)
{
	static bool callback_registered = false;
	Oid			nsp;
	Oid			relid;

	if (OidIsValid(cached_feed_relid))
		return cached_feed_relid;
	if (!callback_registered)
	{
		CacheRegisterSyscacheCallback(RELOID, feed_invalidate, (Datum) 0);
		callback_registered = true;
	}
	nsp = get_namespace_oid("skade", true);
	relid = OidIsValid(nsp) ? get_relname_relid("commit_log_feed", nsp) : InvalidOid;
	cached_feed_relid = relid;
	return relid;
}

static void
feed_invalidate(Datum arg, int cacheid, uint32 hashvalue)
{
	cached_feed_relid = InvalidOid;
}

/*
 * One row into the feed table through the executor's simple-insert path,
 * as the commit-log trigger inserts its rows: no SQL, no privilege check
 * (writers may not write the feed themselves).
 */
static void
insert_feed_row(Oid relid, Datum *values, bool *nulls)
{
	Relation	rel = table_open(relid, RowExclusiveLock);
	EState	   *estate = CreateExecutorState();
	RangeTblEntry *rte = makeNode(RangeTblEntry);
	List	   *perminfos = NIL;
	ResultRelInfo *rri = makeNode(ResultRelInfo);
	TupleTableSlot *slot;
	TupleDesc	desc = RelationGetDescr(rel);

	if (desc->natts != FEED_NCOLS)
		elog(ERROR, "skade.commit_log_feed has %d columns, expected %d", desc->natts, FEED_NCOLS);
	rte->rtekind = RTE_RELATION;
	rte->relid = relid;
	rte->relkind = rel->rd_rel->relkind;
	rte->rellockmode = RowExclusiveLock;
	addRTEPermissionInfo(&perminfos, rte);
	ExecInitRangeTable(estate, list_make1(rte), perminfos, bms_make_singleton(1));
	InitResultRelInfo(rri, rel, 1, NULL, 0);
	estate->es_output_cid = GetCurrentCommandId(true);
	ExecOpenIndices(rri, false);
	slot = ExecInitExtraTupleSlot(estate, desc, &TTSOpsVirtual);
	ExecClearTuple(slot);
	memcpy(slot->tts_values, values, sizeof(Datum) * FEED_NCOLS);
	memcpy(slot->tts_isnull, nulls, sizeof(bool) * FEED_NCOLS);
	ExecStoreVirtualTuple(slot);
	ExecSimpleRelationInsert(rri, estate, slot);
	ExecCloseIndices(rri);
	ExecResetTupleTable(estate->es_tupleTable, false);
	FreeExecutorState(estate);
	table_close(rel, NoLock);
}

/* ---------------------------------------------------------------- the reader's test */

/*
 * skade.feed_held(pending xid8[]) -> boolean
 *
 * Is any listed writer still in progress in the caller's snapshot?  Asked
 * of the active snapshot itself (XidInMVCCSnapshot), not of
 * pg_current_snapshot(), which on a hot standby leaves out the primary's
 * running transactions.  A writer from more than 2^31 transactions ago is
 * over; one not yet assigned here (a standby behind the row's lister
 * cannot have the row) counts as in progress.
 */
Datum
skade_feed_held(PG_FUNCTION_ARGS)
{
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(0);
	Snapshot	snap = ActiveSnapshotSet() ? GetActiveSnapshot() : NULL;
	FullTransactionId next = ReadNextFullTransactionId();
	bool		recovery = RecoveryInProgress();
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	int			i;

	if (ARR_ELEMTYPE(arr) != XID8OID || ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("pending must be a one-dimensional xid8[]")));
	deconstruct_array(arr, XID8OID, sizeof(FullTransactionId), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE,
					  &elems, &nulls, &n);
	for (i = 0; i < n; i++)
	{
		FullTransactionId fx;

		if (nulls[i])
			continue;
		fx = DatumGetFullTransactionId(elems[i]);
		if (U64FromFullTransactionId(fx) + ((uint64) 1 << 31) < U64FromFullTransactionId(next))
			continue;			/* ancient: long over */
		if (FullTransactionIdFollowsOrEquals(fx, next))
		{
			/*
			 * Not assigned here yet: on a standby, not replayed yet (held);
			 * on a primary it names another cluster's transaction (a
			 * restored dump, a logical copy), long over.
			 */
			if (recovery)
				PG_RETURN_BOOL(true);
			continue;
		}
		/* (the caller's own transaction is in progress too: its changes may yet roll back) */
		if (snap == NULL || XidInMVCCSnapshot(XidFromFullTransactionId(fx), snap) ||
			TransactionIdIsCurrentTransactionId(XidFromFullTransactionId(fx)))
			PG_RETURN_BOOL(true);
	}
	PG_RETURN_BOOL(false);
}
