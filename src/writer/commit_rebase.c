/*-------------------------------------------------------------------------
 *
 * commit_rebase.c
 *	  A stale fast append rebased onto the head of its branch: what an
 *	  Iceberg client's own retry of an append does (re-read the table, put
 *	  its new manifests in front of the head's, renumber), done by the
 *	  server under the table's row lock instead of a 409 and a round trip.
 *
 * When (the caller, commit_fast.c, has checked the rest)
 *   The table (format v2 or v3) has skade.rebase-appends=true (or the setting
 *   skade.rebase_appends as its default); the commit's only failing
 *   requirement is assert-ref-snapshot-id of the branch it moves; its
 *   updates are one add-snapshot of operation "append" and the
 *   set-snapshot-ref of that branch to it.  Then SkadeRebasePlan checks
 *   that it is a fast append of data files, read from the files:
 *     - the client's parent (the snapshot its requirement names, none when
 *       it appended to a branch it saw absent) and the branch's head are
 *       snapshots of the table;
 *     - the client's manifest list is its parent's manifests (the same
 *       paths, none missing, none added) plus the manifests its snapshot
 *       added (added_snapshot_id = its id);
 *     - each added manifest holds data (content 0), counts no existing or
 *       deleted file or row, and every entry in it is ADDED with its
 *       snapshot id, data and file sequence numbers inherited (null) or
 *       the snapshot's own id -- so the new sequence number is what its
 *       files get (a file with an explicit old number would fall under a
 *       concurrent delete it was not written against).
 *   Anything else, and files the client names that cannot be read (missing,
 *   outside the roots: SkadeProbeLocation, which never raises for those):
 *   NULL, and the caller raises the stale requirement as without rebase.
 *   A file that is there but malformed is an error of its own (22SK1).
 *
 * What changes
 *   The snapshot keeps its id, timestamp, schema and operation; its parent
 *   becomes the head, its sequence number the table's next, its manifest
 *   list a new one (snap-<id>-rebased-<random>.avro beside the metadata):
 *   the added manifests (sequence number and minimum = the new one), then
 *   the head's manifests in their order, as Java's FastAppend orders them.
 *   In v3 its first-row-id becomes the table's next-row-id and its
 *   added-rows what the new list assigns (the added manifests' rows, and
 *   those of any head manifest without a first_row_id, as Java's V3Writer
 *   counts them); its files carry no first_row_id of their own (checked), so
 *   they inherit their new ranges.
 *   Summary totals (total-*) are the head's plus what the snapshot added
 *   (the client's total minus its parent's); a total the head or the
 *   parent lacks is left out, as Java's SnapshotSummary leaves it out.
 *   The client's own manifest list is not referenced (Java's client
 *   deletes it after the commit, and keeps the manifests it finds in the
 *   committed snapshot).
 *
 * Locking, memory: the caller holds the table's row lock; everything is
 * allocated in the caller's context ("skade update fast").  The list is
 * written (SkadeCreateFile: create-only, fsync'ed, journalled) only by
 * SkadeRebaseWrite, after every check of the commit has passed.
 *
 * The memo (a group's chain, commit_group.c): between SkadeRebaseMemoBegin
 * and SkadeRebaseMemoEnd, the parent's and head's lists are remembered by
 * path in the memo's context -- the lists read, and the ones written here
 * (the next member's head) -- so the members of a group, which share their
 * parent and each rebase onto the one before, read neither again.  A list
 * file is never changed once written (its name is new, create-only), and
 * an entry reads back as it was written (SkadeManifestListRead of
 * put_list_entry's fields), so the memo answers what a read would.  The
 * caller gets copies of the entries (the rebase renumbers its own).
 *
 * IDENTIFICATION
 *	  src/writer/commit_rebase.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/int.h"
#include "common/string.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"

#include "format/avro_reader.h"
#include "io/file_access.h"
#include "util/guc.h"
#include "writer/avro_out.h"
#include "writer/commit_rebase.h"
#include "writer/manifest_list.h"

#define REBASE_PROPERTY "skade.rebase-appends"

/* lists by path while a chain runs (the memo, above) */
typedef struct MemoList
{
	char	   *path;
	List	   *entries;		/* of SkadeListEntry, in memo_cxt */
} MemoList;

