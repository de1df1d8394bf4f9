/*-------------------------------------------------------------------------
 *
 * scan_filter.c
 *	  Iceberg REST filter expressions (and, or, not, eq, not-eq, lt, lt-eq,
 *	  gt, gt-eq, in, not-in, is-null, not-null, is-nan, not-nan,
 *	  starts-with, not-starts-with, true, false) bound to a schema and
 *	  evaluated against a data file's column statistics.
 *
 * Invariants:
 *	 - evaluation answers "may match" unless the statistics prove that no
 *	   row of the file can match: a file is never dropped on a guess.  A
 *	   missing statistic, a type whose bounds are not compared (geometry,
 *	   variant, a type skade does not know) or a column the file has no
 *	   stats for all answer "may match";
 *	 - decimals compare by value, as Iceberg's comparator does: a bound is
 *	   the big-endian two's-complement unscaled value at the column's scale
 *	   (1 to 16 bytes, any sign extension), a literal (a JSON number, or a
 *	   string in any scale or with an exponent) is converted to that scale
 *	   exactly.  One the scale cannot hold lies strictly between two
 *	   unscaled values: eq and in can never match it, the order comparisons
 *	   stay exact (lt 12.345 is lt-eq 12.34 at scale 2);
 *	 - uuid, fixed and binary compare as unsigned bytes, a shorter prefix
 *	   first (Iceberg's expression spec; the bucket hash is over the same
 *	   bytes); a literal is a uuid string, or hex ("\\x" prefix allowed)
 *	   of exactly the fixed length;
 *	 - not is pushed down the way Iceberg rewrites it (De Morgan, each
 *	   predicate replaced by its inverse); as in Iceberg, a null row matches
 *	   not-eq, not-in and not-starts-with (and is-null), nothing else;
 *	 - floats compare in Iceberg's total order, -0.0 before 0.0;
 *	 - string and binary bounds may be truncated (lower: a prefix, upper:
 *	   rounded up); every comparison here stays correct for truncated
 *	   bounds.  An upper bound marked strict (derived from a truncate
 *	   partition) is above every value: equal to a literal, it excludes it;
 *	 - binding errors (unknown column, literal of the wrong type, malformed
 *	   JSON) are reported before any file is read.
 *
 * Locking: none; pure functions over backend-local data.
 *
 * IDENTIFICATION
 *	  src/format/scan_filter.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include <ctype.h>
#include <float.h>
#include <math.h>

#include "common/int.h"
#include "datatype/timestamp.h"
#include "fmgr.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/float.h"
#include "utils/numeric.h"
#include "utils/timestamp.h"

#include "format/scan_filter.h"
#include "util/skade_limits.h"

typedef enum FilterKind
{
	F_TRUE, F_FALSE, F_AND, F_OR, F_NOT, F_PRED
} FilterKind;

/* inverse of op i is op i ^ 1 */
typedef enum FilterOp
{
	OP_EQ, OP_NOT_EQ, OP_LT, OP_GT_EQ, OP_LT_EQ, OP_GT, OP_IN, OP_NOT_IN,
	OP_IS_NULL, OP_NOT_NULL, OP_IS_NAN, OP_NOT_NAN, OP_STARTS_WITH, OP_NOT_STARTS_WITH
} FilterOp;

static const char *const op_names[] = {
	"eq", "not-eq", "lt", "gt-eq", "lt-eq", "gt", "in", "not-in",
	"is-null", "not-null", "is-nan", "not-nan", "starts-with", "not-starts-with"
};

/* how a column's bounds compare */
typedef enum CmpKind
{
	CMP_NONE, CMP_INT4, CMP_INT8, CMP_FLOAT4, CMP_FLOAT8, CMP_STRING, CMP_BOOL,
	CMP_DECIMAL,				/* unscaled value at the column's scale */
	CMP_BYTES					/* uuid, fixed, binary: unsigned bytes */
} CmpKind;

/* the largest decimal scale (and precision) Iceberg allows */
#define MAX_ICEBERG_DECIMAL	38

typedef struct FilterValue
{
	int64		i;
	double		d;
	const char *s;				/* string, uuid, fixed, binary: the bytes */
	size_t		slen;
	int128		dec;			/* decimal: unscaled value at the scale ... */
	int			dec_off;		/* ... exactly (0), or just above it (1: a
								 * value between dec and dec + 1, or past the
								 * largest) or below it (-1) */
} FilterValue;

struct SkadeFilter
{
	FilterKind	kind;
	SkadeFilter *left;
	SkadeFilter *right;
	FilterOp	op;
	int32		column_id;
	const char *column_type;	/* in the schema the filter is bound to */
	CmpKind		cmp;
	int			nvalues;
	FilterValue *values;
};

static SkadeFilter *build(JsonbValue *v, const SkadeColumn *cols, int ncols);
static JsonbValue *get_key(JsonbValue *obj, const char *key);
static char *jstring(JsonbValue *v);
static const SkadeColumn *bind_term(JsonbValue *term, const SkadeColumn *cols, int ncols);
static CmpKind cmp_kind(const char *type);
static int	decimal_scale(const char *type);
static void bind_decimal(JsonbValue *v, const SkadeColumn *c, FilterValue *out);
static bool decimal_literal(const char *text, int scale, FilterValue *out);
static void bind_bytes(JsonbValue *v, const SkadeColumn *c, FilterValue *out);
pg_noreturn static void bad_literal(const SkadeColumn *c, const char *lit, const char *detail);
static int	decimal_cmp(int128 b, const FilterValue *v);
static int	hex_digit(char c);
static void bind_value(JsonbValue *v, const SkadeColumn *c, CmpKind cmp, const char *op,
					   FilterValue *out);
