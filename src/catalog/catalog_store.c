/*-------------------------------------------------------------------------
 *
 * catalog_store.c
 *	  Read and change the JDBC catalog tables (public.iceberg_tables and
 *	  public.iceberg_namespace_properties) through SPI.
 *
 * This is the only file that knows those tables' columns.  Every statement
 * is prepared once per backend and kept (SPI_keepplan, CacheMemoryContext);
 * plan invalidation re-plans them if the tables are altered.  Statements use
 * exactly the semantics the JDBC clients rely on:
 *   - a namespace exists if any row of either table has namespace = X or a
 *     namespace starting with "X." (the clients' LIKE 'X.%' probe, written
 *     here as a byte-wise range so the varchar_pattern_ops index serves it
 *     even with a generic plan);
 *   - iceberg_type NULL means TABLE; table statements filter on it;
 *   - a commit is one compare-and-swap UPDATE on metadata_location; the row
 *     lock it takes serialises concurrent commits to one table.
 * Every change fires the commit-log trigger (commit_log.c).
 *
 * Statements run as the caller, under the pinned search_path of safe_sql.c.
 * Callers run inside a transaction; each function connects to SPI itself
 * and returns its results palloc'd in the caller's memory context.
 * Read-only functions run with read_only = true, i.e. on the caller's
 * snapshot, as STABLE SQL functions must.
 *
 * IDENTIFICATION
 *	  src/catalog/catalog_store.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "nodes/makefuncs.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/rel.h"

#include "catalog/catalog_store.h"
#include "cache/pointer_mirror.h"
#include "util/safe_sql.h"

typedef enum StoreQueryId
{
	Q_CATALOG_EXISTS,
	Q_NS_EXISTS,
	Q_NS_HAS_OBJECTS,
	Q_NS_HAS_CHILDREN,
	Q_LIST_NS_TOP,
	Q_LIST_NS_CHILDREN,
	Q_NS_PROPERTIES,
	Q_INSERT_PROPERTIES,
	Q_UPSERT_PROPERTIES,
	Q_REMOVE_PROPERTIES,
	Q_DELETE_NAMESPACE,
	Q_GET_TABLE,
	Q_LOCK_TABLE,
	Q_LIST_TABLES,
	Q_INSERT_TABLE,
	Q_CAS_TABLE,
	Q_RENAME_TABLE,
	Q_DELETE_TABLE,
	Q_INSERT_VIEW,
	Q_CAS_VIEW,
	Q_RENAME_VIEW,
	Q_DELETE_VIEW,
	Q_COUNT
} StoreQueryId;

typedef struct StoreQuery
{
	const char *sql;
	int			nargs;
	Oid			argtypes[5];
} StoreQuery;

#define T TEXTOID
#define TABLE_FILTER " AND (iceberg_type = 'TABLE' OR iceberg_type IS NULL)"
#define VIEW_FILTER " AND iceberg_type = 'VIEW'"
/* $lo/$hi bound the namespaces that start with "X." : ["X.", "X/") */
#define NS_OR_CHILD(col, eq, lo, hi) \
	" (" col " = " eq " OR (" col " ~>=~ " lo " AND " col " ~<~ " hi "))"

