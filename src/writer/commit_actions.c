/*-------------------------------------------------------------------------
 *
 * commit_actions.c
 *	  The update actions of update_table's C path (commit_fast.c), each as
 *	  the PL/pgSQL engine applies it (Java's TableMetadata.Builder as
 *	  transcribed there), onto the commit's FastCommit: add-snapshot,
 *	  set-snapshot-ref, remove-snapshot-ref, remove-snapshots,
 *	  set-/remove-properties, set-location, the statistics actions,
 *	  remove-partition-specs, remove-schemas and the no-change forms of
 *	  assign-uuid, upgrade-format-version, set-current-schema,
 *	  set-default-spec and set-default-sort-order; then the checks the
 *	  engine makes on the whole result.
 *
 * Contract
 *   - An input the engine refuses while applying an action is refused
 *     here, with the engine's SQLSTATE and words (refuse()), at the point
 *     the engine refuses it: every requirement has held and every earlier
 *     action was applied here, as the engine would have.  Except while a
 *     stale requirement is held back for a rebase: the engine reports that
 *     first, so the action returns false and the caller raises it.
 *   - An action returns false, having written nothing anywhere, for every
 *     shape it does not take (and for the inputs whose refusal it does not
 *     reproduce): the whole commit then goes to the engine.
 *   - An action records its effect in the FastCommit only (the members it
 *     replaces, the refs and properties objects, the snapshot added or
 *     removed, main's move); commit_fast.c writes the new text from that.
 *     fc->changes counts changes exactly as the engine's nchanges does: 0
 *     means no new file.
 *   - All memory is the caller's ("skade update fast" or "skade group
 *     step").
 *
 * IDENTIFICATION
 *	  src/writer/commit_actions.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "catalog/pg_collation.h"
#include "catalog/pg_type.h"
#include "common/int.h"
#include "common/string.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/formatting.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/numeric.h"

#include "util/shmem.h"
#include "writer/commit_fast_int.h"
#include "writer/commit_rebase.h"
#include "format/metadata_json.h"

static bool refuse(FastCommit *fc, int sqlstate, const char *hint, const char *fmt,...) pg_attribute_printf(4, 5);
static const char *jtype(JsonbContainer *obj, const char *key);
static char *jtext(JsonbContainer *obj, const char *key);
static bool json_int(FastCommit *fc, JsonbContainer *u, const char *key, const char *what, int64 *v);
static bool unknown_action(FastCommit *fc, JsonbValue *e);
static bool jtype_is(JsonbContainer *obj, const char *key, const char *type);
static bool row_lineage(FastCommit *fc, JsonbContainer *s);
static bool add_snapshot(FastCommit *fc, JsonbContainer *u);
static bool ref_checked(FastCommit *fc, JsonbContainer *u);
static bool set_snapshot_ref(FastCommit *fc, JsonbContainer *u);
static bool set_properties(FastCommit *fc, JsonbContainer *u);
static bool remove_properties(FastCommit *fc, JsonbContainer *u);
static bool remove_snapshot_ref(FastCommit *fc, JsonbContainer *u);
static bool remove_snapshots(FastCommit *fc, JsonbContainer *u);
static bool remove_ids(FastCommit *fc, JsonbContainer *u, const char *field, const char *list,
					   const char *key, const char *current);
static bool jsonb_in_array(JsonbValue *v, JsonbContainer *arr);
static int	integer_ids(JsonbContainer *arr, int64 **ids);
static bool numeric_id(JsonbValue *v, int64 *id);
static int	cmp_int64(const void *a, const void *b);
static bool is_gone(FastCommit *fc, int64 id);
static bool survives(FastCommit *fc, JsonbContainer *obj);
static bool drop_gone_statistics(FastCommit *fc, const char *list);
static void drop_gone_refs(FastCommit *fc);
static void keep_log(FastCommit *fc);
static bool set_location(FastCommit *fc, JsonbContainer *u);
static bool set_statistics(FastCommit *fc, JsonbContainer *u, const char *list, const char *field);
static bool remove_statistics(FastCommit *fc, JsonbContainer *u, const char *list);
static bool unchanged_id(FastCommit *fc, JsonbContainer *u, const char *field, const char *member);
static bool same_uuid(FastCommit *fc, JsonbContainer *u);
static int	schema_known(FastCommit *fc, int64 id);
static bool current_int(FastCommit *fc, const char *key, int64 *v);
static bool defaults_bind(FastCommit *fc);
static JsonbContainer *element_with(Jsonb *arr, const char *key, Jsonb *want, bool *unsure);
static bool fields_bind(FastCommit *fc, JsonbContainer *schema, JsonbContainer *owner, bool is_spec);
static char *bind_error(JsonbContainer *schema, JsonbContainer *f, bool is_spec, bool *unsure);
static JsonbValue *source_type(JsonbContainer *schema, int64 id, bool *unsure);
static bool bracket_number(const char *p);
static bool add_sort_order(FastCommit *fc, JsonbContainer *u);
static bool order_fields(FastCommit *fc, JsonbContainer *ord, JsonbContainer *schema,
						 JsonbParseState **state, int *k);
static bool order_ids(Jsonb *orders, Jsonb *fields, int64 *found, int64 *next);
static Jsonb *appended(Jsonb *arr, const char *key, int64 id, Jsonb *fields);
static bool add_spec(FastCommit *fc, JsonbContainer *u);
static bool spec_fields(FastCommit *fc, JsonbContainer *spec, JsonbContainer *schema,
						JsonbParseState **state, int *k, int64 *next_id);
static bool names_other_column(JsonbContainer *schema, JsonbContainer *f, const char *name, bool *unsure);
static void push_spec_field(JsonbParseState **state, JsonbContainer *f, int64 fid);
static bool spec_ids(Jsonb *specs, Jsonb *fields, int64 *found, int64 *next);
static bool same_member(JsonbValue *a, JsonbValue *b, const char *key);
static bool add_schema(FastCommit *fc, JsonbContainer *u);
static bool struct_fields_valid(FastCommit *fc, JsonbContainer *fields, const char *path);
static bool type_valid(FastCommit *fc, JsonbValue *t, const char *path);
static bool primitive_valid(FastCommit *fc, JsonbValue *t, const char *path);
static bool decimal_rest(const char *p);
static Jsonb *normalized_schema(JsonbContainer *schema, JsonbValue *fields);
static bool max_ids(JsonbContainer *c, int64 *highest);
static bool schema_ids(Jsonb *schemas, Jsonb *norm, int64 *found, int64 *next);
static Jsonb *appended_schema(Jsonb *schemas, Jsonb *norm, int64 id);
static void upgrade(FastCommit *fc, int v);
static bool property_upgrade(FastCommit *fc, JsonbValue *kv);

/* Apply the updates in order (false: a shape or an error for PL/pgSQL). */
bool
fast_apply_updates(FastCommit *fc, Jsonb *updates)
{
	int			n = JsonContainerSize(&updates->root);
	int			i;

	for (i = 0; i < n; i++)
	{
		JsonbValue *e = getIthJsonbValueFromContainer(&updates->root, i);
		JsonbContainer *u;
		char	   *action;
		bool		ok;

		fc->idx = i;
		if (e->type != jbvBinary || !JsonContainerIsObject(e->val.binary.data) ||
			!fast_jstring(u = e->val.binary.data, "action", &action))
			return unknown_action(fc, e);
		if (pg_strcasecmp(action, "add-snapshot") == 0)
			ok = add_snapshot(fc, u);
		else if (pg_strcasecmp(action, "set-snapshot-ref") == 0)
			ok = set_snapshot_ref(fc, u);
		else if (pg_strcasecmp(action, "set-properties") == 0)
			ok = set_properties(fc, u);
		else if (pg_strcasecmp(action, "remove-properties") == 0)
			ok = remove_properties(fc, u);
		else if (pg_strcasecmp(action, "remove-snapshot-ref") == 0)
			ok = remove_snapshot_ref(fc, u);
		else if (pg_strcasecmp(action, "remove-snapshots") == 0)
			ok = remove_snapshots(fc, u);
		else if (pg_strcasecmp(action, "remove-partition-specs") == 0)
			ok = remove_ids(fc, u, "spec-ids", "partition-specs", "spec-id", "default-spec-id");
		else if (pg_strcasecmp(action, "remove-schemas") == 0)
			ok = remove_ids(fc, u, "schema-ids", "schemas", "schema-id", "current-schema-id");
		else if (pg_strcasecmp(action, "set-location") == 0)
			ok = set_location(fc, u);
		else if (pg_strcasecmp(action, "set-statistics") == 0)
			ok = set_statistics(fc, u, "statistics", "statistics");
		else if (pg_strcasecmp(action, "set-partition-statistics") == 0)
			ok = set_statistics(fc, u, "partition-statistics", "partition-statistics");
		else if (pg_strcasecmp(action, "remove-statistics") == 0)
			ok = remove_statistics(fc, u, "statistics");
		else if (pg_strcasecmp(action, "remove-partition-statistics") == 0)
			ok = remove_statistics(fc, u, "partition-statistics");
		else if (pg_strcasecmp(action, "set-current-schema") == 0)
			ok = unchanged_id(fc, u, "schema-id", "current-schema-id");
		else if (pg_strcasecmp(action, "set-default-spec") == 0)
			ok = unchanged_id(fc, u, "spec-id", "default-spec-id");
		else if (pg_strcasecmp(action, "set-default-sort-order") == 0)
			ok = unchanged_id(fc, u, "sort-order-id", "default-sort-order-id");
		else if (pg_strcasecmp(action, "upgrade-format-version") == 0)
			ok = unchanged_id(fc, u, "format-version", "format-version");
		else if (pg_strcasecmp(action, "assign-uuid") == 0)
			ok = same_uuid(fc, u);
		else if (pg_strcasecmp(action, "add-sort-order") == 0)
			ok = add_sort_order(fc, u);
		else if (pg_strcasecmp(action, "add-spec") == 0)
			ok = add_spec(fc, u);
		else if (pg_strcasecmp(action, "add-schema") == 0)
			ok = add_schema(fc, u);
		else
			ok = unknown_action(fc, e);
		if (!ok)
			return false;
	}
	return true;
}

