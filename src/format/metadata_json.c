/*-------------------------------------------------------------------------
 *
 * metadata_json.c
 *	  Parse Iceberg table metadata JSON with jansson into a flat SkadeMeta
 *	  summary, validating what the spec requires.  With json_alloc.c (its
 *	  allocator) and json_compact.c (its writer), the only file that calls
 *	  jansson.
 *
 * Produced per file, once: format version (1, 2, 3), table uuid, location,
 * current schema, current snapshot, snapshots (id, parent, sequence number,
 * timestamp, operation, manifest list, summary), snapshot log, refs, and
 * last-updated; plus the file's own text and a "refs" variant of it that
 * keeps only the snapshots that a branch or tag points at (Iceberg's
 * suppressHistoricalSnapshots), the snapshot log kept whole as Java keeps it.
 * Without "refs" in the file, "main" is the current snapshot (spec).
 *
 * Parsed once, the rest derived from the values: the refs variant is
 * jansson's compact text of the document without the dropped snapshots
 * (json_compact.c writes exactly what json_dumps would, straight from the
 * parsed values, skipping them), each summary's text is written into one
 * buffer, and the strings of the result are read in place from jansson's
 * values until the result is laid out.
 *
 * Errors name the file and the field: malformed JSON (22032, with line and
 * column), a missing or mistyped required field (22SK1), an unknown format
 * version (0A000), a parse past its memory budget (54000).  jansson's own
 * nesting limit stops deep nesting.
 *
 * Memory: each parse runs in its own "skade metadata parse" context,
 * deleted when done or released with its parent on ERROR, so a failed
 * parse leaks nothing; jansson's values of a metadata file live in an arena
 * of that context (json_alloc.c), never freed one by one.  The result is
 * one palloc'd chunk in the caller's context.  Schema columns parsed are
 * also remembered per backend (see columns_memo).
 *
 * IDENTIFICATION
 *	  src/format/metadata_json.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include <jansson.h>

#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/pg_list.h"
#include "utils/json.h"
#include "utils/memutils.h"

#include "util/guc.h"
#include "format/json_alloc.h"
#include "format/json_compact.h"
#include "format/metadata_json.h"
#include "util/skade_limits.h"


/*
 * A backend's memo of parsed schema columns (SkadeParseSchemaColumns), in
 * "skade schema columns" under TopMemoryContext: at most COLUMNS_MEMO_MAX
 * schema texts of at most COLUMNS_MEMO_BYTES together, never freed (their
 * strings are handed out).
 */
#define COLUMNS_MEMO_MAX	32
#define COLUMNS_MEMO_BYTES	(4 * 1024 * 1024)
typedef struct ColumnsMemo
{
	char	   *text;
	SkadeColumn *columns;
	int			ncolumns;
} ColumnsMemo;
static MemoryContext columns_memo_cxt = NULL;
static List *columns_memo = NIL;
static Size columns_memo_bytes = 0;

static SkadeColumn *columns_memo_get(const char *schema_json, int *ncolumns);
static void columns_memo_put(const char *schema_json, const SkadeColumn *columns, int ncolumns);
static SkadeColumn *parse_schema_columns(const char *schema_json, const char *what,
										 int *ncolumns);

/*
 * jansson's values of a metadata file, per byte of its text: the size of
 * the arena's first block (generated files of 1,000 and 10,000 snapshots,
 * indented, take 4.2; what a block leaves untouched costs no memory)
 */
#define SKADE_VALUES_PER_TEXT_BYTE 5

/* limits on a schema's structs (Iceberg's own are far smaller) */
#define SKADE_MAX_STRUCT_DEPTH	64
#define SKADE_MAX_COLUMN_NAME	8192

/* the bytes a JSON string escapes: control characters, '"' and '\\' */
static const bool json_escaped[256] = {
	[0x00] = true, [0x01] = true, [0x02] = true, [0x03] = true, [0x04] = true, [0x05] = true,
	[0x06] = true, [0x07] = true, [0x08] = true, [0x09] = true, [0x0a] = true, [0x0b] = true,
	[0x0c] = true, [0x0d] = true, [0x0e] = true, [0x0f] = true, [0x10] = true, [0x11] = true,
	[0x12] = true, [0x13] = true, [0x14] = true, [0x15] = true, [0x16] = true, [0x17] = true,
	[0x18] = true, [0x19] = true, [0x1a] = true, [0x1b] = true, [0x1c] = true, [0x1d] = true,
	[0x1e] = true, [0x1f] = true, ['"'] = true, ['\\'] = true
};

/* parse state: where errors point */
typedef struct ParseCtx
{
	const char *location;
	int			format_version;
	/* a path starting with "." (or empty) is relative to array[index] */
	const char *array;
	int64		index;			/* -1: relative to array itself */
} ParseCtx;

/* what the parse of one metadata file collects for SkadeMetaAssemble */
typedef struct MetaBuild
{
	ParseCtx	ctx;
	const char *text;
	size_t		len;
	json_t	   *root;
	json_t	   *snaps;			/* "snapshots", or NULL */
	SkadeMeta	hdr;			/* scalars and counts */
	SkadeMetaSnapshot *snapshots;
	const char **snap_op;
	const char **snap_ml;
	const char **snap_summary;
	StringInfoData summaries;	/* every summary's text, NUL-terminated */
	SkadeMetaLogEntry *log;
	SkadeMetaRef *refs;
	const char **ref_names;
	const char *uuid;
	const char *table_location;
	char	   *schema_text;
	char	   *specs_text;
	Size		strings_len;	/* bytes of the strings above, for the layout */
	StringInfoData refs_text;	/* the refs variant; len 0: the text itself */
} MetaBuild;

static json_t *load_budgeted(const char *text, size_t len, size_t flags, json_error_t *err);
static json_t *load_part(const char *text, size_t len, const char *what, const char *location);
static SkadeMeta *parse_metadata(MetaBuild *b, MemoryContext caller);
static void parse_header(MetaBuild *b);
static void parse_current_schema(MetaBuild *b);
static void parse_specs(MetaBuild *b);
static void parse_snapshots(MetaBuild *b);
static void parse_log(MetaBuild *b);
static void parse_refs(MetaBuild *b);
static void write_refs_variant(MetaBuild *b);
pg_noreturn static void field_error(ParseCtx *ctx, const char *path, const char *problem);
static json_t *get_field(ParseCtx *ctx, json_t *obj, const char *key,
						 const char *path, bool required, json_type type);
