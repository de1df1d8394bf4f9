/*-------------------------------------------------------------------------
 *
 * commit_actions.c
 *	  The update actions of update_table's C path (commit_fast.c), each as
 *	  the PL/pgSQL engine applies it (Java's TableMetadata.Builder as
 *	  transcribed there), onto the commit's FastCommit: the dispatch, and
 *	  add-snapshot, set-snapshot-ref, remove-snapshot-ref,
 *	  remove-snapshots, set-/remove-properties, set-location, the
 *	  statistics actions, remove-partition-specs, remove-schemas and
 *	  assign-uuid here (the schema, spec and sort-order actions in
 *	  commit_schema.c); then the checks the engine makes on the whole
 *	  result; and fast_refuse(), the engine's refusals.
 *
 * Contract
 *   - An input the engine refuses while applying an action is refused
 *     here, with the engine's SQLSTATE and words (fast_refuse()), at the point
 *     the engine refuses it: every requirement has held and every earlier
 *     action was applied here, as the engine would have.  Except while a
 *     stale requirement is held back for a rebase: the engine reports that
 *     first, so the action returns false and the caller raises it.
 *   - An action returns false, having written nothing anywhere, for every
 *     shape it does not take (and for the inputs whose refusal it does not
 *     reproduce): the whole commit then goes to the engine.
 *   - An action records its effect in the FastCommit only (the members it
 *     replaces, the refs and properties objects, the snapshots added and
 *     removed, main's moves and their log entries); commit_fast.c writes
 *     the new text from that.  A removal acts on the commit's state at
 *     that point: the base's snapshots less those removed before, plus the
 *     ones added before it.
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

static bool unknown_action(FastCommit *fc, JsonbValue *e);
static bool row_lineage(FastCommit *fc, JsonbContainer *s);
static bool add_snapshot(FastCommit *fc, JsonbContainer *u);
static bool v1_snapshot(FastCommit *fc, JsonbContainer *s, Jsonb *snap);
static bool added(FastCommit *fc, Jsonb *snap);
static bool ref_checked(FastCommit *fc, JsonbContainer *u);
static bool set_snapshot_ref(FastCommit *fc, JsonbContainer *u);
static bool typeless_ref(FastCommit *fc, JsonbContainer *u, const char *name);
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
static bool gone_now(FastCommit *fc, int64 id);
static void ungone(FastCommit *fc, int64 id);
static bool survives(FastCommit *fc, JsonbContainer *obj);
static bool drop_gone_statistics(FastCommit *fc, const char *list);
static void drop_gone_refs(FastCommit *fc);
static void keep_log(FastCommit *fc);
static bool set_location(FastCommit *fc, JsonbContainer *u);
static bool set_statistics(FastCommit *fc, JsonbContainer *u, const char *list, const char *field);
static bool remove_statistics(FastCommit *fc, JsonbContainer *u, const char *list);
static bool same_uuid(FastCommit *fc, JsonbContainer *u);
static bool made_main(FastCommit *fc, int64 id);
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
		action = fast_lower(action);
		if (strcmp(action, "add-snapshot") == 0)
			ok = add_snapshot(fc, u);
		else if (strcmp(action, "set-snapshot-ref") == 0)
			ok = set_snapshot_ref(fc, u);
		else if (strcmp(action, "set-properties") == 0)
			ok = set_properties(fc, u);
		else if (strcmp(action, "remove-properties") == 0)
			ok = remove_properties(fc, u);
		else if (strcmp(action, "remove-snapshot-ref") == 0)
			ok = remove_snapshot_ref(fc, u);
		else if (strcmp(action, "remove-snapshots") == 0)
			ok = remove_snapshots(fc, u);
		else if (strcmp(action, "remove-partition-specs") == 0)
			ok = remove_ids(fc, u, "spec-ids", "partition-specs", "spec-id", "default-spec-id");
		else if (strcmp(action, "remove-schemas") == 0)
			ok = remove_ids(fc, u, "schema-ids", "schemas", "schema-id", "current-schema-id");
		else if (strcmp(action, "set-location") == 0)
			ok = set_location(fc, u);
		else if (strcmp(action, "set-statistics") == 0)
			ok = set_statistics(fc, u, "statistics", "statistics");
		else if (strcmp(action, "set-partition-statistics") == 0)
			ok = set_statistics(fc, u, "partition-statistics", "partition-statistics");
		else if (strcmp(action, "remove-statistics") == 0)
			ok = remove_statistics(fc, u, "statistics");
		else if (strcmp(action, "remove-partition-statistics") == 0)
			ok = remove_statistics(fc, u, "partition-statistics");
		else if (strcmp(action, "set-current-schema") == 0)
			ok = fast_set_id(fc, u, "schema-id", "current-schema-id");
		else if (strcmp(action, "set-default-spec") == 0)
			ok = fast_set_id(fc, u, "spec-id", "default-spec-id");
		else if (strcmp(action, "set-default-sort-order") == 0)
			ok = fast_set_id(fc, u, "sort-order-id", "default-sort-order-id");
		else if (strcmp(action, "upgrade-format-version") == 0)
			ok = fast_set_id(fc, u, "format-version", "format-version");
		else if (strcmp(action, "assign-uuid") == 0)
			ok = same_uuid(fc, u);
		else if (strcmp(action, "add-sort-order") == 0)
			ok = fast_add_sort_order(fc, u);
		else if (strcmp(action, "add-spec") == 0)
			ok = fast_add_spec(fc, u);
		else if (strcmp(action, "add-schema") == 0)
			ok = fast_add_schema(fc, u);
		else
			ok = unknown_action(fc, e);
		if (!ok)
			return false;
	}
	return true;
}

/*
 * The checks update_table makes on a result that changed (Java's build()),
 * in the engine's order, refused as it refuses them, after the log of
 * replaced moves of main is trimmed: the defaults and their binding when
 * this commit changed one of them (a create: always), v1's partition-spec,
 * no snapshot's sequence number past the table's, the new snapshot log in
 * order (no entry more than a minute before the one above it, the new
 * entries included, what removals kept) and not more than a minute ahead
 * of now.  (Not checked
 * here: that the base's own defaults bind, when the commit changes none of
 * them; a base that fails it was written so by another client.)
 */
