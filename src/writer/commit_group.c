/*-------------------------------------------------------------------------
 *
 * commit_group.c
 *	  Group commit: concurrent REST appends to one table, which rebases
 *	  stale appends (commit_rebase.c), are applied by one committer in
 *	  arrival order into one new metadata file, written and fsync'ed once,
 *	  the pointer moved once, one transaction made durable for all.
 *
 * How a group forms
 *   - A commit request of the groupable shape (requirements, and updates
 *     that are one add-snapshot of operation "append" plus set-snapshot-ref
 *     actions; no Idempotency-Key: its stored answer must commit with its
 *     change) takes a slot in shared memory: its database, role, table and
 *     body.  With no committer ("leader") for the same database, role and
 *     table it becomes the leader, else it waits.
 *   - The leader locks the table's row (as update_table), applies its own
 *     commit in memory (commit_fast.c's chain), claims the waiting slots
 *     of its key in arrival order, hands the leadership on (the oldest
 *     slot still waiting becomes the next leader, and waits for the row
 *     lock: the next group gathers while this one is made durable),
 *     applies each claimed commit onto the result in a subtransaction of
 *     its own (a failing one fails only itself: its SQLSTATE and message,
 *     cut at GROUP_MESSAGE bytes, are kept -- not its detail or hint; one
 *     the fast path does not take goes back to the usual
 *     path), writes the one file, moves the pointer (one commit-log row)
 *     and returns: its transaction commits it.
 *   - Each commit keeps its own snapshot (history stays linear); every
 *     member is answered with the table as the group left it (its branch
 *     may point at a later member's snapshot, as if a commit had followed
 *     at once).
 *
 * Durability and failure
 *   A waiting member learns its outcome only from the leader's transaction
 *   callback: on COMMIT (the commit record is flushed, synchronous
 *   replicas answered, the change visible; the files were fsync'ed before)
 *   each claimed slot becomes DONE or FAILED; on ABORT each goes back to
 *   WAITING and is committed by a later group.  So no member is answered
 *   before its change is durable, and an aborted or killed leader leaves
 *   nothing half-applied (a crash restarts every backend).  A waiting slot
 *   leaves the queue when its request is cancelled (statement timeout,
 *   pg_cancel_backend); a claimed one does not, until its leader's
 *   transaction ends.  A slot left by an ending process is freed by the
 *   leader that claimed it.
 *
 * Locking: group->lock (exclusive, short: no I/O, no allocation while
 * held) guards every slot and next_seq.  Latches wake the waiters.
 * Memory: the leader's in "skade group commit", in its caller's context,
 * which also holds the rebase's memo of manifest lists while the group is
 * applied (commit_rebase.c: the members share their parent's list and each
 * rebases onto the list the one before wrote).
 *
 * IDENTIFICATION
 *	  src/writer/commit_group.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "access/xact.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/wait_event.h"

#include "catalog/catalog_store.h"
#include "writer/commit_fast.h"
#include "writer/commit_group.h"
#include "writer/commit_rebase.h"
#include "util/guc.h"
#include "util/shmem.h"

#define GROUP_SLOTS		64		/* commits waiting or committing at once */
#define GROUP_DATA		16384	/* a slot's key and body */
#define GROUP_MESSAGE	512		/* a failed member's message (truncated) */
#define GROUP_WAIT_MS	10		/* a waiter looks again at least this often */

typedef enum SlotState
{
	SLOT_FREE,
	SLOT_WAITING,				/* queued */
	SLOT_LEADING,				/* its backend leads a group */
	SLOT_CLAIMED,				/* in a leader's group, not yet durable */
	SLOT_DONE,					/* committed (durable) */
	SLOT_FAILED,				/* refused: sqlerrcode, message */
	SLOT_BYPASS					/* not for a group: the usual path */
} SlotState;

typedef struct GroupSlot
{
	SlotState	state;
	bool		abandoned;		/* its process ended while claimed */
	Oid			dbid;
	Oid			roleid;
	uint32		key_hash;
	int			key_len;		/* data: "catalog\0ns\0name\0" then the body */
	int			body_len;
	uint64		seq;			/* arrival order */
	Latch	   *latch;			/* its backend's */
	int			sqlerrcode;		/* FAILED */
	char		message[GROUP_MESSAGE];
	char		data[GROUP_DATA];
} GroupSlot;

typedef struct GroupShared
{
	LWLock	   *lock;
	uint64		next_seq;
	GroupSlot	slots[GROUP_SLOTS];
} GroupShared;

