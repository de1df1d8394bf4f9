/*-------------------------------------------------------------------------
 *
 * written_files.c
 *	  What becomes of the files skade writes and removes: a journal of
 *	  every file written, with the transaction that wrote it; removal of a
 *	  file whose transaction aborts; the sweep of files whose transaction
 *	  never committed (a crash); and removals deferred to commit.
 *
 * Invariants
 *   - When SkadeCreateFile has created a file (O_EXCL) and before it writes
 *     into it, one line "<xid> <database oid> <location>" is appended to
 *     $PGDATA/pg_skade/written_files and fdatasync'ed (an object written by
 *     a namespace's route: "<location>\t<route as resolved>", object_store.c,
 *     so that the sweep asks and removes where it was written); xid is the writing
 *     (sub)transaction's full id, made durable first (a transactional WAL
 *     message "skade.written_file", flushed): a crash cannot hand the id to
 *     another transaction.  The journal names only files skade created.  So a
 *     file skade wrote that no committed transaction made its own is in
 *     the journal with a transaction that is neither running nor
 *     committed, whatever happened (abort, crash, a failed removal).
 *   - A file created in a transaction that aborts (or a subtransaction
 *     that rolls back) is removed at the abort: nothing can refer to it.
 *     What the abort cannot remove, the sweep finds.
 *   - skade.written_files() reports each journal entry of this database
 *     with the state of its transaction (running, committed, aborted, or
 *     unknown when older than the commit log kept by the server);
 *     skade.remove_written_file() removes only a file whose every entry's
 *     transaction is aborted, inside skade.write_roots (the SQL sweep also
 *     checks that the catalog does not refer to it), by the route it was
 *     written by.
 *   - The journal is compacted (rewritten and renamed durably) when it has
 *     doubled since the last compaction and is over 1 MB, and by the sweep:
 *     entries of committed transactions, entries whose file is gone, and
 *     unknown entries (so old that an abort removed their file long ago,
 *     unless a crash came first) are dropped.  An entry of a running
 *     transaction is never dropped.
 *   - Removals deferred to commit (skade.delete_at_commit: expire_snapshots
 *     with delete_files, by the table's namespace's route) are checked
 *     against skade.write_roots when
 *     registered, forgotten on abort or subtransaction rollback, and carried
 *     out only after the commit record is written; a transaction holding
 *     some cannot be prepared (0A000).  A removal that fails at commit is a
 *     WARNING (the commit stands).
 *
 * Locking: journal_lock (shmem.h) shared to append a line, exclusive to
 * compact; no other lock is taken under it, and it is not held across
 * catalog access.  Per-transaction lists live in a context below
 * TopTransactionContext and are dropped with it.
 *
 * IDENTIFICATION
 *	  src/io/written_files.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "access/transam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "common/string.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "replication/message.h"
#include "storage/fd.h"
#include "storage/lwlock.h"
#include "storage/procarray.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/xid8.h"

#include "io/file_access.h"
#include "io/file_create.h"
#include "io/object_store.h"
#include "io/written_files.h"
#include "util/guc.h"
#include "util/location.h"
#include "util/names.h"
#include "util/shmem.h"

#define JOURNAL_DIR		"pg_skade"
#define JOURNAL_FILE	"pg_skade/written_files"
#define JOURNAL_TEMP	"pg_skade/written_files.tmp"
#define COMPACT_MIN		(1024 * 1024)

typedef enum XidState
{
	XS_RUNNING,
	XS_COMMITTED,
	XS_ABORTED,
	XS_UNKNOWN
} XidState;

static const char *const state_names[] = {"running", "committed", "aborted", "unknown"};

/* a file this transaction created, or will remove at commit */
typedef struct TxFile
{
	int			nest_level;
	bool		done;			/* removed, or forgotten */
	char	   *root;
	char	   *rest;
} TxFile;

/* one journal line */
typedef struct Entry
{
	FullTransactionId fxid;
	Oid			dboid;
	char	   *location;
	SkadeRoute	route;			/* .resolved: NULL, or as journalled */
} Entry;

