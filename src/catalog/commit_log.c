/*-------------------------------------------------------------------------
 *
 * commit_log.c
 *	  Trigger functions that append every pointer change of
 *	  public.iceberg_tables to skade.commit_log, in the changing
 *	  transaction, whichever path made the change.
 *
 * Both paths end in DML on iceberg_tables: the SQL API runs it through SPI,
 * JDBC clients send it themselves.  One AFTER ROW trigger therefore sees
 * every change, exactly once per changed row, with the row already locked
 * by the statement: two commits to the same table are logged in the order
 * in which they took the row lock, so the log of a table is linear.  The
 * trigger never changes the row or the statement's affected-row count, so
 * the clients' compare-and-swap "UPDATE ... WHERE metadata_location = ?"
 * keeps its exact semantics.
 *
 * The SQL API labels its changes (register vs. create, source = 'api')
 * through a backend-local operation context set around its DML; plain DML
 * is labelled from the row change itself.  The context is always cleared
 * by the caller (PG_FINALLY), so an error never mislabels a later change.
 *
 * Writers cannot insert into the commit log themselves (no privilege); the
 * trigger inserts its rows directly through the executor's simple-insert
 * path, which runs no SQL and checks no privileges, and records the role
 * that made the change.  The TRUNCATE trigger runs one INSERT ... SELECT as
 * the owner of skade.commit_log through safe_sql.c (pinned search_path,
 * every object schema-qualified, no operator at all), so the caller's
 * search_path cannot redirect it.
 *
 * skade.commit_log is append-only: a BEFORE UPDATE/DELETE/TRUNCATE trigger
 * refuses every change, except skade.resolve_commit_log() filling in the
 * snapshot id of a row whose metadata was unreadable at commit.
 *
 * IDENTIFICATION
 *	  src/catalog/commit_log.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_type.h"
#include "catalog/dependency.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "commands/sequence.h"
#include "commands/trigger.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/inval.h"
#include "utils/timestamp.h"
#include "utils/xid8.h"
#include "utils/syscache.h"

#include "catalog/change_feed.h"
#include "catalog/commit_log.h"
#include "cache/pointer_mirror.h"
#include "util/safe_sql.h"
#include "index/snapshot_map.h"
#include "catalog/warm.h"
#include "util/guc.h"
#include "io/object_store.h"
#include "util/shmem.h"

PG_FUNCTION_INFO_V1(skade_log_pointer_change);
PG_FUNCTION_INFO_V1(skade_log_truncate);
PG_FUNCTION_INFO_V1(skade_commit_log_append_only);

/* Parameters of the log INSERT, in order */
typedef enum LogArg
{
	L_OP, L_SOURCE, L_CATALOG, L_NS, L_NAME, L_TYPE, L_LOCATION, L_PREVIOUS,
	L_PREV_NS, L_PREV_NAME, L_ROLE, L_SNAPSHOT,
	LOG_NARGS
} LogArg;

/* Columns of skade.commit_log (0-based), in the install script's order */
typedef enum LogColumn
{
	C_SEQ, C_OP, C_SOURCE, C_CATALOG, C_NS, C_NAME, C_TYPE, C_LOCATION,
	C_PREVIOUS, C_PREV_NS, C_PREV_NAME, C_AT, C_BY, C_XACT, C_SNAPSHOT, C_DETAIL,
	LOG_NCOLS
} LogColumn;

/* where each LogArg goes (-1: handled separately) */
static const int log_arg_column[LOG_NARGS] = {
	[L_OP] = C_OP, [L_SOURCE] = C_SOURCE, [L_CATALOG] = C_CATALOG,
	[L_NS] = C_NS, [L_NAME] = C_NAME, [L_TYPE] = C_TYPE,
	[L_LOCATION] = C_LOCATION, [L_PREVIOUS] = C_PREVIOUS,
	[L_PREV_NS] = C_PREV_NS, [L_PREV_NAME] = C_PREV_NAME,
	[L_ROLE] = -1, [L_SNAPSHOT] = C_SNAPSHOT,
};

/* Columns of iceberg_tables the trigger reads, by attribute number */
typedef struct PointerColumns
{
	int			catalog;
	int			ns;
	int			name;
	int			location;
	int			previous;
	int			type;			/* 0 when the table has no iceberg_type (V0) */
} PointerColumns;