static int64 get_int(ParseCtx *ctx, json_t *obj, const char *key, const char *path,
					 bool required, int64 dflt);
static const char *get_str(ParseCtx *ctx, json_t *obj, const char *key,
						   const char *path, bool required);
static char *dump_compact(json_t *value);
static void append_summary(StringInfo b, json_t *summary);
static bool append_json_string(StringInfo b, const char *s, size_t len);
static uint32 add_string(StringInfo buf, const char *s);
static uint32 add_bytes(StringInfo buf, const char *s, size_t len);
static uint32 add_array(StringInfo buf, const void *data, size_t size);
static uint32 add_varlena(StringInfo buf, const char *s, size_t len);
static bool id_in(int64 id, const int64 *ids, int n);
static void add_columns(json_t *fields, const char *prefix, List **out, const char *what,
						int depth);
static void set_bound_width(SkadeColumn *c);
static void parse_snapshot(ParseCtx *ctx, json_t *s, SkadeMetaSnapshot *snap,
						   const char **op, const char **ml, StringInfo summaries,
						   int *summary_off);

/*
 * SkadeJsonInit
 *		Route jansson's allocations through json_alloc.c.  Called from _PG_init.
 */
void
SkadeJsonInit(void)
{
	SkadeJsonAllocInit();
}

/*
 * SkadeParseMetadata
 *		Parse and validate the metadata text read from location.
 */
SkadeMeta *
SkadeParseMetadata(const char *text, size_t len, const char *location)
{
	MemoryContext caller = CurrentMemoryContext;
	MemoryContext parse_cxt;
	MetaBuild  *b;
	SkadeMeta  *result;

	parse_cxt = AllocSetContextCreate(caller, "skade metadata parse",
									  ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(parse_cxt);
	b = palloc0(sizeof(MetaBuild));
	b->ctx.location = location;
	b->text = text;
	b->len = len;
	SkadeJsonArenaBegin(len * SKADE_VALUES_PER_TEXT_BYTE);
	PG_TRY();
	{
		result = parse_metadata(b, caller);
	}
	PG_FINALLY();
	{
		SkadeJsonArenaEnd();
	}
	PG_END_TRY();
	MemoryContextSwitchTo(caller);
	MemoryContextDelete(parse_cxt);
	return result;
}

/* the parse itself, in the parse context; the result is laid out in caller */
static SkadeMeta *
parse_metadata(MetaBuild *b, MemoryContext caller)
{
	json_error_t jerr;
	bool		over_budget;
	SkadeMetaParts parts;

	b->root = SkadeJsonLoad(b->text, b->len, 0, &jerr, &over_budget);
	if (b->root == NULL && over_budget)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("metadata file \"%s\" takes too much memory to parse", b->ctx.location),
				 errdetail("Parsed, it needs more than %zu bytes (%d times skade.max_metadata_size).",
						   SkadeJsonParseBudget(), SKADE_PARSE_BUDGET_FACTOR),
				 errhint("Raise skade.max_metadata_size if the file is legitimate.")));
	if (b->root == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_JSON_TEXT),
				 errmsg("metadata file \"%s\" is not valid JSON", b->ctx.location),
				 errdetail("%s at line %d, column %d.", jerr.text, jerr.line, jerr.column)));
	if (!json_is_object(b->root))
		field_error(&b->ctx, "(root)", "must be a JSON object");

	parse_header(b);
	parse_current_schema(b);
	parse_specs(b);
	parse_snapshots(b);
	parse_log(b);
	parse_refs(b);
	write_refs_variant(b);

	/* lay out the flat result */
	memset(&parts, 0, sizeof(parts));
	parts.hdr = &b->hdr;
	parts.snapshots = b->snapshots;
	parts.snap_op = b->snap_op;
	parts.snap_ml = b->snap_ml;
	parts.snap_summary = b->snap_summary;
	parts.log = b->log;
	parts.refs = b->refs;
	parts.ref_names = b->ref_names;
	parts.location = b->ctx.location;
	parts.table_uuid = b->uuid;
	parts.table_location = b->table_location;
	parts.current_schema = b->schema_text;
	parts.partition_specs = b->specs_text;
	parts.text = b->text;
	parts.text_len = b->len;
	parts.refs_text = b->refs_text.len > 0 ? b->refs_text.data : NULL;
	parts.refs_text_len = b->refs_text.len;
	parts.strings_len = b->strings_len;
	MemoryContextSwitchTo(caller);
	return SkadeMetaAssemble(&parts);
}

/* format version, uuid, location, timestamps */
static void
parse_header(MetaBuild *b)
{
	ParseCtx   *ctx = &b->ctx;
	json_t	   *root = b->root;

	b->hdr.format_version = (int32) get_int(ctx, root, "format-version", "format-version", true, 0);
	if (b->hdr.format_version < 1 || b->hdr.format_version > 3)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("metadata file \"%s\" has unsupported format version %d",
						ctx->location, b->hdr.format_version),
				 errdetail("skade reads Iceberg table format versions 1, 2 and 3.")));
	ctx->format_version = b->hdr.format_version;

	b->uuid = get_str(ctx, root, "table-uuid", "table-uuid", b->hdr.format_version >= 2);
	b->table_location = get_str(ctx, root, "location", "location", true);
	b->hdr.last_updated_ms = get_int(ctx, root, "last-updated-ms", "last-updated-ms", true, 0);
	b->hdr.last_sequence_number = get_int(ctx, root, "last-sequence-number",
										  "last-sequence-number", b->hdr.format_version >= 2, 0);

}