static MemoryContext tx_cxt = NULL;
static List *created = NIL;
static List *doomed = NIL;

static void xact_callback(XactEvent event, void *arg);
static void subxact_callback(SubXactEvent event, SubTransactionId mySubid,
							 SubTransactionId parentSubid, void *arg);
static void remove_all(List *files, int from_level, bool report);
static TxFile *tx_file(const char *root, const char *rest);
static bool parse_line(char *line, Entry *e);
static XidState xid_state(FullTransactionId fxid);
static bool file_present(const char *location);
static uint64 compact(List *gone);
static List *aborted_objects_gone(void);
static bool present(const char *location, List *gone);
static SkadeRoute *entry_route(const Entry *e);
static FILE *journal_open(void);

PG_FUNCTION_INFO_V1(skade_written_files);
PG_FUNCTION_INFO_V1(skade_remove_written_file);
PG_FUNCTION_INFO_V1(skade_compact_written_files);
PG_FUNCTION_INFO_V1(skade_delete_at_commit);

/* SkadeWrittenSubscribe: every create goes through this journal (_PG_init) */
void
SkadeWrittenSubscribe(void)
{
	static const SkadeWriteJournal j = {SkadeWrittenJournal, SkadeWrittenRemember};

	SkadeSetWriteJournal(&j);
}

void
SkadeWrittenInit(void)
{
	RegisterXactCallback(xact_callback, NULL);
	RegisterSubXactCallback(subxact_callback, NULL);
}

/* ------------------------------------------------------------ the journal */

/*
 * SkadeWrittenJournal
 *		Append location's line (with its route, if any) to the journal,
 *		durably, before the file is created (see above); compacts the
 *		journal when it has grown.
 */
void
SkadeWrittenJournal(const char *location, const char *route)
{
	FullTransactionId fxid = GetCurrentFullTransactionId();
	char	   *line = psprintf(UINT64_FORMAT " %u %s%s%s\n", U64FromFullTransactionId(fxid),
								MyDatabaseId, location, route ? "\t" : "", route ? route : "");
	size_t		len = strlen(line);
	struct stat st;
	int			fd;
	bool		grown;

	SkadeRequireShared();

	/*
	 * The id must outlive a crash: recovery advances the next id only past
	 * ids it finds in WAL, and an id handed out again after a crash would
	 * make this entry some other transaction's.  A transactional message
	 * carries it; flushed, it is on disk before the file exists (by
	 * XLogFlush here: LogLogicalMessage's own "flush" is for
	 * non-transactional messages only).
	 */
	XLogFlush(LogLogicalMessage("skade.written_file", location, strlen(location), true, false));
	LWLockAcquire(skade_shared->journal_lock, LW_SHARED);
	fd = OpenTransientFile(JOURNAL_FILE, O_WRONLY | O_CREAT | O_APPEND | PG_BINARY);
	if (fd < 0 && errno == ENOENT && (MakePGDirectory(JOURNAL_DIR) == 0 || errno == EEXIST))
		fd = OpenTransientFile(JOURNAL_FILE, O_WRONLY | O_CREAT | O_APPEND | PG_BINARY);
	if (fd < 0)
	{
		LWLockRelease(skade_shared->journal_lock);
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open \"%s\": %m", JOURNAL_FILE),
				 errdetail("skade records every file it writes there before writing it.")));
	}
	if (write(fd, line, len) != (ssize_t) len || pg_fdatasync(fd) != 0 || fstat(fd, &st) != 0)
	{
		int			err = errno ? errno : ENOSPC;

		CloseTransientFile(fd);
		LWLockRelease(skade_shared->journal_lock);
		errno = err;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not record the file to write in \"%s\": %m", JOURNAL_FILE),
				 errdetail("Nothing was written for \"%s\".", location)));
	}
	CloseTransientFile(fd);
	grown = (uint64) st.st_size > Max(COMPACT_MIN, 2 * skade_shared->journal_compacted);
	LWLockRelease(skade_shared->journal_lock);
	pfree(line);
	if (grown)
		(void) compact(NIL);
}