bool
fast_result_valid(FastCommit *fc)
{
	const SkadeMetaLogEntry *log = SkadeMetaLog(fc->base);
	const SkadeMetaSnapshot *snaps = SkadeMetaSnapshots(fc->base);
	int			n = fc->log_keep ? fc->nlog_keep : (int) fc->base->nlog;
	int64	   *ts;
	int			i;
	ListCell   *lc;
	bool		ahead = false;

	/* (the engine trims the log before its checks) */
	if (!fast_trim_log(fc))
		return false;
	ts = palloc(sizeof(int64) * (n + list_length(fc->new_log) + 1));
	if (fc->bind_changed && !fast_defaults_bind(fc))
		return false;
	if (fc->format_version == 1 && !fast_v1_partition_spec(fc))
		return false;
	for (i = 0; i < (int) fc->base->nsnapshots; i++)
		if (snaps[i].sequence_number > fc->last_seq && !(fc->gone && fc->gone[i]))
			ahead = true;
	foreach(lc, fc->adds)
		if (((FastAdded *) lfirst(lc))->snap.sequence_number > fc->last_seq)
			ahead = true;
	if (ahead)
		return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
						   "a snapshot has a sequence number greater than last sequence number " INT64_FORMAT,
						   fc->last_seq);
	/* the new log's timestamps: the base's (what a removal kept), the new entry */
	for (i = 0; i < n; i++)
		ts[i] = log[fc->log_keep ? fc->log_keep[i] : i].timestamp_ms;
	foreach(lc, fc->new_log)
		ts[n++] = ((FastLogEntry *) lfirst(lc))->ts;
	for (i = 1; i < n; i++)
		if (ts[i] < ts[i - 1] - 60000)
			return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL, "the snapshot log would go back "
						  "in time or run ahead of this commit (by more than a minute)");
	/* (this clock read later than the engine's: past the minute here is past it there too) */
	if (n > 0 && ts[n - 1] > fc->now_ms + 60000)
		return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL, "the snapshot log would go back "
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
bool
fast_refuse(FastCommit *fc, int sqlstate, const char *hint, const char *fmt,...)
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
const char *
fast_jtype(JsonbContainer *obj, const char *key)
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
char *
fast_jtext(JsonbContainer *obj, const char *key)
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
bool
fast_json_int(FastCommit *fc, JsonbContainer *u, const char *key, const char *what, int64 *v)
{
	char	   *text = fast_jtext(u, key);
	const char *digits = text && *text == '-' ? text + 1 : text;
	const char *type = fast_jtype(u, key);

	if (type && strcmp(type, "number") == 0 && *digits != '\0' && strlen(digits) <= 10 &&
		strspn(digits, "0123456789") == strlen(digits) &&
		SkadeIntText(text, strlen(text), v) && *v >= PG_INT32_MIN && *v <= PG_INT32_MAX)
		return true;
	return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL, "%s must be an integer, not %s",
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
	char	   *text = u ? fast_jtext(u, "action") : NULL;

	if (u && fast_jstring(u, "action", &action) &&
		(strcmp(fast_lower(action), "add-encryption-key") == 0 ||
		 strcmp(fast_lower(action), "remove-encryption-key") == 0))
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
	return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL, "updates[%d]: unknown action %s",
				  fc->idx, text && strcmp(text, "null") != 0 ? text : "null");
}

