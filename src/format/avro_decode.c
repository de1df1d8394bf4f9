/*-------------------------------------------------------------------------
 *
 * avro_decode.c
 *	  Records of an Avro object container (a manifest) decoded directly from
 *	  its decoded block bytes (avro_container.c), driven by its compiled
 *	  writer schema (avro_schema.c), into flat arrays of values
 *	  (SkadeAvroDatum); no libavro-c, no per-field virtual calls.  Also a
 *	  decoded record as jsonb, and a value in Iceberg's single-value binary
 *	  form.
 *
 * Invariants (the input is hostile):
 *	 - every read is bounded by the end of the current block: a varint
 *	   takes at most 10 bytes, a string, bytes or fixed value at most the
 *	   bytes left; nothing is copied (strings point into the block's
 *	   bytes), nothing is read past the block;
 *	 - recursion follows the schema's nodes only, whose height avro_schema.c
 *	   bounds (SKADE_AVRO_MAX_DEPTH), never the data;
 *	 - an array or map block claims at most one element per byte left (every
 *	   element takes a byte to encode, as the schema was checked to ensure)
 *	   before its values are reserved; all the values of one record take at
 *	   most AVRO_TOTAL_LIMIT bytes (54000 beyond), and a string or bytes length
 *	   beyond the file's decoded size times 64 is "impossible" (22SK1), as
 *	   under libavro-c's allocator (avro_reader.c);
 *	 - a block must hold exactly the records it declares and no bytes more;
 *	 - malformed data is 22SK1 "could not read a record of Avro file"; its
 *	   detail keeps the words libavro-c used for the same faults (e.g.
 *	   "Cannot read int value: Cannot read 1 bytes from memory buffer"),
 *	   as avro_reader.c reports for the files it reads through libavro-c;
 *	 - strings become text only through SkadeAvroDatumText and the jsonb
 *	   conversion, which check them for valid UTF-8 without NUL.
 *
 * Memory: the decoder and its values are allocated in the memory context
 * current at SkadeAvroDecoderBegin; a record's values are overwritten by
 * the next record.
 *
 * IDENTIFICATION
 *	  src/format/avro_decode.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include <math.h>

#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"

#include "format/avro_decode.h"
#include "format/bound_json.h"
#include "util/guc.h"
#include "util/skade_limits.h"

/* as avro_reader.c's limits for libavro-c */
#define AVRO_TOTAL_LIMIT	((size_t) skade_max_manifest_size * 2 + 64 * 1024 * 1024)


/* a run of an array's (or map's) values, before they are made consecutive */
typedef struct ItemRun
{
	int32		first;
	int32		n;
} ItemRun;

static bool next_block(SkadeAvroDecoder *dec);
static pg_attribute_always_inline void decode_value(SkadeAvroDecoder *dec, int32 node,
													  int32 slot);
static pg_noinline void decode_record(SkadeAvroDecoder *dec, const SkadeAvroNode *n, int32 slot);
static pg_noinline void decode_items(SkadeAvroDecoder *dec, const SkadeAvroNode *n, int32 slot,
									 bool map);
static void decode_bytes(SkadeAvroDecoder *dec, int32 slot, bool string, const char *what);
static inline int64 read_varint(SkadeAvroDecoder *dec, const char *what, const char *what2);
static pg_noinline int64 read_varint_long(SkadeAvroDecoder *dec, const char *what,
										  const char *what2);
static const char *read_raw(SkadeAvroDecoder *dec, int64 len, const char *what);
static inline int32 reserve(SkadeAvroDecoder *dec, int64 n);
static int32 reserve_more(SkadeAvroDecoder *dec, int64 n);
static JsonbValue *push_jsonb(JsonbParseState **state, const SkadeAvroDecoder *dec,
							  const SkadeAvroDatum *d, JsonbIteratorToken tok);
static bool scalar_jsonb(const SkadeAvroDecoder *dec, const SkadeAvroDatum *d, JsonbValue *jv);
static void scalar_value(const SkadeAvroDecoder *dec, const SkadeAvroDatum *d, JsonbValue *jv);
static void check_text(const SkadeAvroDecoder *dec, const char *s, size_t len, const char *what);
pg_noreturn static void read_error(const SkadeAvroDecoder *dec, const char *detail);

/*
 * SkadeAvroDecoderBegin
 *		A decoder of the records of container c (its blocks decoded, its
 *		schema compiled), before its first record.
 */
