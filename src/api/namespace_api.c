/*-------------------------------------------------------------------------
 *
 * namespace_api.c
 *	  SQL-callable namespace functions of schema skade: create, drop,
 *	  exists, list, properties, update properties.
 *
 * Namespaces follow the JDBC catalog encoding exactly, so that what skade
 * creates, Java's JdbcCatalog and pyiceberg's SqlCatalog see, and the other
 * way round: levels are dot-joined; a namespace exists while any row of
 * iceberg_tables or iceberg_namespace_properties names it or a namespace
 * below it; an empty namespace is kept alive by the property exists=true,
 * which skade writes on create and never shows or lets callers change.
 *
 * This file checks arguments and turns lookups into errors with proper
 * SQLSTATEs; the SQL lives in catalog_store.c.  Functions run as the
 * caller, so table privileges decide who may read or change what.
 *
 * IDENTIFICATION
 *	  src/api/namespace_api.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"

#include "api/api.h"
#include "catalog/tables.h"
#include "catalog/catalog_store.h"
#include "util/guc.h"
#include "util/names.h"
#include "util/shmem.h"
#include "util/skade_limits.h"

PG_FUNCTION_INFO_V1(skade_create_namespace);
PG_FUNCTION_INFO_V1(skade_drop_namespace);
PG_FUNCTION_INFO_V1(skade_namespace_exists);
PG_FUNCTION_INFO_V1(skade_list_namespaces);
PG_FUNCTION_INFO_V1(skade_namespace_properties);
PG_FUNCTION_INFO_V1(skade_update_namespace_properties);

static void check_properties(Jsonb *props);
static Jsonb *with_exists_marker(Jsonb *props);
static Jsonb *with_default_location(Jsonb *props, const char *ns);
static bool has_key(Jsonb *props, const char *key);
static void check_levels_are_paths(const char *ns);
static bool levels_are_paths(const char *ns);
static ArrayType *text_list_to_array(List *items);
static int	cstring_cmp(const ListCell *a, const ListCell *b);

/*
 * skade.create_namespace(namespace, properties jsonb, catalog)
 *
 * Properties are a JSON object of strings.  A namespace that exists already
 * (explicitly, or implied by a table or a child) is a unique violation, as
 * the JDBC clients' duplicate INSERT of the marker row would be.
 */
Datum
skade_create_namespace(PG_FUNCTION_ARGS)
{
	char	   *ns = SkadeTextArg(fcinfo, 0, "namespace");
	Jsonb	   *props;
	const char *catalog = SkadeResolveCatalog(SkadeOptTextArg(fcinfo, 2));

	SkadeRequireShared();
	SkadeCheckNamespace(ns);
	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("properties must not be NULL"),
				 errhint("Pass '{}' for a namespace without properties.")));
	props = PG_GETARG_JSONB_P(1);
	check_properties(props);
	if (!has_key(props, "location"))
		check_levels_are_paths(ns);

	if (StoreNamespaceExists(catalog, ns))
		ereport(ERROR,
				(errcode(ERRCODE_UNIQUE_VIOLATION),
				 errmsg("namespace \"%s\" already exists in catalog \"%s\"", ns, catalog)));

	StoreInsertProperties(catalog, ns, with_exists_marker(props));
	PG_RETURN_VOID();
}

/*
 * skade.drop_namespace(namespace, catalog)
 *
 * Only an empty namespace can be dropped: no table or view in it, and no
 * namespace below it (Java 1.11's rule; stricter than pyiceberg's).
 */
Datum
skade_drop_namespace(PG_FUNCTION_ARGS)
{
	char	   *ns = SkadeTextArg(fcinfo, 0, "namespace");
	const char *catalog = SkadeResolveCatalog(SkadeOptTextArg(fcinfo, 1));

	SkadeRequireShared();
	SkadeCheckNamespace(ns);
	SkadeRequireNamespace(catalog, ns);

	if (StoreNamespaceHasObjects(catalog, ns))
		ereport(ERROR,
				(errcode(ERRCODE_DEPENDENT_OBJECTS_STILL_EXIST),
				 errmsg("namespace \"%s\" is not empty", ns),
				 errdetail("It contains tables or views."),
				 errhint("Drop or move them first.")));
	if (StoreNamespaceHasChildren(catalog, ns))
		ereport(ERROR,
				(errcode(ERRCODE_DEPENDENT_OBJECTS_STILL_EXIST),
				 errmsg("namespace \"%s\" is not empty", ns),
				 errdetail("It contains other namespaces."),
				 errhint("Drop the namespaces below it first.")));

	StoreDeleteNamespace(catalog, ns);
	PG_RETURN_VOID();
}

/* skade.namespace_exists(namespace, catalog) */
Datum
skade_namespace_exists(PG_FUNCTION_ARGS)
{
	char	   *ns = SkadeTextArg(fcinfo, 0, "namespace");
	const char *catalog = SkadeResolveCatalog(SkadeOptTextArg(fcinfo, 1));

	SkadeRequireShared();
	SkadeCheckNamespace(ns);
	PG_RETURN_BOOL(StoreNamespaceExists(catalog, ns));
}

