/*-------------------------------------------------------------------------
 *
 * manifest_api.c
 *	  skade.manifests(), skade.files() and skade.plan_files(): the manifest
 *	  list of a snapshot, the live data and delete files of its manifests
 *	  (format v1, v2 and v3 field names), and the scan plan of a filter;
 *	  skade.expire_files(): what expiring snapshots leaves unreachable.
 *
 * Invariants:
 *	 - the snapshot (default: the current one) is resolved from the table's
 *	   current metadata, served by the L0 cache like skade.snapshots();
 *	 - a v1 manifest list has no content or sequence numbers: content is
 *	   'data' and both sequence numbers are 0, as the spec says to read them;
 *	   an unassigned sequence number (-1) inherits the snapshot's;
 *	 - partition summaries are decoded by the table's spec of the manifest's
 *	   spec id (hex when the spec is unknown);
 *	 - files(): manifests come from the L0.5 cache (manifest_cache.c),
 *	   which checks manifest_length; a null snapshot id or sequence number
 *	   inherits the manifest's (sequence numbers only for ADDED entries; v1
 *	   ones are 0); column bounds are decoded by the schema the manifest was
 *	   written with (its "schema" header, else the table's current schema),
 *	   and a bound of the wrong length is an error when its file is
 *	   returned; statistics of columns the schema no longer has are left out;
 *	 - plan_files(): the filter is bound to the current schema before any
 *	   manifest is read; a data manifest or file is left out only when its
 *	   summaries, partition values or statistics prove no row can match
 *	   (scan_filter.c, partition_stats.c); delete files are matched to data
 *	   files by delete_index.c.
 *
 * Locking: none of its own (L0, L0.5 and file access do their own).
 *
 * IDENTIFICATION
 *	  src/api/manifest_api.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/hsearch.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"

#include "api/api.h"
#include "format/avro_reader.h"
#include "format/bound_json.h"
#include "format/delete_index.h"
#include "util/guc.h"
#include "cache/l0_cache.h"
#include "cache/manifest_cache.h"
#include "cache/manifest_helper.h"
#include "format/metadata_json.h"
#include "io/object_store.h"
#include "format/partition_stats.h"
#include "format/scan_filter.h"
#include "util/skade_limits.h"
#include "util/location.h"

PG_FUNCTION_INFO_V1(skade_manifests);
PG_FUNCTION_INFO_V1(skade_files);
PG_FUNCTION_INFO_V1(skade_plan_files);
PG_FUNCTION_INFO_V1(skade_expire_files);

#define MANIFESTS_COLS 14
#define FILES_COLS 18

/* a file's content, as files() and expire_files() name it */
static const char *const file_contents[] = {"data", "position_deletes", "equality_deletes"};

/* what files() needs of a manifest list entry */
typedef struct ManifestRef
{
	const SkadeRoute *route;	/* the table's: where it is read from */
	char	   *path;
	int64		length;			/* -1 if not recorded */
	int32		spec_id;		/* -1 if not recorded */
	int32		content;		/* 0 data, 1 deletes */
	int64		sequence_number;
	int64		added_snapshot_id;
	int			nsummaries;		/* per partition field, in spec order */
	struct PartitionSummary *summaries;
} ManifestRef;

/* a manifest list entry's summary of one partition field */
typedef struct PartitionSummary
{
	int			contains_null;	/* 1, 0, or -1: not recorded */
	int			contains_nan;
	SkadePartitionDatum lower;	/* transform results; len -1: null */
	SkadePartitionDatum upper;
} PartitionSummary;

typedef SkadeColumnStats ColumnStats;

/* plan_files(): the filter, and what the data files chosen so far need */
typedef struct ScanPlan
{
	const SkadeFilter *filter;
	const SkadeColumn *table_cols;
	int			ntable_cols;
	const SkadeMeta *meta;		/* the table's metadata (partition specs) */
	SkadeDeleteIndex *deletes;	/* the snapshot's delete files; NULL if none */
	MemoryContext cxt;			/* the call's context */
	MemoryContext row_cxt;		/* one delete row at a time */
} ScanPlan;

/* what put_file() needs of the manifest it reads */
typedef struct FileContext
{
	const ManifestRef *mref;
	bool		v1;
	SkadeColumn *cols;			/* the manifest's schema */
	bool		own_schema;		/* cols are from its "schema" header */
	int			ncols;
	ColumnStats *stats;			/* scratch, ncols + 1 */
	SkadeBoundPartition *parts; /* its partition spec, if known */
	int			nparts;
	const SkadeManifest *man;	/* the blob */
	bool		held;			/* it is pinned in place until the end of the
								 * transaction: rows point into it */
} FileContext;

static const SkadeMetaSnapshot *snapshot_arg(FunctionCallInfo fcinfo, int argno,
											 SkadeMeta **meta, SkadeRoute *route);
static const SkadeMetaSnapshot *require_snapshot(const SkadeMeta *m, const char *ns,
												 const char *name, bool given, int64 id);
static void put_manifest(ReturnSetInfo *rsinfo, const SkadeAvroValue *rec,
						 const SkadeMetaSnapshot *snap, const char *list, const SkadeMeta *m,
						 const SkadeColumn *cols, int ncols);
static Datum partition_summaries(const ManifestRef *mref, const SkadeMeta *m,
								 const SkadeColumn *cols, int ncols);
static void transform_result_jsonb(const SkadeBoundPartition *part, const SkadeColumn *cols,
								   SkadePartitionDatum d, const char *file, JsonbValue *out);
static Datum partition_values_jsonb(const FileContext *fc, const SkadeManifestEntry *e);
static void parse_manifest_ref(const SkadeAvroValue *rec, const SkadeMetaSnapshot *snap,
							   const char *list, ManifestRef *m);
static List *read_manifest_list(const SkadeRoute *route, const char *list,
								const SkadeMetaSnapshot *snap);
static bool manifest_may_match(const ManifestRef *mref, const ScanPlan *plan);
static void prefetch_manifests(const SkadeRoute *route, List *mrefs);
static void prefetch_paths(const SkadeRoute *route, List *paths);
static ManifestHelper *decode_helper(List *mrefs);
static bool partition_matchable(const FileContext *fc, bool *unpartitioned);
static uint64 partition_key(const FileContext *fc, const SkadeManifestEntry *e);
static void put_files(ReturnSetInfo *rsinfo, const ManifestRef *mref, const SkadeMeta *m,
					  bool v1, ScanPlan *plan);
static const SkadeManifest *open_manifest(const ManifestRef *mref, const SkadeMeta *m, bool v1,
										  bool spec, bool hold, FileContext *fc);
static void index_deletes(const ManifestRef *mref, const SkadeMeta *m, bool v1, ScanPlan *plan);
static bool entry_data_seq(const SkadeManifestEntry *e, const FileContext *fc, int64 *seq);
static void put_file(ReturnSetInfo *rsinfo, const SkadeManifestEntry *e, const FileContext *fc,
					 ScanPlan *plan);