/* current schema: schemas + current-schema-id (v2+, optional in v1), else v1 "schema" */
static void
parse_current_schema(MetaBuild *b)
{
	ParseCtx   *ctx = &b->ctx;
	json_t	   *schemas = get_field(ctx, b->root, "schemas", "schemas",
									b->hdr.format_version >= 2, JSON_ARRAY);
	json_t	   *schema = NULL;
	size_t		i;

	if (schemas)
	{
		b->hdr.current_schema_id = (int32) get_int(ctx, b->root, "current-schema-id",
												   "current-schema-id", true, 0);
		for (i = 0; i < json_array_size(schemas); i++)
		{
			json_t	   *s = json_array_get(schemas, i);
			char		path[64];

			snprintf(path, sizeof(path), "schemas[%zu]", i);
			if (!json_is_object(s))
				field_error(ctx, path, "must be an object");
			snprintf(path, sizeof(path), "schemas[%zu].schema-id", i);
			if (get_int(ctx, s, "schema-id", path, true, 0) == b->hdr.current_schema_id)
				schema = s;
		}
		if (schema == NULL)
			field_error(ctx, "current-schema-id", "names no schema in \"schemas\"");
	}
	else
	{
		schema = get_field(ctx, b->root, "schema", "schema", true, JSON_OBJECT);
		b->hdr.current_schema_id = (int32) get_int(ctx, schema, "schema-id", "schema.schema-id",
												   false, 0);
	}
	b->schema_text = dump_compact(schema);
	b->strings_len += strlen(b->schema_text) + 1;
}

/* partition specs (v1: the single "partition-spec" is spec 0); optional */
static void
parse_specs(MetaBuild *b)
{
	json_t	   *specs = json_object_get(b->root, "partition-specs");
	json_t	   *v1spec = json_object_get(b->root, "partition-spec");

	if (json_is_array(specs))
		b->specs_text = dump_compact(specs);
	else if (json_is_array(v1spec))
	{
		/* as json_dumps writes [{"spec-id": 0, "fields": v1spec}] */
		StringInfoData s;

		initStringInfo(&s);
		appendStringInfoString(&s, "[{\"spec-id\":0,\"fields\":");
		SkadeJsonAppendCompact(&s, v1spec);
		appendStringInfoString(&s, "}]");
		b->specs_text = s.data;
	}
	if (b->specs_text)
		b->strings_len += strlen(b->specs_text) + 1;
}

/* the current snapshot and the snapshots, each summary's text written into b->summaries */
static void
parse_snapshots(MetaBuild *b)
{
	ParseCtx   *ctx = &b->ctx;
	json_t	   *cur = json_object_get(b->root, "current-snapshot-id");
	uint32		n;
	uint32		i;
	int		   *summary_off;

	/* absent, null or -1 all mean none */
	if (cur == NULL || json_is_null(cur))
		b->hdr.current_snapshot_id = SKADE_NO_SNAPSHOT;
	else
		b->hdr.current_snapshot_id = get_int(ctx, b->root, "current-snapshot-id",
											 "current-snapshot-id", true, 0);
	b->snaps = get_field(ctx, b->root, "snapshots", "snapshots", false, JSON_ARRAY);
	n = b->hdr.nsnapshots = b->snaps ? json_array_size(b->snaps) : 0;
	if (n == 0)
	{
		if (b->hdr.current_snapshot_id != SKADE_NO_SNAPSHOT)
			field_error(ctx, "current-snapshot-id", "names no snapshot in \"snapshots\"");
		return;
	}
	b->snapshots = palloc0(sizeof(SkadeMetaSnapshot) * n);
	b->snap_op = palloc0(sizeof(char *) * n);
	b->snap_ml = palloc0(sizeof(char *) * n);
	b->snap_summary = palloc0(sizeof(char *) * n);
	summary_off = palloc(sizeof(int) * n);
	/* summaries take about half of a snapshot's text */
	initStringInfo(&b->summaries);
	enlargeStringInfo(&b->summaries, (int) Min(b->len / 2 + 1024, MaxAllocSize / 2));
	ctx->array = "snapshots";
	for (i = 0; i < n; i++)
	{
		ctx->index = (int64) i;
		parse_snapshot(ctx, json_array_get(b->snaps, i), &b->snapshots[i],
					   &b->snap_op[i], &b->snap_ml[i], &b->summaries, &summary_off[i]);
		if (b->snap_op[i])
			b->strings_len += strlen(b->snap_op[i]) + 1;
		if (b->snap_ml[i])
			b->strings_len += strlen(b->snap_ml[i]) + 1;
	}
	ctx->array = NULL;
	/* the buffer has stopped moving: summaries by address */
	for (i = 0; i < n; i++)
		if (summary_off[i] >= 0)
			b->snap_summary[i] = b->summaries.data + summary_off[i];
	b->strings_len += b->summaries.len;
	if (b->hdr.current_snapshot_id != SKADE_NO_SNAPSHOT)
	{
		bool		found = false;

		for (i = 0; i < n && !found; i++)
			found = b->snapshots[i].snapshot_id == b->hdr.current_snapshot_id;
		if (!found)
			field_error(ctx, "current-snapshot-id", "names no snapshot in \"snapshots\"");
	}
}

/* the snapshot log */
static void
parse_log(MetaBuild *b)
{
	ParseCtx   *ctx = &b->ctx;
	json_t	   *log = get_field(ctx, b->root, "snapshot-log", "snapshot-log", false, JSON_ARRAY);
	uint32		i;

	b->hdr.nlog = log ? json_array_size(log) : 0;
	if (b->hdr.nlog > 0)
		b->log = palloc0(sizeof(SkadeMetaLogEntry) * b->hdr.nlog);
	ctx->array = "snapshot-log";
	for (i = 0; i < b->hdr.nlog; i++)
	{
		json_t	   *e = json_array_get(log, i);

		ctx->index = (int64) i;
		if (!json_is_object(e))
			field_error(ctx, "", "must be an object");
		b->log[i].timestamp_ms = get_int(ctx, e, "timestamp-ms", ".timestamp-ms", true, 0);
		b->log[i].snapshot_id = get_int(ctx, e, "snapshot-id", ".snapshot-id", true, 0);
	}
	ctx->array = NULL;
}

