/*-------------------------------------------------------------------------
 *
 * commit_fast.c
 *	  skade.update_table_fast(): the shapes of skade.update_table() that
 *	  this path has taken over from the PL/pgSQL engine -- appends, ref
 *	  moves and removals, property, location and statistics changes,
 *	  snapshot, spec and schema removals -- committed in C by splicing the
 *	  base metadata text, instead of converting megabytes of metadata to
 *	  jsonb, editing it and parsing the result again.  The engine's action
 *	  families move here one at a time (issue 30), each checked against
 *	  Java's TableMetadata.Builder by UpdateTableRandomTest with this path on
 *	  and off; skade.commit_stats() counts what each engine applied.
 *
 * Contract with update_table (PL/pgSQL, in the extension's script)
 *   - update_table calls this right after it has locked the table's row,
 *     with the locked base location.  A location back means the commit is
 *     done (or, with no change, that nothing was written); NULL means "not
 *     handled here": update_table goes on with its own engine, which then
 *     sees exactly the input this function saw.
 *   - Every case this path does not handle returns NULL before anything is
 *     written (an action input the engine reads by a cast this path does
 *     not reproduce, a base it cannot splice; requirements are all its
 *     own, commit_require.c).  A
 *     well-formed requirement that fails (the loser of a race, which holds
 *     the table's row lock meanwhile) is raised here, with the engine's
 *     SQLSTATE and message, in the engine's order once every requirement
 *     has a shape this path knows, so no other writer waits while the
 *     engine converts the whole base to jsonb; so is an update the engine
 *     refuses while this path applies the actions before it, and a result
 *     the engine's end checks refuse (commit_actions.c, refuse()).  One
 *     check of the engine is made only when the commit changes the current
 *     schema, default spec or sort order: that the defaults bind to the
 *     current schema (a base that fails it was written so by another
 *     client).  The errors of writing the file and of the compare-and-swap
 *     are raised by the same C code write_table_metadata and commit_table
 *     run.
 *   - A staged create (assert-create on a table that does not exist) comes
 *     as skade.create_table_fast() with update_table's empty table as its
 *     base: the same code applies its updates, always checks the defaults
 *     as Java's build() does, writes the first file (no metadata-log) and
 *     inserts the table (SkadeInsertTable); one without a current schema
 *     is left to the engine.
 *   - Handled: format-version 1, 2 and 3 tables (v3: add-snapshot's row
 *     lineage as the engine's; v1: its snapshots, "schema" and
 *     "partition-spec"); every requirement (commit_require.c); every update
 *     action (commit_actions.c), any number of them in any order, with the
 *     engine's refusals and end checks.  Members other
 *     than snapshots, logs, refs and properties that a commit changes are
 *     replaced whole by their jsonb text (Replaced).  The result is what the PL/pgSQL
 *     engine writes, member for member (same values, same rules: Java's
 *     TableMetadata.Builder as transcribed there), except the file's uuid,
 *     last-updated-ms and the layout of the text: members the commit does
 *     not change keep the base's bytes (pretty-printed or compact), changed
 *     ones are written as jsonb prints them.  skade.update_fast_path = off
 *     (guc.c) turns this path off, for verification.
 *
 * Files
 *   This file loads and scans the base, rebases a stale append (with
 *   commit_rebase.c), names and emits the new file and its summary; the
 *   requirements are checked in commit_require.c, the update actions and
 *   the checks on the whole result are in commit_actions.c (the schema,
 *   spec, sort-order and format actions in commit_schema.c);
 *   commit_fast_int.h is what they share.
 *
 * Why splicing is safe
 *   The base text comes from L0 (pinned, no copy): skade's reader parsed
 *   and validated it when it entered the cache.  One string- and
 *   escape-aware scan finds the top-level members' value spans and the
 *   elements of "snapshots", "snapshot-log" and "metadata-log"; any
 *   surprise (a duplicate or escaped top-level key, element counts that
 *   differ from the parsed summary, a \u0000 that jsonb could not hold)
 *   returns NULL.  Everything new is validated here to what skade's reader
 *   requires (integers where it reads integers), so the new text needs no
 *   second parse: its L0 summary is derived from the base summary plus the
 *   added snapshot (parsed alone, by metadata_json.c's own snapshot code),
 *   the new log entry and refs, and its refs-only variant is spliced the
 *   same way.
 *
 * Callers, privileges, locking
 *   EXECUTE is granted to skade_writer, as on write_table_metadata and
 *   commit_table, whose powers this has and no more: it creates one new
 *   metadata file and moves the pointer only by commit_table's
 *   compare-and-swap from base_location, so a direct call with another
 *   base fails with 40001 like any stale commit.  The row lock is the
 *   caller's (update_table's SELECT ... FOR UPDATE).  All memory lives in
 *   the "skade update fast" context, deleted before returning.
 *
 * A chain (SkadeFastChainBegin/Step/Finish: group commit, commit_group.c)
 *   applies commits one onto another with the same code: each step's base
 *   is the previous step's result, kept in memory ("skade group head", a
 *   flat SkadeMeta copy) and never written; a step needs only what it
 *   alone writes (a rebased manifest list), in its own "skade group step"
 *   context.  Finish writes the last result once, under the group's one new
 *   name, with the metadata-log of the real base, and moves the pointer
 *   from the locked base by the same compare-and-swap.  The caller (the
 *   group's leader) holds the row lock and checked update_table's and this
 *   function's EXECUTE for the role.
 *
 * IDENTIFICATION
 *	  src/writer/commit_fast.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "common/string.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/timestamp.h"

#include "catalog/commit_log.h"
#include "catalog/tables.h"
#include "writer/commit_fast.h"
#include "writer/commit_fast_int.h"
#include "writer/commit_rebase.h"
#include "writer/metadata_write.h"
#include "io/file_create.h"
#include "util/guc.h"
#include "util/gzip.h"
#include "cache/l0_cache.h"
#include "format/metadata_json.h"
#include "util/shmem.h"

PG_FUNCTION_INFO_V1(skade_update_table_fast);
PG_FUNCTION_INFO_V1(skade_create_table_fast);



/* commits applied in memory one onto another, written once (commit_group.c) */
struct SkadeFastChain
{
	SkadeRoute	route;
	const char *name;
	char	   *base_location;	/* the real base: the pointer, locked */
	SkadeMeta  *head;			/* the result so far (NULL: none yet) */
	MemoryContext head_cxt;		/* holds head */
	char	   *location;		/* the new file */
	bool		gzip;
	bool		rebase_on;		/* the table rebases stale appends (known
								 * after a step that was ours) */
	int			rebased;		/* of the steps applied */
};

