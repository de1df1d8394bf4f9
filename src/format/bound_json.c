/*-------------------------------------------------------------------------
 *
 * bound_json.c
 *	  Column statistics of a data file as readable JSON: bounds in Iceberg's
 *	  single-value serialisation decoded by the column's type.
 *
 * Invariants: a bound of the wrong width for its type is 22SK1
 * (SkadeBoundJsonb) or, asked beforehand, not readable (SkadeBoundReadable),
 * so that a caller can precompute the JSON of good files and leave the
 * error to the moment a bad one is returned.  Values are built as
 * JsonbValues (SkadeJb*), never as JSON text to be parsed again.  The
 * objects built for every data file are laid out in jsonb's binary form
 * here, byte for byte as pushJsonbValue() and JsonbValueToJsonb() would:
 * partitions from JsonbValues (SkadeJsonbObject), statistics written
 * straight into the buffer with no JsonbValue tree (SkadeColumnsJsonb;
 * regress manifests compares both with PostgreSQL's own builder);
 * integers become numerics in numeric's short format directly, a format
 * checked once per backend against int64_to_numeric() (which is used if
 * they ever differ).
 *
 * Locking: none; pure functions over backend-local data.
 *
 * IDENTIFICATION
 *	  src/format/bound_json.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "mb/pg_wchar.h"

#include <math.h>

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/datetime.h"
#include "utils/numeric.h"
#include "utils/timestamp.h"
#include "utils/uuid.h"

#include "format/bound_json.h"
#include "util/skade_limits.h"

#define MAX_DECIMAL_SCALE	38		/* Iceberg's decimals have precision <= 38 */
/* an int64 in numeric's short format: header, uint16, 5 digits (16 bytes) */
#define SHORT_NUMERIC_MAX	16

static void decimal_jsonb(const char *type, const char *p, size_t len, JsonbValue *out);
static bool key_before(const JsonbValue *a, const JsonbValue *b);
static Numeric short_numeric(int64 i);
static Numeric short_numeric_into(char *dst, int64 i);
static Jsonb *objects_to_jsonb(const JsonbValue *root);
static inline void put_bytes(StringInfo buf, const void *p, int len);
static inline void pad_to_int(StringInfo buf);
static void put_jsonb_object(StringInfo buf, const JsonbValue *v, JEntry *je);
static void put_jsonb_scalar(StringInfo buf, const JsonbValue *v, JEntry *je);
static Datum columns_jsonb(const SkadeColumn *cols, int ncols, const SkadeColumnStats *stats,
						   const char *file);
static void put_column_stats(StringInfo buf, const SkadeColumn *col, const SkadeColumnStats *c,
							 const char *file);
static bool name_before(const SkadeColumn *cols, const int *name_len, int a, int b);
static int	reserve_entries(StringInfo buf, int n);
static inline void set_entry(StringInfo buf, int entries, int i, JEntry type, uint32 len,
							 uint32 *total);
static void put_int(StringInfo buf, int64 i, JEntry *je);
static bool short_numeric_ok(void);

/*
 * SkadeColumnsJsonb
 *		{"name": {"id": .., "size": .., "value_count": .., "null_count": ..,
 *		"nan_count": .., "lower": .., "upper": ..}, ...}: the statistics a
 *		file has, by column name (columns without any are left out; of two
 *		columns of one name, the first).  A bound SkadeBoundJsonb() cannot
 *		read is its error, the first in column order.
 */
Datum
SkadeColumnsJsonb(const SkadeColumn *cols, int ncols, const SkadeColumnStats *stats,
				  const char *file)
{
	int			i,
				k;

	if (!SkadeStatsReadable(cols, ncols, stats))
		for (i = 0; i < ncols; i++)
			for (k = 0; k < 2; k++)
				if (stats[i].bound[k])
				{
					JsonbValue	v;

					/* raises the error of the first bad bound */
					SkadeBoundJsonb(&cols[i], stats[i].bound[k], stats[i].bound_len[k],
									k == 0 ? "lower" : "upper", file, &v);
				}
	return columns_jsonb(cols, ncols, stats, file);
}

