/*-------------------------------------------------------------------------
 *
 * commit_schema.c
 *	  The schema, partitioning and sort-order actions of update_table's C
 *	  path (commit_actions.c dispatches to them): add-schema and
 *	  set-current-schema, add-spec and set-default-spec, add-sort-order and
 *	  set-default-sort-order, upgrade-format-version; and the engine's end
 *	  check that the default spec and sort order exist and bind to the
 *	  current schema (skade.bind_error, skade.source_type).  Each as the
 *	  PL/pgSQL engine does it (Java's TableMetadata.Builder as transcribed
 *	  there), with its refusals.
 *
 * Contract
 *   - As commit_actions.c's: refused as the engine refuses (fast_refuse),
 *     false for what this path does not take or cannot tell as the engine
 *     would (a value the engine casts with an error, a non-ASCII digit
 *     where the engine matches \d); effects only in the FastCommit.
 *   - "The last added" schema, spec and sort order follow update_table's
 *     bookkeeping (Java's Builder): the one this action added, or the one
 *     it reused if this commit added it (for a schema: the reused one; for
 *     a spec or order: the previous last added one), else none.
 *
 * IDENTIFICATION
 *	  src/writer/commit_schema.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "common/string.h"
#include "lib/stringinfo.h"
#include "nodes/pg_list.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/numeric.h"

#include "writer/commit_fast_int.h"
#include "writer/commit_rebase.h"
#include "format/metadata_json.h"

static int	schema_known(FastCommit *fc, int64 id);
static bool v1_member(FastCommit *fc, const char *list, const char *key, int64 id, const char *field,
					  const char *member);
static bool current_int(FastCommit *fc, const char *key, int64 *v);
static JsonbContainer *element_with(Jsonb *arr, const char *key, Jsonb *want, bool *unsure);
static bool fields_bind(FastCommit *fc, JsonbContainer *schema, JsonbContainer *owner, bool is_spec);
static char *bind_error(JsonbContainer *schema, JsonbContainer *f, bool is_spec, bool *unsure);
static JsonbValue *source_type(JsonbContainer *schema, int64 id, bool *unsure);
static bool bracket_number(const char *p);
static bool order_fields(FastCommit *fc, JsonbContainer *ord, JsonbContainer *schema,
						 JsonbParseState **state, int *k);
static bool order_ids(Jsonb *orders, Jsonb *fields, int64 *found, int64 *next);
static Jsonb *appended(Jsonb *arr, const char *key, int64 id, Jsonb *fields);
static bool spec_fields(FastCommit *fc, JsonbContainer *spec, JsonbContainer *schema,
						JsonbParseState **state, int *k, int64 *next_id);
static bool names_other_column(JsonbContainer *schema, JsonbContainer *f, const char *name, bool *unsure);
static void push_spec_field(JsonbParseState **state, JsonbContainer *f, int64 fid);
static bool spec_ids(Jsonb *specs, Jsonb *fields, int64 *found, int64 *next);
static bool same_member(JsonbValue *a, JsonbValue *b, const char *key);
static bool struct_fields_valid(FastCommit *fc, JsonbContainer *fields, const char *path);
static bool type_valid(FastCommit *fc, JsonbValue *t, const char *path);
static bool primitive_valid(FastCommit *fc, JsonbValue *t, const char *path);
static bool decimal_rest(const char *p);
static Jsonb *normalized_schema(JsonbContainer *schema, JsonbValue *fields);
static bool max_ids(JsonbContainer *c, int64 *highest);
static bool schema_ids(Jsonb *schemas, Jsonb *norm, int64 *found, int64 *next);
static Jsonb *appended_schema(Jsonb *schemas, Jsonb *norm, int64 id);

/*
 * set-current-schema, set-default-spec, set-default-sort-order and
 * upgrade-format-version, as update_table: an integer (skade.json_int); -1
 * (the last added one) refused, for this path adds none; naming what the
 * table already has, no change; an unknown current schema, a version past
 * 3 or a downgrade refused.  A real change is the engine's.
 */
bool
fast_set_id(FastCommit *fc, JsonbContainer *u, const char *field, const char *member)
{
	int64		want;
	int64		have;

	if (!fast_json_int(fc, u, field, NULL, &want) || !current_int(fc, member, &have))
		return false;
	if (strcmp(field, "format-version") == 0)
	{
		if (want > 3)
			return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
						  "updates[%d]: cannot upgrade to format version " INT64_FORMAT, fc->idx, want);
		if (want < have)
			return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
						  "updates[%d]: cannot downgrade v" INT64_FORMAT " table to v" INT64_FORMAT,
						  fc->idx, have, want);
		if (want > have)
		{
			fast_upgrade(fc, (int) want);
			fc->changes++;
		}
		return true;
	}
	if (want == -1 && strcmp(field, "sort-order-id") == 0 && fc->last_added_order >= 0)
		want = fc->last_added_order;
	else if (want == -1 && strcmp(field, "spec-id") == 0 && fc->last_added_spec >= 0)
		want = fc->last_added_spec;
	else if (want == -1 && strcmp(field, "schema-id") == 0 && fc->last_added_schema >= 0)
		want = fc->last_added_schema;
	else if (want == -1)
	{
		const char *what = strcmp(field, "schema-id") == 0 ? "schema" :
			strcmp(field, "spec-id") == 0 ? "spec" : "sort order";

		return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
					  "updates[%d]: cannot set last added %s: no %s has been added", fc->idx, what, what);
	}
	if (want == have)
		return true;
	if (strcmp(field, "schema-id") == 0)
	{
		int			known = schema_known(fc, want);

		if (known == 0)
			return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
						  "updates[%d]: cannot set current schema to unknown schema " INT64_FORMAT,
						  fc->idx, want);
		if (known < 0)
			return false;
		fc->current_schema_id = want;
		/* v1 keeps the current schema whole in "schema" too */
		if (fc->format_version == 1 && !v1_member(fc, "schemas", "schema-id", want, NULL, "schema"))
			return false;
	}
	/* (an unknown spec or sort order is refused at the end, as Java's build() does) */
	fast_replace_member(fc, member, psprintf(INT64_FORMAT, want));
	fc->bind_changed = true;
	fc->changes++;
	return true;
}

/*
 * A v1 member that repeats an element of a list (update_table's v1 steps):
 * into member, the element of list whose key is id (its field, if given),
 * as jsonb prints it.  false: no such element, or a list this path cannot
 * read as the engine does.
 */