typedef enum FastApply
{
	FAST_NOT_OURS,				/* nothing done: the engine's */
	FAST_NO_CHANGE,
	FAST_APPLIED				/* fc->result: the new summary and text */
} FastApply;

static char *fast_commit(FastCommit *fc, const char *ns, const char *name, const char *catalog,
						 Jsonb *requirements, Jsonb *updates);
static FastApply fast_apply(FastCommit *fc, const char *catalog, const char *ns,
							Jsonb *requirements, Jsonb *updates, SkadeMeta **result);
static bool load_base(FastCommit *fc);
static bool empty_base(FastCommit *fc);
static Datum fast_call(FunctionCallInfo fcinfo, bool create);
static bool scan_members(FastCommit *fc);
static const char *skip_ws(const char *p, const char *end);
static const char *skip_string(const char *p, const char *end);
static const char *skip_value(const char *p, const char *end);
static const char *scan_elements(const char *p, const char *end, Member *m);
static Jsonb *rebase_updates(FastCommit *fc, Jsonb *updates);
static bool new_location(FastCommit *fc);
static void emit_document(FastCommit *fc, StringInfo out, bool refs_only);
static void emit_member(FastCommit *fc, StringInfo out, const char *key, bool refs_only);
static bool keeps(FastCommit *fc, int64 id);
static SkadeMeta *new_summary(FastCommit *fc, StringInfo refs_text);
static void emit_text(StringInfo buf, void *arg);
static void collect_keep(FastCommit *fc, SkadeMetaRef *refs, int nrefs);
static int	new_refs(FastCommit *fc, SkadeMetaRef **refs, const char ***names);

/*
 * skade.update_table_fast(namespace, name, base_location, requirements,
 *						   updates, catalog) -> location, or NULL when the
 *						   commit is left to update_table's engine
 */
Datum
skade_update_table_fast(PG_FUNCTION_ARGS)
{
	return fast_call(fcinfo, false);
}

/*
 * skade.create_table_fast(namespace, name, base, updates, catalog)
 *		-> the new table's first metadata location, or NULL when
 *		update_table's engine makes the create
 *
 * A staged create committed (assert-create, a REST create transaction):
 * update_table hands its empty table (skade.empty_table_metadata(), which
 * checked the namespace, the name and the location) and the updates; they
 * are applied as onto any base, with the engine's end checks always made,
 * and the first file (no metadata-log) is written and the table inserted
 * as create_table_commit inserts it.  Granted as update_table_fast.
 */
Datum
skade_create_table_fast(PG_FUNCTION_ARGS)
{
	return fast_call(fcinfo, true);
}

/* either function: the commit in its own context, counted by the engine that makes it */
static Datum
fast_call(FunctionCallInfo fcinfo, bool create)
{
	MemoryContext caller = CurrentMemoryContext;
	MemoryContext cxt;
	FastCommit *fc;
	char	   *result;

	if (!skade_update_fast_path || skade_shared == NULL || XactReadOnly)
	{
		if (skade_shared)
			pg_atomic_fetch_add_u64(&skade_shared->update_engine, 1);
		PG_RETURN_NULL();
	}
	cxt = AllocSetContextCreate(caller, "skade update fast", ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(cxt);
	fc = palloc0(sizeof(FastCommit));
	if (create)
		fc->create_base = PG_GETARG_JSONB_P(2);
	else
		fc->base_location = TextDatumGetCString(PG_GETARG_DATUM(2));
	/* clock_timestamp() in ms, as update_table's now_ms */
	fc->now_ms = GetCurrentTimestamp() / 1000 +
		(int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY * 1000;
	result = fast_commit(fc, TextDatumGetCString(PG_GETARG_DATUM(0)),
						 TextDatumGetCString(PG_GETARG_DATUM(1)),
						 TextDatumGetCString(PG_GETARG_DATUM(create ? 4 : 5)),
						 create ? DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum("[]"))) :
						 PG_GETARG_JSONB_P(3),
						 PG_GETARG_JSONB_P(create ? 3 : 4));
	MemoryContextSwitchTo(caller);
	if (result)
		result = pstrdup(result);
	MemoryContextDelete(cxt);
	pg_atomic_fetch_add_u64(result ? &skade_shared->update_c : &skade_shared->update_engine, 1);
	if (result == NULL)
		PG_RETURN_NULL();
	PG_RETURN_TEXT_P(cstring_to_text(result));
}

/*
 * The base of a create: update_table's empty table as text, and its
 * summary made here (the reader's parse wants a current schema it does not
 * have yet).  Messages name the table's metadata folder.
 */
static bool
empty_base(FastCommit *fc)
{
	JsonbContainer *b = &fc->create_base->root;
	SkadeMeta	hdr;
	SkadeMetaParts parts;
	char	   *uuid;
	char	   *location;
	int64		fv;
	int64		ts;

	if (!JB_ROOT_IS_OBJECT(fc->create_base) || fast_jint(b, "format-version", &fv) != J_INT ||
		fv < 1 || fv > 3 || !fast_jstring(b, "table-uuid", &uuid) ||
		!fast_jstring(b, "location", &location) || fast_jint(b, "last-updated-ms", &ts) != J_INT)
		return false;
	fc->text = JsonbToCString(NULL, b, VARSIZE(fc->create_base));
	fc->len = strlen(fc->text);
	fc->base_location = psprintf("%s/metadata", location);
	memset(&hdr, 0, sizeof(hdr));
	hdr.format_version = (int32) fv;
	hdr.current_schema_id = -1;
	hdr.current_snapshot_id = SKADE_NO_SNAPSHOT;
	hdr.last_updated_ms = ts;
	memset(&parts, 0, sizeof(parts));
	parts.hdr = &hdr;
	parts.location = fc->base_location;
	parts.table_uuid = uuid;
	parts.table_location = location;
	parts.current_schema = "{}";
	parts.partition_specs = "[]";
	parts.text = fc->text;
	parts.text_len = fc->len;
	fc->base = SkadeMetaAssemble(&parts);
	/* (Java's build() checks the defaults of a new table whatever the updates did) */
	fc->bind_changed = true;
	return true;
}

