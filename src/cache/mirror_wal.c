/*-------------------------------------------------------------------------
 *
 * mirror_wal.c
 *	  skade's WAL resource manager: tells hot standbys (and crash recovery)
 *	  which L1 mirror entries a change on the primary makes stale.
 *
 * Replay fires no trigger, so a standby cannot see a pointer change the way
 * a primary does.  Instead, for every row change the commit-log trigger
 * notes (pointer_mirror.c), the primary writes a small WAL record naming the
 * entry's key; a TRUNCATE writes one naming the catalog table.  Both are
 * written inside the writer's transaction, after the heap change they
 * describe and before its commit record.  Their redo removes the entry (or
 * every entry of the table) from the standby's mirror and bumps the change
 * epoch, so a fill that read the heap before the change is refused; after the
 * redo, a reader whose snapshot does not yet see the change finds the old
 * row version carrying the writer's xmax and does not fill, and one that sees
 * it fills the new version stamped with the writer's xid.  A TRUNCATE sets no
 * xmax, so its transaction id is kept and no reader whose snapshot still
 * sees it running uses the mirror (pointer_mirror.c, standby_refuses).
 *
 * Every server that replays this WAL -- streaming and archive standbys,
 * point-in-time restores, the primary's own crash recovery -- must load
 * skade through shared_preload_libraries: PostgreSQL refuses to replay a
 * record of a resource manager nobody registered.  Records are written only
 * by a server that preloads skade.
 *
 * The resource manager id, SKADE_RMGR_ID, is in the range PostgreSQL
 * leaves to extensions; it must be unique in a cluster.
 *
 * IDENTIFICATION
 *	  src/cache/mirror_wal.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "access/xloginsert.h"
#include "access/xlogreader.h"
#include "lib/stringinfo.h"

#include "cache/mirror_wal.h"
#include "util/skade_limits.h"

#define SKADE_RMGR_ID			166
#define XLOG_SKADE_CHANGE		0x00
#define XLOG_SKADE_TRUNCATE		0x10

/* the fixed part of both records; a change record's names follow it */
typedef struct xl_skade_mirror
{
	MirrorScope scope;
	uint16		names_len;		/* bytes of names (no terminator) */
} xl_skade_mirror;

static bool registered = false;
static const MirrorWalRedo *redo_to = NULL;

static void skade_redo(XLogReaderState *record);
static void skade_desc(StringInfo buf, XLogReaderState *record);
static const char *skade_identify(uint8 info);

static RmgrData skade_rmgr = {
	.rm_name = "skade",
	.rm_redo = skade_redo,
	.rm_desc = skade_desc,
	.rm_identify = skade_identify,
};

/* MirrorInit, while shared_preload_libraries is processed: redo is the mirror's */
void
MirrorWalInit(const MirrorWalRedo *redo)
{
	redo_to = redo;
	RegisterCustomRmgr(SKADE_RMGR_ID, &skade_rmgr);
	registered = true;
}

/* The mirror entry scope/names may be stale from now on. */
void
MirrorWalLogChange(const MirrorScope *scope, const char *names)
{
	xl_skade_mirror rec;

	if (!registered)
		return;
	memset(&rec, 0, sizeof(rec));
	rec.scope = *scope;
	rec.names_len = (uint16) strlen(names);
	XLogBeginInsert();
	XLogRegisterData((char *) &rec, sizeof(rec));
	XLogRegisterData((char *) names, rec.names_len);
	(void) XLogInsert(SKADE_RMGR_ID, XLOG_SKADE_CHANGE);
}

/* Every entry of scope's catalog table goes with this transaction's TRUNCATE. */
void
MirrorWalLogTruncate(const MirrorScope *scope)
{
	xl_skade_mirror rec;

	if (!registered)
		return;
	memset(&rec, 0, sizeof(rec));
	rec.scope = *scope;
	(void) GetTopTransactionId();	/* the record carries it */
	XLogBeginInsert();
	XLogRegisterData((char *) &rec, sizeof(rec));
	(void) XLogInsert(SKADE_RMGR_ID, XLOG_SKADE_TRUNCATE);
}

static void
skade_redo(XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;
	char	   *data = XLogRecGetData(record);
	xl_skade_mirror rec;
	char		names[3 * SKADE_MAX_NAME_LEN + 3];

	if (XLogRecGetDataLen(record) < sizeof(rec))
		elog(PANIC, "skade_redo: record of %u bytes is too short", XLogRecGetDataLen(record));
	memcpy(&rec, data, sizeof(rec));
	switch (info)
	{
		case XLOG_SKADE_CHANGE:
			if (rec.names_len >= sizeof(names) ||
				XLogRecGetDataLen(record) != sizeof(rec) + rec.names_len)
				elog(PANIC, "skade_redo: malformed change record");
			memcpy(names, data + sizeof(rec), rec.names_len);
			names[rec.names_len] = '\0';
			redo_to->change(&rec.scope, names);
			break;
		case XLOG_SKADE_TRUNCATE:
			redo_to->truncate(&rec.scope, XLogRecGetXid(record));
			break;
		default:
			elog(PANIC, "skade_redo: unknown op code %u", info);
	}
}

static void
skade_desc(StringInfo buf, XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;
	xl_skade_mirror rec;

	if (XLogRecGetDataLen(record) < sizeof(rec))
		return;
	memcpy(&rec, XLogRecGetData(record), sizeof(rec));
	appendStringInfo(buf, "db %u rel %u trigger %u/%u", rec.scope.dboid, rec.scope.relid,
					 rec.scope.tgoid, rec.scope.tgxmin);
	if (info == XLOG_SKADE_CHANGE)
		appendStringInfo(buf, " names %u bytes", rec.names_len);
}

static const char *
skade_identify(uint8 info)
{
	switch (info & ~XLR_INFO_MASK)
	{
		case XLOG_SKADE_CHANGE:
			return "MIRROR_CHANGE";
		case XLOG_SKADE_TRUNCATE:
			return "MIRROR_TRUNCATE";
		default:
			return NULL;
	}
}
