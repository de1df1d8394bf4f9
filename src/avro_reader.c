/*-------------------------------------------------------------------------
 *
 * avro_reader.c
 *	  Avro object container files (Iceberg manifest lists and manifests),
 *	  read through libavro-c.  The only file that includes avro.h.
 *
 * Invariants:
 *	 - the bytes come from SkadeReadLocation, so the same confinement
 *	   (skade.allowed_roots, no symlinks, size cap) applies as for metadata;
 *	 - the codec is checked from the header before libavro-c sees the file:
 *	   null, deflate and snappy are read (what Iceberg writers use, bar
 *	   zstandard); anything else (zstandard, bzip2, xz) is
 *	   feature_not_supported rather than an opaque libavro error;
 *	 - libavro-c allocates with malloc: its reader and value live as long as
 *	   the memory context the SkadeAvroFile was opened in (a reset callback
 *	   frees them), so an error anywhere cannot leak them;
 *	 - every libavro failure is reported as data_corrupted, naming the file.
 *
 * Locking: none; everything is backend-local.
 *
 * IDENTIFICATION
 *	  src/avro_reader.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>
#include <stdio.h>

#include <avro.h>

#include "miscadmin.h"
#include "nodes/pg_list.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"

#include "avro_reader.h"
#include "bound_json.h"
#include "file_access.h"

struct SkadeAvroFile
{
	const char *location;
	StringInfo	bytes;			/* the file; libavro reads it via fmemopen */
	List	   *meta;			/* header metadata: key, value, key, ... */
	const char *codec;
	avro_file_reader_t reader;
	avro_value_iface_t *iface;
	avro_value_t value;
	bool		have_value;
	bool		open;
	MemoryContextCallback cleanup;
	SkadeAvroValue *current;
	int64		records;
};

struct SkadeAvroValue
{
	const SkadeAvroFile *file;
	avro_value_t v;
};

static void parse_header(SkadeAvroFile *f);
static bool header_long(const char **p, const char *end, int64 *out);
static void release(void *arg);
static void report_avro(const SkadeAvroFile *f, const char *what) pg_attribute_noreturn();
static bool field_value(const SkadeAvroValue *rec, const char *name, avro_value_t *out);
static bool int_value(const avro_value_t *value, int64 *out);
static JsonbValue *push_jsonb(JsonbParseState **state, const avro_value_t *value,
							  const SkadeAvroFile *f, JsonbIteratorToken tok);
static void type_mismatch(const SkadeAvroValue *rec, const char *name,
						  const char *expected) pg_attribute_noreturn();

/*
 * SkadeAvroOpen
 *		Read the Avro file at location and open it for SkadeAvroNext.
 */
SkadeAvroFile *
SkadeAvroOpen(const char *location)
{
	SkadeAvroFile *f = palloc0(sizeof(SkadeAvroFile));
	FILE	   *fp;
	avro_schema_t schema;

	f->location = pstrdup(location);
	f->bytes = SkadeReadLocation(location);
	parse_header(f);

	f->cleanup.func = release;
	f->cleanup.arg = f;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, &f->cleanup);

	fp = fmemopen(f->bytes->data, f->bytes->len, "rb");
	if (fp == NULL)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open Avro file \"%s\": %m", location)));
	if (avro_file_reader_fp(fp, location, 1, &f->reader) != 0)
		report_avro(f, "could not open");
	f->open = true;
	schema = avro_file_reader_get_writer_schema(f->reader);
	if (schema == NULL || !is_avro_record(schema))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("Avro file \"%s\" does not hold records", location)));
	f->iface = avro_generic_class_from_schema(schema);
	if (f->iface == NULL || avro_generic_value_new(f->iface, &f->value) != 0)
		report_avro(f, "could not read the schema of");
	f->have_value = true;
	f->current = palloc(sizeof(SkadeAvroValue));
	f->current->file = f;
	return f;
}

/*
 * SkadeAvroNext
 *		The next record, or NULL at the end of the file.  The record is
 *		overwritten by the next call.
 */
const SkadeAvroValue *
SkadeAvroNext(SkadeAvroFile *f)
{
	int			rc;

	if (!f->open)
		return NULL;
	avro_value_reset(&f->value);
	rc = avro_file_reader_read_value(f->reader, &f->value);
	if (rc == EOF)
		return NULL;
	if (rc != 0)
		report_avro(f, "could not read a record of");
	f->records++;
	f->current->v = f->value;
	return f->current;
}