static int64 long_either(const SkadeAvroValue *rec, const char *v2, const char *v1,
						 bool *isnull);

/*
 * skade.manifests(namespace, name, snapshot_id, catalog) -> setof (path,
 *		length, partition_spec_id, content, sequence_number,
 *		min_sequence_number, added_snapshot_id, added_files_count,
 *		existing_files_count, deleted_files_count, added_rows_count,
 *		existing_rows_count, deleted_rows_count, partitions)
 */
Datum
skade_manifests(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	SkadeMeta  *m;
	SkadeRoute	route;
	const SkadeMetaSnapshot *snap = snapshot_arg(fcinfo, 2, &m, &route);
	SkadeAvroFile *f;
	const SkadeAvroValue *rec;
	const char *list;
	SkadeColumn *cols = NULL;
	int			ncols = 0;
	MemoryContext row_cxt;

	if (snap == NULL)
		return (Datum) 0;		/* no current snapshot: an empty table */
	list = SkadeMetaStr(m, snap->manifest_list);
	/* summaries are decoded by the current schema's types */
	if (m->current_schema)
		cols = SkadeParseSchemaColumns(SkadeMetaStr(m, m->current_schema), "the table", &ncols);
	f = ManifestListOpen(&route, list);
	/* what one row needs lives only while it is formed (the tuplestore copies it) */
	row_cxt = AllocSetContextCreate(CurrentMemoryContext, "skade manifests row",
									ALLOCSET_DEFAULT_SIZES);
	while ((rec = SkadeAvroNext(f)) != NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(row_cxt);

		CHECK_FOR_INTERRUPTS();
		put_manifest(rsinfo, rec, snap, list, m, cols, ncols);
		MemoryContextSwitchTo(old);
		MemoryContextReset(row_cxt);
	}
	SkadeAvroClose(f);
	MemoryContextDelete(row_cxt);
	return (Datum) 0;
}

/*
 * skade.files(namespace, name, snapshot_id, catalog) -> setof (content,
 *		file_path, file_format, partition_spec_id, partition, record_count,
 *		file_size_in_bytes, columns, status, snapshot_id, sequence_number,
 *		file_sequence_number, manifest, equality_ids, referenced_data_file,
 *		content_offset, content_size_in_bytes, delete_files)
 *
 * The live (ADDED or EXISTING) files of every manifest of the snapshot.
 */
Datum
skade_files(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	SkadeMeta  *m;
	SkadeRoute	route;
	const SkadeMetaSnapshot *snap = snapshot_arg(fcinfo, 2, &m, &route);
	List	   *manifests;
	ManifestHelper *helper;
	ListCell   *lc;

	if (snap == NULL)
		return (Datum) 0;
	manifests = read_manifest_list(&route, SkadeMetaStr(m, snap->manifest_list), snap);
	prefetch_manifests(&route, manifests);
	helper = decode_helper(manifests);
	foreach(lc, manifests)
		put_files(rsinfo, (ManifestRef *) lfirst(lc), m, m->format_version < 2, NULL);
	ManifestHelperEnd(helper);
	return (Datum) 0;
}

/*
 * skade.plan_files(namespace, name, filter, snapshot_id, catalog) -> the
 *		rows of skade.files() for the data files that may hold a row
 *		matching filter, then the delete files that may apply to them.
 *
 * The filter is bound to the table's current schema before any manifest is
 * read.  Data manifests are pruned by their partition summaries, data files
 * by their partition values and column statistics.  Each data file's row
 * lists the delete files that apply to it (delete_files, by delete_index.c's
 * rules); after the data files come the rows of those delete files, each
 * once.
 */
Datum
skade_plan_files(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	SkadeMeta  *m;
	SkadeRoute	route;
	const SkadeMetaSnapshot *snap;
	ScanPlan	plan = {0};
	List	   *manifests;
	List	   *deletes = NIL;
	List	   *data = NIL;
	ManifestHelper *helper;
	ListCell   *lc;

	if (PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("filter must not be null"),
				 errhint("Pass 'true' to plan every file.")));
	snap = snapshot_arg(fcinfo, 3, &m, &route);
	if (m->current_schema == 0)
		ereport(ERROR,
				(errcode(ERRCODE_SKADE_INVALID_FILE),
				 errmsg("the table's metadata has no current schema to bind the filter to")));
	plan.table_cols = SkadeParseSchemaColumns(SkadeMetaStr(m, m->current_schema),
											  "the table", &plan.ntable_cols);
	plan.filter = SkadeFilterBuild(PG_GETARG_JSONB_P(2), plan.table_cols, plan.ntable_cols);
	plan.meta = m;
	plan.cxt = CurrentMemoryContext;
	plan.row_cxt = AllocSetContextCreate(CurrentMemoryContext, "skade plan row",
										 ALLOCSET_DEFAULT_SIZES);
	if (snap == NULL)
		return (Datum) 0;
	manifests = read_manifest_list(&route, SkadeMetaStr(m, snap->manifest_list), snap);

	foreach(lc, manifests)
	{
		ManifestRef *mref = (ManifestRef *) lfirst(lc);

		if (mref->content == 1)
			deletes = lappend(deletes, mref);
		else if (mref->content == 0 && manifest_may_match(mref, &plan))
			data = lappend(data, mref);
		/* else its partition summaries rule out every file */
	}
	/* the delete files first, indexed; then each data file meets its own */
	manifests = list_concat_copy(deletes, data);	/* in the order they are read */
	prefetch_manifests(&route, manifests);
	helper = decode_helper(manifests);
	foreach(lc, deletes)
	{
		if (plan.deletes == NULL)
			plan.deletes = SkadeDeleteIndexCreate(plan.cxt);
		index_deletes((ManifestRef *) lfirst(lc), m, m->format_version < 2, &plan);
	}
	foreach(lc, data)
		put_files(rsinfo, (ManifestRef *) lfirst(lc), m, m->format_version < 2, &plan);
	ManifestHelperEnd(helper);
	/* then the delete files that apply to a planned data file, once each */
	if (plan.deletes)
		foreach(lc, SkadeDeleteIndexFiles(plan.deletes))
		{
			SkadeDeleteFile *d = lfirst(lc);
			MemoryContext old = MemoryContextSwitchTo(plan.row_cxt);

			CHECK_FOR_INTERRUPTS();
			if (d->used)
				put_file(rsinfo, d->entry, (FileContext *) d->owner, NULL);
			MemoryContextSwitchTo(old);
			MemoryContextReset(plan.row_cxt);
		}
	return (Datum) 0;
}

/* ---------------------------------------------------------------- helpers */

/*
 * Fetch the uncached s3:// manifests among mrefs ahead of their reads, in
 * order (object_store.c keeps skade.s3_max_concurrency of them in flight or
 * waiting, so memory stays bounded); local files and cached manifests are
 * left alone.
 */