SkadeAvroDecoder *
SkadeAvroDecoderBegin(const SkadeAvroContainer *c)
{
	SkadeAvroDecoder *dec = palloc0(sizeof(SkadeAvroDecoder));

	dec->c = c;
	dec->s = c->compiled;
	dec->cxt = CurrentMemoryContext;
	dec->block = -1;
	dec->maxd = 256;
	dec->d = palloc(sizeof(SkadeAvroDatum) * dec->maxd);
	dec->value_limit = (size_t) c->decoded->len * 64 + 1024 * 1024;
	return dec;
}

const SkadeAvroSchema *
SkadeAvroDecoderSchema(const SkadeAvroDecoder *dec)
{
	return dec->s;
}

/*
 * SkadeAvroDecodeNext
 *		The next record (a SKADE_AVRO_RECORD value), or NULL after the last;
 *		it and its values are overwritten by the next call.
 */
const SkadeAvroDatum *
SkadeAvroDecodeNext(SkadeAvroDecoder *dec)
{
	while (dec->left == 0)
		if (!next_block(dec))
			return NULL;
	check_stack_depth();		/* decode_value recurses as deep as the schema nests */
	dec->nd = 0;
	(void) reserve(dec, 1);
	decode_value(dec, dec->s->root, 0);
	dec->left--;
	return &dec->d[0];
}

/*
 * Move to the next block (false after the last), after checking that the
 * records of the current one used up its bytes.
 */
static bool
next_block(SkadeAvroDecoder *dec)
{
	const SkadeAvroBlock *b;

	if (dec->block >= 0 && dec->p < dec->end)
	{
		int64		n = dec->c->blocks[dec->block].count;

		ereport(ERROR,
				(errcode(ERRCODE_SKADE_INVALID_FILE),
				 errmsg_plural("block %d of Avro file \"%s\" has bytes left after its %lld record",
							   "block %d of Avro file \"%s\" has bytes left after its %lld records",
							   (unsigned long) n, dec->block + 1, dec->c->location, (long long) n),
				 errhint("The file may be truncated or corrupt.")));
	}
	if (dec->block + 1 >= dec->c->nblocks)
	{
		dec->block = dec->c->nblocks;
		return false;
	}
	b = &dec->c->blocks[++dec->block];
	dec->p = dec->c->decoded->data + b->off;
	dec->end = dec->p + b->len;
	dec->left = b->count;
	return true;
}

/*
 * Decode one value of schema node into d[slot] (a union: its branch).
 * Inlined where records and arrays loop over their values, so that a
 * scalar (most values) costs no call; records, arrays and maps are
 * decoded out of line.
 */
static pg_attribute_always_inline void
decode_value(SkadeAvroDecoder *dec, int32 node, int32 slot)
{
	const SkadeAvroNode *n = &dec->s->nodes[node];
	SkadeAvroDatum *d;
	int64		x;

	if (n->type == SKADE_AVRO_UNION)
	{
		x = read_varint(dec, "Cannot read union discriminant: ", NULL);
		if (x < 0 || x >= n->nchild)
			read_error(dec, psprintf("Invalid union discriminant value: (%d)", (int) x));
		node = dec->s->child[n->child + x];
		n = &dec->s->nodes[node];	/* never a union again */
	}
	d = &dec->d[slot];
	d->type = n->type;
	d->node = node;
	d->len = 0;
	switch (n->type)
	{
		case SKADE_AVRO_NULL:
			break;
		case SKADE_AVRO_BOOLEAN:
			d->v.l = (int8) *read_raw(dec, 1, "Cannot read boolean value: ");
			break;
		case SKADE_AVRO_INT:
			x = read_varint(dec, "Cannot read int value: ", NULL);
			if (x < PG_INT32_MIN || x > PG_INT32_MAX)
				read_error(dec, "Cannot read int value: Varint out of range for int type");
			d->v.l = x;
			break;
		case SKADE_AVRO_LONG:
			d->v.l = read_varint(dec, "Cannot read long value: ", NULL);
			break;
		case SKADE_AVRO_ENUM:
			d->v.l = read_varint(dec, "Cannot read enum value: ", NULL);
			break;
		case SKADE_AVRO_FLOAT:
		case SKADE_AVRO_DOUBLE:
			{
				int			w = n->type == SKADE_AVRO_FLOAT ? 4 : 8;
				const unsigned char *b = (const unsigned char *)
					read_raw(dec, w, w == 4 ? "Cannot read float value: " : "Cannot read double value: ");
				uint64		bits = 0;
				int			i;

				for (i = w - 1; i >= 0; i--)
					bits = (bits << 8) | b[i];
				d->v.bits = bits;
				break;
			}
		case SKADE_AVRO_STRING:
		case SKADE_AVRO_BYTES:
			decode_bytes(dec, slot, n->type == SKADE_AVRO_STRING,
						 n->type == SKADE_AVRO_STRING ? "Cannot read string value: "
						 : "Cannot read bytes value: ");
			break;
		case SKADE_AVRO_FIXED:
			d->v.p = read_raw(dec, n->size, "Cannot read fixed value: ");
			d->len = n->size;
			break;
		case SKADE_AVRO_RECORD:
			decode_record(dec, n, slot);
			break;
		case SKADE_AVRO_ARRAY:
		case SKADE_AVRO_MAP:
			decode_items(dec, n, slot, n->type == SKADE_AVRO_MAP);
			break;
		case SKADE_AVRO_UNION:
			pg_unreachable();	/* avro_schema.c refuses a union in a union */
	}
}