/* a claimed commit, in the leader's memory */
typedef struct Member
{
	int			slot;
	char	   *body;
	SlotState	outcome;		/* DONE, FAILED or BYPASS once applied */
	int			sqlerrcode;
	char		message[GROUP_MESSAGE];
} Member;

static GroupShared *group = NULL;

/* this backend's slot (waiting or leading), and the members it claimed */
static int	my_slot = -1;
static Member *claimed = NULL;	/* in TopMemoryContext */
static int	nclaimed = 0;
static bool callback_registered = false;

static bool groupable(const char *body);
static bool jsonb_member(Jsonb *j, const char *key, Jsonb **value);
static int	make_key(char *buf, const char *catalog, const char *ns, const char *name);
static bool announce(const char *key, int key_len, const char *body);
static SlotState wait_turn(void);
static bool same_key(const GroupSlot *a, const GroupSlot *b);
static bool lead(const char *catalog, const char *ns, const char *name, const char *body);
static void claim_waiting(MemoryContext cxt);
static void hand_off(bool bypass);
static void wake_next(const GroupSlot *me, bool bypass);
static void apply_member(SkadeFastChain *ch, Member *m);
static bool step_body(SkadeFastChain *ch, const char *body);
static void release_slot(void);
static void group_xact_callback(XactEvent event, void *arg);

/* ---------------------------------------------------------------- shmem */

Size
SkadeGroupShmemSize(void)
{
	return MAXALIGN(sizeof(GroupShared));
}

void
SkadeGroupShmemRequest(void)
{
	RequestAddinShmemSpace(SkadeGroupShmemSize());
	RequestNamedLWLockTranche("skade group commit", 1);
}

void
SkadeGroupShmemInit(void)
{
	bool		found;

	group = ShmemInitStruct("skade group commit", sizeof(GroupShared), &found);
	if (!found)
	{
		int			i;

		group->lock = &(GetNamedLWLockTranche("skade group commit"))[0].lock;
		group->next_seq = 1;
		for (i = 0; i < GROUP_SLOTS; i++)
			group->slots[i].state = SLOT_FREE;
	}
}

/* ---------------------------------------------------------------- entry */

/*
 * SkadeGroupCommit
 *		Commit body (a CommitTableRequest) to catalog.ns.name in a group, as
 *		the current role, in the current transaction; what was done (see
 *		SkadeGroupResult).  A member refused by its group's committer raises
 *		its error here.  The caller has checked the role may call
 *		update_table.
 */
SkadeGroupResult
SkadeGroupCommit(const char *catalog, const char *ns, const char *name, const char *body)
{
	char		key[GROUP_DATA];
	int			key_len;
	SlotState	st;
	int			code;
	char		message[GROUP_MESSAGE];

	if (!skade_group_commit || group == NULL || XactReadOnly || IsolationUsesXactSnapshot() ||
		my_slot >= 0 || nclaimed > 0)
		return SKADE_GROUP_NOT_TAKEN;
	key_len = make_key(key, catalog, ns, name);
	if (key_len < 0 || key_len + strlen(body) + 1 > GROUP_DATA || !groupable(body))
		return SKADE_GROUP_NOT_TAKEN;
	if (!callback_registered)
	{
		RegisterXactCallback(group_xact_callback, NULL);
		callback_registered = true;
	}
	if (!announce(key, key_len, body))
		return SKADE_GROUP_NOT_TAKEN;
	st = wait_turn();
	if (st == SLOT_LEADING)
		return lead(catalog, ns, name, body) ? SKADE_GROUP_LED : SKADE_GROUP_NOT_TAKEN;
	code = group->slots[my_slot].sqlerrcode;
	strlcpy(message, group->slots[my_slot].message, sizeof(message));
	release_slot();
	if (st == SLOT_FAILED)
		ereport(ERROR, (errcode(code), errmsg("%s", message)));
	return st == SLOT_DONE ? SKADE_GROUP_COMMITTED : SKADE_GROUP_NOT_TAKEN;
}

/*
 * Is body a commit a group may take: requirements, and updates of one
 * add-snapshot of an append plus set-snapshot-ref actions?  (The fast path
 * decides the rest; what it does not take goes the usual way.)
 */