/*
 * The checks update_table makes on a result that changed (Java's build()),
 * in the engine's order, refused as it refuses them: the defaults and their
 * binding when this commit changed one of them, no snapshot's sequence
 * number past the table's, the new snapshot log in order (no entry more
 * than a minute before the one above it, the new entry included, what a
 * removal kept) and not more than a minute ahead of now.  (Not checked
 * here: that the base's own defaults bind, when the commit changes none of
 * them; a base that fails it was written so by another client.)
 */
bool
fast_result_valid(FastCommit *fc)
{
	const SkadeMetaLogEntry *log = SkadeMetaLog(fc->base);
	const SkadeMetaSnapshot *snaps = SkadeMetaSnapshots(fc->base);
	int			n = fc->ngone > 0 ? fc->nlog_keep : (int) fc->base->nlog;
	int64	   *ts = palloc(sizeof(int64) * (n + 1));
	int			i;

	if (fc->bind_changed && !defaults_bind(fc))
		return false;
	for (i = 0; i < (int) fc->base->nsnapshots; i++)
		if (snaps[i].sequence_number > fc->last_seq && !(fc->ngone > 0 && fc->gone[i]))
			return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
						  "a snapshot has a sequence number greater than last sequence number " INT64_FORMAT,
						  fc->last_seq);
	/* the new log's timestamps: the base's (what a removal kept), the new entry */
	for (i = 0; i < n; i++)
		ts[i] = log[fc->ngone > 0 ? fc->log_keep[i] : i].timestamp_ms;
	if (fc->main_set)
		ts[n++] = fc->log_ts;
	for (i = 1; i < n; i++)
		if (ts[i] < ts[i - 1] - 60000)
			return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL, "the snapshot log would go back "
						  "in time or run ahead of this commit (by more than a minute)");
	/* (this clock read later than the engine's: past the minute here is past it there too) */
	if (n > 0 && ts[n - 1] > fc->now_ms + 60000)
		return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL, "the snapshot log would go back "
					  "in time or run ahead of this commit (by more than a minute)");
	if (n > 0 && ts[n - 1] > fc->now_ms + FUTURE_MARGIN_MS)
		return false;
	return true;
}

/*
 * The engine's refusal of updates[fc->idx]: raised here with its SQLSTATE,
 * words and hint; false (nothing raised) while a stale requirement is held
 * back, which the engine would report first.
 */
static bool
refuse(FastCommit *fc, int sqlstate, const char *hint, const char *fmt,...)
{
	StringInfoData buf;

	if (fc->stale_msg)
		return false;
	initStringInfo(&buf);
	for (;;)
	{
		va_list		args;
		int			needed;

		va_start(args, fmt);
		needed = appendStringInfoVA(&buf, fmt, args);
		va_end(args);
		if (needed == 0)
			break;
		enlargeStringInfo(&buf, needed);
	}
	/* (decided here: the engine never sees it) */
	pg_atomic_fetch_add_u64(&skade_shared->update_c, 1);
	ereport(ERROR,
			(errcode(sqlstate),
			 errmsg("%s", buf.data),
			 hint ? errhint("%s", hint) : 0));
	return false;
}

/* jsonb_typeof(obj->key): NULL when absent, else "null", "number", "string", ... */
static const char *
jtype(JsonbContainer *obj, const char *key)
{
	JsonbValue	v;

	if (!fast_jvalue(obj, key, &v))
		return NULL;
	switch (v.type)
	{
		case jbvNull:
			return "null";
		case jbvString:
			return "string";
		case jbvNumeric:
			return "number";
		case jbvBool:
			return "boolean";
		case jbvBinary:
			return JsonContainerIsArray(v.val.binary.data) ? "array" : "object";
		default:
			return "other";
	}
}

/* (obj->key)::text, as jsonb prints the value (NULL when absent) */
static char *
jtext(JsonbContainer *obj, const char *key)
{
	JsonbValue	v;
	Jsonb	   *j;

	if (!fast_jvalue(obj, key, &v))
		return NULL;
	j = JsonbValueToJsonb(&v);
	return JsonbToCString(NULL, &j->root, VARSIZE(j));
}

/*
 * skade.json_int(u->key, what): a JSON number whose text is an integer of
 * at most 10 digits within int32, else the engine's 22023 naming what
 * (NULL: 'updates[i].key').
 */