static void
prefetch_manifests(const SkadeRoute *route, List *mrefs)
{
	List	   *paths = NIL;
	ListCell   *lc;

	foreach(lc, mrefs)
		paths = lappend(paths, (char *) ((const ManifestRef *) lfirst(lc))->path);
	prefetch_paths(route, paths);
	list_free(paths);
}

/*
 * A helper process decoding the uncached local manifests among mrefs from
 * the end while the caller reads them in order (manifest_helper.c).
 */
static ManifestHelper *
decode_helper(List *mrefs)
{
	int			n = list_length(mrefs);
	const char **paths = palloc(sizeof(char *) * (n + 1));
	int64	   *lengths = palloc(sizeof(int64) * (n + 1));
	ManifestHelper *helper;
	int			i = 0;
	ListCell   *lc;

	foreach(lc, mrefs)
	{
		paths[i] = ((const ManifestRef *) lfirst(lc))->path;
		lengths[i++] = ((const ManifestRef *) lfirst(lc))->length;
	}
	helper = ManifestHelperStart(paths, lengths, n);
	pfree(paths);
	pfree(lengths);
	return helper;
}

/* prefetch_manifests for a list of manifest paths (read by route) */
static void
prefetch_paths(const SkadeRoute *route, List *paths)
{
	List	   *fetch = NIL;
	ListCell   *lc;

	foreach(lc, paths)
	{
		const char *path = lfirst(lc);

		if (SkadeIsObjectLocation(path) && !ManifestIsCached(path))
			fetch = lappend(fetch, (char *) path);
	}
	if (list_length(fetch) > 1)
		SkadeObjectPrefetch(route, fetch, (size_t) skade_max_metadata_size);
	list_free(fetch);
}

/*
 * The fields of a manifest list entry both manifests() and files() use:
 * v1 has no content or sequence numbers (data, 0); an unassigned (-1)
 * sequence number is the snapshot's; a missing length or spec id is -1.
 */
static void
parse_manifest_ref(const SkadeAvroValue *rec, const SkadeMetaSnapshot *snap, const char *list,
				   ManifestRef *m)
{
	int64		v;
	SkadeAvroValue *arr;

	if (!SkadeAvroText(rec, "manifest_path", &m->path) || m->path[0] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_SKADE_INVALID_FILE),
				 errmsg("manifest list \"%s\" has an entry without manifest_path", list)));
	m->length = SkadeAvroLong(rec, "manifest_length", &v) ? v : -1;
	m->spec_id = SkadeAvroLong(rec, "partition_spec_id", &v) ? (int32) v : -1;
	m->content = SkadeAvroLong(rec, "content", &v) ? (int32) v : 0;
	if (!SkadeAvroLong(rec, "sequence_number", &v))
		v = 0;
	m->sequence_number = v == -1 ? snap->sequence_number : v;
	m->added_snapshot_id = SkadeAvroLong(rec, "added_snapshot_id", &v) ? v : snap->snapshot_id;
	m->nsummaries = 0;
	m->summaries = NULL;
	if (SkadeAvroField(rec, "partitions", &arr))
	{
		int			i;

		m->nsummaries = SkadeAvroArrayLength(arr);
		m->summaries = palloc0(sizeof(PartitionSummary) * (m->nsummaries + 1));
		for (i = 0; i < m->nsummaries; i++)
		{
			SkadeAvroValue *sv = SkadeAvroArrayElement(arr, i);
			PartitionSummary *ps = &m->summaries[i];
			bool		b;
			const char *p;
			size_t		len;

			ps->contains_null = SkadeAvroBool(sv, "contains_null", &b) ? b : -1;
			ps->contains_nan = SkadeAvroBool(sv, "contains_nan", &b) ? b : -1;
			ps->lower.len = ps->upper.len = -1;
			if (SkadeAvroBytes(sv, "lower_bound", &p, &len))
			{
				ps->lower.p = memcpy(palloc(len + 1), p, len);
				ps->lower.len = (int) len;
			}
			if (SkadeAvroBytes(sv, "upper_bound", &p, &len))
			{
				ps->upper.p = memcpy(palloc(len + 1), p, len);
				ps->upper.len = (int) len;
			}
		}
	}
}

/*
 * May a file of this data manifest match the plan's filter, by the
 * manifest list's partition summaries?  True whenever the spec or the
 * summaries are not known.
 */
static bool
manifest_may_match(const ManifestRef *mref, const ScanPlan *plan)
{
	const SkadeMeta *m = plan->meta;
	SkadePartitionField *fields;
	SkadeBoundPartition *parts;
	ColumnStats *stats;
	int			nfields = 0;
	int			i;

	if (mref->nsummaries == 0 || m->partition_specs == 0 || mref->spec_id < 0)
		return true;
	fields = SkadeParsePartitionSpec(SkadeMetaStr(m, m->partition_specs), mref->spec_id,
									 &nfields);
	if (fields == NULL || nfields != mref->nsummaries)
		return true;
	parts = SkadeBindPartition(fields, nfields, plan->table_cols, plan->ntable_cols);
	stats = palloc0(sizeof(ColumnStats) * (plan->ntable_cols + 1));
	for (i = 0; i < nfields; i++)
		SkadeStatsFromSummary(&parts[i], plan->table_cols, mref->summaries[i].contains_null,
							  mref->summaries[i].lower, mref->summaries[i].upper, stats);
	return SkadeFilterMayMatch(plan->filter, plan->table_cols, plan->ntable_cols, stats,
							   mref->path);
}

static List *
read_manifest_list(const SkadeRoute *route, const char *list, const SkadeMetaSnapshot *snap)
{
	SkadeAvroFile *f = ManifestListOpen(route, list);
	const SkadeAvroValue *rec;
	List	   *out = NIL;

	while ((rec = SkadeAvroNext(f)) != NULL)
	{
		ManifestRef *m = palloc0(sizeof(ManifestRef));

		CHECK_FOR_INTERRUPTS();
		parse_manifest_ref(rec, snap, list, m);
		m->route = route;
		out = lappend(out, m);
	}
	SkadeAvroClose(f);
	return out;
}