static MemoryContext memo_cxt = NULL;
static List *memo = NIL;		/* of MemoList, in memo_cxt */

static List *snapshot_list(const SkadeRoute *route, const SkadeMeta *base,
						   const SkadeMetaSnapshot *s);
static void memo_put(const char *path, List *entries);
static SkadeListEntry *entry_copy(const SkadeListEntry *le, bool deep);
static bool same_paths(List *a, List *b);
static int	path_cmp(const void *a, const void *b);
static bool added_only(const SkadeRoute *route, const SkadeListEntry *le, int64 id, int fv);
static bool entry_added(const SkadeAvroValue *rec, int64 id, int fv);
static bool row_ranges(SkadeRebase *rb, int64 next_row_id);
static char *new_summary(const SkadeMeta *base, const SkadeMetaSnapshot *head,
						 const SkadeMetaSnapshot *parent, JsonbContainer *summary);
static Jsonb *summary_of(const SkadeMeta *base, const SkadeMetaSnapshot *s);
static bool summary_total(Jsonb *summary, const char *key, int64 *total);

/* Whether the table (its properties, an object or NULL) rebases appends. */
bool
SkadeRebaseEnabled(Jsonb *properties)
{
	JsonbValue	v;
	bool		on;

	if (properties != NULL && JsonContainerIsObject(&properties->root) &&
		getKeyJsonValueFromContainer(&properties->root, REBASE_PROPERTY,
									 strlen(REBASE_PROPERTY), &v) != NULL &&
		v.type == jbvString &&
		parse_bool_with_len(v.val.string.val, v.val.string.len, &on))
		return on;
	return skade_rebase_appends;
}

/*
 * The rebase of append a onto snapshot head_id of base (format v2), its
 * list to go in dir; NULL if a is not a fast append of data files onto
 * what it names (nothing written either way).
 */
SkadeRebase *
SkadeRebasePlan(const SkadeRoute *route, const SkadeMeta *base, int64 head_id, int64 next_row_id,
				const SkadeAppend *a, const char *dir)
{
	const SkadeMetaSnapshot *head = SkadeMetaSnapshotById(base, head_id);
	const SkadeMetaSnapshot *parent = NULL;
	List	   *client;
	List	   *added = NIL;
	List	   *carried = NIL;
	ListCell   *lc;
	SkadeRebase *rb;
	char	   *summary;
	uint8		rnd[8];

	if ((base->format_version != 2 && base->format_version != 3) || head == NULL ||
		strcmp(a->operation, "append") != 0)
		return NULL;
	if (a->has_parent && (parent = SkadeMetaSnapshotById(base, a->parent_id)) == NULL)
		return NULL;
	/* the summary first: it needs no file */
	if ((summary = new_summary(base, head, parent, a->summary)) == NULL)
		return NULL;

	/* files the client names that cannot be read: not rebased (a 409, as without) */
	if (SkadeProbeLocation(a->manifest_list) != SKADE_READ_OK)
		return NULL;
	client = SkadeManifestListRead(route, a->manifest_list, a->snapshot_id, a->seq);
	foreach(lc, client)
	{
		SkadeListEntry *le = lfirst(lc);

		if (le->added_snapshot_id == a->snapshot_id)
			added = lappend(added, le);
		else
			carried = lappend(carried, le);
	}
	if (!same_paths(carried, parent ? snapshot_list(route, base, parent) : NIL))
		return NULL;
	foreach(lc, added)
		if (!added_only(route, lfirst(lc), a->snapshot_id, base->format_version))
			return NULL;

	rb = palloc0(sizeof(SkadeRebase));
	rb->route = route;
	rb->snapshot_id = a->snapshot_id;
	rb->parent_id = head_id;
	rb->format_version = base->format_version;
	rb->seq = base->last_sequence_number + 1;
	foreach(lc, added)
	{
		SkadeListEntry *le = lfirst(lc);

		le->seq = le->min_seq = rb->seq;
		le->has_first_row_id = false;	/* v3: assigned anew from the head's next-row-id */
	}
	rb->entries = list_concat(added, snapshot_list(route, base, head));
	if (rb->format_version >= 3 && !row_ranges(rb, next_row_id))
		return NULL;
	if (!pg_strong_random(rnd, sizeof(rnd)))
		elog(ERROR, "could not generate a random file name");
	rb->manifest_list = psprintf("%s/snap-%lld-rebased-%02x%02x%02x%02x%02x%02x%02x%02x.avro",
								 dir, (long long) a->snapshot_id, rnd[0], rnd[1], rnd[2],
								 rnd[3], rnd[4], rnd[5], rnd[6], rnd[7]);
	rb->summary = summary;
	return rb;
}