/* Decode a record's field values, consecutive, into d[slot]. */
static void
decode_record(SkadeAvroDecoder *dec, const SkadeAvroNode *n, int32 slot)
{
	int32		first = reserve(dec, n->nchild);
	SkadeAvroDatum *d;
	int			i;

	for (i = 0; i < n->nchild; i++)
		decode_value(dec, dec->s->child[n->child + i], first + i);
	d = &dec->d[slot];			/* the values may have moved */
	d->v.first = first;
	d->len = n->nchild;
}

/*
 * An array's elements (a map's key/value pairs) in blocks: count, (a
 * negative count: its size, ignored), the items; a zero count ends them.
 * The items of each block are reserved before they are decoded (at most
 * one per byte left); several runs are made consecutive at the end.
 */
static void
decode_items(SkadeAvroDecoder *dec, const SkadeAvroNode *n, int32 slot, bool map)
{
	const char *count_what = map ? "Cannot read map block count: " : "Cannot read array block count: ";
	int32		item = dec->s->child[n->child];
	int			per = map ? 2 : 1;
	ItemRun		first_run = {0, 0};
	ItemRun    *runs = &first_run;
	int			nruns = 0,
				maxruns = 1;
	int64		total = 0;
	uint64		count = (uint64) read_varint(dec, count_what, NULL);
	SkadeAvroDatum *d;

	while (count != 0)
	{
		uint64		i;
		int32		first;

		if ((int64) count < 0)
		{
			count = -count;		/* INT64_MIN stays huge: it fails as it runs out */
			(void) read_varint(dec, map ? "Cannot read map block size: "
							   : "Cannot read array block size: ", NULL);
		}
		/* one more than the bytes left could hold: that one fails to decode */
		count = Min(count, (uint64) (dec->end - dec->p) + 1);
		first = reserve(dec, (int64) count * per);
		for (i = 0; i < count; i++)
		{
			if (map)
			{
				decode_bytes(dec, first + 2 * i, true, "Cannot read map key: ");
				dec->d[first + 2 * i].node = -1;
			}
			decode_value(dec, item, first + i * per + (map ? 1 : 0));
		}
		if (nruns == maxruns)
		{
			ItemRun    *more = MemoryContextAlloc(dec->cxt, sizeof(ItemRun) * maxruns * 2);

			memcpy(more, runs, sizeof(ItemRun) * nruns);
			if (runs != &first_run)
				pfree(runs);
			runs = more;
			maxruns *= 2;
		}
		runs[nruns].first = first;
		runs[nruns++].n = (int32) count;
		total += count;
		count = (uint64) read_varint(dec, count_what, NULL);
	}
	d = &dec->d[slot];
	d->len = (int32) total;
	d->v.first = runs[0].first;
	if (nruns > 1)
	{
		int32		to = reserve(dec, total * per);
		int			r;

		d = &dec->d[slot];
		d->v.first = to;
		for (r = 0; r < nruns; r++)
		{
			memcpy(&dec->d[to], &dec->d[runs[r].first], sizeof(SkadeAvroDatum) * runs[r].n * per);
			to += runs[r].n * per;
		}
	}
	if (runs != &first_run)
		pfree(runs);
}