static bool
json_int(FastCommit *fc, JsonbContainer *u, const char *key, const char *what, int64 *v)
{
	char	   *text = jtext(u, key);
	const char *digits = text && *text == '-' ? text + 1 : text;
	const char *type = jtype(u, key);

	if (type && strcmp(type, "number") == 0 && *digits != '\0' && strlen(digits) <= 10 &&
		strspn(digits, "0123456789") == strlen(digits) &&
		SkadeIntText(text, strlen(text), v) && *v >= PG_INT32_MIN && *v <= PG_INT32_MAX)
		return true;
	return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL, "%s must be an integer, not %s",
				  what ? what : psprintf("updates[%d].%s", fc->idx, key), text ? text : "missing");
}

/*
 * An update whose action the engine does not know (or does not take:
 * encryption keys, 0A000); an element that is no object has none.
 */
static bool
unknown_action(FastCommit *fc, JsonbValue *e)
{
	JsonbContainer *u = e->type == jbvBinary && JsonContainerIsObject(e->val.binary.data) ?
		e->val.binary.data : NULL;
	char	   *action = NULL;
	char	   *text = u ? jtext(u, "action") : NULL;

	if (u && fast_jstring(u, "action", &action) &&
		(pg_strcasecmp(action, "add-encryption-key") == 0 ||
		 pg_strcasecmp(action, "remove-encryption-key") == 0))
	{
		if (fc->stale_msg)
			return false;
		pg_atomic_fetch_add_u64(&skade_shared->update_c, 1);
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("updates[%d]: action %s is not supported", fc->idx, action),
				 errdetail("skade does not manage table encryption keys.")));
	}
	/* (an action that is no string, printed as jsonb prints it; an unknown string likewise) */
	if (u && fast_jstring(u, "action", &action) && !pg_is_ascii(action))
		return false;			/* (lower() of non-ASCII is the engine's) */
	return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL, "updates[%d]: unknown action %s",
				  fc->idx, text && strcmp(text, "null") != 0 ? text : "null");
}

/* is jsonb_typeof(obj->key) type? */
static bool
jtype_is(JsonbContainer *obj, const char *key, const char *type)
{
	const char *t = jtype(obj, key);

	return t != NULL && strcmp(t, type) == 0;
}

/*
 * v3 row lineage of an added snapshot, as skade.add_snapshot(): numeric
 * first-row-id and added-rows, neither negative, first-row-id not behind
 * the table's next-row-id, which grows by added-rows.
 */
static bool
row_lineage(FastCommit *fc, JsonbContainer *s)
{
	int64		first;
	int64		rows;
	JInt		jf;
	JInt		jr;

	if (!jtype_is(s, "first-row-id", "number") || !jtype_is(s, "added-rows", "number"))
		return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
					  "updates[%d].snapshot needs first-row-id and added-rows in a v3 table", fc->idx);
	jf = fast_jint(s, "first-row-id", &first);
	jr = fast_jint(s, "added-rows", &rows);
	if (jf != J_INT || jr != J_INT)
		return false;			/* (the engine's casts decide) */
	if (first < 0 || rows < 0)
		return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
					  "updates[%d].snapshot needs first-row-id and added-rows in a v3 table", fc->idx);
	if (first < fc->next_row_id)
		return refuse(fc, ERRCODE_T_R_SERIALIZATION_FAILURE, NULL,
					  "cannot add snapshot: first-row-id " INT64_FORMAT " is behind table next-row-id "
					  INT64_FORMAT, first, fc->next_row_id);
	return !pg_add_s64_overflow(fc->next_row_id, rows, &fc->next_row_id);
}

/*
 * add-snapshot, as skade.add_snapshot() on a v2 table: nulls stripped; an
 * integer id, timestamp and sequence number, a manifest list, an operation;
 * a new id; not in the future; the sequence number past the table's.
 */
static bool
add_snapshot(FastCommit *fc, JsonbContainer *u)
{
	JsonbValue	v;
	Jsonb	   *snap;
	JsonbContainer *s;
	JsonbContainer *summary;
	char	   *str;
	int64		id;
	int64		ts;
	int64		seq;
	int64		x;

	if (fc->added || fc->gone)
		return false;
	if (!fast_jvalue(u, "snapshot", &v) || v.type != jbvBinary ||
		!JsonContainerIsObject(v.val.binary.data))
		return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL, "updates[%d].snapshot needs snapshot-id, "
					  "timestamp-ms, manifest-list and summary.operation", fc->idx);
	snap = DatumGetJsonbP(DirectFunctionCall1(jsonb_strip_nulls,
											  JsonbPGetDatum(JsonbValueToJsonb(&v))));
	s = &snap->root;
	if (!jtype_is(s, "snapshot-id", "number") || !jtype_is(s, "timestamp-ms", "number") ||
		!jtype_is(s, "manifest-list", "string") ||
		!fast_jobject(s, "summary", &summary) || !jtype_is(summary, "operation", "string"))
		return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL, "updates[%d].snapshot needs snapshot-id, "
					  "timestamp-ms, manifest-list and summary.operation", fc->idx);
	if (fast_jint(s, "snapshot-id", &id) != J_INT || fast_jint(s, "timestamp-ms", &ts) != J_INT ||
		fast_jint(s, "sequence-number", &seq) != J_INT ||
		!fast_jstring(s, "manifest-list", &str) || !fast_jstring(summary, "operation", &str) ||
		fast_jint(s, "parent-snapshot-id", &x) == J_OTHER ||
		!fast_member_int(fc, "last-sequence-number", &x))
		return false;
	if (fast_jint(s, "schema-id", &x) == J_OTHER ||
		(fast_jint(s, "schema-id", &x) == J_INT && (x < PG_INT32_MIN || x > PG_INT32_MAX)))
		return false;
	if (fast_snapshot_known(fc, id))
		return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL, "updates[%d]: snapshot " INT64_FORMAT
					  " already exists", fc->idx, id);
	if (seq <= fc->last_seq && fast_jvalue(s, "parent-snapshot-id", &v))
		return refuse(fc, ERRCODE_T_R_SERIALIZATION_FAILURE,
					  "Another commit came first: reload the table and retry.",
					  "cannot add snapshot with sequence number " INT64_FORMAT
					  " older than last sequence number " INT64_FORMAT, seq, fc->last_seq);
	if (seq <= fc->last_seq)
		return false;
	/* v3 row lineage: first-row-id not behind the table's next-row-id, which grows by added-rows */
	if (fc->format_version == 3 && !row_lineage(fc, s))
		return false;
	fc->added = true;
	fc->added_ts = ts;
	fc->last_seq = seq;
	fc->added_text = JsonbToCString(NULL, s, VARSIZE(snap));
	/* its summary entry, read by the reader's own code */
	SkadeParseSnapshot(fc->added_text, strlen(fc->added_text), fc->format_version,
					   fc->base_location,
					   (int) fc->base->nsnapshots, &fc->added_snap,
					   &fc->added_op, &fc->added_ml, &fc->added_summary);
	fc->changes++;
	return true;
}

/*
 * set-snapshot-ref's checks before the ref is built, as skade.set_snapshot_ref():
 * a ref-name, a numeric snapshot-id and a type branch or tag (any case); a
 * tag keeps no snapshots; main is a branch; a retention value present is
 * a number.  false: refused (or a shape the engine's casts decide).
 */