static bool
v1_member(FastCommit *fc, const char *list, const char *key, int64 id, const char *field,
		  const char *member)
{
	Jsonb	   *arr = fast_member_jsonb(fc, list);
	int			n;
	int			i;

	if (arr == NULL || !JB_ROOT_IS_ARRAY(arr) || JB_ROOT_IS_SCALAR(arr))
		return false;
	n = JsonContainerSize(&arr->root);
	for (i = 0; i < n; i++)
	{
		JsonbValue *e = getIthJsonbValueFromContainer(&arr->root, i);
		JsonbValue	v;
		Jsonb	   *j;
		int64		x;

		if (e->type != jbvBinary || fast_jint(e->val.binary.data, key, &x) != J_INT)
			return false;
		if (x != id)
			continue;
		if (field != NULL && !fast_jvalue(e->val.binary.data, field, &v))
			return false;
		j = JsonbValueToJsonb(field != NULL ? &v : e);
		fast_replace_member(fc, member, JsonbToCString(NULL, &j->root, VARSIZE(j)));
		return true;
	}
	return false;
}

/*
 * A v1 result's "partition-spec": the fields of its default spec (written
 * by every commit that changes a v1 table, as update_table writes it).
 */
bool
fast_v1_partition_spec(FastCommit *fc)
{
	int64		id;

	return current_int(fc, "default-spec-id", &id) &&
		v1_member(fc, "partition-specs", "spec-id", id, "fields", "partition-spec");
}

/* a member's integer as the commit has left it so far */
static bool
current_int(FastCommit *fc, const char *key, int64 *v)
{
	const char *text = fast_replaced(fc, key);

	if (text)
		return SkadeIntText(text, strlen(text), v);
	return fast_member_int(fc, key, v);
}

/*
 * update_table's checks of a result whose current schema, default spec or
 * sort order changed (Java's build()): the default spec and sort order
 * exist, and their fields bind to the current schema (skade.bind_error,
 * the spec's fields first).  Refused as the engine refuses; false also for
 * what the engine's casts decide.
 */
bool
fast_defaults_bind(FastCommit *fc)
{
	static const char *const what[2][4] = {
		{"partition-specs", "spec-id", "default-spec-id", "cannot set default spec to unknown spec %s"},
		{"sort-orders", "order-id", "default-sort-order-id", "cannot set default sort order to unknown order %s"}};
	JsonbContainer *owner[2];
	JsonbContainer *schema;
	Jsonb	   *want;
	bool		unsure = false;
	int			k;

	for (k = 0; k < 2; k++)
	{
		want = fast_member_jsonb(fc, what[k][2]);
		if (want == NULL || !JB_ROOT_IS_SCALAR(want))
			return false;
		owner[k] = element_with(fast_member_jsonb(fc, what[k][0]), what[k][1], want, &unsure);
		if (unsure)
			return false;
		if (owner[k] == NULL)
			return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL, what[k][3],
						  JsonbToCString(NULL, &want->root, VARSIZE(want)));
	}
	want = fast_member_jsonb(fc, "current-schema-id");
	if (want == NULL || !JB_ROOT_IS_SCALAR(want))
		return false;
	schema = element_with(fast_member_jsonb(fc, "schemas"), "schema-id", want, &unsure);
	if (unsure)
		return false;
	return fields_bind(fc, schema, owner[0], true) && fields_bind(fc, schema, owner[1], false);
}

/*
 * The element of arr (a JSON array of objects) whose key equals want, as
 * `(SELECT x ... WHERE x->key = want)` finds it: NULL if none (or no arr);
 * *unsure when arr is no array or two match (the engine's errors).
 */
static JsonbContainer *
element_with(Jsonb *arr, const char *key, Jsonb *want, bool *unsure)
{
	JsonbContainer *found = NULL;
	int			n;
	int			i;

	if (arr == NULL)
		return NULL;			/* (no rows) */
	if (!JB_ROOT_IS_ARRAY(arr) || JB_ROOT_IS_SCALAR(arr))
	{
		*unsure = true;
		return NULL;
	}
	n = JsonContainerSize(&arr->root);
	for (i = 0; i < n; i++)
	{
		JsonbValue *e = getIthJsonbValueFromContainer(&arr->root, i);
		JsonbValue	v;

		if (e->type != jbvBinary || !fast_jvalue(e->val.binary.data, key, &v) ||
			!DatumGetBool(DirectFunctionCall2(jsonb_eq, JsonbPGetDatum(JsonbValueToJsonb(&v)),
											  JsonbPGetDatum(want))))
			continue;
		if (found)
			*unsure = true;
		found = e->val.binary.data;
	}
	return found;
}

/* the fields of a spec or sort order bind to schema (the first that does not is refused) */
static bool
fields_bind(FastCommit *fc, JsonbContainer *schema, JsonbContainer *owner, bool is_spec)
{
	JsonbValue	fields;
	bool		unsure = false;
	int			n;
	int			i;

	if (!fast_jvalue(owner, "fields", &fields))
		return true;			/* (no rows) */
	if (fields.type != jbvBinary || !JsonContainerIsArray(fields.val.binary.data))
		return false;
	n = JsonContainerSize(fields.val.binary.data);
	for (i = 0; i < n; i++)
	{
		JsonbValue *f = getIthJsonbValueFromContainer(fields.val.binary.data, i);
		char	   *error;

		if (f->type != jbvBinary || !JsonContainerIsObject(f->val.binary.data))
			return false;
		error = bind_error(schema, f->val.binary.data, is_spec, &unsure);
		if (unsure)
			return false;
		if (error)
			return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
						  "the default partition spec or sort order does not fit the current schema: %s",
						  error);
	}
	return true;
}

/*
 * skade.bind_error(schema, f, is_spec): why field f of a spec (is_spec) or
 * sort order cannot apply to the schema's column source-id, or NULL.
 * *unsure for a source-id the engine casts with an error.
 */
