/*-------------------------------------------------------------------------
 *
 * manifest_cache.c
 *	  L0.5: Iceberg manifests decoded once from Avro into flat blobs
 *	  (SkadeManifest, manifest_cache.h) and kept in shared memory, keyed by
 *	  manifest path, for skade.files() and skade.plan_files().
 *
 * Invariants: a manifest is immutable and named by its path, so a cached
 * blob is never stale; it holds exactly the live entries of the file
 * (status ADDED or EXISTING, in file order) with every field as recorded:
 * nothing is inherited here, so one blob serves every snapshot that reads
 * it.  Each entry also carries its partition as jsonb and, when the
 * manifest records its schema and every bound is readable, its statistics
 * as skade.files() returns them (jsonb decoded by that schema), so a warm
 * plan builds no JSON.  An entry with an invalid status or
 * content type, or without data_file.file_path, fails the decode (nothing
 * is cached).  It is an instance of the shared blob cache (blob_cache.c:
 * eviction, coalesced fills, pins, locking), byte-bounded by
 * skade.manifest_cache_size; callers get a blob pinned for the rest of
 * their transaction and read it with no lock held.
 *
 * Memory: a decode runs in its own memory context ("skade manifest
 * decode", which also owns the libavro reader) and leaves only the blob,
 * palloc'd in the caller's context.
 *
 * IDENTIFICATION
 *	  src/manifest_cache.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"

#include "avro_reader.h"
#include "bound_json.h"
#include "file_access.h"
#include "guc.h"
#include "manifest_cache.h"
#include "skade.h"

/* the data file's statistics maps, by SkadeManifestStat count/bound index */
static const char *const stat_fields[] = {
	"column_sizes", "value_counts", "null_value_counts", "nan_value_counts",
	"lower_bounds", "upper_bounds"
};

/* ---- Local variables ---- */

static SkadeBlobCache *manifest_cache = NULL;

static long max_entries(void);
static Size max_blob_size(void);
static void *load_manifest(const char *path, void *arg, Size *size, char **origin);
static void *load_list(const char *key, void *arg, Size *size, char **origin);

/* a manifest list's bytes in the cache: data, NUL, real path, NUL */
#define LIST_KEY_PREFIX "\001list\001"
typedef struct ManifestListBlob
{
	Size		len;
	char		data[FLEXIBLE_ARRAY_MEMBER];
} ManifestListBlob;
static void decode_entry(const SkadeAvroValue *entry, const char *path, StringInfo blob,
						 const SkadeColumn *cols, int ncols);
static SkadeManifestStat *stat_for(SkadeManifestStat *stats, int *nstats, int32 field_id);
static uint32 put_bytes(StringInfo var, const char *p, size_t len, bool nul);
static uint32 put_varlena(StringInfo var, Datum d);
static void append_zeros(StringInfo buf, int n);
static void add_columns_jsonb(StringInfo blob, int entry_start, const SkadeColumn *cols,
							  int ncols, const char *path);
static int	column_index(const SkadeColumn *cols, int ncols, int64 id);

/*
 * A decoded manifest takes at most this many times skade.max_manifest_size
 * (real ones take 2 to 4 times their decoded Avro bytes: paths, statistics
 * and their jsonb), and never more than a palloc'd buffer can hold.
 */
#define SKADE_BLOB_FACTOR	8

/* ---------------------------------------------------------------- shmem */

static long
max_entries(void)
{
	/* index slots for manifests of ~2 kB (one small append each) */
	return Max(128, ((long) skade_manifest_cache_size * 1024L) / 2048);
}

static Size
max_blob_size(void)
{
	return Min((Size) skade_max_manifest_size * SKADE_BLOB_FACTOR, MaxAllocSize / 2);
}

Size
ManifestCacheShmemSize(void)
{
	return SkadeBlobCacheShmemSize((Size) skade_manifest_cache_size * 1024, max_entries());
}

/* Create or attach L0.5 (shmem startup hook, under AddinShmemInitLock). */
void
ManifestCacheShmemInit(void)
{
	manifest_cache = SkadeBlobCacheShmemInit("skade_manifests",
											 (Size) skade_manifest_cache_size * 1024,
											 max_entries(), SkadePathAllowed);
}

/* the cache instance (NULL when skade was not preloaded) */
SkadeBlobCache *
ManifestCache(void)
{
	return manifest_cache;
}

/*
 * ManifestGet
 *		The decoded manifest at path: pinned in the cache until
 *		ManifestRelease or the end of the transaction, or freshly decoded (and cached) on a miss.  It must
 *		have expected_length bytes (-1: not recorded), else data_corrupted.
 */
