/*-------------------------------------------------------------------------
 *
 * metadata_json.c
 *	  Parse Iceberg table metadata JSON with jansson into a flat SkadeMeta
 *	  summary, validating what the spec requires.  The only file that calls
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
 * Errors name the file and the field: malformed JSON (22032, with line and
 * column), a missing or mistyped required field (XX001), an unknown format
 * version (0A000).  jansson's own nesting limit stops deep nesting.
 *
 * Memory: jansson allocates through palloc/pfree (SkadeJsonInit); each
 * parse runs in its own "skade metadata parse" context, deleted when done
 * or released with its parent on ERROR, so a failed parse leaks nothing.
 * The result is one palloc'd chunk in the caller's context.  Schema
 * columns parsed are also remembered per backend (see columns_memo).
 *
 * IDENTIFICATION
 *	  src/metadata_json.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <jansson.h>

#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/pg_list.h"
#include "utils/json.h"
#include "utils/memutils.h"

#include "guc.h"
#include "metadata_json.h"
#include "skade.h"


/*
 * A backend's memo of parsed schema columns (SkadeParseSchemaColumns), in
 * "skade schema columns" under TopMemoryContext: at most COLUMNS_MEMO_MAX
 * schema texts, never freed (their strings are handed out).
 */
#define COLUMNS_MEMO_MAX	32
typedef struct ColumnsMemo
{
	char	   *text;
	SkadeColumn *columns;
	int			ncolumns;
} ColumnsMemo;
static MemoryContext columns_memo_cxt = NULL;
static List *columns_memo = NIL;

static SkadeColumn *columns_memo_get(const char *schema_json, int *ncolumns);
static void columns_memo_put(const char *schema_json, const SkadeColumn *columns, int ncolumns);
static SkadeColumn *parse_schema_columns(const char *schema_json, const char *what,
										 int *ncolumns);

/*
 * A parse may take at most this many times skade.max_metadata_size of memory
 * (jansson's values of realistic metadata take 3 to 5 times its text; a file
 * of nothing but tiny values, 20 times).
 */
#define SKADE_PARSE_BUDGET_FACTOR 8

/* limits on a schema's structs (Iceberg's own are far smaller) */
#define SKADE_MAX_STRUCT_DEPTH	64
#define SKADE_MAX_COLUMN_NAME	8192

/* parse state: where errors point */
typedef struct ParseCtx
{
	const char *location;
	int			format_version;
	/* a path starting with "." (or empty) is relative to array[index] */
	const char *array;
	int64		index;			/* -1: relative to array itself */
} ParseCtx;

/* the memory budget of the jansson parse in progress (0: none) */
static Size json_budget = 0;
static Size json_budget_left = 0;
static bool json_budget_exceeded = false;

static void *json_palloc(size_t size);
static json_t *load_budgeted(const char *text, size_t len, size_t flags, json_error_t *err);
static Size parse_budget(void);
static void json_pfree(void *ptr);
static void field_error(ParseCtx *ctx, const char *path, const char *problem) pg_attribute_noreturn();
static json_t *get_field(ParseCtx *ctx, json_t *obj, const char *key,
						 const char *path, bool required, json_type type);
static int64 get_int(ParseCtx *ctx, json_t *obj, const char *key, const char *path,
					 bool required, int64 dflt);
static const char *get_str(ParseCtx *ctx, json_t *obj, const char *key,
						   const char *path, bool required);
static char *dump_compact(json_t *value);
static char *dump_summary(json_t *summary);
static void append_json_string(StringInfo b, const char *s);
static uint32 add_string(StringInfo buf, const char *s);
static uint32 add_bytes(StringInfo buf, const char *s, size_t len);
static uint32 add_array(StringInfo buf, const void *data, size_t size);
static uint32 add_varlena(StringInfo buf, const char *s, size_t len);
static bool id_in(int64 id, const int64 *ids, int n);
static void add_columns(json_t *fields, const char *prefix, List **out, const char *what,
						int depth);
static void set_bound_width(SkadeColumn *c);
static void parse_snapshot(ParseCtx *ctx, json_t *s,
						   SkadeMetaSnapshot *snap, char **op, char **ml, char **summary_text);

/*
 * SkadeJsonInit
 *		Route jansson's allocations through palloc.  Called from _PG_init.
 */