static char *
bind_error(JsonbContainer *schema, JsonbContainer *f, bool is_spec, bool *unsure)
{
	static const char *const bucket[] = {"int", "long", "date", "time", "timestamp", "timestamptz",
	"timestamp_ns", "timestamptz_ns", "string", "binary", "fixed", "decimal", "uuid", NULL};
	static const char *const truncate[] = {"int", "long", "string", "binary", "decimal", NULL};
	static const char *const days[] = {"date", "timestamp", "timestamptz", "timestamp_ns",
	"timestamptz_ns", NULL};
	static const char *const hours[] = {"timestamp", "timestamptz", "timestamp_ns", "timestamptz_ns", NULL};
	const char *const *allowed = NULL;
	JsonbValue *t = NULL;
	char	   *tr = NULL;
	char	   *sid = fast_jtext(f, "source-id");
	char	   *type;
	char	   *base;
	int64		id;
	JInt		j = fast_jint(f, "source-id", &id);

	if (fast_jtype(f, "transform") && !fast_jtype_is(f, "transform", "null") &&
		!fast_jstring(f, "transform", &tr))
		tr = fast_jtext(f, "transform");
	if (is_spec && tr && strcmp(tr, "void") == 0)
		return NULL;
	if (j == J_OTHER || (j == J_INT && (id < PG_INT32_MIN || id > PG_INT32_MAX)))
	{
		*unsure = true;			/* (a cast to integer) */
		return NULL;
	}
	if (j == J_INT && schema)
		t = source_type(schema, id, unsure);
	if (*unsure)
		return NULL;
	if (t == NULL)
		return psprintf("source id %s is not a field of the current schema", j == J_INT ? sid : "");
	if (t->type != jbvString ||
		(t->val.string.len == 7 && strncmp(t->val.string.val, "variant", 7) == 0))
		return psprintf("source id %s is not a primitive field", sid);
	type = pnstrdup(t->val.string.val, t->val.string.len);
	base = pnstrdup(type, strcspn(type, "[("));
	if (tr == NULL)
		return NULL;
	if (strcmp(tr, "identity") == 0)
		return strcmp(base, "geometry") != 0 && strcmp(base, "geography") != 0 ? NULL :
			psprintf("transform %s cannot apply to source id %s of type %s", tr, sid, type);
	if (strncmp(tr, "bucket[", 7) == 0 && bracket_number(tr + 7))
		allowed = bucket;
	else if (strncmp(tr, "truncate[", 9) == 0 && bracket_number(tr + 9))
		allowed = truncate;
	else if (strcmp(tr, "year") == 0 || strcmp(tr, "month") == 0 || strcmp(tr, "day") == 0)
		allowed = days;
	else if (strcmp(tr, "hour") == 0)
		allowed = hours;
	for (; allowed && *allowed; allowed++)
		if (strcmp(*allowed, base) == 0)
			return NULL;
	return allowed ? psprintf("transform %s cannot apply to source id %s of type %s", tr, sid, type) : NULL;
}

/* "123]" and nothing after: the rest of the engine's '^bucket\[[0-9]+\]$' */
static bool
bracket_number(const char *p)
{
	size_t		n = strspn(p, "0123456789");

	return n > 0 && strcmp(p + n, "]") == 0;
}

/*
 * skade.source_type(schema, id): the type of the field with that id,
 * reached from the schema through structs only, breadth first as the
 * engine's recursive query finds it (NULL: none).  *unsure where the engine
 * would fail to read a fields array.
 */
static JsonbValue *
source_type(JsonbContainer *schema, int64 id, bool *unsure)
{
	List	   *level = NIL;
	JsonbValue	fields;

	if (fast_jvalue(schema, "fields", &fields))
	{
		if (fields.type != jbvBinary || !JsonContainerIsArray(fields.val.binary.data))
		{
			*unsure = true;
			return NULL;
		}
		level = list_make1(fields.val.binary.data);
	}
	while (level != NIL)
	{
		List	   *next = NIL;
		ListCell   *lc;

		foreach(lc, level)
		{
			JsonbContainer *arr = lfirst(lc);
			int			n = JsonContainerSize(arr);
			int			i;

			for (i = 0; i < n; i++)
			{
				JsonbValue *e = getIthJsonbValueFromContainer(arr, i);
				JsonbContainer *field;
				JsonbContainer *type;
				JsonbValue	v;
				int64		x;
				char	   *kind;

				if (e->type != jbvBinary || !JsonContainerIsObject(e->val.binary.data))
					continue;
				field = e->val.binary.data;
				if (fast_jvalue(field, "id", &v) && v.type == jbvNumeric)
				{
					if (fast_jint(field, "id", &x) != J_INT)
					{
						*unsure = true; /* (1.0 equals 1 for jsonb) */
						return NULL;
					}
					if (x == id)
						return fast_jvalue(field, "type", &v) ?
							(JsonbValue *) memcpy(palloc(sizeof(JsonbValue)), &v, sizeof(JsonbValue)) : NULL;
				}
				if (fast_jobject(field, "type", &type) && fast_jstring(type, "type", &kind) &&
					strcmp(kind, "struct") == 0 && fast_jvalue(type, "fields", &v))
				{
					if (v.type != jbvBinary || !JsonContainerIsArray(v.val.binary.data))
					{
						*unsure = true;
						return NULL;
					}
					next = lappend(next, v.val.binary.data);
				}
			}
		}
		level = next;
	}
	return NULL;
}

/*
 * add-sort-order, as skade.add_sort_order() and update_table's bookkeeping
 * (Java's Builder.addSortOrderInternal): every field with a numeric
 * source-id, a string transform, a direction and a null order, bound to
 * the current schema; order id 0 for the unsorted order only; an order
 * with the same fields is reused (no change), else added as max id + 1 (the
 * unsorted one as 0).  The last added order is the new one, or the reused
 * one if the last added one was added by this commit, else none.
 */
bool
fast_add_sort_order(FastCommit *fc, JsonbContainer *u)
{
	JsonbValue	ord;
	JsonbParseState *state = NULL;
	JsonbContainer *schema;
	Jsonb	   *fields;
	Jsonb	   *orders = fast_member_jsonb(fc, "sort-orders");
	Jsonb	   *cur = fast_member_jsonb(fc, "current-schema-id");
	int64		order_id;
	int64		found;
	int64		id;
	bool		unsure = false;
	int			k;

	/* (the engine finds the current schema first) */
	if (cur == NULL || !JB_ROOT_IS_SCALAR(cur))
		return false;
	schema = element_with(fast_member_jsonb(fc, "schemas"), "schema-id", cur, &unsure);
	if (unsure)
		return false;
	if (!fast_jvalue(u, "sort-order", &ord) || ord.type != jbvBinary ||
		!JsonContainerIsObject(ord.val.binary.data) ||
		(fast_jtype(ord.val.binary.data, "fields") && !fast_jtype_is(ord.val.binary.data, "fields", "array")))
		return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
					  "updates[%d].sort-order must be an object with a fields array", fc->idx);
	if (!order_fields(fc, ord.val.binary.data, schema, &state, &k))
		return false;
	fields = JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_ARRAY, NULL));
	if (!fast_json_int(fc, ord.val.binary.data, "order-id",
				  psprintf("updates[%d].sort-order.order-id", fc->idx), &order_id))
		return false;
	if ((order_id == 0) != (k == 0))
		return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
					  "updates[%d].sort-order: order id 0 is for the unsorted order, and the unsorted "
					  "order's id is 0", fc->idx);
	if (orders == NULL || !JB_ROOT_IS_ARRAY(orders) || JB_ROOT_IS_SCALAR(orders) ||
		!order_ids(orders, fields, &found, &id))
		return false;
	if (found >= 0)
	{
		/* reused: no change */
		fc->last_added_order = fc->last_added_order >= 0 &&
			list_member_int(fc->added_orders, (int) fc->last_added_order) ? found : -1;
		return true;
	}
	if (k == 0)
		id = 0;
	fast_replace_member(fc, "sort-orders", JsonbToCString(NULL, &appended(orders, "order-id", id, fields)->root, -1));
	fc->last_added_order = id;
	fc->added_orders = lappend_int(fc->added_orders, (int) id);
	fc->changes++;
	return true;
}

