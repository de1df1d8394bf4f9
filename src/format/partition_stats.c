/*-------------------------------------------------------------------------
 *
 * partition_stats.c
 *	  Partition values (of a data file) and partition summaries (of a
 *	  manifest) turned into statistics of their source columns, so that
 *	  scan_filter.c prunes by them like by column bounds.
 *
 * Invariants (all that matters is never to drop a file that could match):
 *	 - identity: the value is the column's value in every row, so it
 *	   replaces the column's own bounds (it is at least as tight);
 *	 - year, month, day, hour: the value names a time range; its first and
 *	   last instant (in the source's unit: days for a date, micro- or
 *	   nanoseconds for a timestamp) become bounds where the file has none;
 *	 - truncate[W]: an integer or decimal value v (unscaled) bounds the
 *	   column to [v, v+W-1], a string value is a lower bound (every value
 *	   starts with it), a binary value a lower bound and, rounded up (its
 *	   last byte below 0xff incremented, the rest cut), a strict upper one
 *	   (a value shorter than W is exact: an upper bound itself);
 *	 - bucket[N]: the value (a summary's bounds) is the range of buckets of
 *	   every row, used for eq and in (Iceberg's murmur3 bucket hash);
 *	 - void and unknown transforms give nothing;
 *	 - a null value of any transform but void means every row's source is
 *	   null; a non-null one, that none is (or, for a summary whose
 *	   contains_null is false, that no row of the manifest's files is);
 *	 - a value of the wrong width for its type, or a time range outside
 *	   what PostgreSQL's calendar or the source's unit (nanoseconds: years
 *	   1677-2262) can hold, gives nothing.
 * Derived bounds are palloc'd in the current memory context.
 *
 * Locking: none; pure functions over backend-local data.
 *
 * IDENTIFICATION
 *	  src/format/partition_stats.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "common/int.h"
#include "datatype/timestamp.h"
#include "utils/datetime.h"

#include "format/partition_stats.h"

/* time units of a temporal source column */
typedef enum TimeUnit
{
	UNIT_NONE, UNIT_DAYS, UNIT_MICROS, UNIT_NANOS
} TimeUnit;

#define MAX_YEARS	5000		/* farther from 1970 is not a real partition */

static TimeUnit time_unit(const char *type);
static bool temporal_range(SkadeTransform tr, TimeUnit unit, int64 lo, int64 hi,
						   int64 *first, int64 *last);
static bool transform_start(SkadeTransform tr, int64 t, int64 *days_or_hours);
static char *le_bytes(int64 v, int width);
static uint32 murmur3_32(const unsigned char *data, size_t len);
static void set_all_null(SkadeColumnStats *st);
static void set_no_nulls(SkadeColumnStats *st);
static void derive(const SkadeBoundPartition *part, const SkadeColumn *col,
				   SkadePartitionDatum lo, SkadePartitionDatum hi, SkadeColumnStats *st);
static void truncate_bounds(const SkadeBoundPartition *part, const SkadeColumn *col,
							SkadePartitionDatum lo, SkadePartitionDatum hi,
							SkadeColumnStats *st);

/*
 * SkadeBindPartition
 *		Parse each field's transform and find its source column (by id) in
 *		cols.
 */
SkadeBoundPartition *
SkadeBindPartition(const SkadePartitionField *fields, int nfields, const SkadeColumn *cols,
				   int ncols)
{
	SkadeBoundPartition *parts = palloc0(sizeof(SkadeBoundPartition) * (nfields + 1));
	int			i,
				j;

	for (i = 0; i < nfields; i++)
	{
		const char *t = fields[i].transform;
		SkadeBoundPartition *p = &parts[i];

		p->field = &fields[i];
		p->source = -1;
		for (j = 0; j < ncols; j++)
			if (cols[j].id == fields[i].source_id)
				p->source = j;
		if (strcmp(t, "identity") == 0)
			p->transform = SKADE_TR_IDENTITY;
		else if (strcmp(t, "year") == 0)
			p->transform = SKADE_TR_YEAR;
		else if (strcmp(t, "month") == 0)
			p->transform = SKADE_TR_MONTH;
		else if (strcmp(t, "day") == 0)
			p->transform = SKADE_TR_DAY;
		else if (strcmp(t, "hour") == 0)
			p->transform = SKADE_TR_HOUR;
		else if (strcmp(t, "void") == 0)
			p->transform = SKADE_TR_VOID;
		else if (sscanf(t, "bucket[%d]", &p->param) == 1 && p->param > 0)
			p->transform = SKADE_TR_BUCKET;
		else if (sscanf(t, "truncate[%d]", &p->param) == 1 && p->param > 0)
			p->transform = SKADE_TR_TRUNCATE;
		else
			p->transform = SKADE_TR_OTHER;
	}
	return parts;
}