/* is jsonb_typeof(obj->key) type? */
bool
fast_jtype_is(JsonbContainer *obj, const char *key, const char *type)
{
	const char *t = fast_jtype(obj, key);

	return t != NULL && strcmp(t, type) == 0;
}

/*
 * The engine's lower(): str_tolower in the database's default collation,
 * which is what lower() of a jsonb ->> text applies (any characters, and
 * locales such as tr_TR where lower('I') is not 'i').
 */
char *
fast_lower(const char *s)
{
	return str_tolower(s, strlen(s), DEFAULT_COLLATION_OID);
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

	if (!fast_jtype_is(s, "first-row-id", "number") || !fast_jtype_is(s, "added-rows", "number"))
		return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
					  "updates[%d].snapshot needs first-row-id and added-rows in a v3 table", fc->idx);
	jf = fast_jint(s, "first-row-id", &first);
	jr = fast_jint(s, "added-rows", &rows);
	if (jf != J_INT || jr != J_INT)
		return false;			/* (the engine's casts decide) */
	if (first < 0 || rows < 0)
		return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
					  "updates[%d].snapshot needs first-row-id and added-rows in a v3 table", fc->idx);
	if (first < fc->next_row_id)
		return fast_refuse(fc, ERRCODE_T_R_SERIALIZATION_FAILURE, NULL,
					  "cannot add snapshot: first-row-id " INT64_FORMAT " is behind table next-row-id "
					  INT64_FORMAT, first, fc->next_row_id);
	return !pg_add_s64_overflow(fc->next_row_id, rows, &fc->next_row_id);
}

/*
 * add-snapshot, as skade.add_snapshot() on a v2 table: nulls stripped; an
 * integer id and timestamp, a manifest list, an operation; a new id; the
 * sequence number (none: 0) past the table's when it has a parent.
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

	if (!fast_jvalue(u, "snapshot", &v) || v.type != jbvBinary ||
		!JsonContainerIsObject(v.val.binary.data))
		return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL, "updates[%d].snapshot needs snapshot-id, "
					  "timestamp-ms, manifest-list and summary.operation", fc->idx);
	snap = DatumGetJsonbP(DirectFunctionCall1(jsonb_strip_nulls,
											  JsonbPGetDatum(JsonbValueToJsonb(&v))));
	s = &snap->root;
	if (!fast_jtype_is(s, "snapshot-id", "number") || !fast_jtype_is(s, "timestamp-ms", "number") ||
		(fc->format_version > 1 && !fast_jtype_is(s, "manifest-list", "string")) ||
		!fast_jobject(s, "summary", &summary) || !fast_jtype_is(summary, "operation", "string"))
		return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL, "updates[%d].snapshot needs snapshot-id, "
					  "timestamp-ms, manifest-list and summary.operation", fc->idx);
	/* (no sequence number is 0, as Java reads it) */
	if (fast_jint(s, "sequence-number", &seq) == J_ABSENT)
		seq = 0;
	else if (fast_jint(s, "sequence-number", &seq) != J_INT)
		return false;
	if (fast_jint(s, "snapshot-id", &id) != J_INT || fast_jint(s, "timestamp-ms", &ts) != J_INT ||
		!fast_jstring(s, "manifest-list", &str) || !fast_jstring(summary, "operation", &str) ||
		fast_jint(s, "parent-snapshot-id", &x) == J_OTHER ||
		(fc->format_version > 1 && !fc->seq_set && !fast_member_int(fc, "last-sequence-number", &x)))
		return false;
	if (fast_jint(s, "schema-id", &x) == J_OTHER ||
		(fast_jint(s, "schema-id", &x) == J_INT && (x < PG_INT32_MIN || x > PG_INT32_MAX)))
		return false;
	if (fast_snapshot_known(fc, id))
		return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL, "updates[%d]: snapshot " INT64_FORMAT
					  " already exists", fc->idx, id);
	/* (an id this commit removed may be added again: it is the table's then) */
	ungone(fc, id);
	if (fc->format_version == 1)
		return v1_snapshot(fc, s, snap);
	if (seq <= fc->last_seq && fast_jvalue(s, "parent-snapshot-id", &v))
		return fast_refuse(fc, ERRCODE_T_R_SERIALIZATION_FAILURE,
					  "Another commit came first: reload the table and retry.",
					  "cannot add snapshot with sequence number " INT64_FORMAT
					  " older than last sequence number " INT64_FORMAT, seq, fc->last_seq);
	/*
	 * A snapshot without a parent may go back (Java's Builder): the table's
	 * last sequence number follows it, and the end checks refuse the result
	 * if another snapshot is now past it.
	 */
	/* v3 row lineage: first-row-id not behind the table's next-row-id, which grows by added-rows */
	if (fc->format_version == 3 && !row_lineage(fc, s))
		return false;
	fc->last_seq = seq;
	fc->seq_set = true;
	return added(fc, snap);
}