/*
 * A string or bytes value into d[slot]: its length, then its bytes (a map
 * key: what names it in messages, whose words are libavro-c's).
 */
static void
decode_bytes(SkadeAvroDecoder *dec, int32 slot, bool string, const char *what)
{
	int64		len = read_varint(dec, what, string ? "Cannot read string length: "
									  : "Cannot read bytes length: ");
	size_t		claim = (size_t) (uint64) (len + 1);	/* what libavro-c allocated */
	SkadeAvroDatum *d;

	if (claim == 0)
		read_error(dec, psprintf("%sCannot allocate buffer for %s value", what,
								 string ? "string" : "bytes"));
	if (len < 0 || claim > dec->value_limit)
		ereport(ERROR,
				(errcode(ERRCODE_SKADE_INVALID_FILE),
				 errmsg("Avro file \"%s\" holds a value of an impossible size", dec->c->location),
				 errdetail("A value claims %zu bytes; the file decodes to %d.",
						   claim, dec->c->decoded->len),
				 errhint("The file may be truncated or corrupt.")));
	d = &dec->d[slot];
	d->type = string ? SKADE_AVRO_STRING : SKADE_AVRO_BYTES;
	d->v.p = read_raw(dec, len, what);
	d->len = (int32) len;
}

/* a zig-zag varint of at most 10 bytes (what, then what2 if any, prefix its error) */
static inline int64
read_varint(SkadeAvroDecoder *dec, const char *what, const char *what2)
{
	if (likely(dec->p < dec->end && (*dec->p & 0x80) == 0))
	{
		uint64		u = (unsigned char) *dec->p++;

		return (int64) ((u >> 1) ^ (~(u & 1) + 1));
	}
	return read_varint_long(dec, what, what2);
}

/* read_varint() of two bytes or more (or none left), out of line */
static int64
read_varint_long(SkadeAvroDecoder *dec, const char *what, const char *what2)
{
	uint64		u = 0;
	int			i;

	for (i = 0; i < 10; i++)
	{
		unsigned char b;

		if (dec->p >= dec->end)
			read_error(dec, psprintf("%s%sCannot read 1 bytes from memory buffer", what,
									 what2 ? what2 : ""));
		b = (unsigned char) *dec->p++;
		u |= (uint64) (b & 0x7f) << (7 * i);
		if ((b & 0x80) == 0)
			return (int64) ((u >> 1) ^ (~(u & 1) + 1));
	}
	read_error(dec, psprintf("%s%sVarint too long", what, what2 ? what2 : ""));
}

/* len raw bytes of the block (len >= 0), where they are */
static inline const char *
read_raw(SkadeAvroDecoder *dec, int64 len, const char *what)
{
	const char *p = dec->p;

	if (len > dec->end - dec->p)
		read_error(dec, psprintf("%sCannot read %zu bytes from memory buffer", what, (size_t) len));
	dec->p += len;
	return p;
}

/* n more values for the current record (within AVRO_TOTAL_LIMIT); the first's index */
static inline int32
reserve(SkadeAvroDecoder *dec, int64 n)
{
	int32		first = dec->nd;

	if (likely(n <= dec->maxd - dec->nd))
	{
		dec->nd += (int32) n;
		return first;
	}
	return reserve_more(dec, n);
}

/* reserve(), growing the values (maxd never exceeds AVRO_TOTAL_LIMIT's worth) */
static int32
reserve_more(SkadeAvroDecoder *dec, int64 n)
{
	int32		first = dec->nd;

	if (n > (int64) (AVRO_TOTAL_LIMIT / sizeof(SkadeAvroDatum)) - dec->nd)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("Avro file \"%s\" takes too much memory to read", dec->c->location),
				 errdetail("Its values need more than %zu bytes.", AVRO_TOTAL_LIMIT),
				 errhint("Raise skade.max_manifest_size if the file is legitimate.")));
	if (dec->nd + n > dec->maxd)
	{
		int64		want = Min(Max((int64) dec->maxd * 2, dec->nd + n),
							   (int64) (AVRO_TOTAL_LIMIT / sizeof(SkadeAvroDatum)));

		dec->d = repalloc_huge(dec->d, sizeof(SkadeAvroDatum) * want);
		dec->maxd = (int32) want;
	}
	dec->nd += (int32) n;
	return first;
}