/* The values of one commit-log row, as SPI arguments ('n' = NULL) */
typedef struct LogRow
{
	Datum		v[LOG_NARGS];
	char		n[LOG_NARGS];
} LogRow;

/* ---- Local variables ---- */

/* SQL API operation in progress in this backend, or NULL */
static const char *current_api_op = NULL;

/* seq of the last commit-log row this backend appended */
static int64 last_seq = 0;

/* skade.commit_log, its seq sequence and owner; InvalidOid until looked up */
/* the append-only exceptions in force (SkadeCommitLogAllow) */
static int	log_allowed = 0;
static Oid	cached_log_relid = InvalidOid;
static Oid	cached_log_seq = InvalidOid;

static void resolve_columns(Relation rel, PointerColumns *cols);
static void check_column(Relation rel, int attnum, bool key);
static Datum get_col(HeapTuple tuple, TupleDesc desc, int attnum, bool *isnull);
static void fill_row(LogRow *row, const char *op, HeapTuple tuple,
					 TupleDesc desc, const PointerColumns *cols);
static Oid	commit_log_relid(void);
static void log_owner_invalidate(Datum arg, int cacheid, uint32 hashvalue);
static void set_arg(LogRow *row, LogArg arg, Datum value, bool isnull);
static void row_as_dropped(LogRow *row);
static void append_row(LogRow *row);
static Oid	log_seq_relid(Relation rel);
static void log_truncated(SPITupleTable *tables, uint64 i, const char *role);
static void note_mirror(const MirrorScope *scope, HeapTuple tuple, TupleDesc desc,
						const PointerColumns *cols,
						bool removed);
static bool datum_text_equal(Datum a, bool a_null, Datum b, bool b_null);

/*
 * SkadeOpBegin / SkadeOpEnd
 *		Bracket a SQL API change: rows logged in between carry "op" and
 *		source = 'api'.  SkadeOpEnd must run on error paths too.
 */
void
SkadeOpBegin(const char *op)
{
	current_api_op = op;
	last_seq = 0;
}

void
SkadeOpEnd(void)
{
	current_api_op = NULL;
}

/* seq of the last log row appended by this backend (0 if none since Begin) */
int64
SkadeOpLastSeq(void)
{
	return last_seq;
}

/*
 * skade_log_pointer_change
 *		AFTER INSERT OR UPDATE OR DELETE FOR EACH ROW on iceberg_tables.
 */
