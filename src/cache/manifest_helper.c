/*-------------------------------------------------------------------------
 *
 * manifest_helper.c
 *	  A helper process that decodes a plan's uncached manifests into the
 *	  L0.5 cache from the end of the plan's list while the backend decodes
 *	  them from the start, so that a cold skade.files() or plan_files()
 *	  uses two cores.  They meet in the middle: the backend waits for a
 *	  manifest the helper is decoding (the blob cache coalesces fills) and
 *	  finds the rest cached; the helper stops at the first manifest that is
 *	  cached or being decoded already (SkadeBlobCachePrefill).
 *
 * Invariants:
 *	 - the helper decodes exactly as the backend would: with the backend's
 *	   database encoding (strings are checked against it), skade.allowed_roots,
 *	   skade.max_metadata_size and skade.max_manifest_size, through the same
 *	   decoder; whatever it
 *	   caches is admitted on every hit by the reader's own roots, as any
 *	   cached blob is;
 *	 - the helper never reports anything: a manifest it cannot decode (a
 *	   bad file, a limit) ends its work quietly, and the backend decodes that
 *	   manifest itself and raises the error as it always does;
 *	 - it is started only for local manifests (s3:// ones are fetched
 *	   concurrently by object_store.c instead), only when at least
 *	   HELPER_MIN_MANIFESTS are uncached and their decoded size (estimated
 *	   at SKADE_HELPER_BLOB_FACTOR times their bytes) takes at most half the
 *	   cache, so that decoding ahead never evicts what the plan still needs;
 *	 - at most half of max_parallel_workers helpers run at once in the
 *	   cluster (at least one, none if it is 0: they are parallelism, as
 *	   parallel query's workers are), counted in skade's shared state
 *	   (decode_helpers: the backend counts one in before registering it, the
 *	   helper counts itself out at exit, even a FATAL one);
 *	 - without a free slot (that bound, max_worker_processes) or a DSM
 *	   segment, without skade.allowed_roots, or with skade.decode_helper
 *	   off, the backend decodes everything alone; the answers never differ.
 *
 * Memory and lifetime: the task (paths, lengths, settings) lives in a DSM
 * segment the backend creates in its current resource owner; the backend
 * detaches it when it has read its manifests (ManifestHelperEnd), or the
 * resource owner does on error; detaching sets the task's stop flag, which
 * the helper checks before each manifest.  A helper
 * that starts after the backend detached finds no segment and exits.  The
 * helper connects to no database and holds no lock between manifests; each
 * decode runs in a memory context reset after it.
 *
 * IDENTIFICATION
 *	  src/cache/manifest_helper.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "postmaster/bgworker.h"
#include "storage/dsm.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/resowner.h"

#include "cache/blob_cache.h"
#include "util/guc.h"
#include "cache/manifest_cache.h"
#include "cache/manifest_helper.h"
#include "io/object_store.h"
#include "util/shmem.h"
#include "util/location.h"

/* fewer uncached manifests than this are not worth a process */
#define HELPER_MIN_MANIFESTS	8
/* a decoded manifest takes a few times its file's bytes (manifest_decode.c) */
#define HELPER_BLOB_FACTOR		8

/* the task, in the DSM segment: entries, then the strings they point to */
typedef struct HelperEntry
{
	int64		length;			/* the manifest list's length of the file */
	Size		path_off;		/* from the start of the task */
} HelperEntry;

typedef struct HelperTask
{
	pg_atomic_uint32 stop;		/* the backend is done: decode no more */
	int			encoding;		/* the backend's database encoding */
	int			max_metadata_size;
	int			max_manifest_size;
	Size		roots_off;		/* skade.allowed_roots ("" if unset) */
	int			nentries;		/* in the backend's order */
	HelperEntry entries[FLEXIBLE_ARRAY_MEMBER];
} HelperTask;

PGDLLEXPORT void skade_manifest_helper_main(Datum main_arg);

static void stop_on_detach(dsm_segment *seg, Datum arg);
static bool count_in(void);
static void count_out(int code, Datum arg);
static void decode_from_end(HelperTask *task);

/*
 * ManifestHelperStart
 *		Start a helper for the manifests paths[0..n) (lengths as their
 *		manifest list records them), which the caller is about to read in
 *		this order, if it is worth one: its handle, for ManifestHelperEnd
 *		once the caller has read them; NULL if none was started.
 */