/*
 * SkadeColumnsJsonbIfReadable
 *		SkadeColumnsJsonb(), or (Datum) 0 if a bound is not readable (so that
 *		a manifest's statistics can be precomputed, leaving the error to the
 *		moment the bad file is returned).
 */
Datum
SkadeColumnsJsonbIfReadable(const SkadeColumn *cols, int ncols, const SkadeColumnStats *stats,
							const char *file)
{
	if (!SkadeStatsReadable(cols, ncols, stats))
		return (Datum) 0;
	return columns_jsonb(cols, ncols, stats, file);
}

/*
 * The statistics object of readable bounds, written straight into jsonb's
 * binary form (see objects_to_jsonb for the layout), the columns in jsonb's
 * key order (length, then bytes), with no JsonbValue tree: this runs for
 * every file a manifest holds.
 */
static Datum
columns_jsonb(const SkadeColumn *cols, int ncols, const SkadeColumnStats *stats,
			  const char *file)
{
	int		   *order = palloc(sizeof(int) * (ncols + 1));
	int		   *name_len = palloc(sizeof(int) * (ncols + 1));
	StringInfoData buf;
	uint32		header;
	uint32		total = 0;
	int			entries;
	int			n = 0;
	int			i,
				j;

	for (i = 0; i < ncols; i++)
	{
		const SkadeColumnStats *c = &stats[i];

		if (!c->has_count[0] && !c->has_count[1] && !c->has_count[2] && !c->has_count[3] &&
			c->bound[0] == NULL && c->bound[1] == NULL)
			continue;
		name_len[i] = strlen(cols[i].name);
		/* insertion in jsonb key order */
		for (j = n; j > 0 && name_before(cols, name_len, i, order[j - 1]); j--)
			;
		if (j > 0 && !name_before(cols, name_len, order[j - 1], i))
			continue;			/* a second column of that name ("a.b" twice) */
		memmove(&order[j + 1], &order[j], sizeof(int) * (n - j));
		order[j] = i;
		n++;
	}
	initStringInfo(&buf);
	buf.len = VARHDRSZ;
	header = (uint32) n | JB_FOBJECT;
	put_bytes(&buf, &header, sizeof(uint32));
	entries = reserve_entries(&buf, 2 * n);
	for (j = 0; j < n; j++)
	{
		put_bytes(&buf, cols[order[j]].name, name_len[order[j]]);
		set_entry(&buf, entries, j, 0, name_len[order[j]], &total);
	}
	for (j = 0; j < n; j++)
	{
		int			start = buf.len;

		put_column_stats(&buf, &cols[order[j]], &stats[order[j]], file);
		set_entry(&buf, entries, n + j, JENTRY_ISCONTAINER, buf.len - start, &total);
	}
	SET_VARSIZE(buf.data, buf.len);
	return PointerGetDatum(buf.data);
}

/*
 * One column's statistics object (its bounds readable), appended to buf
 * (int-aligned, the padding being part of it): its keys in jsonb order,
 * each present only if the statistic is.
 */