static const StoreQuery store_queries[Q_COUNT] = {
	[Q_CATALOG_EXISTS] = {
		"SELECT EXISTS (SELECT 1 FROM public.iceberg_tables WHERE catalog_name = $1)"
		" OR EXISTS (SELECT 1 FROM public.iceberg_namespace_properties WHERE catalog_name = $1)",
		1, {T}},
	[Q_NS_EXISTS] = {
		"SELECT EXISTS (SELECT 1 FROM public.iceberg_tables WHERE catalog_name = $1 AND"
		NS_OR_CHILD("table_namespace", "$2", "$3", "$4") ")"
		" OR EXISTS (SELECT 1 FROM public.iceberg_namespace_properties WHERE catalog_name = $1 AND"
		NS_OR_CHILD("namespace", "$2", "$3", "$4") ")",
		4, {T, T, T, T}},
	[Q_NS_HAS_OBJECTS] = {
		"SELECT EXISTS (SELECT 1 FROM public.iceberg_tables"
		" WHERE catalog_name = $1 AND table_namespace = $2)",
		2, {T, T}},
	[Q_NS_HAS_CHILDREN] = {
		"SELECT EXISTS (SELECT 1 FROM public.iceberg_tables WHERE catalog_name = $1"
		" AND table_namespace ~>=~ $2 AND table_namespace ~<~ $3)"
		" OR EXISTS (SELECT 1 FROM public.iceberg_namespace_properties WHERE catalog_name = $1"
		" AND namespace ~>=~ $2 AND namespace ~<~ $3)",
		3, {T, T, T}},
	[Q_LIST_NS_TOP] = {
		"SELECT DISTINCT split_part(ns, '.', 1) COLLATE \"C\" AS child FROM ("
		" SELECT table_namespace::text AS ns FROM public.iceberg_tables WHERE catalog_name = $1"
		" UNION ALL SELECT namespace::text FROM public.iceberg_namespace_properties"
		" WHERE catalog_name = $1) s WHERE ns <> '' ORDER BY 1",
		1, {T}},
	[Q_LIST_NS_CHILDREN] = {
		"SELECT DISTINCT ($2 || split_part(substr(ns, length($2) + 1), '.', 1)) COLLATE \"C\""
		" AS child FROM ("
		" SELECT table_namespace::text AS ns FROM public.iceberg_tables WHERE catalog_name = $1"
		" AND table_namespace ~>=~ $2 AND table_namespace ~<~ $3"
		" UNION ALL SELECT namespace::text FROM public.iceberg_namespace_properties"
		" WHERE catalog_name = $1 AND namespace ~>=~ $2 AND namespace ~<~ $3) s ORDER BY 1",
		3, {T, T, T}},
	[Q_NS_PROPERTIES] = {
		"SELECT COALESCE(jsonb_object_agg(property_key, property_value), '{}')"
		" FROM public.iceberg_namespace_properties"
		" WHERE catalog_name = $1 AND namespace = $2 AND property_key <> 'exists'",
		2, {T, T}},
	[Q_INSERT_PROPERTIES] = {
		"INSERT INTO public.iceberg_namespace_properties"
		" (catalog_name, namespace, property_key, property_value)"
		" SELECT $1, $2, key, value FROM jsonb_each_text($3)",
		3, {T, T, JSONBOID}},
	[Q_UPSERT_PROPERTIES] = {
		"INSERT INTO public.iceberg_namespace_properties"
		" (catalog_name, namespace, property_key, property_value)"
		" SELECT $1, $2, key, value FROM jsonb_each_text($3)"
		" ON CONFLICT (catalog_name, namespace, property_key)"
		" DO UPDATE SET property_value = EXCLUDED.property_value"
		" RETURNING property_key::text",
		3, {T, T, JSONBOID}},
	[Q_REMOVE_PROPERTIES] = {
		"DELETE FROM public.iceberg_namespace_properties"
		" WHERE catalog_name = $1 AND namespace = $2 AND property_key = ANY ($3)"
		" RETURNING property_key::text",
		3, {T, T, TEXTARRAYOID}},
	[Q_DELETE_NAMESPACE] = {
		"DELETE FROM public.iceberg_namespace_properties"
		" WHERE catalog_name = $1 AND namespace = $2",
		2, {T, T}},
	[Q_GET_TABLE] = {
		"SELECT metadata_location::text, previous_metadata_location::text,"
		" COALESCE(iceberg_type = 'VIEW', false), xmin, xmax"
		" FROM public.iceberg_tables"
		" WHERE catalog_name = $1 AND table_namespace = $2 AND table_name = $3",
		3, {T, T, T}},
	[Q_LOCK_TABLE] = {
		"SELECT metadata_location::text FROM public.iceberg_tables"
		" WHERE catalog_name = $1 AND table_namespace = $2 AND table_name = $3"
		TABLE_FILTER " FOR UPDATE",
		3, {T, T, T}},
	[Q_LIST_TABLES] = {
		"SELECT table_name::text FROM public.iceberg_tables"
		" WHERE catalog_name = $1 AND table_namespace = $2" TABLE_FILTER
		" ORDER BY table_name COLLATE \"C\"",
		2, {T, T}},
	[Q_INSERT_TABLE] = {
		"INSERT INTO public.iceberg_tables (catalog_name, table_namespace, table_name,"
		" metadata_location, previous_metadata_location, iceberg_type)"
		" VALUES ($1, $2, $3, $4, NULL, 'TABLE')",
		4, {T, T, T, T}},
	[Q_CAS_TABLE] = {
		"UPDATE public.iceberg_tables"
		" SET metadata_location = $5, previous_metadata_location = metadata_location"
		" WHERE catalog_name = $1 AND table_namespace = $2 AND table_name = $3"
		" AND metadata_location = $4" TABLE_FILTER,
		5, {T, T, T, T, T}},
	[Q_RENAME_TABLE] = {
		"UPDATE public.iceberg_tables SET table_namespace = $4, table_name = $5"
		" WHERE catalog_name = $1 AND table_namespace = $2 AND table_name = $3"
		TABLE_FILTER,
		5, {T, T, T, T, T}},
	[Q_DELETE_TABLE] = {
		"DELETE FROM public.iceberg_tables"
		" WHERE catalog_name = $1 AND table_namespace = $2 AND table_name = $3"
		TABLE_FILTER " RETURNING metadata_location::text",
		3, {T, T, T}},
	/* views: StoreChangeView's four changes, in StoreViewChange's order */
	[Q_INSERT_VIEW] = {
		"INSERT INTO public.iceberg_tables (catalog_name, table_namespace, table_name,"
		" metadata_location, previous_metadata_location, iceberg_type)"
		" VALUES ($1, $2, $3, $4, NULL, 'VIEW')",
		4, {T, T, T, T}},
	[Q_CAS_VIEW] = {
		"UPDATE public.iceberg_tables"
		" SET metadata_location = $5, previous_metadata_location = metadata_location"
		" WHERE catalog_name = $1 AND table_namespace = $2 AND table_name = $3"
		" AND metadata_location = $4" VIEW_FILTER,
		5, {T, T, T, T, T}},
	[Q_RENAME_VIEW] = {
		"UPDATE public.iceberg_tables SET table_namespace = $4, table_name = $5"
		" WHERE catalog_name = $1 AND table_namespace = $2 AND table_name = $3"
		VIEW_FILTER,
		5, {T, T, T, T, T}},
	[Q_DELETE_VIEW] = {
		"DELETE FROM public.iceberg_tables"
		" WHERE catalog_name = $1 AND table_namespace = $2 AND table_name = $3"
		VIEW_FILTER,
		3, {T, T, T}},
};