/* The rebased snapshot's manifest list, created (fsync'ed, journalled). */
void
SkadeRebaseWrite(const SkadeRebase *rb)
{
	SkadeListHeader h;

	h.format_version = rb->format_version;
	h.snapshot_id = rb->snapshot_id;
	h.has_parent = true;
	h.parent_id = rb->parent_id;
	h.seq = rb->seq;
	h.first_row_id = rb->first_row_id;
	SkadeManifestListWrite(rb->route, rb->manifest_list, &h, rb->entries, NULL);
	/* as written (v3: with the row ids the write assigned) */
	memo_put(rb->manifest_list, rb->entries);
}

/*
 * SkadeRebaseMemoBegin
 *		Remember lists in cxt until SkadeRebaseMemoEnd (which the caller
 *		must reach on every path, errors included, before cxt goes).
 */
void
SkadeRebaseMemoBegin(MemoryContext cxt)
{
	memo_cxt = cxt;
	memo = NIL;
}

void
SkadeRebaseMemoEnd(void)
{
	memo_cxt = NULL;
	memo = NIL;
}

/* remember path's entries (copied into the memo) */
static void
memo_put(const char *path, List *entries)
{
	MemoryContext old;
	MemoList   *m;
	ListCell   *lc;

	if (memo_cxt == NULL)
		return;
	old = MemoryContextSwitchTo(memo_cxt);
	m = palloc0(sizeof(MemoList));
	m->path = pstrdup(path);
	foreach(lc, entries)
		m->entries = lappend(m->entries, entry_copy(lfirst(lc), true));
	memo = lappend(memo, m);
	MemoryContextSwitchTo(old);
}

/* le copied in the current context: its strings too (deep), or shared */
static SkadeListEntry *
entry_copy(const SkadeListEntry *le, bool deep)
{
	SkadeListEntry *c = palloc(sizeof(SkadeListEntry));
	int			k;

	*c = *le;
	c->chosen = false;
	if (!deep)
		return c;
	c->path = pstrdup(le->path);
	if (le->key_metadata)
		c->key_metadata = SkadeBytesDup(le->key_metadata, le->key_metadata_len);
	if (le->nsummaries > 0)
	{
		c->summaries = palloc0(sizeof(SkadeListSummary) * (le->nsummaries + 1));
		for (k = 0; k < le->nsummaries; k++)
		{
			c->summaries[k] = le->summaries[k];
			if (le->summaries[k].lower)
				c->summaries[k].lower = SkadeBytesDup(le->summaries[k].lower, le->summaries[k].lower_len);
			if (le->summaries[k].upper)
				c->summaries[k].upper = SkadeBytesDup(le->summaries[k].upper, le->summaries[k].upper_len);
		}
	}
	return c;
}