static void
put_files(ReturnSetInfo *rsinfo, const ManifestRef *mref, const SkadeMeta *m, bool v1,
		  ScanPlan *plan)
{
	/*
	 * The decoded manifest is pinned in the L0.5 cache (or, uncached, lives
	 * in this context); what is derived from it for one entry, and its output
	 * row, live only while that entry is read (tuplestore_putvalues copies
	 * the row).  Held in place until the end of the transaction (fc->held:
	 * outside a transaction block, within the pin budget), its rows' long
	 * values point into it rather than being copied: the tuplestore then
	 * keeps a small row per file, in memory rather than spilled to disk for
	 * a plan of thousands of files.
	 */
	MemoryContext manifest_cxt = AllocSetContextCreate(CurrentMemoryContext,
													   "skade manifest",
													   ALLOCSET_DEFAULT_SIZES);
	MemoryContext entry_cxt = AllocSetContextCreate(manifest_cxt, "skade manifest entry",
													ALLOCSET_DEFAULT_SIZES);
	MemoryContext caller = MemoryContextSwitchTo(manifest_cxt);
	FileContext *fc = palloc0(sizeof(FileContext));
	const SkadeManifest *man = open_manifest(mref, m, v1, true, true, fc);
	const SkadeManifestEntry *e;
	uint32		i;

	for (i = 0, e = SkadeManifestFirst(man); i < man->nentries; i++, e = SkadeManifestNext(e))
	{
		CHECK_FOR_INTERRUPTS();
		MemoryContextSwitchTo(entry_cxt);
		put_file(rsinfo, e, fc, plan);
		MemoryContextSwitchTo(manifest_cxt);
		MemoryContextReset(entry_cxt);
	}
	/* the rows are in the tuplestore: the cache may evict it again (unless held) */
	if (!fc->held)
		ManifestRelease(man);
	MemoryContextSwitchTo(caller);
	MemoryContextDelete(manifest_cxt);
}

/*
 * The decoded manifest of mref, and in fc what reading its entries needs:
 * its schema's columns (its "schema" header, else the table's current
 * schema) and, with spec, its partition spec (its header, else the table's
 * spec of that id).  Allocated in the current memory context.  With hold,
 * held in place until the end of the transaction when the cache can
 * (ManifestGetHeld; fc->held).
 */
static const SkadeManifest *
open_manifest(const ManifestRef *mref, const SkadeMeta *m, bool v1, bool spec, bool hold,
			  FileContext *fc)
{
	const SkadeManifest *man = hold
		? ManifestGetHeld(mref->route, mref->path, mref->length, &fc->held)
		: ManifestGet(mref->route, mref->path, mref->length);
	const char *schema = SkadeManifestStr(man, man->schema);

	if (schema == NULL)
		schema = SkadeMetaStr(m, m->current_schema);
	fc->man = man;
	fc->mref = mref;
	fc->v1 = v1;
	fc->own_schema = man->schema != 0;
	fc->cols = schema ? SkadeParseSchemaColumns(schema, mref->path, &fc->ncols) : NULL;
	if (fc->cols == NULL)
		fc->ncols = 0;
	fc->stats = palloc(sizeof(ColumnStats) * (fc->ncols + 1));
	if (spec)
	{
		const char *header = SkadeManifestStr(man, man->partition_spec);
		SkadePartitionField *fields = NULL;
		int			nfields = 0;

		if (header)
			fields = SkadeParsePartitionSpec(header, -1, &nfields);
		else if (m->partition_specs && mref->spec_id >= 0)
			fields = SkadeParsePartitionSpec(SkadeMetaStr(m, m->partition_specs),
											 mref->spec_id, &nfields);
		if (fields)
		{
			fc->parts = SkadeBindPartition(fields, nfields, fc->cols, fc->ncols);
			fc->nparts = nfields;
		}
	}
	return man;
}

/*
 * Add the live delete files of a delete manifest to the plan's index; what
 * their rows need later (the manifest reference, its FileContext, copies
 * of the entries) lives in the call's context.
 */
static void
index_deletes(const ManifestRef *mref, const SkadeMeta *m, bool v1, ScanPlan *plan)
{
	MemoryContext caller = MemoryContextSwitchTo(plan->cxt);
	FileContext *fc = palloc0(sizeof(FileContext));
	const SkadeManifest *man = open_manifest(mref, m, v1, true, false, fc);
	const SkadeManifestEntry *e;
	bool		unpartitioned;
	bool		matchable = partition_matchable(fc, &unpartitioned);
	uint32		i;

	for (i = 0, e = SkadeManifestFirst(man); i < man->nentries; i++, e = SkadeManifestNext(e))
	{
		int64		seq;
		bool		known = entry_data_seq(e, fc, &seq);

		CHECK_FOR_INTERRUPTS();
		if (e->content != 0)
			SkadeDeleteIndexAdd(plan->deletes, e, mref->spec_id, partition_key(fc, e),
								matchable && e->npartition == fc->nparts, unpartitioned,
								known, seq, fc);
	}
	/* the index holds copies of the entries */
	ManifestRelease(man);
	MemoryContextSwitchTo(caller);
}

/*
 * An entry's data sequence number, false if it is not known: recorded, or
 * inherited from the manifest by an ADDED entry (v1 has none: 0).
 */
static bool
entry_data_seq(const SkadeManifestEntry *e, const FileContext *fc, int64 *seq)
{
	if (e->flags & SKADE_ME_SEQ)
		*seq = e->sequence_number;
	else if (fc->v1)
		*seq = 0;
	else
	{
		*seq = fc->mref->sequence_number;
		return e->status == 1;
	}
	return true;
}

