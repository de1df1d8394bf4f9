/*-------------------------------------------------------------------------
 *
 * delete_index.c
 *	  The live delete files of a snapshot, indexed by partition, and which
 *	  of them apply to a given data file, by the Iceberg spec's rules (as
 *	  Java's DeleteFileIndex applies them).
 *
 * Invariants (never leave out a delete file that applies; a superset only
 * costs the reader some reading):
 *	 - a position delete applies to a data file of the same spec id and
 *	   partition values (also when unpartitioned: the same spec) whose data
 *	   sequence number is at most its own; if
 *	   it names its data file (referenced_data_file) only to that one, else
 *	   only to paths within its file_path bounds (ASCII bounds only: other
 *	   bytes may order differently where they were computed);
 *	 - an equality delete applies to data files of the same partition, or
 *	   to every partition if its spec is unpartitioned, whose data sequence
 *	   number is below its own, unless the statistics of one of its
 *	   equality columns prove that no value can be equal on both sides
 *	   (disjoint bounds; all null against none null);
 *	 - partitions whose values cannot be compared reliably (the caller says
 *	   so: unknown specs, float/decimal identity partitions) are matched as
 *	   one, that is by the other rules only;
 *	 - an unknown data sequence number (either side) never rules one out.
 *	 - a position delete that names its data file (referenced_data_file,
 *	   deletion vectors) is matched by that path, whatever its partition;
 *	 Partitions are keyed by the caller's hash of the spec id and values; a
 *	 collision only adds candidates, which the rules then filter.
 *
 * Memory: the index, its lists and copies of the delete entries live in
 * the context it was created in.  Locking: none; backend-local.
 *
 * IDENTIFICATION
 *	  src/format/delete_index.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "miscadmin.h"

#include "common/hashfn.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "format/delete_index.h"
#include "format/scan_filter.h"

/* the position delete field holding the data file path (Iceberg's reserved id) */
#define DELETE_FILE_PATH_ID	2147483546

typedef struct PartitionDeletes
{
	uint64		key;
	List	   *files;			/* SkadeDeleteFile */
} PartitionDeletes;

struct SkadeDeleteIndex
{
	MemoryContext cxt;
	HTAB	   *partitions;		/* PartitionDeletes by the caller's partition key */
	HTAB	   *by_path;		/* PartitionDeletes by a hash of referenced_data_file */
	List	   *unkeyed;		/* deletes matched without partition values */
	List	   *all;			/* every SkadeDeleteFile, in insertion order */
};

static bool position_applies(const SkadeDeleteFile *d, const char *path);
static bool equality_applies(const SkadeDeleteFile *d, const SkadeColumn *cols, int ncols,
							 const SkadeColumnStats *stats);
static const SkadeManifestStat *stat_of(const SkadeManifestEntry *e, int32 field_id);