void
SkadeAvroClose(SkadeAvroFile *f)
{
	release(f);
}

const char *
SkadeAvroCodec(const SkadeAvroFile *f)
{
	return f->codec;
}

/* A header metadata value (e.g. "format-version", "schema"), or NULL */
const char *
SkadeAvroMeta(const SkadeAvroFile *f, const char *key)
{
	ListCell   *lc;

	for (lc = list_head(f->meta); lc != NULL; lc = lnext(f->meta, lnext(f->meta, lc)))
	{
		if (strcmp((const char *) lfirst(lc), key) == 0)
			return (const char *) lfirst(lnext(f->meta, lc));
	}
	return NULL;
}

/* the size of the file in bytes, as read */
size_t
SkadeAvroFileSize(const SkadeAvroFile *f)
{
	return f->bytes->len;
}

/*
 * SkadeAvroToJsonb
 *		A record (e.g. a data file's partition) as a jsonb object: null,
 *		booleans, numbers (NaN and infinities as strings), strings, "\\x"
 *		hex for bytes and fixed, nested records and arrays.
 */
Datum
SkadeAvroToJsonb(const SkadeAvroValue *value)
{
	JsonbParseState *state = NULL;
	JsonbValue *res;

	if (avro_value_get_type(&value->v) != AVRO_RECORD)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("Avro file \"%s\" has a value of type %d where a record belongs",
						value->file->location, (int) avro_value_get_type(&value->v))));
	res = push_jsonb(&state, &value->v, value->file, WJB_VALUE);
	return JsonbPGetDatum(JsonbValueToJsonb(res));
}

/* push one Avro value as jsonb; tok says where (WJB_VALUE or WJB_ELEM) */
static JsonbValue *
push_jsonb(JsonbParseState **state, const avro_value_t *value, const SkadeAvroFile *f,
		   JsonbIteratorToken tok)
{
	avro_value_t v = *value;
	JsonbValue	jv;
	JsonbValue *res = NULL;
	size_t		n,
				i;

	check_stack_depth();
	if (avro_value_get_type(&v) == AVRO_UNION)
	{
		avro_value_t b;

		if (avro_value_get_current_branch(&v, &b) != 0)
			return pushJsonbValue(state, tok, SkadeJbNull(&jv));
		v = b;
	}
	switch (avro_value_get_type(&v))
	{
		case AVRO_NULL:
			return pushJsonbValue(state, tok, SkadeJbNull(&jv));
		case AVRO_BOOLEAN:
			{
				int			b;

				avro_value_get_boolean(&v, &b);
				return pushJsonbValue(state, tok, SkadeJbBool(&jv, b != 0));
			}
		case AVRO_INT32:
			{
				int32_t		x;

				avro_value_get_int(&v, &x);
				return pushJsonbValue(state, tok, SkadeJbInt(&jv, x));
			}
		case AVRO_INT64:
			{
				int64_t		x;

				avro_value_get_long(&v, &x);
				return pushJsonbValue(state, tok, SkadeJbInt(&jv, x));
			}
		case AVRO_FLOAT:
		case AVRO_DOUBLE:
			{
				double		x;
				float		fx;
				bool		single = avro_value_get_type(&v) == AVRO_FLOAT;

				if (single)
				{
					avro_value_get_float(&v, &fx);
					x = fx;
				}
				else
					avro_value_get_double(&v, &x);
				if (isnan(x) || isinf(x))
					SkadeJbString(&jv, isnan(x) ? "NaN" : (x > 0 ? "Infinity" : "-Infinity"));
				else
					SkadeJbNumber(&jv, psprintf(single ? "%.9g" : "%.17g", x));
				return pushJsonbValue(state, tok, &jv);
			}
		case AVRO_STRING:
			{
				const char *str;

				avro_value_get_string(&v, &str, &n);
				n = n > 0 ? n - 1 : 0;
				return pushJsonbValue(state, tok, SkadeJbText(&jv, pnstrdup(str, n),
															   strnlen(str, n)));
			}
		case AVRO_BYTES:
		case AVRO_FIXED:
			{
				const void *p;

				if (avro_value_get_type(&v) == AVRO_BYTES)
					avro_value_get_bytes(&v, &p, &n);
				else
					avro_value_get_fixed(&v, &p, &n);
				SkadeHexJsonb(p, n, &jv);
				return pushJsonbValue(state, tok, &jv);
			}
		case AVRO_RECORD:
			avro_value_get_size(&v, &n);
			pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
			for (i = 0; i < n; i++)
			{
				avro_value_t child;
				const char *name;

				avro_value_get_by_index(&v, i, &child, &name);
				pushJsonbValue(state, WJB_KEY, SkadeJbString(&jv, pstrdup(name)));
				push_jsonb(state, &child, f, WJB_VALUE);
			}
			res = pushJsonbValue(state, WJB_END_OBJECT, NULL);
			break;
		case AVRO_ARRAY:
			avro_value_get_size(&v, &n);
			pushJsonbValue(state, WJB_BEGIN_ARRAY, NULL);
			for (i = 0; i < n; i++)
			{
				avro_value_t child;

				avro_value_get_by_index(&v, i, &child, NULL);
				push_jsonb(state, &child, f, WJB_ELEM);
			}
			res = pushJsonbValue(state, WJB_END_ARRAY, NULL);
			break;
		default:
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("Avro file \"%s\" holds a value of a type skade does not read",
							f->location),
					 errdetail("Avro type %d.", (int) avro_value_get_type(&v))));
	}
	return res;
}

