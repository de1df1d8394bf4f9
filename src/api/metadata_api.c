/*-------------------------------------------------------------------------
 *
 * metadata_api.c
 *	  SQL-callable views of a table's current metadata, served from the L0
 *	  summary: skade.snapshots(), skade.refs(), skade.history().
 *
 * Each resolves the table like load_table (L1 mirror, else heap), copies
 * the summary part of the L0 entry (not the file text) and builds its rows
 * from that copy, holding no lock while doing so.
 *
 * IDENTIFICATION
 *	  src/api/metadata_api.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "datatype/timestamp.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/timestamp.h"

#include "api/api.h"
#include "util/guc.h"
#include "cache/l0_cache.h"
#include "util/names.h"
#include "util/shmem.h"

PG_FUNCTION_INFO_V1(skade_snapshots);
PG_FUNCTION_INFO_V1(skade_refs);
PG_FUNCTION_INFO_V1(skade_history);

typedef struct IdIndex
{
	int64		id;
	int			pos;
} IdIndex;

static SkadeMeta *table_summary(FunctionCallInfo fcinfo);
static IdIndex *index_snapshots(const SkadeMeta *m);
static int	find_snapshot(const IdIndex *idx, int n, int64 id);
static bool *current_ancestors(const SkadeMeta *m, const IdIndex *idx);
static int	id_cmp(const void *a, const void *b);

/*
 * skade.snapshots(namespace, name, catalog) -> setof (snapshot_id, parent_id,
 *		sequence_number, committed_at, operation, manifest_list, summary,
 *		schema_id, is_current)
 */