const SkadeManifest *
ManifestGet(const char *path, int64 expected_length)
{
	Size		size;
	const SkadeManifest *m;

	/* (no path with a control character is looked up: manifest lists' keys have one) */
	SkadeRefuseControlChars(path);
	m = SkadeBlobCacheGet(manifest_cache, path, load_manifest, &expected_length, &size);

	SkadeAvroCheckLength(path, m->file_size, expected_length);
	return m;
}

/*
 * ManifestListBytes
 *		The bytes of the manifest list at path (an s3:// object: local lists
 *		are read from the file each time), through the cache, under a key no
 *		manifest path can have (a control character); *real_path as
 *		SkadeReadLocation sets it.
 */
StringInfo
ManifestListBytes(const char *path, char **real_path)
{
	char	   *key = psprintf("%s%s", LIST_KEY_PREFIX, path);
	Size		size;
	const ManifestListBlob *b = SkadeBlobCacheGet(manifest_cache, key, load_list, NULL, &size);
	StringInfo	out = makeStringInfo();

	PG_TRY();
	{
		appendBinaryStringInfo(out, b->data, b->len);
		*real_path = pstrdup(b->data + b->len + 1);
	}
	PG_FINALLY();
	{
		SkadeBlobCacheRelease(b);
	}
	PG_END_TRY();
	return out;
}

/* SkadeBlobLoader: a manifest list's bytes, then its real path */
static void *
load_list(const char *key, void *arg, Size *size, char **origin)
{
	const char *path = key + strlen(LIST_KEY_PREFIX);
	StringInfo	bytes = SkadeReadLocation(path, origin);
	Size		olen = strlen(*origin);
	ManifestListBlob *b = palloc(offsetof(ManifestListBlob, data) + bytes->len + 1 + olen + 1);

	b->len = bytes->len;
	memcpy(b->data, bytes->data, bytes->len);
	b->data[b->len] = '\0';
	memcpy(b->data + b->len + 1, *origin, olen + 1);
	*size = offsetof(ManifestListBlob, data) + bytes->len + 1 + olen + 1;
	pfree(bytes->data);
	return b;
}

/*
 * ManifestIsCached
 *		Is the manifest at path in the cache now (for prefetching: the answer
 *		may be stale at once)?
 */
bool
ManifestIsCached(const char *path)
{
	Size		size;
	const void *m = SkadeBlobCachePinIfCached(manifest_cache, path, 0, &size);

	if (m == NULL)
		return false;
	SkadeBlobCacheRelease(m);
	return true;
}

/*
 * ManifestRelease
 *		The caller is done with m (from ManifestGet): unpin it now rather
 *		than at the end of the transaction.
 */
void
ManifestRelease(const SkadeManifest *m)
{
	SkadeBlobCacheRelease(m);
}

/* ---------------------------------------------------------------- decoding */

/*
 * SkadeBlobLoader: read the Avro manifest at path into a SkadeManifest; arg
 * points to the length its manifest list records.
 */
