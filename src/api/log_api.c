/*-------------------------------------------------------------------------
 *
 * log_api.c
 *	  The SQL functions that maintain the commit log:
 *	  skade.prune_commit_log() retires a table's older rows into
 *	  skade.commit_log_archive, the one way rows ever leave the log;
 *	  skade.resolve_commit_log() fills the snapshot id of rows whose metadata
 *	  was unreadable at commit and is readable now.
 *
 * Invariants
 *   - skade.commit_log stays append-only for everyone: its trigger refuses
 *     every UPDATE and DELETE except the two this file runs while it has
 *     allowed them (SkadeCommitLogAllow: backend-local, no GUC, nothing a
 *     session can set): the DELETE of a prune, the UPDATE of a resolve.
 *   - Rows are moved, never destroyed: one statement deletes them from the
 *     log and inserts them, whole and with their seq, into the archive,
 *     stamped with retired_at.
 *   - The table's snapshot_map rows written by the retired commits go too
 *     (the snapshot index is told first: those entries are dirty), so time
 *     travel forgets the retired snapshots exactly as the log does.
 *   - Statements run as the log's owner under the pinned search_path of
 *     safe_sql.c, operators schema-qualified.
 *
 * IDENTIFICATION
 *	  src/api/log_api.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "catalog/commit_log.h"
#include "catalog/warm.h"
#include "index/snapshot_map.h"
#include "io/object_store.h"
#include "util/shmem.h"
#include "util/guc.h"
#include "util/names.h"
#include "util/safe_sql.h"
#include "index/snapshot_index.h"

PG_FUNCTION_INFO_V1(skade_prune_commit_log);
PG_FUNCTION_INFO_V1(skade_resolve_commit_log);

#define KEY_MATCH \
	" WHERE catalog_name OPERATOR(pg_catalog.=) $1" \
	" AND table_namespace OPERATOR(pg_catalog.=) $2" \
	" AND table_name OPERATOR(pg_catalog.=) $3" \
	" AND seq OPERATOR(pg_catalog.<) $4"

/*
 * skade.prune_commit_log(namespace, name, before, catalog) -> rows retired
 *
 * Move the commit-log rows of catalog.namespace.name with seq < before to
 * skade.commit_log_archive, and drop the snapshot_map rows they wrote.
 */
Datum
skade_prune_commit_log(PG_FUNCTION_ARGS)
{
	char	   *ns = SkadeTextArg(fcinfo, 0, "namespace");
	char	   *name = SkadeTextArg(fcinfo, 1, "name");
	const char *catalog = SkadeResolveCatalog(SkadeOptTextArg(fcinfo, 3));
	Oid			types[4] = {TEXTOID, TEXTOID, TEXTOID, INT8OID};
	Datum		args[4];
	SkadeSafeSql safe;
	int64		moved = 0;
	int			prev;

	if (PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("before must not be NULL")));
	args[0] = CStringGetTextDatum(catalog);
	args[1] = CStringGetTextDatum(ns);
	args[2] = CStringGetTextDatum(name);
	args[3] = PG_GETARG_DATUM(2);

	/* the index stops trusting what it has of this table first */
	IndexNoteTable(args[0], args[1], args[2]);
	SPI_connect();
	SkadeSafeSqlBegin(&safe, SkadeCatalogOwner());
	prev = SkadeCommitLogAllow(SKADE_LOG_ALLOW_DELETE);
	PG_TRY();
	{
		if (SPI_execute_with_args("WITH moved AS (DELETE FROM skade.commit_log" KEY_MATCH
								  " RETURNING *)"
								  " INSERT INTO skade.commit_log_archive (seq, op, source, catalog_name,"
								  " table_namespace, table_name, iceberg_type, metadata_location,"
								  " previous_metadata_location, prev_namespace, prev_name, committed_at,"
								  " committed_by, xact_id, snapshot_id, detail, retired_at)"
								  " SELECT moved.*, pg_catalog.clock_timestamp() FROM moved",
								  4, types, args, NULL, false, 0) != SPI_OK_INSERT)
			elog(ERROR, "skade: could not retire commit-log rows");
		moved = (int64) SPI_processed;
		if (SPI_execute_with_args("DELETE FROM skade.snapshot_map" KEY_MATCH,
								  4, types, args, NULL, false, 0) != SPI_OK_DELETE)
			elog(ERROR, "skade: could not retire snapshot_map rows");
	}
	PG_FINALLY();
	{
		(void) SkadeCommitLogAllow(prev);
	}
	PG_END_TRY();
	SkadeSafeSqlEnd(&safe);
	SPI_finish();
	PG_RETURN_INT64(moved);
}

