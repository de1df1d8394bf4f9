/*-------------------------------------------------------------------------
 *
 * time_travel_api.c
 *	  SQL-callable time travel: skade.resolve_many(),
 *	  skade.resolve_locations(), skade.load_table_at(),
 *	  skade.load_table_as_of(), and skade_test.index_check() (tree vs heap).
 *
 * Snapshot ids resolve through IndexResolve (the STree64 index where it
 * answers as the heap would, else skade.snapshot_map); "as of" a time
 * binary-searches the snapshot log of the table's current metadata from
 * the L0 summary, O(log n).  "snapshots" selects the metadata returned, as
 * for load_table: 'all', 'refs' or 'none'.  resolve_many works in chunks so that a huge
 * array never needs more than one chunk's lookups in memory besides the
 * result tuplestore (which spills to disk past work_mem); resolve_locations
 * answers the same ids as one text[] (bounded by the 1 GB of a value),
 * built in place without a row per id.
 *
 * IDENTIFICATION
 *	  src/api/time_travel_api.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "catalog/pg_collation.h"
#include "catalog/pg_type.h"
#include "datatype/timestamp.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "nodes/supportnodes.h"
#include "optimizer/optimizer.h"
#include "utils/array.h"
#include "utils/arrayaccess.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/selfuncs.h"
#include "utils/timestamp.h"

#include "api/api.h"
#include "util/guc.h"
#include "cache/l0_cache.h"
#include "util/names.h"
#include "catalog/privileges.h"
#include "util/shmem.h"
#include "index/snapshot_index.h"
#include "index/snapshot_map.h"

static Datum load_table_at(FunctionCallInfo fcinfo, int catalog_arg, int snapshots_arg);
static Datum load_table_as_of(FunctionCallInfo fcinfo, int catalog_arg, int snapshots_arg);

PG_FUNCTION_INFO_V1(skade_resolve_many);
PG_FUNCTION_INFO_V1(skade_resolve_locations);
PG_FUNCTION_INFO_V1(skade_resolve_many_support);
PG_FUNCTION_INFO_V1(skade_load_table_at);
PG_FUNCTION_INFO_V1(skade_load_table_at_1_1);
PG_FUNCTION_INFO_V1(skade_load_table_as_of);
PG_FUNCTION_INFO_V1(skade_load_table_as_of_1_1);
PG_FUNCTION_INFO_V1(skade_index_check);

#define RESOLVE_CHUNK	65536

static void resolve_chunked(ArrayType *arr, const char *catalog, const char *ns,
							const char *name, void (*emit) (int64 ord, bool isnull, int64 id,
															const SnapshotHit *h, void *arg),
							void *arg);
/* resolve_many's rows: the result set, and a buffer for a location's text */
typedef struct RowSink
{
	ReturnSetInfo *rsinfo;
	StringInfoData text;
} RowSink;

static void emit_row(int64 ord, bool isnull, int64 id, const SnapshotHit *h, void *arg);
static ArrayType *snapshot_ids_arg(FunctionCallInfo fcinfo);

/*
 * resolve_locations' answer as it grows: the text[] itself, its header
 * (with room for a null bitmap) reserved first, then the elements
 */
typedef struct LocationArray
{
	StringInfoData data;		/* header, then elements: 4-byte headers, int-aligned */
	bool	   *nulls;			/* [n] */
	bool		any_null;
	int			n;
} LocationArray;

static void emit_location(int64 ord, bool isnull, int64 id, const SnapshotHit *h, void *arg);
static ArrayType *location_array(LocationArray *a, int n);
static Datum load_at(FunctionCallInfo fcinfo, const char *catalog, const char *ns,
					 const char *name, int64 snapshot_id, TimestampTz made_current_at,
					 bool with_time, int want);

/* a binary search of a snapshot log, run in place on the cached summary */
typedef struct LogSearch
{
	int64		ts_ms;			/* in: find the last entry at or before this */
	bool		found;			/* out */
	int64		snapshot_id;
	int64		timestamp_ms;
	uint32		nlog;
	int64		first_ms;
} LogSearch;

static void search_log(const SkadeMeta *meta, void *arg);
static void forget_unreadable(SnapshotHit *hits, int n);
static bool text_eq(Datum a, Datum b);
static int64 timestamptz_to_ms(TimestampTz ts);

/*
 * skade.resolve_many(snapshot_ids bigint[]) -> setof (snapshot_id, catalog,
 *		namespace, name, metadata_location)
 *
 * One row per input element, in input order; NULL columns for unknown ids
 * and NULL elements.
 */