/* the entries of snapshot s's manifest list (none without one) */
static List *
snapshot_list(const SkadeRoute *route, const SkadeMeta *base, const SkadeMetaSnapshot *s)
{
	const char *ml = SkadeMetaStr(base, s->manifest_list);
	List	   *entries;
	List	   *out = NIL;
	ListCell   *lc;

	if (ml == NULL)
		return NIL;
	if (memo_cxt == NULL)
		return SkadeManifestListRead(route, ml, s->snapshot_id, s->sequence_number);
	foreach(lc, memo)
	{
		MemoList   *m = lfirst(lc);
		ListCell   *e;

		if (strcmp(m->path, ml) != 0)
			continue;
		foreach(e, m->entries)
			out = lappend(out, entry_copy(lfirst(e), false));
		return out;
	}
	entries = SkadeManifestListRead(route, ml, s->snapshot_id, s->sequence_number);
	memo_put(ml, entries);
	return entries;
}

/* the same manifest paths, as many times each */
static bool
same_paths(List *a, List *b)
{
	int			n = list_length(a);
	const char **pa;
	const char **pb;
	int			i;

	if (n != list_length(b))
		return false;
	if (n == 0)
		return true;
	pa = palloc(sizeof(char *) * n);
	pb = palloc(sizeof(char *) * n);
	for (i = 0; i < n; i++)
	{
		pa[i] = ((SkadeListEntry *) list_nth(a, i))->path;
		pb[i] = ((SkadeListEntry *) list_nth(b, i))->path;
	}
	qsort(pa, n, sizeof(char *), path_cmp);
	qsort(pb, n, sizeof(char *), path_cmp);
	for (i = 0; i < n; i++)
		if (strcmp(pa[i], pb[i]) != 0)
			return false;
	return true;
}

static int
path_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *) a, *(const char *const *) b);
}

/*
 * A data manifest the append wrote: nothing existing or deleted counted,
 * and every entry ADDED by snapshot id with inherited sequence numbers.
 */
static bool
added_only(const SkadeRoute *route, const SkadeListEntry *le, int64 id, int fv)
{
	char	   *real_path;
	StringInfo	bytes;
	SkadeAvroFile *f;
	const SkadeAvroValue *rec;
	bool		ok = true;
	int			k;

	if (le->content != 0 || SkadeProbeLocation(le->path) != SKADE_READ_OK)
		return false;
	for (k = 1; k < SKADE_LIST_NCOUNTS; k++)
		if (k != 3 && (!le->has_count[k] || le->count[k] != 0))
			return false;
	bytes = SkadeReadLocation(route, le->path, &real_path);
	f = SkadeAvroOpenBytes(le->path, bytes, real_path, SKADE_AVRO_MANIFEST, le->length);
	while (ok && (rec = SkadeAvroNext(f)) != NULL)
	{
		CHECK_FOR_INTERRUPTS();
		ok = entry_added(rec, id, fv);
	}
	SkadeAvroClose(f);
	return ok;
}

/*
 * status ADDED, snapshot id null or id, sequence numbers null, a data file
 * (in v3 without a first_row_id of its own: it inherits its manifest's)
 */
static bool
entry_added(const SkadeAvroValue *rec, int64 id, int fv)
{
	SkadeAvroValue *df;
	int64		v;

	if (!SkadeAvroLong(rec, "status", &v) || v != 1)
		return false;
	if (SkadeAvroLong(rec, "snapshot_id", &v) && v != id)
		return false;
	if (SkadeAvroLong(rec, "sequence_number", &v) || SkadeAvroLong(rec, "file_sequence_number", &v))
		return false;
	if (!SkadeAvroField(rec, "data_file", &df))
		return false;
	if (fv >= 3 && SkadeAvroLong(df, "first_row_id", &v))
		return false;
	return !SkadeAvroLong(df, "content", &v) || v == 0;
}

/*
 * v3 row lineage as the new list assigns it (SkadeManifestListWrite, Java's
 * V3Writer): from the table's next-row-id, each data manifest without a
 * first_row_id (the added ones, and any the head's list has without one)
 * gets a range of its added and existing rows; false if one lacks them.
 */