static bool
groupable(const char *body)
{
	Jsonb	   *j;
	Jsonb	   *updates;
	Jsonb	   *requirements;
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	int			appends = 0;

	j = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(body)));
	if (!JB_ROOT_IS_OBJECT(j) || !jsonb_member(j, "updates", &updates) ||
		!JB_ROOT_IS_ARRAY(updates) || JB_ROOT_IS_SCALAR(updates) ||
		(jsonb_member(j, "requirements", &requirements) &&
		 (!JB_ROOT_IS_ARRAY(requirements) || JB_ROOT_IS_SCALAR(requirements))))
		return false;
	it = JsonbIteratorInit(&updates->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		Jsonb	   *u;
		Jsonb	   *snapshot;
		Jsonb	   *summary;
		JsonbValue	action;
		JsonbValue	op;

		if (tok != WJB_ELEM)
			continue;
		if (v.type != jbvBinary || !JsonContainerIsObject(v.val.binary.data))
			return false;
		u = JsonbValueToJsonb(&v);
		if (getKeyJsonValueFromContainer(&u->root, "action", 6, &action) == NULL ||
			action.type != jbvString)
			return false;
		if (action.val.string.len == 16 && strncmp(action.val.string.val, "set-snapshot-ref", 16) == 0)
			continue;
		if (action.val.string.len != 12 || strncmp(action.val.string.val, "add-snapshot", 12) != 0 ||
			!jsonb_member(u, "snapshot", &snapshot) || !JB_ROOT_IS_OBJECT(snapshot) ||
			!jsonb_member(snapshot, "summary", &summary) || !JB_ROOT_IS_OBJECT(summary) ||
			getKeyJsonValueFromContainer(&summary->root, "operation", 9, &op) == NULL ||
			op.type != jbvString || op.val.string.len != 6 ||
			strncmp(op.val.string.val, "append", 6) != 0)
			return false;
		appends++;
	}
	return appends == 1;
}

/* j's member key as jsonb; false when absent */
static bool
jsonb_member(Jsonb *j, const char *key, Jsonb **value)
{
	JsonbValue	v;

	if (!JB_ROOT_IS_OBJECT(j) ||
		getKeyJsonValueFromContainer(&j->root, key, strlen(key), &v) == NULL)
		return false;
	*value = JsonbValueToJsonb(&v);
	return true;
}

/* "catalog\0ns\0name\0" in buf (GROUP_DATA bytes); its length, -1 if too long */
static int
make_key(char *buf, const char *catalog, const char *ns, const char *name)
{
	size_t		a = strlen(catalog) + 1;
	size_t		b = strlen(ns) + 1;
	size_t		c = strlen(name) + 1;

	if (a + b + c >= GROUP_DATA)
		return -1;
	memcpy(buf, catalog, a);
	memcpy(buf + a, ns, b);
	memcpy(buf + a + b, name, c);
	return (int) (a + b + c);
}

/* ---------------------------------------------------------------- the queue */

/* Take a free slot for the commit, waiting; false when none is free. */
static bool
announce(const char *key, int key_len, const char *body)
{
	uint32		hash = hash_bytes((const unsigned char *) key, key_len);
	int			body_len = strlen(body);
	int			i;

	LWLockAcquire(group->lock, LW_EXCLUSIVE);
	for (i = 0; i < GROUP_SLOTS; i++)
		if (group->slots[i].state == SLOT_FREE)
			break;
	if (i < GROUP_SLOTS)
	{
		GroupSlot  *s = &group->slots[i];

		s->state = SLOT_WAITING;
		s->abandoned = false;
		s->dbid = MyDatabaseId;
		s->roleid = GetUserId();
		s->key_hash = hash;
		s->key_len = key_len;
		s->body_len = body_len;
		s->seq = group->next_seq++;
		s->latch = MyLatch;
		s->sqlerrcode = 0;
		s->message[0] = '\0';
		memcpy(s->data, key, key_len);
		memcpy(s->data + key_len, body, body_len + 1);
		my_slot = i;
	}
	LWLockRelease(group->lock);
	return i < GROUP_SLOTS;
}

static bool
same_key(const GroupSlot *a, const GroupSlot *b)
{
	return a->dbid == b->dbid && a->roleid == b->roleid && a->key_hash == b->key_hash &&
		a->key_len == b->key_len && memcmp(a->data, b->data, a->key_len) == 0;
}

/*
 * Wait until this slot leads (no slot of its key leads: it takes the
 * lead), is done, failed or sent back to the usual path.  While it waits
 * unclaimed, an interrupt takes it out of the queue (SLOT_FREE back: the
 * usual path, if the interrupt raised nothing); while claimed, none is
 * served: its outcome is its leader's transaction's.
 */