/* The whole commit; NULL (nothing written) when it is not ours to make. */
static char *
fast_commit(FastCommit *fc, const char *ns, const char *name, const char *catalog,
			Jsonb *requirements, Jsonb *updates)
{
	SkadeMeta  *meta;
	char	   *real_path;

	switch (fast_apply(fc, catalog, ns, requirements, updates, &meta))
	{
		case FAST_NOT_OURS:
			return NULL;
		case FAST_NO_CHANGE:
			return pstrdup(fc->base_location);
		case FAST_APPLIED:
			break;
	}
	/* write it as write_table_metadata does, seed L0, compare-and-swap */
	if (fc->rebase)
		SkadeRebaseWrite(fc->rebase);
	real_path = SkadeMetadataWrite(&fc->route, fc->location,
								   ((char *) meta) + meta->json_off + VARHDRSZ,
								   meta->json_len, fc->gzip);
	L0Seed(fc->location, meta, real_path);
	if (fc->create_base)
		SkadeInsertTable(catalog, ns, name, fc->location, SKADE_OP_CREATE);
	else
		SkadeCommitTable(catalog, ns, name, fc->base_location, fc->location);
	if (fc->rebase)
		pg_atomic_fetch_add_u64(&skade_shared->rebased, 1);
	return fc->location;
}

/*
 * The commit applied in memory: its new summary with the text made in
 * place (nothing written, the rebased list aside: the caller writes it).
 */
static FastApply
fast_apply(FastCommit *fc, const char *catalog, const char *ns, Jsonb *requirements,
		   Jsonb *updates, SkadeMeta **result)
{
	StringInfoData refs_text;

	if (!JB_ROOT_IS_ARRAY(requirements) || JB_ROOT_IS_SCALAR(requirements) ||
		!JB_ROOT_IS_ARRAY(updates) || JB_ROOT_IS_SCALAR(updates))
		return FAST_NOT_OURS;
	fc->route.catalog = catalog;
	fc->route.ns = ns;
	if (!load_base(fc) || !fast_check_requirements(fc, requirements))
		return FAST_NOT_OURS;
	/* a stale branch: rebased, or its failure (the engine's first error) */
	if (fc->stale_msg && (updates = rebase_updates(fc, updates)) == NULL)
		fast_requirement_failed(fc, NULL);
	/*
	 * (a commit that changes nothing writes nothing and is not checked whole;
	 * a create writes, and one without a current schema is the engine's)
	 */
	if (!fast_apply_updates(fc, updates) || (fc->create_base && fc->current_schema_id < 0) ||
		((fc->changes > 0 || fc->create_base) && !fast_result_valid(fc)))
	{
		if (fc->stale_msg)
			fast_requirement_failed(fc, NULL);
		return FAST_NOT_OURS;
	}
	if (fc->changes == 0 && !fc->create_base)
		return FAST_NO_CHANGE;
	if (fc->location == NULL && !new_location(fc))
		return FAST_NOT_OURS;

	/* the new summary, its text (made in place) and refs variant */
	initStringInfo(&refs_text);
	*result = new_summary(fc, &refs_text);
	return FAST_APPLIED;
}

/* ---------------------------------------------------------------- a chain */

/*
 * SkadeFastChainBegin
 *		A chain of commits onto base_location, the table's pointer, whose row
 *		the caller has locked.  Allocated in the current context.
 */
SkadeFastChain *
SkadeFastChainBegin(const char *catalog, const char *ns, const char *name,
					const char *base_location)
{
	SkadeFastChain *ch = palloc0(sizeof(SkadeFastChain));

	ch->route.catalog = pstrdup(catalog);
	ch->route.ns = pstrdup(ns);
	ch->name = pstrdup(name);
	ch->base_location = pstrdup(base_location);
	return ch;
}

/*
 * SkadeFastChainStep
 *		Apply one commit onto the chain's head, in memory (a rebased list is
 *		written, for the next step reads it).  false: not ours (the chain is
 *		unchanged; so is it when this raises, the commit's own error).  A
 *		commit that changes nothing is applied.
 */
