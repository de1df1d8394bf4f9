/*-------------------------------------------------------------------------
 *
 * table_api.c
 *	  SQL-callable table functions of schema skade: register, load, exists,
 *	  list, rename, drop, commit (compare-and-swap) and commit_transaction
 *	  (several commits, all or nothing).
 *
 * Every change is DML on public.iceberg_tables, bracketed by
 * SkadeOpBegin/SkadeOpEnd so that the commit-log trigger labels it; the
 * functions return the commit-log seq of their change.
 *
 * Commit semantics: one UPDATE ... WHERE metadata_location = expected, the
 * same compare-and-swap JDBC clients send, so the SQL API and JDBC clients
 * serialise on the same row lock.  A lost race raises 40001
 * (serialization_failure) with the current location in errdetail: callers
 * reload and retry, exactly as Iceberg clients do on CommitFailedException.
 * commit_transaction validates every change before applying any, and
 * applies them in (namespace, name) order so that two multi-table commits
 * cannot deadlock; any failure aborts the statement, so none is applied.
 *
 * IDENTIFICATION
 *	  src/api/table_api.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "api/api.h"
#include "catalog/tables.h"
#include "catalog/catalog_store.h"
#include "catalog/commit_log.h"
#include "util/guc.h"
#include "io/object_store.h"
#include "cache/l0_cache.h"
#include "util/names.h"
#include "cache/pointer_mirror.h"
#include "catalog/privileges.h"
#include "util/safe_sql.h"
#include "util/shmem.h"

static Datum insert_table(FunctionCallInfo fcinfo, const char *op);
static Datum load_table(FunctionCallInfo fcinfo, int catalog_arg, int snapshots_arg);
static void pointer_values(const StoreTable *t, Datum *values, bool *nulls);
static Datum table_metadata(FunctionCallInfo fcinfo, int catalog_arg, int snapshots_arg);

PG_FUNCTION_INFO_V1(skade_register_table);
PG_FUNCTION_INFO_V1(skade_create_table_commit);
PG_FUNCTION_INFO_V1(skade_load_table);
PG_FUNCTION_INFO_V1(skade_load_table_1_1);
PG_FUNCTION_INFO_V1(skade_load_table_pointers);
PG_FUNCTION_INFO_V1(skade_table_metadata);
PG_FUNCTION_INFO_V1(skade_table_metadata_1_1);
PG_FUNCTION_INFO_V1(skade_table_exists);
PG_FUNCTION_INFO_V1(skade_list_tables);
PG_FUNCTION_INFO_V1(skade_rename_table);
PG_FUNCTION_INFO_V1(skade_drop_table);
PG_FUNCTION_INFO_V1(skade_commit_table);
PG_FUNCTION_INFO_V1(skade_commit_transaction);

/* One change of commit_transaction */
typedef struct TableChange
{
	int			index;			/* position in the input array */
	char	   *ns;
	char	   *name;
	char	   *expected;
	char	   *location;
	Datum		requirements;	/* jsonb, for an update_table change (else 0) */
	Datum		updates;
	int64		seq;			/* commit-log seq once applied; -1: no change */
} TableChange;

/* load_table's result, built by form_load_result */
typedef struct LoadResult
{
	TupleDesc	tupdesc;
	Datum		values[3];
	bool		nulls[3];
	HeapTuple	tuple;
} LoadResult;

static void form_load_result(struct varlena *json, void *arg);
static char *change_field(JsonbContainer *obj, int index, const char *field);
static Datum change_array(JsonbContainer *obj, int index, const char *field);
static void parse_change(JsonbContainer *obj, int index, TableChange *tc);
static void apply_update(const char *catalog, TableChange *tc);
static int	change_cmp(const void *a, const void *b);

/*
 * skade.register_table(namespace, name, metadata_location, catalog) -> seq
 *
 * Add an existing Iceberg table.  The namespace must exist; a table or
 * view of that name is a unique violation.
 */
Datum
skade_register_table(PG_FUNCTION_ARGS)
{
	return insert_table(fcinfo, SKADE_OP_REGISTER);
}

/*
 * skade.create_table_commit(namespace, name, metadata_location, catalog) -> seq
 *
 * The pointer of a table skade.create_table() has just written the first
 * metadata of: as register_table, logged as "create".
 */