Datum
skade_log_pointer_change(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;
	TupleDesc	desc;
	PointerColumns cols;
	LogRow		row;
	MirrorScope scope;

	if (!CALLED_AS_TRIGGER(fcinfo) ||
		!TRIGGER_FIRED_AFTER(trigdata->tg_event) ||
		!TRIGGER_FIRED_FOR_ROW(trigdata->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("skade.log_pointer_change() must be an AFTER ROW trigger")));

	desc = RelationGetDescr(trigdata->tg_relation);
	resolve_columns(trigdata->tg_relation, &cols);
	MirrorScopeOf(&scope, RelationGetRelid(trigdata->tg_relation),
				  trigdata->tg_trigger->tgoid);

	if (TRIGGER_FIRED_BY_INSERT(trigdata->tg_event))
	{
		fill_row(&row, current_api_op ? current_api_op : SKADE_OP_CREATE,
				 trigdata->tg_trigtuple, desc, &cols);
		note_mirror(&scope, trigdata->tg_trigtuple, desc, &cols, false);
		append_row(&row);
	}
	else if (TRIGGER_FIRED_BY_DELETE(trigdata->tg_event))
	{
		fill_row(&row, SKADE_OP_DROP, trigdata->tg_trigtuple, desc, &cols);
		row_as_dropped(&row);
		note_mirror(&scope, trigdata->tg_trigtuple, desc, &cols, true);
		SnapshotMapDrop(row.v[L_CATALOG], row.v[L_NS], row.v[L_NAME]);
		append_row(&row);
	}
	else if (TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event))
	{
		HeapTuple	oldtup = trigdata->tg_trigtuple;
		HeapTuple	newtup = trigdata->tg_newtuple;
		bool		on,
					nn;
		Datum		o,
					n;
		bool		same_catalog,
					same_ident,
					same_location;

		o = get_col(oldtup, desc, cols.catalog, &on);
		n = get_col(newtup, desc, cols.catalog, &nn);
		same_catalog = datum_text_equal(o, on, n, nn);
		o = get_col(oldtup, desc, cols.ns, &on);
		n = get_col(newtup, desc, cols.ns, &nn);
		same_ident = datum_text_equal(o, on, n, nn);
		o = get_col(oldtup, desc, cols.name, &on);
		n = get_col(newtup, desc, cols.name, &nn);
		same_ident = same_ident && datum_text_equal(o, on, n, nn);
		o = get_col(oldtup, desc, cols.location, &on);
		n = get_col(newtup, desc, cols.location, &nn);
		same_location = datum_text_equal(o, on, n, nn);

		/* the mirror follows every column it holds, logged or not */
		if (!same_catalog || !same_ident)
			note_mirror(&scope, oldtup, desc, &cols, true);
		note_mirror(&scope, newtup, desc, &cols, false);

		/* the table's snapshots follow it to its new name or catalog */
		if (!same_catalog || !same_ident)
		{
			bool		isnull;

			SnapshotMapMove(get_col(oldtup, desc, cols.catalog, &isnull),
							get_col(oldtup, desc, cols.ns, &isnull),
							get_col(oldtup, desc, cols.name, &isnull),
							get_col(newtup, desc, cols.catalog, &isnull),
							get_col(newtup, desc, cols.ns, &isnull),
							get_col(newtup, desc, cols.name, &isnull));
		}

		if (!same_catalog)
		{
			/* moved to another catalog: gone from one, created in the other */
			fill_row(&row, SKADE_OP_DROP, oldtup, desc, &cols);
			row_as_dropped(&row);
			append_row(&row);
			fill_row(&row, SKADE_OP_CREATE, newtup, desc, &cols);
			append_row(&row);
		}
		else if (!same_ident || !same_location)
		{
			fill_row(&row, same_ident ? SKADE_OP_COMMIT : SKADE_OP_RENAME,
					 newtup, desc, &cols);
			set_arg(&row, L_PREVIOUS, o, on);
			if (!same_ident)
			{
				n = get_col(oldtup, desc, cols.ns, &nn);
				set_arg(&row, L_PREV_NS, n, nn);
				n = get_col(oldtup, desc, cols.name, &nn);
				set_arg(&row, L_PREV_NAME, n, nn);
			}
			append_row(&row);
		}
		/* otherwise no pointer changed (e.g. only previous_metadata_location) */
	}
	else
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("skade.log_pointer_change() fired by an unexpected event")));

	return PointerGetDatum(NULL);
}

/*
 * skade_log_truncate
 *		BEFORE TRUNCATE FOR EACH STATEMENT on iceberg_tables: every table
 *		that is about to disappear is logged as dropped.
 */