static bool
ref_checked(FastCommit *fc, JsonbContainer *u)
{
	static const char *const keys[3] = {"min-snapshots-to-keep", "max-snapshot-age-ms",
	"max-ref-age-ms"};
	const char *name_type = jtype(u, "ref-name");
	char	   *kind = NULL;
	char	   *name = NULL;
	JsonbValue	v;
	int			i;

	if (jtype(u, "type") && !jtype_is(u, "type", "null"))
	{
		kind = jtype_is(u, "type", "string") ? NULL : jtext(u, "type");
		if (kind == NULL && !fast_jstring(u, "type", &kind))
			return false;
		if (!pg_is_ascii(kind))
			return false;		/* (lower() of non-ASCII is the engine's) */
		kind = str_tolower(kind, strlen(kind), DEFAULT_COLLATION_OID);
	}
	if (name_type == NULL || strcmp(name_type, "null") == 0 || !jtype_is(u, "snapshot-id", "number") ||
		(kind && strcmp(kind, "branch") != 0 && strcmp(kind, "tag") != 0))
		return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
					  "updates[%d] needs ref-name, snapshot-id and type branch|tag", fc->idx);
	if (kind == NULL || !fast_jstring(u, "ref-name", &name))
		return false;
	if (strcmp(kind, "tag") == 0 && (fast_jvalue(u, keys[0], &v) || fast_jvalue(u, keys[1], &v)))
		return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
					  "updates[%d]: tags do not keep snapshots", fc->idx);
	if (strcmp(name, "main") == 0 && strcmp(kind, "branch") != 0)
		return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
					  "updates[%d]: cannot set main to a tag, it must be a branch", fc->idx);
	for (i = 0; i < 3; i++)
		if (fast_jvalue(u, keys[i], &v) && v.type != jbvNull && v.type != jbvNumeric)
			return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
						  "updates[%d].%s must be a positive number", fc->idx, keys[i]);
	return true;
}

/*
 * set-snapshot-ref, as skade.set_snapshot_ref(): the ref replaced whole;
 * an equal ref is no change; main moves the current snapshot and the log
 * (at most once here: a second move is the engine's, it trims the log).
 */
static bool
set_snapshot_ref(FastCommit *fc, JsonbContainer *u)
{
	static const char *const keys[3] = {"min-snapshots-to-keep", "max-snapshot-age-ms",
	"max-ref-age-ms"};
	JsonbParseState *state = NULL;
	JsonbValue	k;
	JsonbValue	v;
	JsonbValue *res;
	JsonbContainer *cur;
	Jsonb	   *ref;
	char	   *name;
	char	   *kind;
	int64		id;
	int64		x;
	int			i;
	bool		is_main;

	if (!ref_checked(fc, u))
		return false;
	if (!fast_jstring(u, "ref-name", &name) || fast_jint(u, "snapshot-id", &id) != J_INT ||
		!fast_jstring(u, "type", &kind))
		return false;
	kind = str_tolower(kind, strlen(kind), DEFAULT_COLLATION_OID);
	is_main = strcmp(name, "main") == 0;

	/* the ref as jsonb_build_object makes it */
	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	k.type = jbvString;
	k.val.string.val = "snapshot-id";
	k.val.string.len = strlen("snapshot-id");
	pushJsonbValue(&state, WJB_KEY, &k);
	fast_jvalue(u, "snapshot-id", &v);
	pushJsonbValue(&state, WJB_VALUE, &v);
	k.val.string.val = "type";
	k.val.string.len = 4;
	pushJsonbValue(&state, WJB_KEY, &k);
	v.type = jbvString;
	v.val.string.val = kind;
	v.val.string.len = strlen(kind);
	pushJsonbValue(&state, WJB_VALUE, &v);
	for (i = 0; i < 3; i++)
	{
		JInt		j = fast_jint(u, keys[i], &x);

		if (j == J_ABSENT)
			continue;
		if (j == J_INT && x <= 0)
			return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
						  "updates[%d].%s must be a positive number", fc->idx, keys[i]);
		if (j != J_INT || (i == 0 && x > PG_INT32_MAX))
			return false;
		k.val.string.val = (char *) keys[i];
		k.val.string.len = strlen(keys[i]);
		pushJsonbValue(&state, WJB_KEY, &k);
		fast_jvalue(u, keys[i], &v);
		pushJsonbValue(&state, WJB_VALUE, &v);
	}
	res = pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	ref = JsonbValueToJsonb(res);

	if (fc->refs && fast_jobject(&fc->refs->root, name, &cur))
	{
		JsonbValue	cv;

		fast_jvalue(&fc->refs->root, name, &cv);
		if (DatumGetBool(DirectFunctionCall2(jsonb_eq, JsonbPGetDatum(JsonbValueToJsonb(&cv)),
											 JsonbPGetDatum(ref))))
			return true;		/* unchanged: no change */
	}
	if (!fast_snapshot_known(fc, id))
		return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
					  "updates[%d]: cannot set %s to unknown snapshot " INT64_FORMAT, fc->idx, name, id);
	if (is_main && (fc->main_set || fc->main_removed || fc->gone))
		return false;
	v.type = jbvBinary;
	v.val.binary.data = &ref->root;
	v.val.binary.len = VARSIZE(ref) - VARHDRSZ;
	fc->refs = DatumGetJsonbP(DirectFunctionCall2(jsonb_concat,
												  JsonbPGetDatum(fc->refs ? fc->refs :
																 fast_jsonb_object1(NULL, NULL)),
												  JsonbPGetDatum(fast_jsonb_object1(name, &v))));
	fc->refs_changed = true;
	if (is_main)
	{
		fc->main_set = true;
		fc->current = id;
		fc->log_ts = fc->added && fc->added_snap.snapshot_id == id ? fc->added_ts : fc->now_ms;
	}
	fc->changes++;
	return true;
}

/* set-properties without format-version: reserved keys dropped, merged */
static bool
set_properties(FastCommit *fc, JsonbContainer *u)
{
	static const char *const reserved[] = {"format-version", "uuid", "snapshot-count",
		"current-snapshot-id", "current-snapshot-summary", "current-snapshot-timestamp-ms",
	"current-schema", "default-partition-spec", "default-sort-order"};
	JsonbValue	v;
	JsonbIterator *it;
	JsonbIteratorToken tok;
	JsonbValue	kv;
	Datum		names[lengthof(reserved)];
	Jsonb	   *upd;
	int			i;

	if ((!fast_jvalue(u, "updates", &v) && !fast_jvalue(u, "updated", &v)) ||
		v.type != jbvBinary || !JsonContainerIsObject(v.val.binary.data))
		return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL, "updates[%d].updates must be an object of strings", fc->idx);
	it = JsonbIteratorInit(v.val.binary.data);
	while ((tok = JsonbIteratorNext(&it, &kv, true)) != WJB_DONE)
		if (tok == WJB_VALUE && kv.type != jbvString)
			return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL, "updates[%d].updates must be an object of strings", fc->idx);
	if (JsonContainerSize(v.val.binary.data) == 0)
		return true;			/* {}: no change */
	if (fast_jvalue(v.val.binary.data, "format-version", &kv) && !property_upgrade(fc, &kv))
		return false;
	for (i = 0; i < lengthof(reserved); i++)
		names[i] = CStringGetTextDatum(reserved[i]);
	upd = DatumGetJsonbP(DirectFunctionCall2(jsonb_delete_array,
											 JsonbPGetDatum(JsonbValueToJsonb(&v)),
											 PointerGetDatum(construct_array(names, lengthof(reserved),
																			 TEXTOID, -1, false,
																			 TYPALIGN_INT))));
	fc->props = DatumGetJsonbP(DirectFunctionCall2(jsonb_concat,
												   JsonbPGetDatum(fc->props ? fc->props :
																  fast_jsonb_object1(NULL, NULL)),
												   JsonbPGetDatum(upd)));
	fc->props_changed = true;
	fc->changes++;
	return true;
}

