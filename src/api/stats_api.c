/*-------------------------------------------------------------------------
 *
 * stats_api.c
 *	  skade.commit_stats(): the cluster's commit counters, as the REST
 *	  server's /metrics shows them, for operators without the REST server
 *	  and for the suites that check which engine applied their commits.
 *
 * Invariants
 *   - The counters live in SkadeShared (shmem.c), are cluster-wide (every
 *     database), start at 0 with the postmaster and only grow; they are not
 *     transactional: a commit rolled back after it was counted stays
 *     counted.  Reading them takes no lock (atomic reads; the row is not a
 *     snapshot of all counters at one instant).
 *
 * IDENTIFICATION
 *	  src/api/stats_api.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "fmgr.h"
#include "funcapi.h"

#include "util/shmem.h"

PG_FUNCTION_INFO_V1(skade_commit_stats);

#define COMMIT_STATS_COLS 7

/*
 * skade.commit_stats() -> (commits, conflicts, rebased, group_commits,
 *							grouped, update_c, update_plpgsql)
 */
Datum
skade_commit_stats(PG_FUNCTION_ARGS)
{
	pg_atomic_uint64 *counters[COMMIT_STATS_COLS];
	TupleDesc	tupdesc;
	Datum		values[COMMIT_STATS_COLS];
	bool		nulls[COMMIT_STATS_COLS] = {0};
	int			i;

	SkadeRequireShared();
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	tupdesc = BlessTupleDesc(tupdesc);
	counters[0] = &skade_shared->commits;
	counters[1] = &skade_shared->conflicts;
	counters[2] = &skade_shared->rebased;
	counters[3] = &skade_shared->group_commits;
	counters[4] = &skade_shared->group_members;
	counters[5] = &skade_shared->update_c;
	counters[6] = &skade_shared->update_engine;
	for (i = 0; i < COMMIT_STATS_COLS; i++)
		values[i] = Int64GetDatum((int64) pg_atomic_read_u64(counters[i]));
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