#undef T

/* prepared plans, kept for the life of the backend */
static SPIPlanPtr store_plans[Q_COUNT];

/* has this backend seen iceberg_tables attached since the last invalidation? */
static bool attached_checked = false;
static bool callback_registered = false;
static Oid	attached_relid = InvalidOid;
static MirrorScope attached_scope;	/* valid while attached_checked */

/* the caller's memory context while connected to SPI: results go there */
static MemoryContext caller_cxt = NULL;

static void store_connect(void);
static void check_attached(void);
static void attached_invalidate(Datum arg, Oid relid);
static int	store_exec(StoreQueryId id, Datum *args, bool read_only);
static bool store_bool_result(void);
static char *store_text_result(uint64 row, int col);
static List *store_text_column(void);
static void prefix_bounds(const char *ns, Datum *lo, Datum *hi);

/* ---------------------------------------------------------------- namespaces */

bool
StoreCatalogExists(const char *catalog)
{
	Datum		args[1] = {CStringGetTextDatum(catalog)};
	bool		result;

	store_connect();
	store_exec(Q_CATALOG_EXISTS, args, true);
	result = store_bool_result();
	SPI_finish();
	return result;
}

bool
StoreNamespaceExists(const char *catalog, const char *ns)
{
	Datum		args[4];
	bool		result;

	args[0] = CStringGetTextDatum(catalog);
	args[1] = CStringGetTextDatum(ns);
	prefix_bounds(ns, &args[2], &args[3]);
	store_connect();
	store_exec(Q_NS_EXISTS, args, true);
	result = store_bool_result();
	SPI_finish();
	return result;
}