ManifestHelper *
ManifestHelperStart(const char *const *paths, const int64 *lengths, int n)
{
	int		   *pick = palloc(sizeof(int) * (n + 1));
	int			npick = 0;
	Size		bytes = 0;
	Size		size;
	const char *roots = skade_allowed_roots ? skade_allowed_roots : "";
	dsm_segment *seg;
	HelperTask *task;
	BackgroundWorker worker = {0};
	BackgroundWorkerHandle *handle;
	char	   *at;
	int			i;

	if (!skade_decode_helper || AmBackgroundWorkerProcess() || ManifestCache() == NULL ||
		n < HELPER_MIN_MANIFESTS || roots[0] == '\0')
		return NULL;
	size = offsetof(HelperTask, entries) + strlen(roots) + 1;
	/* (a probe counts no cache hit: the statistics count the plan's lookups) */
	for (i = 0; i < n; i++)
		if (!SkadeIsObjectLocation(paths[i]) && lengths[i] > 0 &&
			!SkadeBlobCacheContains(ManifestCache(), paths[i]))
		{
			pick[npick++] = i;
			bytes += (Size) lengths[i];
			size += sizeof(HelperEntry) + strlen(paths[i]) + 1;
		}
	if (npick < HELPER_MIN_MANIFESTS ||
		bytes > SkadeBlobCacheCapacity(ManifestCache()) / 2 / HELPER_BLOB_FACTOR)
		return NULL;

	if (!count_in())
		return NULL;			/* helpers enough */
	seg = dsm_create(size, DSM_CREATE_NULL_IF_MAXSEGMENTS);
	if (seg == NULL)
	{
		pg_atomic_fetch_sub_u32(&skade_shared->decode_helpers, 1);
		return NULL;
	}
	task = dsm_segment_address(seg);
	pg_atomic_init_u32(&task->stop, 0);
	task->encoding = GetDatabaseEncoding();
	task->max_metadata_size = skade_max_metadata_size;
	task->max_manifest_size = skade_max_manifest_size;
	task->nentries = npick;
	at = (char *) &task->entries[npick];
	task->roots_off = at - (char *) task;
	strcpy(at, roots);
	at += strlen(roots) + 1;
	for (i = 0; i < npick; i++)
	{
		task->entries[i].length = lengths[pick[i]];
		task->entries[i].path_off = at - (char *) task;
		strcpy(at, paths[pick[i]]);
		at += strlen(paths[pick[i]]) + 1;
	}
	on_dsm_detach(seg, stop_on_detach, PointerGetDatum(task));

	worker.bgw_flags = BGWORKER_SHMEM_ACCESS;
	worker.bgw_start_time = BgWorkerStart_ConsistentState;
	worker.bgw_restart_time = BGW_NEVER_RESTART;
	worker.bgw_main_arg = UInt32GetDatum(dsm_segment_handle(seg));
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "skade");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "skade_manifest_helper_main");
	snprintf(worker.bgw_name, BGW_MAXLEN, "skade manifest helper for PID %d", MyProcPid);
	snprintf(worker.bgw_type, BGW_MAXLEN, "skade manifest helper");
	if (!RegisterDynamicBackgroundWorker(&worker, &handle))
	{
		/* no slot: the backend decodes alone */
		pg_atomic_fetch_sub_u32(&skade_shared->decode_helpers, 1);
		dsm_detach(seg);
		return NULL;
	}
	return (ManifestHelper *) seg;
}

/*
 * ManifestHelperEnd
 *		The caller has read its manifests: the helper (if any) stops, and
 *		its task is detached.
 */
void
ManifestHelperEnd(ManifestHelper *helper)
{
	if (helper != NULL)
		dsm_detach((dsm_segment *) helper);
}

/* Count one more helper in, if fewer than the bound run. */
static bool
count_in(void)
{
	uint32		bound = max_parallel_workers > 0 ? Max(1, max_parallel_workers / 2) : 0;
	uint32		now = pg_atomic_read_u32(&skade_shared->decode_helpers);

	while (now < bound)
		if (pg_atomic_compare_exchange_u32(&skade_shared->decode_helpers, &now, now + 1))
			return true;
	return false;
}

/* the helper exits (however): it is counted out */
static void
count_out(int code, Datum arg)
{
	pg_atomic_fetch_sub_u32(&skade_shared->decode_helpers, 1);
}

/* the backend detaches (statement end, error): the helper stops */
static void
stop_on_detach(dsm_segment *seg, Datum arg)
{
	pg_atomic_write_u32(&((HelperTask *) DatumGetPointer(arg))->stop, 1);
}

/*
 * The helper process: the backend's settings, then its manifests from the
 * last one back, until one is cached or being decoded already.
 */
void
skade_manifest_helper_main(Datum main_arg)
{
	dsm_segment *seg;
	HelperTask *task;

	before_shmem_exit(count_out, (Datum) 0);
	BackgroundWorkerUnblockSignals();
	CurrentResourceOwner = ResourceOwnerCreate(NULL, "skade manifest helper");
	seg = dsm_attach(DatumGetUInt32(main_arg));
	if (seg == NULL)
		proc_exit(0);			/* the backend is done already */
	task = dsm_segment_address(seg);
	SetDatabaseEncoding(task->encoding);
	SetConfigOption("skade.allowed_roots", (char *) task + task->roots_off, PGC_SUSET,
					PGC_S_OVERRIDE);
	skade_max_metadata_size = task->max_metadata_size;
	skade_max_manifest_size = task->max_manifest_size;
	decode_from_end(task);
	dsm_detach(seg);
	proc_exit(0);
}

/* prefill the task's manifests from the last one back; quietly stop on any error */
static void
decode_from_end(HelperTask *task)
{
	MemoryContext cxt = AllocSetContextCreate(TopMemoryContext, "skade manifest helper",
											  ALLOCSET_DEFAULT_SIZES);
	int			i;

	for (i = task->nentries - 1; i >= 0; i--)
	{
		const HelperEntry *e = &task->entries[i];
		bool		more = false;

		CHECK_FOR_INTERRUPTS();
		if (pg_atomic_read_u32(&task->stop))
			break;
		MemoryContextSwitchTo(cxt);
		PG_TRY();
		{
			more = ManifestPrefill((const char *) task + e->path_off, e->length);
		}
		PG_CATCH();
		{
			/* the backend decodes this one itself and reports what is wrong */
			HOLD_INTERRUPTS();
			MemoryContextSwitchTo(cxt);
			FlushErrorState();
			LWLockReleaseAll();
			RESUME_INTERRUPTS();
		}
		PG_END_TRY();
		MemoryContextSwitchTo(TopMemoryContext);
		MemoryContextReset(cxt);
		if (!more)
			break;
	}
	MemoryContextDelete(cxt);
}