/*
 * SkadeStatsFromPartition
 *		Fold a data file's partition values (values[i] for parts[i], in spec
 *		order) into stats, indexed like cols.
 */
void
SkadeStatsFromPartition(const SkadeBoundPartition *parts, int nparts, const SkadeColumn *cols,
						const SkadePartitionDatum *values, SkadeColumnStats *stats)
{
	int			i;

	for (i = 0; i < nparts; i++)
	{
		const SkadeBoundPartition *part = &parts[i];
		SkadeColumnStats *st;

		if (part->source < 0 || part->transform == SKADE_TR_VOID ||
			part->transform == SKADE_TR_OTHER)
			continue;
		st = &stats[part->source];
		if (values[i].len < 0)
			set_all_null(st);
		else
		{
			set_no_nulls(st);
			derive(part, &cols[part->source], values[i], values[i], st);
		}
	}
}

/*
 * SkadeStatsFromSummary
 *		Fold one partition field's summary over a manifest's files into
 *		stats (contains_null: 1 true, 0 false, -1 not recorded; a null
 *		bound is unknown).
 */
void
SkadeStatsFromSummary(const SkadeBoundPartition *part, const SkadeColumn *cols,
					  int contains_null, SkadePartitionDatum lower, SkadePartitionDatum upper,
					  SkadeColumnStats *stats)
{
	SkadeColumnStats *st;

	if (part->source < 0 || part->transform == SKADE_TR_VOID ||
		part->transform == SKADE_TR_OTHER)
		return;
	st = &stats[part->source];
	if (contains_null == 0)
		set_no_nulls(st);
	derive(part, &cols[part->source], lower, upper, st);
}

/* Iceberg's bucket[n] of an int, long, date, time or timestamp value */
int32
SkadeBucketLong(int64 v, int32 n)
{
	unsigned char buf[8];
	int			i;

	for (i = 0; i < 8; i++)
		buf[i] = (unsigned char) (((uint64) v) >> (8 * i));
	return (int32) ((murmur3_32(buf, 8) & PG_INT32_MAX) % (uint32) n);
}

/* Iceberg's bucket[n] of a string (its UTF-8 bytes) or binary value */
int32
SkadeBucketBytes(const char *p, size_t len, int32 n)
{
	return (int32) ((murmur3_32((const unsigned char *) p, len) & PG_INT32_MAX) % (uint32) n);
}

/* ---------------------------------------------------------------- helpers */

#define ROTL32(x, r)	(((x) << (r)) | ((x) >> (32 - (r))))

/*
 * MurmurHash3 x86_32 with seed 0, the hash Iceberg's bucket transform is
 * defined with (PostgreSQL has no murmur3).
 */
static uint32
murmur3_32(const unsigned char *data, size_t len)
{
	const uint32 c1 = 0xcc9e2d51;
	const uint32 c2 = 0x1b873593;
	uint32		h = 0;
	uint32		k;
	size_t		i;

	for (i = 0; i + 4 <= len; i += 4)
	{
		k = (uint32) data[i] | ((uint32) data[i + 1] << 8) |
			((uint32) data[i + 2] << 16) | ((uint32) data[i + 3] << 24);
		k *= c1;
		k = ROTL32(k, 15);
		k *= c2;
		h ^= k;
		h = ROTL32(h, 13);
		h = h * 5 + 0xe6546b64;
	}
	k = 0;
	switch (len & 3)
	{
		case 3:
			k ^= (uint32) data[i + 2] << 16;
			/* FALLTHROUGH */
		case 2:
			k ^= (uint32) data[i + 1] << 8;
			/* FALLTHROUGH */
		case 1:
			k ^= (uint32) data[i];
			k *= c1;
			k = ROTL32(k, 15);
			k *= c2;
			h ^= k;
	}
	h ^= (uint32) len;
	h ^= h >> 16;
	h *= 0x85ebca6b;
	h ^= h >> 13;
	h *= 0xc2b2ae35;
	h ^= h >> 16;
	return h;
}

/*
 * Bounds of the source column from the transform results lo and hi (either
 * may be null: unknown), into st.
 */