Datum
skade_resolve_many(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ArrayType  *arr = snapshot_ids_arg(fcinfo);
	RowSink		sink;

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	sink.rsinfo = rsinfo;
	initStringInfo(&sink.text);
	resolve_chunked(arr, NULL, NULL, NULL, emit_row, &sink);
	return (Datum) 0;
}

/*
 * skade.resolve_locations(snapshot_ids bigint[]) -> text[]
 *
 * resolve_many's metadata_location column as one array, in input order
 * (NULL for unknown ids and NULL elements): the same answers, without a
 * row per id to form, materialise and scan.
 */
Datum
skade_resolve_locations(PG_FUNCTION_ARGS)
{
	ArrayType  *arr = snapshot_ids_arg(fcinfo);
	int			n = ArrayGetNItems(ARR_NDIM(arr), ARR_DIMS(arr));
	LocationArray a;

	if (n == 0)
		PG_RETURN_ARRAYTYPE_P(construct_empty_array(TEXTOID));
	initStringInfo(&a.data);
	/* room for the header and a null bitmap, and ~64 bytes per location */
	enlargeStringInfo(&a.data, ARR_OVERHEAD_WITHNULLS(1, n) +
					  Min((Size) n * 64, MaxAllocSize / 2));
	a.data.len = ARR_OVERHEAD_WITHNULLS(1, n);
	a.nulls = palloc0(sizeof(bool) * n);
	a.any_null = false;
	a.n = n;
	resolve_chunked(arr, NULL, NULL, NULL, emit_location, &a);
	PG_RETURN_ARRAYTYPE_P(location_array(&a, n));
}

/* The snapshot_ids argument, checked; the JDBC tables attached. */
static ArrayType *
snapshot_ids_arg(FunctionCallInfo fcinfo)
{
	ArrayType  *arr;

	SkadeRequireShared();
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("snapshot_ids must not be NULL")));
	arr = PG_GETARG_ARRAYTYPE_P(0);
	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("snapshot_ids must be a one-dimensional array")));
	StoreRequireAttached();
	return arr;
}

/* Append one answer to the array being built (its text copied: the chunk goes). */
static void
emit_location(int64 ord, bool isnull, int64 id, const SnapshotHit *h, void *arg)
{
	LocationArray *a = (LocationArray *) arg;
	text	   *t;
	const char *src;
	Size		len;

	if (isnull || !h->found)
	{
		a->nulls[ord - 1] = true;
		a->any_null = true;
		return;
	}
	if (h->raw_location)
	{
		src = h->raw_location;
		len = VARHDRSZ + strlen(src);
	}
	else
	{
		t = DatumGetTextPP(h->location);
		src = VARDATA_ANY(t);
		len = VARHDRSZ + VARSIZE_ANY_EXHDR(t);
	}
	if ((Size) a->data.len + INTALIGN(len) >= MaxAllocSize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("the locations of " INT64_FORMAT " snapshot ids exceed the size of an array",
						ord),
				 errhint("Resolve fewer ids at a time, or use skade.resolve_many().")));
	enlargeStringInfo(&a->data, INTALIGN(len));
	SET_VARSIZE(a->data.data + a->data.len, len);
	memcpy(a->data.data + a->data.len + VARHDRSZ, src, len - VARHDRSZ);
	memset(a->data.data + a->data.len + len, 0, INTALIGN(len) - len);
	a->data.len += INTALIGN(len);
}

/*
 * The text[] of n elements a holds, its header written in place (no copy
 * of the elements): with a null bitmap only when an element is NULL, else
 * the elements move down over the room reserved for it.
 */
static ArrayType *
location_array(LocationArray *a, int n)
{
	ArrayType  *result = (ArrayType *) a->data.data;
	Size		reserved = ARR_OVERHEAD_WITHNULLS(1, n);
	Size		nbytes = a->data.len - reserved;
	int			i;

	if (!a->any_null)
	{
		memmove(a->data.data + ARR_OVERHEAD_NONULLS(1), a->data.data + reserved, nbytes);
		reserved = ARR_OVERHEAD_NONULLS(1);
	}
	memset(result, 0, reserved);
	SET_VARSIZE(result, reserved + nbytes);
	result->ndim = 1;
	result->dataoffset = a->any_null ? (int32) reserved : 0;
	result->elemtype = TEXTOID;
	ARR_DIMS(result)[0] = n;
	ARR_LBOUND(result)[0] = 1;
	if (a->any_null)
	{
		bits8	   *bitmap = ARR_NULLBITMAP(result);

		for (i = 0; i < n; i++)
			if (!a->nulls[i])
				bitmap[i / 8] |= 1 << (i % 8);
	}
	return result;
}

