/*-------------------------------------------------------------------------
 *
 * rest_json.c
 *	  JSON shapes of the Iceberg REST protocol that skade's SQL builds once
 *	  per planned file, computed in C: skade.rest_value_map().
 *
 * Invariants
 *   - rest_value_map(columns, stat) answers exactly what its former SQL
 *     body answered: NULL when no column has the statistic (absent or JSON
 *     null), else {"keys": [field ids], "values": [the statistic of each]}
 *     in ascending field id (columns without an id last), the values as
 *     they are.  Called once per statistic and file from
 *     rest_content_file(), where a SQL body was parsed and planned again on
 *     every call.
 *   - Pure: no catalog access, no state; memory in the caller's context.
 *
 * IDENTIFICATION
 *	  src/api/rest_json.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/numeric.h"

PG_FUNCTION_INFO_V1(skade_rest_value_map);

/* one column that has the statistic */
typedef struct StatItem
{
	bool		has_id;
	int32		id;
	JsonbValue	value;
} StatItem;

static bool column_id(JsonbContainer *col, int32 *id);
static int	item_cmp(const void *a, const void *b);

/*
 * skade.rest_value_map(columns jsonb, stat text) -> jsonb
 *		One statistic of every column of files()' "columns" object as a REST
 *		{keys, values} map, or NULL.
 */
Datum
skade_rest_value_map(PG_FUNCTION_ARGS)
{
	Jsonb	   *cols;
	char	   *stat;
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	StatItem   *items;
	int			n = 0;
	int			i;
	JsonbParseState *state = NULL;
	JsonbValue	k;
	JsonbValue *result;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		PG_RETURN_NULL();
	cols = PG_GETARG_JSONB_P(0);
	stat = text_to_cstring(PG_GETARG_TEXT_PP(1));
	if (!JB_ROOT_IS_OBJECT(cols))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot call %s on a non-object", "rest_value_map")));
	items = palloc(sizeof(StatItem) * (JB_ROOT_COUNT(cols) + 1));
	it = JsonbIteratorInit(&cols->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		JsonbValue	s;

		if (tok != WJB_VALUE || v.type != jbvBinary || !JsonContainerIsObject(v.val.binary.data))
			continue;
		if (getKeyJsonValueFromContainer(v.val.binary.data, stat, strlen(stat), &s) == NULL ||
			s.type == jbvNull)
			continue;
		items[n].has_id = column_id(v.val.binary.data, &items[n].id);
		items[n].value = s;
		n++;
	}
	if (n == 0)
		PG_RETURN_NULL();
	qsort(items, n, sizeof(StatItem), item_cmp);

	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	k.type = jbvString;
	k.val.string.val = "keys";
	k.val.string.len = 4;
	pushJsonbValue(&state, WJB_KEY, &k);
	pushJsonbValue(&state, WJB_BEGIN_ARRAY, NULL);
	for (i = 0; i < n; i++)
	{
		JsonbValue	id;

		if (items[i].has_id)
		{
			id.type = jbvNumeric;
			id.val.numeric = int64_to_numeric(items[i].id);
		}
		else
			id.type = jbvNull;
		pushJsonbValue(&state, WJB_ELEM, &id);
	}
	pushJsonbValue(&state, WJB_END_ARRAY, NULL);
	k.val.string.val = "values";
	k.val.string.len = 6;
	pushJsonbValue(&state, WJB_KEY, &k);
	pushJsonbValue(&state, WJB_BEGIN_ARRAY, NULL);
	for (i = 0; i < n; i++)
		pushJsonbValue(&state, WJB_ELEM, &items[i].value);
	pushJsonbValue(&state, WJB_END_ARRAY, NULL);
	result = pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	PG_RETURN_JSONB_P(JsonbValueToJsonb(result));
}

/*
 * A column's "id" as (v->>'id')::integer reads it: false when absent or
 * null (NULL: sorted last); anything else that is not an integer within
 * int32 is the cast's error.
 */
static bool
column_id(JsonbContainer *col, int32 *id)
{
	JsonbValue	v;
	char	   *s;

	if (getKeyJsonValueFromContainer(col, "id", 2, &v) == NULL || v.type == jbvNull)
		return false;
	if (v.type == jbvNumeric)
		s = DatumGetCString(DirectFunctionCall1(numeric_out, NumericGetDatum(v.val.numeric)));
	else if (v.type == jbvString)
		s = pnstrdup(v.val.string.val, v.val.string.len);
	else
		s = v.type == jbvBool ? (v.val.boolean ? "true" : "false") : "{}";
	*id = pg_strtoint32(s);
	return true;
}

/* ascending id, columns without one last */
static int
item_cmp(const void *a, const void *b)
{
	const StatItem *x = a;
	const StatItem *y = b;

	if (x->has_id != y->has_id)
		return x->has_id ? -1 : 1;
	if (!x->has_id)
		return 0;
	return (x->id > y->id) - (x->id < y->id);
}