bool
SkadeFastChainStep(SkadeFastChain *ch, Jsonb *requirements, Jsonb *updates)
{
	MemoryContext caller = CurrentMemoryContext;
	MemoryContext cxt;
	FastCommit *fc;
	SkadeMeta  *meta = NULL;
	FastApply	r;

	if (!skade_update_fast_path || skade_shared == NULL || XactReadOnly)
		return false;
	cxt = AllocSetContextCreate(caller, "skade group step", ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(cxt);
	fc = palloc0(sizeof(FastCommit));
	fc->base_location = ch->head ? ch->location : ch->base_location;
	fc->head = ch->head;
	fc->chain_location = ch->location;
	fc->chain_gzip = ch->gzip;
	fc->now_ms = GetCurrentTimestamp() / 1000 +
		(int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY * 1000;
	r = fast_apply(fc, ch->route.catalog, ch->route.ns, requirements, updates, &meta);
	if (r != FAST_NOT_OURS)
		ch->rebase_on = fc->rebase_on;
	if (r == FAST_APPLIED)
	{
		MemoryContext head_cxt;

		if (fc->rebase)
			SkadeRebaseWrite(fc->rebase);
		/* the new head, kept; the old one and the step's memory go */
		head_cxt = AllocSetContextCreate(caller, "skade group head", ALLOCSET_DEFAULT_SIZES);
		if (ch->location == NULL)
		{
			ch->location = MemoryContextStrdup(caller, fc->location);
			ch->gzip = fc->gzip;
		}
		ch->head = MemoryContextAlloc(head_cxt, meta->total_size);
		memcpy(ch->head, meta, meta->total_size);
		if (ch->head_cxt)
			MemoryContextDelete(ch->head_cxt);
		ch->head_cxt = head_cxt;
		if (fc->rebase)
			ch->rebased++;
	}
	MemoryContextSwitchTo(caller);
	MemoryContextDelete(cxt);
	if (r != FAST_NOT_OURS)
		pg_atomic_fetch_add_u64(&skade_shared->update_c, 1);
	return r != FAST_NOT_OURS;
}

/* Does the chain's table rebase stale appends (after a step that was ours)? */
bool
SkadeFastChainRebases(const SkadeFastChain *ch)
{
	return ch->rebase_on;
}

/*
 * SkadeFastChainFinish
 *		Write the chain's head once and move the pointer once; its location
 *		(the base's when no step changed anything).
 */
char *
SkadeFastChainFinish(SkadeFastChain *ch)
{
	char	   *real_path;
	SkadeMeta  *meta;

	if (ch->head == NULL)
		return ch->base_location;
	real_path = SkadeMetadataWrite(&ch->route, ch->location,
								   ((char *) ch->head) + ch->head->json_off + VARHDRSZ,
								   ch->head->json_len, ch->gzip);
	meta = palloc(ch->head->total_size);
	memcpy(meta, ch->head, ch->head->total_size);
	L0Seed(ch->location, meta, real_path);
	SkadeCommitTable(ch->route.catalog, ch->route.ns, ch->name, ch->base_location, ch->location);
	if (ch->rebased > 0)
		pg_atomic_fetch_add_u64(&skade_shared->rebased, ch->rebased);
	return ch->location;
}

/* ---------------------------------------------------------------- the base */

/* The base text and summary from L0; false unless a v2 table we can splice. */
static bool
load_base(FastCommit *fc)
{
	struct varlena *json;
	L0Result	r;
	Member	   *m;
	const char *arrays[3] = {"snapshots", "snapshot-log", "metadata-log"};
	int			i;

	if (fc->head)
	{
		/* a group's head: made by this path, in memory */
		fc->base = (SkadeMeta *) fc->head;
		fc->text = ((const char *) fc->head) + fc->head->json_off + VARHDRSZ;
		fc->len = fc->head->json_len;
	}
	else if (fc->create_base)
	{
		if (!empty_base(fc))
			return false;
	}
	else
	{
		/* the text first: it fills the entry (and pins it) */
		json = L0FetchJsonPinned(&fc->route, fc->base_location, false);
		fc->text = VARDATA_ANY(json);
		fc->len = VARSIZE_ANY_EXHDR(json);
		L0Fetch(&fc->route, fc->base_location, L0_WANT_SUMMARY, &r);
		fc->base = r.summary;
	}
	if (fc->base->format_version < 1 || fc->base->format_version > 3 || fc->base->table_uuid == 0)
		return false;
	if (!scan_members(fc))
		return false;
	/* v3: the row lineage counter, an integer the engine reads (v2: kept by an upgrade) */
	fc->format_version = fc->base->format_version;
	fc->current_schema_id = fc->base->current_schema_id;
	fc->last_added_order = -1;
	fc->last_added_spec = -1;
	fc->last_added_schema = -1;
	if ((fc->format_version == 3 || fast_member(fc, "next-row-id") != NULL) &&
		(!fast_member_int(fc, "next-row-id", &fc->next_row_id) || fc->next_row_id < 0))
		return false;
	/* the arrays we edit are arrays, and the summary counted what we found */
	for (i = 0; i < 3; i++)
		if ((m = fast_member(fc, arrays[i])) != NULL && m->elems == NULL)
			return false;
	m = fast_member(fc, "snapshots");
	if ((m ? m->nelems : 0) != (int) fc->base->nsnapshots)
		return false;
	m = fast_member(fc, "snapshot-log");
	if ((m ? m->nelems : 0) != (int) fc->base->nlog)
		return false;
	/* the objects we edit, as jsonb (small) */
	if ((m = fast_member(fc, "refs")) != NULL)
		fc->refs = fast_jsonb_of_span(m->value);
	if ((m = fast_member(fc, "properties")) != NULL)
	{
		fc->props = fast_jsonb_of_span(m->value);
		if (!JB_ROOT_IS_OBJECT(fc->props))
			return false;
	}
	fc->last_seq = fc->base->last_sequence_number;
	fc->current = fc->base->current_snapshot_id;
	fc->rebase_on = SkadeRebaseEnabled(fc->props);
	return true;
}

/*
 * One pass over the base text: the top-level members' spans, and the
 * elements of the three arrays a commit edits.  false on any surprise.
 */
static bool
scan_members(FastCommit *fc)
{
	const char *end = fc->text + fc->len;
	const char *p = skip_ws(fc->text, end);
	int			i;

	if (p >= end || *p++ != '{')
		return false;
	/* jsonb cannot hold \u0000: the PL/pgSQL engine refuses such a text */
	if (memmem(fc->text, fc->len, "\\u0000", 6) != NULL)
		return false;
	p = skip_ws(p, end);
	if (p < end && *p == '}')
		return true;
	while (p < end)
	{
		Member	   *m;
		const char *k;

		if (fc->nmembers == MAX_MEMBERS || *p != '"')
			return false;
		m = &fc->members[fc->nmembers++];
		k = skip_string(p, end);
		if (k == NULL || memchr(p, '\\', k - p) != NULL)
			return false;
		m->key.p = p + 1;
		m->key.len = (int) (k - p) - 2;
		for (i = 0; i < fc->nmembers - 1; i++)
			if (fc->members[i].key.len == m->key.len &&
				memcmp(fc->members[i].key.p, m->key.p, m->key.len) == 0)
				return false;
		p = skip_ws(k, end);
		if (p >= end || *p++ != ':')
			return false;
		p = skip_ws(p, end);
		m->value.p = p;
		if (*p == '[' && (fast_member(fc, "snapshots") == m || fast_member(fc, "snapshot-log") == m ||
						  fast_member(fc, "metadata-log") == m))
			p = scan_elements(p, end, m);
		else
			p = skip_value(p, end);
		if (p == NULL)
			return false;
		m->value.len = (int) (p - m->value.p);
		p = skip_ws(p, end);
		if (p < end && *p == ',')
			p = skip_ws(p + 1, end);
		else if (p < end && *p == '}')
			return true;
		else
			return false;
	}
	return false;
}

static const char *
skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
		p++;
	return p;
}

/*
 * p at a '"': just past the closing quote (NULL if none).  memchr finds
 * the candidates; a quote ends the string unless an odd run of
 * backslashes precedes it.
 */
static const char *
skip_string(const char *p, const char *end)
{
	const char *start = p + 1;

	for (p = start; p < end; p++)
	{
		const char *b;

		p = memchr(p, '"', end - p);
		if (p == NULL)
			return NULL;
		for (b = p; b > start && b[-1] == '\\'; b--)
			;
		if ((p - b) % 2 == 0)
			return p + 1;
	}
	return NULL;
}

/* just past the value at p; NULL if it does not end */
static const char *
skip_value(const char *p, const char *end)
{
	int			depth = 0;

	if (p >= end)
		return NULL;
	if (*p == '"')
		return skip_string(p, end);
	if (*p != '{' && *p != '[')
	{
		while (p < end && !strchr(",}] \t\r\n", *p))
			p++;
		return p;
	}
	for (; p < end; p++)
	{
		if (*p == '"')
		{
			p = skip_string(p, end);
			if (p == NULL)
				return NULL;
			p--;
		}
		else if (*p == '{' || *p == '[')
			depth++;
		else if ((*p == '}' || *p == ']') && --depth == 0)
			return p + 1;
	}
	return NULL;
}

/* p at '[': the elements into m; just past the ']' (NULL on a surprise) */
static const char *
scan_elements(const char *p, const char *end, Member *m)
{
	int			cap = 64;

	m->elems = palloc(sizeof(Span) * cap);
	m->nelems = 0;
	p = skip_ws(p + 1, end);
	if (p < end && *p == ']')
		return p + 1;
	while (p < end)
	{
		const char *e = skip_value(p, end);

		if (e == NULL)
			return NULL;
		if (m->nelems == cap)
		{
			cap *= 2;
			m->elems = repalloc(m->elems, sizeof(Span) * cap);
		}
		m->elems[m->nelems].p = p;
		m->elems[m->nelems++].len = (int) (e - p);
		p = skip_ws(e, end);
		if (p < end && *p == ']')
			return p + 1;
		if (p >= end || *p != ',')
			return NULL;
		p = skip_ws(p + 1, end);
	}
	return NULL;
}

Member *
fast_member(FastCommit *fc, const char *key)
{
	int			len = strlen(key);
	int			i;

	for (i = 0; i < fc->nmembers; i++)
		if (fc->members[i].key.len == len && memcmp(fc->members[i].key.p, key, len) == 0)
			return &fc->members[i];
	return NULL;
}

/* a top-level integer member (false if absent or not an integer literal) */
bool
fast_member_int(FastCommit *fc, const char *key, int64 *value)
{
	Member	   *m = fast_member(fc, key);

	return m != NULL && SkadeIntText(m->value.p, m->value.len, value);
}

/* ---------------------------------------------------------------- rebase */

/*
 * The updates of a commit whose only failing requirement is the branch
 * held back, rebased onto the branch's head (commit_rebase.c): one
 * add-snapshot of an append, then the set-snapshot-ref of that branch to
 * it; the snapshot with its new parent, sequence number, manifest list
 * and summary.  NULL if they are not such an append (nothing written).
 */
static Jsonb *
rebase_updates(FastCommit *fc, Jsonb *updates)
{
	JsonbValue *e[2];
	JsonbValue	v;
	JsonbContainer *ref;
	Jsonb	   *snap;
	SkadeAppend a;
	char	   *str;
	int64		id;
	JInt		parent;
	SkadeRebase *rb;
	StringInfoData buf;
	int			i;

	if (JsonContainerSize(&updates->root) != 2)
		return NULL;
	for (i = 0; i < 2; i++)
	{
		e[i] = getIthJsonbValueFromContainer(&updates->root, i);
		if (e[i]->type != jbvBinary || !JsonContainerIsObject(e[i]->val.binary.data) ||
			!fast_jstring(e[i]->val.binary.data, "action", &str) ||
			strcmp(fast_lower(str), i == 0 ? "add-snapshot" : "set-snapshot-ref") != 0)
			return NULL;
	}
	/* the branch moved to the added snapshot */
	ref = e[1]->val.binary.data;
	if (!fast_jvalue(e[0]->val.binary.data, "snapshot", &v) || v.type != jbvBinary ||
		!JsonContainerIsObject(v.val.binary.data))
		return NULL;
	snap = DatumGetJsonbP(DirectFunctionCall1(jsonb_strip_nulls,
											  JsonbPGetDatum(JsonbValueToJsonb(&v))));
	if (fast_jint(&snap->root, "snapshot-id", &a.snapshot_id) != J_INT ||
		!fast_jstring(ref, "ref-name", &str) || strcmp(str, fc->stale_ref) != 0 ||
		!fast_jstring(ref, "type", &str) || strcmp(fast_lower(str), "branch") != 0 ||
		fast_jint(ref, "snapshot-id", &id) != J_INT || id != a.snapshot_id)
		return NULL;
	/* the snapshot, as the client made it */
	parent = fast_jint(&snap->root, "parent-snapshot-id", &a.parent_id);
	if (fast_jint(&snap->root, "sequence-number", &a.seq) != J_INT ||
		!fast_jstring(&snap->root, "manifest-list", &str) ||
		!fast_jobject(&snap->root, "summary", &a.summary) ||
		!fast_jstring(a.summary, "operation", (char **) &a.operation) || parent == J_OTHER)
		return NULL;
	a.manifest_list = str;
	a.has_parent = parent == J_INT;
	if (!new_location(fc))
		return NULL;
	rb = SkadeRebasePlan(&fc->route, fc->base, fc->stale_have, fc->next_row_id, &a,
						 pnstrdup(fc->location, strrchr(fc->location, '/') - fc->location));
	if (rb == NULL)
		return NULL;
	fc->rebase = rb;

	/* [{"action": "add-snapshot", "snapshot": the rebased one}, the ref] */
	initStringInfo(&buf);
	appendStringInfo(&buf, "{\"parent-snapshot-id\": " INT64_FORMAT ", \"sequence-number\": "
					 INT64_FORMAT ", \"manifest-list\": ", rb->parent_id, rb->seq);
	escape_json(&buf, rb->manifest_list);
	appendStringInfo(&buf, ", \"summary\": %s", rb->summary);
	if (rb->format_version >= 3)
		appendStringInfo(&buf, ", \"first-row-id\": " INT64_FORMAT ", \"added-rows\": " INT64_FORMAT,
						 rb->first_row_id, rb->added_rows);
	appendStringInfoChar(&buf, '}');
	snap = DatumGetJsonbP(DirectFunctionCall2(jsonb_concat, JsonbPGetDatum(snap),
											  DirectFunctionCall1(jsonb_in,
																  CStringGetDatum(buf.data))));
	resetStringInfo(&buf);
	appendStringInfoString(&buf, "[{\"action\": \"add-snapshot\", \"snapshot\": ");
	appendStringInfoString(&buf, JsonbToCString(NULL, &snap->root, VARSIZE(snap)));
	appendStringInfoString(&buf, "}, ");
	appendStringInfoString(&buf, JsonbToCString(NULL, ref, -1));
	appendStringInfoChar(&buf, ']');
	return DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(buf.data)));
}