static void *
load_manifest(const char *path, void *arg, Size *size, char **origin)
{
	MemoryContext caller = CurrentMemoryContext;
	MemoryContext cxt = AllocSetContextCreate(caller, "skade manifest decode",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext entry_cxt = AllocSetContextCreate(cxt, "skade manifest decode entry",
													ALLOCSET_DEFAULT_SIZES);
	SkadeManifest hdr = {0};
	StringInfoData blob;
	SkadeAvroFile *f;
	const SkadeAvroValue *entry;
	const char *s;
	void	   *result;
	SkadeColumn *cols = NULL;
	int			ncols = 0;

	MemoryContextSwitchTo(cxt);
	/* its length is checked before anything is decoded */
	f = SkadeAvroOpen(path, SKADE_AVRO_MANIFEST, *(int64 *) arg);
	*origin = MemoryContextStrdup(caller, SkadeAvroRealPath(f));
	initStringInfo(&blob);
	append_zeros(&blob, MAXALIGN(sizeof(SkadeManifest)));

	hdr.file_size = SkadeAvroFileSize(f);
	hdr.spec_id = (s = SkadeAvroMeta(f, "partition-spec-id")) ? atoi(s) : -1;
	if ((s = SkadeAvroMeta(f, "schema")) != NULL)
		hdr.schema = put_bytes(&blob, s, strlen(s), true);
	if ((s = SkadeAvroMeta(f, "partition-spec")) != NULL)
		hdr.partition_spec = put_bytes(&blob, s, strlen(s), true);
	while (blob.len % MAXIMUM_ALIGNOF)
		appendStringInfoChar(&blob, '\0');
	hdr.entries = blob.len;
	/* the schema the manifest was written with decodes its bounds */
	if (hdr.schema)
		cols = SkadeParseSchemaColumns(blob.data + hdr.schema, path, &ncols);
	while ((entry = SkadeAvroNext(f)) != NULL)
	{
		int			before = blob.len;

		/* a decoded manifest may take a few times its Avro bytes, no more */
		if ((Size) blob.len > max_blob_size())
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("manifest \"%s\" is too large once decoded", path),
					 errdetail("Its entries take more than %zu bytes (%d times skade.max_manifest_size).",
							   max_blob_size(), SKADE_BLOB_FACTOR),
					 errhint("Raise skade.max_manifest_size if the file is legitimate.")));
		/* the libavro value is reused; only the blob grows */
		MemoryContextSwitchTo(entry_cxt);
		decode_entry(entry, path, &blob, cols, ncols);
		MemoryContextSwitchTo(cxt);
		MemoryContextReset(entry_cxt);
		if (blob.len > before)
			hdr.nentries++;
		CHECK_FOR_INTERRUPTS();
	}
	SkadeAvroClose(f);
	hdr.total_size = blob.len;
	memcpy(blob.data, &hdr, sizeof(SkadeManifest));

	MemoryContextSwitchTo(caller);
	result = palloc(blob.len);
	memcpy(result, blob.data, blob.len);
	*size = blob.len;
	MemoryContextDelete(cxt);
	return result;
}

/*
 * Append one live entry to blob (nothing for a DELETED one): the fixed
 * part, then the partition values and statistics arrays, then the bytes
 * they point to.
 */