/* ---------------------------------------------------------------- values */

/*
 * SkadeAvroDatumText
 *		A string value as text (palloc'd); not valid UTF-8 (or with a NUL)
 *		is 22SK1 naming what it is.
 */
const char *
SkadeAvroDatumText(const SkadeAvroDecoder *dec, const SkadeAvroDatum *d, const char *what)
{
	Assert(d->type == SKADE_AVRO_STRING);
	check_text(dec, d->v.p, d->len, what);
	return pnstrdup(d->v.p, d->len);
}

/*
 * SkadeAvroDatumJsonb
 *		A record (e.g. a data file's partition) as a jsonb object: null,
 *		booleans, numbers (NaN and infinities as strings), strings, "\\x"
 *		hex for bytes and fixed, nested records and arrays.
 */
Datum
SkadeAvroDatumJsonb(const SkadeAvroDecoder *dec, const SkadeAvroDatum *rec)
{
	JsonbParseState *state = NULL;
	JsonbValue *res;
	const SkadeAvroNode *n = &dec->s->nodes[rec->node];
	JsonbPair  *pairs;
	int			i;

	if (rec->type != SKADE_AVRO_RECORD)
		ereport(ERROR,
				(errcode(ERRCODE_SKADE_INVALID_FILE),
				 errmsg("Avro file \"%s\" has a value of type %d where a record belongs",
						dec->c->location, (int) rec->type)));
	/* a record of scalars (a partition tuple) without the generic builder */
	pairs = palloc(sizeof(JsonbPair) * (rec->len + 1));
	for (i = 0; i < rec->len; i++)
	{
		SkadeJbString(&pairs[i].key, dec->s->field[n->child + i]);
		if (!scalar_jsonb(dec, &dec->d[rec->v.first + i], &pairs[i].value))
			break;
	}
	if (i == rec->len)
		return SkadeJsonbObject(pairs, rec->len);
	res = push_jsonb(&state, dec, rec, WJB_VALUE);
	return JsonbPGetDatum(JsonbValueToJsonb(res));
}

/*
 * A scalar value as a JsonbValue (as push_jsonb() makes it); false for
 * anything else (records, arrays, and what push_jsonb() refuses).
 */
static bool
scalar_jsonb(const SkadeAvroDecoder *dec, const SkadeAvroDatum *d, JsonbValue *jv)
{
	switch (d->type)
	{
		case SKADE_AVRO_NULL:
		case SKADE_AVRO_BOOLEAN:
		case SKADE_AVRO_INT:
		case SKADE_AVRO_LONG:
		case SKADE_AVRO_FLOAT:
		case SKADE_AVRO_DOUBLE:
		case SKADE_AVRO_STRING:
		case SKADE_AVRO_BYTES:
		case SKADE_AVRO_FIXED:
			scalar_value(dec, d, jv);
			return true;
		default:
			return false;
	}
}

/* a null, boolean, number, string, bytes or fixed value as a JsonbValue */
static void
scalar_value(const SkadeAvroDecoder *dec, const SkadeAvroDatum *d, JsonbValue *jv)
{
	switch (d->type)
	{
		case SKADE_AVRO_NULL:
			SkadeJbNull(jv);
			break;
		case SKADE_AVRO_BOOLEAN:
			SkadeJbBool(jv, d->v.l != 0);
			break;
		case SKADE_AVRO_INT:
		case SKADE_AVRO_LONG:
			SkadeJbInt(jv, d->v.l);
			break;
		case SKADE_AVRO_FLOAT:
		case SKADE_AVRO_DOUBLE:
			{
				bool		single = d->type == SKADE_AVRO_FLOAT;
				double		x;

				if (single)
				{
					uint32		u = (uint32) d->v.bits;
					float		fx;

					memcpy(&fx, &u, 4);
					x = fx;
				}
				else
					memcpy(&x, &d->v.bits, 8);
				if (isnan(x) || isinf(x))
					SkadeJbString(jv, isnan(x) ? "NaN" : (x > 0 ? "Infinity" : "-Infinity"));
				else
					SkadeJbNumber(jv, psprintf(single ? "%.9g" : "%.17g", x));
				break;
			}
		case SKADE_AVRO_STRING:
			check_text(dec, d->v.p, d->len, "a string value");
			SkadeJbText(jv, pnstrdup(d->v.p, d->len), d->len);
			break;
		case SKADE_AVRO_BYTES:
		case SKADE_AVRO_FIXED:
			SkadeHexJsonb(d->v.p, d->len, jv);
			break;
		default:
			elog(ERROR, "Avro type %d is not a scalar", (int) d->type);
	}
}