Datum
skade_log_truncate(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;
	Relation	rel;
	StringInfoData sql;
	PointerColumns cols;
	SkadeSafeSql safe;
	SPITupleTable *tables;
	uint64		ntables;
	uint64		i;
	char	   *role = GetUserNameFromId(GetUserId(), false);

	if (!CALLED_AS_TRIGGER(fcinfo) ||
		!TRIGGER_FIRED_BY_TRUNCATE(trigdata->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("skade.log_truncate() must be a TRUNCATE trigger")));

	rel = trigdata->tg_relation;
	resolve_columns(rel, &cols);
	{
		/* every entry of this catalog table, whatever the trigger version */
		MirrorScope scope = {MyDatabaseId, RelationGetRelid(rel)};

		MirrorNoteTruncate(&scope);
	}
	SnapshotMapTruncate();

	/*
	 * The tables first, then one row each, its seq reserved as the trigger's
	 * rows are (change_feed.c), so the feed hands none of them out early.
	 */
	initStringInfo(&sql);
	appendStringInfo(&sql,
					 "SELECT catalog_name::text, table_namespace::text, table_name::text, %s,"
					 " metadata_location::text FROM %s.%s"
					 " ORDER BY catalog_name, table_namespace, table_name",
					 cols.type ? "COALESCE(iceberg_type, 'TABLE')::text" : "'TABLE'::text",
					 quote_identifier(get_namespace_name(RelationGetNamespace(rel))),
					 quote_identifier(RelationGetRelationName(rel)));

	SkadeSafeSqlBegin(&safe, SkadeCatalogOwner());
	SPI_connect();
	if (SPI_execute(sql.data, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the truncated tables");
	tables = SPI_tuptable;
	ntables = SPI_processed;
	for (i = 0; i < ntables; i++)
		log_truncated(tables, i, role);
	if (ntables > 0)
	{
		SkadeApplyDurability();
		if (skade_shared)
			pg_atomic_fetch_add_u64(&skade_shared->commits, ntables);
	}
	SPI_finish();
	SkadeSafeSqlEnd(&safe);

	return PointerGetDatum(NULL);
}

/* one truncated table (row i of tables: catalog, namespace, name, type, location) logged as dropped */
static void
log_truncated(SPITupleTable *tables, uint64 i, const char *role)
{
	Oid			types[8] = {INT8OID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID};
	Datum		args[8];
	char		nulls[9] = "        ";
	Datum		pending;
	int64		seq;
	int			k;

	for (k = 0; k < 5; k++)
	{
		bool		isnull;

		args[k + 2] = SPI_getbinval(tables->vals[i], tables->tupdesc, k + 1, &isnull);
		if (isnull)
			nulls[k + 2] = 'n';
	}
	/* (after the read: SPI_getbinval's datums live in the SELECT's tuple table) */
	args[1] = CStringGetTextDatum(current_api_op ? "api" : "sql");
	args[7] = CStringGetTextDatum(role);
	seq = SkadeCommitLogReserve(&pending);
	args[0] = Int64GetDatum(seq);
	if (SPI_execute_with_args("INSERT INTO skade.commit_log (seq, op, source, catalog_name,"
							  " table_namespace, table_name, iceberg_type, metadata_location,"
							  " previous_metadata_location, committed_by) OVERRIDING SYSTEM VALUE"
							  " VALUES ($1, 'drop', $2, $3, $4, $5, $6, NULL, $7, $8)",
							  8, types, args, nulls, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not log a truncated table");
	SkadeFeedRecord(seq, pending, NULL, NULL, false);
}

/*
 * SkadeCommitLogAllow
 *		Let this backend's next UPDATEs (SKADE_LOG_ALLOW_UPDATE) or DELETEs
 *		(SKADE_LOG_ALLOW_DELETE) of skade.commit_log through its append-only
 *		trigger, until called again with the previous value it returns (in
 *		a PG_FINALLY).
 */
int
SkadeCommitLogAllow(int what)
{
	int			prev = log_allowed;

	log_allowed = what;
	return prev;
}

/*
 * skade_commit_log_append_only
 *		BEFORE UPDATE OR DELETE (row) / TRUNCATE (statement) on
 *		skade.commit_log: the log is append-only.
 */
Datum
skade_commit_log_append_only(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;

	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("skade.commit_log_append_only() must be called as a trigger")));

	/* the exceptions: skade.resolve_commit_log() filling a snapshot id, and
	 * skade.prune_commit_log() moving rows to the archive */
	if ((log_allowed & SKADE_LOG_ALLOW_UPDATE) && TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event))
		return PointerGetDatum(trigdata->tg_newtuple);
	if ((log_allowed & SKADE_LOG_ALLOW_DELETE) && TRIGGER_FIRED_BY_DELETE(trigdata->tg_event))
		return PointerGetDatum(trigdata->tg_trigtuple);

	ereport(ERROR,
			(errcode(ERRCODE_S_R_E_PROHIBITED_SQL_STATEMENT_ATTEMPTED),
			 errmsg("skade.commit_log is append-only"),
			 errdetail("Rows of the commit log can be neither updated nor deleted.")));
	PG_RETURN_NULL();			/* keep compiler quiet */
}

/*
 * Find the JDBC columns by name (any client's column order is accepted) and
 * check their types and nullability.
 */
static void
resolve_columns(Relation rel, PointerColumns *cols)
{
	TupleDesc	desc = RelationGetDescr(rel);

	cols->catalog = SPI_fnumber(desc, "catalog_name");
	cols->ns = SPI_fnumber(desc, "table_namespace");
	cols->name = SPI_fnumber(desc, "table_name");
	cols->location = SPI_fnumber(desc, "metadata_location");
	cols->previous = SPI_fnumber(desc, "previous_metadata_location");
	cols->type = SPI_fnumber(desc, "iceberg_type");
	if (cols->catalog <= 0 || cols->ns <= 0 || cols->name <= 0 ||
		cols->location <= 0 || cols->previous <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("relation \"%s\" is not a JDBC catalog table",
						RelationGetRelationName(rel)),
				 errdetail("It lacks one of catalog_name, table_namespace, table_name, metadata_location, previous_metadata_location.")));
	if (cols->type <= 0)
		cols->type = 0;
	check_column(rel, cols->catalog, true);
	check_column(rel, cols->ns, true);
	check_column(rel, cols->name, true);
	check_column(rel, cols->location, false);
	check_column(rel, cols->previous, false);
	if (cols->type)
		check_column(rel, cols->type, false);
}