/*
 * "<xid> <dboid> <location>[\t<route>]\n" -> e; false for a torn or foreign
 * line (a location has no control characters: file_access.c, object_store.c)
 */
static bool
parse_line(char *line, Entry *e)
{
	char	   *end;
	uint64		x;
	unsigned long db;
	size_t		n = strlen(line);

	if (n == 0 || line[n - 1] != '\n')
		return false;
	line[n - 1] = '\0';
	errno = 0;
	x = strtou64(line, &end, 10);
	if (errno != 0 || end == line || *end != ' ')
		return false;
	db = strtoul(end + 1, &end, 10);
	if (errno != 0 || *end != ' ' || end[1] == '\0')
		return false;
	e->fxid = FullTransactionIdFromU64(x);
	e->dboid = (Oid) db;
	e->location = end + 1;
	e->route.catalog = e->route.ns = NULL;
	e->route.resolved = strchr(e->location, '\t');
	if (e->route.resolved)
		*(char *) e->route.resolved++ = '\0';
	return true;
}

/*
 * The state of a (sub)transaction; unknown when the server no longer keeps
 * its status (older than the commit log's horizon) or has not assigned the
 * id (a journal from another timeline, e.g. a restored backup: its files may
 * be another cluster's to keep, so they are never swept here).
 */
static XidState
xid_state(FullTransactionId fxid)
{
	FullTransactionId next = ReadNextFullTransactionId();
	TransactionId xid = XidFromFullTransactionId(fxid);
	XidState	state;
	uint64		oldest;

	if (!TransactionIdIsNormal(xid) || !FullTransactionIdPrecedes(fxid, next))
		return XS_UNKNOWN;
	LWLockAcquire(XactTruncationLock, LW_SHARED);
	oldest = U64FromFullTransactionId(next) -
		(uint32) (XidFromFullTransactionId(next) - TransamVariables->oldestClogXid);
	if (U64FromFullTransactionId(fxid) < oldest)
		state = XS_UNKNOWN;
	else if (TransactionIdIsCurrentTransactionId(xid) || TransactionIdIsInProgress(xid))
		state = XS_RUNNING;
	else if (TransactionIdDidCommit(xid))
		state = XS_COMMITTED;
	else
		state = XS_ABORTED;
	LWLockRelease(XactTruncationLock);
	return state;
}

/* whether the file a journal line names is still there (an object: yes) */
static bool
file_present(const char *location)
{
	struct stat st;

	/* no request is made here: it may run under the journal's lock */
	if (SkadeIsObjectLocation(location))
		return true;
	return lstat(SkadeLocalPath(location), &st) == 0;
}

/* file_present, but an object in gone (asked beforehand) is not */
static bool
present(const char *location, List *gone)
{
	ListCell   *lc;

	if (!SkadeIsObjectLocation(location))
		return file_present(location);
	foreach(lc, gone)
		if (strcmp((const char *) lfirst(lc), location) == 0)
			return false;
	return true;
}

/* a copy of the route of e's object (the settings' when none was journalled) */
static SkadeRoute *
entry_route(const Entry *e)
{
	SkadeRoute *r = palloc0(sizeof(SkadeRoute));

	r->resolved = e->route.resolved ? pstrdup(e->route.resolved) : NULL;
	return r;
}

/*
 * The objects of this database's aborted entries that the store says are
 * not there (HEAD, with no lock held): compaction may forget them.
 */