static void
put_column_stats(StringInfo buf, const SkadeColumn *col, const SkadeColumnStats *c,
				 const char *file)
{
	/* the keys in jsonb order: by length, then bytes */
	static const char *const keys[] = {
		"id", "size", "lower", "upper", "nan_count", "null_count", "value_count"
	};
	static const int key_len[] = {2, 4, 5, 5, 9, 10, 11};
	/* the count of each count key (size, nan_count, null_count, value_count) */
	static const int count_of[] = {-1, 0, -1, -1, SKADE_STAT_NANS, SKADE_STAT_NULLS,
	SKADE_STAT_VALUES};
	bool		present[lengthof(keys)];
	bool		int_bounds = strcmp(col->type, "int") == 0 || strcmp(col->type, "long") == 0;
	bool		text_bounds = !int_bounds && strcmp(col->type, "string") == 0;
	uint32		header;
	uint32		total = 0;
	int			entries;
	int			n = 0;
	int			i,
				k;

	for (k = 0; k < (int) lengthof(keys); k++)
	{
		present[k] = k == 0 || (count_of[k] >= 0 ? c->has_count[count_of[k]]
								: c->bound[k - 2] != NULL);
		n += present[k];
	}
	pad_to_int(buf);
	header = (uint32) n | JB_FOBJECT;
	put_bytes(buf, &header, sizeof(uint32));
	entries = reserve_entries(buf, 2 * n);
	for (i = 0, k = 0; k < (int) lengthof(keys); k++)
		if (present[k])
		{
			put_bytes(buf, keys[k], key_len[k]);
			set_entry(buf, entries, i++, 0, key_len[k], &total);
		}
	for (k = 0; k < (int) lengthof(keys); k++)
	{
		int			start = buf->len;
		JEntry		je;

		if (!present[k])
			continue;
		if (k == 0)
			put_int(buf, col->id, &je);
		else if (count_of[k] >= 0)
			put_int(buf, c->count[count_of[k]], &je);
		else if (int_bounds)
		{
			/* as SkadeBoundJsonb() does, the number in place */
			SkadeCheckBoundLength(col, c->bound_len[k - 2], keys[k], file);
			put_int(buf, SkadeLeInt(c->bound[k - 2], c->bound_len[k - 2]), &je);
		}
		else if (text_bounds && memchr(c->bound[k - 2], '\0', c->bound_len[k - 2]) == NULL)
		{
			/* UTF-8 text, as checked (SkadeStatsReadable): the bytes as they are */
			put_bytes(buf, c->bound[k - 2], (int) c->bound_len[k - 2]);
			je = 0;				/* a string */
		}
		else
		{
			JsonbValue	v;

			SkadeBoundJsonb(col, c->bound[k - 2], c->bound_len[k - 2], keys[k], file, &v);
			put_jsonb_scalar(buf, &v, &je);
		}
		set_entry(buf, entries, i++, je & JENTRY_TYPEMASK, buf->len - start, &total);
	}
}

/* does column a's name sort before column b's as jsonb keys (shorter first, then bytes)? */
static bool
name_before(const SkadeColumn *cols, const int *name_len, int a, int b)
{
	if (name_len[a] != name_len[b])
		return name_len[a] < name_len[b];
	return memcmp(cols[a].name, cols[b].name, name_len[a]) < 0;
}

/* reserve n JEntries at buf's end; their offset */
static int
reserve_entries(StringInfo buf, int n)
{
	int			at = buf->len;

	enlargeStringInfo(buf, sizeof(JEntry) * n);
	buf->len += sizeof(JEntry) * n;
	return at;
}

/*
 * Set JEntry i (of those at entries) for an item of len bytes of this type:
 * every JB_OFFSET_STRIDE'th holds the end offset of the items so far
 * (*total, which grows by len), the others their length.
 */
static inline void
set_entry(StringInfo buf, int entries, int i, JEntry type, uint32 len, uint32 *total)
{
	JEntry		meta;

	*total += len;
	if (*total > JENTRY_OFFLENMASK)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("total size of jsonb object elements exceeds the maximum of %d bytes",
						JENTRY_OFFLENMASK)));
	meta = i % JB_OFFSET_STRIDE == 0 ? (type | *total | JENTRY_HAS_OFF) : (type | len);
	memcpy(buf->data + entries + i * sizeof(JEntry), &meta, sizeof(JEntry));
}

/* append integer i as a jsonb numeric (int-aligned); *je its JEntry type */
static void
put_int(StringInfo buf, int64 i, JEntry *je)
{
	pad_to_int(buf);
	if (likely(short_numeric_ok()))
	{
		if (unlikely(buf->len + SHORT_NUMERIC_MAX >= buf->maxlen))
			enlargeStringInfo(buf, SHORT_NUMERIC_MAX);
		buf->len += VARSIZE(short_numeric_into(buf->data + buf->len, i));
	}
	else
	{
		Numeric		num = int64_to_numeric(i);

		put_bytes(buf, num, VARSIZE(num));
	}
	*je = JENTRY_ISNUMERIC;
}

/*
 * SkadeJsonbObject
 *		An object of these n pairs (keys, and scalar or SkadeJsonbObject-ready
 *		object values; the array is reordered) as jsonb, exactly as
 *		pushJsonbValue() and JsonbValueToJsonb() build it: keys sorted by
 *		length, then bytes; of a key given twice, the last value.
 */