/* An empty index, living in cxt. */
SkadeDeleteIndex *
SkadeDeleteIndexCreate(MemoryContext cxt)
{
	SkadeDeleteIndex *idx = MemoryContextAllocZero(cxt, sizeof(SkadeDeleteIndex));
	HASHCTL		ctl = {0};

	idx->cxt = cxt;
	ctl.keysize = sizeof(uint64);
	ctl.entrysize = sizeof(PartitionDeletes);
	ctl.hcxt = cxt;
	idx->partitions = hash_create("skade delete index", 64, &ctl,
								  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	idx->by_path = hash_create("skade delete index by path", 64, &ctl,
							   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	return idx;
}

/*
 * SkadeDeleteIndexAdd
 *		Add the delete file e (copied) of a manifest of spec spec_id;
 *		comparable: its partition values can be matched, by key (the
 *		caller's hash of spec id and values); unpartitioned: its
 *		spec has no (non-void) field; seq: its data sequence number, if
 *		known; owner: the caller's, handed back.
 */
void
SkadeDeleteIndexAdd(SkadeDeleteIndex *idx, const SkadeManifestEntry *e, int32 spec_id,
					uint64 key, bool comparable, bool unpartitioned, bool seq_known, int64 seq,
					void *owner)
{
	MemoryContext old = MemoryContextSwitchTo(idx->cxt);
	SkadeDeleteFile *d = palloc0(sizeof(SkadeDeleteFile));

	d->entry = palloc(e->size);
	memcpy(d->entry, e, e->size);
	d->owner = owner;
	d->spec_id = spec_id;
	d->seq_known = seq_known;
	d->seq = seq;
	idx->all = lappend(idx->all, d);

	/*
	 * An unpartitioned equality delete is global; one that names its data
	 * file (or a deletion vector) is matched by that path alone, as Java
	 * does; else by partition.
	 */
	if (e->content == 1 && e->referenced_data_file)
	{
		const char *path = ((const char *) d->entry) + e->referenced_data_file;
		uint64		pkey = hash_bytes_extended((const unsigned char *) path, strlen(path), 0);
		bool		found;
		PartitionDeletes *pd = hash_search(idx->by_path, &pkey, HASH_ENTER, &found);

		if (!found)
			pd->files = NIL;
		pd->files = lappend(pd->files, d);
	}
	else if (!comparable || (e->content == 2 && unpartitioned))
		idx->unkeyed = lappend(idx->unkeyed, d);
	else
	{
		bool		found;
		PartitionDeletes *pd = hash_search(idx->partitions, &key, HASH_ENTER, &found);

		if (!found)
			pd->files = NIL;
		pd->files = lappend(pd->files, d);
	}
	MemoryContextSwitchTo(old);
}

/*
 * SkadeDeletesFor
 *		The delete files (SkadeDeleteFile) that apply to the data file data
 *		of spec spec_id with data sequence number seq (if known), whose
 *		statistics are stats (by position in cols); each is marked used.
 *		comparable: its partition values can be matched.
 */
List *
SkadeDeletesFor(SkadeDeleteIndex *idx, const SkadeManifestEntry *data, uint64 key,
				bool comparable, bool seq_known, int64 seq, const SkadeColumn *cols,
				int ncols, const SkadeColumnStats *stats)
{
	const char *path = SkadeManifestStr(data, data->path);
	List	   *candidates = idx->unkeyed;
	List	   *out = NIL;
	ListCell   *lc;

	if (comparable)
	{
		PartitionDeletes *pd = hash_search(idx->partitions, &key, HASH_FIND, NULL);

		if (pd)
			candidates = list_concat_copy(pd->files, candidates);
	}
	else
	{
		/* partitions not comparable: every delete is a candidate */
		candidates = idx->all;
	}
	if (comparable)
	{
		uint64		pkey = hash_bytes_extended((const unsigned char *) path, strlen(path), 0);
		PartitionDeletes *pd = hash_search(idx->by_path, &pkey, HASH_FIND, NULL);

		if (pd)
			candidates = list_concat_copy(pd->files, candidates);
	}
	foreach(lc, candidates)
	{
		SkadeDeleteFile *d = lfirst(lc);
		bool		applies;

		CHECK_FOR_INTERRUPTS();
		if (d->entry->content == 1)
			applies = (!seq_known || !d->seq_known || seq <= d->seq) &&
				position_applies(d, path);
		else
			applies = (!seq_known || !d->seq_known || seq < d->seq) &&
				equality_applies(d, cols, ncols, stats);
		if (applies)
		{
			d->used = true;
			out = lappend(out, d);
		}
	}
	return out;
}

/* every delete file added, in the order added */
List *
SkadeDeleteIndexFiles(SkadeDeleteIndex *idx)
{
	return idx->all;
}

/* ---------------------------------------------------------------- rules */

/* the data file at path within the position delete file's reach? */
static bool
position_applies(const SkadeDeleteFile *d, const char *path)
{
	const SkadeManifestEntry *e = d->entry;
	const SkadeManifestStat *st;
	const char *lo;
	const char *hi;
	int			len = strlen(path);
	int			k,
				r;

	if (e->referenced_data_file)
		return strcmp(((const char *) e) + e->referenced_data_file, path) == 0;
	st = stat_of(e, DELETE_FILE_PATH_ID);
	if (st == NULL || st->bound[0].len < 0 || st->bound[1].len < 0)
		return true;
	lo = ((const char *) e) + st->bound[0].off;
	hi = ((const char *) e) + st->bound[1].off;
	for (k = 0; k < st->bound[0].len; k++)
		if ((unsigned char) lo[k] >= 0x80)
			return true;
	for (k = 0; k < st->bound[1].len; k++)
		if ((unsigned char) hi[k] >= 0x80)
			return true;
	r = memcmp(path, lo, Min(len, st->bound[0].len));
	if (r < 0 || (r == 0 && len < st->bound[0].len))
		return false;
	r = memcmp(path, hi, Min(len, st->bound[1].len));
	if (r > 0 || (r == 0 && len > st->bound[1].len))
		return false;
	return true;
}

/*
 * May a row of the data file (stats by position in cols) equal a row the
 * equality delete deletes, column by equality column?
 */
static bool
equality_applies(const SkadeDeleteFile *d, const SkadeColumn *cols, int ncols,
				 const SkadeColumnStats *stats)
{
	const SkadeManifestEntry *e = d->entry;
	const int32 *ids = (const int32 *) (((const char *) e) + e->equality_ids);
	int			i,
				c;

	for (i = 0; i < e->nequality; i++)
	{
		const SkadeManifestStat *del = stat_of(e, ids[i]);
		const SkadeColumnStats *dat = NULL;
		const SkadeColumn *col = NULL;
		bool		del_nulls,
					dat_nulls;

		for (c = 0; c < ncols; c++)
			if (cols[c].id == ids[i])
			{
				dat = &stats[c];
				col = &cols[c];
			}
		if (del == NULL || dat == NULL)
			continue;			/* nothing known of one side */
		/* null = null for equality deletes: both may hold nulls */
		del_nulls = !(del->has_count & (1 << SKADE_STAT_NULLS)) ||
			del->count[SKADE_STAT_NULLS] > 0;
		dat_nulls = !dat->has_count[SKADE_STAT_NULLS] || dat->count[SKADE_STAT_NULLS] > 0;
		if (del_nulls && dat_nulls)
			continue;
		/* all null on one side, none on the other */
		if (dat->has_count[SKADE_STAT_VALUES] && dat->has_count[SKADE_STAT_NULLS] &&
			dat->count[SKADE_STAT_VALUES] == dat->count[SKADE_STAT_NULLS] && !del_nulls)
			return false;
		if ((del->has_count & (1 << SKADE_STAT_VALUES)) && (del->has_count & (1 << SKADE_STAT_NULLS)) &&
			del->count[SKADE_STAT_VALUES] == del->count[SKADE_STAT_NULLS] && !dat_nulls)
			return false;
		/* NaN equals NaN in an equality delete, and bounds leave NaN out */
		if ((strcmp(col->type, "float") == 0 || strcmp(col->type, "double") == 0) &&
			(!(del->has_count & (1 << SKADE_STAT_NANS)) || del->count[SKADE_STAT_NANS] > 0) &&
			(!dat->has_count[SKADE_STAT_NANS] || dat->count[SKADE_STAT_NANS] > 0))
			continue;
		if (del->bound[0].len >= 0 && del->bound[1].len >= 0 && dat->bound[0] && dat->bound[1] &&
			SkadeBoundsDisjoint(col, dat->bound[0], dat->bound_len[0],
								dat->bound[1], dat->bound_len[1],
								((const char *) e) + del->bound[0].off, del->bound[0].len,
								((const char *) e) + del->bound[1].off, del->bound[1].len))
			return false;
	}
	return true;
}

static const SkadeManifestStat *
stat_of(const SkadeManifestEntry *e, int32 field_id)
{
	const SkadeManifestStat *ms = SkadeManifestStats(e);
	int			i;

	for (i = 0; i < e->nstats; i++)
		if (ms[i].field_id == field_id)
			return &ms[i];
	return NULL;
}