/*
 * The fields of a sort order, checked and bound as skade.add_sort_order()
 * checks them, pushed into *state (an open array) as it builds them; *k
 * their number.  false: refused, or a shape the engine decides.
 */
static bool
order_fields(FastCommit *fc, JsonbContainer *ord, JsonbContainer *schema, JsonbParseState **state, int *k)
{
	static const char *const keys[4] = {"transform", "source-id", "direction", "null-order"};
	JsonbValue	fields;
	int			n = 0;
	int			i;

	pushJsonbValue(state, WJB_BEGIN_ARRAY, NULL);
	*k = 0;
	if (fast_jvalue(ord, "fields", &fields))
		n = JsonContainerSize(fields.val.binary.data);
	for (i = 0; i < n; i++)
	{
		JsonbValue *e = getIthJsonbValueFromContainer(fields.val.binary.data, i);
		JsonbContainer *f = e->type == jbvBinary && JsonContainerIsObject(e->val.binary.data) ?
			e->val.binary.data : NULL;
		char	   *dir = NULL;
		char	   *nulls = NULL;
		char	   *error;
		bool		unsure = false;
		int			j;

		if (f == NULL || !fast_jtype_is(f, "source-id", "number") || !fast_jtype_is(f, "transform", "string") ||
			(fast_jtype(f, "direction") && !fast_jtype_is(f, "direction", "null") &&
			 (!fast_jstring(f, "direction", &dir) || (strcmp(dir, "asc") != 0 && strcmp(dir, "desc") != 0))) ||
			(fast_jtype(f, "null-order") && !fast_jtype_is(f, "null-order", "null") &&
			 (!fast_jstring(f, "null-order", &nulls) ||
			  (strcmp(nulls, "nulls-first") != 0 && strcmp(nulls, "nulls-last") != 0))))
			return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
						  "updates[%d].sort-order.fields[%d] needs source-id, transform, direction "
						  "asc|desc and null-order nulls-first|nulls-last", fc->idx, i);
		if (dir == NULL || nulls == NULL)
			return false;		/* (a missing one passes the engine's NULL-valued check) */
		error = bind_error(schema, f, false, &unsure);
		if (unsure)
			return false;
		if (error)
			return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
						  "updates[%d].sort-order.fields[%d]: %s", fc->idx, i, error);
		pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
		for (j = 0; j < 4; j++)
		{
			JsonbValue	key;
			JsonbValue	v;

			key.type = jbvString;
			key.val.string.val = (char *) keys[j];
			key.val.string.len = strlen(keys[j]);
			fast_jvalue(f, keys[j], &v);
			pushJsonbValue(state, WJB_KEY, &key);
			pushJsonbValue(state, WJB_VALUE, &v);
		}
		pushJsonbValue(state, WJB_END_OBJECT, NULL);
		(*k)++;
	}
	return true;
}

/*
 * Over a table's sort orders: the smallest id of one whose fields equal
 * fields (*found, -1: none) and max(0, every id) + 1 (*next).  false when an
 * order-id is no integer (the engine's casts).
 */
static bool
order_ids(Jsonb *orders, Jsonb *fields, int64 *found, int64 *next)
{
	int			n = JsonContainerSize(&orders->root);
	int64		max = 0;
	int			i;

	*found = -1;
	for (i = 0; i < n; i++)
	{
		JsonbValue *e = getIthJsonbValueFromContainer(&orders->root, i);
		JsonbValue	f;
		int64		id;

		if (e->type != jbvBinary || !JsonContainerIsObject(e->val.binary.data) ||
			fast_jint(e->val.binary.data, "order-id", &id) != J_INT || id < PG_INT32_MIN || id > PG_INT32_MAX)
			return false;
		max = Max(max, id);
		if (fast_jvalue(e->val.binary.data, "fields", &f) &&
			DatumGetBool(DirectFunctionCall2(jsonb_eq, JsonbPGetDatum(JsonbValueToJsonb(&f)),
											 JsonbPGetDatum(fields))) &&
			(*found < 0 || id < *found))
			*found = id;
	}
	*next = max + 1;
	return true;
}

/* arr || [{key: id, "fields": fields}] */
static Jsonb *
appended(Jsonb *arr, const char *key, int64 id, Jsonb *fields)
{
	JsonbParseState *state = NULL;
	JsonbValue	k;
	JsonbValue	v;
	int			n = JsonContainerSize(&arr->root);
	int			i;

	pushJsonbValue(&state, WJB_BEGIN_ARRAY, NULL);
	for (i = 0; i < n; i++)
		pushJsonbValue(&state, WJB_ELEM, getIthJsonbValueFromContainer(&arr->root, i));
	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	k.type = jbvString;
	k.val.string.val = (char *) key;
	k.val.string.len = strlen(key);
	pushJsonbValue(&state, WJB_KEY, &k);
	v.type = jbvNumeric;
	v.val.numeric = DatumGetNumeric(DirectFunctionCall1(int8_numeric, Int64GetDatum(id)));
	pushJsonbValue(&state, WJB_VALUE, &v);
	k.val.string.val = "fields";
	k.val.string.len = 6;
	pushJsonbValue(&state, WJB_KEY, &k);
	v.type = jbvBinary;
	v.val.binary.data = &fields->root;
	v.val.binary.len = VARSIZE(fields) - VARHDRSZ;
	pushJsonbValue(&state, WJB_VALUE, &v);
	pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	return JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_ARRAY, NULL));
}