/* Does any table or view live directly in ns? */
bool
StoreNamespaceHasObjects(const char *catalog, const char *ns)
{
	Datum		args[2] = {CStringGetTextDatum(catalog), CStringGetTextDatum(ns)};
	bool		result;

	store_connect();
	store_exec(Q_NS_HAS_OBJECTS, args, true);
	result = store_bool_result();
	SPI_finish();
	return result;
}

/* Does any namespace (explicit or implied by a table) live below ns? */
bool
StoreNamespaceHasChildren(const char *catalog, const char *ns)
{
	Datum		args[3];
	bool		result;

	args[0] = CStringGetTextDatum(catalog);
	prefix_bounds(ns, &args[1], &args[2]);
	store_connect();
	store_exec(Q_NS_HAS_CHILDREN, args, true);
	result = store_bool_result();
	SPI_finish();
	return result;
}

/*
 * StoreListNamespaces
 *		Namespaces exactly one level below parent (NULL: top level), as
 *		full dot-joined names, sorted byte-wise.
 */
List *
StoreListNamespaces(const char *catalog, const char *parent)
{
	Datum		args[3];
	List	   *result;

	args[0] = CStringGetTextDatum(catalog);
	store_connect();
	if (parent == NULL)
		store_exec(Q_LIST_NS_TOP, args, true);
	else
	{
		prefix_bounds(parent, &args[1], &args[2]);
		store_exec(Q_LIST_NS_CHILDREN, args, true);
	}
	result = store_text_column();
	SPI_finish();
	return result;
}

/* Properties of ns as a jsonb object, without the "exists" marker. */
Jsonb *
StoreNamespaceProperties(const char *catalog, const char *ns)
{
	Datum		args[2] = {CStringGetTextDatum(catalog), CStringGetTextDatum(ns)};
	bool		isnull;
	Datum		d;
	Jsonb	   *result;

	store_connect();
	store_exec(Q_NS_PROPERTIES, args, true);
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	result = (Jsonb *) SPI_datumTransfer(d, false, -1);
	SPI_finish();
	return result;
}

/* Insert one row per key of props (all keys must be new). */
void
StoreInsertProperties(const char *catalog, const char *ns, Jsonb *props)
{
	Datum		args[3] = {CStringGetTextDatum(catalog), CStringGetTextDatum(ns),
	JsonbPGetDatum(props)};

	store_connect();
	store_exec(Q_INSERT_PROPERTIES, args, false);
	SPI_finish();
}

/* Insert or overwrite the keys of props; returns the keys written. */
List *
StoreUpsertProperties(const char *catalog, const char *ns, Jsonb *props)
{
	Datum		args[3] = {CStringGetTextDatum(catalog), CStringGetTextDatum(ns),
	JsonbPGetDatum(props)};
	List	   *result;

	store_connect();
	store_exec(Q_UPSERT_PROPERTIES, args, false);
	result = store_text_column();
	SPI_finish();
	return result;
}

/* Delete the given keys; returns the keys that existed. */
List *
StoreRemoveProperties(const char *catalog, const char *ns, ArrayType *keys)
{
	Datum		args[3] = {CStringGetTextDatum(catalog), CStringGetTextDatum(ns),
	PointerGetDatum(keys)};
	List	   *result;

	store_connect();
	store_exec(Q_REMOVE_PROPERTIES, args, false);
	result = store_text_column();
	SPI_finish();
	return result;
}