/* ---------------------------------------------------------------- fields */

bool
SkadeAvroField(const SkadeAvroValue *rec, const char *name, SkadeAvroValue **out)
{
	avro_value_t v;

	if (!field_value(rec, name, &v))
		return false;
	*out = palloc(sizeof(SkadeAvroValue));
	(*out)->file = rec->file;
	(*out)->v = v;
	return true;
}

bool
SkadeAvroLong(const SkadeAvroValue *rec, const char *name, int64 *out)
{
	avro_value_t v;

	if (!field_value(rec, name, &v))
		return false;
	if (!int_value(&v, out))
		type_mismatch(rec, name, "int or long");
	return true;
}

bool
SkadeAvroBool(const SkadeAvroValue *rec, const char *name, bool *out)
{
	avro_value_t v;
	int			b;

	if (!field_value(rec, name, &v))
		return false;
	if (avro_value_get_type(&v) != AVRO_BOOLEAN)
		type_mismatch(rec, name, "boolean");
	avro_value_get_boolean(&v, &b);
	*out = b != 0;
	return true;
}

bool
SkadeAvroText(const SkadeAvroValue *rec, const char *name, char **out)
{
	avro_value_t v;
	const char *s;
	size_t		size;

	if (!field_value(rec, name, &v))
		return false;
	if (avro_value_get_type(&v) != AVRO_STRING)
		type_mismatch(rec, name, "string");
	avro_value_get_string(&v, &s, &size);
	/* size counts the terminating NUL */
	*out = pnstrdup(s, size > 0 ? size - 1 : 0);
	return true;
}

bool
SkadeAvroBytes(const SkadeAvroValue *rec, const char *name, const char **out, size_t *len)
{
	avro_value_t v;
	const void *p;

	if (!field_value(rec, name, &v))
		return false;
	if (avro_value_get_type(&v) == AVRO_BYTES)
		avro_value_get_bytes(&v, &p, len);
	else if (avro_value_get_type(&v) == AVRO_FIXED)
		avro_value_get_fixed(&v, &p, len);
	else
		type_mismatch(rec, name, "bytes");
	*out = (const char *) p;
	return true;
}

/* the number of elements of an array value (0 for anything else) */
int
SkadeAvroArrayLength(const SkadeAvroValue *array)
{
	size_t		n = 0;

	if (avro_value_get_type(&array->v) != AVRO_ARRAY)
		return 0;
	avro_value_get_size(&array->v, &n);
	return (int) n;
}

SkadeAvroValue *
SkadeAvroArrayElement(const SkadeAvroValue *array, int i)
{
	SkadeAvroValue *e = palloc(sizeof(SkadeAvroValue));

	e->file = array->file;
	if (avro_value_get_by_index(&array->v, i, &e->v, NULL) != 0)
		report_avro(array->file, "could not read an array element of");
	/* nullable elements are unions */
	if (avro_value_get_type(&e->v) == AVRO_UNION)
	{
		avro_value_t b;

		avro_value_get_current_branch(&e->v, &b);
		e->v = b;
	}
	return e;
}