static void
decode_entry(const SkadeAvroValue *entry, const char *path, StringInfo blob,
			 const SkadeColumn *cols, int ncols)
{
	SkadeManifestEntry e = {0};
	SkadeAvroValue *df;
	SkadeAvroValue *part = NULL;
	SkadeManifestValue *pvals = NULL;
	SkadeManifestStat *stats;
	int			nstats = 0;
	int			maxstats = 0;
	StringInfoData var;			/* strings and bytes, after the arrays */
	StringInfoData tmp;
	uint32		var_base;
	int64		v;
	char	   *s;
	int			i,
				k;

	if (!SkadeAvroLong(entry, "status", &v) || v < 0 || v > 2)
		ereport(ERROR,
				(errcode(ERRCODE_SKADE_INVALID_FILE),
				 errmsg("manifest \"%s\" has an entry without a valid status", path)));
	if (v == 2)
		return;					/* DELETED */
	e.status = (uint8) v;
	if (!SkadeAvroField(entry, "data_file", &df) || !SkadeAvroText(df, "file_path", &s) ||
		s[0] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_SKADE_INVALID_FILE),
				 errmsg("manifest \"%s\" has an entry without data_file.file_path", path)));
	if (!SkadeAvroLong(df, "content", &v))
		v = 0;
	if (v < 0 || v > 2)
		ereport(ERROR,
				(errcode(ERRCODE_SKADE_INVALID_FILE),
				 errmsg("manifest \"%s\" has a file of unknown content type %lld",
						path, (long long) v),
				 errdetail("File \"%s\".", s),
				 errhint("Content types are 0 (data), 1 (position deletes) and 2 (equality deletes).")));
	e.content = (uint8) v;

	initStringInfo(&var);
	if (SkadeAvroLong(entry, "snapshot_id", &e.snapshot_id))
		e.flags |= SKADE_ME_SNAPSHOT_ID;
	if (SkadeAvroLong(entry, "sequence_number", &e.sequence_number))
		e.flags |= SKADE_ME_SEQ;
	if (SkadeAvroLong(entry, "file_sequence_number", &e.file_sequence_number))
		e.flags |= SKADE_ME_FILE_SEQ;
	if (SkadeAvroLong(df, "record_count", &e.record_count))
		e.flags |= SKADE_ME_RECORD_COUNT;
	if (SkadeAvroLong(df, "file_size_in_bytes", &e.file_size))
		e.flags |= SKADE_ME_FILE_SIZE;
	if (SkadeAvroLong(df, "content_offset", &e.content_offset))
		e.flags |= SKADE_ME_CONTENT_OFFSET;
	if (SkadeAvroLong(df, "content_size_in_bytes", &e.content_size))
		e.flags |= SKADE_ME_CONTENT_SIZE;

	/* the arrays' sizes first: every offset is from the start of the entry */
	if (SkadeAvroField(df, "partition", &part))
		e.npartition = (uint16) SkadeAvroRecordSize(part);
	for (k = 0; k < (int) lengthof(stat_fields); k++)
	{
		SkadeAvroValue *arr;

		if (SkadeAvroField(df, stat_fields[k], &arr))
			maxstats += SkadeAvroArrayLength(arr);
	}
	stats = palloc0(sizeof(SkadeManifestStat) * Max(maxstats, 1));
	pvals = palloc0(sizeof(SkadeManifestValue) * Max(e.npartition, 1));
	var_base = MAXALIGN(sizeof(SkadeManifestEntry)) +
		MAXALIGN(sizeof(SkadeManifestValue) * e.npartition) +
		MAXALIGN(sizeof(SkadeManifestStat) * maxstats);

	e.path = var_base + put_bytes(&var, s, strlen(s), true);
	if (SkadeAvroText(df, "referenced_data_file", &s))
		e.referenced_data_file = var_base + put_bytes(&var, s, strlen(s), true);
	e.nequality = -1;
	{
		SkadeAvroValue *ids;

		if (SkadeAvroField(df, "equality_ids", &ids))
		{
			int32	   *arr;

			e.nequality = SkadeAvroArrayLength(ids);
			arr = palloc(sizeof(int32) * (e.nequality + 1));
			for (i = 0; i < e.nequality; i++)
			{
				int64		id;

				if (!SkadeAvroAsLong(SkadeAvroArrayElement(ids, i), &id) ||
					id < PG_INT32_MIN || id > PG_INT32_MAX)
					ereport(ERROR,
							(errcode(ERRCODE_SKADE_INVALID_FILE),
							 errmsg("manifest \"%s\" has an invalid equality field id", path)));
				arr[i] = (int32) id;
			}
			while (var.len % sizeof(int32))
				appendStringInfoChar(&var, '\0');
			e.equality_ids = var_base + put_bytes(&var, (const char *) arr,
												  sizeof(int32) * e.nequality, false);
		}
	}
	if (SkadeAvroText(df, "file_format", &s))
		e.format = var_base + put_bytes(&var, s, strlen(s), true);
	initStringInfo(&tmp);
	e.partition_jsonb = var_base +
		put_varlena(&var, part ? SkadeAvroToJsonb(part)
					: DirectFunctionCall1(jsonb_in, CStringGetDatum("{}")));
	for (i = 0; i < e.npartition; i++)
	{
		resetStringInfo(&tmp);
		if (SkadeAvroBinaryAt(part, i, &tmp))
		{
			pvals[i].off = var_base + put_bytes(&var, tmp.data, tmp.len, false);
			pvals[i].len = tmp.len;
		}
		else
			pvals[i].len = -1;
	}

	/* statistics maps: array<record{key: int, value: long | bytes}> */
	for (k = 0; k < (int) lengthof(stat_fields); k++)
	{
		SkadeAvroValue *arr;
		int			n;

		if (!SkadeAvroField(df, stat_fields[k], &arr))
			continue;
		n = SkadeAvroArrayLength(arr);
		for (i = 0; i < n; i++)
		{
			SkadeAvroValue *kv = SkadeAvroArrayElement(arr, i);
			SkadeManifestStat *st;
			int64		key,
						count;
			const char *p;
			size_t		len;

			if (!SkadeAvroLong(kv, "key", &key) || key < PG_INT32_MIN || key > PG_INT32_MAX)
				continue;		/* field ids are ints: not a column's */
			if (k < 4)
			{
				if (!SkadeAvroLong(kv, "value", &count))
					continue;
				st = stat_for(stats, &nstats, (int32) key);
				st->count[k] = count;
				st->has_count |= 1 << k;
			}
			else
			{
				if (!SkadeAvroBytes(kv, "value", &p, &len))
					continue;
				st = stat_for(stats, &nstats, (int32) key);
				st->bound[k - 4].off = var_base + put_bytes(&var, p, len, false);
				st->bound[k - 4].len = (int32) len;
			}
		}
	}
	e.nstats = (uint16) nstats;

	/* lay it out */
	e.partition = MAXALIGN(sizeof(SkadeManifestEntry));
	e.stats = e.partition + MAXALIGN(sizeof(SkadeManifestValue) * e.npartition);
	e.size = MAXALIGN(var_base + var.len);
	{
		int			start = blob->len;

		append_zeros(blob, e.size);
		memcpy(blob->data + start, &e, sizeof(e));
		memcpy(blob->data + start + e.partition, pvals,
			   sizeof(SkadeManifestValue) * e.npartition);
		memcpy(blob->data + start + e.stats, stats, sizeof(SkadeManifestStat) * nstats);
		memcpy(blob->data + start + var_base, var.data, var.len);
		if (cols)
			add_columns_jsonb(blob, start, cols, ncols, path);
	}
}