/* ---------------------------------------------------------------- the new file */

/*
 * Its name and format, from the new properties, as update_table makes
 * them: next version %05d, a random uuid, write.metadata.path (else
 * <location>/metadata), gzip for write.metadata.compression-codec; and how
 * many previous versions the metadata log keeps.
 */
static bool
new_location(FastCommit *fc)
{
	const char *last = fc->create_base ? NULL : strrchr(fc->base_location, '/');
	const char *props[3] = {"write.metadata.previous-versions-max", "write.metadata.path",
	"write.metadata.compression-codec"};
	char	   *val[3] = {NULL, NULL, NULL};
	int64		n;
	int			digits = 0;
	int			i;

	for (i = 0; i < 3; i++)
	{
		JsonbValue	v;

		if (fc->props && fast_jvalue(&fc->props->root, props[i], &v) && v.type != jbvNull)
		{
			if (v.type != jbvString)
				return false;
			val[i] = pnstrdup(v.val.string.val, v.val.string.len);
		}
	}
	fc->maxlog = 100;
	if (val[0] && val[0][0] != '\0')
	{
		if (strlen(val[0]) > 9 || !SkadeIntText(val[0], strlen(val[0]), &n))
			return false;
		fc->maxlog = (int) Max(1, n);
	}
	/* (a version out of range: the general path reports it) */
	while (last && last[1 + digits] >= '0' && last[1 + digits] <= '9')
		digits++;
	if (digits > 18)
		return false;
	if (fc->chain_location)
	{
		/* a later step of a group: the group's one new file */
		fc->location = pstrdup(fc->chain_location);
		fc->gzip = fc->chain_gzip;
		return true;
	}
	fc->location = SkadeNextMetadataLocation(fc->create_base ? NULL : fc->base_location,
											 fc->table_location ? fc->table_location :
											 SkadeMetaStr(fc->base, fc->base->table_location),
											 val[1], val[2], &fc->gzip);
	return true;
}