static bool may_match(const SkadeFilter *f, bool negated, const SkadeColumn *cols, int ncols,
					  const SkadeColumnStats *stats, const char *file);
static bool pred_may_match(const SkadeFilter *f, FilterOp op, const SkadeColumn *c,
						   const SkadeColumnStats *st, const char *file);
static int	cmp_bound(const SkadeFilter *f, const char *p, size_t len, const FilterValue *v,
					  bool upper);
static int64 timestamp_literal(char *s, const char *type);
static bool same_representation(const char *written, const char *bound);
static int	bounds_cmp(CmpKind cmp, const char *a, size_t alen, const char *b, size_t blen);
static bool single_value_excluded(const SkadeFilter *f, FilterOp op, const SkadeColumn *c,
								  const SkadeColumnStats *st);
static bool bucket_may_match(const SkadeFilter *f, const SkadeColumn *c,
							 const SkadeColumnStats *st, const FilterValue *v);
pg_noreturn static void malformed(const char *detail);

/*
 * SkadeFilterBuild
 *		Parse and bind a filter (the REST "Expression" JSON) to the columns.
 */
SkadeFilter *
SkadeFilterBuild(Jsonb *filter, const SkadeColumn *cols, int ncols)
{
	JsonbValue	root;

	/* a scalar root is true or false, else build() calls it malformed */
	if (JB_ROOT_IS_SCALAR(filter))
		JsonbExtractScalar(&filter->root, &root);
	else
	{
		root.type = jbvBinary;
		root.val.binary.data = &filter->root;
		root.val.binary.len = VARSIZE(filter) - VARHDRSZ;
	}
	return build(&root, cols, ncols);
}

/* May a file with these statistics hold a row matching f? */
bool
SkadeFilterMayMatch(const SkadeFilter *f, const SkadeColumn *cols, int ncols,
					const SkadeColumnStats *stats, const char *file)
{
	return may_match(f, false, cols, ncols, stats, file);
}

/* little-endian integer of 4 or 8 bytes */
int64
SkadeLeInt(const char *p, size_t len)
{
	uint64		u = 0;
	size_t		i;

	for (i = 0; i < len; i++)
		u |= (uint64) (unsigned char) p[i] << (8 * i);
	if (len == 4)
		return (int64) (int32) (uint32) u;
	return (int64) u;
}

/* a float (4 bytes) or double (8 bytes) bound */
double
SkadeBoundFloat(const char *p, size_t len)
{
	if (len == 4)
	{
		uint32		u = (uint32) SkadeLeInt(p, 4);
		float		f;

		memcpy(&f, &u, 4);
		return f;
	}
	else
	{
		uint64		u = (uint64) SkadeLeInt(p, 8);
		double		d;

		memcpy(&d, &u, 8);
		return d;
	}
}

/*
 * SkadeDecimalBound
 *		A decimal bound's unscaled value: big-endian two's complement of 1 to
 *		16 bytes (callers check the length first).
 */
int128
SkadeDecimalBound(const char *p, size_t len)
{
	int128		v;
	size_t		i;

	if (len < 1 || len > 16)
		elog(ERROR, "decimal bound of %zu bytes", len);
	v = (signed char) p[0];
	for (i = 1; i < len; i++)
		v = v * 256 + (unsigned char) p[i];
	return v;
}

/*
 * SkadeDecimalBytes
 *		v as the shortest big-endian two's complement (Java's
 *		BigInteger.toByteArray(), what Iceberg's single-value form and bucket
 *		hash use) into out (16 bytes); returns the length.
 */
int
SkadeDecimalBytes(int128 v, char *out)
{
	uint128		u = (uint128) v;	/* the same bits */
	unsigned char b[16];
	int			i,
				start = 0;

	for (i = 15; i >= 0; i--)
	{
		b[i] = (unsigned char) (u & 0xff);
		u >>= 8;
	}
	while (start < 15 && ((b[start] == 0x00 && !(b[start + 1] & 0x80)) ||
						  (b[start] == 0xff && (b[start + 1] & 0x80))))
		start++;
	memcpy(out, b + start, 16 - start);
	return 16 - start;
}

/*
 * Has a bound of the column's type this many bytes?  A long or double
 * column may hold 4-byte bounds: written while it was an int or a float
 * (type promotion keeps old files), read widened, as Java does.
 */
bool
SkadeBoundLengthOk(const SkadeColumn *c, size_t len)
{
	if (c->width >= 0)
		return (int) len == c->width || (int) len == c->narrow_width;
	if (strncmp(c->type, "decimal", 7) == 0)
		return len > 0 && len <= 16;
	return true;
}

/* A bound of a fixed-width type must have that width. */
void
SkadeCheckBoundLength(const SkadeColumn *c, size_t len, const char *which, const char *file)
{
	int			need = c->width;

	if (!SkadeBoundLengthOk(c, len))
		ereport(ERROR,
				(errcode(ERRCODE_SKADE_INVALID_FILE),
				 errmsg("the %s bound of column \"%s\" in manifest \"%s\" has %zu bytes",
						which, c->name, file, len),
				 need >= 0 ? errdetail("A bound of type %s has %d bytes.", c->type, need)
				 : errdetail("A decimal bound has 1 to 16 bytes.")));
}