/* Delete every property row of ns (the caller checked it is empty). */
void
StoreDeleteNamespace(const char *catalog, const char *ns)
{
	Datum		args[2] = {CStringGetTextDatum(catalog), CStringGetTextDatum(ns)};

	store_connect();
	store_exec(Q_DELETE_NAMESPACE, args, false);
	SPI_finish();
}

/* ---------------------------------------------------------------- tables */

/*
 * StoreGetTable
 *		Look up the row of ns.name, table or view; false if there is none.
 *
 * With latest, read with a new snapshot (in READ COMMITTED: what has been
 * committed by now), e.g. to report the location that won a race; else on
 * the caller's snapshot.
 */
bool
StoreGetTable(const char *catalog, const char *ns, const char *name,
			  bool latest, StoreTable *out)
{
	Datum		args[3] = {CStringGetTextDatum(catalog), CStringGetTextDatum(ns),
	CStringGetTextDatum(name)};
	bool		found;
	bool		isnull;

	store_connect();
	store_exec(Q_GET_TABLE, args, !latest);
	found = SPI_processed > 0;
	if (found && out)
	{
		out->metadata_location = store_text_result(0, 1);
		out->previous_metadata_location = store_text_result(0, 2);
		out->is_view = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0],
												  SPI_tuptable->tupdesc, 3,
												  &isnull));
		out->xmin = DatumGetTransactionId(SPI_getbinval(SPI_tuptable->vals[0],
														SPI_tuptable->tupdesc, 4,
														&isnull));
		out->xmax = DatumGetTransactionId(SPI_getbinval(SPI_tuptable->vals[0],
														SPI_tuptable->tupdesc, 5,
														&isnull));
	}
	SPI_finish();
	return found;
}

/*
 * StoreLockTable
 *		Lock the row of table ns.name (FOR UPDATE, as update_table does:
 *		commits to it from every path queue here); its metadata location,
 *		or NULL when there is no such table.
 */
char *
StoreLockTable(const char *catalog, const char *ns, const char *name)
{
	Datum		args[3] = {CStringGetTextDatum(catalog), CStringGetTextDatum(ns),
	CStringGetTextDatum(name)};
	char	   *location = NULL;

	store_connect();
	store_exec(Q_LOCK_TABLE, args, false);
	if (SPI_processed > 0)
		location = store_text_result(0, 1);
	SPI_finish();
	return location;
}

/* Names of the tables (not views) in ns, sorted byte-wise. */
List *
StoreListTables(const char *catalog, const char *ns)
{
	Datum		args[2] = {CStringGetTextDatum(catalog), CStringGetTextDatum(ns)};
	List	   *result;

	store_connect();
	store_exec(Q_LIST_TABLES, args, true);
	result = store_text_column();
	SPI_finish();
	return result;
}

/* INSERT a new table row; a duplicate raises the primary key's 23505. */
void
StoreInsertTable(const char *catalog, const char *ns, const char *name,
				 const char *location)
{
	Datum		args[4] = {CStringGetTextDatum(catalog), CStringGetTextDatum(ns),
	CStringGetTextDatum(name), CStringGetTextDatum(location)};

	store_connect();
	store_exec(Q_INSERT_TABLE, args, false);
	SPI_finish();
}

/*
 * StoreCasTable
 *		Swap metadata_location from expected to location; false when the
 *		row is missing or holds another location (lost race).
 */
bool
StoreCasTable(const char *catalog, const char *ns, const char *name,
			  const char *expected, const char *location)
{
	Datum		args[5] = {CStringGetTextDatum(catalog), CStringGetTextDatum(ns),
		CStringGetTextDatum(name), CStringGetTextDatum(expected),
	CStringGetTextDatum(location)};
	bool		swapped;

	store_connect();
	store_exec(Q_CAS_TABLE, args, false);
	swapped = SPI_processed == 1;
	SPI_finish();
	return swapped;
}