Datum
skade_snapshots(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	SkadeMeta  *m = table_summary(fcinfo);
	const SkadeMetaSnapshot *snaps = SkadeMetaSnapshots(m);
	uint32		i;

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	for (i = 0; i < m->nsnapshots; i++)
	{
		const SkadeMetaSnapshot *s = &snaps[i];
		Datum		values[9];
		bool		nulls[9] = {0};

		values[0] = Int64GetDatum(s->snapshot_id);
		nulls[1] = s->parent_id == SKADE_NO_SNAPSHOT;
		values[1] = Int64GetDatum(s->parent_id);
		values[2] = Int64GetDatum(s->sequence_number);
		values[3] = TimestampTzGetDatum(SkadeMsToTimestamptz(s->timestamp_ms));
		nulls[4] = s->operation == 0;
		values[4] = nulls[4] ? (Datum) 0 : CStringGetTextDatum(SkadeMetaStr(m, s->operation));
		nulls[5] = s->manifest_list == 0;
		values[5] = nulls[5] ? (Datum) 0 : CStringGetTextDatum(SkadeMetaStr(m, s->manifest_list));
		nulls[6] = s->summary == 0;
		values[6] = nulls[6] ? (Datum) 0 :
			DirectFunctionCall1(jsonb_in, CStringGetDatum(SkadeMetaStr(m, s->summary)));
		nulls[7] = s->schema_id < 0;
		values[7] = Int32GetDatum(s->schema_id);
		values[8] = BoolGetDatum(s->snapshot_id == m->current_snapshot_id);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/*
 * skade.refs(namespace, name, catalog) -> setof (name, type, snapshot_id,
 *		max_ref_age_ms, max_snapshot_age_ms, min_snapshots_to_keep)
 */
Datum
skade_refs(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	SkadeMeta  *m = table_summary(fcinfo);
	const SkadeMetaRef *refs = SkadeMetaRefs(m);
	uint32		i;

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	for (i = 0; i < m->nrefs; i++)
	{
		const SkadeMetaRef *r = &refs[i];
		Datum		values[6];
		bool		nulls[6] = {0};

		values[0] = CStringGetTextDatum(SkadeMetaStr(m, r->name));
		values[1] = CStringGetTextDatum(r->is_tag ? "tag" : "branch");
		values[2] = Int64GetDatum(r->snapshot_id);
		nulls[3] = r->max_ref_age_ms < 0;
		values[3] = Int64GetDatum(r->max_ref_age_ms);
		nulls[4] = r->max_snapshot_age_ms < 0;
		values[4] = Int64GetDatum(r->max_snapshot_age_ms);
		nulls[5] = r->min_snapshots_to_keep < 0;
		values[5] = Int32GetDatum(r->min_snapshots_to_keep);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/*
 * skade.history(namespace, name, catalog) -> setof (made_current_at,
 *		snapshot_id, parent_id, is_current_ancestor)
 *
 * The snapshot log, like Iceberg's "history" metadata table.
 */
Datum
skade_history(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	SkadeMeta  *m = table_summary(fcinfo);
	const SkadeMetaLogEntry *log = SkadeMetaLog(m);
	const SkadeMetaSnapshot *snaps = SkadeMetaSnapshots(m);
	IdIndex    *idx = index_snapshots(m);
	bool	   *ancestor = current_ancestors(m, idx);
	uint32		i;

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	for (i = 0; i < m->nlog; i++)
	{
		Datum		values[4];
		bool		nulls[4] = {0};
		int			pos = find_snapshot(idx, m->nsnapshots, log[i].snapshot_id);

		values[0] = TimestampTzGetDatum(SkadeMsToTimestamptz(log[i].timestamp_ms));
		values[1] = Int64GetDatum(log[i].snapshot_id);
		nulls[2] = pos < 0 || snaps[pos].parent_id == SKADE_NO_SNAPSHOT;
		values[2] = nulls[2] ? (Datum) 0 : Int64GetDatum(snaps[pos].parent_id);
		values[3] = BoolGetDatum(pos >= 0 && ancestor[pos]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/* ---------------------------------------------------------------- helpers */

/* Resolve (namespace, name, catalog) arguments 0..2 to the metadata summary. */
static SkadeMeta *
table_summary(FunctionCallInfo fcinfo)
{
	const char *catalog;
	char	   *ns;
	char	   *name;
	StoreTable	t;
	L0Result	r;

	SkadeTableArgs(fcinfo, 2, &catalog, &ns, &name, &t);
	L0Fetch(SKADE_ROUTE(catalog, ns), SkadeRequireMetadataLocation(ns, name, &t), L0_WANT_SUMMARY, &r);
	return r.summary;
}

/* Iceberg's milliseconds since the epoch as a timestamptz */
TimestampTz
SkadeMsToTimestamptz(int64 ms)
{
	return (TimestampTz) (ms * 1000 -
						  ((int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY));
}

/* snapshot ids sorted, with their positions, for bsearch */
static IdIndex *
index_snapshots(const SkadeMeta *m)
{
	const SkadeMetaSnapshot *snaps = SkadeMetaSnapshots(m);
	IdIndex    *idx = palloc(sizeof(IdIndex) * (m->nsnapshots + 1));
	uint32		i;

	for (i = 0; i < m->nsnapshots; i++)
	{
		idx[i].id = snaps[i].snapshot_id;
		idx[i].pos = i;
	}
	qsort(idx, m->nsnapshots, sizeof(IdIndex), id_cmp);
	return idx;
}

static int
find_snapshot(const IdIndex *idx, int n, int64 id)
{
	IdIndex		key = {id, 0};
	IdIndex    *hit = bsearch(&key, idx, n, sizeof(IdIndex), id_cmp);

	return hit ? hit->pos : -1;
}

/* which snapshots are ancestors of (or are) the current snapshot */
static bool *
current_ancestors(const SkadeMeta *m, const IdIndex *idx)
{
	const SkadeMetaSnapshot *snaps = SkadeMetaSnapshots(m);
	bool	   *anc = palloc0(sizeof(bool) * (m->nsnapshots + 1));
	int64		id = m->current_snapshot_id;
	uint32		steps = 0;

	while (id != SKADE_NO_SNAPSHOT && steps++ <= m->nsnapshots)
	{
		int			pos = find_snapshot(idx, m->nsnapshots, id);

		if (pos < 0 || anc[pos])
			break;
		anc[pos] = true;
		id = snaps[pos].parent_id;
	}
	return anc;
}

static int
id_cmp(const void *a, const void *b)
{
	int64		x = ((const IdIndex *) a)->id;
	int64		y = ((const IdIndex *) b)->id;

	return x < y ? -1 : x > y ? 1 : 0;
}