static void
derive(const SkadeBoundPartition *part, const SkadeColumn *col, SkadePartitionDatum lo,
	   SkadePartitionDatum hi, SkadeColumnStats *st)
{
	const char *type = col->type;
	TimeUnit	unit = time_unit(type);

	switch (part->transform)
	{
		case SKADE_TR_IDENTITY:
			/* types of any width whose bounds are compared, and fixed widths */
			if (col->width < 0 && strcmp(type, "string") != 0 && strcmp(type, "binary") != 0 &&
				strncmp(type, "decimal", 7) != 0)
				return;
			if (lo.len >= 0 && SkadeBoundLengthOk(col, lo.len))
			{
				st->bound[0] = lo.p;
				st->bound_len[0] = lo.len;
			}
			if (hi.len >= 0 && SkadeBoundLengthOk(col, hi.len))
			{
				st->bound[1] = hi.p;
				st->bound_len[1] = hi.len;
				st->upper_strict = false;
			}
			return;
		case SKADE_TR_YEAR:
		case SKADE_TR_MONTH:
		case SKADE_TR_DAY:
		case SKADE_TR_HOUR:
			{
				int			width = unit == UNIT_DAYS ? 4 : 8;
				int64		first,
							last;

				if (unit == UNIT_NONE)
					return;
				if (lo.len == 4 && st->bound[0] == NULL &&
					temporal_range(part->transform, unit, (int32) SkadeLeInt(lo.p, 4),
								   (int32) SkadeLeInt(lo.p, 4), &first, &last))
				{
					st->bound[0] = le_bytes(first, width);
					st->bound_len[0] = width;
				}
				if (hi.len == 4 && st->bound[1] == NULL &&
					temporal_range(part->transform, unit, (int32) SkadeLeInt(hi.p, 4),
								   (int32) SkadeLeInt(hi.p, 4), &first, &last))
				{
					st->bound[1] = le_bytes(last, width);
					st->bound_len[1] = width;
				}
				return;
			}
		case SKADE_TR_BUCKET:
			if (lo.len == 4 && hi.len == 4 && st->bucket_n == 0)
			{
				st->bucket_n = part->param;
				st->bucket_lo = (int32) SkadeLeInt(lo.p, 4);
				st->bucket_hi = (int32) SkadeLeInt(hi.p, 4);
			}
			return;
		case SKADE_TR_TRUNCATE:
			if (strcmp(type, "int") == 0 || strcmp(type, "long") == 0)
			{
				int			width = type[0] == 'i' ? 4 : 8;
				int64		maxv = width == 4 ? PG_INT32_MAX : PG_INT64_MAX;

				if (lo.len == width && st->bound[0] == NULL)
				{
					st->bound[0] = lo.p;
					st->bound_len[0] = lo.len;
				}
				if (hi.len == width && st->bound[1] == NULL)
				{
					int64		v = SkadeLeInt(hi.p, width);

					v = v > maxv - (part->param - 1) ? maxv : v + (part->param - 1);
					st->bound[1] = le_bytes(v, width);
					st->bound_len[1] = width;
				}
			}
			else if (strcmp(type, "string") == 0 && lo.len >= 0 && st->bound[0] == NULL)
			{
				st->bound[0] = lo.p;
				st->bound_len[0] = lo.len;
			}
			else if (strcmp(type, "binary") == 0 || strncmp(type, "decimal", 7) == 0)
				truncate_bounds(part, col, lo, hi, st);
			return;
		default:
			return;
	}
}

/*
 * Bounds of a binary or decimal column from truncate[W] results lo and hi,
 * where the file has none: lo itself is a lower bound; hi + W - 1 (decimal,
 * unscaled) an upper one; for binary, hi itself if it is shorter than W
 * (W did not cut it, and a value whose result is at most hi is at most hi
 * itself), else hi rounded up, a strict one (every value starting with hi
 * sorts below it; none if hi is all 0xff bytes).
 */