/* refs; without them, main is the current snapshot */
static void
parse_refs(MetaBuild *b)
{
	ParseCtx   *ctx = &b->ctx;
	json_t	   *refs = get_field(ctx, b->root, "refs", "refs", false, JSON_OBJECT);
	const char *name;
	json_t	   *r;
	uint32		i = 0;

	if (refs == NULL)
	{
		if (b->hdr.current_snapshot_id == SKADE_NO_SNAPSHOT)
			return;
		b->hdr.nrefs = 1;
		b->refs = palloc0(sizeof(SkadeMetaRef));
		b->ref_names = palloc0(sizeof(char *));
		b->ref_names[0] = "main";
		b->refs[0].snapshot_id = b->hdr.current_snapshot_id;
		b->refs[0].max_ref_age_ms = b->refs[0].max_snapshot_age_ms = -1;
		b->refs[0].min_snapshots_to_keep = -1;
		b->strings_len += 5;
		return;
	}
	b->hdr.nrefs = json_object_size(refs);
	b->refs = palloc0(sizeof(SkadeMetaRef) * (b->hdr.nrefs + 1));
	b->ref_names = palloc0(sizeof(char *) * (b->hdr.nrefs + 1));
	json_object_foreach(refs, name, r)
	{
		SkadeMetaRef *ref = &b->refs[i];
		char		path[320];
		const char *type;
		bool		found = false;
		uint32		j;

		snprintf(path, sizeof(path), "refs.%s", name);
		if (!json_is_object(r))
			field_error(ctx, path, "must be an object");
		b->ref_names[i] = name;
		b->strings_len += strlen(name) + 1;
		snprintf(path, sizeof(path), "refs.%s.snapshot-id", name);
		ref->snapshot_id = get_int(ctx, r, "snapshot-id", path, true, 0);
		for (j = 0; j < b->hdr.nsnapshots && !found; j++)
			found = b->snapshots[j].snapshot_id == ref->snapshot_id;
		if (!found)
			field_error(ctx, path, "names no snapshot in \"snapshots\"");
		snprintf(path, sizeof(path), "refs.%s.type", name);
		type = get_str(ctx, r, "type", path, true);
		if (strcmp(type, "tag") != 0 && strcmp(type, "branch") != 0)
			field_error(ctx, path, "must be \"branch\" or \"tag\"");
		ref->is_tag = strcmp(type, "tag") == 0;
		snprintf(path, sizeof(path), "refs.%s.max-ref-age-ms", name);
		ref->max_ref_age_ms = get_int(ctx, r, "max-ref-age-ms", path, false, -1);
		snprintf(path, sizeof(path), "refs.%s.max-snapshot-age-ms", name);
		ref->max_snapshot_age_ms = get_int(ctx, r, "max-snapshot-age-ms", path, false, -1);
		snprintf(path, sizeof(path), "refs.%s.min-snapshots-to-keep", name);
		ref->min_snapshots_to_keep = (int32) get_int(ctx, r, "min-snapshots-to-keep",
													 path, false, -1);
		i++;
	}
}

/*
 * The refs variant: only snapshots a ref points at; the snapshot log stays
 * whole, as Java's suppressHistoricalSnapshots() keeps it (a client's
 * history() reads it; snapshots load lazily).  It is what json_dumps(root,
 * JSON_COMPACT) wrote after "snapshots" was replaced by the kept ones (in
 * place: a replaced key keeps its position), written from the parsed values
 * without touching them.  None when every snapshot is kept.
 */
static void
write_refs_variant(MetaBuild *b)
{
	int64	   *keep = palloc(sizeof(int64) * (b->hdr.nrefs + 1));
	int			nkeep = 0;
	StringInfo	out = &b->refs_text;
	void	   *iter;
	uint32		i;
	bool		first;

	for (i = 0; i < b->hdr.nrefs; i++)
		if (!id_in(b->refs[i].snapshot_id, keep, nkeep))
			keep[nkeep++] = b->refs[i].snapshot_id;
	initStringInfo(out);
	if ((size_t) nkeep >= b->hdr.nsnapshots)
		return;
	/* compact, without most snapshots: a fraction of the text */
	enlargeStringInfo(out, (int) Min(b->len / 4 + 1024, MaxAllocSize / 2));
	appendStringInfoChar(out, '{');
	for (iter = json_object_iter(b->root); iter; iter = json_object_iter_next(b->root, iter))
	{
		const char *key = json_object_iter_key(iter);
		size_t		key_len = json_object_iter_key_len(iter);
		json_t	   *value = json_object_iter_value(iter);

		if (out->len > 1)
			appendStringInfoChar(out, ',');
		SkadeJsonAppendString(out, key, key_len);
		appendStringInfoChar(out, ':');
		if (value != b->snaps)
		{
			SkadeJsonAppendCompact(out, value);
			continue;
		}
		appendStringInfoChar(out, '[');
		for (i = 0, first = true; i < b->hdr.nsnapshots; i++)
		{
			if (!id_in(b->snapshots[i].snapshot_id, keep, nkeep))
				continue;
			if (!first)
				appendStringInfoChar(out, ',');
			SkadeJsonAppendCompact(out, json_array_get(b->snaps, i));
			first = false;
		}
		appendStringInfoChar(out, ']');
	}
	appendStringInfoChar(out, '}');
}


/* the snapshot id of summary m (NULL: none) -- a linear scan, as a summary's are few */
const SkadeMetaSnapshot *
SkadeMetaSnapshotById(const SkadeMeta *m, int64 id)
{
	const SkadeMetaSnapshot *s = SkadeMetaSnapshots(m);
	uint32		i;

	for (i = 0; i < m->nsnapshots; i++)
		if (s[i].snapshot_id == id)
			return &s[i];
	return NULL;
}

/*
 * SkadeMetaAssemble
 *		Lay out the parts of a summary as one flat, palloc'd SkadeMeta (in
 *		CurrentMemoryContext).  parts->hdr gives the scalars and counts; the
 *		offsets are computed here.  Used by the parser above and by the
 *		commit fast path (commit_fast.c), which derives a new summary from
 *		its base without parsing the text it wrote.
 */
