/*-------------------------------------------------------------------------
 *
 * snapshot_map.c
 *	  Maintain and read skade.snapshot_map, which answers "which metadata
 *	  holds snapshot X" from heap tables alone.
 *
 * Semantics: a snapshot resolves to the metadata of the commit that first
 * made it its table's current snapshot (made_current), else to the first
 * metadata that contained it (a branch or staged snapshot).  Rows are
 * recorded by the commit-log trigger when the new metadata is readable
 * (the new current snapshot, and the snapshots that the old metadata did
 * not have), follow their table through renames and catalog moves, and are
 * deleted with it.  When the same snapshot id is known under several tables
 * (the same metadata registered twice), the lowest commit-log seq wins.
 *
 * Writes run as the owner of the log (writers have no privilege on it) with
 * saved statements that name every relation and operator schema-qualified,
 * under the pinned search_path of safe_sql.c; each change also marks the snapshot
 * ids and tables it touches as dirty for the STree64 index
 * (snapshot_index.c), before the writer commits.
 *
 * IDENTIFICATION
 *	  src/index/snapshot_map.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"

#include "util/safe_sql.h"
#include "index/snapshot_map.h"

typedef enum MapQuery
{
	M_INSERT,
	M_MOVE,
	M_DROP,
	M_TRUNCATE,
	M_RESOLVE,
	M_RESOLVE_TABLE,
	M_COUNT
} MapQuery;

static const struct
{
	const char *sql;
	int			nargs;
	Oid			types[8];
}			map_queries[M_COUNT] = {
	[M_INSERT] = {
		"INSERT INTO skade.snapshot_map (catalog_name, table_namespace, table_name,"
		" snapshot_id, made_current, seq, metadata_location, committed_at)"
		" SELECT $1, $2, $3, id, id OPERATOR(pg_catalog.=) $4, $5, $6, $7"
		" FROM pg_catalog.unnest($8) id"
		" ON CONFLICT DO NOTHING",
		8, {TEXTOID, TEXTOID, TEXTOID, INT8OID, INT8OID, TEXTOID, TIMESTAMPTZOID, INT8ARRAYOID}},
	[M_MOVE] = {
		"UPDATE skade.snapshot_map SET catalog_name = $4, table_namespace = $5, table_name = $6"
		" WHERE catalog_name OPERATOR(pg_catalog.=) $1"
		" AND table_namespace OPERATOR(pg_catalog.=) $2"
		" AND table_name OPERATOR(pg_catalog.=) $3",
		6, {TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID}},
	[M_DROP] = {
		"DELETE FROM skade.snapshot_map"
		" WHERE catalog_name OPERATOR(pg_catalog.=) $1"
		" AND table_namespace OPERATOR(pg_catalog.=) $2"
		" AND table_name OPERATOR(pg_catalog.=) $3",
		3, {TEXTOID, TEXTOID, TEXTOID}},
	[M_TRUNCATE] = {
		"DELETE FROM skade.snapshot_map", 0, {0}},
	[M_RESOLVE] = {
		"SELECT q.ord, m.catalog_name, m.table_namespace, m.table_name, m.metadata_location"
		" FROM pg_catalog.unnest($1) WITH ORDINALITY q(id, ord)"
		" CROSS JOIN LATERAL (SELECT * FROM skade.snapshot_map s"
		" WHERE s.snapshot_id OPERATOR(pg_catalog.=) q.id"
		" ORDER BY s.made_current DESC, s.seq LIMIT 1) m",
		1, {INT8ARRAYOID}},
	[M_RESOLVE_TABLE] = {
		"SELECT q.ord, m.catalog_name, m.table_namespace, m.table_name, m.metadata_location"
		" FROM pg_catalog.unnest($1) WITH ORDINALITY q(id, ord)"
		" CROSS JOIN LATERAL (SELECT * FROM skade.snapshot_map s"
		" WHERE s.snapshot_id OPERATOR(pg_catalog.=) q.id"
		" AND s.catalog_name OPERATOR(pg_catalog.=) $2"
		" AND s.table_namespace OPERATOR(pg_catalog.=) $3"
		" AND s.table_name OPERATOR(pg_catalog.=) $4"
		" ORDER BY s.made_current DESC, s.seq LIMIT 1) m",
		4, {INT8ARRAYOID, TEXTOID, TEXTOID, TEXTOID}},
};

static SPIPlanPtr map_plans[M_COUNT];

static void map_exec(MapQuery q, Datum *args, bool read_only);

/* qsort/bsearch order of snapshot ids */
static int
int64_cmp(const void *a, const void *b)
{
	int64		x = *(const int64 *) a;
	int64		y = *(const int64 *) b;

	return x < y ? -1 : x > y;
}