/*
 * A column the trigger reads as text must be text or varchar (or a domain
 * over them), and a key column NOT NULL: an owner's ALTER TABLE must not
 * make the trigger read other datums as text.
 */
static void
check_column(Relation rel, int attnum, bool key)
{
	Form_pg_attribute att = TupleDescAttr(RelationGetDescr(rel), attnum - 1);
	Oid			type = att->atttypid;

	/* (every change runs this: no catalog lookup for the JDBC DDL's own types) */
	if (type != TEXTOID && type != VARCHAROID)
		type = getBaseType(type);
	if (type != TEXTOID && type != VARCHAROID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("column \"%s\" of relation \"%s\" has type %s",
						NameStr(att->attname), RelationGetRelationName(rel),
						format_type_be(att->atttypid)),
				 errdetail("skade records the JDBC catalog's columns as text; they must be varchar or text."),
				 errhint("Restore the column's type as the Iceberg JDBC catalog defines it.")));
	if (key && !att->attnotnull)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("column \"%s\" of relation \"%s\" must be NOT NULL",
						NameStr(att->attname), RelationGetRelationName(rel)),
				 errdetail("A table is named by catalog_name, table_namespace and table_name; none may be null."),
				 errhint("Restore the primary key the Iceberg JDBC catalog defines.")));
}

static Datum
get_col(HeapTuple tuple, TupleDesc desc, int attnum, bool *isnull)
{
	return heap_getattr(tuple, attnum, desc, isnull);
}

/*
 * skade.commit_log's OID (also caching its seq sequence), until the next
 * pg_class invalidation.
 */
static Oid
commit_log_relid(void)
{
	static bool callback_registered = false;
	Oid			relid;

	if (OidIsValid(cached_log_relid))
		return cached_log_relid;
	if (!callback_registered)
	{
		CacheRegisterSyscacheCallback(RELOID, log_owner_invalidate, (Datum) 0);
		callback_registered = true;
	}
	/*
	 * Work in a local: the catalog lookup below may process invalidations,
	 * which reset the cache through log_owner_invalidate.
	 */
	relid = get_relname_relid("commit_log", get_namespace_oid("skade", false));
	if (!OidIsValid(relid))
		elog(ERROR, "skade.commit_log is missing");
	cached_log_seq = InvalidOid;	/* looked up where the log is open */
	cached_log_relid = relid;
	return relid;
}

static void
log_owner_invalidate(Datum arg, int cacheid, uint32 hashvalue)
{
	cached_log_relid = InvalidOid;
}

/* the identity sequence of seq, looked up with the log open ((17) it takes the Relation) */
static Oid
log_seq_relid(Relation rel)
{
	Oid			seq_relid = cached_log_seq;

	if (!OidIsValid(cached_log_relid) || !OidIsValid(seq_relid))
	{
		seq_relid = getIdentitySequence(rel, C_SEQ + 1, false);
		if (OidIsValid(cached_log_relid))
			cached_log_seq = seq_relid;
	}
	return seq_relid;
}

/*
 * SkadeCommitLogReserve
 *		A seq for a commit-log row the caller inserts itself (OVERRIDING
 *		SYSTEM VALUE), reserved as the trigger's rows are; *pending for
 *		SkadeFeedRecord once the row is in.
 */
int64
SkadeCommitLogReserve(Datum *pending)
{
	Relation	rel = table_open(commit_log_relid(), RowExclusiveLock);
	int64		seq = SkadeFeedReserve(log_seq_relid(rel), pending);

	table_close(rel, NoLock);
	return seq;
}

static void
set_arg(LogRow *row, LogArg arg, Datum value, bool isnull)
{
	row->v[arg] = value;
	row->n[arg] = isnull ? 'n' : ' ';
}