/*
 * set-properties' format-version (a string, as every value there): an
 * upgrade as Java's client makes it: one or two digits, at most 3, not below
 * the table's, else refused.  (The key itself is not kept.)
 */
static bool
property_upgrade(FastCommit *fc, JsonbValue *kv)
{
	char	   *s = pnstrdup(kv->val.string.val, kv->val.string.len);
	int			n = strlen(s);
	int			v = -1;

	if (n >= 1 && n <= 2 && strspn(s, "0123456789") == (size_t) n)
		v = atoi(s);
	if (v < 0 || v > 3 || v < fc->format_version)
		return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
					  "updates[%d]: format-version %s cannot be set", fc->idx, s);
	if (v > fc->format_version)
		upgrade(fc, v);
	return true;
}

/* remove-properties: an array of strings, each key removed */
static bool
remove_properties(FastCommit *fc, JsonbContainer *u)
{
	JsonbValue	v;
	Datum		keys;
	bool		ok;

	if ((!fast_jvalue(u, "removals", &v) && !fast_jvalue(u, "removed", &v)) ||
		v.type != jbvBinary || !JsonContainerIsArray(v.val.binary.data))
		return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL, "updates[%d].removals must be an array of strings", fc->idx);
	if (JsonContainerSize(v.val.binary.data) == 0)
		return true;			/* []: no change */
	keys = fast_text_array_of(v.val.binary.data, &ok);
	if (!ok)
		return false;
	fc->props = DatumGetJsonbP(DirectFunctionCall2(jsonb_delete_array,
												   JsonbPGetDatum(fc->props ? fc->props :
																  fast_jsonb_object1(NULL, NULL)),
												   keys));
	fc->props_changed = true;
	fc->changes++;
	return true;
}

/*
 * remove-snapshot-ref, as update_table: a ref that exists goes (a change);
 * main leaves no current snapshot (-1; v3: null) even when it was absent,
 * without being a change of its own.  After main moved in this commit, the
 * engine's (it trims the snapshot log of the replaced move).
 */
static bool
remove_snapshot_ref(FastCommit *fc, JsonbContainer *u)
{
	char	   *name;
	JsonbValue	v;

	if (!fast_jstring(u, "ref-name", &name))
		return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL, "updates[%d].ref-name must be a string", fc->idx);
	if (strcmp(name, "main") == 0)
	{
		if (fc->main_set || fc->gone)
			return false;
		fc->main_removed = true;
		fc->current = SKADE_NO_SNAPSHOT;
	}
	if (fc->refs == NULL || !fast_jvalue(&fc->refs->root, name, &v))
		return true;
	fc->refs = DatumGetJsonbP(DirectFunctionCall2(jsonb_delete, JsonbPGetDatum(fc->refs),
												  CStringGetTextDatum(name)));
	fc->refs_changed = true;
	fc->changes++;
	return true;
}

/*
 * remove-snapshots, as skade.remove_snapshots(): the base's snapshots whose
 * id is among snapshot-ids go; with them every ref and statistics file
 * naming one (and, as jsonb's NOT IN drops them, every ref or statistics
 * file without a snapshot-id), the current snapshot if it went, and the
 * snapshot log up to the last entry of a removed snapshot (entries of
 * unknown snapshots dropped).  One change per snapshot removed.  Once per
 * commit, and not with a snapshot added or main moved or removed in the
 * same commit: those are the engine's.
 */
static bool
remove_snapshots(FastCommit *fc, JsonbContainer *u)
{
	const SkadeMetaSnapshot *snaps = SkadeMetaSnapshots(fc->base);
	JsonbValue	ids;
	int64	   *want;
	int			nwant;
	uint32		i;

	if (fc->gone || fc->added || fc->main_set || fc->main_removed)
		return false;
	if (!fast_jvalue(u, "snapshot-ids", &ids) || ids.type != jbvBinary ||
		!JsonContainerIsArray(ids.val.binary.data))
		return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL, "updates[%d].snapshot-ids must be an array", fc->idx);
	nwant = integer_ids(ids.val.binary.data, &want);
	fc->gone = palloc0(sizeof(bool) * (fc->base->nsnapshots + 1));
	fc->gone_ids = palloc(sizeof(int64) * (fc->base->nsnapshots + 1));
	for (i = 0; i < fc->base->nsnapshots; i++)
		if (bsearch(&snaps[i].snapshot_id, want, nwant, sizeof(int64), cmp_int64))
		{
			fc->gone[i] = true;
			fc->gone_ids[fc->ngone++] = snaps[i].snapshot_id;
		}
	if (fc->ngone == 0)
		return true;			/* (fc->gone stays: one removal per commit) */
	qsort(fc->gone_ids, fc->ngone, sizeof(int64), cmp_int64);
	if (!drop_gone_statistics(fc, "statistics") ||
		!drop_gone_statistics(fc, "partition-statistics"))
		return false;
	drop_gone_refs(fc);
	if (fc->current != SKADE_NO_SNAPSHOT && is_gone(fc, fc->current))
	{
		fc->main_removed = true;
		fc->current = SKADE_NO_SNAPSHOT;
	}
	keep_log(fc);
	fc->changes += fc->ngone;
	return true;
}

/* the integer-valued numbers of a JSON array, sorted (others equal no snapshot id) */
static int
integer_ids(JsonbContainer *arr, int64 **ids)
{
	int			n = JsonContainerSize(arr);
	int			k = 0;
	int			i;

	*ids = palloc(sizeof(int64) * (n + 1));
	for (i = 0; i < n; i++)
	{
		JsonbValue *e = getIthJsonbValueFromContainer(arr, i);

		if (e->type == jbvNumeric && numeric_id(e, &(*ids)[k]))
			k++;
	}
	qsort(*ids, k, sizeof(int64), cmp_int64);
	return k;
}

/* a JSON number equal to an int64 (1, 1.0, 1e0), as jsonb compares them */
static bool
numeric_id(JsonbValue *v, int64 *id)
{
	char	   *s = DatumGetCString(DirectFunctionCall1(numeric_out, NumericGetDatum(v->val.numeric)));
	char	   *dot = strchr(s, '.');

	if (dot)
	{
		if (strspn(dot + 1, "0") != strlen(dot + 1))
			return false;
		*dot = '\0';
	}
	return SkadeIntText(s, strlen(s), id);
}

static int
cmp_int64(const void *a, const void *b)
{
	int64		x = *(const int64 *) a;
	int64		y = *(const int64 *) b;

	return x < y ? -1 : x > y;
}

static bool
is_gone(FastCommit *fc, int64 id)
{
	return fc->ngone > 0 &&
		bsearch(&id, fc->gone_ids, fc->ngone, sizeof(int64), cmp_int64) != NULL;
}

/* does obj's snapshot-id survive the removal (jsonb: NOT snapshot-id IN gone)? */
static bool
survives(FastCommit *fc, JsonbContainer *obj)
{
	JsonbValue	sid;
	int64		id;

	if (!fast_jvalue(obj, "snapshot-id", &sid))
		return false;
	return sid.type != jbvNumeric || !numeric_id(&sid, &id) || !is_gone(fc, id);
}