SkadeMeta *
SkadeMetaAssemble(const SkadeMetaParts *parts)
{
	SkadeMeta	hdr = *parts->hdr;
	StringInfoData buf;
	Size		estimate;
	uint32		i;

	/* exact but for alignment when the caller knows its strings' bytes */
	estimate = sizeof(hdr) + 64 + 3 * 8 + 2 * (VARHDRSZ + 1 + MAXIMUM_ALIGNOF) +
		strlen(parts->location) + 1 +
		parts->text_len + parts->refs_text_len + parts->strings_len +
		(sizeof(SkadeMetaSnapshot) + (parts->strings_len ? 0 : 8)) * hdr.nsnapshots +
		sizeof(SkadeMetaLogEntry) * hdr.nlog +
		(sizeof(SkadeMetaRef) + (parts->strings_len ? 0 : 8)) * hdr.nrefs;
	initStringInfo(&buf);
	enlargeStringInfo(&buf, (int) Min(estimate, MaxAllocSize / 2));
	appendBinaryStringInfo(&buf, (char *) &hdr, sizeof(hdr));
	hdr.snapshots = add_array(&buf, parts->snapshots, sizeof(SkadeMetaSnapshot) * hdr.nsnapshots);
	hdr.snapshot_log = add_array(&buf, parts->log, sizeof(SkadeMetaLogEntry) * hdr.nlog);
	hdr.refs = add_array(&buf, parts->refs, sizeof(SkadeMetaRef) * hdr.nrefs);
	hdr.location = add_string(&buf, parts->location);
	hdr.table_uuid = parts->table_uuid ? add_string(&buf, parts->table_uuid) : 0;
	hdr.table_location = add_string(&buf, parts->table_location);
	hdr.current_schema = add_string(&buf, parts->current_schema);
	hdr.partition_specs = parts->partition_specs ? add_string(&buf, parts->partition_specs) : 0;
	for (i = 0; i < hdr.nsnapshots; i++)
	{
		uint32		op = parts->snap_op[i] ? add_string(&buf, parts->snap_op[i]) : 0;
		uint32		ml = parts->snap_ml[i] ? add_string(&buf, parts->snap_ml[i]) : 0;
		uint32		sum = parts->snap_summary[i] ? add_string(&buf, parts->snap_summary[i]) : 0;
		SkadeMetaSnapshot *s = (SkadeMetaSnapshot *) (buf.data + hdr.snapshots) + i;

		s->operation = op;
		s->manifest_list = ml;
		s->summary = sum;
	}
	for (i = 0; i < hdr.nrefs; i++)
	{
		uint32		off = add_string(&buf, parts->ref_names[i]);

		((SkadeMetaRef *) (buf.data + hdr.refs))[i].name = off;
	}
	if (parts->emit_text)
	{
		/* the text made in place: no copy of a multi-megabyte buffer */
		uint32		len;

		hdr.json_off = add_varlena(&buf, "", 0);
		buf.len--;				/* drop the NUL; the text follows the header */
		parts->emit_text(&buf, parts->emit_arg);
		len = buf.len - hdr.json_off - VARHDRSZ;
		appendStringInfoChar(&buf, '\0');
		SET_VARSIZE((struct varlena *) (buf.data + hdr.json_off), len + VARHDRSZ);
		hdr.json_len = len;
	}
	else
	{
		hdr.json_off = add_varlena(&buf, parts->text, parts->text_len);
		hdr.json_len = parts->text_len;
	}
	if (parts->refs_text)
	{
		hdr.refs_json_len = parts->refs_text_len;
		hdr.refs_json_off = add_varlena(&buf, parts->refs_text, parts->refs_text_len);
	}
	else
	{
		hdr.refs_json_off = hdr.json_off;
		hdr.refs_json_len = hdr.json_len;
	}
	hdr.total_size = buf.len;
	memcpy(buf.data, &hdr, sizeof(hdr));
	return (SkadeMeta *) buf.data;
}

/*
 * SkadeSchemaText
 *		The summary's text of the current schema when it is schema id of a
 *		"schemas" array (its JSON text): the last schema with that id, as the
 *		parser picks and dumps it; NULL if none has it.  Text that does not
 *		parse is an error naming location.
 */
char *
SkadeSchemaText(const char *schemas, size_t len, int32 id, const char *location)
{
	MemoryContext caller = CurrentMemoryContext;
	MemoryContext parse_cxt;
	json_t	   *root;
	json_t	   *schema = NULL;
	char	   *out = NULL;
	size_t		i;

	parse_cxt = AllocSetContextCreate(caller, "skade schema text", ALLOCSET_SMALL_SIZES);
	MemoryContextSwitchTo(parse_cxt);
	root = load_part(schemas, len, "a member", location);
	for (i = 0; json_is_array(root) && i < json_array_size(root); i++)
	{
		json_t	   *s = json_array_get(root, i);
		json_t	   *sid = json_object_get(s, "schema-id");

		if (json_is_integer(sid) && json_integer_value(sid) == id)
			schema = s;
	}
	MemoryContextSwitchTo(caller);
	if (schema)
		out = dump_compact(schema);
	MemoryContextDelete(parse_cxt);
	return out;
}

/*
 * SkadeCompactJson
 *		A member's JSON text as a summary records it (jansson's compact
 *		text, as the parser dumps "partition-specs"), palloc'd in the
 *		caller's context; text that does not parse is an error naming
 *		location.
 */
char *
SkadeCompactJson(const char *text, size_t len, const char *location)
{
	MemoryContext caller = CurrentMemoryContext;
	MemoryContext parse_cxt;
	json_t	   *root;
	char	   *out;

	parse_cxt = AllocSetContextCreate(caller, "skade json compact", ALLOCSET_SMALL_SIZES);
	MemoryContextSwitchTo(parse_cxt);
	root = load_part(text, len, "a member", location);
	MemoryContextSwitchTo(caller);
	out = dump_compact(root);
	MemoryContextDelete(parse_cxt);
	return out;
}

/*
 * SkadeParseSnapshot
 *		One snapshot object (JSON text) as the metadata parser reads each
 *		element of "snapshots": the same checks, the same errors (naming
 *		location and "snapshots[index]"), the same strings (the summary as
 *		jansson's compact text).  Strings are palloc'd in the caller's
 *		context.
 */