/*
 * add-spec, as skade.add_spec() and update_table's bookkeeping (Java's
 * Builder.addPartitionSpecInternal): every field with a numeric source-id,
 * a string transform and a name, bound to the current schema, named
 * neither as another column nor twice; field ids as sent, missing ones
 * after last-partition-id; a spec with the same source ids, transforms and
 * names, position by position, is reused (no change), else added as max
 * id + 1 and last-partition-id raised.  The last added spec as for sort
 * orders.
 */
bool
fast_add_spec(FastCommit *fc, JsonbContainer *u)
{
	JsonbValue	spec;
	JsonbParseState *state = NULL;
	JsonbContainer *schema;
	Jsonb	   *fields;
	Jsonb	   *specs = fast_member_jsonb(fc, "partition-specs");
	Jsonb	   *cur = fast_member_jsonb(fc, "current-schema-id");
	int64		next_id;
	int64		last_id;
	int64		found;
	int64		id;
	bool		unsure = false;
	char	   *text;
	int			k;

	/* (the engine finds the current schema and last-partition-id first) */
	if (cur == NULL || !JB_ROOT_IS_SCALAR(cur) || !current_int(fc, "last-partition-id", &last_id))
		return false;
	schema = element_with(fast_member_jsonb(fc, "schemas"), "schema-id", cur, &unsure);
	if (unsure)
		return false;
	if (!fast_jvalue(u, "spec", &spec) || spec.type != jbvBinary ||
		!JsonContainerIsObject(spec.val.binary.data) ||
		(fast_jtype(spec.val.binary.data, "fields") && !fast_jtype_is(spec.val.binary.data, "fields", "array")))
		return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
					  "updates[%d].spec must be an object with a fields array", fc->idx);
	next_id = last_id;
	if (!spec_fields(fc, spec.val.binary.data, schema, &state, &k, &next_id))
		return false;
	fields = JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_ARRAY, NULL));
	if (specs == NULL || !JB_ROOT_IS_ARRAY(specs) || JB_ROOT_IS_SCALAR(specs) ||
		!spec_ids(specs, fields, &found, &id))
		return false;
	if (found >= 0)
	{
		/* reused: no change */
		fc->last_added_spec = fc->last_added_spec >= 0 &&
			list_member_int(fc->added_specs, (int) fc->last_added_spec) ? found : -1;
		return true;
	}
	text = JsonbToCString(NULL, &appended(specs, "spec-id", id, fields)->root, -1);
	fast_replace_member(fc, "partition-specs", text);
	fc->specs_text = SkadeCompactJson(text, strlen(text), fc->base_location);
	fast_replace_member(fc, "last-partition-id", psprintf(INT64_FORMAT, Max(last_id, next_id)));
	fc->last_added_spec = id;
	fc->added_specs = lappend_int(fc->added_specs, (int) id);
	fc->changes++;
	return true;
}

/*
 * The fields of a spec, checked, bound and numbered as skade.add_spec()
 * does, pushed into *state (an open array); *k their number, *next_id the
 * highest field id so far.  false: refused, or a shape the engine decides.
 */
static bool
spec_fields(FastCommit *fc, JsonbContainer *spec, JsonbContainer *schema, JsonbParseState **state,
			int *k, int64 *next_id)
{
	JsonbValue	fields;
	List	   *names = NIL;
	int			n = 0;
	int			i;

	pushJsonbValue(state, WJB_BEGIN_ARRAY, NULL);
	*k = 0;
	if (fast_jvalue(spec, "fields", &fields))
		n = JsonContainerSize(fields.val.binary.data);
	for (i = 0; i < n; i++)
	{
		JsonbValue *e = getIthJsonbValueFromContainer(fields.val.binary.data, i);
		JsonbContainer *f = e->type == jbvBinary && JsonContainerIsObject(e->val.binary.data) ?
			e->val.binary.data : NULL;
		char	   *name = NULL;
		char	   *error;
		bool		unsure = false;
		int64		fid;
		ListCell   *lc;

		if (f == NULL || !fast_jtype_is(f, "source-id", "number") || !fast_jtype_is(f, "transform", "string") ||
			!fast_jtype(f, "name") || fast_jtype_is(f, "name", "null") ||
			(fast_jtype_is(f, "name", "string") && fast_jstring(f, "name", &name) && name[0] == '\0'))
			return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
						  "updates[%d].spec.fields[%d] needs source-id, transform and name", fc->idx, i);
		if (name == NULL)
			return false;		/* (a name that is no string: the engine's text) */
		error = bind_error(schema, f, true, &unsure);
		if (unsure)
			return false;
		if (error)
			return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
						  "updates[%d].spec.fields[%d]: %s", fc->idx, i, error);
		if (names_other_column(schema, f, name, &unsure))
			return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
						  "updates[%d].spec.fields[%d]: name \"%s\" is another column of the schema",
						  fc->idx, i, name);
		if (unsure)
			return false;
		foreach(lc, names)
			if (strcmp((char *) lfirst(lc), name) == 0)
				return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
							  "updates[%d].spec.fields[%d]: name \"%s\" is used twice", fc->idx, i, name);
		names = lappend(names, name);
		if (fast_jtype_is(f, "field-id", "number"))
		{
			if (fast_jint(f, "field-id", &fid) != J_INT || fid < PG_INT32_MIN || fid > PG_INT32_MAX)
				return false;	/* (a cast to integer) */
		}
		else if (*next_id >= PG_INT32_MAX)
			return false;		/* (an integer overflow) */
		else
			fid = ++(*next_id);
		*next_id = Max(*next_id, fid);
		if (fc->format_version == 1 && fid != 1000 + *k)
			return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
							   "updates[%d].spec does not use the sequential field ids v1 requires", fc->idx);
		push_spec_field(state, f, fid);
		(*k)++;
	}
	return true;
}

/*
 * Is the spec field's name that of a top-level column other than its source
 * (when its source is a column of the schema)?
 */