/* Fill a log row from one iceberg_tables tuple (current location, no previous) */
static void
fill_row(LogRow *row, const char *op, HeapTuple tuple, TupleDesc desc,
		 const PointerColumns *cols)
{
	Datum		d;
	bool		isnull;

	set_arg(row, L_OP, CStringGetTextDatum(op), false);
	set_arg(row, L_SOURCE, CStringGetTextDatum(current_api_op ? "api" : "sql"), false);
	d = get_col(tuple, desc, cols->catalog, &isnull);
	set_arg(row, L_CATALOG, d, isnull);
	d = get_col(tuple, desc, cols->ns, &isnull);
	set_arg(row, L_NS, d, isnull);
	d = get_col(tuple, desc, cols->name, &isnull);
	set_arg(row, L_NAME, d, isnull);
	isnull = true;
	if (cols->type)
		d = get_col(tuple, desc, cols->type, &isnull);
	/* NULL iceberg_type means TABLE (JDBC contract) */
	set_arg(row, L_TYPE, isnull ? CStringGetTextDatum("TABLE") : d, false);
	d = get_col(tuple, desc, cols->location, &isnull);
	set_arg(row, L_LOCATION, d, isnull);
	set_arg(row, L_PREVIOUS, (Datum) 0, true);
	set_arg(row, L_PREV_NS, (Datum) 0, true);
	set_arg(row, L_PREV_NAME, (Datum) 0, true);
	set_arg(row, L_ROLE, CStringGetTextDatum(GetUserNameFromId(GetUserId(), false)), false);
	set_arg(row, L_SNAPSHOT, (Datum) 0, true);
}

/* After a drop there is no current location; the old one becomes previous. */
static void
row_as_dropped(LogRow *row)
{
	set_arg(row, L_PREVIOUS, row->v[L_LOCATION], row->n[L_LOCATION] == 'n');
	set_arg(row, L_LOCATION, (Datum) 0, true);
}

/*
 * Append one row to skade.commit_log and remember its seq.
 *
 * The row is inserted directly (heap and indexes, via
 * ExecSimpleRelationInsert, as logical replication applies rows), not via
 * SQL: no planning, no executor start-up, no privilege check: the trigger is
 * the log's only writer, and the role that made the change is recorded in
 * committed_by.  Column defaults are computed here, with the same meaning.
 */