Datum
SkadeJsonbObject(JsonbPair *pairs, int n)
{
	JsonbValue	root;
	int			i,
				j,
				m = 0;

	/* stable: equal keys keep the order they were given in */
	for (i = 1; i < n; i++)
	{
		JsonbPair	p = pairs[i];

		for (j = i; j > 0 && key_before(&p.key, &pairs[j - 1].key); j--)
			pairs[j] = pairs[j - 1];
		pairs[j] = p;
	}
	for (i = 0; i < n; i++)
		if (i + 1 == n || key_before(&pairs[i].key, &pairs[i + 1].key))
			pairs[m++] = pairs[i];
	for (i = 0; i < m; i++)
		pairs[i].order = i;
	root.type = jbvObject;
	root.val.object.nPairs = m;
	root.val.object.pairs = pairs;
	return JsonbPGetDatum(objects_to_jsonb(&root));
}

/*
 * An object of objects and scalars (keys already in jsonb order, unique) as
 * jsonb, laid out byte for byte as JsonbValueToJsonb() does it
 * (convertToJsonb in jsonb_util.c: a container's header, its keys' then
 * its values' JEntries, every JB_OFFSET_STRIDE'th an end offset, then the
 * keys' and the values' data; numerics and containers start 4-aligned, the
 * padding counted in their length), without its generic machinery: this
 * runs for every data file a manifest holds.
 */
static Jsonb *
objects_to_jsonb(const JsonbValue *root)
{
	StringInfoData buf;
	JEntry		je;

	initStringInfo(&buf);
	buf.len = VARHDRSZ;
	put_jsonb_object(&buf, root, &je);
	SET_VARSIZE(buf.data, buf.len);
	return (Jsonb *) buf.data;
}

/* append len bytes to buf (growing it only when it must) */
static inline void
put_bytes(StringInfo buf, const void *p, int len)
{
	if (unlikely(buf->len + len >= buf->maxlen))
		enlargeStringInfo(buf, len);
	memcpy(buf->data + buf->len, p, len);
	buf->len += len;
}

/* append the 0 to 3 bytes that align buf's end to 4 */
static inline void
pad_to_int(StringInfo buf)
{
	if (unlikely(buf->len + 3 >= buf->maxlen))
		enlargeStringInfo(buf, 3);
	while (buf->len % sizeof(int32))
		buf->data[buf->len++] = '\0';
}

/* append object v (of objects and scalars) to buf; *je its JEntry */
static void
put_jsonb_object(StringInfo buf, const JsonbValue *v, JEntry *je)
{
	int			n = v->val.object.nPairs;
	int			base = buf->len;
	int			entries;
	uint32		header = (uint32) n | JB_FOBJECT;
	uint32		total = 0;
	int			i;

	check_stack_depth();
	pad_to_int(buf);
	put_bytes(buf, &header, sizeof(uint32));
	entries = reserve_entries(buf, 2 * n);
	for (i = 0; i < 2 * n; i++)
	{
		const JsonbValue *x = i < n ? &v->val.object.pairs[i].key
			: &v->val.object.pairs[i - n].value;
		int			start = buf->len;
		JEntry		meta;

		if (x->type == jbvObject)
			put_jsonb_object(buf, x, &meta);
		else
			put_jsonb_scalar(buf, x, &meta);
		set_entry(buf, entries, i, meta & JENTRY_TYPEMASK, buf->len - start, &total);
	}
	*je = JENTRY_ISCONTAINER | (buf->len - base);
}

/* append scalar v to buf; *je its JEntry */
static void
put_jsonb_scalar(StringInfo buf, const JsonbValue *v, JEntry *je)
{
	int			start;

	switch (v->type)
	{
		case jbvNull:
			*je = JENTRY_ISNULL;
			break;
		case jbvBool:
			*je = v->val.boolean ? JENTRY_ISBOOL_TRUE : JENTRY_ISBOOL_FALSE;
			break;
		case jbvString:
			put_bytes(buf, v->val.string.val, v->val.string.len);
			*je = (JEntry) v->val.string.len;
			break;
		case jbvNumeric:
			start = buf->len;
			pad_to_int(buf);
			put_bytes(buf, v->val.numeric, VARSIZE_ANY(v->val.numeric));
			*je = JENTRY_ISNUMERIC | (buf->len - start);
			break;
		default:
			elog(ERROR, "unexpected jsonb value type %d in column statistics", (int) v->type);
	}
}