/*
 * The new document (refs_only: its refs-only variant, as metadata_json.c
 * makes it: only the snapshots a ref names, the snapshot log whole): the
 * base's members in order, changed ones replaced, new ones last.
 */
static void
emit_document(FastCommit *fc, StringInfo out, bool refs_only)
{
	static const char *const added[] = {"snapshots", "snapshot-log", "refs",
		"current-snapshot-id", "last-sequence-number", "last-updated-ms", "metadata-log",
	"properties", "next-row-id"};
	int			i;

	appendStringInfoChar(out, '{');
	for (i = 0; i < fc->nmembers; i++)
	{
		char	   *key = pnstrdup(fc->members[i].key.p, fc->members[i].key.len);

		if (i > 0)
			appendStringInfoString(out, ", ");
		emit_member(fc, out, key, refs_only);
		pfree(key);
	}
	for (i = 0; i < lengthof(added); i++)
	{
		if (fast_member(fc, added[i]) != NULL)
			continue;
		if ((i == 0 && fc->adds == NIL && fc->log_keep == NULL) ||
			(i == 1 && !fc->main_set && fc->log_keep == NULL) ||
			(i == 2 && !fc->refs_changed) ||
			(i == 3 && !fc->main_set && !fc->main_removed) || (i == 4 && !fc->seq_set) ||
			(i == 7 && !fc->props_changed) || (i == 8 && !fc->upgraded))
			continue;
		if (out->len > 1)
			appendStringInfoString(out, ", ");
		emit_member(fc, out, added[i], refs_only);
	}
	for (i = 0; i < fc->nrepl; i++)
	{
		if (fast_member(fc, fc->repl[i].key) != NULL)
			continue;
		if (out->len > 1)
			appendStringInfoString(out, ", ");
		emit_member(fc, out, fc->repl[i].key, refs_only);
	}
	appendStringInfoChar(out, '}');
}

/* "key": value, the value as the commit leaves it */
static void
emit_member(FastCommit *fc, StringInfo out, const char *key, bool refs_only)
{
	Member	   *m = fast_member(fc, key);
	int			i;
	bool		first = true;
	ListCell   *lc;

	escape_json(out, key);
	appendStringInfoString(out, ": ");
	if (fast_replaced(fc, key) != NULL)
		appendStringInfoString(out, fast_replaced(fc, key));
	else if (strcmp(key, "snapshots") == 0 && (fc->adds != NIL || refs_only || fc->log_keep != NULL))
	{
		const SkadeMetaSnapshot *s = SkadeMetaSnapshots(fc->base);

		appendStringInfoChar(out, '[');
		for (i = 0; m && i < m->nelems; i++)
			if ((!refs_only || keeps(fc, s[i].snapshot_id)) && !(fc->gone && fc->gone[i]))
			{
				if (!first)
					appendStringInfoString(out, ", ");
				appendBinaryStringInfo(out, m->elems[i].p, m->elems[i].len);
				first = false;
			}
		foreach(lc, fc->adds)
		{
			FastAdded  *a = lfirst(lc);

			if (refs_only && !keeps(fc, a->snap.snapshot_id))
				continue;
			appendStringInfo(out, "%s%s", first ? "" : ", ", a->text);
			first = false;
		}
		appendStringInfoChar(out, ']');
	}
	else if (strcmp(key, "snapshot-log") == 0 && (fc->log_keep != NULL || fc->main_set))
	{
		/* the base's entries (what removals kept), the moves' (whole in the refs variant too) */
		int			n = fc->log_keep ? fc->nlog_keep : (m ? m->nelems : 0);

		appendStringInfoChar(out, '[');
		for (i = 0; i < n; i++)
		{
			Span	   *e = &m->elems[fc->log_keep ? fc->log_keep[i] : i];

			if (!first)
				appendStringInfoString(out, ", ");
			appendBinaryStringInfo(out, e->p, e->len);
			first = false;
		}
		foreach(lc, fc->new_log)
		{
			FastLogEntry *le = lfirst(lc);

			appendStringInfo(out, "%s{\"timestamp-ms\": " INT64_FORMAT ", \"snapshot-id\": " INT64_FORMAT "}",
							 first ? "" : ", ", le->ts, le->id);
			first = false;
		}
		appendStringInfoChar(out, ']');
	}
	else if (strcmp(key, "refs") == 0 && fc->refs_changed)
		appendStringInfoString(out, JsonbToCString(NULL, &fc->refs->root, VARSIZE(fc->refs)));
	else if (strcmp(key, "properties") == 0 && fc->props_changed)
		appendStringInfoString(out, JsonbToCString(NULL, &fc->props->root, VARSIZE(fc->props)));
	else if (strcmp(key, "current-snapshot-id") == 0 && (fc->main_set || fc->main_removed))
	{
		if (fc->current == SKADE_NO_SNAPSHOT)
			appendStringInfoString(out, fc->format_version >= 3 ? "null" : "-1");
		else
			appendStringInfo(out, INT64_FORMAT, fc->current);
	}
	else if (strcmp(key, "next-row-id") == 0 && (fc->added_any || fc->upgraded) && fc->format_version == 3)
		appendStringInfo(out, INT64_FORMAT, fc->next_row_id);
	else if (strcmp(key, "last-sequence-number") == 0 && fc->seq_set)
		appendStringInfo(out, INT64_FORMAT, fc->last_seq);
	else if (strcmp(key, "last-updated-ms") == 0)
		appendStringInfo(out, INT64_FORMAT, fc->now_ms);
	else if (strcmp(key, "metadata-log") == 0)
	{
		/* the base's entries and the base itself, the newest maxlog of them */
		int			n = m ? m->nelems : 0;

		if (fc->create_base)
		{
			/* a new table's first file */
			appendStringInfoString(out, "[]");
			return;
		}
		if (fc->head)
		{
			/* a group's head was never written: the log is the group's base's */
			appendBinaryStringInfo(out, m ? m->value.p : "[]", m ? m->value.len : 2);
			return;
		}
		appendStringInfoChar(out, '[');
		for (i = Max(0, n + 1 - fc->maxlog); i < n; i++)
		{
			appendBinaryStringInfo(out, m->elems[i].p, m->elems[i].len);
			appendStringInfoString(out, ", ");
		}
		appendStringInfo(out, "{\"timestamp-ms\": " INT64_FORMAT ", \"metadata-file\": ",
						 fc->base->last_updated_ms);
		escape_json(out, fc->base_location);
		appendStringInfoString(out, "}]");
	}
	else
		appendBinaryStringInfo(out, m->value.p, m->value.len);
}