/* a statistics list without the removed snapshots' files (written even if absent) */
static bool
drop_gone_statistics(FastCommit *fc, const char *list)
{
	Jsonb	   *cur = fast_member_jsonb(fc, list);
	JsonbParseState *state = NULL;
	int			n;
	int			i;

	if (cur != NULL && (!JB_ROOT_IS_ARRAY(cur) || JB_ROOT_IS_SCALAR(cur)))
		return false;
	pushJsonbValue(&state, WJB_BEGIN_ARRAY, NULL);
	n = cur ? JsonContainerSize(&cur->root) : 0;
	for (i = 0; i < n; i++)
	{
		JsonbValue *e = getIthJsonbValueFromContainer(&cur->root, i);

		if (e->type == jbvBinary && survives(fc, e->val.binary.data))
			pushJsonbValue(&state, WJB_ELEM, e);
	}
	fast_replace_member(fc, list, JsonbToCString(NULL, &JsonbValueToJsonb(
									pushJsonbValue(&state, WJB_END_ARRAY, NULL))->root, -1));
	return true;
}

/* the refs without those naming a removed snapshot (written even if absent) */
static void
drop_gone_refs(FastCommit *fc)
{
	JsonbParseState *state = NULL;
	JsonbIterator *it;
	JsonbIteratorToken tok;
	JsonbValue	k;
	JsonbValue	v;

	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	if (fc->refs)
	{
		it = JsonbIteratorInit(&fc->refs->root);
		while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
		{
			if (tok == WJB_KEY)
				k = v;
			else if (tok == WJB_VALUE && v.type == jbvBinary &&
					 survives(fc, v.val.binary.data))
			{
				pushJsonbValue(&state, WJB_KEY, &k);
				pushJsonbValue(&state, WJB_VALUE, &v);
			}
		}
	}
	fc->refs = JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_OBJECT, NULL));
	fc->refs_changed = true;
}

/*
 * The snapshot log after the removal: restarted after each entry of a
 * removed snapshot, entries of snapshots the table no longer has dropped;
 * fc->log_keep holds the base entries kept, in order.
 */
static void
keep_log(FastCommit *fc)
{
	const SkadeMetaLogEntry *log = SkadeMetaLog(fc->base);
	uint32		i;

	fc->log_keep = palloc(sizeof(int) * (fc->base->nlog + 1));
	fc->nlog_keep = 0;
	for (i = 0; i < fc->base->nlog; i++)
	{
		if (is_gone(fc, log[i].snapshot_id))
			fc->nlog_keep = 0;
		else if (SkadeMetaSnapshotById(fc->base, log[i].snapshot_id) != NULL)
			fc->log_keep[fc->nlog_keep++] = (int) i;
	}
}

/*
 * remove-partition-specs / remove-schemas, as update_table: an array of ids
 * without the default spec (current schema; naming it is the engine's
 * error); a non-empty one keeps the entries whose id it does not hold (an
 * entry without one goes, as jsonb's NOT IN drops it) and is a change even
 * if it removed nothing.
 */
static bool
remove_ids(FastCommit *fc, JsonbContainer *u, const char *field, const char *list,
		   const char *key, const char *current)
{
	JsonbValue	ids;
	JsonbValue	cur;
	Jsonb	   *have = fast_member_jsonb(fc, current);
	Jsonb	   *arr = fast_member_jsonb(fc, list);
	JsonbParseState *state = NULL;
	char	   *text;
	int			n;
	int			i;

	if (!fast_jvalue(u, field, &ids) || ids.type != jbvBinary ||
		!JsonContainerIsArray(ids.val.binary.data))
		return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL, "updates[%d].%s must be an array", fc->idx, field);
	if (have == NULL || !JsonbExtractScalar(&have->root, &cur))
		return false;
	if (jsonb_in_array(&cur, ids.val.binary.data))
		return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL, "updates[%d]: cannot remove the %s", fc->idx,
					  strcmp(list, "schemas") == 0 ? "current schema" : "default partition spec");
	if (arr == NULL || !JB_ROOT_IS_ARRAY(arr) || JB_ROOT_IS_SCALAR(arr))
		return false;
	if (JsonContainerSize(ids.val.binary.data) == 0)
		return true;
	pushJsonbValue(&state, WJB_BEGIN_ARRAY, NULL);
	n = JsonContainerSize(&arr->root);
	for (i = 0; i < n; i++)
	{
		JsonbValue *e = getIthJsonbValueFromContainer(&arr->root, i);
		JsonbValue	id;

		if (e->type == jbvBinary && fast_jvalue(e->val.binary.data, key, &id) &&
			!jsonb_in_array(&id, ids.val.binary.data))
			pushJsonbValue(&state, WJB_ELEM, e);
	}
	text = JsonbToCString(NULL, &JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_ARRAY, NULL))->root, -1);
	fast_replace_member(fc, list, text);
	if (strcmp(list, "partition-specs") == 0)
		fc->specs_text = SkadeCompactJson(text, strlen(text), fc->base_location);
	fc->changes++;
	return true;
}

/* is v (jsonb-)equal to an element of arr? */
static bool
jsonb_in_array(JsonbValue *v, JsonbContainer *arr)
{
	Jsonb	   *want = JsonbValueToJsonb(v);
	int			n = JsonContainerSize(arr);
	int			i;

	for (i = 0; i < n; i++)
	{
		JsonbValue *e = getIthJsonbValueFromContainer(arr, i);

		if (DatumGetBool(DirectFunctionCall2(jsonb_eq, JsonbPGetDatum(JsonbValueToJsonb(e)),
											 JsonbPGetDatum(want))))
			return true;
	}
	return false;
}

/*
 * set-location, as update_table: a string other than the current location
 * (compared before trimming, so "loc/" for "loc" is a change) sets it
 * without trailing slashes.  An empty result is the engine's.
 */
static bool
set_location(FastCommit *fc, JsonbContainer *u)
{
	const char *cur = fc->table_location ? fc->table_location :
		SkadeMetaStr(fc->base, fc->base->table_location);
	char	   *loc;
	int			len;
	StringInfoData buf;

	if (!fast_jstring(u, "location", &loc))
		return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL, "updates[%d].location must be a string", fc->idx);
	if (cur == NULL)
		return false;
	if (strcmp(loc, cur) == 0)
		return true;
	len = strlen(loc);
	while (len > 0 && loc[len - 1] == '/')
		loc[--len] = '\0';
	if (len == 0)
		return false;
	fc->table_location = loc;
	initStringInfo(&buf);
	escape_json(&buf, loc);
	fast_replace_member(fc, "location", buf.data);
	fc->changes++;
	return true;
}

/* is v a JSON number whose text is an integer (the engine's '^-?[0-9]+$')? */
static bool
integer_number(JsonbValue *v)
{
	char	   *s;

	if (v->type != jbvNumeric)
		return false;
	s = DatumGetCString(DirectFunctionCall1(numeric_out, NumericGetDatum(v->val.numeric)));
	if (*s == '-')
		s++;
	return *s != '\0' && strspn(s, "0123456789") == strlen(s);
}

/*
 * The elements of list (a statistics array) whose snapshot-id is a key
 * other than id, as jsonb's `x->'snapshot-id' <> id` keeps them (an element
 * without one is dropped); *found: some element has id.  NULL: the list is
 * not an array (the engine's error).
 */