Datum
skade_create_table_commit(PG_FUNCTION_ARGS)
{
	return insert_table(fcinfo, SKADE_OP_CREATE);
}

static Datum
insert_table(FunctionCallInfo fcinfo, const char *op)
{
	char	   *ns = SkadeTextArg(fcinfo, 0, "namespace");
	char	   *name = SkadeTextArg(fcinfo, 1, "name");
	char	   *location = SkadeTextArg(fcinfo, 2, "metadata_location");
	const char *catalog = SkadeResolveCatalog(SkadeOptTextArg(fcinfo, 3));

	PG_RETURN_INT64(SkadeInsertTable(catalog, ns, name, location, op));
}

/*
 * skade.load_table(namespace, name, snapshots, catalog)
 *		-> (metadata_location, previous_metadata_location, metadata json)
 *
 * SQL 1.1 to 1.5's load_table (1.6's is SQL: load_table_pointers() beside
 * table_metadata(), inlined by the planner).
 * snapshots: 'all' (the metadata file byte for byte), 'refs' (only the
 * snapshots that branches and tags point at) or 'none' (pointers only, no
 * file access).  Warm, this touches neither the planner nor the heap: the
 * pointer comes from the L1 mirror and the metadata from the L0 cache.
 * Called in FROM, the row's metadata is an in-memory (indirect) TOAST
 * pointer to the cache entry, pinned until the end of the transaction
 * (l0_cache.c), so forming, materialising and spilling the row copy a few
 * bytes, not the text: PostgreSQL detoasts it where it is used, and
 * wherever a value must outlive the transaction (a holdable cursor, a
 * procedure's variable across COMMIT, a stored row) or become part of a
 * composite value (a whole-row reference) it detoasts it first.  Called
 * elsewhere, the row is a composite datum and holds the text inline.
 * Version 1.0 of the SQL took (namespace, name, catalog, snapshots).
 */
Datum
skade_load_table_1_1(PG_FUNCTION_ARGS)
{
	return load_table(fcinfo, 3, 2);
}

Datum
skade_load_table(PG_FUNCTION_ARGS)
{
	return load_table(fcinfo, 2, 3);
}

static Datum
load_table(FunctionCallInfo fcinfo, int catalog_arg, int snapshots_arg)
{
	int			want = SkadeSnapshotsMode(SkadeTextArg(fcinfo, snapshots_arg, "snapshots"));
	const char *catalog;
	char	   *ns;
	char	   *name;
	StoreTable	t;
	TupleDesc	tupdesc;
	LoadResult	result;
	struct varlena *json;
	/* called by a FROM clause's function scan (ExecMakeTableFunctionResult)? */
	bool		in_from = fcinfo->resultinfo && IsA(fcinfo->resultinfo, ReturnSetInfo);

	SkadeTableArgs(fcinfo, catalog_arg, &catalog, &ns, &name, &t);

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	result.tupdesc = BlessTupleDesc(tupdesc);
	pointer_values(&t, result.values, result.nulls);
	result.nulls[2] = want == 0 || t.metadata_location == NULL;
	result.tuple = NULL;
	if (result.nulls[2])
		form_load_result(NULL, &result);
	else
	{
		/*
		 * In FROM, the row may hold a pointer to the pinned text: a function
		 * scan stores the row in its tuplestore as it is and hands out its
		 * columns, which may be TOAST pointers like any table's.  A row
		 * returned as a composite datum must hold its values inline.
		 */
		if (in_from &&
			(json = L0FetchJsonIndirect(SKADE_ROUTE(catalog, ns), t.metadata_location,
										want == L0_WANT_REFS_JSON)))
			form_load_result(json, &result);
		else
			/* the text goes straight from the cache into the result tuple */
			L0FetchJson(SKADE_ROUTE(catalog, ns), t.metadata_location,
						want == L0_WANT_REFS_JSON, form_load_result, &result);
	}
	if (in_from)
		/* heap_form_tuple made it a datum already; nothing to inline */
		PG_RETURN_DATUM(PointerGetDatum(result.tuple->t_data));
	PG_RETURN_DATUM(HeapTupleGetDatum(result.tuple));
}

