/*-------------------------------------------------------------------------
 *
 * restore.c
 *	  Lets a pg_dump of a skade database restore exactly, while CREATE
 *	  EXTENSION skade stays the one step that sets a new database up.
 *
 * CREATE EXTENSION skade creates the JDBC catalog tables in schema public
 * (empty, attached: commit-log trigger, prefix index, grants) and then
 * releases them from the extension, so that they are the user's tables:
 * pg_dump dumps their definition, their rows, their triggers and grants like
 * any table's, and DROP EXTENSION leaves them.  A dump therefore holds
 * CREATE EXTENSION skade first and CREATE TABLE public.iceberg_tables
 * later, rows in between and the triggers last (post-data).
 *
 * When a CREATE TABLE (without IF NOT EXISTS) names one of those two tables
 * and the table there is still exactly what CREATE EXTENSION made of it --
 * created in the same transaction as the extension, no row in it, and
 * skade.commit_log empty -- the statement is a restore (or a client that
 * wants its own DDL): the untouched table is dropped first and the
 * statement runs as written.  The restored rows then arrive with no trigger
 * (the dump's post-data section attaches it again), skade.commit_log and
 * skade.snapshot_map arrive as the extension's configuration tables, and the
 * history is the dumped one, seq for seq.  A table holding anything, or
 * created later, is never touched: such a CREATE TABLE fails as before.
 *
 * Locking: the table is locked AccessExclusive before it is examined;
 * performDeletion does the rest.
 *
 * IDENTIFICATION
 *	  src/catalog/restore.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/dependency.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_extension.h"
#include "commands/extension.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "storage/lmgr.h"
#include "tcop/utility.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "catalog/restore.h"

static ProcessUtility_hook_type prev_utility = NULL;

static void restore_utility(PlannedStmt *pstmt, const char *queryString,
							bool readOnlyTree, ProcessUtilityContext context,
							ParamListInfo params, QueryEnvironment *queryEnv,
							DestReceiver *dest, QueryCompletion *qc);
static void replace_untouched(const CreateStmt *stmt);
static bool untouched(Oid relid, Oid extoid);
static TransactionId extension_xmin(Oid extoid);
static TransactionId row_xmin(int cacheid, Oid oid);
static bool relation_is_empty(Oid relid);

/* _PG_init, in every process that loads skade */
void
SkadeRestoreInit(void)
{
	prev_utility = ProcessUtility_hook;
	ProcessUtility_hook = restore_utility;
}

static void
restore_utility(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree,
				ProcessUtilityContext context, ParamListInfo params,
				QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc)
{
	Node	   *parsetree = pstmt->utilityStmt;

	if (IsA(parsetree, CreateStmt) && !((CreateStmt *) parsetree)->if_not_exists)
		replace_untouched((CreateStmt *) parsetree);

	if (prev_utility)
		prev_utility(pstmt, queryString, readOnlyTree, context, params, queryEnv,
					 dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context, params,
								queryEnv, dest, qc);
}

/*
 * If stmt creates public.iceberg_tables or public.iceberg_namespace_properties
 * over the untouched table CREATE EXTENSION skade made, drop that table.
 */
static void
replace_untouched(const CreateStmt *stmt)
{
	const RangeVar *rv = stmt->relation;
	Oid			extoid;
	Oid			nsp;
	Oid			relid;
	ObjectAddress obj;

	if (strcmp(rv->relname, "iceberg_tables") != 0 &&
		strcmp(rv->relname, "iceberg_namespace_properties") != 0)
		return;
	if (rv->relpersistence == RELPERSISTENCE_TEMP || rv->catalogname != NULL)
		return;
	if (!IsTransactionState() || creating_extension)
		return;
	extoid = get_extension_oid("skade", true);
	if (!OidIsValid(extoid))
		return;
	nsp = rv->schemaname ? get_namespace_oid(rv->schemaname, true)
		: RangeVarGetCreationNamespace(rv);
	if (nsp != get_namespace_oid("public", true) || !OidIsValid(nsp))
		return;
	relid = get_relname_relid(rv->relname, nsp);
	if (!OidIsValid(relid) || get_rel_relkind(relid) != RELKIND_RELATION)
		return;
	LockRelationOid(relid, AccessExclusiveLock);
	if (!untouched(relid, extoid))
		return;

	ereport(NOTICE,
			(errmsg("replacing the empty table public.%s that CREATE EXTENSION skade created",
					rv->relname),
			 errdetail("This CREATE TABLE restores a dump (or brings its own definition); the dump's rows, triggers and grants follow.")));
	obj.classId = RelationRelationId;
	obj.objectId = relid;
	obj.objectSubId = 0;
	performDeletion(&obj, DROP_RESTRICT, 0);
	CommandCounterIncrement();
}

/*
 * Is relid what CREATE EXTENSION made of it: created by the transaction that
 * created the extension, empty, and no change logged yet?
 */
static bool
untouched(Oid relid, Oid extoid)
{
	TransactionId rel_xmin = row_xmin(RELOID, relid);
	Oid			log;

	if (!TransactionIdIsValid(rel_xmin) ||
		!TransactionIdEquals(rel_xmin, extension_xmin(extoid)))
		return false;
	if (!relation_is_empty(relid))
		return false;
	log = get_relname_relid("commit_log", get_namespace_oid("skade", true));
	return OidIsValid(log) && relation_is_empty(log);
}

/* xmin of the pg_extension row of extoid */
static TransactionId
extension_xmin(Oid extoid)
{
	Relation	rel = table_open(ExtensionRelationId, AccessShareLock);
	SysScanDesc scan;
	ScanKeyData key;
	HeapTuple	tup;
	TransactionId xmin = InvalidTransactionId;

	ScanKeyInit(&key, Anum_pg_extension_oid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(extoid));
	scan = systable_beginscan(rel, ExtensionOidIndexId, true, NULL, 1, &key);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
		xmin = HeapTupleHeaderGetRawXmin(tup->t_data);
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return xmin;
}

/* xmin of a syscache row (InvalidTransactionId if there is none) */
static TransactionId
row_xmin(int cacheid, Oid oid)
{
	HeapTuple	tup = SearchSysCache1(cacheid, ObjectIdGetDatum(oid));
	TransactionId xmin;

	if (!HeapTupleIsValid(tup))
		return InvalidTransactionId;
	xmin = HeapTupleHeaderGetRawXmin(tup->t_data);
	ReleaseSysCache(tup);
	return xmin;
}

/* Does the relation hold no row that any transaction might still see? */
static bool
relation_is_empty(Oid relid)
{
	Relation	rel = table_open(relid, AccessShareLock);
	TableScanDesc scan;
	TupleTableSlot *slot = table_slot_create(rel, NULL);
	bool		empty;

	scan = table_beginscan(rel, SnapshotAny, 0, NULL);
	empty = !table_scan_getnextslot(scan, ForwardScanDirection, slot);
	table_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	table_close(rel, AccessShareLock);
	return empty;
}