static bool
names_other_column(JsonbContainer *schema, JsonbContainer *f, const char *name, bool *unsure)
{
	JsonbValue	cols;
	JsonbValue	sid;
	int64		id;
	int			n;
	int			i;

	if (fast_jint(f, "source-id", &id) != J_INT || id < PG_INT32_MIN || id > PG_INT32_MAX)
	{
		*unsure = true;			/* (the engine casts it to integer) */
		return false;
	}
	if (schema == NULL || source_type(schema, id, unsure) == NULL || *unsure)
		return false;
	if (!fast_jvalue(schema, "fields", &cols))
		return false;
	fast_jvalue(f, "source-id", &sid);
	n = JsonContainerSize(cols.val.binary.data);
	for (i = 0; i < n; i++)
	{
		JsonbValue *c = getIthJsonbValueFromContainer(cols.val.binary.data, i);
		char	   *cname;
		JsonbValue	cid;

		if (c->type != jbvBinary || !JsonContainerIsObject(c->val.binary.data) ||
			!fast_jvalue(c->val.binary.data, "id", &cid))
			continue;
		if (!fast_jstring(c->val.binary.data, "name", &cname))
		{
			if (fast_jvalue(c->val.binary.data, "name", &cid) && cid.type != jbvNull)
				*unsure = true; /* (a name that is no string: the engine's text) */
			continue;
		}
		if (strcmp(cname, name) == 0 &&
			!DatumGetBool(DirectFunctionCall2(jsonb_eq, JsonbPGetDatum(JsonbValueToJsonb(&cid)),
											  JsonbPGetDatum(JsonbValueToJsonb(&sid)))))
			return true;
	}
	return false;
}

/* {"name", "transform", "source-id" as sent, "field-id": fid} into an open array */
static void
push_spec_field(JsonbParseState **state, JsonbContainer *f, int64 fid)
{
	static const char *const keys[3] = {"name", "transform", "source-id"};
	JsonbValue	key;
	JsonbValue	v;
	int			j;

	pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
	key.type = jbvString;
	for (j = 0; j < 3; j++)
	{
		key.val.string.val = (char *) keys[j];
		key.val.string.len = strlen(keys[j]);
		fast_jvalue(f, keys[j], &v);
		pushJsonbValue(state, WJB_KEY, &key);
		pushJsonbValue(state, WJB_VALUE, &v);
	}
	key.val.string.val = "field-id";
	key.val.string.len = 8;
	pushJsonbValue(state, WJB_KEY, &key);
	v.type = jbvNumeric;
	v.val.numeric = DatumGetNumeric(DirectFunctionCall1(int8_numeric, Int64GetDatum(fid)));
	pushJsonbValue(state, WJB_VALUE, &v);
	pushJsonbValue(state, WJB_END_OBJECT, NULL);
}

/*
 * Over a table's specs: the smallest id of one whose fields match fields
 * position by position in source-id, transform and name (*found, -1: none)
 * and max id + 1 (*next, 0 for none).  false where the engine's casts or
 * array functions would fail.
 */
static bool
spec_ids(Jsonb *specs, Jsonb *fields, int64 *found, int64 *next)
{
	static const char *const keys[3] = {"source-id", "transform", "name"};
	int			n = JsonContainerSize(&specs->root);
	int			k = JsonContainerSize(&fields->root);
	int64		max = -1;
	int			i;

	*found = -1;
	for (i = 0; i < n; i++)
	{
		JsonbValue *e = getIthJsonbValueFromContainer(&specs->root, i);
		JsonbValue	f;
		int64		id;
		bool		same = true;
		int			p;
		int			j;

		if (e->type != jbvBinary || !JsonContainerIsObject(e->val.binary.data) ||
			fast_jint(e->val.binary.data, "spec-id", &id) != J_INT || id < PG_INT32_MIN || id > PG_INT32_MAX)
			return false;
		max = Max(max, id);
		if (!fast_jvalue(e->val.binary.data, "fields", &f))
			continue;
		if (f.type != jbvBinary || !JsonContainerIsArray(f.val.binary.data))
			return false;
		if ((int) JsonContainerSize(f.val.binary.data) != k)
			continue;
		for (p = 0; p < k && same; p++)
		{
			JsonbValue *a = getIthJsonbValueFromContainer(f.val.binary.data, p);
			JsonbValue *b = getIthJsonbValueFromContainer(&fields->root, p);

			for (j = 0; j < 3 && same; j++)
				same = same_member(a, b, keys[j]);
		}
		if (same && (*found < 0 || id < *found))
			*found = id;
	}
	*next = max + 1;
	return true;
}

/* a->key IS NOT DISTINCT FROM b->key (jsonb; a missing member, or no object, is NULL) */
static bool
same_member(JsonbValue *a, JsonbValue *b, const char *key)
{
	JsonbValue	va;
	JsonbValue	vb;
	bool		ha = a->type == jbvBinary && fast_jvalue(a->val.binary.data, key, &va);
	bool		hb = b->type == jbvBinary && fast_jvalue(b->val.binary.data, key, &vb);

	if (!ha || !hb)
		return ha == hb;
	return DatumGetBool(DirectFunctionCall2(jsonb_eq, JsonbPGetDatum(JsonbValueToJsonb(&va)),
											JsonbPGetDatum(JsonbValueToJsonb(&vb))));
}

/*
 * add-schema, as skade.add_schema() and update_table's bookkeeping (Java's
 * Builder.addSchemaInternal): an object whose fields are a valid struct
 * (skade.fresh_type's checks), with no v3 type in an older table; ids kept
 * as sent; an identical schema is reused, and no change when last-column-id
 * stays; else added as max id + 1; last-column-id raised to the highest id
 * in it.  The last added schema is the new or raised one, or the reused
 * one if this commit added it.
 */
bool
fast_add_schema(FastCommit *fc, JsonbContainer *u)
{
	static const char *const v3types[] = {"\"timestamp_ns", "\"timestamptz_ns", "\"variant", "\"unknown",
	"\"geometry", "\"geography"};
	JsonbValue	schema;
	JsonbValue	fields;
	Jsonb	   *norm;
	Jsonb	   *schemas = fast_member_jsonb(fc, "schemas");
	char	   *text;
	int64		last;
	int64		highest = 0;
	int64		found;
	int64		id;
	int			i;

	if (!fast_jvalue(u, "schema", &schema) || schema.type != jbvBinary ||
		!JsonContainerIsObject(schema.val.binary.data))
		return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL, "updates[%d].schema must be an object", fc->idx);
	if (!fast_jvalue(schema.val.binary.data, "fields", &fields) || fields.type != jbvBinary ||
		!JsonContainerIsArray(fields.val.binary.data))
		return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL, "schema: updates[%d].schema.fields must be an array",
					  fc->idx);
	if (!struct_fields_valid(fc, fields.val.binary.data, psprintf("updates[%d].schema", fc->idx)))
		return false;
	text = fast_jtext(u, "schema");
	for (i = 0; i < lengthof(v3types) && fc->format_version < 3; i++)
		if (strstr(text, v3types[i]) != NULL)
			return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
						  "updates[%d].schema: a type of format version 3 in a v%d table", fc->idx,
						  fc->format_version);
	if ((norm = normalized_schema(schema.val.binary.data, &fields)) == NULL ||
		!max_ids(schema.val.binary.data, &highest) || !current_int(fc, "last-column-id", &last) ||
		schemas == NULL || !JB_ROOT_IS_ARRAY(schemas) || JB_ROOT_IS_SCALAR(schemas) ||
		!schema_ids(schemas, norm, &found, &id))
		return false;
	highest = Max(highest, last);
	if (found >= 0 && highest == last)
	{
		/* reused: no change */
		fc->last_added_schema = fc->last_added_schema >= 0 &&
			list_member_int(fc->added_schemas, (int) found) ? found : -1;
		return true;
	}
	fast_replace_member(fc, "last-column-id", psprintf(INT64_FORMAT, highest));
	if (found < 0)
		fast_replace_member(fc, "schemas", JsonbToCString(NULL, &appended_schema(schemas, norm, id)->root, -1));
	else
		id = found;
	fc->last_added_schema = id;
	fc->added_schemas = lappend_int(fc->added_schemas, (int) id);
	fc->changes++;
	return true;
}