static void
put_file(ReturnSetInfo *rsinfo, const SkadeManifestEntry *e, const FileContext *fc,
		 ScanPlan *plan)
{
	const ManifestRef *mref = fc->mref;
	const SkadeColumn *cols = fc->cols;
	int			ncols = fc->ncols;
	ColumnStats *stats = fc->stats;
	Datum		values[FILES_COLS];
	bool		nulls[FILES_COLS] = {0};
	const char *format = SkadeManifestStr(e, e->format);
	int			i;

	/* per-column statistics, by position in cols; a pruned file ends here */
	ManifestEntryStats(e, cols, ncols, stats);
	if (plan && e->content == 0)
	{
		if (!SkadeFilterMayMatch(plan->filter, cols, ncols, stats, mref->path))
			return;
		if (fc->parts)
		{
			/* the partition values, projected onto their source columns */
			ColumnStats *pstats = palloc(sizeof(ColumnStats) * (ncols + 1));
			SkadePartitionDatum *pv = palloc(sizeof(SkadePartitionDatum) * (fc->nparts + 1));
			const SkadeManifestValue *vals = SkadeManifestPartition(e);

			memcpy(pstats, stats, sizeof(ColumnStats) * (ncols + 1));
			for (i = 0; i < fc->nparts; i++)
			{
				pv[i].len = i < e->npartition ? vals[i].len : -2;
				pv[i].p = pv[i].len >= 0 ? ((const char *) e) + vals[i].off : NULL;
			}
			/* a spec wider than the record: the extra fields are unknown */
			if (fc->nparts <= e->npartition)
			{
				SkadeStatsFromPartition(fc->parts, fc->nparts, cols, pv, pstats);
				if (!SkadeFilterMayMatch(plan->filter, cols, ncols, pstats, mref->path))
					return;
			}
		}
	}

	values[0] = CStringGetTextDatum(file_contents[e->content]);
	/* long values point into a held blob: the row is small */
	values[1] = fc->held ? SkadeBlobIndirect(SkadeManifestText(e, e->path))
		: CStringGetTextDatum(SkadeManifestStr(e, e->path));
	nulls[2] = format == NULL;
	values[2] = nulls[2] ? (Datum) 0 : CStringGetTextDatum(format);
	nulls[3] = mref->spec_id < 0;
	values[3] = Int32GetDatum(mref->spec_id);
	/* as manifests() shows partitions when the spec is known, else as stored */
	if (fc->parts && fc->nparts == e->npartition)
		values[4] = partition_values_jsonb(fc, e);
	else
		values[4] = PointerGetDatum(((const char *) e) + e->partition_jsonb);
	nulls[5] = !(e->flags & SKADE_ME_RECORD_COUNT);
	values[5] = Int64GetDatum(e->record_count);
	nulls[6] = !(e->flags & SKADE_ME_FILE_SIZE);
	values[6] = Int64GetDatum(e->file_size);
	/* the statistics as jsonb, by column name: precomputed when the cache could */
	if (e->columns_jsonb && fc->own_schema)
		values[7] = fc->held ?
			SkadeBlobIndirect((const struct varlena *) (((const char *) e) + e->columns_jsonb)) :
			PointerGetDatum(((const char *) e) + e->columns_jsonb);
	else
		values[7] = SkadeColumnsJsonb(cols, ncols, stats, mref->path);

	values[8] = CStringGetTextDatum(e->status == 1 ? "added" : "existing");
	values[9] = Int64GetDatum((e->flags & SKADE_ME_SNAPSHOT_ID) ? e->snapshot_id
							  : mref->added_snapshot_id);
	/* inherited only by ADDED entries; v1 has no sequence numbers */
	{
		int64		seq;

		nulls[10] = !entry_data_seq(e, fc, &seq);
		values[10] = Int64GetDatum(seq);
	}
	if (e->flags & SKADE_ME_FILE_SEQ)
		values[11] = Int64GetDatum(e->file_sequence_number);
	else if (fc->v1)
		values[11] = Int64GetDatum(0);
	else
	{
		nulls[11] = e->status != 1;
		values[11] = Int64GetDatum(mref->sequence_number);
	}
	values[12] = fc->held ? SkadeBlobIndirect(SkadeManifestText(fc->man, fc->man->path_text))
		: CStringGetTextDatum(mref->path);
	/* what a reader needs to apply a delete file */
	nulls[13] = e->nequality < 0;
	if (!nulls[13])
	{
		const int32 *ids = (const int32 *) (((const char *) e) + e->equality_ids);
		Datum	   *d = palloc(sizeof(Datum) * (e->nequality + 1));
		int			k;

		for (k = 0; k < e->nequality; k++)
			d[k] = Int32GetDatum(ids[k]);
		values[13] = PointerGetDatum(construct_array(d, e->nequality, INT4OID, 4, true,
													 TYPALIGN_INT));
	}
	nulls[14] = e->referenced_data_file == 0;
	values[14] = nulls[14] ? (Datum) 0 :
		CStringGetTextDatum(SkadeManifestStr(e, e->referenced_data_file));
	nulls[15] = !(e->flags & SKADE_ME_CONTENT_OFFSET);
	values[15] = Int64GetDatum(e->content_offset);
	nulls[16] = !(e->flags & SKADE_ME_CONTENT_SIZE);
	values[16] = Int64GetDatum(e->content_size);
	/* plan_files(): the delete files that apply to this data file */
	nulls[17] = plan == NULL;
	if (plan)
	{
		List	   *dels = NIL;
		Datum	   *paths;
		ListCell   *lc;
		int			n = 0;

		bool		unpartitioned;

		if (plan->deletes)
			dels = SkadeDeletesFor(plan->deletes, e, partition_key(fc, e),
								   partition_matchable(fc, &unpartitioned) &&
								   e->npartition == fc->nparts,
								   !nulls[10], DatumGetInt64(values[10]), cols, ncols, stats);
		paths = palloc(sizeof(Datum) * (list_length(dels) + 1));
		foreach(lc, dels)
		{
			SkadeDeleteFile *d = lfirst(lc);

			paths[n++] = CStringGetTextDatum(SkadeManifestStr(d->entry, d->entry->path));
		}
		values[17] = PointerGetDatum(construct_array(paths, n, TEXTOID, -1, false, TYPALIGN_INT));
	}
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/*
 * The key of an entry's partition for matching delete files: a hash of the
 * spec id and the values in spec order (not the Avro field names, which
 * writers escape differently), ints of identity and truncate fields
 * widened to 8 bytes so that an int promoted to long keeps its partitions.
 */
static uint64
partition_key(const FileContext *fc, const SkadeManifestEntry *e)
{
	const SkadeManifestValue *vals = SkadeManifestPartition(e);
	uint64		h = (uint64) (uint32) fc->mref->spec_id;
	int			i;

	for (i = 0; i < e->npartition; i++)
	{
		const char *p = ((const char *) e) + vals[i].off;
		int			len = vals[i].len;
		unsigned char wide[8];

		if (len == 4 && fc->parts && i < fc->nparts &&
			(fc->parts[i].transform == SKADE_TR_IDENTITY ||
			 fc->parts[i].transform == SKADE_TR_TRUNCATE) &&
			fc->parts[i].source >= 0 && strcmp(fc->cols[fc->parts[i].source].type, "int") == 0)
		{
			int64		v = SkadeLeInt(p, 4);
			int			k;

			for (k = 0; k < 8; k++)
				wide[k] = (unsigned char) (((uint64) v) >> (8 * k));
			p = (const char *) wide;
			len = 8;
		}
		h = hash_bytes_extended((const unsigned char *) &len, sizeof(len), h);
		if (len > 0)
			h = hash_bytes_extended((const unsigned char *) p, len, h);
	}
	return h;
}

/*
 * Can the partitions of this manifest's files be matched by their values?
 * Not if the spec is unknown, nor if an identity or truncate field has a
 * float, double or decimal source, whose values a type promotion writes
 * differently for the same partition.  *unpartitioned: the spec has no
 * field but void ones (Iceberg's equality deletes are global then).
 */
static bool
partition_matchable(const FileContext *fc, bool *unpartitioned)
{
	int			i;

	*unpartitioned = true;
	if (fc->parts == NULL || fc->mref->spec_id < 0)
		return false;
	for (i = 0; i < fc->nparts; i++)
	{
		const SkadeBoundPartition *p = &fc->parts[i];

		if (p->transform == SKADE_TR_VOID)
			continue;
		*unpartitioned = false;
		if ((p->transform == SKADE_TR_IDENTITY || p->transform == SKADE_TR_TRUNCATE) &&
			(p->source < 0 || strcmp(fc->cols[p->source].type, "float") == 0 ||
			 strcmp(fc->cols[p->source].type, "double") == 0 ||
			 strncmp(fc->cols[p->source].type, "decimal", 7) == 0))
			return false;
	}
	return true;
}

/*
 * Arguments (namespace, name, ..., snapshot_id at argno, catalog after it): the table's metadata
 * and the snapshot (NULL: the table has none yet), which must have a
 * manifest list, and the route its files are read by.  Also sets up the
 * materialised result.
 */
static const SkadeMetaSnapshot *
snapshot_arg(FunctionCallInfo fcinfo, int argno, SkadeMeta **meta, SkadeRoute *route)
{
	const char *catalog;
	char	   *ns;
	char	   *name;
	StoreTable	t;
	L0Result	r;
	const SkadeMetaSnapshot *snap;

	SkadeTableArgs(fcinfo, argno + 1, &catalog, &ns, &name, &t);
	route->catalog = catalog;
	route->ns = ns;
	route->resolved = NULL;
	L0Fetch(route, SkadeRequireMetadataLocation(ns, name, &t), L0_WANT_SUMMARY, &r);
	snap = require_snapshot(r.summary, ns, name, !PG_ARGISNULL(argno),
							PG_ARGISNULL(argno) ? 0 : PG_GETARG_INT64(argno));
	if (snap != NULL && snap->manifest_list == 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("snapshot %lld of table \"%s.%s\" has no manifest list",
						(long long) snap->snapshot_id, ns, name),
				 errdetail("Format v1 snapshots that embed a \"manifests\" array are not read.")));
	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	*meta = r.summary;
	return snap;
}