void
SkadeParseSnapshot(const char *text, size_t len, int format_version, const char *location,
				   int index, SkadeMetaSnapshot *snap, char **op, char **ml, char **summary)
{
	MemoryContext caller = CurrentMemoryContext;
	MemoryContext parse_cxt;
	ParseCtx	ctx = {location, format_version};
	json_t	   *root;
	const char *op_text;
	const char *ml_text;
	StringInfoData summaries;
	int			summary_off;

	parse_cxt = AllocSetContextCreate(caller, "skade snapshot parse", ALLOCSET_SMALL_SIZES);
	MemoryContextSwitchTo(parse_cxt);
	root = load_part(text, len, "a snapshot", location);
	ctx.array = "snapshots";
	ctx.index = index;
	initStringInfo(&summaries);
	parse_snapshot(&ctx, root, snap, &op_text, &ml_text, &summaries, &summary_off);
	MemoryContextSwitchTo(caller);
	*op = op_text ? pstrdup(op_text) : NULL;
	*ml = ml_text ? pstrdup(ml_text) : NULL;
	*summary = summary_off >= 0 ? pstrdup(summaries.data + summary_off) : NULL;
	MemoryContextDelete(parse_cxt);
}

/*
 * one element of "snapshots" (ctx names it in errors): its strings point
 * into the parsed values, its summary's text is appended to summaries,
 * NUL-terminated, at *summary_off (-1: none)
 */
static void
parse_snapshot(ParseCtx *ctx, json_t *s, SkadeMetaSnapshot *snap,
			   const char **op, const char **ml, StringInfo summaries, int *summary_off)
{
	json_t	   *summary;
	int			fv = ctx->format_version;

	if (!json_is_object(s))
		field_error(ctx, "", "must be an object");
	/* paths relative to ctx's array element, made only for an error */
#define P(f) ("." f)
	snap->snapshot_id = get_int(ctx, s, "snapshot-id", P("snapshot-id"), true, 0);
	snap->parent_id = get_int(ctx, s, "parent-snapshot-id", P("parent-snapshot-id"),
							  false, SKADE_NO_SNAPSHOT);
	/*
	 * optional even in v2+: Java reads none as 0 and writes 0 as none (a v1
	 * table's snapshots after an upgrade)
	 */
	snap->sequence_number = get_int(ctx, s, "sequence-number", P("sequence-number"),
									false, 0);
	snap->timestamp_ms = get_int(ctx, s, "timestamp-ms", P("timestamp-ms"), true, 0);
	snap->schema_id = (int32) get_int(ctx, s, "schema-id", P("schema-id"), false, -1);
	*ml = get_str(ctx, s, "manifest-list", P("manifest-list"), fv >= 2);
	if (*ml == NULL && json_object_get(s, "manifests") == NULL)
		field_error(ctx, P("manifest-list"), "is missing (and there is no \"manifests\" list)");
	*op = NULL;
	*summary_off = -1;
	summary = get_field(ctx, s, "summary", P("summary"), fv >= 2, JSON_OBJECT);
	if (summary)
	{
		*op = get_str(ctx, summary, "operation", P("summary.operation"), true);
		*summary_off = summaries->len;
		append_summary(summaries, summary);
		appendStringInfoChar(summaries, '\0');
	}
#undef P
}

/*
 * SkadeParseSchemaColumns
 *		The primitive columns of an Iceberg schema (JSON text), in schema
 *		order; fields of structs are included as "outer.inner", elements of
 *		lists and maps are not.  what names the source in errors.
 */
SkadeColumn *
SkadeParseSchemaColumns(const char *schema_json, const char *what, int *ncolumns)
{
	SkadeColumn *result = columns_memo_get(schema_json, ncolumns);

	if (result == NULL)
	{
		result = parse_schema_columns(schema_json, what, ncolumns);
		columns_memo_put(schema_json, result, *ncolumns);
	}
	return result;
}

/*
 * The columns of schema_json parsed before by this backend, as a palloc'd
 * copy of the array (its strings are the memo's, never freed), or NULL.
 * Every manifest of a table records the same schema text, so a plan over
 * a hundred manifests parses it once.
 */
static SkadeColumn *
columns_memo_get(const char *schema_json, int *ncolumns)
{
	ListCell   *lc;

	foreach(lc, columns_memo)
	{
		ColumnsMemo *m = lfirst(lc);

		if (strcmp(m->text, schema_json) == 0)
		{
			SkadeColumn *copy = palloc(sizeof(SkadeColumn) * (m->ncolumns + 1));

			memcpy(copy, m->columns, sizeof(SkadeColumn) * (m->ncolumns + 1));
			*ncolumns = m->ncolumns;
			return copy;
		}
	}
	return NULL;
}

/* remember columns parsed from schema_json, while the memo has room */
static void
columns_memo_put(const char *schema_json, const SkadeColumn *columns, int ncolumns)
{
	MemoryContext old;
	ColumnsMemo *m;
	int			i;
	Size		bytes = strlen(schema_json) + sizeof(SkadeColumn) * (ncolumns + 1);

	for (i = 0; i < ncolumns; i++)
		bytes += (columns[i].name ? strlen(columns[i].name) + 1 : 0) +
			(columns[i].type ? strlen(columns[i].type) + 1 : 0);
	if (list_length(columns_memo) >= COLUMNS_MEMO_MAX ||
		columns_memo_bytes + bytes > COLUMNS_MEMO_BYTES)
		return;
	columns_memo_bytes += bytes;
	if (columns_memo_cxt == NULL)
		columns_memo_cxt = AllocSetContextCreate(TopMemoryContext, "skade schema columns",
												 ALLOCSET_SMALL_SIZES);
	old = MemoryContextSwitchTo(columns_memo_cxt);
	m = palloc(sizeof(ColumnsMemo));
	m->text = pstrdup(schema_json);
	m->ncolumns = ncolumns;
	m->columns = palloc0(sizeof(SkadeColumn) * (ncolumns + 1));
	for (i = 0; i < ncolumns; i++)
	{
		m->columns[i] = columns[i];
		m->columns[i].name = columns[i].name ? pstrdup(columns[i].name) : NULL;
		m->columns[i].type = columns[i].type ? pstrdup(columns[i].type) : NULL;
	}
	columns_memo = lappend(columns_memo, m);
	MemoryContextSwitchTo(old);
}