/* a v1 table's snapshot: sequence number 0 (or none), the table's unchanged */
static bool
v1_snapshot(FastCommit *fc, JsonbContainer *s, Jsonb *snap)
{
	int64		seq;
	JInt		j = fast_jint(s, "sequence-number", &seq);

	if (j == J_OTHER)
		return false;			/* (the engine's numeric comparison) */
	if (j == J_INT && seq != 0)
		return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
						   "updates[%d]: sequence number %s in a v1 table (it must be 0)", fc->idx,
						   fast_jtext(s, "sequence-number"));
	return added(fc, snap);
}

/* the snapshot (nulls stripped) added, with its L0 summary entry */
static bool
added(FastCommit *fc, Jsonb *snap)
{
	FastAdded  *a = palloc0(sizeof(FastAdded));
	int64		ts;

	(void) fast_jint(&snap->root, "timestamp-ms", &ts);
	a->ts = ts;
	a->text = JsonbToCString(NULL, &snap->root, VARSIZE(snap));
	/* its summary entry, read by the reader's own code */
	SkadeParseSnapshot(a->text, strlen(a->text), fc->format_version, fc->base_location,
					   (int) fc->base->nsnapshots + list_length(fc->adds), &a->snap,
					   &a->op, &a->ml, &a->summary);
	fc->adds = lappend(fc->adds, a);
	fc->added_any = true;
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
	const char *name_type = fast_jtype(u, "ref-name");
	char	   *kind = NULL;
	char	   *name = NULL;
	JsonbValue	v;
	int			i;

	if (fast_jtype(u, "type") && !fast_jtype_is(u, "type", "null"))
	{
		kind = fast_jtype_is(u, "type", "string") ? NULL : fast_jtext(u, "type");
		if (kind == NULL && !fast_jstring(u, "type", &kind))
			return false;
		kind = fast_lower(kind);
	}
	if (name_type == NULL || strcmp(name_type, "null") == 0 || !fast_jtype_is(u, "snapshot-id", "number") ||
		(kind && strcmp(kind, "branch") != 0 && strcmp(kind, "tag") != 0))
		return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
					  "updates[%d] needs ref-name, snapshot-id and type branch|tag", fc->idx);
	if (!fast_jstring(u, "ref-name", &name))
		return false;
	if (kind == NULL)
		return typeless_ref(fc, u, name);
	if (strcmp(kind, "tag") == 0 && (fast_jvalue(u, keys[0], &v) || fast_jvalue(u, keys[1], &v)))
		return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
					  "updates[%d]: tags do not keep snapshots", fc->idx);
	if (strcmp(name, "main") == 0 && strcmp(kind, "branch") != 0)
		return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
					  "updates[%d]: cannot set main to a tag, it must be a branch", fc->idx);
	for (i = 0; i < 3; i++)
		if (fast_jvalue(u, keys[i], &v) && v.type != jbvNull && v.type != jbvNumeric)
			return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
						  "updates[%d].%s must be a positive number", fc->idx, keys[i]);
	return true;
}