/* A load's first two columns: metadata_location, previous_metadata_location. */
static void
pointer_values(const StoreTable *t, Datum *values, bool *nulls)
{
	nulls[0] = t->metadata_location == NULL;
	values[0] = nulls[0] ? (Datum) 0 : CStringGetTextDatum(t->metadata_location);
	nulls[1] = t->previous_metadata_location == NULL;
	values[1] = nulls[1] ? (Datum) 0 : CStringGetTextDatum(t->previous_metadata_location);
}

/*
 * skade.load_table_pointers(namespace, name, snapshots, catalog)
 *		-> (metadata_location, previous_metadata_location)
 *
 * The pointers half of load_table (SQL since 1.6: these pointers beside
 * skade.table_metadata() of the same table, which the planner inlines into
 * the caller's query, so a load ships the text from the cache with no row
 * copy, as table_metadata does).  snapshots is checked first, as by every
 * load, so errors come in load_table's order.
 */
Datum
skade_load_table_pointers(PG_FUNCTION_ARGS)
{
	const char *catalog;
	char	   *ns;
	char	   *name;
	StoreTable	t;
	TupleDesc	tupdesc;
	Datum		values[2];
	bool		nulls[2];

	(void) SkadeSnapshotsMode(SkadeTextArg(fcinfo, 2, "snapshots"));
	SkadeTableArgs(fcinfo, 3, &catalog, &ns, &name, &t);
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	pointer_values(&t, values, nulls);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc), values, nulls)));
}

/*
 * skade.table_metadata(namespace, name, snapshots, catalog) -> json
 *
 * The metadata alone, as a scalar: the cheapest way to ship it, since no
 * result row has to be formed and materialised around it, and on a cache
 * hit the datum points into the cache itself (pinned for the transaction).
 * Version 1.0 of the SQL took (namespace, name, catalog, snapshots).
 */
Datum
skade_table_metadata_1_1(PG_FUNCTION_ARGS)
{
	return table_metadata(fcinfo, 3, 2);
}

Datum
skade_table_metadata(PG_FUNCTION_ARGS)
{
	return table_metadata(fcinfo, 2, 3);
}

static Datum
table_metadata(FunctionCallInfo fcinfo, int catalog_arg, int snapshots_arg)
{
	int			want = SkadeSnapshotsMode(SkadeTextArg(fcinfo, snapshots_arg, "snapshots"));
	const char *catalog;
	char	   *ns;
	char	   *name;
	StoreTable	t;
	struct varlena *json = NULL;

	SkadeTableArgs(fcinfo, catalog_arg, &catalog, &ns, &name, &t);
	if (want == 0 || t.metadata_location == NULL)
		PG_RETURN_NULL();
	/* read-only, pinned in the cache until the end of the transaction */
	json = L0FetchJsonPinned(SKADE_ROUTE(catalog, ns), t.metadata_location,
							 want == L0_WANT_REFS_JSON);
	PG_RETURN_POINTER(json);
}

/* 'all' | 'refs' | 'none' -> what to fetch from L0 (0: nothing) */
int
SkadeSnapshotsMode(const char *mode)
{
	if (strcmp(mode, "all") == 0)
		return L0_WANT_JSON;
	if (strcmp(mode, "refs") == 0)
		return L0_WANT_REFS_JSON;
	if (strcmp(mode, "none") == 0)
		return 0;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("snapshots must be 'all', 'refs' or 'none', not \"%s\"", mode)));
	return 0;					/* keep compiler quiet */
}

/* Build load_table's result tuple; json (if any) is only valid during the call. */
static void
form_load_result(struct varlena *json, void *arg)
{
	LoadResult *r = (LoadResult *) arg;

	if (json)
		r->values[2] = PointerGetDatum(json);
	r->tuple = heap_form_tuple(r->tupdesc, r->values, r->nulls);
}