/* does key a sort before key b in a jsonb object (shorter first, then bytes)? */
static bool
key_before(const JsonbValue *a, const JsonbValue *b)
{
	if (a->val.string.len != b->val.string.len)
		return a->val.string.len < b->val.string.len;
	return memcmp(a->val.string.val, b->val.string.val, a->val.string.len) < 0;
}

/* Would SkadeColumnsJsonb() read every bound of stats without an error? */
bool
SkadeStatsReadable(const SkadeColumn *cols, int ncols, const SkadeColumnStats *stats)
{
	int			i,
				k;

	for (i = 0; i < ncols; i++)
		for (k = 0; k < 2; k++)
			if (stats[i].bound[k] &&
				!SkadeBoundReadable(&cols[i], stats[i].bound[k], stats[i].bound_len[k]))
				return false;
	return true;
}

/* Would SkadeBoundJsonb() read this bound without an error? */
bool
SkadeBoundReadable(const SkadeColumn *c, const char *p, size_t len)
{
	if (!SkadeBoundLengthOk(c, len))
		return false;
	if (strcmp(c->type, "string") == 0)
		return memchr(p, '\0', len) != NULL ||
			(len <= (size_t) PG_INT32_MAX && pg_verifymbstr(p, (int) len, true));
	if (strncmp(c->type, "timestamp", 9) == 0)
	{
		int64		v = SkadeLeInt(p, 8);
		Timestamp	ts = (strstr(c->type, "_ns") ? v / 1000 : v) -
			(Timestamp) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY;

		return IS_VALID_TIMESTAMP(ts);
	}
	return true;
}

/*
 * SkadeBoundJsonb
 *		A bound in Iceberg's single-value serialisation, as a JSON value of
 *		the column's type: numbers, ISO dates and times, text, and "\\x" hex
 *		for binary, fixed and types without a readable form.  Strings point
 *		into p or into palloc'd memory.
 */
void
SkadeBoundJsonb(const SkadeColumn *c, const char *p, size_t len, const char *which,
				const char *file, JsonbValue *out)
{
	const char *t = c->type;

	SkadeCheckBoundLength(c, len, which, file);
	if (strcmp(t, "boolean") == 0)
	{
		out->type = jbvBool;
		out->val.boolean = p[0] != 0;
	}
	else if (strcmp(t, "int") == 0 || strcmp(t, "long") == 0)
		SkadeJbInt(out, SkadeLeInt(p, len));
	else if (strcmp(t, "float") == 0 || strcmp(t, "double") == 0)
	{
		double		d = SkadeBoundFloat(p, len);

		if (isnan(d) || isinf(d))
			SkadeJbString(out, isnan(d) ? "NaN" : (d > 0 ? "Infinity" : "-Infinity"));
		else
			SkadeJbNumber(out, psprintf(len == 4 ? "%.9g" : "%.17g", d));
	}
	else if (strcmp(t, "date") == 0)
	{
		struct pg_tm tm;
		char		buf[MAXDATELEN + 1];

		j2date((int) SkadeLeInt(p, 4) + UNIX_EPOCH_JDATE, &tm.tm_year, &tm.tm_mon, &tm.tm_mday);
		EncodeDateOnly(&tm, USE_ISO_DATES, buf);
		SkadeJbString(out, pstrdup(buf));
	}
	else if (strcmp(t, "time") == 0)
		SkadeJbString(out, DatumGetCString(DirectFunctionCall1(time_out,
															   TimeADTGetDatum(SkadeLeInt(p, 8)))));
	else if (strncmp(t, "timestamp", 9) == 0)
	{
		int64		v = SkadeLeInt(p, 8);
		bool		ns = strstr(t, "_ns") != NULL;
		int			nanos = ns ? (int) (((v % 1000) + 1000) % 1000) : 0;
		Timestamp	ts = (ns ? (v - nanos) / 1000 : v) -
			(Timestamp) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY;
		struct pg_tm tm;
		fsec_t		fsec;
		char		buf[MAXDATELEN + 16];

		/* ISO 8601 whatever the DateStyle; timestamptz in UTC */
		if (timestamp2tm(ts, NULL, &tm, &fsec, NULL, NULL) != 0)
			ereport(ERROR,
					(errcode(ERRCODE_SKADE_INVALID_FILE),
					 errmsg("the %s bound of column \"%s\" in manifest \"%s\" is out of range",
							which, c->name, file)));
		if (nanos == 0)
			EncodeDateTime(&tm, fsec, false, 0, NULL, USE_ISO_DATES, buf);
		else
		{
			/* nine fractional digits: PostgreSQL's own stop at six */
			EncodeDateTime(&tm, 0, false, 0, NULL, USE_ISO_DATES, buf);
			snprintf(buf + strlen(buf), 16, ".%06d%03d", (int) fsec, nanos);
			while (buf[strlen(buf) - 1] == '0')
				buf[strlen(buf) - 1] = '\0';
		}
		SkadeJbString(out, strncmp(t, "timestamptz", 11) == 0 ? psprintf("%s+00", buf)
					  : pstrdup(buf));
	}
	else if (strcmp(t, "string") == 0)
	{
		/* UTF-8 text; one holding a NUL (valid, but not text here) as hex */
		if (memchr(p, '\0', len) != NULL)
			SkadeHexJsonb(p, len, out);
		else if (!SkadeBoundReadable(c, p, len))
			ereport(ERROR,
					(errcode(ERRCODE_SKADE_INVALID_FILE),
					 errmsg("the %s bound of column \"%s\" in manifest \"%s\" is not UTF-8 text",
							which, c->name, file)));
		else
			SkadeJbText(out, pnstrdup(p, len), len);
	}
	else if (strcmp(t, "uuid") == 0)
	{
		pg_uuid_t	u;

		memcpy(u.data, p, 16);
		SkadeJbString(out, DatumGetCString(DirectFunctionCall1(uuid_out, UUIDPGetDatum(&u))));
	}
	else if (strncmp(t, "decimal", 7) == 0)
		decimal_jsonb(t, p, len, out);
	else
		SkadeHexJsonb(p, len, out);
}