/* the given snapshot, or the current one (NULL if the table has none) */
static const SkadeMetaSnapshot *
require_snapshot(const SkadeMeta *m, const char *ns, const char *name, bool given, int64 id)
{
	const SkadeMetaSnapshot *s;

	if (!given)
	{
		if (m->current_snapshot_id == SKADE_NO_SNAPSHOT)
			return NULL;
		id = m->current_snapshot_id;
	}
	if ((s = SkadeMetaSnapshotById(m, id)) != NULL)
		return s;
	ereport(ERROR,
			(errcode(ERRCODE_NO_DATA_FOUND),
			 errmsg("table \"%s.%s\" has no snapshot %lld", ns, name, (long long) id),
			 errhint("skade.snapshots() lists the snapshots the table's metadata keeps.")));
	pg_unreachable();
}

static void
put_manifest(ReturnSetInfo *rsinfo, const SkadeAvroValue *rec, const SkadeMetaSnapshot *snap,
			 const char *list, const SkadeMeta *m, const SkadeColumn *cols, int ncols)
{
	Datum		values[MANIFESTS_COLS];
	bool		nulls[MANIFESTS_COLS] = {0};
	ManifestRef mref;
	int64		v;

	parse_manifest_ref(rec, snap, list, &mref);
	values[0] = CStringGetTextDatum(mref.path);
	nulls[1] = mref.length < 0;
	values[1] = Int64GetDatum(mref.length);
	nulls[2] = mref.spec_id < 0;
	values[2] = Int32GetDatum(mref.spec_id);
	values[3] = CStringGetTextDatum(mref.content == 1 ? "deletes" : "data");
	values[4] = Int64GetDatum(mref.sequence_number);
	if (!SkadeAvroLong(rec, "min_sequence_number", &v))
		v = 0;
	values[5] = Int64GetDatum(v == -1 ? snap->sequence_number : v);
	values[6] = Int64GetDatum(mref.added_snapshot_id);
	values[7] = Int32GetDatum((int32) long_either(rec, "added_files_count",
												  "added_data_files_count", &nulls[7]));
	values[8] = Int32GetDatum((int32) long_either(rec, "existing_files_count",
												  "existing_data_files_count", &nulls[8]));
	values[9] = Int32GetDatum((int32) long_either(rec, "deleted_files_count",
												  "deleted_data_files_count", &nulls[9]));
	values[10] = Int64GetDatum(long_either(rec, "added_rows_count", NULL, &nulls[10]));
	values[11] = Int64GetDatum(long_either(rec, "existing_rows_count", NULL, &nulls[11]));
	values[12] = Int64GetDatum(long_either(rec, "deleted_rows_count", NULL, &nulls[12]));
	values[13] = partition_summaries(&mref, m, cols, ncols);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/* a count under its v2 name or its v1 name */
static int64
long_either(const SkadeAvroValue *rec, const char *v2, const char *v1, bool *isnull)
{
	int64		v = 0;

	*isnull = !SkadeAvroLong(rec, v2, &v) && (v1 == NULL || !SkadeAvroLong(rec, v1, &v));
	return v;
}

/*
 * [{"field": .., "transform": .., "contains_null": .., "contains_nan": ..,
 *   "lower_bound": .., "upper_bound": ..}]: the summaries of the manifest's
 * partition fields, bounds decoded by the field's transform (identity and
 * truncate by the source column's type, year "2024", month "2024-03", day
 * "2024-03-01", hour "2024-03-01-08", bucket the number).  Without the spec
 * (or when it does not match) the bounds stay hex and field is null.
 */
static Datum
partition_summaries(const ManifestRef *mref, const SkadeMeta *m, const SkadeColumn *cols,
					int ncols)
{
	SkadePartitionField *fields = NULL;
	SkadeBoundPartition *parts = NULL;
	JsonbParseState *state = NULL;
	JsonbValue	v;
	int			nfields = 0;
	int			i,
				k;

	if (m->partition_specs && mref->spec_id >= 0)
		fields = SkadeParsePartitionSpec(SkadeMetaStr(m, m->partition_specs), mref->spec_id,
										 &nfields);
	if (fields && nfields == mref->nsummaries)
		parts = SkadeBindPartition(fields, nfields, cols, ncols);
	pushJsonbValue(&state, WJB_BEGIN_ARRAY, NULL);
	for (i = 0; i < mref->nsummaries; i++)
	{
		const PartitionSummary *ps = &mref->summaries[i];
		int			flags[2] = {ps->contains_null, ps->contains_nan};
		static const char *const flag_keys[] = {"contains_null", "contains_nan"};

		pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
		pushJsonbValue(&state, WJB_KEY, SkadeJbString(&v, "field"));
		pushJsonbValue(&state, WJB_VALUE, parts ? SkadeJbString(&v, parts[i].field->name)
					   : SkadeJbNull(&v));
		if (parts)
		{
			pushJsonbValue(&state, WJB_KEY, SkadeJbString(&v, "transform"));
			pushJsonbValue(&state, WJB_VALUE, SkadeJbString(&v, parts[i].field->transform));
		}
		for (k = 0; k < 2; k++)
		{
			pushJsonbValue(&state, WJB_KEY, SkadeJbString(&v, flag_keys[k]));
			pushJsonbValue(&state, WJB_VALUE, flags[k] < 0 ? SkadeJbNull(&v)
						   : SkadeJbBool(&v, flags[k] != 0));
		}
		for (k = 0; k < 2; k++)
		{
			SkadePartitionDatum d = k == 0 ? ps->lower : ps->upper;

			pushJsonbValue(&state, WJB_KEY, SkadeJbString(&v, k == 0 ? "lower_bound" : "upper_bound"));
			if (d.len < 0)
				SkadeJbNull(&v);
			else if (parts)
				transform_result_jsonb(&parts[i], cols, d, mref->path, &v);
			else
				SkadeHexJsonb(d.p, d.len, &v);
			pushJsonbValue(&state, WJB_VALUE, &v);
		}
		pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	}
	return JsonbPGetDatum(JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_ARRAY, NULL)));
}