/* push one value as jsonb; tok says where (WJB_VALUE or WJB_ELEM) */
static JsonbValue *
push_jsonb(JsonbParseState **state, const SkadeAvroDecoder *dec, const SkadeAvroDatum *d,
		   JsonbIteratorToken tok)
{
	JsonbValue	jv;
	int			i;

	check_stack_depth();
	if (scalar_jsonb(dec, d, &jv))
		return pushJsonbValue(state, tok, &jv);
	switch (d->type)
	{
		case SKADE_AVRO_RECORD:
			{
				const SkadeAvroNode *n = &dec->s->nodes[d->node];

				pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
				for (i = 0; i < d->len; i++)
				{
					pushJsonbValue(state, WJB_KEY,
								   SkadeJbString(&jv, pstrdup(dec->s->field[n->child + i])));
					push_jsonb(state, dec, &dec->d[d->v.first + i], WJB_VALUE);
				}
				return pushJsonbValue(state, WJB_END_OBJECT, NULL);
			}
		case SKADE_AVRO_ARRAY:
			pushJsonbValue(state, WJB_BEGIN_ARRAY, NULL);
			for (i = 0; i < d->len; i++)
				push_jsonb(state, dec, &dec->d[d->v.first + i], WJB_ELEM);
			return pushJsonbValue(state, WJB_END_ARRAY, NULL);
		default:
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("Avro file \"%s\" holds a value of a type skade does not read",
							dec->c->location),
					 errdetail("Avro type %d.", (int) d->type)));
	}
	return NULL;				/* keep the compiler quiet */
}

/*
 * SkadeAvroDatumBinary
 *		A value in Iceberg's single-value binary serialisation (little-endian
 *		int/long/float/double, one byte for a boolean, the bytes of a string,
 *		bytes or fixed), appended to out; false if it is null.
 */
bool
SkadeAvroDatumBinary(const SkadeAvroDecoder *dec, const SkadeAvroDatum *d, StringInfo out)
{
	unsigned char buf[8];
	int			width;
	int			i;

	switch (d->type)
	{
		case SKADE_AVRO_NULL:
			return false;
		case SKADE_AVRO_BOOLEAN:
			appendStringInfoChar(out, d->v.l != 0 ? 1 : 0);
			return true;
		case SKADE_AVRO_INT:
		case SKADE_AVRO_FLOAT:
			width = 4;
			break;
		case SKADE_AVRO_LONG:
		case SKADE_AVRO_DOUBLE:
			width = 8;
			break;
		case SKADE_AVRO_STRING:
		case SKADE_AVRO_BYTES:
		case SKADE_AVRO_FIXED:
			appendBinaryStringInfo(out, d->v.p, d->len);
			return true;
		default:
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("Avro file \"%s\" has a partition value of a type skade does not read",
							dec->c->location),
					 errdetail("Avro type %d.", (int) d->type)));
	}
	for (i = 0; i < width; i++)
		buf[i] = (unsigned char) (d->v.bits >> (8 * i));
	appendBinaryStringInfo(out, (const char *) buf, width);
	return true;
}

/* ---------------------------------------------------------------- errors */

/* a string from the file must be valid UTF-8 without NULs to become text */
static void
check_text(const SkadeAvroDecoder *dec, const char *s, size_t len, const char *what)
{
	if (len > (size_t) PG_INT32_MAX || !pg_verifymbstr(s, (int) len, true))
		ereport(ERROR,
				(errcode(ERRCODE_SKADE_INVALID_FILE),
				 errmsg("Avro file \"%s\" holds a string that is not valid UTF-8", dec->c->location),
				 errdetail("In %s.", what),
				 errhint("Iceberg writes strings as UTF-8 without NUL bytes.")));
}

static void
read_error(const SkadeAvroDecoder *dec, const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_SKADE_INVALID_FILE),
			 errmsg("could not read a record of Avro file \"%s\"", dec->c->location),
			 errdetail("libavro: %s", detail),
			 errhint("The file may be truncated or corrupt.")));
}