static bool
row_ranges(SkadeRebase *rb, int64 next_row_id)
{
	ListCell   *lc;
	int64		rows = 0;

	rb->first_row_id = next_row_id;
	foreach(lc, rb->entries)
	{
		SkadeListEntry *le = lfirst(lc);

		if (le->content != 0 || le->has_first_row_id)
			continue;
		if (!le->has_count[3] || !le->has_count[4] || le->count[3] < 0 || le->count[4] < 0 ||
			pg_add_s64_overflow(rows, le->count[3], &rows) ||
			pg_add_s64_overflow(rows, le->count[4], &rows))
			return false;
	}
	rb->added_rows = rows;
	return true;
}

/*
 * The client's summary with its totals re-derived: the head's total plus
 * the client's minus its parent's (its own when it had no parent); keys
 * other than total-* as sent.  NULL if a value is not a string.
 */
static char *
new_summary(const SkadeMeta *base, const SkadeMetaSnapshot *head, const SkadeMetaSnapshot *parent,
			JsonbContainer *summary)
{
	JsonbIterator *it = JsonbIteratorInit(summary);
	JsonbIteratorToken tok;
	JsonbValue	v;
	StringInfoData out;
	char	   *key = NULL;
	bool		first = true;
	Jsonb	   *head_summary = summary_of(base, head);
	Jsonb	   *parent_summary = parent ? summary_of(base, parent) : NULL;

	initStringInfo(&out);
	appendStringInfoChar(&out, '{');
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		int64		mine;
		int64		theirs;
		int64		before = 0;
		char	   *value;

		if (tok == WJB_KEY)
		{
			key = pnstrdup(v.val.string.val, v.val.string.len);
			continue;
		}
		if (tok != WJB_VALUE)
			continue;
		if (v.type != jbvString)
			return NULL;		/* a summary is a map of strings */
		value = pnstrdup(v.val.string.val, v.val.string.len);
		if (strncmp(key, "total-", 6) == 0)
		{
			if (!SkadeIntText(value, strlen(value), &mine) ||
				!summary_total(head_summary, key, &theirs) ||
				(parent && !summary_total(parent_summary, key, &before)) ||
				pg_sub_s64_overflow(mine, before, &mine) ||
				pg_add_s64_overflow(theirs, mine, &mine))
				continue;		/* left out */
			value = psprintf(INT64_FORMAT, mine);
		}
		if (!first)
			appendStringInfoString(&out, ", ");
		escape_json(&out, key);
		appendStringInfoString(&out, ": ");
		escape_json(&out, value);
		first = false;
	}
	appendStringInfoChar(&out, '}');
	return out.data;
}

/* snapshot s's summary (an object, or NULL), parsed once per rebase */
static Jsonb *
summary_of(const SkadeMeta *base, const SkadeMetaSnapshot *s)
{
	const char *text = SkadeMetaStr(base, s->summary);
	Jsonb	   *j;

	if (text == NULL)
		return NULL;
	j = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(text)));
	return JsonContainerIsObject(&j->root) ? j : NULL;
}

/* summary[key], an integer string */
static bool
summary_total(Jsonb *summary, const char *key, int64 *total)
{
	JsonbValue	v;

	if (summary == NULL ||
		getKeyJsonValueFromContainer(&summary->root, key, strlen(key), &v) == NULL ||
		v.type != jbvString)
		return false;
	return SkadeIntText(v.val.string.val, v.val.string.len, total);
}

/* -?[0-9]+ within int64 (what JSON integers jansson reads look like) */
bool
SkadeIntText(const char *s, int len, int64 *value)
{
	char		buf[24];
	char	   *end;
	int			i = (len > 0 && s[0] == '-') ? 1 : 0;

	if (len - i < 1 || len > 20)
		return false;
	for (; i < len; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	*value = strtoi64(buf, &end, 10);
	return errno == 0 && *end == '\0';
}
