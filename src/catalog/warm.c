/*-------------------------------------------------------------------------
 *
 * warm.c
 *	  Commit-time reading of metadata: when a pointer changes (SQL API or a
 *	  JDBC client's DML, both through the commit-log trigger), read the new
 *	  metadata into the L0 cache, return its current snapshot id for the
 *	  commit log, and check that it continues the old metadata
 *	  (skade.validate_commits); skade.resolve_commit_log() (api/log_api.c)
 *	  reads again, through it, the metadata that was unreadable at commit.
 *
 * A metadata file skade cannot read never fails the commit: locations
 * outside the allowed roots, on other schemes or missing are skipped
 * without reading (an s3:// object inside the roots is fetched: whether it
 * is there is known only by asking); a file that is there but fails to read or parse is
 * caught in a subtransaction and reported as a WARNING; the log row stays
 * unresolved (snapshot_id NULL).  A query cancel or statement timeout that
 * arrives meanwhile is not the file's fault: it is re-thrown, as PL/pgSQL's
 * WHEN OTHERS does not catch it either.  Only a failed continuity check with
 * skade.validate_commits = error fails the commit, by design.
 *
 * IDENTIFICATION
 *	  src/catalog/warm.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "access/xact.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/timestamp.h"

#include "io/file_access.h"
#include "util/guc.h"
#include "cache/l0_cache.h"
#include "io/object_store.h"
#include "util/safe_sql.h"
#include "util/shmem.h"
#include "index/snapshot_map.h"
#include "catalog/warm.h"

static SkadeMeta *try_fetch_summary(const SkadeRoute *route, const char *location);

/*
 * SkadeWarmMetadata
 *		Read the metadata at location by route (into L0 when preloaded); on success
 *		set *meta to its summary and return true.  *old is the summary of
 *		old_location when that is readable too (else NULL); then continuity
 *		is checked.
 */
bool
SkadeWarmMetadata(const SkadeRoute *route, const char *location, const char *old_location,
				  SkadeMeta **meta_out, SkadeMeta **old_out)
{
	SkadeMeta  *meta;
	SkadeMeta  *old = NULL;

	*meta_out = NULL;
	*old_out = NULL;
	if (skade_shared == NULL || SkadeProbeLocation(location) != SKADE_READ_OK)
		return false;
	meta = try_fetch_summary(route, location);
	if (meta == NULL)
		return false;
	*meta_out = meta;
	if (old_location && SkadeProbeLocation(old_location) == SKADE_READ_OK)
		old = strcmp(old_location, location) == 0 ? meta : try_fetch_summary(route, old_location);
	*old_out = old;

	if (skade_validate_commits != SKADE_VALIDATE_OFF && old != NULL && old != meta)
	{
		const char *new_uuid = SkadeMetaStr(meta, meta->table_uuid);
		const char *old_uuid = SkadeMetaStr(old, old->table_uuid);
		int			level = skade_validate_commits == SKADE_VALIDATE_ERROR ? ERROR : WARNING;

		if (new_uuid && old_uuid && strcmp(new_uuid, old_uuid) != 0)
			ereport(level,
					(errcode(ERRCODE_CHECK_VIOLATION),
					 errmsg("new metadata \"%s\" belongs to another table", location),
					 errdetail("Its table-uuid is %s; the metadata it replaces (\"%s\") has %s.",
							   new_uuid, old_location, old_uuid),
					 errhint("skade.validate_commits controls this check.")));
		if (meta->last_sequence_number < old->last_sequence_number)
			ereport(level,
					(errcode(ERRCODE_CHECK_VIOLATION),
					 errmsg("new metadata \"%s\" goes back in sequence numbers", location),
					 errdetail("Its last-sequence-number is " INT64_FORMAT "; the metadata it replaces has " INT64_FORMAT ".",
							   meta->last_sequence_number, old->last_sequence_number),
					 errhint("skade.validate_commits controls this check.")));
	}
	return true;
}

/*
 * Fetch the summary of location in a subtransaction; NULL (with a WARNING)
 * if reading or parsing fails.  The caller's transaction state is untouched.
 */
static SkadeMeta *
try_fetch_summary(const SkadeRoute *route, const char *location)
{
	MemoryContext caller = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	L0Result	r;
	SkadeMeta  *volatile result = NULL;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(caller);
	PG_TRY();
	{
		L0Fetch(route, location, L0_WANT_SUMMARY, &r);
		result = r.summary;
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(caller);
		CurrentResourceOwner = owner;
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(caller);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(caller);
		CurrentResourceOwner = owner;
		/* a cancel or statement timeout is the user's, not the file's: as PL/pgSQL */
		if (edata->sqlerrcode == ERRCODE_QUERY_CANCELED)
			ReThrowError(edata);
		ereport(WARNING,
				(errcode(edata->sqlerrcode),
				 errmsg("could not read metadata \"%s\"; its commit-log row stays unresolved", location),
				 edata->detail ? errdetail("%s: %s", edata->message, edata->detail) :
				 errdetail("%s", edata->message)));
		FreeErrorData(edata);
		result = NULL;
	}
	PG_END_TRY();
	return result;
}