static void
truncate_bounds(const SkadeBoundPartition *part, const SkadeColumn *col, SkadePartitionDatum lo,
				SkadePartitionDatum hi, SkadeColumnStats *st)
{
	bool		binary = strcmp(col->type, "binary") == 0;

	if (lo.len >= 0 && SkadeBoundLengthOk(col, lo.len) && st->bound[0] == NULL)
	{
		st->bound[0] = lo.p;
		st->bound_len[0] = lo.len;
	}
	if (hi.len < 0 || !SkadeBoundLengthOk(col, hi.len) || st->bound[1] != NULL)
		return;
	if (binary && hi.len < part->param)
	{
		/* shorter than W: the value itself (and the largest of them) */
		st->bound[1] = hi.p;
		st->bound_len[1] = hi.len;
		st->upper_strict = false;
	}
	else if (binary)
	{
		int			n = hi.len;
		char	   *up;

		while (n > 0 && (unsigned char) hi.p[n - 1] == 0xff)
			n--;
		if (n == 0)
			return;				/* no byte string is above every value */
		up = palloc(n);
		memcpy(up, hi.p, n);
		up[n - 1] = (char) ((unsigned char) up[n - 1] + 1);
		st->bound[1] = up;
		st->bound_len[1] = n;
		st->upper_strict = true;
	}
	else
	{
		const int128 max = (int128) ((((uint128) 1) << 127) - 1);
		int128		v = SkadeDecimalBound(hi.p, hi.len);
		char	   *up = palloc(16);

		v = v > max - (part->param - 1) ? max : v + (part->param - 1);
		st->bound[1] = up;
		st->bound_len[1] = SkadeDecimalBytes(v, up);
	}
}

static TimeUnit
time_unit(const char *type)
{
	if (strcmp(type, "date") == 0)
		return UNIT_DAYS;
	if (strncmp(type, "timestamp", 9) == 0)
		return strstr(type, "_ns") ? UNIT_NANOS : UNIT_MICROS;
	return UNIT_NONE;
}

/*
 * The first instant of transform result lo and the last of hi, in unit;
 * false if out of range (or an hour of a date).
 */
static bool
temporal_range(SkadeTransform tr, TimeUnit unit, int64 lo, int64 hi, int64 *first, int64 *last)
{
	int64		start,
				end;
	int64		per_day = unit == UNIT_DAYS ? 1 :
		(unit == UNIT_MICROS ? USECS_PER_DAY : USECS_PER_DAY * 1000);

	if (tr == SKADE_TR_HOUR)
	{
		if (unit == UNIT_DAYS)
			return false;
		start = lo;
		end = hi + 1;
		per_day /= 24;			/* per hour */
	}
	else if (!transform_start(tr, lo, &start) || !transform_start(tr, hi + 1, &end))
		return false;
	/* nanoseconds cover only 1677-2262: a range beyond gives nothing */
	if (pg_mul_s64_overflow(start, per_day, first) ||
		pg_mul_s64_overflow(end, per_day, last) ||
		pg_sub_s64_overflow(*last, 1, last))
		return false;
	return true;
}

/* days since 1970-01-01 at which year/month/day number t starts */
static bool
transform_start(SkadeTransform tr, int64 t, int64 *days)
{
	switch (tr)
	{
		case SKADE_TR_YEAR:
			if (t < -MAX_YEARS || t > MAX_YEARS)
				return false;
			*days = date2j(1970 + (int) t, 1, 1) - UNIX_EPOCH_JDATE;
			return true;
		case SKADE_TR_MONTH:
			{
				int64		y = t >= 0 ? t / 12 : -((-t + 11) / 12);

				if (y < -MAX_YEARS || y > MAX_YEARS)
					return false;
				*days = date2j(1970 + (int) y, (int) (t - y * 12) + 1, 1) - UNIX_EPOCH_JDATE;
				return true;
			}
		case SKADE_TR_DAY:
			if (t < -(int64) MAX_YEARS * 366 || t > (int64) MAX_YEARS * 366)
				return false;
			*days = t;
			return true;
		default:
			return false;
	}
}

static char *
le_bytes(int64 v, int width)
{
	char	   *p = palloc(width);
	int			i;

	for (i = 0; i < width; i++)
		p[i] = (char) (((uint64) v) >> (8 * i));
	return p;
}

/* every row's value is null: value and null counts equal */
static void
set_all_null(SkadeColumnStats *st)
{
	if (!st->has_count[SKADE_STAT_VALUES])
	{
		st->has_count[SKADE_STAT_VALUES] = true;
		st->count[SKADE_STAT_VALUES] = 1;
	}
	st->has_count[SKADE_STAT_NULLS] = true;
	st->count[SKADE_STAT_NULLS] = st->count[SKADE_STAT_VALUES];
}

static void
set_no_nulls(SkadeColumnStats *st)
{
	if (!st->has_count[SKADE_STAT_NULLS])
	{
		st->has_count[SKADE_STAT_NULLS] = true;
		st->count[SKADE_STAT_NULLS] = 0;
	}
}