/* ---------------------------------------------------------------- binding */

static SkadeFilter *
build(JsonbValue *v, const SkadeColumn *cols, int ncols)
{
	SkadeFilter *f = palloc0(sizeof(SkadeFilter));
	char	   *type;
	const SkadeColumn *c;
	int			op;

	check_stack_depth();
	if (v->type == jbvBool)
	{
		f->kind = v->val.boolean ? F_TRUE : F_FALSE;
		return f;
	}
	if (v->type != jbvBinary || !JsonContainerIsObject(v->val.binary.data))
		malformed("Every expression is a JSON object with a \"type\" (or true or false).");
	type = jstring(get_key(v, "type"));
	if (type == NULL)
		malformed("An expression has no \"type\" string.");

	if (strcmp(type, "true") == 0 || strcmp(type, "false") == 0)
	{
		f->kind = type[0] == 't' ? F_TRUE : F_FALSE;
		return f;
	}
	if (strcmp(type, "and") == 0 || strcmp(type, "or") == 0)
	{
		JsonbValue *l = get_key(v, "left");
		JsonbValue *r = get_key(v, "right");

		if (l == NULL || r == NULL)
			malformed(psprintf("\"%s\" needs \"left\" and \"right\".", type));
		f->kind = type[0] == 'a' ? F_AND : F_OR;
		f->left = build(l, cols, ncols);
		f->right = build(r, cols, ncols);
		return f;
	}
	if (strcmp(type, "not") == 0)
	{
		JsonbValue *child = get_key(v, "child");

		if (child == NULL)
			malformed("\"not\" needs \"child\".");
		f->kind = F_NOT;
		f->left = build(child, cols, ncols);
		return f;
	}
	for (op = 0; op < (int) lengthof(op_names); op++)
		if (strcmp(type, op_names[op]) == 0)
			break;
	if (op == (int) lengthof(op_names))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown filter expression type \"%s\"", type),
				 errhint("Use the Iceberg REST expression types: and, or, not, eq, not-eq, "
						 "lt, lt-eq, gt, gt-eq, in, not-in, is-null, not-null, is-nan, "
						 "not-nan, starts-with, not-starts-with, true, false.")));
	f->kind = F_PRED;
	f->op = (FilterOp) op;
	c = bind_term(get_key(v, "term"), cols, ncols);
	f->column_id = c->id;
	f->column_type = c->type;
	f->cmp = cmp_kind(c->type);

	switch (f->op)
	{
		case OP_IN:
		case OP_NOT_IN:
			{
				JsonbValue *vals = get_key(v, "values");
				JsonbIterator *it;
				JsonbValue	elem;
				JsonbIteratorToken tok;
				int			n;

				if (vals == NULL || vals->type != jbvBinary ||
					!JsonContainerIsArray(vals->val.binary.data))
					malformed(psprintf("\"%s\" needs a \"values\" array.", type));
				n = JsonContainerSize(vals->val.binary.data);
				f->values = palloc0(sizeof(FilterValue) * Max(n, 1));
				it = JsonbIteratorInit(vals->val.binary.data);
				while ((tok = JsonbIteratorNext(&it, &elem, true)) != WJB_DONE)
					if (tok == WJB_ELEM)
						bind_value(&elem, c, f->cmp, type, &f->values[f->nvalues++]);
				break;
			}
		case OP_IS_NULL:
		case OP_NOT_NULL:
		case OP_IS_NAN:
		case OP_NOT_NAN:
			if ((f->op == OP_IS_NAN || f->op == OP_NOT_NAN) &&
				f->cmp != CMP_FLOAT4 && f->cmp != CMP_FLOAT8)
				ereport(ERROR,
						(errcode(ERRCODE_DATATYPE_MISMATCH),
						 errmsg("\"%s\" applies to float and double columns, not to \"%s\" (%s)",
								type, c->name, c->type)));
			break;
		default:
			{
				JsonbValue *val = get_key(v, "value");

				if (val == NULL)
					malformed(psprintf("\"%s\" needs a \"value\".", type));
				if ((f->op == OP_STARTS_WITH || f->op == OP_NOT_STARTS_WITH) &&
					strcmp(c->type, "string") != 0)
					ereport(ERROR,
							(errcode(ERRCODE_DATATYPE_MISMATCH),
							 errmsg("\"%s\" applies to string columns, not to \"%s\" (%s)",
									type, c->name, c->type)));
				f->values = palloc0(sizeof(FilterValue));
				f->nvalues = 1;
				bind_value(val, c, f->cmp, type, &f->values[0]);
			}
	}
	return f;
}

static JsonbValue *
get_key(JsonbValue *obj, const char *key)
{
	if (obj->type != jbvBinary || !JsonContainerIsObject(obj->val.binary.data))
		return NULL;
	return getKeyJsonValueFromContainer(obj->val.binary.data, key, strlen(key), NULL);
}

static char *
jstring(JsonbValue *v)
{
	if (v == NULL || v->type != jbvString)
		return NULL;
	return pnstrdup(v->val.string.val, v->val.string.len);
}