static bool
keeps(FastCommit *fc, int64 id)
{
	int			i;

	for (i = 0; i < fc->nkeep; i++)
		if (fc->keep[i] == id)
			return true;
	return false;
}

/*
 * The new file's L0 summary, from the base's and what the commit changed,
 * with the new text made in place; its refs variant is spliced into
 * refs_text when refs drop snapshots.
 */
static SkadeMeta *
new_summary(FastCommit *fc, StringInfo refs_text)
{
	const SkadeMeta *b = fc->base;
	SkadeMeta	hdr = *b;
	SkadeMetaParts parts;
	SkadeMetaSnapshot *snaps;
	SkadeMetaLogEntry *log;
	const char **op;
	const char **ml;
	const char **sum;
	SkadeMetaRef *refs;
	const char **names;
	uint32		i;
	ListCell   *lc;

	snaps = palloc(sizeof(SkadeMetaSnapshot) * (b->nsnapshots + list_length(fc->adds) + 1));
	op = palloc(sizeof(char *) * (b->nsnapshots + list_length(fc->adds) + 1));
	ml = palloc(sizeof(char *) * (b->nsnapshots + list_length(fc->adds) + 1));
	sum = palloc(sizeof(char *) * (b->nsnapshots + list_length(fc->adds) + 1));
	hdr.nsnapshots = 0;
	for (i = 0; i < b->nsnapshots; i++)
	{
		const SkadeMetaSnapshot *s = &SkadeMetaSnapshots(b)[i];

		if (fc->gone && fc->gone[i])
			continue;
		snaps[hdr.nsnapshots] = *s;
		op[hdr.nsnapshots] = SkadeMetaStr(b, s->operation);
		ml[hdr.nsnapshots] = SkadeMetaStr(b, s->manifest_list);
		sum[hdr.nsnapshots++] = SkadeMetaStr(b, s->summary);
	}
	foreach(lc, fc->adds)
	{
		FastAdded  *a = lfirst(lc);

		snaps[hdr.nsnapshots] = a->snap;
		op[hdr.nsnapshots] = a->op;
		ml[hdr.nsnapshots] = a->ml;
		sum[hdr.nsnapshots++] = a->summary;
	}
	log = palloc(sizeof(SkadeMetaLogEntry) * (b->nlog + list_length(fc->new_log) + 1));
	hdr.nlog = 0;
	for (i = 0; i < (fc->log_keep ? (uint32) fc->nlog_keep : b->nlog); i++)
		log[hdr.nlog++] = SkadeMetaLog(b)[fc->log_keep ? fc->log_keep[i] : i];
	foreach(lc, fc->new_log)
	{
		log[hdr.nlog].timestamp_ms = ((FastLogEntry *) lfirst(lc))->ts;
		log[hdr.nlog++].snapshot_id = ((FastLogEntry *) lfirst(lc))->id;
	}
	hdr.nrefs = new_refs(fc, &refs, &names);
	hdr.current_snapshot_id = fc->current;
	hdr.last_updated_ms = fc->now_ms;
	hdr.last_sequence_number = fc->last_seq;
	hdr.format_version = fc->format_version;

	/* the refs variant, when the refs leave snapshots out */
	collect_keep(fc, refs, hdr.nrefs);
	if ((uint32) fc->nkeep < hdr.nsnapshots)
		emit_document(fc, refs_text, true);

	memset(&parts, 0, sizeof(parts));
	parts.hdr = &hdr;
	parts.snapshots = snaps;
	parts.snap_op = op;
	parts.snap_ml = ml;
	parts.snap_summary = sum;
	parts.log = log;
	parts.refs = refs;
	parts.ref_names = names;
	parts.location = fc->location;
	parts.table_uuid = SkadeMetaStr(b, b->table_uuid);
	parts.table_location = fc->table_location ? fc->table_location :
		SkadeMetaStr(b, b->table_location);
	parts.current_schema = SkadeMetaStr(b, b->current_schema);
	if (fc->current_schema_id != b->current_schema_id || fast_replaced(fc, "schemas"))
	{
		/* the current schema as the parser records it, from the new "schemas" */
		const char *schemas = fast_replaced(fc, "schemas");
		Member	   *m = fast_member(fc, "schemas");

		if (schemas == NULL)
			schemas = pnstrdup(m->value.p, m->value.len);
		parts.current_schema = SkadeSchemaText(schemas, strlen(schemas),
											   (int32) fc->current_schema_id, fc->location);
		if (parts.current_schema == NULL)
			elog(ERROR, "the current schema of \"%s\" is gone", fc->location);
		hdr.current_schema_id = (int32) fc->current_schema_id;
	}
	parts.partition_specs = fc->specs_text ? fc->specs_text : SkadeMetaStr(b, b->partition_specs);
	parts.text_len = fc->len + 4096;
	parts.emit_text = emit_text;
	parts.emit_arg = fc;
	parts.refs_text = refs_text->len > 0 ? refs_text->data : NULL;
	parts.refs_text_len = refs_text->len;
	return SkadeMetaAssemble(&parts);
}