static const SnapshotMapListener *listener = NULL;

/*
 * SnapshotMapListen
 *		Who is told of every change, before it is made (the snapshot index:
 *		IndexSubscribe, from _PG_init).
 */
void
SnapshotMapListen(const SnapshotMapListener *l)
{
	listener = l;
}

/*
 * SnapshotMapRecord
 *		Record the snapshots of new metadata "meta" committed as commit-log
 *		row seq: its current snapshot, and those that "old" (the metadata it
 *		replaces, NULL if unknown) did not have.
 */
void
SnapshotMapRecord(int64 seq, Datum catalog, Datum ns, Datum name,
				  const char *location, TimestampTz committed_at,
				  const SkadeMeta *meta, const SkadeMeta *old)
{
	const SkadeMetaSnapshot *snaps = SkadeMetaSnapshots(meta);
	Datum	   *ids = palloc(sizeof(Datum) * (meta->nsnapshots + 1));
	int64	   *old_ids = NULL;
	int			nids = 0;
	uint32		i;
	Datum		args[8];

	/* the old snapshot ids, sorted: each new id is a binary search, not a scan */
	if (old && old->nsnapshots > 0)
	{
		const SkadeMetaSnapshot *os = SkadeMetaSnapshots(old);

		old_ids = palloc(sizeof(int64) * old->nsnapshots);
		for (i = 0; i < old->nsnapshots; i++)
			old_ids[i] = os[i].snapshot_id;
		qsort(old_ids, old->nsnapshots, sizeof(int64), int64_cmp);
	}
	for (i = 0; i < meta->nsnapshots; i++)
	{
		int64		id = snaps[i].snapshot_id;
		bool		known = false;

		if (old_ids && id != meta->current_snapshot_id)
			known = bsearch(&id, old_ids, old->nsnapshots, sizeof(int64), int64_cmp) != NULL;
		if (!known)
			ids[nids++] = Int64GetDatum(id);
	}
	if (old_ids)
		pfree(old_ids);
	if (nids == 0)
		return;

	if (listener)
		listener->snapshots(ids, nids);

	args[0] = catalog;
	args[1] = ns;
	args[2] = name;
	args[3] = Int64GetDatum(meta->current_snapshot_id);
	args[4] = Int64GetDatum(seq);
	args[5] = CStringGetTextDatum(location);
	args[6] = TimestampTzGetDatum(committed_at);
	args[7] = PointerGetDatum(construct_array(ids, nids, INT8OID, 8, true, TYPALIGN_DOUBLE));
	map_exec(M_INSERT, args, false);
}

/* A table moved (rename, or another catalog): its snapshots follow it. */
void
SnapshotMapMove(Datum catalog, Datum ns, Datum name,
				Datum new_catalog, Datum new_ns, Datum new_name)
{
	Datum		args[6] = {catalog, ns, name, new_catalog, new_ns, new_name};

	if (listener)
	{
		listener->table(catalog, ns, name);
		listener->table(new_catalog, new_ns, new_name);
	}
	map_exec(M_MOVE, args, false);
}

/* A table was dropped: its snapshots resolve no more. */
void
SnapshotMapDrop(Datum catalog, Datum ns, Datum name)
{
	Datum		args[3] = {catalog, ns, name};

	if (listener)
		listener->table(catalog, ns, name);
	map_exec(M_DROP, args, false);
}