static SlotState
wait_turn(void)
{
	GroupSlot  *me = &group->slots[my_slot];
	bool		waited = false;

	for (;;)
	{
		SlotState	st;

		LWLockAcquire(group->lock, LW_EXCLUSIVE);
		st = me->state;
		if (st == SLOT_WAITING)
		{
			int			i;

			for (i = 0; i < GROUP_SLOTS; i++)
				if (group->slots[i].state == SLOT_LEADING && same_key(&group->slots[i], me))
					break;
			if (i == GROUP_SLOTS)
				st = me->state = SLOT_LEADING;
			else if (INTERRUPTS_PENDING_CONDITION())
				st = me->state = SLOT_FREE;
		}
		LWLockRelease(group->lock);
		if (st == SLOT_FREE)
		{
			my_slot = -1;
			if (waited)
				SetLatch(MyLatch);	/* what the latch was set for before */
			CHECK_FOR_INTERRUPTS();
			return SLOT_FREE;
		}
		if (st != SLOT_WAITING && st != SLOT_CLAIMED)
		{
			if (waited)
				SetLatch(MyLatch);
			return st;
		}
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 GROUP_WAIT_MS, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		waited = true;
	}
}

/* Free this backend's slot (an outcome read, or a leader's own). */
static void
release_slot(void)
{
	if (my_slot < 0)
		return;
	LWLockAcquire(group->lock, LW_EXCLUSIVE);
	group->slots[my_slot].state = SLOT_FREE;
	LWLockRelease(group->lock);
	my_slot = -1;
}

/* ---------------------------------------------------------------- the leader */

/*
 * Lead a group: this commit, then the waiting ones of its key; false when
 * the fast path does not take this commit (nothing done: the usual path).
 */
static bool
lead(const char *catalog, const char *ns, const char *name, const char *body)
{
	MemoryContext caller = CurrentMemoryContext;
	MemoryContext cxt;
	SkadeFastChain *ch;
	char	   *base;
	int			i;

	base = StoreLockTable(catalog, ns, name);
	if (base == NULL)
	{
		hand_off(false);
		return false;
	}
	cxt = AllocSetContextCreate(caller, "skade group commit", ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(cxt);
	/* (ended here, or at the transaction's end: group_xact_callback) */
	SkadeRebaseMemoBegin(cxt);
	ch = SkadeFastChainBegin(catalog, ns, name, base);
	if (!step_body(ch, body))
	{
		SkadeRebaseMemoEnd();
		MemoryContextSwitchTo(caller);
		MemoryContextDelete(cxt);
		hand_off(false);
		return false;
	}
	if (SkadeFastChainRebases(ch))
	{
		claim_waiting(cxt);
		hand_off(false);
		for (i = 0; i < nclaimed; i++)
			apply_member(ch, &claimed[i]);
	}
	else
		hand_off(true);			/* a table without rebase: no groups */
	(void) SkadeFastChainFinish(ch);
	SkadeRebaseMemoEnd();
	MemoryContextSwitchTo(caller);
	MemoryContextDelete(cxt);
	return true;
}

/* Claim the slots waiting with this one's key, in arrival order. */
static void
claim_waiting(MemoryContext cxt)
{
	GroupSlot  *me = &group->slots[my_slot];
	int			order[GROUP_SLOTS];
	int			n = 0;
	int			i;

	/* the bodies are copied after the lock is released: claimed, they stay */
	LWLockAcquire(group->lock, LW_EXCLUSIVE);
	for (i = 0; i < GROUP_SLOTS; i++)
	{
		GroupSlot  *s = &group->slots[i];
		int			j;

		if (i == my_slot || s->state != SLOT_WAITING || !same_key(s, me))
			continue;
		s->state = SLOT_CLAIMED;
		/* insertion by seq (few slots) */
		for (j = n; j > 0 && group->slots[order[j - 1]].seq > s->seq; j--)
			order[j] = order[j - 1];
		order[j] = i;
		n++;
	}
	LWLockRelease(group->lock);
	if (n == 0)
		return;
	claimed = MemoryContextAllocZero(TopMemoryContext, sizeof(Member) * n);
	for (i = 0; i < n; i++)
	{
		GroupSlot  *s = &group->slots[order[i]];

		claimed[i].slot = order[i];
		claimed[i].outcome = SLOT_WAITING;	/* not applied yet */
		claimed[i].body = MemoryContextStrdup(cxt, s->data + s->key_len);
	}
	nclaimed = n;
}

/*
 * Give up the lead: free this backend's slot and wake the oldest slot of
 * its key still waiting (it takes the lead), or, with bypass, send every
 * waiting slot of its key the usual way.
 */
static void
hand_off(bool bypass)
{
	if (my_slot < 0)
		return;
	LWLockAcquire(group->lock, LW_EXCLUSIVE);
	wake_next(&group->slots[my_slot], bypass);
	group->slots[my_slot].state = SLOT_FREE;
	LWLockRelease(group->lock);
	my_slot = -1;
}

/* hand_off's waking, under group->lock; me is the leading slot */
static void
wake_next(const GroupSlot *me, bool bypass)
{
	int			next = -1;
	int			i;

	for (i = 0; i < GROUP_SLOTS; i++)
	{
		GroupSlot  *s = &group->slots[i];

		if (s == me || s->state != SLOT_WAITING || !same_key(s, me))
			continue;
		if (bypass)
		{
			s->state = SLOT_BYPASS;
			SetLatch(s->latch);
		}
		else if (next < 0 || s->seq < group->slots[next].seq)
			next = i;
	}
	if (next >= 0)
		SetLatch(group->slots[next].latch);
}

/* Apply claimed member m onto the chain in a subtransaction: its outcome. */
static void
apply_member(SkadeFastChain *ch, Member *m)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		bool		ours = step_body(ch, m->body);

		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
		m->outcome = ours ? SLOT_DONE : SLOT_BYPASS;
	}
	PG_CATCH();
	{
		ErrorData  *e;

		MemoryContextSwitchTo(cxt);
		e = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
		/* a cancel or shutdown is the group's, not the member's */
		if (ERRCODE_TO_CATEGORY(e->sqlerrcode) == ERRCODE_OPERATOR_INTERVENTION)
			ReThrowError(e);
		m->outcome = SLOT_FAILED;
		m->sqlerrcode = e->sqlerrcode;
		strlcpy(m->message, e->message ? e->message : "the commit failed", GROUP_MESSAGE);
	}
	PG_END_TRY();
}