/* a decimal bound (big-endian two's complement unscaled value) as a number */
static void
decimal_jsonb(const char *type, const char *p, size_t len, JsonbValue *out)
{
	const char *comma = strchr(type, ',');
	int			scale = comma ? atoi(comma + 1) : 0;
	int128		v = (signed char) p[0];
	char		digits[MAX_DECIMAL_SCALE + 48];
	char		text[MAX_DECIMAL_SCALE + 50];
	int			nd = 0;
	int			n = 0;
	bool		neg;
	uint128		u;
	size_t		i;

	if (scale < 0 || scale > MAX_DECIMAL_SCALE)
	{
		SkadeHexJsonb(p, len, out);	/* not a decimal Iceberg allows */
		return;
	}
	for (i = 1; i < len; i++)
		v = v * 256 + (unsigned char) p[i];
	neg = v < 0;
	u = neg ? (uint128) (-(v + 1)) + 1 : (uint128) v;
	do
	{
		digits[nd++] = '0' + (int) (u % 10);
		u /= 10;
	} while (u > 0 || nd <= scale);
	if (neg)
		text[n++] = '-';
	while (nd > 0)
	{
		if (nd == scale)
			text[n++] = '.';
		text[n++] = digits[--nd];
	}
	text[n] = '\0';
	SkadeJbNumber(out, pstrdup(text));
}

/* "\\x..." hex of raw bytes, as a JSON string */
void
SkadeHexJsonb(const char *p, size_t len, JsonbValue *out)
{
	static const char hexdigits[] = "0123456789abcdef";
	char	   *s = palloc(len * 2 + 3);
	size_t		i;

	s[0] = '\\';
	s[1] = 'x';
	for (i = 0; i < len; i++)
	{
		s[2 + 2 * i] = hexdigits[((unsigned char) p[i]) >> 4];
		s[3 + 2 * i] = hexdigits[((unsigned char) p[i]) & 0xf];
	}
	s[2 + 2 * len] = '\0';
	SkadeJbString(out, s);
}

/* ---------------------------------------------------------------- JsonbValue builders */

/* a NUL-terminated string */
JsonbValue *
SkadeJbString(JsonbValue *v, const char *s)
{
	return SkadeJbText(v, s, strlen(s));
}