/* a term: "name" or {"type": "reference", "term": "name"} */
static const SkadeColumn *
bind_term(JsonbValue *term, const SkadeColumn *cols, int ncols)
{
	char	   *name = jstring(term);
	int			i;

	if (name == NULL && term != NULL && term->type == jbvBinary)
	{
		char	   *type = jstring(get_key(term, "type"));

		if (type != NULL && strcmp(type, "reference") == 0)
			name = jstring(get_key(term, "term"));
		else if (type != NULL && strcmp(type, "transform") == 0)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("transform terms in filters are not supported"),
					 errhint("Filter on the source column instead.")));
	}
	if (name == NULL)
		malformed("A predicate's \"term\" is a column name.");
	for (i = 0; i < ncols; i++)
		if (strcmp(cols[i].name, name) == 0)
			return &cols[i];
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_COLUMN),
			 errmsg("filter names column \"%s\", which the table's schema does not have", name),
			 errhint("Column names are case-sensitive; nested fields are written a.b.")));
	pg_unreachable();
}

static CmpKind
cmp_kind(const char *type)
{
	if (strcmp(type, "int") == 0 || strcmp(type, "date") == 0)
		return CMP_INT4;
	if (strcmp(type, "long") == 0 || strcmp(type, "time") == 0 ||
		strncmp(type, "timestamp", 9) == 0)
		return CMP_INT8;
	if (strcmp(type, "float") == 0)
		return CMP_FLOAT4;
	if (strcmp(type, "double") == 0)
		return CMP_FLOAT8;
	if (strcmp(type, "string") == 0)
		return CMP_STRING;
	if (strcmp(type, "boolean") == 0)
		return CMP_BOOL;
	if (strncmp(type, "decimal", 7) == 0)
		return decimal_scale(type) >= 0 ? CMP_DECIMAL : CMP_NONE;
	if (strcmp(type, "uuid") == 0 || strcmp(type, "binary") == 0 ||
		strncmp(type, "fixed[", 6) == 0)
		return CMP_BYTES;
	return CMP_NONE;
}

/* S of "decimal(P,S)", -1 unless 0 <= S <= P <= 38 */
static int
decimal_scale(const char *type)
{
	int			precision,
				scale;
	char		close;

	if (sscanf(type, "decimal(%d ,%d %c", &precision, &scale, &close) != 3 || close != ')' ||
		precision < 1 || precision > MAX_ICEBERG_DECIMAL || scale < 0 || scale > precision)
		return -1;
	return scale;
}

/* a literal, converted to the column's representation in bounds */
static void
bind_value(JsonbValue *v, const SkadeColumn *c, CmpKind cmp, const char *op, FilterValue *out)
{
	const char *t = c->type;
	bool		ok = true;

	switch (cmp)
	{
		case CMP_INT4:
		case CMP_INT8:
			if (v->type == jbvNumeric)
			{
				Numeric		n = v->val.numeric;
				Numeric		rounded = DatumGetNumeric(DirectFunctionCall2(numeric_round,
																		NumericGetDatum(n),
																		Int32GetDatum(0)));

				if (numeric_is_nan(n) || numeric_is_inf(n) || !DatumGetBool(DirectFunctionCall2(numeric_eq, NumericGetDatum(n), NumericGetDatum(rounded))))
					ok = false;
				else
					out->i = DatumGetInt64(DirectFunctionCall1(numeric_int8, NumericGetDatum(n)));
			}
			else if (v->type == jbvString && strcmp(t, "date") == 0)
			{
				char	   *s = jstring(v);
				DateADT		d = DatumGetDateADT(DirectFunctionCall1(date_in, CStringGetDatum(s)));

				out->i = (int64) d + (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE);
			}
			else if (v->type == jbvString && strncmp(t, "timestamp", 9) == 0)
				out->i = timestamp_literal(jstring(v), t);
			else if (v->type == jbvString && strcmp(t, "time") == 0)
				out->i = DatumGetTimeADT(DirectFunctionCall3(time_in, CStringGetDatum(jstring(v)),
															 ObjectIdGetDatum(InvalidOid),
															 Int32GetDatum(-1)));
			else
				ok = false;
			break;
		case CMP_FLOAT4:
		case CMP_FLOAT8:
			if (v->type == jbvNumeric)
			{
				out->d = DatumGetFloat8(DirectFunctionCall1(numeric_float8,
															NumericGetDatum(v->val.numeric)));
				/* a float column compares with the literal as a float, as Iceberg does */
				if (cmp == CMP_FLOAT4 && fabs(out->d) <= FLT_MAX)
					out->d = (double) (float) out->d;
			}
			else if (v->type == jbvString && strcmp(jstring(v), "NaN") == 0)
				out->d = get_float8_nan();
			else
				ok = false;
			break;
		case CMP_STRING:
			if (v->type == jbvString)
			{
				/* bounds and the bucket hash are UTF-8, whatever the server's encoding */
				char	   *utf8 = pg_server_to_any(v->val.string.val, v->val.string.len, PG_UTF8);

				out->s = utf8;
				out->slen = utf8 == v->val.string.val ? v->val.string.len : strlen(utf8);
			}
			else
				ok = false;
			break;
		case CMP_BOOL:
			if (v->type == jbvBool)
				out->i = v->val.boolean;
			else
				ok = false;
			break;
		case CMP_DECIMAL:
			ok = v->type == jbvNumeric || v->type == jbvString;
			if (ok)
				bind_decimal(v, c, out);
			break;
		case CMP_BYTES:
			ok = v->type == jbvString;
			if (ok)
				bind_bytes(v, c, out);
			break;
		case CMP_NONE:
			/* not compared: any scalar literal is accepted */
			ok = v->type == jbvNumeric || v->type == jbvString || v->type == jbvBool;
			break;
	}
	if (!ok)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("filter \"%s\" on column \"%s\" of type %s has a literal of another type",
						op, c->name, t),
				 errhint("Use a JSON number for numeric columns, a string for string columns, "
						 "an ISO string or number for date, time and timestamp columns, "
						 "a number or a string for decimal columns, a string for uuid columns "
						 "and a hex string for binary and fixed columns.")));
}