static void
emit_row(int64 ord, bool isnull, int64 id, const SnapshotHit *h, void *arg)
{
	RowSink    *sink = (RowSink *) arg;
	Datum		values[5];
	bool		nulls[5] = {isnull, !h->found, !h->found, !h->found, !h->found};

	values[0] = Int64GetDatum(id);
	values[1] = h->catalog;
	values[2] = h->ns;
	values[3] = h->name;
	values[4] = h->location;
	if (h->found && h->raw_location)
	{
		/* a text in the reused buffer: the row gets its own copy */
		Size		len = strlen(h->raw_location);

		resetStringInfo(&sink->text);
		enlargeStringInfo(&sink->text, VARHDRSZ + len);
		SET_VARSIZE(sink->text.data, VARHDRSZ + len);
		memcpy(sink->text.data + VARHDRSZ, h->raw_location, len);
		values[4] = PointerGetDatum(sink->text.data);
	}
	tuplestore_putvalues(sink->rsinfo->setResult, sink->rsinfo->setDesc, values, nulls);
}

/*
 * Resolve an int8[] in chunks, handing each element's answer to emit, in
 * input order; a tree answer's location is raw (valid until the next chunk).
 */
static void
resolve_chunked(ArrayType *arr, const char *catalog, const char *ns, const char *name,
				void (*emit) (int64 ord, bool isnull, int64 id, const SnapshotHit *h, void *arg),
				void *arg)
{
	MemoryContext chunk_cxt = AllocSetContextCreate(CurrentMemoryContext,
													"skade resolve chunk",
													ALLOCSET_DEFAULT_SIZES);
	array_iter	it;
	int			total = ArrayGetNItems(ARR_NDIM(arr), ARR_DIMS(arr));
	int			done = 0;
	int64	   *ids = palloc(sizeof(int64) * Min(total, RESOLVE_CHUNK) + 1);
	bool	   *nulls = palloc(sizeof(bool) * Min(total, RESOLVE_CHUNK) + 1);

	array_iter_setup(&it, (AnyArrayType *) arr);
	while (done < total)
	{
		int			cnt = Min(total - done, RESOLVE_CHUNK);
		SnapshotHit *hits;
		MemoryContext old;
		int			i;

		for (i = 0; i < cnt; i++)
		{
			Datum		d = array_iter_next(&it, &nulls[i], done + i, 8, true, TYPALIGN_DOUBLE);

			ids[i] = nulls[i] ? 0 : DatumGetInt64(d);
		}
		old = MemoryContextSwitchTo(chunk_cxt);
		hits = palloc(sizeof(SnapshotHit) * cnt);
		IndexResolve(ids, nulls, cnt, catalog, ns, name, true, hits);
		forget_unreadable(hits, cnt);
		MemoryContextSwitchTo(old);
		for (i = 0; i < cnt; i++)
		{
			/* the answers' texts are scattered: fetch ahead */
			if (i + 32 < cnt && hits[i + 32].found)
				__builtin_prefetch(hits[i + 32].raw_location ? hits[i + 32].raw_location
								   : DatumGetPointer(hits[i + 32].location));
			emit(done + i + 1, nulls[i], ids[i], &hits[i], arg);
		}
		MemoryContextReset(chunk_cxt);
		done += cnt;
		CHECK_FOR_INTERRUPTS();
	}
	MemoryContextDelete(chunk_cxt);
}

/*
 * skade.load_table_at(namespace, name, snapshot_id, snapshots, catalog)
 *		-> (snapshot_id, metadata_location, metadata json)
 *
 * The metadata that holds snapshot_id for this table: the commit that made
 * it current, else the first metadata that had it.  Version 1.0 of the SQL
 * took (namespace, name, snapshot_id, catalog, snapshots).
 */
Datum
skade_load_table_at_1_1(PG_FUNCTION_ARGS)
{
	return load_table_at(fcinfo, 4, 3);
}

Datum
skade_load_table_at(PG_FUNCTION_ARGS)
{
	return load_table_at(fcinfo, 3, 4);
}

