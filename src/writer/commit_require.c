/*-------------------------------------------------------------------------
 *
 * commit_require.c
 *	  The requirements of a commit on update_table's C path, checked against
 *	  the base as the PL/pgSQL engine checks them (Java's UpdateRequirement):
 *	  first that each has the shape of its type (the engine's 22023
 *	  "requirements[i] is malformed"), then each against the base in order,
 *	  the first that fails raised with the engine's words and SQLSTATE
 *	  (40001), so the loser of a race holds the table's row lock only this
 *	  long.  A stale branch of a table that rebases appends is held back
 *	  instead (hold_stale): commit_fast.c may still rebase the commit onto
 *	  the branch's head, and raises the failure if it cannot.
 *
 *	  Types are matched by the engine's lower() (fast_lower); values are
 *	  read as its casts read them: an id in a string is that id, one beyond
 *	  integer (bigint for snapshot ids) raises the cast's own 22003, and a
 *	  failure message prints the value's text as the client sent it.
 *	  Handed back (false, nothing raised): a base whose ref is no object or
 *	  whose compared member is no integer (skade's reader lets neither in).
 *	  Private to update_table's C path (commit_fast_int.h).
 *
 * IDENTIFICATION
 *	  src/writer/commit_require.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "common/string.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "writer/commit_fast_int.h"
#include "util/shmem.h"

static bool well_formed(FastCommit *fc, Jsonb *requirements);
static char *arrow_text(JsonbValue *obj, const char *key);
static bool shape_ok(JsonbValue *e, bool all_create);
static bool digits_ok(const char *text, int max_digits);
static bool check_requirement(FastCommit *fc, JsonbContainer *r, bool raise);
static bool check_ref_requirement(FastCommit *fc, JsonbContainer *r, bool raise);
static int64 cast_int(FastCommit *fc, const char *text, bool big);
static bool hold_stale(FastCommit *fc, const char *ref, const char *type, int64 have, char *what);

/*
 * The requirements against the base, as the engine reads them: every one
 * well formed (else the engine's 22023, raised here), every one with a
 * shape this path reads (false: PL/pgSQL decides), then each checked in
 * order and the first that fails raised (40001).
 */
bool
fast_check_requirements(FastCommit *fc, Jsonb *requirements)
{
	int			n = JsonContainerSize(&requirements->root);
	int			pass;
	int			i;

	if (!well_formed(fc, requirements))
		return false;
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < n; i++)
		{
			JsonbValue *e = getIthJsonbValueFromContainer(&requirements->root, i);

			if (!check_requirement(fc, e->val.binary.data, pass == 1))
				return false;
		}
	return true;
}

/*
 * Every requirement is read before any is checked (Java parses the request
 * first): the first that lacks its type's shape is refused as the engine
 * refuses it -- no object, no or an unknown type, its value field missing
 * or not an integer's text, assert-create beside another requirement.
 */
static bool
well_formed(FastCommit *fc, Jsonb *requirements)
{
	int			n = JsonContainerSize(&requirements->root);
	bool		all_create = true;
	int			i;

	for (i = 0; i < n; i++)
	{
		JsonbValue *e = getIthJsonbValueFromContainer(&requirements->root, i);
		char	   *type = arrow_text(e, "type");

		if (type == NULL || strcmp(fast_lower(type), "assert-create") != 0)
			all_create = false;
	}
	for (i = 0; i < n; i++)
	{
		JsonbValue *e = getIthJsonbValueFromContainer(&requirements->root, i);
		Jsonb	   *j;

		if (shape_ok(e, all_create))
			continue;
		j = JsonbValueToJsonb(e);
		return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE,
						   "assert-create takes no other requirement; the others need their value field.",
						   "requirements[%d] is malformed: %s", i,
						   JsonbToCString(NULL, &j->root, VARSIZE(j)));
	}
	return true;
}

/* the engine's obj->>key: a string's characters, another value's JSON text, NULL (absent, JSON null, no object) */
static char *
arrow_text(JsonbValue *obj, const char *key)
{
	JsonbValue	v;
	Jsonb	   *j;

	if (obj->type != jbvBinary || !fast_jvalue(obj->val.binary.data, key, &v) || v.type == jbvNull)
		return NULL;
	if (v.type == jbvString)
		return pnstrdup(v.val.string.val, v.val.string.len);
	j = JsonbValueToJsonb(&v);
	return JsonbToCString(NULL, &j->root, VARSIZE(j));
}