static List *
aborted_objects_gone(void)
{
	StringInfoData buf;
	FILE	   *in = journal_open();
	List	   *objects = NIL;
	List	   *routes = NIL;

	if (in == NULL)
		return NIL;
	initStringInfo(&buf);
	while (pg_get_line_buf(in, &buf))
	{
		Entry		e;

		CHECK_FOR_INTERRUPTS();
		if (parse_line(buf.data, &e) && e.dboid == MyDatabaseId &&
			SkadeIsObjectLocation(e.location) && xid_state(e.fxid) == XS_ABORTED)
		{
			objects = lappend(objects, pstrdup(e.location));
			routes = lappend(routes, entry_route(&e));
		}
	}
	FreeFile(in);
	return SkadeObjectsAbsent(objects, routes);
}

/*
 * Rewrite the journal without committed entries and entries whose file is
 * gone; returns the lines kept.
 */
static uint64
compact(List *gone)
{
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "skade journal compaction",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	StringInfoData buf;
	FILE	   *in;
	FILE	   *out;
	uint64		kept = 0;
	struct stat st;

	LWLockAcquire(skade_shared->journal_lock, LW_EXCLUSIVE);
	in = AllocateFile(JOURNAL_FILE, PG_BINARY_R);
	if (in == NULL)
	{
		LWLockRelease(skade_shared->journal_lock);
		MemoryContextSwitchTo(old);
		MemoryContextDelete(cxt);
		return 0;
	}
	out = AllocateFile(JOURNAL_TEMP, PG_BINARY_W);
	if (out == NULL)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not create \"%s\": %m", JOURNAL_TEMP)));
	initStringInfo(&buf);
	while (pg_get_line_buf(in, &buf))
	{
		char	   *copy = pstrdup(buf.data);
		Entry		e;
		XidState	s;

		CHECK_FOR_INTERRUPTS();
		if (!parse_line(buf.data, &e))
			continue;
		s = xid_state(e.fxid);
		if (s == XS_COMMITTED || s == XS_UNKNOWN ||
			(s == XS_ABORTED && !present(e.location, gone)))
			continue;
		if (fputs(copy, out) == EOF)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not write \"%s\": %m", JOURNAL_TEMP)));
		kept++;
		pfree(copy);
	}
	FreeFile(in);
	if (fflush(out) != 0 || pg_fsync(fileno(out)) != 0 || FreeFile(out) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not write \"%s\": %m", JOURNAL_TEMP)));
	durable_rename(JOURNAL_TEMP, JOURNAL_FILE, ERROR);
	skade_shared->journal_compacted = stat(JOURNAL_FILE, &st) == 0 ? (uint64) st.st_size : 0;
	LWLockRelease(skade_shared->journal_lock);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
	return kept;
}

/*
 * The journal, open for reading (NULL if there is none yet).  A compaction
 * renames a new file over it; this one stays readable as it was.
 */
static FILE *
journal_open(void)
{
	FILE	   *in;
	int			err;

	SkadeRequireShared();
	LWLockAcquire(skade_shared->journal_lock, LW_SHARED);
	in = AllocateFile(JOURNAL_FILE, PG_BINARY_R);
	err = errno;
	LWLockRelease(skade_shared->journal_lock);
	errno = err;
	if (in == NULL && err != ENOENT)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open \"%s\": %m", JOURNAL_FILE)));
	return in;
}

/*
 * skade.written_files() -> (location, xid, state, present): the journal's
 * entries for this database.
 */