/* Move a table row; false if there was no such table. */
bool
StoreRenameTable(const char *catalog, const char *ns, const char *name,
				 const char *new_ns, const char *new_name)
{
	Datum		args[5] = {CStringGetTextDatum(catalog), CStringGetTextDatum(ns),
		CStringGetTextDatum(name), CStringGetTextDatum(new_ns),
	CStringGetTextDatum(new_name)};
	bool		moved;

	store_connect();
	store_exec(Q_RENAME_TABLE, args, false);
	moved = SPI_processed == 1;
	SPI_finish();
	return moved;
}

/* Delete a table row; false if there was none, else *location is its last one. */
bool
StoreDeleteTable(const char *catalog, const char *ns, const char *name,
				 char **location)
{
	Datum		args[3] = {CStringGetTextDatum(catalog), CStringGetTextDatum(ns),
	CStringGetTextDatum(name)};
	bool		deleted;

	store_connect();
	store_exec(Q_DELETE_TABLE, args, false);
	deleted = SPI_processed > 0;
	*location = deleted ? store_text_result(0, 1) : NULL;
	SPI_finish();
	return deleted;
}

/*
 * StoreChangeView
 *		One change of a view's row: insert it (a: its metadata location; a
 *		duplicate raises 23505), swap its location from a to b, move it to
 *		namespace a and name b, or delete it.  Returns the rows changed (0:
 *		no such view, or the swap lost a race).
 */
uint64
StoreChangeView(StoreViewChange change, const char *catalog, const char *ns,
				const char *name, const char *a, const char *b)
{
	static const StoreQueryId ids[] = {Q_INSERT_VIEW, Q_CAS_VIEW, Q_RENAME_VIEW, Q_DELETE_VIEW};
	Datum		args[5] = {CStringGetTextDatum(catalog), CStringGetTextDatum(ns),
		CStringGetTextDatum(name), a ? CStringGetTextDatum(a) : (Datum) 0,
	b ? CStringGetTextDatum(b) : (Datum) 0};
	uint64		changed;

	store_connect();
	store_exec(ids[change], args, false);
	changed = SPI_processed;
	SPI_finish();
	return changed;
}

/* ---------------------------------------------------------------- helpers */

/*
 * Connect to SPI, remembering where results must be allocated.  Every
 * catalog access starts here, so this is also where we make sure the JDBC
 * tables are attached: changes to an unattached table would not be logged.
 */
static void
store_connect(void)
{
	StoreRequireAttached();
	caller_cxt = CurrentMemoryContext;
	SPI_connect();
}

/*
 * StoreRequireAttached
 *		Cheap once checked: error out unless the JDBC tables are attached.
 */
void
StoreRequireAttached(void)
{
	if (!attached_checked)
		check_attached();
}

/*
 * StoreAttachedScope
 *		The pointer mirror's scope of the attached catalog table: this
 *		database, its relation, its commit-log trigger and that trigger's row
 *		version.  Errors out unless attached.
 */
const MirrorScope *
StoreAttachedScope(void)
{
	StoreRequireAttached();
	return &attached_scope;
}

/*
 * check_attached
 *		Error out unless public.iceberg_tables exists and carries skade's
 *		commit-log trigger.  The answer is cached until the next relcache
 *		invalidation (DROP EXTENSION, DROP TRIGGER, ALTER TABLE ... send one).
 */