/*
 * A set-snapshot-ref without a type: the engine's checks of its type pass
 * it by (NULL), its retention values are checked, and it is refused if its
 * snapshot is unknown; false (the engine's) otherwise: it would write a ref
 * without a type.
 */
static bool
typeless_ref(FastCommit *fc, JsonbContainer *u, const char *name)
{
	static const char *const keys[3] = {"min-snapshots-to-keep", "max-snapshot-age-ms",
	"max-ref-age-ms"};
	JsonbValue	v;
	int64		x;
	int			i;

	for (i = 0; i < 3; i++)
	{
		if (!fast_jvalue(u, keys[i], &v) || v.type == jbvNull)
			continue;
		if (v.type != jbvNumeric || (fast_jint(u, keys[i], &x) == J_INT && x <= 0))
			return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
							   "updates[%d].%s must be a positive number", fc->idx, keys[i]);
		if (fast_jint(u, keys[i], &x) != J_INT)
			return false;
	}
	/* (a ref there with a type is not equal to it: no "unchanged" here) */
	if ((fc->refs && fast_jvalue(&fc->refs->root, name, &v) &&
		 !(v.type == jbvBinary && fast_jtype_is(v.val.binary.data, "type", "string"))) ||
		fast_jint(u, "snapshot-id", &x) != J_INT || fast_snapshot_known(fc, x))
		return false;
	return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
					   "updates[%d]: cannot set %s to unknown snapshot " INT64_FORMAT, fc->idx, name, x);
}

/*
 * set-snapshot-ref, as skade.set_snapshot_ref(): the ref replaced whole;
 * an equal ref is no change; main moves the current snapshot and adds a
 * log entry (fast_trim_log drops those of moves replaced in the commit).
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
	kind = fast_lower(kind);
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
			return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
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
		return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
					  "updates[%d]: cannot set %s to unknown snapshot " INT64_FORMAT, fc->idx, name, id);
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
		FastLogEntry *le = palloc(sizeof(FastLogEntry));
		FastAdded  *a = fast_added(fc, id);

		/* a log entry at the added snapshot's time, or now */
		le->ts = a ? a->ts : fc->now_ms;
		le->id = id;
		le->added = a != NULL;
		fc->new_log = lappend(fc->new_log, le);
		fc->main_set = true;
		fc->current = id;
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
		return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL, "updates[%d].updates must be an object of strings", fc->idx);
	it = JsonbIteratorInit(v.val.binary.data);
	while ((tok = JsonbIteratorNext(&it, &kv, true)) != WJB_DONE)
		if (tok == WJB_VALUE && kv.type != jbvString)
			return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL, "updates[%d].updates must be an object of strings", fc->idx);
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
		return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
					  "updates[%d]: format-version %s cannot be set", fc->idx, s);
	if (v > fc->format_version)
		fast_upgrade(fc, v);
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
		return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL, "updates[%d].removals must be an array of strings", fc->idx);
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
 * without being a change of its own.
 */