/*
 * A decimal literal (a JSON number, or a string as Iceberg writes a decimal:
 * "12.34", "-1E+3") at the column's scale; Java's BigDecimal syntax.
 */
static void
bind_decimal(JsonbValue *v, const SkadeColumn *c, FilterValue *out)
{
	char	   *text;

	if (v->type == jbvNumeric)
		text = DatumGetCString(DirectFunctionCall1(numeric_out,
												   NumericGetDatum(v->val.numeric)));
	else
		text = jstring(v);
	if (!decimal_literal(text, decimal_scale(c->type), out))
		bad_literal(c, text, "A decimal literal is a number: digits with an optional sign, "
					"decimal point and exponent, e.g. \"-12.34\" or \"1.5E+3\".");
}

/*
 * The exact unscaled value of a decimal's text at scale, in out->dec and
 * out->dec_off (see FilterValue); false if the text is not a number.  A
 * value the scale cannot hold is cut towards zero and lies beyond it, one
 * past the range of 16 bytes is the largest (smallest) value and beyond.
 */
static bool
decimal_literal(const char *text, int scale, FilterValue *out)
{
	const uint128 limit = ((uint128) 1) << 127; /* |INT128_MIN| */
	const char *p = text;
	const char *digits;
	bool		neg = false;
	bool		point = false;
	bool		inexact = false;
	bool		overflow = false;
	int64		nint = 0;		/* digits before the point */
	int64		ndig = 0;
	int64		exp = 0;
	int64		keep;
	int64		k;
	uint128		mag = 0;

	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	digits = p;
	for (; isdigit((unsigned char) *p) || (*p == '.' && !point); p++)
	{
		if (*p == '.')
			point = true;
		else
			nint += !point;
	}
	ndig = (p - digits) - point;
	if (ndig == 0)
		return false;
	if (*p == 'e' || *p == 'E')
	{
		bool		eneg = false;

		p++;
		if (*p == '+' || *p == '-')
			eneg = *p++ == '-';
		if (!isdigit((unsigned char) *p))
			return false;
		for (; isdigit((unsigned char) *p); p++)
			if (exp < 1000000)	/* past any scale or 16 bytes: saturated */
				exp = exp * 10 + (*p - '0');
		exp = eneg ? -exp : exp;
	}
	if (*p != '\0')
		return false;

	/* the unscaled value is the first nint + exp + scale digits */
	keep = nint + exp + scale;
	for (k = 0, p = digits; k < ndig; p++)
	{
		int			d;

		if (*p == '.')
			continue;
		d = *p - '0';
		if (k++ >= keep)
			inexact |= d != 0;
		else if (!overflow && (mag > (limit - d) / 10))
			overflow = true;
		else if (!overflow)
			mag = mag * 10 + d;
	}
	for (k = ndig; k < keep && mag != 0 && !overflow; k++)
	{
		if (mag > limit / 10)
			overflow = true;
		else
			mag *= 10;
	}
	if (overflow || (!neg && mag == limit))
	{
		/* beyond every value of 16 bytes */
		out->dec = neg ? -(int128) (limit - 1) - 1 : (int128) (limit - 1);
		out->dec_off = neg ? -1 : 1;
		return true;
	}
	out->dec = neg ? -(int128) (mag - 1) - 1 : (int128) mag;
	if (neg && mag == 0)
		out->dec = 0;
	out->dec_off = !inexact ? 0 : (neg ? -1 : 1);
	return true;
}

/*
 * A uuid ("f79c3e09-677c-4bbd-a479-3f349cb785e7", as Iceberg writes one),
 * fixed or binary literal (hex, as Iceberg writes one; skade's "\\x" form
 * too) as its bytes; a fixed literal has exactly the column's length.
 */
static void
bind_bytes(JsonbValue *v, const SkadeColumn *c, FilterValue *out)
{
	char	   *text = jstring(v);
	const char *h = text;
	size_t		n = strlen(text);
	bool		uuid = strcmp(c->type, "uuid") == 0;
	char	   *bytes;
	size_t		len = 0;
	size_t		i;

	if (!uuid && h[0] == '\\' && h[1] == 'x')
		h += 2, n -= 2;
	if (uuid && (n != 36 || h[8] != '-' || h[13] != '-' || h[18] != '-' || h[23] != '-'))
		bad_literal(c, text, "A uuid literal has 32 hex digits in groups of 8, 4, 4, 4 and 12 "
					"separated by hyphens.");
	bytes = palloc(n / 2 + 1);
	for (i = 0; i < n; i++)
	{
		int			hi,
					lo;

		if (uuid && (i == 8 || i == 13 || i == 18 || i == 23))
			continue;
		hi = hex_digit(h[i]);
		lo = i + 1 < n ? hex_digit(h[i + 1]) : -1;
		if (hi < 0 || lo < 0)
			bad_literal(c, text, uuid ?
						"A uuid literal has 32 hex digits in groups of 8, 4, 4, 4 and 12 "
						"separated by hyphens." :
						"A binary or fixed literal is an even number of hex digits.");
		bytes[len++] = (char) (hi * 16 + lo);
		i++;
	}
	if (c->width >= 0 && (int) len != c->width)
		bad_literal(c, text, psprintf("A %s literal is %d bytes (%d hex digits).",
									  c->type, c->width, 2 * c->width));
	out->s = bytes;
	out->slen = len;
}

