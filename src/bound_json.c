/*-------------------------------------------------------------------------
 *
 * bound_json.c
 *	  Column statistics of a data file as readable JSON: bounds in Iceberg's
 *	  single-value serialisation decoded by the column's type.
 *
 * Invariants: a bound of the wrong width for its type is data_corrupted
 * (SkadeAppendBound) or, asked beforehand, not readable
 * (SkadeBoundReadable), so that a caller can precompute the JSON of good
 * files and leave the error to the moment a bad one is returned.
 *
 * Locking: none; pure functions over backend-local data.
 *
 * IDENTIFICATION
 *	  src/bound_json.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/datetime.h"
#include "utils/json.h"
#include "utils/timestamp.h"
#include "utils/uuid.h"

#include "bound_json.h"

#define MAX_DECIMAL_SCALE	38		/* Iceberg's decimals have precision <= 38 */

/*
 * SkadeAppendColumnsJson
 *		{"name": {"id": .., "size": .., "value_count": .., "null_count": ..,
 *		"nan_count": .., "lower": .., "upper": ..}, ...}: the statistics a
 *		file has, by column name (columns without any are left out).
 */
void
SkadeAppendColumnsJson(StringInfo out, const SkadeColumn *cols, int ncols,
					   const SkadeColumnStats *stats, const char *file)
{
	static const char *const count_keys[] = {"size", "value_count", "null_count", "nan_count"};
	static const char *const bound_keys[] = {"lower", "upper"};
	bool		first = true;
	int			i,
				k;

	appendStringInfoChar(out, '{');
	for (i = 0; i < ncols; i++)
	{
		const SkadeColumnStats *c = &stats[i];

		if (!c->has_count[0] && !c->has_count[1] && !c->has_count[2] && !c->has_count[3] &&
			c->bound[0] == NULL && c->bound[1] == NULL)
			continue;
		if (!first)
			appendStringInfoString(out, ", ");
		first = false;
		escape_json(out, cols[i].name);
		appendStringInfo(out, ": {\"id\": %d", cols[i].id);
		for (k = 0; k < 4; k++)
			if (c->has_count[k])
				appendStringInfo(out, ", \"%s\": " INT64_FORMAT, count_keys[k], c->count[k]);
		for (k = 0; k < 2; k++)
			if (c->bound[k])
			{
				appendStringInfo(out, ", \"%s\": ", bound_keys[k]);
				SkadeAppendBound(out, &cols[i], c->bound[k], c->bound_len[k], bound_keys[k], file);
			}
		appendStringInfoChar(out, '}');
	}
	appendStringInfoChar(out, '}');
}

/* Would SkadeAppendColumnsJson() read every bound of stats without an error? */
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

/* Would SkadeAppendBound() read this bound without an error? */
bool
SkadeBoundReadable(const SkadeColumn *c, const char *p, size_t len)
{
	if (!SkadeBoundLengthOk(c, len))
		return false;
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
 * A bound in Iceberg's single-value serialisation, as a JSON value of the
 * column's type: numbers, ISO dates and times, text, and "\\x" hex for
 * binary, fixed and types without a readable form.
 */
void
SkadeAppendBound(StringInfo out, const SkadeColumn *c, const char *p, size_t len,
			 const char *which, const char *file)
{
	const char *t = c->type;

	SkadeCheckBoundLength(c, len, which, file);
	if (strcmp(t, "boolean") == 0)
		appendStringInfoString(out, p[0] ? "true" : "false");
	else if (strcmp(t, "int") == 0 || strcmp(t, "long") == 0)
		appendStringInfo(out, INT64_FORMAT, SkadeLeInt(p, len));
	else if (strcmp(t, "float") == 0 || strcmp(t, "double") == 0)
	{
		double		d = SkadeBoundFloat(p, len);

		if (isnan(d) || isinf(d))
			appendStringInfo(out, "\"%s\"", isnan(d) ? "NaN" : (d > 0 ? "Infinity" : "-Infinity"));
		else
			appendStringInfo(out, len == 4 ? "%.9g" : "%.17g", d);
	}
	else if (strcmp(t, "date") == 0)
	{
		struct pg_tm tm;
		char		buf[MAXDATELEN + 1];

		j2date((int) SkadeLeInt(p, 4) + UNIX_EPOCH_JDATE, &tm.tm_year, &tm.tm_mon, &tm.tm_mday);
		EncodeDateOnly(&tm, USE_ISO_DATES, buf);
		escape_json(out, buf);
	}
	else if (strcmp(t, "time") == 0)
		escape_json(out, DatumGetCString(DirectFunctionCall1(time_out,
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
					(errcode(ERRCODE_DATA_CORRUPTED),
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
		escape_json(out, strncmp(t, "timestamptz", 11) == 0 ? psprintf("%s+00", buf) : buf);
	}
	else if (strcmp(t, "string") == 0)
		escape_json(out, pnstrdup(p, len));
	else if (strcmp(t, "uuid") == 0)
	{
		pg_uuid_t	u;

		memcpy(u.data, p, 16);
		escape_json(out, DatumGetCString(DirectFunctionCall1(uuid_out, UUIDPGetDatum(&u))));
	}
	else if (strncmp(t, "decimal", 7) == 0)
	{
		int			scale = 0;
		int128		v = (signed char) p[0];
		size_t		i;
		char		digits[MAX_DECIMAL_SCALE + 48];
		int			nd = 0;
		bool		neg;
		uint128		u;

		{
			const char *comma = strchr(t, ',');

			if (comma)
				scale = atoi(comma + 1);
		}
		if (scale < 0 || scale > MAX_DECIMAL_SCALE)
		{
			SkadeAppendHex(out, p, len);	/* not a decimal Iceberg allows */
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
			appendStringInfoChar(out, '-');
		while (nd > 0)
		{
			if (nd == scale)
				appendStringInfoChar(out, '.');
			appendStringInfoChar(out, digits[--nd]);
		}
	}
	else
		SkadeAppendHex(out, p, len);
}


/* "\\x..." hex of raw bytes, as a JSON string */
void
SkadeAppendHex(StringInfo out, const char *p, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	size_t		i;

	appendStringInfoString(out, "\"\\\\x");
	for (i = 0; i < len; i++)
	{
		appendStringInfoChar(out, digits[((unsigned char) p[i]) >> 4]);
		appendStringInfoChar(out, digits[((unsigned char) p[i]) & 0xf]);
	}
	appendStringInfoChar(out, '"');
}