static bool
remove_snapshot_ref(FastCommit *fc, JsonbContainer *u)
{
	char	   *name;
	JsonbValue	v;

	if (!fast_jstring(u, "ref-name", &name))
		return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL, "updates[%d].ref-name must be a string", fc->idx);
	if (strcmp(name, "main") == 0)
	{
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
 * remove-snapshots, as skade.remove_snapshots(): the table's snapshots (the
 * base's and those added before it in this commit) whose id is among
 * snapshot-ids go; with them every ref and statistics file naming one
 * (and, as jsonb's NOT IN drops them, every ref or statistics file without
 * a snapshot-id), the current snapshot if it went, and the snapshot log up
 * to the last entry of a removed snapshot (entries of snapshots the table
 * no longer has dropped).  One change per snapshot removed.
 */
static bool
remove_snapshots(FastCommit *fc, JsonbContainer *u)
{
	const SkadeMetaSnapshot *snaps = SkadeMetaSnapshots(fc->base);
	JsonbValue	ids;
	int64	   *want;
	int			nwant;
	int			before = fc->ngone;
	List	   *adds = NIL;
	ListCell   *lc;
	uint32		i;

	if (!fast_jvalue(u, "snapshot-ids", &ids) || ids.type != jbvBinary ||
		!JsonContainerIsArray(ids.val.binary.data))
		return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL, "updates[%d].snapshot-ids must be an array", fc->idx);
	nwant = integer_ids(ids.val.binary.data, &want);
	if (fc->gone == NULL)
		fc->gone = palloc0(sizeof(bool) * (fc->base->nsnapshots + 1));
	/* this removal's ids: fc->now_gone (sorted), also appended to fc->gone_ids */
	fc->gone_ids = fc->gone_ids ?
		repalloc(fc->gone_ids, sizeof(int64) * (fc->ngone + fc->base->nsnapshots + list_length(fc->adds) + 1)) :
		palloc(sizeof(int64) * (fc->base->nsnapshots + list_length(fc->adds) + 1));
	for (i = 0; i < fc->base->nsnapshots; i++)
		if (!fc->gone[i] && bsearch(&snaps[i].snapshot_id, want, nwant, sizeof(int64), cmp_int64))
		{
			fc->gone[i] = true;
			fc->gone_ids[fc->ngone++] = snaps[i].snapshot_id;
		}
	foreach(lc, fc->adds)
	{
		FastAdded  *a = lfirst(lc);

		if (bsearch(&a->snap.snapshot_id, want, nwant, sizeof(int64), cmp_int64))
			fc->gone_ids[fc->ngone++] = a->snap.snapshot_id;
		else
			adds = lappend(adds, a);
	}
	if (fc->ngone == before)
		return true;
	fc->adds = adds;
	fc->now_gone = palloc(sizeof(int64) * (fc->ngone - before));
	fc->nnow_gone = fc->ngone - before;
	memcpy(fc->now_gone, fc->gone_ids + before, sizeof(int64) * fc->nnow_gone);
	qsort(fc->now_gone, fc->nnow_gone, sizeof(int64), cmp_int64);
	qsort(fc->gone_ids, fc->ngone, sizeof(int64), cmp_int64);
	if (!drop_gone_statistics(fc, "statistics") ||
		!drop_gone_statistics(fc, "partition-statistics"))
		return false;
	drop_gone_refs(fc);
	if (fc->current != SKADE_NO_SNAPSHOT && gone_now(fc, fc->current))
	{
		fc->main_removed = true;
		fc->current = SKADE_NO_SNAPSHOT;
	}
	keep_log(fc);
	fc->changes += fc->nnow_gone;
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

/* removed by this commit (by any of its removals)? */
static bool
is_gone(FastCommit *fc, int64 id)
{
	return fc->ngone > 0 &&
		bsearch(&id, fc->gone_ids, fc->ngone, sizeof(int64), cmp_int64) != NULL;
}

/* an id removed earlier in this commit, added again: no longer removed */
static void
ungone(FastCommit *fc, int64 id)
{
	int64	   *at = fc->ngone > 0 ?
		bsearch(&id, fc->gone_ids, fc->ngone, sizeof(int64), cmp_int64) : NULL;

	if (at == NULL)
		return;
	memmove(at, at + 1, sizeof(int64) * (fc->ngone - (at - fc->gone_ids) - 1));
	fc->ngone--;
}

/* removed by the removal being applied? */
static bool
gone_now(FastCommit *fc, int64 id)
{
	return fc->nnow_gone > 0 &&
		bsearch(&id, fc->now_gone, fc->nnow_gone, sizeof(int64), cmp_int64) != NULL;
}

/* does obj's snapshot-id survive the removal (jsonb: NOT snapshot-id IN gone)? */
static bool
survives(FastCommit *fc, JsonbContainer *obj)
{
	JsonbValue	sid;
	int64		id;

	if (!fast_jvalue(obj, "snapshot-id", &sid))
		return false;
	return sid.type != jbvNumeric || !numeric_id(&sid, &id) || !gone_now(fc, id);
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
 * fc->log_keep holds the base entries kept (of those an earlier removal
 * kept), in order, fc->new_log the kept entries of this commit's moves.
 */
static void
keep_log(FastCommit *fc)
{
	const SkadeMetaLogEntry *log = SkadeMetaLog(fc->base);
	int			n = fc->log_keep ? fc->nlog_keep : (int) fc->base->nlog;
	int		   *keep = palloc(sizeof(int) * (n + 1));
	int			nkeep = 0;
	List	   *new_log = NIL;
	ListCell   *lc;
	int			i;

	for (i = 0; i < n; i++)
	{
		int			j = fc->log_keep ? fc->log_keep[i] : i;

		if (gone_now(fc, log[j].snapshot_id))
			nkeep = 0;
		else if (fast_snapshot_known(fc, log[j].snapshot_id))
			keep[nkeep++] = j;
	}
	foreach(lc, fc->new_log)
	{
		FastLogEntry *le = lfirst(lc);

		if (gone_now(fc, le->id))
		{
			nkeep = 0;
			new_log = NIL;
		}
		else if (fast_snapshot_known(fc, le->id))
			new_log = lappend(new_log, le);
	}
	fc->log_keep = keep;
	fc->nlog_keep = nkeep;
	fc->new_log = new_log;
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
		return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL, "updates[%d].%s must be an array", fc->idx, field);
	if (have == NULL || !JsonbExtractScalar(&have->root, &cur))
		return false;
	if (jsonb_in_array(&cur, ids.val.binary.data))
		return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL, "updates[%d]: cannot remove the %s", fc->idx,
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
		return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL, "updates[%d].location must be a string", fc->idx);
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
		return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL, "updates[%d] needs a statistics file with snapshot-id, "
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
		return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL, "updates[%d].snapshot-id must be a number", fc->idx);
	if ((state = statistics_except(fc, list, &sid, &found)) == NULL)
		return false;
	if (!found)
		return true;
	fast_replace_member(fc, list, JsonbToCString(NULL, &JsonbValueToJsonb(
									pushJsonbValue(&state, WJB_END_ARRAY, NULL))->root, -1));
	fc->changes++;
	return true;
}