/*
 * A file's partition as {"field": value}, each value as manifests() shows
 * partition bounds (transform_result_jsonb): identity and truncate in the
 * source column's type, year "2024", month "2024-03", day "2024-03-01",
 * hour "2024-03-01-08", bucket the number; a null value is JSON null.
 */
static Datum
partition_values_jsonb(const FileContext *fc, const SkadeManifestEntry *e)
{
	JsonbPair  *pairs = palloc(sizeof(JsonbPair) * (fc->nparts + 1));
	const SkadeManifestValue *vals = SkadeManifestPartition(e);
	int			i;

	for (i = 0; i < fc->nparts; i++)
	{
		JsonbValue *v = &pairs[i].value;

		SkadeJbString(&pairs[i].key, fc->parts[i].field->name);
		if (vals[i].len < 0)
			SkadeJbNull(v);
		else
		{
			SkadePartitionDatum d;

			d.p = ((const char *) e) + vals[i].off;
			d.len = vals[i].len;
			transform_result_jsonb(&fc->parts[i], fc->cols, d, fc->mref->path, v);
		}
	}
	/* as pushJsonbValue() would order them, without its generic machinery */
	return SkadeJsonbObject(pairs, fc->nparts);
}

/* a partition value (transform result) as readable JSON; see partition_summaries() */
static void
transform_result_jsonb(const SkadeBoundPartition *part, const SkadeColumn *cols,
					   SkadePartitionDatum d, const char *file, JsonbValue *out)
{
	SkadeTransform tr = part->transform;
	int32		t;

	if ((tr == SKADE_TR_IDENTITY || tr == SKADE_TR_TRUNCATE) && part->source >= 0)
	{
		SkadeBoundJsonb(&cols[part->source], d.p, d.len, "partition", file, out);
		return;
	}
	if (d.len != 4 || tr == SKADE_TR_IDENTITY || tr == SKADE_TR_TRUNCATE ||
		tr == SKADE_TR_OTHER || tr == SKADE_TR_VOID)
	{
		SkadeHexJsonb(d.p, d.len, out);
		return;
	}
	t = (int32) SkadeLeInt(d.p, 4);
	switch (tr)
	{
		case SKADE_TR_YEAR:
			SkadeJbString(out, psprintf("%04d", 1970 + t));
			break;
		case SKADE_TR_MONTH:
			{
				int			y = t >= 0 ? t / 12 : -((-t + 11) / 12);

				SkadeJbString(out, psprintf("%04d-%02d", 1970 + y, t - y * 12 + 1));
				break;
			}
		case SKADE_TR_DAY:
		case SKADE_TR_HOUR:
			{
				int			year,
							month,
							day;
				int			days = tr == SKADE_TR_DAY ? t :
					(t >= 0 ? t / 24 : -((-t + 23) / 24));

				j2date(days + UNIX_EPOCH_JDATE, &year, &month, &day);
				SkadeJbString(out, tr == SKADE_TR_DAY ?
							  psprintf("%04d-%02d-%02d", year, month, day) :
							  psprintf("%04d-%02d-%02d-%02d", year, month, day, t - days * 24));
				break;
			}
		default:
			SkadeJbInt(out, t);	/* bucket */
	}
}


/* ------------------------------------------------------- expire_snapshots */

static int
cmp_int64(const void *a, const void *b)
{
	int64		x = *(const int64 *) a;
	int64		y = *(const int64 *) b;

	return x < y ? -1 : x > y;
}

/* a set of paths without duplicates: hashed, other paths of a hash chained */
typedef struct PathEntry
{
	uint64		key;
	char	   *path;
	List	   *more;
} PathEntry;

typedef struct PathHash
{
	HTAB	   *h;
	MemoryContext cxt;			/* where the paths are copied */
} PathHash;