/* SkadeParseSchemaColumns, parsing */
static SkadeColumn *
parse_schema_columns(const char *schema_json, const char *what, int *ncolumns)
{
	json_error_t err;
	json_t	   *root = load_budgeted(schema_json, strlen(schema_json), JSON_REJECT_DUPLICATES,
									 &err);
	List	   *cols = NIL;
	SkadeColumn *result;
	ListCell   *lc;
	int			i = 0;

	if (root == NULL || !json_is_object(root) || !json_is_array(json_object_get(root, "fields")))
		ereport(ERROR,
				(errcode(ERRCODE_SKADE_INVALID_FILE),
				 errmsg("the schema of %s is not a valid Iceberg schema", what),
				 root == NULL ? errdetail("%s at line %d, column %d.", err.text, err.line,
										  err.column) : 0));
	add_columns(json_object_get(root, "fields"), NULL, &cols, what, 0);
	result = palloc0(sizeof(SkadeColumn) * (list_length(cols) + 1));
	foreach(lc, cols)
		result[i++] = *(SkadeColumn *) lfirst(lc);
	*ncolumns = i;
	json_decref(root);
	return result;
}

/*
 * SkadeParsePartitionSpec
 *		The fields of a partition spec: json is either a specs array (as in
 *		table metadata; the spec with spec_id is taken) or, with spec_id
 *		-1, a fields array (as in a manifest's "partition-spec" header).
 *		NULL if the spec is absent or not readable: callers then do without
 *		(no pruning by partition), so a malformed spec is never an error.
 */
SkadePartitionField *
SkadeParsePartitionSpec(const char *json, int32 spec_id, int *nfields)
{
	json_t	   *root = load_budgeted(json, strlen(json), 0, NULL);
	json_t	   *fields = NULL;
	SkadePartitionField *result = NULL;
	size_t		i;
	json_t	   *f;

	if (root == NULL || !json_is_array(root))
		goto done;
	if (spec_id < 0)
		fields = root;
	else
		json_array_foreach(root, i, f)
		{
			json_t	   *id = json_object_get(f, "spec-id");

			if (json_is_integer(id) && json_integer_value(id) == spec_id)
				fields = json_object_get(f, "fields");
		}
	if (!json_is_array(fields))
		goto done;
	result = palloc0(sizeof(SkadePartitionField) * (json_array_size(fields) + 1));
	json_array_foreach(fields, i, f)
	{
		json_t	   *source = json_object_get(f, "source-id");
		json_t	   *field = json_object_get(f, "field-id");
		json_t	   *name = json_object_get(f, "name");
		json_t	   *transform = json_object_get(f, "transform");

		if (!json_is_integer(source) || !json_is_string(name) || !json_is_string(transform))
		{
			pfree(result);
			result = NULL;
			goto done;
		}
		result[i].source_id = (int32) json_integer_value(source);
		result[i].field_id = json_is_integer(field) ? (int32) json_integer_value(field) : -1;
		result[i].name = pstrdup(json_string_value(name));
		result[i].transform = pstrdup(json_string_value(transform));
	}
	*nfields = (int) json_array_size(fields);
done:
	if (root)
		json_decref(root);
	return result;
}

/* ---------------------------------------------------------------- helpers */

/*
 * The width of a bound of the column's type in Iceberg's single-value
 * serialisation, computed once here rather than for every bound read.
 */
static void
set_bound_width(SkadeColumn *c)
{
	const char *t = c->type;

	c->narrow_width = -1;
	if (strcmp(t, "boolean") == 0)
		c->width = 1;
	else if (strcmp(t, "int") == 0 || strcmp(t, "date") == 0 || strcmp(t, "float") == 0)
		c->width = 4;
	else if (strcmp(t, "long") == 0 || strcmp(t, "double") == 0)
	{
		c->width = 8;
		c->narrow_width = 4;
	}
	else if (strcmp(t, "time") == 0 || strncmp(t, "timestamp", 9) == 0)
		c->width = 8;
	else if (strcmp(t, "uuid") == 0)
		c->width = 16;
	else if (strncmp(t, "fixed[", 6) == 0)
		c->width = (int16) atoi(t + 6);
	else
		c->width = -1;
}

/*
 * The primitive columns of fields (a struct's), prefixed; structs nest at
 * most SKADE_MAX_STRUCT_DEPTH deep and a column's full name is at most
 * SKADE_MAX_COLUMN_NAME bytes (else the names of a deep schema grow with
 * the square of its depth).
 */
static void
add_columns(json_t *fields, const char *prefix, List **out, const char *what, int depth)
{
	size_t		i;
	json_t	   *f;

	check_stack_depth();
	if (depth > SKADE_MAX_STRUCT_DEPTH)
		ereport(ERROR,
				(errcode(ERRCODE_SKADE_INVALID_FILE),
				 errmsg("the schema of %s nests structs deeper than %d levels",
						what, SKADE_MAX_STRUCT_DEPTH)));
	json_array_foreach(fields, i, f)
	{
		json_t	   *id = json_object_get(f, "id");
		json_t	   *name = json_object_get(f, "name");
		json_t	   *type = json_object_get(f, "type");
		char	   *full;

		if (!json_is_integer(id) || !json_is_string(name) || type == NULL)
			continue;
		if ((prefix ? strlen(prefix) + 1 : 0) + strlen(json_string_value(name)) >
			SKADE_MAX_COLUMN_NAME)
			ereport(ERROR,
					(errcode(ERRCODE_SKADE_INVALID_FILE),
					 errmsg("the schema of %s has a column name longer than %d bytes",
							what, SKADE_MAX_COLUMN_NAME)));
		full = prefix ? psprintf("%s.%s", prefix, json_string_value(name))
			: pstrdup(json_string_value(name));
		if (json_is_string(type))
		{
			SkadeColumn *c = palloc(sizeof(SkadeColumn));

			c->id = (int32) json_integer_value(id);
			c->name = full;
			c->type = pstrdup(json_string_value(type));
			set_bound_width(c);
			*out = lappend(*out, c);
		}
		else if (json_is_object(type) &&
				 json_is_string(json_object_get(type, "type")) &&
				 strcmp(json_string_value(json_object_get(type, "type")), "struct") == 0 &&
				 json_is_array(json_object_get(type, "fields")))
			add_columns(json_object_get(type, "fields"), full, out, what, depth + 1);
	}
}

/*
 * Part of a metadata file's text (what: "a snapshot", "a member"), loaded
 * within the parse budget; text that does not parse is 22032 (invalid JSON
 * text) naming location.
 */