/* len bytes of text (not copied) */
JsonbValue *
SkadeJbText(JsonbValue *v, const char *s, size_t len)
{
	v->type = jbvString;
	v->val.string.val = (char *) s;
	v->val.string.len = (int) len;
	return v;
}

JsonbValue *
SkadeJbInt(JsonbValue *v, int64 i)
{
	v->type = jbvNumeric;
	v->val.numeric = short_numeric_ok() ? short_numeric(i) : int64_to_numeric(i);
	return v;
}

/*
 * An int64 as a numeric, built directly in numeric's short format as
 * numeric.c's make_result() lays it out (its sign and weight in the header,
 * then its base-10000 digits without trailing zero digits; zero has none):
 * int64_to_numeric() takes three allocations and a digit buffer per value,
 * and statistics JSON makes a dozen numbers per data file.
 */
static Numeric
short_numeric(int64 i)
{
	return short_numeric_into(palloc(SHORT_NUMERIC_MAX), i);
}

/* short_numeric() into dst (SHORT_NUMERIC_MAX bytes, int-aligned) */
static Numeric
short_numeric_into(char *dst, int64 i)
{
	uint64		mag = i < 0 ? -(uint64) i : (uint64) i;
	int16		digit[5];		/* least significant first: 10000^5 > 2^64 */
	int			k = 0,
				low = 0,
				n,
				j;
	Size		len;
	Numeric		res = (Numeric) dst;
	uint16		header;

	while (mag != 0)
	{
		digit[k++] = (int16) (mag % 10000);
		mag /= 10000;
	}
	while (low < k && digit[low] == 0)
		low++;					/* trailing zero digits are left out */
	n = k - low;
	len = VARHDRSZ + sizeof(uint16) + n * sizeof(int16);
	SET_VARSIZE(res, len);
	/* NUMERIC_SHORT, sign, dscale 0, weight k - 1 (0 for zero) */
	header = 0x8000 | (i < 0 ? 0x2000 : 0) | ((k > 0 ? k - 1 : 0) & 0x003F);
	memcpy(dst + VARHDRSZ, &header, sizeof(uint16));
	for (j = 0; j < n; j++)
		memcpy(dst + VARHDRSZ + sizeof(uint16) + j * sizeof(int16),
			   &digit[k - 1 - j], sizeof(int16));
	return res;
}

/*
 * Does short_numeric() build what int64_to_numeric() does?  Checked once
 * per backend on values around every digit boundary; if not (a numeric
 * format skade does not know), int64_to_numeric() is used.
 */
static bool
short_numeric_ok(void)
{
	static int	ok = 0;			/* 1 yes, -1 no, 0 not checked yet */
	static const int64 probe[] = {
		0, 1, -1, 9, 10, 9999, 10000, -10000, 10001, 12345678, 100000000, -99990000,
		INT64CONST(1000000000000), INT64CONST(123456789012345678), PG_INT64_MAX,
		PG_INT64_MIN, PG_INT64_MIN + 1, PG_INT32_MAX, PG_INT32_MIN
	};
	int			j;

	if (ok != 0)
		return ok > 0;
	ok = 1;
	for (j = 0; j < (int) lengthof(probe); j++)
	{
		Numeric		a = short_numeric(probe[j]);
		Numeric		b = int64_to_numeric(probe[j]);

		if (VARSIZE(a) != VARSIZE(b) || memcmp(a, b, VARSIZE(a)) != 0)
			ok = -1;
		pfree(a);
		pfree(b);
	}
	return ok > 0;
}

/* a number from its decimal text */
JsonbValue *
SkadeJbNumber(JsonbValue *v, const char *text)
{
	v->type = jbvNumeric;
	v->val.numeric = DatumGetNumeric(DirectFunctionCall3(numeric_in, CStringGetDatum(text),
														 ObjectIdGetDatum(InvalidOid),
														 Int32GetDatum(-1)));
	return v;
}

JsonbValue *
SkadeJbBool(JsonbValue *v, bool b)
{
	v->type = jbvBool;
	v->val.boolean = b;
	return v;
}

JsonbValue *
SkadeJbNull(JsonbValue *v)
{
	v->type = jbvNull;
	return v;
}