static int
hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static void
bad_literal(const SkadeColumn *c, const char *lit, const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
			 errmsg("invalid %s literal \"%s\" in a filter on column \"%s\"",
					c->type, lit, c->name),
			 errdetail_internal("%s", detail)));
}

/*
 * An ISO timestamp literal in the column's unit (microseconds, or for
 * timestamp_ns and timestamptz_ns nanoseconds, keeping the fraction's
 * seventh to ninth digits that PostgreSQL's microsecond parser would round).
 */
static int64
timestamp_literal(char *s, const char *type)
{
	bool		ns = strstr(type, "_ns") != NULL;
	int64		nanos = 0;
	Timestamp	ts;

	if (ns)
	{
		char	   *dot = strchr(s, '.');

		if (dot)
		{
			char	   *d = dot + 1;
			int			n = 0;

			while (isdigit((unsigned char) d[n]))
				n++;
			if (n > 6)
			{
				int			k;

				for (k = 6; k < 9; k++)
					nanos = nanos * 10 + (k < n ? d[k] - '0' : 0);
				memmove(d + 6, d + n, strlen(d + n) + 1);	/* keep any zone after them */
			}
		}
	}
	ts = strncmp(type, "timestamptz", 11) == 0 ?
		DatumGetTimestampTz(DirectFunctionCall3(timestamptz_in, CStringGetDatum(s),
												ObjectIdGetDatum(InvalidOid),
												Int32GetDatum(-1))) :
		DatumGetTimestamp(DirectFunctionCall3(timestamp_in, CStringGetDatum(s),
											  ObjectIdGetDatum(InvalidOid),
											  Int32GetDatum(-1)));
	if (TIMESTAMP_NOT_FINITE(ts) ||
		pg_add_s64_overflow(ts, (int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY,
							&ts) ||
		(ns && (pg_mul_s64_overflow(ts, 1000, &ts) || pg_add_s64_overflow(ts, nanos, &ts))))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_FIELD_OVERFLOW),
				 errmsg("timestamp literal \"%s\" is out of range for a %s column", s, type),
				 ns ? errhint("Nanosecond timestamps cover the years 1677 to 2262.") : 0));
	return ts;
}

static void
malformed(const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("malformed filter expression"),
			 errdetail_internal("%s", detail),
			 errhint("Filters use the Iceberg REST catalog's expression JSON, e.g. "
					 "{\"type\": \"eq\", \"term\": \"id\", \"value\": 1}.")));
}

/* ---------------------------------------------------------------- evaluation */

static bool
may_match(const SkadeFilter *f, bool negated, const SkadeColumn *cols, int ncols,
		  const SkadeColumnStats *stats, const char *file)
{
	int			i;

	check_stack_depth();
	switch (f->kind)
	{
		case F_TRUE:
			return !negated;
		case F_FALSE:
			return negated;
		case F_NOT:
			return may_match(f->left, !negated, cols, ncols, stats, file);
		case F_AND:
		case F_OR:
			/* not (a and b) = not a or not b */
			if ((f->kind == F_AND) != negated)
				return may_match(f->left, negated, cols, ncols, stats, file) &&
					may_match(f->right, negated, cols, ncols, stats, file);
			return may_match(f->left, negated, cols, ncols, stats, file) ||
				may_match(f->right, negated, cols, ncols, stats, file);
		case F_PRED:
			for (i = 0; i < ncols; i++)
				if (cols[i].id == f->column_id)
				{
					/* bounds in another unit (a promoted type): not compared */
					if (!same_representation(cols[i].type, f->column_type))
						return true;
					return pred_may_match(f, negated ? (FilterOp) (f->op ^ 1) : f->op,
										  &cols[i], &stats[i], file);
				}
			return true;		/* a column this file's schema does not have */
	}
	return true;
}