/* skade.table_exists(namespace, name, catalog) */
Datum
skade_table_exists(PG_FUNCTION_ARGS)
{
	char	   *ns = SkadeTextArg(fcinfo, 0, "namespace");
	char	   *name = SkadeTextArg(fcinfo, 1, "name");
	const char *catalog = SkadeResolveCatalog(SkadeOptTextArg(fcinfo, 2));
	StoreTable	t;

	SkadeRequireShared();
	SkadeCheckTableIdent(ns, name);
	PG_RETURN_BOOL(SkadeLookupTable(catalog, ns, name, &t) && !t.is_view);
}

/*
 * SkadeTableArgs
 *		The (namespace, name) of arguments 0 and 1 and the catalog of argument
 *		catalog_argno, checked, and the table's row (mirror or heap); a
 *		missing table or a view is an error.
 */
void
SkadeTableArgs(FunctionCallInfo fcinfo, int catalog_argno, const char **catalog,
			   char **ns, char **name, StoreTable *t)
{
	*ns = SkadeTextArg(fcinfo, 0, "namespace");
	*name = SkadeTextArg(fcinfo, 1, "name");
	*catalog = SkadeResolveCatalog(SkadeOptTextArg(fcinfo, catalog_argno));
	SkadeRequireShared();
	SkadeCheckTableIdent(*ns, *name);
	if (!SkadeLookupTable(*catalog, *ns, *name, t) || t->is_view)
		SkadeReportMissingTable(*catalog, *ns, *name);
}

/* skade.list_tables(namespace, catalog) -> setof text */
Datum
skade_list_tables(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *ns = SkadeTextArg(fcinfo, 0, "namespace");
	const char *catalog = SkadeResolveCatalog(SkadeOptTextArg(fcinfo, 1));
	List	   *names;
	ListCell   *lc;

	SkadeRequireShared();
	SkadeCheckNamespace(ns);
	SkadeRequireNamespace(catalog, ns);
	names = StoreListTables(catalog, ns);

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	foreach(lc, names)
	{
		Datum		value = CStringGetTextDatum((char *) lfirst(lc));
		bool		isnull = false;

		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &value, &isnull);
	}
	return (Datum) 0;
}

/*
 * skade.rename_table(namespace, name, new_namespace, new_name, catalog) -> seq
 */
Datum
skade_rename_table(PG_FUNCTION_ARGS)
{
	char	   *ns = SkadeTextArg(fcinfo, 0, "namespace");
	char	   *name = SkadeTextArg(fcinfo, 1, "name");
	char	   *new_ns = SkadeTextArg(fcinfo, 2, "new_namespace");
	char	   *new_name = SkadeTextArg(fcinfo, 3, "new_name");
	const char *catalog = SkadeResolveCatalog(SkadeOptTextArg(fcinfo, 4));
	StoreTable	t;
	bool		moved;
	int64		seq;

	SkadeRequireShared();
	SkadeCheckTableIdent(ns, name);
	SkadeCheckTableIdent(new_ns, new_name);
	if (!StoreGetTable(catalog, ns, name, false, &t) || t.is_view)
		SkadeReportMissingTable(catalog, ns, name);
	SkadeRequireNamespace(catalog, new_ns);
	if (StoreGetTable(catalog, new_ns, new_name, false, &t))
		ereport(ERROR,
				(errcode(ERRCODE_UNIQUE_VIOLATION),
				 errmsg("%s \"%s.%s\" already exists in catalog \"%s\"",
						t.is_view ? "view" : "table", new_ns, new_name, catalog)));

	SkadeOpBegin(SKADE_OP_RENAME);
	PG_TRY();
	{
		moved = StoreRenameTable(catalog, ns, name, new_ns, new_name);
		seq = SkadeOpLastSeq();
	}
	PG_FINALLY();
	{
		SkadeOpEnd();
	}
	PG_END_TRY();

	/* dropped concurrently after our check */
	if (!moved)
		SkadeReportMissingTable(catalog, ns, name);
	PG_RETURN_INT64(seq);
}

/*
 * skade.drop_table(namespace, name, catalog) -> last metadata location
 *
 * Removes the pointer only; files are the owner's to purge.
 */