static void
append_row(LogRow *row)
{
	Relation	rel;
	EState	   *estate;
	RangeTblEntry *rte;
	List	   *perminfos = NIL;
	ResultRelInfo *rri;
	TupleTableSlot *slot;
	TupleDesc	desc;
	Datum		values[LOG_NCOLS];
	bool		nulls[LOG_NCOLS];
	NameData	role;
	Oid			seq_relid;
	Datum		pending;
	int			i;

	SkadeMeta  *meta = NULL;
	SkadeMeta  *old = NULL;
	SkadeRoute	route = {NULL, NULL, NULL};

	/* read the new metadata (by its namespace's route) into L0 and note its current snapshot (a view has none) */
	if (row->n[L_CATALOG] != 'n' && row->n[L_NS] != 'n')
	{
		route.catalog = TextDatumGetCString(row->v[L_CATALOG]);
		route.ns = TextDatumGetCString(row->v[L_NS]);
	}
	if (row->n[L_LOCATION] != 'n' &&
		(row->n[L_TYPE] == 'n' || strcmp(TextDatumGetCString(row->v[L_TYPE]), "VIEW") != 0) &&
		SkadeWarmMetadata(&route, TextDatumGetCString(row->v[L_LOCATION]),
						  row->n[L_PREVIOUS] != 'n' ?
						  TextDatumGetCString(row->v[L_PREVIOUS]) : NULL,
						  &meta, &old))
		set_arg(row, L_SNAPSHOT, Int64GetDatum(meta->current_snapshot_id), false);

	rel = table_open(commit_log_relid(), RowExclusiveLock);
	seq_relid = log_seq_relid(rel);
	desc = RelationGetDescr(rel);
	/* before 1.9 (the library updated, ALTER EXTENSION not yet run): no detail */
	if (desc->natts != LOG_NCOLS && desc->natts != C_DETAIL)
		elog(ERROR, "skade.commit_log has %d columns, expected %d", desc->natts, LOG_NCOLS);

	/* the seq, beside the catalog writers still in progress (change_feed.c) */
	last_seq = SkadeFeedReserve(seq_relid, &pending);
	values[C_SEQ] = Int64GetDatum(last_seq);
	for (i = 0; i < LOG_NARGS; i++)
	{
		if (log_arg_column[i] < 0)
			continue;
		values[log_arg_column[i]] = row->v[i];
		nulls[log_arg_column[i]] = row->n[i] == 'n';
	}
	nulls[C_SEQ] = false;
	namestrcpy(&role, TextDatumGetCString(row->v[L_ROLE]));
	values[C_BY] = NameGetDatum(&role);
	nulls[C_BY] = false;
	values[C_AT] = TimestampTzGetDatum(GetCurrentTimestamp());
	nulls[C_AT] = false;
	values[C_XACT] = FullTransactionIdGetDatum(GetTopFullTransactionId());
	nulls[C_XACT] = false;
	values[C_DETAIL] = (Datum) 0;
	nulls[C_DETAIL] = true;

	estate = CreateExecutorState();
	rte = makeNode(RangeTblEntry);
	rte->rtekind = RTE_RELATION;
	rte->relid = RelationGetRelid(rel);
	rte->relkind = rel->rd_rel->relkind;
	rte->rellockmode = RowExclusiveLock;
	addRTEPermissionInfo(&perminfos, rte);
	ExecInitRangeTable(estate, list_make1(rte), perminfos, bms_make_singleton(1));
	rri = makeNode(ResultRelInfo);
	InitResultRelInfo(rri, rel, 1, NULL, 0);
	estate->es_output_cid = GetCurrentCommandId(true);
	ExecOpenIndices(rri, false);

	slot = ExecInitExtraTupleSlot(estate, desc, &TTSOpsVirtual);
	ExecClearTuple(slot);
	memcpy(slot->tts_values, values, sizeof(Datum) * desc->natts);
	memcpy(slot->tts_isnull, nulls, sizeof(bool) * desc->natts);
	ExecStoreVirtualTuple(slot);
	ExecSimpleRelationInsert(rri, estate, slot);

	ExecCloseIndices(rri);
	ExecResetTupleTable(estate->es_tupleTable, false);
	FreeExecutorState(estate);
	table_close(rel, NoLock);

	/* the feed row: the writers listed, the snapshots added and removed (known when both sides were read) */
	SkadeFeedRecord(last_seq, pending, meta, old,
					meta != NULL && (old != NULL || row->n[L_PREVIOUS] == 'n'));

	/* its snapshots become resolvable (snapshot_map, the index's source) */
	if (meta)
		SnapshotMapRecord(last_seq, row->v[L_CATALOG], row->v[L_NS], row->v[L_NAME],
						  TextDatumGetCString(row->v[L_LOCATION]),
						  DatumGetTimestampTz(values[C_AT]), meta, old);

	SkadeApplyDurability();
	if (skade_shared)
		pg_atomic_fetch_add_u64(&skade_shared->commits, 1);
}

/* Tell the pointer mirror about one changed row version. */
static void
note_mirror(const MirrorScope *scope, HeapTuple tuple, TupleDesc desc,
			const PointerColumns *cols, bool removed)
{
	bool		isnull;
	Datum		d;
	char	   *catalog;
	char	   *ns;
	char	   *name;
	char	   *location = NULL;
	char	   *previous = NULL;
	bool		is_view = false;

	d = get_col(tuple, desc, cols->catalog, &isnull);
	catalog = TextDatumGetCString(d);
	d = get_col(tuple, desc, cols->ns, &isnull);
	ns = TextDatumGetCString(d);
	d = get_col(tuple, desc, cols->name, &isnull);
	name = TextDatumGetCString(d);
	d = get_col(tuple, desc, cols->location, &isnull);
	if (!isnull)
		location = TextDatumGetCString(d);
	d = get_col(tuple, desc, cols->previous, &isnull);
	if (!isnull)
		previous = TextDatumGetCString(d);
	if (cols->type)
	{
		d = get_col(tuple, desc, cols->type, &isnull);
		is_view = !isnull && strcmp(TextDatumGetCString(d), "VIEW") == 0;
	}
	MirrorNoteChange(scope, catalog, ns, name, removed, location, previous, is_view);
}

/* Equality of two text-like datums, NULL-aware (IS NOT DISTINCT FROM). */
static bool
datum_text_equal(Datum a, bool a_null, Datum b, bool b_null)
{
	if (a_null || b_null)
		return a_null == b_null;
	return DatumGetBool(DirectFunctionCall2Coll(texteq, C_COLLATION_OID, a, b));
}