void
SkadeJsonInit(void)
{
	json_set_alloc_funcs(json_palloc, json_pfree);
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
	ParseCtx	ctx = {location, 0};
	json_error_t jerr;
	json_t	   *root;
	json_t	   *snaps;
	json_t	   *log;
	json_t	   *refs;
	json_t	   *schema = NULL;
	SkadeMeta	hdr;
	SkadeMetaSnapshot *snapshots = NULL;
	SkadeMetaLogEntry *entries = NULL;
	SkadeMetaRef *refarr = NULL;
	char	  **snap_op = NULL;
	char	  **snap_ml = NULL;
	char	  **snap_summary = NULL;
	char	  **ref_names = NULL;
	const char *uuid;
	const char *table_location;
	char	   *schema_text;
	char	   *specs_text = NULL;
	char	   *refs_text = NULL;
	int64	   *keep;
	int			nkeep = 0;
	size_t		i;
	SkadeMetaParts parts;
	SkadeMeta  *result;

	parse_cxt = AllocSetContextCreate(caller, "skade metadata parse",
									  ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(parse_cxt);

	root = load_budgeted(text, len, 0, &jerr);
	if (root == NULL && json_budget_exceeded)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("metadata file \"%s\" takes too much memory to parse", location),
				 errdetail("Parsed, it needs more than %zu bytes (%d times skade.max_metadata_size).",
						   parse_budget(), SKADE_PARSE_BUDGET_FACTOR),
				 errhint("Raise skade.max_metadata_size if the file is legitimate.")));
	if (root == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_JSON_TEXT),
				 errmsg("metadata file \"%s\" is not valid JSON", location),
				 errdetail("%s at line %d, column %d.", jerr.text, jerr.line, jerr.column)));
	if (!json_is_object(root))
		field_error(&ctx, "(root)", "must be a JSON object");

	memset(&hdr, 0, sizeof(hdr));
	hdr.format_version = (int32) get_int(&ctx, root, "format-version", "format-version", true, 0);
	if (hdr.format_version < 1 || hdr.format_version > 3)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("metadata file \"%s\" has unsupported format version %d",
						location, hdr.format_version),
				 errdetail("skade reads Iceberg table format versions 1, 2 and 3.")));
	ctx.format_version = hdr.format_version;

	uuid = get_str(&ctx, root, "table-uuid", "table-uuid", hdr.format_version >= 2);
	table_location = get_str(&ctx, root, "location", "location", true);
	hdr.last_updated_ms = get_int(&ctx, root, "last-updated-ms", "last-updated-ms", true, 0);
	hdr.last_sequence_number = get_int(&ctx, root, "last-sequence-number",
									   "last-sequence-number", hdr.format_version >= 2, 0);

	/* current schema: schemas + current-schema-id (v2+, optional in v1), else v1 "schema" */
	{
		json_t	   *schemas = get_field(&ctx, root, "schemas", "schemas",
										hdr.format_version >= 2, JSON_ARRAY);

		if (schemas)
		{
			hdr.current_schema_id = (int32) get_int(&ctx, root, "current-schema-id",
													"current-schema-id", true, 0);
			for (i = 0; i < json_array_size(schemas); i++)
			{
				json_t	   *s = json_array_get(schemas, i);
				char		path[64];

				snprintf(path, sizeof(path), "schemas[%zu]", i);
				if (!json_is_object(s))
					field_error(&ctx, path, "must be an object");
				snprintf(path, sizeof(path), "schemas[%zu].schema-id", i);
				if (get_int(&ctx, s, "schema-id", path, true, 0) == hdr.current_schema_id)
					schema = s;
			}
			if (schema == NULL)
				field_error(&ctx, "current-schema-id", "names no schema in \"schemas\"");
		}
		else
		{
			schema = get_field(&ctx, root, "schema", "schema", true, JSON_OBJECT);
			hdr.current_schema_id = (int32) get_int(&ctx, schema, "schema-id", "schema.schema-id", false, 0);
		}
		schema_text = dump_compact(schema);
	}

	/* partition specs (v1: the single "partition-spec" is spec 0); optional */
	{
		json_t	   *specs = json_object_get(root, "partition-specs");
		json_t	   *v1spec = json_object_get(root, "partition-spec");

		if (json_is_array(specs))
			specs_text = dump_compact(specs);
		else if (json_is_array(v1spec))
		{
			json_t	   *wrap = json_pack("[{s:i, s:O}]", "spec-id", 0, "fields", v1spec);

			if (wrap == NULL)
				elog(ERROR, "could not wrap the partition-spec of \"%s\"", location);
			specs_text = dump_compact(wrap);
			json_decref(wrap);
		}
	}

	/* current snapshot: absent, null or -1 all mean none */
	{
		json_t	   *cur = json_object_get(root, "current-snapshot-id");

		if (cur == NULL || json_is_null(cur))
			hdr.current_snapshot_id = SKADE_NO_SNAPSHOT;
		else
			hdr.current_snapshot_id = get_int(&ctx, root, "current-snapshot-id",
											  "current-snapshot-id", true, 0);
	}

	/* snapshots */
	snaps = get_field(&ctx, root, "snapshots", "snapshots", false, JSON_ARRAY);
	hdr.nsnapshots = snaps ? json_array_size(snaps) : 0;
	if (hdr.nsnapshots > 0)
	{
		snapshots = palloc0(sizeof(SkadeMetaSnapshot) * hdr.nsnapshots);
		snap_op = palloc0(sizeof(char *) * hdr.nsnapshots);
		snap_ml = palloc0(sizeof(char *) * hdr.nsnapshots);
		snap_summary = palloc0(sizeof(char *) * hdr.nsnapshots);
	}
	for (i = 0; i < hdr.nsnapshots; i++)
	{
		ctx.array = "snapshots";
		ctx.index = (int64) i;
		parse_snapshot(&ctx, json_array_get(snaps, i), &snapshots[i],
					   &snap_op[i], &snap_ml[i], &snap_summary[i]);
	}
	if (hdr.current_snapshot_id != SKADE_NO_SNAPSHOT)
	{
		bool		found = false;

		for (i = 0; i < hdr.nsnapshots && !found; i++)
			found = snapshots[i].snapshot_id == hdr.current_snapshot_id;
		if (!found)
			field_error(&ctx, "current-snapshot-id", "names no snapshot in \"snapshots\"");
	}

	/* snapshot log */
	log = get_field(&ctx, root, "snapshot-log", "snapshot-log", false, JSON_ARRAY);
	hdr.nlog = log ? json_array_size(log) : 0;
	if (hdr.nlog > 0)
		entries = palloc0(sizeof(SkadeMetaLogEntry) * hdr.nlog);
	ctx.array = "snapshot-log";
	for (i = 0; i < hdr.nlog; i++)
	{
		json_t	   *e = json_array_get(log, i);

		ctx.index = (int64) i;
		if (!json_is_object(e))
			field_error(&ctx, "", "must be an object");
		entries[i].timestamp_ms = get_int(&ctx, e, "timestamp-ms", ".timestamp-ms", true, 0);
		entries[i].snapshot_id = get_int(&ctx, e, "snapshot-id", ".snapshot-id", true, 0);
	}
	ctx.array = NULL;

	/* refs; without them, main is the current snapshot */
	refs = get_field(&ctx, root, "refs", "refs", false, JSON_OBJECT);
	if (refs)
	{
		const char *name;
		json_t	   *r;

		hdr.nrefs = json_object_size(refs);
		refarr = palloc0(sizeof(SkadeMetaRef) * (hdr.nrefs + 1));
		ref_names = palloc0(sizeof(char *) * (hdr.nrefs + 1));
		i = 0;
		json_object_foreach(refs, name, r)
		{
			char		path[320];
			const char *type;
			bool		found = false;
			size_t		j;

			snprintf(path, sizeof(path), "refs.%s", name);
			if (!json_is_object(r))
				field_error(&ctx, path, "must be an object");
			ref_names[i] = pstrdup(name);
			snprintf(path, sizeof(path), "refs.%s.snapshot-id", name);
			refarr[i].snapshot_id = get_int(&ctx, r, "snapshot-id", path, true, 0);
			for (j = 0; j < hdr.nsnapshots && !found; j++)
				found = snapshots[j].snapshot_id == refarr[i].snapshot_id;
			if (!found)
				field_error(&ctx, path, "names no snapshot in \"snapshots\"");
			snprintf(path, sizeof(path), "refs.%s.type", name);
			type = get_str(&ctx, r, "type", path, true);
			if (strcmp(type, "tag") != 0 && strcmp(type, "branch") != 0)
				field_error(&ctx, path, "must be \"branch\" or \"tag\"");
			refarr[i].is_tag = strcmp(type, "tag") == 0;
			snprintf(path, sizeof(path), "refs.%s.max-ref-age-ms", name);
			refarr[i].max_ref_age_ms = get_int(&ctx, r, "max-ref-age-ms", path, false, -1);
			snprintf(path, sizeof(path), "refs.%s.max-snapshot-age-ms", name);
			refarr[i].max_snapshot_age_ms = get_int(&ctx, r, "max-snapshot-age-ms", path, false, -1);
			snprintf(path, sizeof(path), "refs.%s.min-snapshots-to-keep", name);
			refarr[i].min_snapshots_to_keep = (int32) get_int(&ctx, r, "min-snapshots-to-keep",
															  path, false, -1);
			i++;
		}
	}
	else if (hdr.current_snapshot_id != SKADE_NO_SNAPSHOT)
	{
		hdr.nrefs = 1;
		refarr = palloc0(sizeof(SkadeMetaRef));
		ref_names = palloc0(sizeof(char *));
		ref_names[0] = "main";
		refarr[0].snapshot_id = hdr.current_snapshot_id;
		refarr[0].max_ref_age_ms = refarr[0].max_snapshot_age_ms = -1;
		refarr[0].min_snapshots_to_keep = -1;
	}

	/*
	 * the refs variant: only snapshots a ref points at; the snapshot log
	 * stays whole, as Java's suppressHistoricalSnapshots() keeps it (a
	 * client's history() reads it; snapshots load lazily)
	 */
	keep = palloc(sizeof(int64) * (hdr.nrefs + 1));
	for (i = 0; i < hdr.nrefs; i++)
		if (!id_in(refarr[i].snapshot_id, keep, nkeep))
			keep[nkeep++] = refarr[i].snapshot_id;
	if ((size_t) nkeep < hdr.nsnapshots)
	{
		json_t	   *kept = json_array();

		for (i = 0; i < hdr.nsnapshots; i++)
			if (id_in(snapshots[i].snapshot_id, keep, nkeep))
				json_array_append(kept, json_array_get(snaps, i));
		/* the full array is kept alive: the parse context frees it at once */
		json_incref(snaps);
		json_object_set_new(root, "snapshots", kept);
		refs_text = json_dumps(root, JSON_COMPACT);
		if (refs_text == NULL)
			elog(ERROR, "could not serialize the refs variant of \"%s\"", location);
	}

	/* lay out the flat result */
	memset(&parts, 0, sizeof(parts));
	parts.hdr = &hdr;
	parts.snapshots = snapshots;
	parts.snap_op = (const char **) snap_op;
	parts.snap_ml = (const char **) snap_ml;
	parts.snap_summary = (const char **) snap_summary;
	parts.log = entries;
	parts.refs = refarr;
	parts.ref_names = (const char **) ref_names;
	parts.location = location;
	parts.table_uuid = uuid;
	parts.table_location = table_location;
	parts.current_schema = schema_text;
	parts.partition_specs = specs_text;
	parts.text = text;
	parts.text_len = len;
	parts.refs_text = refs_text;
	parts.refs_text_len = refs_text ? strlen(refs_text) : 0;
	MemoryContextSwitchTo(caller);
	result = SkadeMetaAssemble(&parts);
	MemoryContextDelete(parse_cxt);
	return result;
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

	estimate = sizeof(hdr) + 64 + parts->text_len + parts->refs_text_len +
		(sizeof(SkadeMetaSnapshot) + 8) * hdr.nsnapshots +
		sizeof(SkadeMetaLogEntry) * hdr.nlog + (sizeof(SkadeMetaRef) + 8) * hdr.nrefs;
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
	json_error_t jerr;
	json_t	   *root;
	parse_cxt = AllocSetContextCreate(caller, "skade snapshot parse", ALLOCSET_SMALL_SIZES);
	MemoryContextSwitchTo(parse_cxt);
	root = load_budgeted(text, len, 0, &jerr);
	if (root == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_JSON_TEXT),
				 errmsg("a snapshot of \"%s\" is not valid JSON", location),
				 errdetail("%s at line %d, column %d.", jerr.text, jerr.line, jerr.column)));
	ctx.array = "snapshots";
	ctx.index = index;
	parse_snapshot(&ctx, root, snap, op, ml, summary);
	MemoryContextSwitchTo(caller);
	*op = *op ? pstrdup(*op) : NULL;
	*ml = *ml ? pstrdup(*ml) : NULL;
	*summary = *summary ? pstrdup(*summary) : NULL;
	MemoryContextDelete(parse_cxt);
}