Datum
skade_drop_table(PG_FUNCTION_ARGS)
{
	char	   *ns = SkadeTextArg(fcinfo, 0, "namespace");
	char	   *name = SkadeTextArg(fcinfo, 1, "name");
	const char *catalog = SkadeResolveCatalog(SkadeOptTextArg(fcinfo, 2));
	char	   *location;
	bool		deleted;

	SkadeRequireShared();
	SkadeCheckTableIdent(ns, name);

	SkadeOpBegin(SKADE_OP_DROP);
	PG_TRY();
	{
		deleted = StoreDeleteTable(catalog, ns, name, &location);
	}
	PG_FINALLY();
	{
		SkadeOpEnd();
	}
	PG_END_TRY();

	if (!deleted)
		SkadeReportMissingTable(catalog, ns, name);
	if (location == NULL)
		PG_RETURN_NULL();
	PG_RETURN_TEXT_P(cstring_to_text(location));
}

/*
 * skade.commit_table(namespace, name, expected_location, new_location,
 *					  catalog) -> seq
 */
Datum
skade_commit_table(PG_FUNCTION_ARGS)
{
	char	   *ns = SkadeTextArg(fcinfo, 0, "namespace");
	char	   *name = SkadeTextArg(fcinfo, 1, "name");
	char	   *expected = SkadeTextArg(fcinfo, 2, "expected_location");
	char	   *location = SkadeTextArg(fcinfo, 3, "new_location");
	const char *catalog = SkadeResolveCatalog(SkadeOptTextArg(fcinfo, 4));

	PG_RETURN_INT64(SkadeCommitTable(catalog, ns, name, expected, location));
}

/*
 * skade.commit_transaction(changes jsonb, catalog)
 *		-> setof (namespace, name, metadata_location, seq)
 *
 * changes: [{"namespace": ..., "name": ..., "expected_location": ...,
 *			  "new_location": ...}, ...], each table at most once.
 * Rows come back in input order.
 */
Datum
skade_commit_transaction(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Jsonb	   *changes;
	const char *catalog = SkadeResolveCatalog(SkadeOptTextArg(fcinfo, 1));
	TableChange *tc;
	TableChange **order;
	int			n;
	int			i;

	SkadeRequireShared();
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("changes must not be NULL")));
	changes = PG_GETARG_JSONB_P(0);
	if (!JB_ROOT_IS_ARRAY(changes) || JB_ROOT_IS_SCALAR(changes))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("changes must be a JSON array"),
				 errhint("Pass [{\"namespace\": ..., \"name\": ..., \"expected_location\": ..., \"new_location\": ...}].")));
	n = JsonContainerSize(&changes->root);
	if (n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("changes must not be empty")));

	/* validate everything before changing anything */
	tc = palloc0(sizeof(TableChange) * n);
	order = palloc(sizeof(TableChange *) * n);
	for (i = 0; i < n; i++)
	{
		JsonbValue *elem = getIthJsonbValueFromContainer(&changes->root, i);
		JsonbContainer *obj;

		if (elem->type != jbvBinary || !JsonContainerIsObject(elem->val.binary.data))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("changes[%d] must be a JSON object", i)));
		obj = elem->val.binary.data;
		tc[i].index = i;
		parse_change(obj, i, &tc[i]);
		order[i] = &tc[i];
	}
	qsort(order, n, sizeof(TableChange *), change_cmp);
	for (i = 1; i < n; i++)
		if (change_cmp(&order[i - 1], &order[i]) == 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("table \"%s.%s\" appears more than once in changes",
							order[i]->ns, order[i]->name),
					 errdetail("changes[%d] and changes[%d] name the same table.",
							   order[i - 1]->index, order[i]->index)));

	/* apply in a fixed order; an error anywhere undoes the whole statement */
	for (i = 0; i < n; i++)
	{
		if (order[i]->updates)
			apply_update(catalog, order[i]);
		else
			order[i]->seq = SkadeCasTable(catalog, order[i]->ns, order[i]->name,
									   order[i]->expected, order[i]->location);
	}

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	for (i = 0; i < n; i++)
	{
		Datum		values[4];
		bool		nulls[4] = {false, false, false, false};

		values[0] = CStringGetTextDatum(tc[i].ns);
		values[1] = CStringGetTextDatum(tc[i].name);
		values[2] = CStringGetTextDatum(tc[i].location);
		values[3] = Int64GetDatum(tc[i].seq);
		nulls[3] = tc[i].seq < 0;	/* an update that changed nothing */
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/* ---------------------------------------------------------------- helpers */

/*
 * One element of commit_transaction's changes: either a pointer swap
 * {namespace, name, expected_location, new_location} or a server-side
 * commit {namespace, name, requirements?, updates} (update_table's).
 */
static void
parse_change(JsonbContainer *obj, int index, TableChange *tc)
{
	JsonbValue	v;
	int			keys = JsonContainerSize(obj);

	tc->ns = change_field(obj, index, "namespace");
	tc->name = change_field(obj, index, "name");
	SkadeCheckTableIdent(tc->ns, tc->name);
	if (getKeyJsonValueFromContainer(obj, "updates", 7, &v) != NULL)
	{
		tc->updates = change_array(obj, index, "updates");
		if (getKeyJsonValueFromContainer(obj, "requirements", 12, &v) != NULL)
			tc->requirements = change_array(obj, index, "requirements");
		else
		{
			tc->requirements = DirectFunctionCall1(jsonb_in, CStringGetDatum("[]"));
			keys++;
		}
		if (keys != 4)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("changes[%d] has unknown keys", index),
					 errdetail("A server-side commit has namespace, name, requirements and updates.")));
		return;
	}
	tc->expected = change_field(obj, index, "expected_location");
	tc->location = change_field(obj, index, "new_location");
	if (keys != 4)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("changes[%d] has unknown keys", index),
				 errdetail("Allowed keys are namespace, name, expected_location and new_location, or namespace, name, requirements and updates.")));
	SkadeCheckLocation(tc->expected, "expected_location");
	SkadeCheckLocation(tc->location, "new_location");
}