/*
 * skade.resolve_commit_log(max_rows integer DEFAULT NULL) -> rows resolved
 *
 * Fill snapshot_id for logged changes whose metadata was unreadable at
 * commit and is readable now.
 */
Datum
skade_resolve_commit_log(PG_FUNCTION_ARGS)
{
	int64		limit = PG_ARGISNULL(0) ? -1 : PG_GETARG_INT32(0);
	int64		resolved = 0;
	uint64		i;
	SPITupleTable *rows;
	uint64		nrows;
	Oid			argtypes[2] = {INT8OID, INT8OID};
	SPIPlanPtr	plan;
	SkadeSafeSql safe;
	MemoryContext row_cxt;
	MemoryContext caller;
	int			prev;

	SkadeRequireShared();
	/* SECURITY DEFINER: its statements must not follow the caller's search_path */
	SkadeSafeSqlBegin(&safe, InvalidOid);
	SPI_connect();
	if (SPI_execute("SELECT l.seq, l.metadata_location, l.previous_metadata_location,"
					" l.catalog_name, l.table_namespace, l.table_name, l.committed_at,"
					" t.table_name IS NOT NULL"
					" FROM skade.commit_log l LEFT JOIN public.iceberg_tables t"
					" ON t.catalog_name OPERATOR(pg_catalog.=) l.catalog_name"
					" AND t.table_namespace OPERATOR(pg_catalog.=) l.table_namespace"
					" AND t.table_name OPERATOR(pg_catalog.=) l.table_name"
					" WHERE l.snapshot_id IS NULL AND l.metadata_location IS NOT NULL"
					" AND l.iceberg_type IS DISTINCT FROM 'VIEW'"
					" ORDER BY l.seq", true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not scan skade.commit_log");
	rows = SPI_tuptable;
	nrows = SPI_processed;
	plan = SPI_prepare("UPDATE skade.commit_log SET snapshot_id = $2"
					   " WHERE seq OPERATOR(pg_catalog.=) $1",
					   2, argtypes);
	if (plan == NULL)
		elog(ERROR, "could not prepare commit log update");
	/* what one row reads (its metadata's summaries) is freed before the next */
	row_cxt = AllocSetContextCreate(CurrentMemoryContext, "skade resolve row",
									ALLOCSET_DEFAULT_SIZES);

	for (i = 0; i < nrows && (limit < 0 || resolved < limit); i++, MemoryContextReset(row_cxt))
	{
		bool		isnull;
		HeapTuple	row = rows->vals[i];
		TupleDesc	desc = rows->tupdesc;
		int64		seq = DatumGetInt64(SPI_getbinval(row, desc, 1, &isnull));
		char	   *location = SPI_getvalue(row, desc, 2);
		char	   *previous = SPI_getvalue(row, desc, 3);
		bool		table_exists = DatumGetBool(SPI_getbinval(row, desc, 8, &isnull));
		SkadeMeta  *meta;
		SkadeMeta  *old;
		Datum		args[2];

		CHECK_FOR_INTERRUPTS();
		caller = MemoryContextSwitchTo(row_cxt);
		if (!SkadeWarmMetadata(SKADE_ROUTE(SPI_getvalue(row, desc, 4), SPI_getvalue(row, desc, 5)),
							   location, previous, &meta, &old))
		{
			MemoryContextSwitchTo(caller);
			continue;
		}
		/* its snapshots become resolvable, if the table is still known by that name */
		if (table_exists)
			SnapshotMapRecord(seq, SPI_getbinval(row, desc, 4, &isnull),
							  SPI_getbinval(row, desc, 5, &isnull),
							  SPI_getbinval(row, desc, 6, &isnull), location,
							  DatumGetTimestampTz(SPI_getbinval(row, desc, 7, &isnull)),
							  meta, old);
		args[0] = Int64GetDatum(seq);
		args[1] = Int64GetDatum(meta->current_snapshot_id);
		prev = SkadeCommitLogAllow(SKADE_LOG_ALLOW_UPDATE);
		PG_TRY();
		{
			if (SPI_execute_plan(plan, args, NULL, false, 0) != SPI_OK_UPDATE)
				elog(ERROR, "could not update skade.commit_log");
		}
		PG_FINALLY();
		{
			(void) SkadeCommitLogAllow(prev);
		}
		PG_END_TRY();
		MemoryContextSwitchTo(caller);
		resolved++;
	}
	SPI_finish();
	SkadeSafeSqlEnd(&safe);
	PG_RETURN_INT64(resolved);
}