/* One CommitTableRequest body onto the chain (SkadeFastChainStep). */
static bool
step_body(SkadeFastChain *ch, const char *body)
{
	Jsonb	   *j = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(body)));
	Jsonb	   *requirements;
	Jsonb	   *updates;

	if (!jsonb_member(j, "requirements", &requirements))
		requirements = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum("[]")));
	if (!jsonb_member(j, "updates", &updates))
		return false;
	return SkadeFastChainStep(ch, requirements, updates);
}

/* ---------------------------------------------------------------- the end */

/*
 * The leader's transaction ended: its claimed members learn their outcome
 * (COMMIT: durable now) or queue again (ABORT); a slot still held is freed.
 */
static void
group_xact_callback(XactEvent event, void *arg)
{
	bool		committed = event == XACT_EVENT_COMMIT || event == XACT_EVENT_PARALLEL_COMMIT;
	int			done = 0;
	int			i;

	if (!committed && event != XACT_EVENT_ABORT && event != XACT_EVENT_PARALLEL_ABORT)
		return;
	SkadeRebaseMemoEnd();		/* a leader's error left it on */
	if (nclaimed == 0 && my_slot < 0)
		return;
	LWLockAcquire(group->lock, LW_EXCLUSIVE);
	for (i = 0; i < nclaimed; i++)
	{
		Member	   *m = &claimed[i];
		GroupSlot  *s = &group->slots[m->slot];

		if (s->abandoned)
			s->state = SLOT_FREE;
		else if (committed && m->outcome != SLOT_WAITING)
		{
			s->state = m->outcome;
			s->sqlerrcode = m->sqlerrcode;
			strlcpy(s->message, m->message, GROUP_MESSAGE);
			done += m->outcome == SLOT_DONE;
		}
		else
			s->state = SLOT_WAITING;
		if (s->state != SLOT_FREE)
			SetLatch(s->latch);
	}
	if (my_slot >= 0)
	{
		GroupSlot  *me = &group->slots[my_slot];

		/* claimed while its transaction ends: only when its process ends */
		if (me->state == SLOT_CLAIMED)
			me->abandoned = true;
		else
		{
			if (me->state == SLOT_LEADING)
				wake_next(me, false);
			me->state = SLOT_FREE;
		}
		my_slot = -1;
	}
	LWLockRelease(group->lock);
	if (done > 0)
	{
		pg_atomic_fetch_add_u64(&skade_shared->group_commits, 1);
		pg_atomic_fetch_add_u64(&skade_shared->group_members, done);
	}
	if (claimed)
		pfree(claimed);
	claimed = NULL;
	nclaimed = 0;
}