/*
 * skade.list_namespaces(parent, catalog)
 *
 * The namespaces one level below parent (NULL: the top level), as full
 * dot-joined names, including those implied only by tables.
 */
Datum
skade_list_namespaces(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *parent = SkadeOptTextArg(fcinfo, 0);
	const char *catalog = SkadeResolveCatalog(SkadeOptTextArg(fcinfo, 1));
	List	   *children;
	ListCell   *lc;

	SkadeRequireShared();
	if (parent)
	{
		SkadeCheckNamespace(parent);
		SkadeRequireNamespace(catalog, parent);
	}
	children = StoreListNamespaces(catalog, parent);

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	foreach(lc, children)
	{
		Datum		value = CStringGetTextDatum((char *) lfirst(lc));
		bool		isnull = false;

		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &value, &isnull);
	}
	return (Datum) 0;
}

/* skade.namespace_properties(namespace, catalog) -> jsonb */
Datum
skade_namespace_properties(PG_FUNCTION_ARGS)
{
	char	   *ns = SkadeTextArg(fcinfo, 0, "namespace");
	const char *catalog = SkadeResolveCatalog(SkadeOptTextArg(fcinfo, 1));

	SkadeRequireShared();
	SkadeCheckNamespace(ns);
	SkadeRequireNamespace(catalog, ns);
	PG_RETURN_JSONB_P(with_default_location(StoreNamespaceProperties(catalog, ns), ns));
}

/* Does the JSON object props have key? */
static bool
has_key(Jsonb *props, const char *key)
{
	JsonbValue	k;

	k.type = jbvString;
	k.val.string.val = (char *) key;
	k.val.string.len = strlen(key);
	return findJsonbValueFromContainer(&props->root, JB_FOBJECT, &k) != NULL;
}

/*
 * A namespace without a "location" of its own lies at
 * <skade.warehouse>/<level>/<level>...: each level must be one path
 * component (42602), or "a/b" would be the directory of namespace a.b.
 */
static void
check_levels_are_paths(const char *ns)
{
	char	   *copy = pstrdup(ns);
	char	   *save = NULL;
	char	   *level;

	for (level = strtok_r(copy, ".", &save); level; level = strtok_r(NULL, ".", &save))
		SkadeCheckPathComponent(level, "namespace level");
}

/* Is every level of ns one path component (see check_levels_are_paths)? */
static bool
levels_are_paths(const char *ns)
{
	char	   *copy = pstrdup(ns);
	char	   *save = NULL;
	char	   *level;

	for (level = strtok_r(copy, ".", &save); level; level = strtok_r(NULL, ".", &save))
		if (!SkadeIsPathComponent(level))
			return false;
	return true;
}

/*
 * props with "location": <skade.warehouse>/<levels of ns> unless it has
 * one (JdbcCatalog.loadNamespaceMetadata's default, which Spark's DESCRIBE
 * NAMESPACE shows); props unchanged when skade.warehouse is empty or a
 * level is not one path component (a namespace made before 1.7, or whose
 * location was removed: its tables need a location of their own).
 */
static Jsonb *
with_default_location(Jsonb *props, const char *ns)
{
	StringInfoData loc;
	StringInfoData json;
	size_t		wl;
	const char *p;

	if (skade_warehouse == NULL || skade_warehouse[0] == '\0' || !levels_are_paths(ns))
		return props;
	initStringInfo(&loc);
	wl = strlen(skade_warehouse);
	while (wl > 0 && skade_warehouse[wl - 1] == '/')
		wl--;
	appendBinaryStringInfo(&loc, skade_warehouse, wl);
	appendStringInfoChar(&loc, '/');
	for (p = ns; *p; p++)
		appendStringInfoChar(&loc, *p == '.' ? '/' : *p);
	initStringInfo(&json);
	appendStringInfoString(&json, "{\"location\": ");
	escape_json(&json, loc.data);
	appendStringInfoChar(&json, '}');
	/* the namespace's own keys win */
	return DatumGetJsonbP(DirectFunctionCall2(jsonb_concat,
											  DirectFunctionCall1(jsonb_in, CStringGetDatum(json.data)),
											  JsonbPGetDatum(props)));
}

/*
 * skade.update_namespace_properties(namespace, updates, removals, catalog)
 *		-> (updated text[], removed text[], missing text[])
 *
 * Like the Iceberg REST call: set the keys of updates, remove the keys of
 * removals, report removals that were not there.  A key may not be both
 * updated and removed.  All in one statement: nothing changes on error.
 */
