/*-------------------------------------------------------------------------
 *
 * log_prune.c
 *	  skade.prune_commit_log(): retire a table's older commit-log rows into
 *	  skade.commit_log_archive, the one way rows ever leave the log.
 *
 * Invariants
 *   - skade.commit_log stays append-only for everyone: its trigger refuses
 *     every UPDATE and DELETE except the DELETE this file runs while its
 *     backend-local flag is set (no GUC, nothing a session can set).
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
 *	  src/catalog/log_prune.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "utils/builtins.h"

#include "catalog/commit_log.h"
#include "util/guc.h"
#include "catalog/log_prune.h"
#include "util/names.h"
#include "util/safe_sql.h"
#include "index/snapshot_index.h"

PG_FUNCTION_INFO_V1(skade_prune_commit_log);

static bool pruning = false;

#define KEY_MATCH \
	" WHERE catalog_name OPERATOR(pg_catalog.=) $1" \
	" AND table_namespace OPERATOR(pg_catalog.=) $2" \
	" AND table_name OPERATOR(pg_catalog.=) $3" \
	" AND seq OPERATOR(pg_catalog.<) $4"

/* May the commit-log trigger let a DELETE through?  Only ours. */
bool
SkadeCommitLogPruning(void)
{
	return pruning;
}

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
	PG_TRY();
	{
		pruning = true;
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
		pruning = false;
	}
	PG_END_TRY();
	SkadeSafeSqlEnd(&safe);
	SPI_finish();
	PG_RETURN_INT64(moved);
}