/* SkadeMetaAssemble's emit_text: the new document */
static void
emit_text(StringInfo buf, void *arg)
{
	emit_document((FastCommit *) arg, buf, false);
}

/* the distinct snapshot ids the refs name */
static void
collect_keep(FastCommit *fc, SkadeMetaRef *refs, int nrefs)
{
	int			i;

	fc->keep = palloc(sizeof(int64) * (nrefs + 1));
	fc->nkeep = 0;
	for (i = 0; i < nrefs; i++)
		if (!keeps(fc, refs[i].snapshot_id))
			fc->keep[fc->nkeep++] = refs[i].snapshot_id;
}

/* the summary's refs: the base's, or read from the new refs object */
static int
new_refs(FastCommit *fc, SkadeMetaRef **refs, const char ***names)
{
	const SkadeMeta *b = fc->base;
	JsonbIterator *it;
	JsonbIteratorToken tok;
	JsonbValue	v;
	int			n = 0;
	uint32		i;

	if (!fc->refs_changed)
	{
		*refs = palloc(sizeof(SkadeMetaRef) * (b->nrefs + 1));
		*names = palloc(sizeof(char *) * (b->nrefs + 1));
		memcpy(*refs, SkadeMetaRefs(b), sizeof(SkadeMetaRef) * b->nrefs);
		for (i = 0; i < b->nrefs; i++)
			(*names)[i] = SkadeMetaStr(b, (*refs)[i].name);
		return b->nrefs;
	}
	*refs = palloc0(sizeof(SkadeMetaRef) * (JsonContainerSize(&fc->refs->root) + 1));
	*names = palloc(sizeof(char *) * (JsonContainerSize(&fc->refs->root) + 1));
	it = JsonbIteratorInit(&fc->refs->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		SkadeMetaRef *r = &(*refs)[n];
		JsonbContainer *o;
		char	   *type = NULL;
		int64		x;

		if (tok == WJB_KEY)
			(*names)[n] = pnstrdup(v.val.string.val, v.val.string.len);
		if (tok != WJB_VALUE)
			continue;
		/* read and checked: the base's by skade's reader, the new ones above */
		o = v.val.binary.data;
		fast_jint(o, "snapshot-id", &r->snapshot_id);
		fast_jstring(o, "type", &type);
		r->is_tag = type && strcmp(type, "tag") == 0;
		r->max_ref_age_ms = fast_jint(o, "max-ref-age-ms", &x) == J_INT ? x : -1;
		r->max_snapshot_age_ms = fast_jint(o, "max-snapshot-age-ms", &x) == J_INT ? x : -1;
		r->min_snapshots_to_keep = fast_jint(o, "min-snapshots-to-keep", &x) == J_INT ? (int32) x : -1;
		n++;
	}
	return n;
}

/* ---------------------------------------------------------------- JSON helpers */

/* obj[key] as an integer the way skade's reader reads one */
JInt
fast_jint(JsonbContainer *obj, const char *key, int64 *value)
{
	JsonbValue	v;
	char	   *s;

	if (!fast_jvalue(obj, key, &v) || v.type == jbvNull)
		return J_ABSENT;
	if (v.type != jbvNumeric)
		return J_OTHER;
	s = DatumGetCString(DirectFunctionCall1(numeric_out, NumericGetDatum(v.val.numeric)));
	return SkadeIntText(s, strlen(s), value) ? J_INT : J_OTHER;
}

/* obj[key] if it is a string */
bool
fast_jstring(JsonbContainer *obj, const char *key, char **value)
{
	JsonbValue	v;

	if (!fast_jvalue(obj, key, &v) || v.type != jbvString)
		return false;
	*value = pnstrdup(v.val.string.val, v.val.string.len);
	return true;
}

bool
fast_jvalue(JsonbContainer *obj, const char *key, JsonbValue *v)
{
	return JsonContainerIsObject(obj) &&
		getKeyJsonValueFromContainer(obj, key, strlen(key), v) != NULL;
}

/* obj[key] if it is an object */
bool
fast_jobject(JsonbContainer *obj, const char *key, JsonbContainer **value)
{
	JsonbValue	v;

	if (!fast_jvalue(obj, key, &v) || v.type != jbvBinary || !JsonContainerIsObject(v.val.binary.data))
		return false;
	*value = v.val.binary.data;
	return true;
}

/* a member's value as jsonb */
Jsonb *
fast_jsonb_of_span(Span s)
{
	return DatumGetJsonbP(DirectFunctionCall1(jsonb_in,
											  CStringGetDatum(pnstrdup(s.p, s.len))));
}

/* {key: value}, or {} without a key */
Jsonb *
fast_jsonb_object1(const char *key, JsonbValue *value)
{
	JsonbParseState *state = NULL;
	JsonbValue	k;

	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	if (key)
	{
		k.type = jbvString;
		k.val.string.val = (char *) key;
		k.val.string.len = strlen(key);
		pushJsonbValue(&state, WJB_KEY, &k);
		pushJsonbValue(&state, WJB_VALUE, value);
	}
	return JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_OBJECT, NULL));
}

/* a JSON array of strings as text[] (*ok false if one is not a string) */
Datum
fast_text_array_of(JsonbContainer *arr, bool *ok)
{
	int			n = JsonContainerSize(arr);
	Datum	   *d = palloc(sizeof(Datum) * (n + 1));
	int			i;

	*ok = true;
	for (i = 0; i < n; i++)
	{
		JsonbValue *e = getIthJsonbValueFromContainer(arr, i);

		if (e->type != jbvString)
		{
			*ok = false;
			return (Datum) 0;
		}
		d[i] = PointerGetDatum(cstring_to_text_with_len(e->val.string.val, e->val.string.len));
	}
	return PointerGetDatum(construct_array(d, n, TEXTOID, -1, false, TYPALIGN_INT));
}