static json_t *
load_part(const char *text, size_t len, const char *what, const char *location)
{
	json_error_t jerr;
	json_t	   *root = load_budgeted(text, len, 0, &jerr);

	if (root == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_JSON_TEXT),
				 errmsg("%s of \"%s\" is not valid JSON", what, location),
				 errdetail("%s at line %d, column %d.", jerr.text, jerr.line, jerr.column)));
	return root;
}

/* jansson's parse of len bytes of text within the budget of a parse */
static json_t *
load_budgeted(const char *text, size_t len, size_t flags, json_error_t *err)
{
	return SkadeJsonLoad(text, len, flags, err, NULL);
}

static void
field_error(ParseCtx *ctx, const char *path, const char *problem)
{
	if (ctx->array && (path[0] == '.' || path[0] == '\0'))
		path = ctx->index < 0 ? psprintf("%s%s", ctx->array, path) :
			psprintf("%s[" INT64_FORMAT "]%s", ctx->array, ctx->index, path);
	ereport(ERROR,
			(errcode(ERRCODE_SKADE_INVALID_FILE),
			 errmsg("invalid Iceberg table metadata in \"%s\"", ctx->location),
			 errdetail("Field \"%s\" %s.", path, problem)));
}

/* obj[key] of the given type; NULL if absent and not required */
static json_t *
get_field(ParseCtx *ctx, json_t *obj, const char *key, const char *path,
		  bool required, json_type type)
{
	json_t	   *v = json_object_get(obj, key);

	if (v == NULL)
	{
		if (required)
			field_error(ctx, path, "is missing");
		return NULL;
	}
	if (json_typeof(v) != type)
	{
		switch (type)
		{
			case JSON_OBJECT:
				field_error(ctx, path, "must be an object");
			case JSON_ARRAY:
				field_error(ctx, path, "must be an array");
			case JSON_STRING:
				field_error(ctx, path, "must be a string");
			case JSON_INTEGER:
				field_error(ctx, path, "must be an integer");
			default:
				field_error(ctx, path, "has the wrong type");
		}
	}
	return v;
}

static int64
get_int(ParseCtx *ctx, json_t *obj, const char *key, const char *path,
		bool required, int64 dflt)
{
	json_t	   *v = get_field(ctx, obj, key, path, required, JSON_INTEGER);

	return v ? (int64) json_integer_value(v) : dflt;
}

static const char *
get_str(ParseCtx *ctx, json_t *obj, const char *key, const char *path, bool required)
{
	json_t	   *v = get_field(ctx, obj, key, path, required, JSON_STRING);

	return v ? json_string_value(v) : NULL;
}

/* value as jansson's compact text (json_compact.c), palloc'd */
static char *
dump_compact(json_t *value)
{
	StringInfoData s;

	initStringInfo(&s);
	SkadeJsonAppendCompact(&s, value);
	return s.data;
}

/*
 * len bytes of s (NUL-terminated there) as a JSON string: as they are when
 * nothing in them needs escaping, else by escape_json; false (and nothing
 * written) if they hold a NUL
 */
static bool
append_json_string(StringInfo b, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *) s;
	const unsigned char *end = p + len;

	while (p < end && !json_escaped[*p])
		p++;
	if (p < end)
	{
		if (memchr(p, '\0', end - p) != NULL)
			return false;
		escape_json(b, s);
		return true;
	}
	enlargeStringInfo(b, (int) len + 2);
	b->data[b->len++] = '"';
	memcpy(b->data + b->len, s, len);
	b->len += len;
	b->data[b->len++] = '"';
	b->data[b->len] = '\0';
	return true;
}

/*
 * A snapshot summary as compact JSON text, appended to b: Iceberg's map of
 * strings is written directly in one pass (a thousand json_dumps calls were
 * a fifth of a cold load), in the object's order; any other shape, or a
 * string holding NUL, as json_dumps writes it.
 */
static void
append_summary(StringInfo b, json_t *summary)
{
	int			start = b->len;
	void	   *iter;

	appendStringInfoChar(b, '{');
	for (iter = json_object_iter(summary); iter; iter = json_object_iter_next(summary, iter))
	{
		json_t	   *v = json_object_iter_value(iter);

		if (b->len > start + 1)
			appendStringInfoChar(b, ',');
		if (!json_is_string(v) ||
			!append_json_string(b, json_object_iter_key(iter), json_object_iter_key_len(iter)))
			break;
		appendStringInfoChar(b, ':');
		if (!append_json_string(b, json_string_value(v), json_string_length(v)))
			break;
	}
	if (iter != NULL)
	{
		/* not a map of strings: start again */
		b->len = start;
		b->data[start] = '\0';
		SkadeJsonAppendCompact(b, summary);
		return;
	}
	appendStringInfoChar(b, '}');
}

static uint32
add_bytes(StringInfo buf, const char *s, size_t len)
{
	uint32		off = buf->len;

	appendBinaryStringInfo(buf, s, len);
	appendStringInfoChar(buf, '\0');
	return off;
}

static uint32
add_string(StringInfo buf, const char *s)
{
	return add_bytes(buf, s, strlen(s));
}

/*
 * append a text varlena (4-byte header, then the bytes, then a NUL) at an
 * aligned offset, so that readers can use it in place as a datum
 */
static uint32
add_varlena(StringInfo buf, const char *s, size_t len)
{
	uint32		off;
	struct varlena *header = palloc(VARHDRSZ);

	while (buf->len % MAXIMUM_ALIGNOF != 0)
		appendStringInfoChar(buf, '\0');
	off = buf->len;
	SET_VARSIZE(header, len + VARHDRSZ);
	appendBinaryStringInfo(buf, (char *) header, VARHDRSZ);
	pfree(header);
	appendBinaryStringInfo(buf, s, len);
	appendStringInfoChar(buf, '\0');
	return off;
}

/* append an array at an 8-byte aligned offset */
static uint32
add_array(StringInfo buf, const void *data, size_t size)
{
	uint32		off;

	while (buf->len % 8 != 0)
		appendStringInfoChar(buf, '\0');
	off = buf->len;
	if (size > 0)
		appendBinaryStringInfo(buf, data, size);
	return off;
}

static bool
id_in(int64 id, const int64 *ids, int n)
{
	int			i;

	for (i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}