/* assign-uuid: a string; the table's own uuid (any case) is no change, another is refused */
static bool
same_uuid(FastCommit *fc, JsonbContainer *u)
{
	const char *have = SkadeMetaStr(fc->base, fc->base->table_uuid);
	char	   *uuid;

	if (!fast_jstring(u, "uuid", &uuid))
		return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL, "updates[%d].uuid must be a string", fc->idx);
	if (have == NULL)
		return false;			/* (no uuid: load_base hands such a base back) */
	if (strcmp(fast_lower(uuid), fast_lower(have)) != 0)
		return fast_refuse(fc, ERRCODE_INVALID_PARAMETER_VALUE, NULL,
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
	return fast_added(fc, id) != NULL ||
		(SkadeMetaSnapshotById(fc->base, id) != NULL && !is_gone(fc, id));
}

/* the snapshot this commit added with that id (NULL: none) */
FastAdded *
fast_added(FastCommit *fc, int64 id)
{
	ListCell   *lc;

	foreach(lc, fc->adds)
		if (((FastAdded *) lfirst(lc))->snap.snapshot_id == id)
			return lfirst(lc);
	return NULL;
}

/*
 * Snapshots this commit added and made main, then replaced as main in the
 * same commit, leave no snapshot-log entry (Java's intermediate snapshots,
 * as update_table trims them): when one of them is not the current
 * snapshot, the log keeps only the entries of the current snapshot and of
 * snapshots never made main after being added here.  false: a base entry
 * names such a snapshot (an id the table once had: the engine's).
 */
bool
fast_trim_log(FastCommit *fc)
{
	const SkadeMetaLogEntry *log = SkadeMetaLog(fc->base);
	List	   *kept = NIL;
	ListCell   *lc;
	bool		trim = false;
	uint32		i;

	foreach(lc, fc->new_log)
		if (((FastLogEntry *) lfirst(lc))->added && ((FastLogEntry *) lfirst(lc))->id != fc->current)
			trim = true;
	if (!trim)
		return true;
	for (i = 0; i < (fc->log_keep ? (uint32) fc->nlog_keep : fc->base->nlog); i++)
	{
		int64		id = log[fc->log_keep ? fc->log_keep[i] : (int) i].snapshot_id;

		if (id != fc->current && made_main(fc, id))
			return false;
	}
	foreach(lc, fc->new_log)
	{
		FastLogEntry *le = lfirst(lc);

		if (le->id == fc->current || !made_main(fc, le->id))
			kept = lappend(kept, le);
	}
	fc->new_log = kept;
	return true;
}

/* was this snapshot added by this commit and made main? */
static bool
made_main(FastCommit *fc, int64 id)
{
	ListCell   *lc;

	foreach(lc, fc->new_log)
		if (((FastLogEntry *) lfirst(lc))->added && ((FastLogEntry *) lfirst(lc))->id == id)
			return true;
	return false;
}