/*
 * skade.fresh_type's checks of a struct's fields (at path): each with a
 * string name, a boolean required and a type, all of them first; then each
 * field's type, in order.  false: refused (or the engine's to decide).
 */
static bool
struct_fields_valid(FastCommit *fc, JsonbContainer *fields, const char *path)
{
	int			n = JsonContainerSize(fields);
	int			i;

	for (i = 0; i < n; i++)
	{
		JsonbValue *e = getIthJsonbValueFromContainer(fields, i);
		JsonbContainer *f = e->type == jbvBinary && JsonContainerIsObject(e->val.binary.data) ?
			e->val.binary.data : NULL;
		JsonbValue	v;

		if (f == NULL || !fast_jtype_is(f, "name", "string") || !fast_jvalue(f, "type", &v) ||
			!fast_jtype_is(f, "required", "boolean"))
			return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
						  "schema: field %d of %s needs \"name\" (string), \"required\" (boolean) and \"type\"",
						  i, path);
	}
	for (i = 0; i < n; i++)
	{
		JsonbContainer *f = getIthJsonbValueFromContainer(fields, i)->val.binary.data;
		char	   *name;
		JsonbValue	t;

		fast_jstring(f, "name", &name);
		fast_jvalue(f, "type", &t);
		if (!type_valid(fc, &t, psprintf("%s.%s", path, name)))
			return false;
	}
	return true;
}

/* skade.fresh_type's checks of one type at path */
static bool
type_valid(FastCommit *fc, JsonbValue *t, const char *path)
{
	JsonbContainer *o;
	JsonbValue	v;
	JsonbValue	w;
	char	   *kind;

	if (t->type == jbvString)
		return primitive_valid(fc, t, path);
	if (t->type != jbvBinary || !JsonContainerIsObject(t->val.binary.data) ||
		!fast_jvalue(t->val.binary.data, "type", &v))
		return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL, "schema: %s is not a type", path);
	o = t->val.binary.data;
	if (v.type != jbvString)
		return false;			/* (a type that is no string: the engine's text) */
	kind = pnstrdup(v.val.string.val, v.val.string.len);
	if (strcmp(kind, "struct") == 0)
	{
		if (!fast_jvalue(o, "fields", &v) || v.type != jbvBinary || !JsonContainerIsArray(v.val.binary.data))
			return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL, "schema: %s.fields must be an array", path);
		return struct_fields_valid(fc, v.val.binary.data, path);
	}
	if (strcmp(kind, "list") == 0)
	{
		if (!fast_jvalue(o, "element", &v) || !fast_jtype_is(o, "element-required", "boolean"))
			return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
						  "schema: %s (list) needs \"element\" and \"element-required\"", path);
		return type_valid(fc, &v, psprintf("%s.element", path));
	}
	if (strcmp(kind, "map") == 0)
	{
		if (!fast_jvalue(o, "key", &v) || !fast_jvalue(o, "value", &w) || !fast_jtype_is(o, "value-required", "boolean"))
			return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
						  "schema: %s (map) needs \"key\", \"value\" and \"value-required\"", path);
		return type_valid(fc, &v, psprintf("%s.key", path)) && type_valid(fc, &w, psprintf("%s.value", path));
	}
	return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL, "schema: %s has unknown type \"%s\"", path, kind);
}

/* a primitive type's name, as skade.fresh_type's pattern accepts it */
static bool
primitive_valid(FastCommit *fc, JsonbValue *t, const char *path)
{
	static const char *const names[] = {"boolean", "int", "long", "float", "double", "date", "time",
		"timestamp", "timestamptz", "timestamp_ns", "timestamptz_ns", "string", "uuid", "binary",
	"variant", "unknown", NULL};
	char	   *s = pnstrdup(t->val.string.val, t->val.string.len);
	Jsonb	   *j = JsonbValueToJsonb(t);
	const char *const *n;

	if (!pg_is_ascii(s))
		return false;			/* (\d of a non-ASCII digit is the engine's) */
	for (n = names; *n; n++)
		if (strcmp(s, *n) == 0)
			return true;
	if ((strncmp(s, "decimal(", 8) == 0 && decimal_rest(s + 8)) ||
		(strncmp(s, "fixed[", 6) == 0 && bracket_number(s + 6)) ||
		strcmp(s, "geometry") == 0 || strcmp(s, "geography") == 0 ||
		((strncmp(s, "geometry(", 9) == 0 || strncmp(s, "geography(", 10) == 0) && s[strlen(s) - 1] == ')'))
		return true;
	return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL, "schema: %s has unknown type %s", path,
				  JsonbToCString(NULL, &j->root, VARSIZE(j)));
}

/* after "decimal(": digits, ",", spaces, digits, ")" and nothing more */
static bool
decimal_rest(const char *p)
{
	size_t		n = strspn(p, "0123456789");

	if (n == 0 || p[n] != ',')
		return false;
	p += n + 1;
	p += strspn(p, " ");
	n = strspn(p, "0123456789");
	return n > 0 && strcmp(p + n, ")") == 0;
}

/*
 * {"type": "struct", "fields": fields} with the schema's identifier-field-ids
 * when it has some (NULL when they are no array: the engine's error).
 */
