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
 *	  Handed back (false, nothing raised): types outside ASCII (lower() is
 *	  the engine's), values the engine reads by a cast this path does not
 *	  reproduce (an integer in a string, beyond int32), a ref that is no
 *	  object.  Private to update_table's C path (commit_fast_int.h).
 *
 * IDENTIFICATION
 *	  src/writer/commit_require.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "common/string.h"
#include "utils/jsonb.h"

#include "writer/commit_fast_int.h"
#include "util/shmem.h"

static bool well_formed(FastCommit *fc, Jsonb *requirements);
static char *arrow_text(JsonbValue *obj, const char *key);
static bool shape_ok(JsonbValue *e, bool all_create);
static bool digits_ok(const char *text, int max_digits);
static bool check_requirement(FastCommit *fc, JsonbContainer *r, bool raise);
static bool check_ref_requirement(FastCommit *fc, JsonbContainer *r, bool raise);
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
 * false: a type outside ASCII (what lower() makes of it is the engine's).
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

		if (type != NULL && !pg_is_ascii(type))
			return false;
		if (type == NULL || pg_strcasecmp(type, "assert-create") != 0)
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
	if (pg_strcasecmp(type, "assert-create") == 0)
		return all_create;
	if (pg_strcasecmp(type, "assert-table-uuid") == 0)
		return fast_jtype_is(e->val.binary.data, "uuid", "string");
	if (pg_strcasecmp(type, "assert-ref-snapshot-id") == 0)
	{
		id = arrow_text(e, "snapshot-id");
		return fast_jtype_is(e->val.binary.data, "ref", "string") &&
			(id == NULL || digits_ok(id, 0));
	}
	for (k = 0; k < lengthof(ints); k++)
		if (pg_strcasecmp(type, ints[k][0]) == 0)
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
 * One requirement: false if its shape is not ours; with raise, a failed one
 * is reported (the engine's messages, PL/pgSQL update_table).
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
	char	   *type;
	char	   *uuid;
	const char *have_uuid;
	int64		want;
	int64		have;
	int			k;

	if (!fast_jstring(r, "type", &type))
		return false;
	/* (well formed: the only requirement, and the table exists) */
	if (pg_strcasecmp(type, "assert-create") == 0)
	{
		if (raise)
			fast_requirement_failed(fc, "table already exists");
		return true;
	}
	if (pg_strcasecmp(type, "assert-table-uuid") == 0)
	{
		have_uuid = SkadeMetaStr(fc->base, fc->base->table_uuid);
		/* (ASCII only: lower() and pg_strcasecmp agree there) */
		if (!fast_jstring(r, "uuid", &uuid) || !pg_is_ascii(uuid) || !pg_is_ascii(have_uuid))
			return false;
		if (raise && pg_strcasecmp(uuid, have_uuid) != 0)
			fast_requirement_failed(fc, psprintf("UUID does not match: expected %s != %s", uuid, have_uuid));
		return true;
	}
	if (pg_strcasecmp(type, "assert-ref-snapshot-id") == 0)
		return check_ref_requirement(fc, r, raise);
	for (k = 0; k < lengthof(ints); k++)
		if (pg_strcasecmp(type, ints[k][0]) == 0)
			break;
	/* values the engine casts with an error (or reads from a string) */
	if (k == lengthof(ints) || fast_jint(r, ints[k][1], &want) != J_INT ||
		!fast_member_int(fc, ints[k][2], &have) ||
		want < PG_INT32_MIN || want > PG_INT32_MAX || have < PG_INT32_MIN || have > PG_INT32_MAX)
		return false;
	if (raise && want != have)
		fast_requirement_failed(fc, psprintf("%s: expected id " INT64_FORMAT " != " INT64_FORMAT,
									ints[k][3], want, have));
	return true;
}

/* assert-ref-snapshot-id: the ref is where the client saw it (or absent) */
static bool
check_ref_requirement(FastCommit *fc, JsonbContainer *r, bool raise)
{
	char	   *ref;
	char	   *type;
	int64		want;
	int64		have;
	JInt		w;
	JsonbContainer *cur;
	JsonbValue	v;

	if (!fast_jstring(r, "ref", &ref))
		return false;
	w = fast_jint(r, "snapshot-id", &want);
	if (w == J_OTHER)
		return false;
	if (fc->refs == NULL || !fast_jobject(&fc->refs->root, ref, &cur))
	{
		/* a ref that is there but no object: the engine's business */
		if (fc->refs != NULL && fast_jvalue(&fc->refs->root, ref, &v))
			return false;
		if (raise && w == J_INT)
			fast_requirement_failed(fc, psprintf("branch or tag %s is missing, expected " INT64_FORMAT,
										ref, want));
		return true;
	}
	if (!fast_jstring(cur, "type", &type) || fast_jint(cur, "snapshot-id", &have) != J_INT)
		return false;
	if (raise && (w == J_ABSENT || have != want))
	{
		char	   *what = w == J_ABSENT ?
			psprintf("%s %s was created concurrently", type, ref) :
			psprintf("%s %s has changed: expected id " INT64_FORMAT " != " INT64_FORMAT,
					 type, ref, want, have);

		if (!hold_stale(fc, ref, type, have, what))
			fast_requirement_failed(fc, what);
	}
	return true;
}

/*
 * A branch that moved since the client saw it, held back (true) when the
 * table rebases appends and no other is held: the commit may still be
 * rebased onto it (rebase_updates); otherwise its failure is raised then.
 */
static bool
hold_stale(FastCommit *fc, const char *ref, const char *type, int64 have, char *what)
{
	if (!fc->rebase_on || fc->stale_msg != NULL || pg_strcasecmp(type, "branch") != 0)
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