static void
pathhash_init(PathHash *ph, const char *name)
{
	HASHCTL		ctl;

	ctl.keysize = sizeof(uint64);
	ctl.entrysize = sizeof(PathEntry);
	ctl.hcxt = CurrentMemoryContext;
	ph->cxt = CurrentMemoryContext;
	ph->h = hash_create(name, 1024, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
}

/* with add, add path (copied) unless present; true if it was not present */
static bool
pathhash_add(PathHash *ph, const char *path, bool add)
{
	uint64		key = hash_bytes_extended((const unsigned char *) path, strlen(path), 0);
	bool		found;
	PathEntry  *e = hash_search(ph->h, &key, add ? HASH_ENTER : HASH_FIND, &found);
	ListCell   *lc;
	MemoryContext old;

	if (!found)
	{
		if (add)
		{
			e->path = MemoryContextStrdup(ph->cxt, path);
			e->more = NIL;
		}
		return true;
	}
	if (strcmp(e->path, path) == 0)
		return false;
	foreach(lc, e->more)
		if (strcmp((char *) lfirst(lc), path) == 0)
			return false;
	if (add)
	{
		old = MemoryContextSwitchTo(ph->cxt);
		e->more = lappend(e->more, pstrdup(path));
		MemoryContextSwitchTo(old);
	}
	return true;
}

static bool
pathhash_has(PathHash *ph, const char *path)
{
	return !pathhash_add(ph, path, false);
}

static void
put_path(ReturnSetInfo *rsinfo, const char *path, const char *kind)
{
	Datum		values[2] = {CStringGetTextDatum(path), CStringGetTextDatum(kind)};
	bool		nulls[2] = {false, false};

	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/*
 * Read a manifest list: without gone, every manifest path into kept; with
 * gone, the full reference of each manifest kept does not hold is appended
 * to *gone (in the caller's context).
 */
static void
scan_list(const SkadeRoute *route, const char *list, const SkadeMetaSnapshot *snap,
		  PathHash *kept, List **gone)
{
	MemoryContext caller = CurrentMemoryContext;

	/* the file's bytes and decoded blocks go with it (thousands are read) */
	MemoryContext list_cxt = AllocSetContextCreate(caller, "skade expire list",
												   ALLOCSET_DEFAULT_SIZES);
	MemoryContext rec_cxt = AllocSetContextCreate(list_cxt, "skade expire list entry",
												  ALLOCSET_SMALL_SIZES);
	SkadeAvroFile *f;
	const SkadeAvroValue *rec;

	MemoryContextSwitchTo(list_cxt);
	f = ManifestListOpen(route, list);
	MemoryContextSwitchTo(rec_cxt);
	while ((rec = SkadeAvroNext(f)) != NULL)
	{
		char	   *path;

		CHECK_FOR_INTERRUPTS();
		if (!SkadeAvroText(rec, "manifest_path", &path) || path[0] == '\0')
			ereport(ERROR,
					(errcode(ERRCODE_SKADE_INVALID_FILE),
					 errmsg("manifest list \"%s\" has an entry without manifest_path", list)));
		MemoryContextSwitchTo(caller);
		if (gone == NULL)
			pathhash_add(kept, path, true);
		else if (!pathhash_has(kept, path))
		{
			ManifestRef *ref = palloc0(sizeof(ManifestRef));

			parse_manifest_ref(rec, snap, list, ref);
			ref->route = route;
			*gone = lappend(*gone, ref);
		}
		MemoryContextSwitchTo(rec_cxt);
		MemoryContextReset(rec_cxt);
	}
	MemoryContextSwitchTo(caller);
	SkadeAvroClose(f);
	MemoryContextDelete(list_cxt);
}

/*
 * The live files of a manifest, each added to seen; with rsinfo, each that
 * is new to seen and not in kept is returned (kind as files()'s content).
 */
static void
manifest_files(const ManifestRef *mref, const SkadeMeta *m, PathHash *seen, PathHash *kept,
			   ReturnSetInfo *rsinfo)
{
	MemoryContext caller = CurrentMemoryContext;
	MemoryContext cxt = AllocSetContextCreate(caller, "skade expire manifest",
											  ALLOCSET_DEFAULT_SIZES);
	FileContext fc = {0};
	const SkadeManifest *man;
	const SkadeManifestEntry *e;
	uint32		i;

	/* an uncached manifest is decoded into cxt, and goes with it */
	MemoryContextSwitchTo(cxt);
	man = open_manifest(mref, m, m->format_version < 2, false, false, &fc);
	MemoryContextSwitchTo(caller);
	for (i = 0, e = SkadeManifestFirst(man); i < man->nentries; i++, e = SkadeManifestNext(e))
	{
		const char *path = SkadeManifestStr(e, e->path);

		CHECK_FOR_INTERRUPTS();
		if (pathhash_add(seen, path, true) && rsinfo && !pathhash_has(kept, path))
			put_path(rsinfo, path, file_contents[e->content]);
	}
	ManifestRelease(man);
	MemoryContextDelete(cxt);
}

/*
 * skade.expire_files(namespace, name, expired bigint[], catalog) -> setof
 *		(file_path, kind): what expiring these snapshots leaves unreachable
 *		-- their manifest lists; the manifests they list that no other
 *		snapshot lists; the live data and delete files of those manifests
 *		that no other snapshot's manifests hold (kind as files()'s content).
 *
 * Each manifest list is read once and only its paths are kept, so a table
 * of n appends costs the list entries, not n calls of manifests(); the
 * other snapshots' manifests are read only when some manifest goes.
 */
Datum
skade_expire_files(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	const char *catalog;
	char	   *ns;
	char	   *name;
	StoreTable	t;
	L0Result	r;
	const SkadeMetaSnapshot *snaps;
	ArrayType  *arr;
	Datum	   *elems;
	bool	   *enulls;
	int64	   *expired;
	int			nexp;
	int			nids = 0;
	PathHash	kept;
	PathHash	kept_lists;
	List	   *gone = NIL;
	uint32		i;
	SkadeRoute	route = {NULL, NULL, NULL};

	if (PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("expired must not be NULL")));
	SkadeTableArgs(fcinfo, 3, &catalog, &ns, &name, &t);
	route.catalog = catalog;
	route.ns = ns;
	L0Fetch(&route, SkadeRequireMetadataLocation(ns, name, &t), L0_WANT_SUMMARY, &r);
	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	snaps = SkadeMetaSnapshots(r.summary);
	arr = PG_GETARG_ARRAYTYPE_P(2);
	deconstruct_array(arr, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &elems, &enulls, &nexp);
	expired = palloc(sizeof(int64) * (nexp + 1));
	for (i = 0; i < (uint32) nexp; i++)
		if (!enulls[i])
			expired[nids++] = DatumGetInt64(elems[i]);
	qsort(expired, nids, sizeof(int64), cmp_int64);
	pathhash_init(&kept, "skade remaining manifests");
	pathhash_init(&kept_lists, "skade remaining manifest lists");

	/* the manifests the remaining snapshots list */
	for (i = 0; i < r.summary->nsnapshots; i++)
	{
		const char *list = SkadeMetaStr(r.summary, snaps[i].manifest_list);

		if (list == NULL ||
			bsearch(&snaps[i].snapshot_id, expired, nids, sizeof(int64), cmp_int64) != NULL)
			continue;
		pathhash_add(&kept_lists, list, true);
		scan_list(&route, list, &snaps[i], &kept, NULL);
	}

	/* the expired snapshots' lists, and their manifests no one else lists */
	for (i = 0; i < r.summary->nsnapshots; i++)
	{
		const char *list = SkadeMetaStr(r.summary, snaps[i].manifest_list);

		if (list == NULL ||
			bsearch(&snaps[i].snapshot_id, expired, nids, sizeof(int64), cmp_int64) == NULL)
			continue;
		if (!pathhash_has(&kept_lists, list))
			put_path(rsinfo, list, "manifest-list");
		scan_list(&route, list, &snaps[i], &kept, &gone);
	}
	if (gone == NIL)
		return (Datum) 0;

	/* the live files of those, unless a remaining manifest holds them too */
	{
		PathHash	kept_files;
		PathHash	gone_manifests;
		PathHash	gone_files;
		HASH_SEQ_STATUS seq;
		PathEntry  *pe;
		ListCell   *lc;

		/* each remaining manifest once (fetched a window at a time from S3) */
		List	   *remaining = NIL;

		pathhash_init(&kept_files, "skade remaining files");
		hash_seq_init(&seq, kept.h);
		while ((pe = hash_seq_search(&seq)) != NULL)
			remaining = list_concat(lappend(remaining, pe->path), pe->more);
		prefetch_paths(&route, remaining);
		foreach(lc, remaining)
		{
			ManifestRef ref = {0};

			ref.length = -1;
			ref.spec_id = -1;
			ref.path = lfirst(lc);
			ref.route = &route;
			manifest_files(&ref, r.summary, &kept_files, NULL, NULL);
		}
		/* each manifest that goes once (several expired snapshots may list it) */
		pathhash_init(&gone_manifests, "skade manifests that go");
		pathhash_init(&gone_files, "skade files that go");
		prefetch_manifests(&route, gone);
		foreach(lc, gone)
		{
			ManifestRef *ref = lfirst(lc);

			if (!pathhash_add(&gone_manifests, ref->path, true))
				continue;
			put_path(rsinfo, ref->path, "manifest");
			manifest_files(ref, r.summary, &gone_files, &kept_files, rsinfo);
		}
	}
	return (Datum) 0;
}