static JsonbParseState *
statistics_except(FastCommit *fc, const char *list, JsonbValue *id, bool *found)
{
	Jsonb	   *cur = fast_member_jsonb(fc, list);
	Jsonb	   *want = JsonbValueToJsonb(id);
	JsonbParseState *state = NULL;
	int			n;
	int			i;

	*found = false;
	if (cur != NULL && (!JB_ROOT_IS_ARRAY(cur) || JB_ROOT_IS_SCALAR(cur)))
		return NULL;
	pushJsonbValue(&state, WJB_BEGIN_ARRAY, NULL);
	n = cur ? JsonContainerSize(&cur->root) : 0;
	for (i = 0; i < n; i++)
	{
		JsonbValue *e = getIthJsonbValueFromContainer(&cur->root, i);
		JsonbValue	sid;
		bool		same;

		if (e->type != jbvBinary || !fast_jvalue(e->val.binary.data, "snapshot-id", &sid))
			continue;
		same = DatumGetBool(DirectFunctionCall2(jsonb_eq,
												JsonbPGetDatum(JsonbValueToJsonb(&sid)),
												JsonbPGetDatum(want)));
		*found = *found || same;
		if (!same)
			pushJsonbValue(&state, WJB_ELEM, e);
	}
	return state;
}

/*
 * set-statistics / set-partition-statistics, as update_table: a statistics
 * file with a numeric snapshot-id and file-size-in-bytes and a string
 * statistics-path replaces the list's entry for its snapshot (always a
 * change).
 */
static bool
set_statistics(FastCommit *fc, JsonbContainer *u, const char *list, const char *field)
{
	JsonbValue	s;
	JsonbValue	sid;
	JsonbValue	x;
	JsonbParseState *state;
	bool		found;

	if (!fast_jvalue(u, field, &s) || s.type != jbvBinary || !JsonContainerIsObject(s.val.binary.data) ||
		!fast_jvalue(s.val.binary.data, "snapshot-id", &sid) || sid.type != jbvNumeric ||
		!fast_jvalue(s.val.binary.data, "statistics-path", &x) || x.type != jbvString ||
		!fast_jvalue(s.val.binary.data, "file-size-in-bytes", &x) || x.type != jbvNumeric)
		return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL, "updates[%d] needs a statistics file with snapshot-id, "
					  "statistics-path and file-size-in-bytes", fc->idx);
	if ((state = statistics_except(fc, list, &sid, &found)) == NULL)
		return false;
	pushJsonbValue(&state, WJB_ELEM, &s);
	fast_replace_member(fc, list, JsonbToCString(NULL, &JsonbValueToJsonb(
									pushJsonbValue(&state, WJB_END_ARRAY, NULL))->root, -1));
	fc->changes++;
	return true;
}

/* remove-statistics / remove-partition-statistics: the entry for snapshot-id, if any */
static bool
remove_statistics(FastCommit *fc, JsonbContainer *u, const char *list)
{
	JsonbValue	sid;
	JsonbParseState *state;
	bool		found;

	if (!fast_jvalue(u, "snapshot-id", &sid) || !integer_number(&sid))
		return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL, "updates[%d].snapshot-id must be a number", fc->idx);
	if ((state = statistics_except(fc, list, &sid, &found)) == NULL)
		return false;
	if (!found)
		return true;
	fast_replace_member(fc, list, JsonbToCString(NULL, &JsonbValueToJsonb(
									pushJsonbValue(&state, WJB_END_ARRAY, NULL))->root, -1));
	fc->changes++;
	return true;
}

/*
 * set-current-schema, set-default-spec, set-default-sort-order and
 * upgrade-format-version, as update_table: an integer (skade.json_int); -1
 * (the last added one) refused, for this path adds none; naming what the
 * table already has, no change; an unknown current schema, a version past
 * 3 or a downgrade refused.  A real change is the engine's.
 */