/*
 * Precompute the entry's statistics as skade.files() returns them (jsonb,
 * after the entry, which grows by it), unless a bound would be an error:
 * that is raised when the file is returned, not for the whole manifest.
 */
static void
add_columns_jsonb(StringInfo blob, int entry_start, const SkadeColumn *cols, int ncols,
				  const char *path)
{
	SkadeColumnStats *stats = palloc(sizeof(SkadeColumnStats) * (ncols + 1));
	SkadeManifestEntry *e = (SkadeManifestEntry *) (blob->data + entry_start);
	Datum		d;
	uint32		off;

	ManifestEntryStats(e, cols, ncols, stats);
	if (!SkadeStatsReadable(cols, ncols, stats))
		return;
	d = SkadeColumnsJsonb(cols, ncols, stats, path);
	off = e->size;
	append_zeros(blob, MAXALIGN(VARSIZE(DatumGetPointer(d))));
	e = (SkadeManifestEntry *) (blob->data + entry_start);	/* the blob may have moved */
	memcpy(blob->data + entry_start + off, DatumGetPointer(d), VARSIZE(DatumGetPointer(d)));
	e->columns_jsonb = off;
	e->size = off + MAXALIGN(VARSIZE(DatumGetPointer(d)));
}

/*
 * ManifestEntryStats
 *		The entry's statistics into stats (ncols + 1 of them), by position in
 *		cols; columns cols does not have are left out.
 */
void
ManifestEntryStats(const SkadeManifestEntry *e, const SkadeColumn *cols, int ncols,
				   SkadeColumnStats *stats)
{
	const SkadeManifestStat *ms = SkadeManifestStats(e);
	int			i,
				k;

	memset(stats, 0, sizeof(SkadeColumnStats) * (ncols + 1));
	for (i = 0; i < e->nstats; i++)
	{
		int			c = column_index(cols, ncols, ms[i].field_id);
		SkadeColumnStats *st;

		if (c < 0)
			continue;			/* a column the schema no longer has */
		st = &stats[c];
		for (k = 0; k < 4; k++)
			if (ms[i].has_count & (1 << k))
			{
				st->count[k] = ms[i].count[k];
				st->has_count[k] = true;
			}
		for (k = 0; k < 2; k++)
			if (ms[i].bound[k].len >= 0)
			{
				st->bound[k] = ((const char *) e) + ms[i].bound[k].off;
				st->bound_len[k] = ms[i].bound[k].len;
			}
	}
}

static int
column_index(const SkadeColumn *cols, int ncols, int64 id)
{
	int			i;

	for (i = 0; i < ncols; i++)
		if (cols[i].id == id)
			return i;
	return -1;
}


/* the statistics record of field_id, added (all unknown) if new */
static SkadeManifestStat *
stat_for(SkadeManifestStat *stats, int *nstats, int32 field_id)
{
	int			i;

	for (i = 0; i < *nstats; i++)
		if (stats[i].field_id == field_id)
			return &stats[i];
	stats[i].field_id = field_id;
	stats[i].bound[0].len = -1;
	stats[i].bound[1].len = -1;
	(*nstats)++;
	return &stats[i];
}

/* append n zero bytes (appendStringInfoSpaces writes byte by byte) */
static void
append_zeros(StringInfo buf, int n)
{
	enlargeStringInfo(buf, n);
	memset(buf->data + buf->len, 0, n);
	buf->len += n;
	buf->data[buf->len] = '\0';
}

/* append a varlena to var, aligned; its offset in var */
static uint32
put_varlena(StringInfo var, Datum d)
{
	uint32		off;

	while (var->len % MAXIMUM_ALIGNOF)
		appendStringInfoChar(var, '\0');
	off = var->len;
	appendBinaryStringInfo(var, DatumGetPointer(d), VARSIZE(DatumGetPointer(d)));
	return off;
}

/* append bytes (NUL-terminated if nul) to var; their offset in var */
static uint32
put_bytes(StringInfo var, const char *p, size_t len, bool nul)
{
	uint32		off = var->len;

	appendBinaryStringInfo(var, p, (int) len);
	if (nul)
		appendStringInfoChar(var, '\0');
	return off;
}