/* A JSON array member of a change, as a jsonb datum. */
static Datum
change_array(JsonbContainer *obj, int index, const char *field)
{
	JsonbValue	v;

	if (getKeyJsonValueFromContainer(obj, field, strlen(field), &v) == NULL ||
		v.type != jbvBinary || !JsonContainerIsArray(v.val.binary.data))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("changes[%d].%s must be a JSON array", index, field)));
	return JsonbPGetDatum(JsonbValueToJsonb(&v));
}

/*
 * apply_update
 *		One server-side commit of commit_transaction: skade.update_table(),
 *		run as the caller under the pinned search path; its location and
 *		commit-log seq (-1 when it changed nothing) go into tc.
 */
static void
apply_update(const char *catalog, TableChange *tc)
{
	Oid			types[5] = {TEXTOID, TEXTOID, JSONBOID, JSONBOID, TEXTOID};
	Datum		args[5] = {CStringGetTextDatum(tc->ns), CStringGetTextDatum(tc->name),
		tc->requirements, tc->updates, CStringGetTextDatum(catalog)};
	MemoryContext caller = CurrentMemoryContext;
	SkadeSafeSql safe;
	int64		before = SkadeOpLastSeq();
	bool		isnull;
	Datum		d;

	SPI_connect();
	SkadeSafeSqlBegin(&safe, InvalidOid);
	if (SPI_execute_with_args("SELECT skade.update_table($1, $2, $3, $4, $5)", 5, types, args,
							  NULL, false, 1) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "skade: update_table did not return a row");
	SkadeSafeSqlEnd(&safe);
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	tc->location = isnull ? NULL : MemoryContextStrdup(caller, TextDatumGetCString(d));
	SPI_finish();
	tc->seq = SkadeOpLastSeq() != before ? SkadeOpLastSeq() : -1;
}

/* A required string field of changes[index]. */
static char *
change_field(JsonbContainer *obj, int index, const char *field)
{
	JsonbValue	v;

	if (getKeyJsonValueFromContainer(obj, field, strlen(field), &v) == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("changes[%d] lacks \"%s\"", index, field)));
	if (v.type != jbvString)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("changes[%d].%s must be a string", index, field)));
	return pnstrdup(v.val.string.val, v.val.string.len);
}

static int
change_cmp(const void *a, const void *b)
{
	const TableChange *x = *(TableChange *const *) a;
	const TableChange *y = *(TableChange *const *) b;
	int			c = strcmp(x->ns, y->ns);

	return c != 0 ? c : strcmp(x->name, y->name);
}