static Datum
load_table_at(FunctionCallInfo fcinfo, int catalog_arg, int snapshots_arg)
{
	const char *catalog;
	char	   *ns;
	char	   *name;
	int64		snapshot_id;
	StoreTable	t;

	if (PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("snapshot_id must not be NULL")));
	snapshot_id = PG_GETARG_INT64(2);
	if (snapshot_id < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("snapshot id " INT64_FORMAT " is negative", snapshot_id),
				 errdetail("Iceberg snapshot ids are non-negative.")));
	SkadeTableArgs(fcinfo, catalog_arg, &catalog, &ns, &name, &t);
	return load_at(fcinfo, catalog, ns, name, snapshot_id, 0, false,
				   SkadeSnapshotsMode(SkadeTextArg(fcinfo, snapshots_arg, "snapshots")));
}

/*
 * skade.load_table_as_of(namespace, name, ts, snapshots, catalog)
 *		-> (snapshot_id, made_current_at, metadata_location, metadata json)
 *
 * The snapshot that was current at ts by the table's snapshot log (binary
 * search over the cached summary), and the metadata that holds it.  Version
 * 1.0 of the SQL took (namespace, name, ts, catalog, snapshots).
 */
Datum
skade_load_table_as_of_1_1(PG_FUNCTION_ARGS)
{
	return load_table_as_of(fcinfo, 4, 3);
}

Datum
skade_load_table_as_of(PG_FUNCTION_ARGS)
{
	return load_table_as_of(fcinfo, 3, 4);
}

static Datum
load_table_as_of(FunctionCallInfo fcinfo, int catalog_arg, int snapshots_arg)
{
	const char *catalog;
	char	   *ns;
	char	   *name;
	TimestampTz ts;
	StoreTable	t;
	LogSearch	search;

	if (PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("ts must not be NULL")));
	ts = PG_GETARG_TIMESTAMPTZ(2);
	SkadeTableArgs(fcinfo, catalog_arg, &catalog, &ns, &name, &t);
	(void) SkadeRequireMetadataLocation(ns, name, &t);
	search.ts_ms = TIMESTAMP_NOT_FINITE(ts) ? (TIMESTAMP_IS_NOBEGIN(ts) ? PG_INT64_MIN : PG_INT64_MAX)
		: timestamptz_to_ms(ts);
	L0VisitSummary(SKADE_ROUTE(catalog, ns), t.metadata_location, search_log, &search);
	if (!search.found)
		ereport(ERROR,
				(errcode(ERRCODE_NO_DATA_FOUND),
				 errmsg("table \"%s.%s\" had no snapshot at %s", ns, name,
						timestamptz_to_str(ts)),
				 search.nlog > 0 ?
				 errdetail("Its snapshot log starts at %s.",
						   timestamptz_to_str(SkadeMsToTimestamptz(search.first_ms))) :
				 errdetail("Its snapshot log is empty.")));
	return load_at(fcinfo, catalog, ns, name, search.snapshot_id,
				   SkadeMsToTimestamptz(search.timestamp_ms), true,
				   SkadeSnapshotsMode(SkadeTextArg(fcinfo, snapshots_arg, "snapshots")));
}

/*
 * Planner support of skade.resolve_many: one row per element of its array
 * (known for a constant array, else the planner's usual guess of 10), as
 * unnest() estimates.
 */
Datum
skade_resolve_many_support(PG_FUNCTION_ARGS)
{
	Node	   *rawreq = (Node *) PG_GETARG_POINTER(0);

	if (IsA(rawreq, SupportRequestRows))
	{
		SupportRequestRows *req = (SupportRequestRows *) rawreq;

		if (is_funcclause(req->node))
		{
			List	   *args = ((FuncExpr *) req->node)->args;
			Node	   *arg = estimate_expression_value(req->root, linitial(args));

			req->rows = estimate_array_length(req->root, arg);
			PG_RETURN_POINTER(req);
		}
	}
	PG_RETURN_POINTER(NULL);
}

/*
 * skade_test.index_check(snapshot_ids bigint[]) -> mismatches
 *
 * Resolve every id both ways on the same snapshot, through the routing
 * (tree where allowed) and from the heap alone, and count the differences.
 * For the property tests.
 */