static Jsonb *
normalized_schema(JsonbContainer *schema, JsonbValue *fields)
{
	JsonbParseState *state = NULL;
	JsonbValue	k;
	JsonbValue	v;
	JsonbValue	ids;
	bool		has_ids = fast_jvalue(schema, "identifier-field-ids", &ids);

	if (has_ids && (ids.type != jbvBinary || !JsonContainerIsArray(ids.val.binary.data)))
		return NULL;
	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	k.type = jbvString;
	k.val.string.val = "type";
	k.val.string.len = 4;
	pushJsonbValue(&state, WJB_KEY, &k);
	v.type = jbvString;
	v.val.string.val = "struct";
	v.val.string.len = 6;
	pushJsonbValue(&state, WJB_VALUE, &v);
	k.val.string.val = "fields";
	k.val.string.len = 6;
	pushJsonbValue(&state, WJB_KEY, &k);
	pushJsonbValue(&state, WJB_VALUE, fields);
	if (has_ids && JsonContainerSize(ids.val.binary.data) > 0)
	{
		k.val.string.val = "identifier-field-ids";
		k.val.string.len = strlen("identifier-field-ids");
		pushJsonbValue(&state, WJB_KEY, &k);
		pushJsonbValue(&state, WJB_VALUE, &ids);
	}
	return JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_OBJECT, NULL));
}

/*
 * The highest of the "id", "element-id", "key-id" and "value-id" members at
 * any depth of the schema (the engine's `lax $.**.id` and so on, each cast
 * to integer): false when one is no integer (the engine's cast fails).
 */
static bool
max_ids(JsonbContainer *c, int64 *highest)
{
	static const char *const keys[] = {"id", "element-id", "key-id", "value-id"};
	JsonbIterator *it = JsonbIteratorInit(c);
	JsonbIteratorToken tok;
	JsonbValue	v;
	bool		take = false;

	while ((tok = JsonbIteratorNext(&it, &v, false)) != WJB_DONE)
	{
		bool		was = take;
		int64		x;
		char	   *s;
		int			i;

		take = false;
		if (tok == WJB_KEY)
		{
			for (i = 0; i < lengthof(keys); i++)
				take = take || (v.val.string.len == (int) strlen(keys[i]) &&
								strncmp(v.val.string.val, keys[i], v.val.string.len) == 0);
			continue;
		}
		if (!was)
			continue;
		/* the value of such a key: an integer, else the engine's cast fails */
		if (tok != WJB_VALUE || v.type != jbvNumeric)
			return false;
		s = DatumGetCString(DirectFunctionCall1(numeric_out, NumericGetDatum(v.val.numeric)));
		if (!SkadeIntText(s, strlen(s), &x) || x < PG_INT32_MIN || x > PG_INT32_MAX)
			return false;
		*highest = Max(*highest, x);
	}
	return true;
}

/*
 * Over a table's schemas: the id of the first whose members but schema-id
 * equal norm (*found, -1: none) and max id + 1 (*next).  false where the
 * engine's casts fail.
 */
static bool
schema_ids(Jsonb *schemas, Jsonb *norm, int64 *found, int64 *next)
{
	int			n = JsonContainerSize(&schemas->root);
	int64		max = -1;
	int			i;

	*found = -1;
	for (i = 0; i < n; i++)
	{
		JsonbValue *e = getIthJsonbValueFromContainer(&schemas->root, i);
		Jsonb	   *x;
		int64		id;

		if (e->type != jbvBinary || !JsonContainerIsObject(e->val.binary.data) ||
			fast_jint(e->val.binary.data, "schema-id", &id) != J_INT || id < PG_INT32_MIN || id > PG_INT32_MAX)
			return false;
		max = Max(max, id);
		x = DatumGetJsonbP(DirectFunctionCall2(jsonb_delete, JsonbPGetDatum(JsonbValueToJsonb(e)),
											   CStringGetTextDatum("schema-id")));
		if (*found < 0 && DatumGetBool(DirectFunctionCall2(jsonb_eq, JsonbPGetDatum(x), JsonbPGetDatum(norm))))
			*found = id;
	}
	*next = max + 1;
	return true;
}

/* schemas || [norm || {"schema-id": id}] */
static Jsonb *
appended_schema(Jsonb *schemas, Jsonb *norm, int64 id)
{
	JsonbParseState *state = NULL;
	JsonbValue	v;
	Jsonb	   *one;
	int			n = JsonContainerSize(&schemas->root);
	int			i;

	v.type = jbvNumeric;
	v.val.numeric = DatumGetNumeric(DirectFunctionCall1(int8_numeric, Int64GetDatum(id)));
	one = DatumGetJsonbP(DirectFunctionCall2(jsonb_concat, JsonbPGetDatum(norm),
											 JsonbPGetDatum(fast_jsonb_object1("schema-id", &v))));
	pushJsonbValue(&state, WJB_BEGIN_ARRAY, NULL);
	for (i = 0; i < n; i++)
		pushJsonbValue(&state, WJB_ELEM, getIthJsonbValueFromContainer(&schemas->root, i));
	v.type = jbvBinary;
	v.val.binary.data = &one->root;
	v.val.binary.len = VARSIZE(one) - VARHDRSZ;
	pushJsonbValue(&state, WJB_ELEM, &v);
	return JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_ARRAY, NULL));
}

/*
 * The table upgraded to format v (skade.upgraded(): v2 to v3 here): the
 * version, and next-row-id 0 unless the table has one.  (The caller counts
 * the change: an upgrade-format-version is one, a set-properties that
 * upgrades is one in all.)
 */
void
fast_upgrade(FastCommit *fc, int v)
{
	fast_replace_member(fc, "format-version", psprintf("%d", v));
	fc->format_version = v;
	/* (from v1: a last sequence number, 0 if the table had none) */
	if (fast_member(fc, "last-sequence-number") == NULL)
		fc->seq_set = true;
	if (v >= 3 && fast_member(fc, "next-row-id") == NULL)
	{
		fc->upgraded = true;
		fc->next_row_id = 0;
	}
}

/*
 * Has the table a schema with this id (1), none (0), or cannot this path
 * tell as the engine's casts would (-1: a schema-id that is no integer)?
 */
static int
schema_known(FastCommit *fc, int64 id)
{
	Jsonb	   *schemas = fast_member_jsonb(fc, "schemas");
	int			found = 0;
	int			n;
	int			i;

	if (schemas == NULL || !JB_ROOT_IS_ARRAY(schemas) || JB_ROOT_IS_SCALAR(schemas))
		return -1;
	n = JsonContainerSize(&schemas->root);
	for (i = 0; i < n; i++)
	{
		JsonbValue *e = getIthJsonbValueFromContainer(&schemas->root, i);
		int64		x;

		if (e->type != jbvBinary || fast_jint(e->val.binary.data, "schema-id", &x) != J_INT)
			return -1;
		if (x == id)
			found = 1;
	}
	return found;
}