static bool
unchanged_id(FastCommit *fc, JsonbContainer *u, const char *field, const char *member)
{
	int64		want;
	int64		have;

	if (!json_int(fc, u, field, NULL, &want) || !current_int(fc, member, &have))
		return false;
	if (strcmp(field, "format-version") == 0)
	{
		if (want > 3)
			return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
						  "updates[%d]: cannot upgrade to format version " INT64_FORMAT, fc->idx, want);
		if (want < have)
			return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
						  "updates[%d]: cannot downgrade v" INT64_FORMAT " table to v" INT64_FORMAT,
						  fc->idx, have, want);
		if (want > have)
		{
			upgrade(fc, (int) want);
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

		return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
					  "updates[%d]: cannot set last added %s: no %s has been added", fc->idx, what, what);
	}
	if (want == have)
		return true;
	if (strcmp(field, "schema-id") == 0)
	{
		int			known = schema_known(fc, want);

		if (known == 0)
			return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
						  "updates[%d]: cannot set current schema to unknown schema " INT64_FORMAT,
						  fc->idx, want);
		if (known < 0)
			return false;
		fc->current_schema_id = want;
	}
	/* (an unknown spec or sort order is refused at the end, as Java's build() does) */
	fast_replace_member(fc, member, psprintf(INT64_FORMAT, want));
	fc->bind_changed = true;
	fc->changes++;
	return true;
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
static bool
defaults_bind(FastCommit *fc)
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
			return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL, what[k][3],
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
			return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
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
	char	   *sid = jtext(f, "source-id");
	char	   *type;
	char	   *base;
	int64		id;
	JInt		j = fast_jint(f, "source-id", &id);

	if (jtype(f, "transform") && !jtype_is(f, "transform", "null") &&
		!fast_jstring(f, "transform", &tr))
		tr = jtext(f, "transform");
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
static bool
add_sort_order(FastCommit *fc, JsonbContainer *u)
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
		(jtype(ord.val.binary.data, "fields") && !jtype_is(ord.val.binary.data, "fields", "array")))
		return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
					  "updates[%d].sort-order must be an object with a fields array", fc->idx);
	if (!order_fields(fc, ord.val.binary.data, schema, &state, &k))
		return false;
	fields = JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_ARRAY, NULL));
	if (!json_int(fc, ord.val.binary.data, "order-id",
				  psprintf("updates[%d].sort-order.order-id", fc->idx), &order_id))
		return false;
	if ((order_id == 0) != (k == 0))
		return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
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

		if (f == NULL || !jtype_is(f, "source-id", "number") || !jtype_is(f, "transform", "string") ||
			(jtype(f, "direction") && !jtype_is(f, "direction", "null") &&
			 (!fast_jstring(f, "direction", &dir) || (strcmp(dir, "asc") != 0 && strcmp(dir, "desc") != 0))) ||
			(jtype(f, "null-order") && !jtype_is(f, "null-order", "null") &&
			 (!fast_jstring(f, "null-order", &nulls) ||
			  (strcmp(nulls, "nulls-first") != 0 && strcmp(nulls, "nulls-last") != 0))))
			return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
						  "updates[%d].sort-order.fields[%d] needs source-id, transform, direction "
						  "asc|desc and null-order nulls-first|nulls-last", fc->idx, i);
		if (dir == NULL || nulls == NULL)
			return false;		/* (a missing one passes the engine's NULL-valued check) */
		error = bind_error(schema, f, false, &unsure);
		if (unsure)
			return false;
		if (error)
			return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
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
static bool
add_spec(FastCommit *fc, JsonbContainer *u)
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
		(jtype(spec.val.binary.data, "fields") && !jtype_is(spec.val.binary.data, "fields", "array")))
		return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
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

		if (f == NULL || !jtype_is(f, "source-id", "number") || !jtype_is(f, "transform", "string") ||
			!jtype(f, "name") || jtype_is(f, "name", "null") ||
			(jtype_is(f, "name", "string") && fast_jstring(f, "name", &name) && name[0] == '\0'))
			return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
						  "updates[%d].spec.fields[%d] needs source-id, transform and name", fc->idx, i);
		if (name == NULL)
			return false;		/* (a name that is no string: the engine's text) */
		error = bind_error(schema, f, true, &unsure);
		if (unsure)
			return false;
		if (error)
			return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
						  "updates[%d].spec.fields[%d]: %s", fc->idx, i, error);
		if (names_other_column(schema, f, name, &unsure))
			return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
						  "updates[%d].spec.fields[%d]: name \"%s\" is another column of the schema",
						  fc->idx, i, name);
		if (unsure)
			return false;
		foreach(lc, names)
			if (strcmp((char *) lfirst(lc), name) == 0)
				return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
							  "updates[%d].spec.fields[%d]: name \"%s\" is used twice", fc->idx, i, name);
		names = lappend(names, name);
		if (jtype_is(f, "field-id", "number"))
		{
			if (fast_jint(f, "field-id", &fid) != J_INT || fid < PG_INT32_MIN || fid > PG_INT32_MAX)
				return false;	/* (a cast to integer) */
		}
		else if (*next_id >= PG_INT32_MAX)
			return false;		/* (an integer overflow) */
		else
			fid = ++(*next_id);
		*next_id = Max(*next_id, fid);
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
static bool
add_schema(FastCommit *fc, JsonbContainer *u)
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
		return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL, "updates[%d].schema must be an object", fc->idx);
	if (!fast_jvalue(schema.val.binary.data, "fields", &fields) || fields.type != jbvBinary ||
		!JsonContainerIsArray(fields.val.binary.data))
		return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL, "schema: updates[%d].schema.fields must be an array",
					  fc->idx);
	if (!struct_fields_valid(fc, fields.val.binary.data, psprintf("updates[%d].schema", fc->idx)))
		return false;
	text = jtext(u, "schema");
	for (i = 0; i < lengthof(v3types) && fc->format_version < 3; i++)
		if (strstr(text, v3types[i]) != NULL)
			return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
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

		if (f == NULL || !jtype_is(f, "name", "string") || !fast_jvalue(f, "type", &v) ||
			!jtype_is(f, "required", "boolean"))
			return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
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
		return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL, "schema: %s is not a type", path);
	o = t->val.binary.data;
	if (v.type != jbvString)
		return false;			/* (a type that is no string: the engine's text) */
	kind = pnstrdup(v.val.string.val, v.val.string.len);
	if (strcmp(kind, "struct") == 0)
	{
		if (!fast_jvalue(o, "fields", &v) || v.type != jbvBinary || !JsonContainerIsArray(v.val.binary.data))
			return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL, "schema: %s.fields must be an array", path);
		return struct_fields_valid(fc, v.val.binary.data, path);
	}
	if (strcmp(kind, "list") == 0)
	{
		if (!fast_jvalue(o, "element", &v) || !jtype_is(o, "element-required", "boolean"))
			return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
						  "schema: %s (list) needs \"element\" and \"element-required\"", path);
		return type_valid(fc, &v, psprintf("%s.element", path));
	}
	if (strcmp(kind, "map") == 0)
	{
		if (!fast_jvalue(o, "key", &v) || !fast_jvalue(o, "value", &w) || !jtype_is(o, "value-required", "boolean"))
			return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
						  "schema: %s (map) needs \"key\", \"value\" and \"value-required\"", path);
		return type_valid(fc, &v, psprintf("%s.key", path)) && type_valid(fc, &w, psprintf("%s.value", path));
	}
	return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL, "schema: %s has unknown type \"%s\"", path, kind);
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
	return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL, "schema: %s has unknown type %s", path,
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
	JsonbValue	v;
	Jsonb	   *one;

	v.type = jbvNumeric;
	v.val.numeric = DatumGetNumeric(DirectFunctionCall1(int8_numeric, Int64GetDatum(id)));
	one = DatumGetJsonbP(DirectFunctionCall2(jsonb_concat, JsonbPGetDatum(norm),
											 JsonbPGetDatum(fast_jsonb_object1("schema-id", &v))));
	return DatumGetJsonbP(DirectFunctionCall2(jsonb_concat, JsonbPGetDatum(schemas),
											  DirectFunctionCall1(jsonb_in, CStringGetDatum(
												  psprintf("[%s]", JsonbToCString(NULL, &one->root, VARSIZE(one)))))));
}

/*
 * The table upgraded to format v (skade.upgraded(): v2 to v3 here): the
 * version, and next-row-id 0 unless the table has one.  (The caller counts
 * the change: an upgrade-format-version is one, a set-properties that
 * upgrades is one in all.)
 */
static void
upgrade(FastCommit *fc, int v)
{
	fast_replace_member(fc, "format-version", psprintf("%d", v));
	fc->format_version = v;
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

/* assign-uuid: a string; the table's own uuid (any case) is no change, another is refused */
static bool
same_uuid(FastCommit *fc, JsonbContainer *u)
{
	const char *have = SkadeMetaStr(fc->base, fc->base->table_uuid);
	char	   *uuid;

	if (!fast_jstring(u, "uuid", &uuid))
		return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL, "updates[%d].uuid must be a string", fc->idx);
	if (have == NULL || !pg_is_ascii(uuid) || !pg_is_ascii(have))
		return false;			/* (lower() of non-ASCII is the engine's) */
	if (pg_strcasecmp(uuid, have) != 0)
		return refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
					  "updates[%d]: cannot change the uuid of an existing table", fc->idx);
	return true;
}

/* a member as the commit has left it so far, as jsonb (NULL: absent) */
Jsonb *
fast_member_jsonb(FastCommit *fc, const char *key)
{
	const char *text = fast_replaced(fc, key);
	Member	   *m;

	if (text)
		return DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(text)));
	if ((m = fast_member(fc, key)) == NULL)
		return NULL;
	return fast_jsonb_of_span(m->value);
}

/* key's new text (replacing an earlier replacement) */
void
fast_replace_member(FastCommit *fc, const char *key, char *text)
{
	int			i;

	for (i = 0; i < fc->nrepl; i++)
		if (strcmp(fc->repl[i].key, key) == 0)
			break;
	if (i == MAX_REPLACED)
		elog(ERROR, "a commit replaces more than %d members", MAX_REPLACED);
	fc->repl[i].key = key;
	fc->repl[i].text = text;
	if (i == fc->nrepl)
		fc->nrepl++;
}

/* key's new text, or NULL when the commit has not replaced it */
const char *
fast_replaced(FastCommit *fc, const char *key)
{
	int			i;

	for (i = 0; i < fc->nrepl; i++)
		if (strcmp(fc->repl[i].key, key) == 0)
			return fc->repl[i].text;
	return NULL;
}

/* a snapshot of the base, or the one this commit added */
bool
fast_snapshot_known(FastCommit *fc, int64 id)
{
	return (fc->added && fc->added_snap.snapshot_id == id) ||
		(SkadeMetaSnapshotById(fc->base, id) != NULL && !is_gone(fc, id));
}