Datum
skade_index_check(PG_FUNCTION_ARGS)
{
	ArrayType  *arr;
	int			n;
	Datum	   *elems;
	bool	   *nulls;
	int64	   *ids;
	SnapshotHit *routed;
	SnapshotHit *heap;
	int64		mismatches = 0;
	int			i;

	SkadeRequireShared();
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("snapshot_ids must not be NULL")));
	arr = PG_GETARG_ARRAYTYPE_P(0);
	StoreRequireAttached();
	deconstruct_array(arr, INT8OID, 8, true, TYPALIGN_DOUBLE, &elems, &nulls, &n);
	ids = palloc(sizeof(int64) * (n + 1));
	for (i = 0; i < n; i++)
		ids[i] = nulls[i] ? 0 : DatumGetInt64(elems[i]);
	routed = palloc(sizeof(SnapshotHit) * (n + 1));
	heap = palloc(sizeof(SnapshotHit) * (n + 1));
	IndexResolve(ids, nulls, n, NULL, NULL, NULL, false, routed);
	SnapshotMapResolveHeap(ids, nulls, n, NULL, NULL, NULL, heap);
	for (i = 0; i < n; i++)
	{
		if (routed[i].found != heap[i].found)
			mismatches++;
		else if (routed[i].found &&
				 (!text_eq(routed[i].catalog, heap[i].catalog) ||
				  !text_eq(routed[i].ns, heap[i].ns) ||
				  !text_eq(routed[i].name, heap[i].name) ||
				  !text_eq(routed[i].location, heap[i].location)))
			mismatches++;
	}
	PG_RETURN_INT64(mismatches);
}

/* ---------------------------------------------------------------- helpers */

/*
 * A snapshot of a table the current user may not read resolves to nothing,
 * as the heap's row-level security answers (privileges.c).
 */
static void
forget_unreadable(SnapshotHit *hits, int n)
{
	int			i;

	if (SkadeMayReadAll())
		return;
	for (i = 0; i < n; i++)
		if (hits[i].found &&
			!SkadeMay(SKADE_ACCESS_READ, TextDatumGetCString(hits[i].catalog),
					  TextDatumGetCString(hits[i].ns), TextDatumGetCString(hits[i].name)))
			hits[i].found = false;
}

/* byte equality of two text datums, whatever their header form */
static bool
text_eq(Datum a, Datum b)
{
	return DatumGetBool(DirectFunctionCall2Coll(texteq, C_COLLATION_OID, a, b));
}

/* L0SummaryVisitor: O(log n) over the snapshot log, which is in time order */
static void
search_log(const SkadeMeta *meta, void *arg)
{
	LogSearch  *s = (LogSearch *) arg;
	const SkadeMetaLogEntry *log = SkadeMetaLog(meta);
	uint32		lo = 0;
	uint32		hi = meta->nlog;

	while (lo < hi)
	{
		uint32		mid = lo + (hi - lo) / 2;

		if (log[mid].timestamp_ms <= s->ts_ms)
			lo = mid + 1;
		else
			hi = mid;
	}
	s->nlog = meta->nlog;
	s->first_ms = meta->nlog > 0 ? log[0].timestamp_ms : 0;
	s->found = lo > 0;
	if (s->found)
	{
		s->snapshot_id = log[lo - 1].snapshot_id;
		s->timestamp_ms = log[lo - 1].timestamp_ms;
	}
}

/* Resolve one snapshot of one table and return its row. */
static Datum
load_at(FunctionCallInfo fcinfo, const char *catalog, const char *ns, const char *name,
		int64 snapshot_id, TimestampTz made_current_at, bool with_time, int want)
{
	SnapshotHit hit;
	bool		isnull = false;
	TupleDesc	tupdesc;
	Datum		values[4];
	bool		nulls[4] = {0};
	L0Result	r;
	int			c = 0;

	IndexResolve(&snapshot_id, &isnull, 1, catalog, ns, name, false, &hit);
	forget_unreadable(&hit, 1);
	if (!hit.found)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("snapshot " INT64_FORMAT " of table \"%s.%s\" is not known to skade",
						snapshot_id, ns, name),
				 errdetail("No metadata committed through skade for this table contains it."),
				 errhint("skade learns snapshots when their metadata is readable at commit; see skade.resolve_commit_log().")));
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	tupdesc = BlessTupleDesc(tupdesc);
	values[c++] = Int64GetDatum(snapshot_id);
	if (with_time)
		values[c++] = TimestampTzGetDatum(made_current_at);
	values[c++] = hit.location;
	if (want == 0)
		nulls[c++] = true;
	else
	{
		L0Fetch(SKADE_ROUTE(catalog, ns), TextDatumGetCString(hit.location), want, &r);
		values[c++] = PointerGetDatum(r.json);
	}
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/* the last millisecond at or before ts */
static int64
timestamptz_to_ms(TimestampTz ts)
{
	int64		us = ts + ((int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY);

	return us >= 0 ? us / 1000 : -((-us + 999) / 1000);
}