Datum
skade_update_namespace_properties(PG_FUNCTION_ARGS)
{
	char	   *ns = SkadeTextArg(fcinfo, 0, "namespace");
	const char *catalog = SkadeResolveCatalog(SkadeOptTextArg(fcinfo, 3));
	Jsonb	   *updates;
	ArrayType  *removals;
	Datum	   *keys;
	bool	   *keynulls;
	int			nkeys;
	int			i;
	List	   *removed = NIL;
	List	   *updated = NIL;
	List	   *missing = NIL;
	TupleDesc	tupdesc;
	Datum		values[3];
	bool		nulls[3] = {false, false, false};

	SkadeRequireShared();
	SkadeCheckNamespace(ns);
	if (PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("updates and removals must not be NULL"),
				 errhint("Pass '{}' or '{}'::text[] for nothing.")));
	updates = PG_GETARG_JSONB_P(1);
	removals = PG_GETARG_ARRAYTYPE_P(2);
	check_properties(updates);

	if (ARR_NDIM(removals) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("removals must be a one-dimensional array")));
	deconstruct_array(removals, TEXTOID, -1, false, TYPALIGN_INT,
					  &keys, &keynulls, &nkeys);
	for (i = 0; i < nkeys; i++)
	{
		char	   *key;
		JsonbValue	k;

		if (keynulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("removals must not contain NULL")));
		key = TextDatumGetCString(keys[i]);
		SkadeCheckPropertyKey(key);
		k.type = jbvString;
		k.val.string.val = key;
		k.val.string.len = strlen(key);
		if (findJsonbValueFromContainer(&updates->root, JB_FOBJECT, &k))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("namespace property \"%s\" is both updated and removed", key)));
	}

	SkadeRequireNamespace(catalog, ns);

	if (nkeys > 0)
	{
		removed = StoreRemoveProperties(catalog, ns, removals);
		for (i = 0; i < nkeys; i++)
		{
			char	   *key = TextDatumGetCString(keys[i]);
			ListCell   *lc;
			bool		found = false;

			foreach(lc, removed)
				found = found || strcmp(lfirst(lc), key) == 0;
			foreach(lc, missing)
				found = found || strcmp(lfirst(lc), key) == 0;
			if (!found)
				missing = lappend(missing, key);
		}
	}
	if (JsonContainerSize(&updates->root) > 0)
		updated = StoreUpsertProperties(catalog, ns, updates);

	list_sort(updated, cstring_cmp);
	list_sort(removed, cstring_cmp);
	list_sort(missing, cstring_cmp);

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	tupdesc = BlessTupleDesc(tupdesc);
	values[0] = PointerGetDatum(text_list_to_array(updated));
	values[1] = PointerGetDatum(text_list_to_array(removed));
	values[2] = PointerGetDatum(text_list_to_array(missing));
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/* ---------------------------------------------------------------- helpers */

/* properties/updates must be a JSON object whose values are strings that fit */
static void
check_properties(Jsonb *props)
{
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	char	   *key = NULL;

	if (!JB_ROOT_IS_OBJECT(props))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("namespace properties must be a JSON object")));

	it = JsonbIteratorInit(&props->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok == WJB_KEY)
		{
			key = pnstrdup(v.val.string.val, v.val.string.len);
			SkadeCheckPropertyKey(key);
		}
		else if (tok == WJB_VALUE)
		{
			char	   *value;

			if (v.type != jbvString)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("value of namespace property \"%s\" must be a string", key)));
			value = pnstrdup(v.val.string.val, v.val.string.len);
			SkadeCheckPropertyValue(key, value);
		}
	}
}

/* props plus {"exists": "true"} */
static Jsonb *
with_exists_marker(Jsonb *props)
{
	JsonbParseState *state = NULL;
	JsonbIterator *it = JsonbIteratorInit(&props->root);
	JsonbValue	v;
	JsonbIteratorToken tok;
	JsonbValue *res = NULL;

	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok == WJB_END_OBJECT)
		{
			JsonbValue	k,
						val;

			k.type = jbvString;
			k.val.string.val = SKADE_NAMESPACE_EXISTS_KEY;
			k.val.string.len = strlen(SKADE_NAMESPACE_EXISTS_KEY);
			val.type = jbvString;
			val.val.string.val = "true";
			val.val.string.len = 4;
			pushJsonbValue(&state, WJB_KEY, &k);
			pushJsonbValue(&state, WJB_VALUE, &val);
		}
		res = pushJsonbValue(&state, tok, tok < WJB_BEGIN_ARRAY ? &v : NULL);
	}
	return JsonbValueToJsonb(res);
}

static ArrayType *
text_list_to_array(List *items)
{
	Datum	   *elems = palloc(sizeof(Datum) * (list_length(items) + 1));
	ListCell   *lc;
	int			n = 0;

	foreach(lc, items)
		elems[n++] = CStringGetTextDatum((char *) lfirst(lc));
	return construct_array(elems, n, TEXTOID, -1, false, TYPALIGN_INT);
}

static int
cstring_cmp(const ListCell *a, const ListCell *b)
{
	return strcmp((const char *) lfirst(a), (const char *) lfirst(b));
}