/* an int or long value itself (e.g. an array element); false if null */
bool
SkadeAvroAsLong(const SkadeAvroValue *value, int64 *out)
{
	if (avro_value_get_type(&value->v) == AVRO_NULL)
		return false;
	if (!int_value(&value->v, out))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("Avro file \"%s\" has a value of type %d where an int or long belongs",
						value->file->location, (int) avro_value_get_type(&value->v))));
	return true;
}

/* an int or long value into *out; false if it is of another type */
static bool
int_value(const avro_value_t *value, int64 *out)
{
	int32_t		i32;
	int64_t		i64;

	switch (avro_value_get_type(value))
	{
		case AVRO_INT32:
			avro_value_get_int(value, &i32);
			*out = i32;
			return true;
		case AVRO_INT64:
			avro_value_get_long(value, &i64);
			*out = i64;
			return true;
		default:
			return false;
	}
}

/* the number of fields of a record (0 for anything else) */
int
SkadeAvroRecordSize(const SkadeAvroValue *rec)
{
	size_t		n = 0;

	if (avro_value_get_type(&rec->v) != AVRO_RECORD || avro_value_get_size(&rec->v, &n) != 0)
		return 0;
	return (int) n;
}

/*
 * The i-th field of a record in Iceberg's single-value binary serialisation
 * (little-endian int/long/float/double, one byte for a boolean, the bytes of
 * a string, bytes or fixed), appended to out; false if the field is null.
 */
bool
SkadeAvroBinaryAt(const SkadeAvroValue *rec, int i, StringInfo out)
{
	avro_value_t v;
	const void *p;
	size_t		n;
	unsigned char buf[8];
	uint64		bits = 0;
	int			width = 0;

	if (avro_value_get_by_index(&rec->v, i, &v, NULL) != 0)
		report_avro(rec->file, "record field");
	if (avro_value_get_type(&v) == AVRO_UNION)
	{
		avro_value_t b;

		if (avro_value_get_current_branch(&v, &b) != 0)
			return false;
		v = b;
	}
	switch (avro_value_get_type(&v))
	{
		case AVRO_NULL:
			return false;
		case AVRO_BOOLEAN:
			{
				int			b;

				avro_value_get_boolean(&v, &b);
				appendStringInfoChar(out, b ? 1 : 0);
				return true;
			}
		case AVRO_INT32:
			{
				int32_t		x;

				avro_value_get_int(&v, &x);
				bits = (uint32) x;
				width = 4;
				break;
			}
		case AVRO_INT64:
			{
				int64_t		x;

				avro_value_get_long(&v, &x);
				bits = (uint64) x;
				width = 8;
				break;
			}
		case AVRO_FLOAT:
			{
				float		x;
				uint32		u;

				avro_value_get_float(&v, &x);
				memcpy(&u, &x, 4);
				bits = u;
				width = 4;
				break;
			}
		case AVRO_DOUBLE:
			{
				double		x;

				avro_value_get_double(&v, &x);
				memcpy(&bits, &x, 8);
				width = 8;
				break;
			}
		case AVRO_STRING:
			{
				const char *str;

				avro_value_get_string(&v, &str, &n);
				appendBinaryStringInfo(out, str, n > 0 ? (int) n - 1 : 0);
				return true;
			}
		case AVRO_BYTES:
			avro_value_get_bytes(&v, &p, &n);
			appendBinaryStringInfo(out, p, (int) n);
			return true;
		case AVRO_FIXED:
			avro_value_get_fixed(&v, &p, &n);
			appendBinaryStringInfo(out, p, (int) n);
			return true;
		default:
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("Avro file \"%s\" has a partition value of a type skade does not read",
							rec->file->location),
					 errdetail("Avro type %d.", (int) avro_value_get_type(&v))));
	}
	for (n = 0; n < (size_t) width; n++)
		buf[n] = (unsigned char) (bits >> (8 * n));
	appendBinaryStringInfo(out, (const char *) buf, width);
	return true;
}