/* a requirement as the engine's shape check reads it (update_table) */
static bool
shape_ok(JsonbValue *e, bool all_create)
{
	static const char *const ints[][2] = {
		{"assert-last-assigned-field-id", "last-assigned-field-id"},
		{"assert-current-schema-id", "current-schema-id"},
		{"assert-last-assigned-partition-id", "last-assigned-partition-id"},
		{"assert-default-spec-id", "default-spec-id"},
		{"assert-default-sort-order-id", "default-sort-order-id"},
	};
	char	   *type = arrow_text(e, "type");
	char	   *id;
	int			k;

	if (type == NULL || e->type != jbvBinary || !JsonContainerIsObject(e->val.binary.data))
		return false;
	type = fast_lower(type);
	if (strcmp(type, "assert-create") == 0)
		return all_create;
	if (strcmp(type, "assert-table-uuid") == 0)
		return fast_jtype_is(e->val.binary.data, "uuid", "string");
	if (strcmp(type, "assert-ref-snapshot-id") == 0)
	{
		id = arrow_text(e, "snapshot-id");
		return fast_jtype_is(e->val.binary.data, "ref", "string") &&
			(id == NULL || digits_ok(id, 0));
	}
	for (k = 0; k < lengthof(ints); k++)
		if (strcmp(type, ints[k][0]) == 0)
			return (id = arrow_text(e, ints[k][1])) != NULL && digits_ok(id, 10);
	return false;
}

/* text ~ '^-?[0-9]+$' (max_digits 0) or '^-?[0-9]{1,max_digits}$' */
static bool
digits_ok(const char *text, int max_digits)
{
	size_t		n;

	if (*text == '-')
		text++;
	n = strlen(text);
	return n > 0 && strspn(text, "0123456789") == n && (max_digits == 0 || n <= (size_t) max_digits);
}

/*
 * One requirement (well formed): false if the base is not ours to read; with
 * raise, a failed one is reported (the engine's messages, PL/pgSQL
 * update_table).  Without raise, nothing is cast: the first pass only asks
 * whether every requirement is ours, so no cast error precedes the engine's
 * order.
 */
static bool
check_requirement(FastCommit *fc, JsonbContainer *r, bool raise)
{
	static const char *const ints[][4] = {
		{"assert-current-schema-id", "current-schema-id", "current-schema-id", "current schema changed"},
		{"assert-last-assigned-field-id", "last-assigned-field-id", "last-column-id",
		"last assigned field id changed"},
		{"assert-last-assigned-partition-id", "last-assigned-partition-id", "last-partition-id",
		"last assigned partition id changed"},
		{"assert-default-spec-id", "default-spec-id", "default-spec-id", "default partition spec changed"},
		{"assert-default-sort-order-id", "default-sort-order-id", "default-sort-order-id",
		"default sort order changed"},
	};
	JsonbValue	whole = {.type = jbvBinary,.val.binary.data = r};
	char	   *type;
	char	   *uuid;
	const char *have_uuid;
	char	   *want;
	int64		have;
	bool		have_null;
	int			k;

	if (!fast_jstring(r, "type", &type))
		return false;
	type = fast_lower(type);
	/* (well formed: the only requirement, and the table exists) */
	if (strcmp(type, "assert-create") == 0)
	{
		if (raise)
			fast_requirement_failed(fc, "table already exists");
		return true;
	}
	if (strcmp(type, "assert-table-uuid") == 0)
	{
		have_uuid = SkadeMetaStr(fc->base, fc->base->table_uuid);
		if (!fast_jstring(r, "uuid", &uuid))
			return false;
		if (raise && strcmp(fast_lower(uuid), fast_lower(have_uuid)) != 0)
			fast_requirement_failed(fc, psprintf("UUID does not match: expected %s != %s", uuid, have_uuid));
		return true;
	}
	if (strcmp(type, "assert-ref-snapshot-id") == 0)
		return check_ref_requirement(fc, r, raise);
	for (k = 0; k < lengthof(ints); k++)
		if (strcmp(type, ints[k][0]) == 0)
			break;
	if (k == lengthof(ints))
		return false;
	/* the base's member: an integer or absent (NULL to the engine) */
	have_null = fast_member(fc, ints[k][2]) == NULL;
	if (!have_null && !fast_member_int(fc, ints[k][2], &have))
		return false;
	if (!raise)
		return true;
	/* (base->>member)::integer IS DISTINCT FROM (r->>field)::integer, left first */
	if (!have_null && (have < PG_INT32_MIN || have > PG_INT32_MAX))
		(void) cast_int(fc, psprintf(INT64_FORMAT, have), false);
	want = arrow_text(&whole, ints[k][1]);
	if (have_null || cast_int(fc, want, false) != have)
		fast_requirement_failed(fc, psprintf("%s: expected id %s != %s", ints[k][3], want,
											 have_null ? "<NULL>" : psprintf(INT64_FORMAT, have)));
	return true;
}