static void
check_attached(void)
{
	Oid			relid;
	Relation	rel;
	Oid			tgoid = InvalidOid;
	int			i;

	if (!callback_registered)
	{
		CacheRegisterRelcacheCallback(attached_invalidate, (Datum) 0);
		callback_registered = true;
	}

	relid = RangeVarGetRelid(makeRangeVar("public", "iceberg_tables", -1),
							 AccessShareLock, true);
	if (!OidIsValid(relid))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the JDBC catalog table public.iceberg_tables does not exist"),
				 errhint("Run SELECT skade.adopt_jdbc_catalog(); to create it.")));
	rel = table_open(relid, NoLock);
	for (i = 0; rel->trigdesc && i < rel->trigdesc->numtriggers; i++)
	{
		Trigger    *tg = &rel->trigdesc->triggers[i];

		/* it must fire always, even under session_replication_role = replica */
		if (strcmp(tg->tgname, "skade_log_pointer_change") == 0 &&
			tg->tgenabled == TRIGGER_FIRES_ALWAYS)
			tgoid = tg->tgoid;
	}
	table_close(rel, NoLock);
	attached_relid = relid;
	if (!OidIsValid(tgoid))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("public.iceberg_tables is not attached to skade"),
				 errdetail("Its changes would not be recorded in skade.commit_log (the trigger skade_log_pointer_change is missing or not ENABLE ALWAYS)."),
				 errhint("Run SELECT skade.adopt_jdbc_catalog(); to adopt it, keeping every row.")));
	MirrorScopeOf(&attached_scope, relid, tgoid);
	attached_checked = true;
}

/* any relcache invalidation of the table (or all): check again on next use */
static void
attached_invalidate(Datum arg, Oid relid)
{
	if (relid == InvalidOid || relid == attached_relid)
		attached_checked = false;
}

/*
 * Run one of the statements above; the caller is connected to SPI.  They run
 * as the caller, under the pinned search_path of safe_sql.c: no schema of
 * the caller's path can supply an operator, function, type or collation, and
 * the kept plans are never re-planned for a different path.
 */
static int
store_exec(StoreQueryId id, Datum *args, bool read_only)
{
	const StoreQuery *q = &store_queries[id];
	SkadeSafeSql safe;
	int			rc;

	SkadeSafeSqlBegin(&safe, InvalidOid);

	if (store_plans[id] == NULL)
	{
		SPIPlanPtr	plan = SPI_prepare(q->sql, q->nargs, (Oid *) q->argtypes);

		if (plan == NULL)
			elog(ERROR, "skade: could not prepare catalog statement %d: %s",
				 (int) id, SPI_result_code_string(SPI_result));
		SPI_keepplan(plan);
		store_plans[id] = plan;
	}
	rc = SPI_execute_plan(store_plans[id], args, NULL, read_only, 0);
	if (rc < 0)
		elog(ERROR, "skade: catalog statement %d failed: %s",
			 (int) id, SPI_result_code_string(rc));
	SkadeSafeSqlEnd(&safe);
	return rc;
}

static bool
store_bool_result(void)
{
	bool		isnull;

	return DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0],
									  SPI_tuptable->tupdesc, 1, &isnull));
}

/* A text column of the result, copied into the caller's context (NULL stays NULL). */
static char *
store_text_result(uint64 row, int col)
{
	bool		isnull;
	Datum		d = SPI_getbinval(SPI_tuptable->vals[row], SPI_tuptable->tupdesc,
								  col, &isnull);

	if (isnull)
		return NULL;
	return MemoryContextStrdup(caller_cxt, TextDatumGetCString(d));
}

/* The first column of every result row, as a List of strings in the caller's context. */
static List *
store_text_column(void)
{
	List	   *result = NIL;
	uint64		i;
	MemoryContext old;

	for (i = 0; i < SPI_processed; i++)
	{
		char	   *s = store_text_result(i, 1);

		old = MemoryContextSwitchTo(caller_cxt);
		result = lappend(result, s);
		MemoryContextSwitchTo(old);
	}
	return result;
}

/*
 * The namespaces below ns are exactly the strings in ["ns.", "ns/"):
 * '/' is the byte after '.', and ~>=~ / ~<~ compare byte-wise.
 */
static void
prefix_bounds(const char *ns, Datum *lo, Datum *hi)
{
	*lo = CStringGetTextDatum(psprintf("%s.", ns));
	*hi = CStringGetTextDatum(psprintf("%s/", ns));
}