/* iceberg_tables was truncated. */
void
SnapshotMapTruncate(void)
{
	if (listener)
		listener->everything();
	map_exec(M_TRUNCATE, NULL, false);
}

/*
 * SnapshotMapResolveHeap
 *		Resolve ids[0..n) from the heap, on the caller's snapshot; restricted
 *		to one table when catalog is given.  hits[i].found is false for
 *		unknown ids and NULL entries.
 */
void
SnapshotMapResolveHeap(const int64 *ids, const bool *nulls, int n,
					   const char *catalog, const char *ns, const char *name,
					   SnapshotHit *hits)
{
	Datum	   *elems = palloc(sizeof(Datum) * (n + 1));
	bool	   *enulls = palloc(sizeof(bool) * (n + 1));
	int			dims[1] = {n};
	int			lbs[1] = {1};
	Datum		args[4];
	MemoryContext caller = CurrentMemoryContext;
	uint64		r;
	int			i;

	memset(hits, 0, sizeof(SnapshotHit) * n);
	for (i = 0; i < n; i++)
	{
		elems[i] = Int64GetDatum(ids[i]);
		enulls[i] = nulls ? nulls[i] : false;
	}
	args[0] = PointerGetDatum(construct_md_array(elems, enulls, 1, dims, lbs,
												 INT8OID, 8, true, TYPALIGN_DOUBLE));
	SPI_connect();
	if (catalog)
	{
		args[1] = CStringGetTextDatum(catalog);
		args[2] = CStringGetTextDatum(ns);
		args[3] = CStringGetTextDatum(name);
		map_exec(M_RESOLVE_TABLE, args, true);
	}
	else
		map_exec(M_RESOLVE, args, true);
	for (r = 0; r < SPI_processed; r++)
	{
		HeapTuple	tup = SPI_tuptable->vals[r];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;
		int64		ord = DatumGetInt64(SPI_getbinval(tup, desc, 1, &isnull));
		SnapshotHit *h = &hits[ord - 1];

		MemoryContext old = MemoryContextSwitchTo(caller);

		h->found = true;
		h->catalog = datumCopy(SPI_getbinval(tup, desc, 2, &isnull), false, -1);
		h->ns = datumCopy(SPI_getbinval(tup, desc, 3, &isnull), false, -1);
		h->name = datumCopy(SPI_getbinval(tup, desc, 4, &isnull), false, -1);
		h->location = datumCopy(SPI_getbinval(tup, desc, 5, &isnull), false, -1);
		MemoryContextSwitchTo(old);
	}
	SPI_finish();
}

/* ---------------------------------------------------------------- helpers */

/*
 * Run one statement.  Writes connect to SPI and run as the owner of
 * skade.snapshot_map, reads as the caller (who is connected); both under
 * the pinned search_path of safe_sql.c.
 */
static void
map_exec(MapQuery q, Datum *args, bool read_only)
{
	SkadeSafeSql safe;
	int			rc;

	SkadeSafeSqlBegin(&safe, read_only ? InvalidOid : SkadeCatalogOwner());
	if (!read_only)
		SPI_connect();
	if (map_plans[q] == NULL)
	{
		SPIPlanPtr	plan = SPI_prepare(map_queries[q].sql, map_queries[q].nargs,
									   (Oid *) map_queries[q].types);

		if (plan == NULL)
			elog(ERROR, "skade: could not prepare snapshot map statement %d: %s",
				 (int) q, SPI_result_code_string(SPI_result));
		SPI_keepplan(plan);
		map_plans[q] = plan;
	}
	rc = SPI_execute_plan(map_plans[q], args, NULL, read_only, 0);
	if (rc < 0)
		elog(ERROR, "skade: snapshot map statement %d failed: %s",
			 (int) q, SPI_result_code_string(rc));
	if (!read_only)
		SPI_finish();
	SkadeSafeSqlEnd(&safe);
}