/* ---------------------------------------------------------------- helpers */

/* the named field of a record, through a nullable union; false if absent/null */
static bool
field_value(const SkadeAvroValue *rec, const char *name, avro_value_t *out)
{
	if (avro_value_get_type(&rec->v) != AVRO_RECORD)
		return false;
	if (avro_value_get_by_name(&rec->v, name, out, NULL) != 0)
		return false;
	if (avro_value_get_type(out) == AVRO_UNION)
	{
		avro_value_t b;

		if (avro_value_get_current_branch(out, &b) != 0)
			return false;
		*out = b;
	}
	return avro_value_get_type(out) != AVRO_NULL;
}

static void
type_mismatch(const SkadeAvroValue *rec, const char *name, const char *expected)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("field \"%s\" of Avro file \"%s\" is not of type %s",
					name, rec->file->location, expected),
			 errhint("The file does not follow the Iceberg manifest schema.")));
}

static void
report_avro(const SkadeAvroFile *f, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("%s Avro file \"%s\"", what, f->location),
			 errdetail("libavro: %s", avro_strerror()),
			 errhint("The file may be truncated or corrupt.")));
}

/* frees libavro's allocations; idempotent (explicit close, then reset) */
static void
release(void *arg)
{
	SkadeAvroFile *f = (SkadeAvroFile *) arg;

	if (f->have_value)
	{
		avro_value_decref(&f->value);
		f->have_value = false;
	}
	if (f->iface != NULL)
	{
		avro_value_iface_decref(f->iface);
		f->iface = NULL;
	}
	if (f->open)
	{
		avro_file_reader_close(f->reader);	/* closes the fmemopen'd FILE */
		f->open = false;
	}
}

/* an Avro long: zig-zag varint */
static bool
header_long(const char **p, const char *end, int64 *out)
{
	uint64		u = 0;
	int			shift = 0;

	while (*p < end && shift < 64)
	{
		unsigned char b = (unsigned char) *(*p)++;

		u |= (uint64) (b & 0x7f) << shift;
		if ((b & 0x80) == 0)
		{
			*out = (int64) ((u >> 1) ^ (~(u & 1) + 1));
			return true;
		}
		shift += 7;
	}
	return false;
}

/*
 * The container header: magic, then a map<string, bytes> in blocks.  Read
 * here so that the codec can be refused clearly before libavro-c sees it.
 */
static void
parse_header(SkadeAvroFile *f)
{
	const char *p = f->bytes->data;
	const char *end = p + f->bytes->len;
	int64		count;

	if (f->bytes->len < 4 || memcmp(p, "Obj\001", 4) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("\"%s\" is not an Avro object container file", f->location),
				 errdetail("It does not start with the Avro magic bytes.")));
	p += 4;
	for (;;)
	{
		if (!header_long(&p, end, &count))
			goto truncated;
		if (count == 0)
			break;
		if (count < 0)
		{
			int64		blocksize;

			count = -count;
			if (!header_long(&p, end, &blocksize))
				goto truncated;
		}
		while (count-- > 0)
		{
			int64		klen,
						vlen;
			char	   *key;

			if (!header_long(&p, end, &klen) || klen < 0 || klen > end - p)
				goto truncated;
			key = pnstrdup(p, klen);
			p += klen;
			if (!header_long(&p, end, &vlen) || vlen < 0 || vlen > end - p)
				goto truncated;
			f->meta = lappend(f->meta, key);
			f->meta = lappend(f->meta, pnstrdup(p, vlen));
			p += vlen;
		}
	}
	if (end - p < 16)
		goto truncated;

	f->codec = SkadeAvroMeta(f, "avro.codec");
	if (f->codec == NULL || f->codec[0] == '\0')
		f->codec = "null";
	if (strcmp(f->codec, "null") != 0 && strcmp(f->codec, "deflate") != 0 &&
		strcmp(f->codec, "snappy") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("Avro codec \"%s\" of \"%s\" is not supported", f->codec, f->location),
				 errdetail("skade reads the codecs null, deflate and snappy."),
				 errhint("Write manifests with one of those codecs (Iceberg's "
						 "write.avro.compression-codec), e.g. gzip, which is deflate.")));
	return;

truncated:
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("Avro file \"%s\" has a truncated or corrupt header", f->location)));
}