/*
 * assert-ref-snapshot-id: the ref is where the client saw it (or absent).
 * The client's id is read as the engine reads it, r->>'snapshot-id' (well
 * formed: digits), cast to bigint only where the engine casts it.
 */
static bool
check_ref_requirement(FastCommit *fc, JsonbContainer *r, bool raise)
{
	JsonbValue	whole = {.type = jbvBinary,.val.binary.data = r};
	char	   *ref;
	char	   *type;
	char	   *want;
	int64		have;
	JsonbContainer *cur;
	JsonbValue	v;

	if (!fast_jstring(r, "ref", &ref))
		return false;
	want = arrow_text(&whole, "snapshot-id");
	if (fc->refs == NULL || !fast_jobject(&fc->refs->root, ref, &cur))
	{
		/* a ref that is there but no object: the engine's business */
		if (fc->refs != NULL && fast_jvalue(&fc->refs->root, ref, &v))
			return false;
		if (raise && want != NULL)
			fast_requirement_failed(fc, psprintf("branch or tag %s is missing, expected %s", ref, want));
		return true;
	}
	if (!fast_jstring(cur, "type", &type) || fast_jint(cur, "snapshot-id", &have) != J_INT)
		return false;
	if (raise && (want == NULL || have != cast_int(fc, want, true)))
	{
		char	   *what = want == NULL ?
			psprintf("%s %s was created concurrently", type, ref) :
			psprintf("%s %s has changed: expected id %s != " INT64_FORMAT, type, ref, want, have);

		if (!hold_stale(fc, ref, type, have, what))
			fast_requirement_failed(fc, what);
	}
	return true;
}

/*
 * text::integer (big: ::bigint) of a well-formed requirement's digits, as
 * the engine casts it: out of range is the cast's own 22003 -- after a
 * held-back stale branch, which the engine's order raised first.
 */
static int64
cast_int(FastCommit *fc, const char *text, bool big)
{
	const char *digits = text + (*text == '-');
	int64		v;

	while (digits[0] == '0' && digits[1] != '\0')
		digits++;
	if (SkadeIntText(digits, strlen(digits), &v))
	{
		v = *text == '-' ? -v : v;
		if (big || (v >= PG_INT32_MIN && v <= PG_INT32_MAX))
			return v;
	}
	if (fc->stale_msg)
		fast_requirement_failed(fc, fc->stale_msg);
	return big ? pg_strtoint64(text) : pg_strtoint32(text);
}

/*
 * A branch that moved since the client saw it, held back (true) when the
 * table rebases appends and no other is held: the commit may still be
 * rebased onto it (rebase_updates); otherwise its failure is raised then.
 */
static bool
hold_stale(FastCommit *fc, const char *ref, const char *type, int64 have, char *what)
{
	if (!fc->rebase_on || fc->stale_msg != NULL || strcmp(fast_lower(type), "branch") != 0)
		return false;
	fc->stale_ref = pstrdup(ref);
	fc->stale_have = have;
	fc->stale_msg = what;
	return true;
}

/*
 * Raise a failed requirement as update_table's engine does; a held-back
 * stale branch came first in the engine's order, so it is the one raised.
 */
void
fast_requirement_failed(FastCommit *fc, const char *what)
{
	/* (decided here: the engine never sees it) */
	pg_atomic_fetch_add_u64(&skade_shared->update_c, 1);
	ereport(ERROR,
			(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
			 errmsg("Requirement failed: %s", fc->stale_msg ? fc->stale_msg : what)));
}