Datum
skade_written_files(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	StringInfoData buf;
	FILE	   *in;

	List	   *entries = NIL;
	List	   *objects = NIL;
	List	   *routes = NIL;
	List	   *gone;
	ListCell   *lc;

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	in = journal_open();
	if (in == NULL)
		PG_RETURN_VOID();
	initStringInfo(&buf);
	while (pg_get_line_buf(in, &buf))
	{
		Entry	   *e = palloc(sizeof(Entry));

		CHECK_FOR_INTERRUPTS();
		if (!parse_line(buf.data, e) || e->dboid != MyDatabaseId)
			continue;
		e->location = pstrdup(e->location);
		entries = lappend(entries, e);
		if (SkadeIsObjectLocation(e->location))
		{
			objects = lappend(objects, e->location);
			routes = lappend(routes, entry_route(e));
		}
	}
	FreeFile(in);
	/* the objects are asked about all at once, no lock held */
	gone = SkadeObjectsAbsent(objects, routes);
	foreach(lc, entries)
	{
		Entry	   *e = lfirst(lc);
		Datum		values[4];
		bool		nulls[4] = {false, false, false, false};

		values[0] = CStringGetTextDatum(e->location);
		values[1] = FullTransactionIdGetDatum(e->fxid);
		values[2] = CStringGetTextDatum(state_names[xid_state(e->fxid)]);
		values[3] = BoolGetDatum(present(e->location, gone));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	PG_RETURN_VOID();
}

/*
 * skade.remove_written_file(location) -> whether a file was removed: only
 * one the journal lists for this database, every writing transaction of it
 * aborted; inside skade.write_roots.
 */
Datum
skade_remove_written_file(PG_FUNCTION_ARGS)
{
	char	   *location = text_to_cstring(PG_GETARG_TEXT_PP(0));
	StringInfoData buf;
	FILE	   *in;
	bool		found = false;
	bool		owned = false;
	SkadeRoute *route = NULL;
	char	   *root;
	char	   *rest;
	int			err;

	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot remove files during recovery")));
	in = journal_open();
	initStringInfo(&buf);
	while (in != NULL && pg_get_line_buf(in, &buf))
	{
		Entry		e;
		XidState	s;

		if (!parse_line(buf.data, &e) || e.dboid != MyDatabaseId ||
			strcmp(e.location, location) != 0)
			continue;
		found = true;
		s = xid_state(e.fxid);
		owned |= (s != XS_ABORTED);
		route = entry_route(&e);	/* (the same location: written once) */
	}
	if (in != NULL)
		FreeFile(in);
	if (!found || owned)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("\"%s\" is not an orphan file", location),
				 errdetail(!found ? "skade's journal of written files does not list it for this database."
						   : "The transaction that wrote it did not abort (or is too old to tell).")));
	SkadeWritablePath(route, location, "remove", &root, &rest);
	err = SkadeRemoveBelow(root, rest);
	if (err != 0 && err != ENOENT)
	{
		errno = err;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not remove \"%s\": %m", location)));
	}
	PG_RETURN_BOOL(err == 0);
}

/* skade.compact_written_files() -> the journal lines kept */
Datum
skade_compact_written_files(PG_FUNCTION_ARGS)
{
	SkadeRequireShared();
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot compact skade's journal during recovery")));
	PG_RETURN_INT64((int64) compact(aborted_objects_gone()));
}

/* ------------------------------------------------- this transaction's files */

/* a TxFile at this nest level, in the transaction's context */
static TxFile *
tx_file(const char *root, const char *rest)
{
	TxFile	   *f;

	if (tx_cxt == NULL)
		tx_cxt = AllocSetContextCreate(TopTransactionContext, "skade files of this transaction",
									   ALLOCSET_SMALL_SIZES);
	f = MemoryContextAlloc(tx_cxt, sizeof(TxFile));
	f->nest_level = GetCurrentTransactionNestLevel();
	f->done = false;
	f->root = MemoryContextStrdup(tx_cxt, root);
	f->rest = MemoryContextStrdup(tx_cxt, rest);
	return f;
}

/*
 * SkadeWrittenRemember
 *		The file at root/rest was just created by this transaction: it goes
 *		if the transaction (or this subtransaction) aborts.
 */
void
SkadeWrittenRemember(const char *root, const char *rest)
{
	TxFile	   *f = tx_file(root, rest);
	MemoryContext old = MemoryContextSwitchTo(tx_cxt);

	created = lappend(created, f);
	MemoryContextSwitchTo(old);
}

/*
 * skade.delete_at_commit(locations text[], namespace, catalog) -> how many:
 * remove these files (objects: by the namespace's route, without one by the
 * settings) when this transaction commits.  Every location must lie inside
 * skade.write_roots (42501, nothing registered); NULL elements are skipped.
 */