static bool
pred_may_match(const SkadeFilter *f, FilterOp op, const SkadeColumn *c,
			   const SkadeColumnStats *st, const char *file)
{
	const char *lower = st->bound[0];
	const char *upper = st->bound[1];
	bool		all_null = st->has_count[SKADE_STAT_VALUES] && st->has_count[SKADE_STAT_NULLS] &&
		st->count[SKADE_STAT_VALUES] == st->count[SKADE_STAT_NULLS];
	int			i;

	if (lower)
		SkadeCheckBoundLength(c, st->bound_len[0], "lower", file);
	if (upper)
		SkadeCheckBoundLength(c, st->bound_len[1], "upper", file);
	switch (op)
	{
		case OP_IS_NULL:
			return !(st->has_count[SKADE_STAT_NULLS] && st->count[SKADE_STAT_NULLS] == 0);
		case OP_NOT_NULL:
			return !all_null;
		case OP_IS_NAN:
			return !(st->has_count[SKADE_STAT_NANS] && st->count[SKADE_STAT_NANS] == 0) &&
				!all_null;
		case OP_NOT_NAN:
			return true;		/* a null is not NaN */
		case OP_NOT_EQ:
		case OP_NOT_IN:
		case OP_NOT_STARTS_WITH:

			/*
			 * In Iceberg a null row matches these (as Java's and pyiceberg's
			 * planners and row evaluators have it), so only a file with no
			 * nulls whose every value is the same (equal bounds: an identity
			 * partition, or exact column bounds) can be ruled out.
			 */
			return !single_value_excluded(f, op, c, st);
		default:
			break;
	}
	if (all_null)
		return false;			/* no comparison is true of a null */
	if (f->cmp == CMP_NONE)
		return true;
	/* a NaN bound (old writers) says nothing, as in Iceberg's evaluator */
	if ((f->cmp == CMP_FLOAT4 || f->cmp == CMP_FLOAT8))
	{
		if (lower && isnan(SkadeBoundFloat(lower, st->bound_len[0])))
			lower = NULL;
		if (upper && isnan(SkadeBoundFloat(upper, st->bound_len[1])))
			upper = NULL;
	}
	switch (op)
	{
		case OP_EQ:
		case OP_IN:
			for (i = 0; i < f->nvalues; i++)
			{
				const FilterValue *v = &f->values[i];

				/* a decimal the column's scale cannot hold equals no value */
				if (f->cmp == CMP_DECIMAL && v->dec_off != 0)
					continue;
				if (lower && cmp_bound(f, lower, st->bound_len[0], v, false) > 0)
					continue;
				/* a strict upper bound is above every value */
				if (upper && cmp_bound(f, upper, st->bound_len[1], v, true) < (st->upper_strict ? 1 : 0))
					continue;
				if (st->bucket_n > 0 && !bucket_may_match(f, c, st, v))
					continue;
				return true;
			}
			return false;
		case OP_LT:
			return !(lower && cmp_bound(f, lower, st->bound_len[0], &f->values[0], false) >= 0);
		case OP_LT_EQ:
			return !(lower && cmp_bound(f, lower, st->bound_len[0], &f->values[0], false) > 0);
		case OP_GT:
			return !(upper && cmp_bound(f, upper, st->bound_len[1], &f->values[0], true) <= 0);
		case OP_GT_EQ:
			return !(upper && cmp_bound(f, upper, st->bound_len[1], &f->values[0], true) <
					 (st->upper_strict ? 1 : 0));
		case OP_STARTS_WITH:
			{
				const FilterValue *v = &f->values[0];

				/* compare the prefix with the bounds cut to its length */
				if (lower)
				{
					size_t		n = Min(v->slen, st->bound_len[0]);
					int			r = memcmp(lower, v->s, n);

					if (r > 0)
						return false;
				}
				if (upper)
				{
					size_t		n = Min(v->slen, st->bound_len[1]);
					int			r = memcmp(upper, v->s, n);

					/* an upper bound that is a shorter prefix sorts before it */
					if (r < 0 || (r == 0 && st->bound_len[1] < v->slen))
						return false;
				}
				return true;
			}
		default:
			return true;
	}
}

/*
 * SkadeBoundsDisjoint
 *		Do the ranges [alo, ahi] and [blo, bhi] of a column of type c (both
 *		in its single-value form) share no value?  False whenever that
 *		cannot be shown: a type not compared, a bound of the wrong width (a
 *		promoted type on one side), a NaN bound.
 */
bool
SkadeBoundsDisjoint(const SkadeColumn *c, const char *alo, size_t alolen, const char *ahi,
					size_t ahilen, const char *blo, size_t blolen, const char *bhi,
					size_t bhilen)
{
	CmpKind		cmp = cmp_kind(c->type);

	if (cmp == CMP_NONE || !SkadeBoundLengthOk(c, alolen) || !SkadeBoundLengthOk(c, ahilen) ||
		!SkadeBoundLengthOk(c, blolen) || !SkadeBoundLengthOk(c, bhilen))
		return false;
	return bounds_cmp(cmp, alo, alolen, bhi, bhilen) > 0 ||
		bounds_cmp(cmp, blo, blolen, ahi, ahilen) > 0;
}

/* a <=> b for two bounds of one type; 0 ("may be equal") when unknown (NaN) */
static int
bounds_cmp(CmpKind cmp, const char *a, size_t alen, const char *b, size_t blen)
{
	switch (cmp)
	{
		case CMP_INT4:
		case CMP_INT8:
			{
				int64		x = SkadeLeInt(a, alen);
				int64		y = SkadeLeInt(b, blen);

				return x < y ? -1 : (x > y ? 1 : 0);
			}
		case CMP_BOOL:
			return (a[0] != 0) - (b[0] != 0);
		case CMP_FLOAT4:
		case CMP_FLOAT8:
			{
				double		x = SkadeBoundFloat(a, alen);
				double		y = SkadeBoundFloat(b, blen);

				if (isnan(x) || isnan(y))
					return 0;
				if (x != y)
					return x < y ? -1 : 1;
				return (signbit(x) ? 0 : 1) - (signbit(y) ? 0 : 1);
			}
		case CMP_DECIMAL:
			{
				int128		x = SkadeDecimalBound(a, alen);
				int128		y = SkadeDecimalBound(b, blen);

				return x < y ? -1 : (x > y ? 1 : 0);
			}
		case CMP_STRING:
		case CMP_BYTES:
			{
				int			r = memcmp(a, b, Min(alen, blen));

				if (r != 0)
					return r;
				return alen < blen ? -1 : (alen > blen ? 1 : 0);
			}
		default:
			return 0;
	}
}