/* one element of "snapshots" (prefix names it in errors) */
static void
parse_snapshot(ParseCtx *ctx, json_t *s, SkadeMetaSnapshot *snap,
			   char **op, char **ml, char **summary_text)
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
	/* copies: the refs variant frees snapshots it drops */
	*ml = (char *) get_str(ctx, s, "manifest-list", P("manifest-list"), fv >= 2);
	if (*ml)
		*ml = pstrdup(*ml);
	if (*ml == NULL && json_object_get(s, "manifests") == NULL)
		field_error(ctx, P("manifest-list"), "is missing (and there is no \"manifests\" list)");
	*op = NULL;
	*summary_text = NULL;
	summary = get_field(ctx, s, "summary", P("summary"), fv >= 2, JSON_OBJECT);
	if (summary)
	{
		*op = pstrdup(get_str(ctx, summary, "operation", P("summary.operation"), true));
		*summary_text = dump_summary(summary);
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

	if (list_length(columns_memo) >= COLUMNS_MEMO_MAX)
		return;
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
 * jansson's allocator: palloc, within the budget of the parse in progress
 * (json_budget > 0): past it, NULL, which jansson reports as a failed parse.
 */
static void *
json_palloc(size_t size)
{
	void	   *p;

	if (json_budget > 0 && (Size) size + 64 > json_budget_left)
	{
		json_budget_exceeded = true;
		return NULL;
	}
	p = palloc(size > 0 ? size : 1);
	if (json_budget > 0)
		json_budget_left -= GetMemoryChunkSpace(p);
	return p;
}

static void
json_pfree(void *ptr)
{
	if (ptr)
	{
		if (json_budget > 0)
			json_budget_left = Min(json_budget, json_budget_left + GetMemoryChunkSpace(ptr));
		pfree(ptr);
	}
}

/* the budget of a parse: SKADE_PARSE_BUDGET_FACTOR times skade.max_metadata_size */
static Size
parse_budget(void)
{
	return (Size) skade_max_metadata_size * SKADE_PARSE_BUDGET_FACTOR;
}

/* parse len bytes of text with jansson within the budget of a parse */
static json_t *
load_budgeted(const char *text, size_t len, size_t flags, json_error_t *err)
{
	json_t	   *root;

	json_budget = json_budget_left = parse_budget();
	json_budget_exceeded = false;
	PG_TRY();
	{
		root = json_loadb(text, len, flags, err);
	}
	PG_FINALLY();
	{
		json_budget = 0;
	}
	PG_END_TRY();
	return root;
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

static char *
dump_compact(json_t *value)
{
	char	   *s = json_dumps(value, JSON_COMPACT | JSON_ENCODE_ANY);

	if (s == NULL)
		elog(ERROR, "could not serialize a JSON value");
	return s;
}

/* s as a JSON string: as it is when nothing in it needs escaping */
static void
append_json_string(StringInfo b, const char *s)
{
	const unsigned char *p;

	for (p = (const unsigned char *) s; *p; p++)
		if (*p < 0x20 || *p == '"' || *p == '\\')
		{
			escape_json(b, s);
			return;
		}
	appendStringInfoChar(b, '"');
	appendBinaryStringInfo(b, s, (const char *) p - s);
	appendStringInfoChar(b, '"');
}

/*
 * A snapshot summary as compact JSON text: Iceberg's map of strings is
 * written directly (a thousand json_dumps calls were a fifth of a cold
 * load), in the object's order; any other shape, or a string holding NUL,
 * goes through json_dumps.
 */
static char *
dump_summary(json_t *summary)
{
	StringInfoData b;
	const char *key;
	json_t	   *v;
	bool		first = true;

	json_object_foreach(summary, key, v)
	{
		if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v))
			return dump_compact(summary);
	}
	initStringInfo(&b);
	appendStringInfoChar(&b, '{');
	json_object_foreach(summary, key, v)
	{
		if (!first)
			appendStringInfoChar(&b, ',');
		append_json_string(&b, key);
		appendStringInfoChar(&b, ':');
		append_json_string(&b, json_string_value(v));
		first = false;
	}
	appendStringInfoChar(&b, '}');
	return b.data;
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