Datum
skade_delete_at_commit(PG_FUNCTION_ARGS)
{
	ArrayType  *arr;
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	int			i;
	List	   *files = NIL;
	ListCell   *lc;
	MemoryContext old;
	SkadeRoute	route = {NULL, NULL, NULL};	/* the settings, without a namespace */

	if (RecoveryInProgress() || XactReadOnly)
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot delete files in a read-only transaction")));
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("locations must not be NULL")));
	arr = PG_GETARG_ARRAYTYPE_P(0);
	if (PG_NARGS() > 1 && !PG_ARGISNULL(1))
	{
		route.ns = SkadeOptTextArg(fcinfo, 1);
		route.catalog = SkadeResolveCatalog(SkadeOptTextArg(fcinfo, 2));
	}
	deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);
	for (i = 0; i < n; i++)
	{
		char	   *root;
		char	   *rest;

		if (nulls[i])
			continue;
		SkadeWritablePath(&route, TextDatumGetCString(elems[i]), "remove", &root, &rest);
		files = lappend(files, tx_file(root, rest));
	}
	if (files == NIL)
		PG_RETURN_INT32(0);
	old = MemoryContextSwitchTo(tx_cxt);
	foreach(lc, files)
		doomed = lappend(doomed, lfirst(lc));
	MemoryContextSwitchTo(old);
	PG_RETURN_INT32(list_length(files));
}

/* remove the files of list at nest level from_level or deeper */
static void
remove_all(List *files, int from_level, bool report)
{
	ListCell   *lc;

	foreach(lc, files)
	{
		TxFile	   *f = lfirst(lc);
		int			err;

		if (f->done || f->nest_level < from_level)
			continue;
		f->done = true;
		err = SkadeRemoveBelow(f->root, f->rest);
		if (err != 0 && err != ENOENT && report)
		{
			errno = err;
			ereport(WARNING,
					(errcode_for_file_access(),
					 errmsg("could not remove \"%s/%s\": %m", f->root, f->rest),
					 errhint("skade.sweep_orphan_files() removes what an aborted transaction left.")));
		}
	}
}

static void
xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_PREPARE:
			{
				ListCell   *lc;

				foreach(lc, doomed)
					if (!((TxFile *) lfirst(lc))->done)
						ereport(ERROR,
								(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
								 errmsg("cannot PREPARE a transaction that deletes files"),
								 errdetail("skade.expire_snapshots(delete_files => true) removes files at commit.")));
			}
			return;
		case XACT_EVENT_COMMIT:
			remove_all(doomed, 0, true);
			break;
		case XACT_EVENT_ABORT:
			/* nothing can refer to what an aborted transaction wrote */
			remove_all(created, 0, true);
			break;
		case XACT_EVENT_PREPARE:
			/* the journal keeps them: the sweep decides once it is resolved */
			break;
		default:
			return;
	}
	created = NIL;
	doomed = NIL;
	tx_cxt = NULL;				/* deleted with TopTransactionContext */
}

static void
subxact_callback(SubXactEvent event, SubTransactionId mySubid,
				 SubTransactionId parentSubid, void *arg)
{
	int			level = GetCurrentTransactionNestLevel();
	ListCell   *lc;

	if (event == SUBXACT_EVENT_ABORT_SUB)
	{
		remove_all(created, level, true);
		foreach(lc, doomed)
			if (((TxFile *) lfirst(lc))->nest_level >= level)
				((TxFile *) lfirst(lc))->done = true;
	}
	else if (event == SUBXACT_EVENT_COMMIT_SUB)
	{
		foreach(lc, created)
			if (((TxFile *) lfirst(lc))->nest_level >= level)
				((TxFile *) lfirst(lc))->nest_level = level - 1;
		foreach(lc, doomed)
			if (((TxFile *) lfirst(lc))->nest_level >= level)
				((TxFile *) lfirst(lc))->nest_level = level - 1;
	}
}