/*
 * Are bounds written for a column of type "written" comparable with a filter
 * bound to type "bound"?  The same type, or the promotions that keep the
 * unit (int to long, float to double, a wider decimal of the same scale);
 * not date to timestamp or timestamp to timestamp_ns (days vs micro- vs
 * nanoseconds), nor decimals of another scale (no promotion makes one).
 */
static bool
same_representation(const char *written, const char *bound)
{
	if (strcmp(written, bound) == 0)
		return true;
	if (strcmp(written, "int") == 0 && strcmp(bound, "long") == 0)
		return true;
	if (strcmp(written, "float") == 0 && strcmp(bound, "double") == 0)
		return true;
	return strncmp(written, "decimal", 7) == 0 && strncmp(bound, "decimal", 7) == 0 &&
		decimal_scale(written) >= 0 && decimal_scale(written) == decimal_scale(bound);
}

/*
 * Does every row of the file hold one and the same non-null value (equal
 * lower and upper bounds, no nulls) that op rejects?  Floats are left out:
 * bounds say nothing of NaN rows, and a zero literal has no sign.  Equal
 * string bounds are exact (a truncated upper bound is never a prefix-length
 * copy of the lower one).
 */
static bool
single_value_excluded(const SkadeFilter *f, FilterOp op, const SkadeColumn *c,
					  const SkadeColumnStats *st)
{
	const char *lower = st->bound[0];
	int			i;

	if (f->cmp == CMP_NONE || f->cmp == CMP_FLOAT4 || f->cmp == CMP_FLOAT8 || st->upper_strict ||
		!st->has_count[SKADE_STAT_NULLS] || st->count[SKADE_STAT_NULLS] != 0 ||
		lower == NULL || st->bound[1] == NULL || st->bound_len[0] != st->bound_len[1] ||
		memcmp(lower, st->bound[1], st->bound_len[0]) != 0)
		return false;
	if (op == OP_NOT_STARTS_WITH)
		return f->cmp == CMP_STRING && st->bound_len[0] >= f->values[0].slen &&
			memcmp(lower, f->values[0].s, f->values[0].slen) == 0;
	for (i = 0; i < f->nvalues; i++)
		if (cmp_bound(f, lower, st->bound_len[0], &f->values[i], false) == 0)
			return true;		/* not-eq: one value; not-in: any of them */
	return false;
}

/*
 * May the literal v be in the file's (or manifest's) buckets?  Iceberg's
 * bucket hash: ints, longs, dates, times and microsecond timestamps as a
 * long, strings as their UTF-8 bytes, uuid, fixed and binary as their
 * bytes, decimals as the shortest two's complement of the unscaled value;
 * anything else is not decided here.
 */
static bool
bucket_may_match(const SkadeFilter *f, const SkadeColumn *c, const SkadeColumnStats *st,
				 const FilterValue *v)
{
	int32		b;

	if ((f->cmp == CMP_INT4 || f->cmp == CMP_INT8) && strstr(c->type, "_ns") == NULL)
		b = SkadeBucketLong(v->i, st->bucket_n);
	else if (f->cmp == CMP_STRING || f->cmp == CMP_BYTES)
		b = SkadeBucketBytes(v->s, v->slen, st->bucket_n);
	else if (f->cmp == CMP_DECIMAL && v->dec_off == 0)
	{
		char		bytes[16];

		b = SkadeBucketBytes(bytes, SkadeDecimalBytes(v->dec, bytes), st->bucket_n);
	}
	else
		return true;
	return b >= st->bucket_lo && b <= st->bucket_hi;
}

/*
 * bound <=> value, per the column's type; NaN literals compare as unknown.
 * Floats are in Iceberg's total order (-0.0 < 0.0), and since a JSON number
 * keeps no sign of zero, a zero literal is taken as the zero that prunes
 * least: 0.0 against a lower bound, -0.0 against an upper one.
 */
static int
cmp_bound(const SkadeFilter *f, const char *p, size_t len, const FilterValue *v, bool upper)
{
	switch (f->cmp)
	{
		case CMP_INT4:
		case CMP_INT8:
		case CMP_BOOL:
			{
				int64		b = f->cmp == CMP_BOOL ? (p[0] != 0) : SkadeLeInt(p, len);

				return b < v->i ? -1 : (b > v->i ? 1 : 0);
			}
		case CMP_FLOAT4:
		case CMP_FLOAT8:
			{
				double		b = SkadeBoundFloat(p, len);

				double		d = v->d == 0 ? (upper ? -0.0 : 0.0) : v->d;

				if (isnan(b) || isnan(d))
					return 0;	/* "may be equal": never prunes */
				if (b != d)
					return b < d ? -1 : 1;
				return (signbit(b) ? 0 : 1) - (signbit(d) ? 0 : 1);
			}
		case CMP_DECIMAL:
			return decimal_cmp(SkadeDecimalBound(p, len), v);
		case CMP_STRING:
		case CMP_BYTES:
			{
				int			r = memcmp(p, v->s, Min(len, v->slen));

				if (r != 0)
					return r;
				return len < v->slen ? -1 : (len > v->slen ? 1 : 0);
			}
		default:
			return 0;
	}
}

/* unscaled bound b <=> the decimal literal v, exactly (see FilterValue) */
static int
decimal_cmp(int128 b, const FilterValue *v)
{
	if (b != v->dec)
		return b < v->dec ? -1 : 1;
	return -v->dec_off;
}
