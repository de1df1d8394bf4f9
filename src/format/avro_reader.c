/*-------------------------------------------------------------------------
 *
 * avro_reader.c
 *	  Avro object container files (Iceberg manifest lists and manifests),
 *	  read record by record through libavro-c, and the records skade writes
 *	  into such files built and encoded by it (see "writing" below; the
 *	  container around them is manifest_write.c's).  The only file that
 *	  includes avro.h.  (The manifests the L0.5 cache decodes are read by
 *	  skade's own decoder instead, avro_decode.c: manifest_decode.c.)
 *
 * Invariants:
 *	 - the bytes are the caller's, read with SkadeReadLocation (by the
 *	   table's route), so the same confinement
 *	   (skade.allowed_roots, no symlink escapes, size cap) applies as for
 *	   metadata (a manifest list on S3 through the manifest cache, whose
 *	   hits are checked against the roots too); a manifest's size is checked against the length its
 *	   manifest list records before anything is decoded;
 *	 - libavro-c never sees the file itself: avro_container.c parses the
 *	   container, validates the writer schema (non-recursive, bounded) and
 *	   decodes the blocks within skade.max_manifest_size; libavro-c only
 *	   parses the validated schema and reads each block's records from its
 *	   decoded bytes (a memory reader), exactly as many as the block
 *	   declares, and the records must use up the block;
 *	 - the schema must have the shape of the kind of file asked for (a
 *	   manifest list's manifest_path, a manifest's status and
 *	   data_file.file_path);
 *	 - libavro-c allocates through skade_avro_alloc, in the file's own memory
 *	   context ("skade avro", a child of the context it was opened in), at
 *	   most AVRO_TOTAL_LIMIT bytes (54000 beyond).  libavro-c cannot survive
 *	   a failed reallocation (it overwrites its pointer with NULL and later
 *	   walks the array), so the allocator never returns NULL: past the limit,
 *	   or out of memory, it raises the error itself, and the file is marked
 *	   broken so that nothing of libavro-c's is used again; the context goes
 *	   with its parent, or at SkadeAvroClose.  A file that is not broken
 *	   releases its schema, class and value first (libavro-c's primitive
 *	   schemas are counted statics);
 *	 - every string that leaves here as text is valid UTF-8 (no NUL);
 *	 - every malformed input is 22SK1 naming the file.
 *
 * Locking: none; everything is backend-local.
 *
 * IDENTIFICATION
 *	  src/format/avro_reader.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include <math.h>

#include <avro.h>

#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "nodes/pg_list.h"
#include "utils/memutils.h"

#include "format/avro_container.h"
#include "format/avro_reader.h"
#include "format/bound_json.h"
#include "util/guc.h"
#include "util/skade_limits.h"
#include "util/location.h"

struct SkadeAvroFile
{
	const char *location;
	char	   *real_path;		/* the real path of the file read */
	StringInfo	bytes;			/* the file as read */
	SkadeAvroContainer *container;	/* its blocks, decoded */
	MemoryContext cxt;			/* libavro-c's allocations for this file */
	Size		used;			/* bytes of them */
	bool		broken;			/* an allocation failed inside libavro-c */
	avro_schema_t schema;
	avro_value_iface_t *iface;
	avro_value_t value;
	bool		have_value;
	avro_reader_t reader;		/* over the current block's bytes */
	int			block;			/* current block, -1 before the first */
	int64		left;			/* records left in it */
	MemoryContextCallback cleanup;
	SkadeAvroValue *current;
};

struct SkadeAvroValue
{
	const SkadeAvroFile *file;
	avro_value_t v;
};

/*
 * All that libavro-c may hold for one file at once: its schema and class,
 * and the values of the record being read (with what earlier records left
 * allocated for reuse).  Its values take a few dozen bytes per encoded
 * byte at most (every array element and map entry takes a byte to encode).
 */
#define AVRO_TOTAL_LIMIT	((size_t) skade_max_manifest_size * 2 + 64 * 1024 * 1024)

/*
 * No single value of a file can need more: a string or bytes value is at
 * most all its decoded bytes, an array takes a few dozen bytes per element
 * and every element takes a byte to encode.  A bigger request comes from a
 * corrupt length.
 */
#define AVRO_VALUE_LIMIT(f)	((f)->container ? (size_t) (f)->container->decoded->len * 64 + 1024 * 1024 \
							 : AVRO_TOTAL_LIMIT)

/* the file libavro-c works for now (its allocations go to its context) */
static SkadeAvroFile *avro_active = NULL;

static void *skade_avro_alloc(void *ud, void *ptr, size_t osize, size_t nsize);
pg_noreturn static void avro_alloc_failed(const char *why, size_t nsize);
static void check_shape(SkadeAvroFile *f, SkadeAvroKind kind);
static bool schema_has(avro_schema_t rec, const char *field, avro_type_t type,
					   avro_schema_t *out);
static bool next_block(SkadeAvroFile *f);
static void release(void *arg);
pg_noreturn static void report_avro(const SkadeAvroFile *f, const char *what);
static void check_text(const SkadeAvroFile *f, const char *s, size_t len, const char *what);
static bool field_value(const SkadeAvroValue *rec, const char *name, avro_value_t *out);
static bool int_value(const avro_value_t *value, int64 *out);
pg_noreturn static void type_mismatch(const SkadeAvroValue *rec, const char *name,
						  const char *expected);
static bool set_field(SkadeAvroValue *rec, const char *name, bool null, avro_value_t *out);
static bool union_branch(avro_value_t *v, bool null, avro_value_t *out);
static void copy_record(const SkadeAvroFile *w, avro_value_t *dst, const avro_value_t *src,
						const SkadeAvroFile *rf, const char *positional, bool by_position);
static void copy_value(const SkadeAvroFile *w, avro_value_t *dst, const avro_value_t *src,
					   const SkadeAvroFile *rf, bool by_position);
static void copy_bytes(avro_value_t *d, const avro_value_t *s, const SkadeAvroFile *rf);
pg_noreturn static void copy_mismatch(const SkadeAvroFile *rf, const char *expected);

/*
 * SkadeAvroInit
 *		Route libavro-c's allocations through skade_avro_alloc.  _PG_init.
 */
void
SkadeAvroInit(void)
{
	avro_set_allocator(skade_avro_alloc, NULL);
}

/*
 * libavro-c's allocator (see the banner): palloc in the active file's
 * context, never more than AVRO_TOTAL_LIMIT for the file, never NULL.
 */
static void *
skade_avro_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
	SkadeAvroFile *f = avro_active;
	void	   *p;

	if (nsize == 0)
	{
		if (ptr)
			pfree(ptr);
		if (f)
			f->used -= Min(osize, f->used);
		return NULL;
	}
	if (f == NULL)
		avro_alloc_failed("outside a file", nsize);	/* skade never lets it */
	if (nsize > AVRO_VALUE_LIMIT(f))
		avro_alloc_failed("impossible", nsize); /* e.g. a corrupt length */
	if (nsize > osize && nsize - osize > AVRO_TOTAL_LIMIT - Min(f->used, AVRO_TOTAL_LIMIT))
		avro_alloc_failed("too much", nsize);
	p = MemoryContextAllocExtended(f->cxt, nsize, MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
	if (p == NULL)
		avro_alloc_failed("out of memory", nsize);
	if (ptr)
	{
		memcpy(p, ptr, Min(osize, nsize));
		pfree(ptr);
	}
	f->used = f->used - Min(osize, f->used) + nsize;
	return p;
}

/* An allocation libavro-c cannot have: the file is broken, the call fails. */
static void
avro_alloc_failed(const char *why, size_t nsize)
{
	SkadeAvroFile *f = avro_active;

	avro_active = NULL;
	if (f == NULL)
		elog(ERROR, "libavro-c allocated %zu bytes outside an Avro file", nsize);
	f->broken = true;
	if (strcmp(why, "impossible") == 0)
		ereport(ERROR,
				(errcode(ERRCODE_SKADE_INVALID_FILE),
				 errmsg("Avro file \"%s\" holds a value of an impossible size", f->location),
				 errdetail("A value claims %zu bytes; the file decodes to %d.",
						   nsize, f->container->decoded->len),
				 errhint("The file may be truncated or corrupt.")));
	if (strcmp(why, "too much") == 0)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("Avro file \"%s\" takes too much memory to read", f->location),
				 errdetail("Its values need more than %zu bytes.", AVRO_TOTAL_LIMIT),
				 errhint("Raise skade.max_manifest_size if the file is legitimate.")));
	ereport(ERROR,
			(errcode(ERRCODE_OUT_OF_MEMORY),
			 errmsg("out of memory"),
			 errdetail("Failed on request of size %zu while reading Avro file \"%s\".",
					   nsize, f->location)));
}

/*
 * SkadeAvroCheckLength
 *		A file must have the length its manifest list records (-1: not
 *		recorded); else 22SK1.
 */
void
SkadeAvroCheckLength(const char *path, uint64 actual, int64 expected)
{
	if (expected >= 0 && actual != (uint64) expected)
		ereport(ERROR,
				(errcode(ERRCODE_SKADE_INVALID_FILE),
				 errmsg("manifest \"%s\" has %llu bytes, but its manifest list says %lld",
						path, (unsigned long long) actual, (long long) expected),
				 errhint("The manifest was truncated or replaced after it was committed.")));
}

/*
 * SkadeAvroOpenBytes
 *		Open the bytes of the Avro file at location (read by the caller:
 *		real_path as SkadeReadLocation gives it), which must have
 *		expected_length bytes (-1: any), of the given kind.
 */
SkadeAvroFile *
SkadeAvroOpenBytes(const char *location, StringInfo bytes, char *real_path, SkadeAvroKind kind,
				   int64 expected_length)
{
	SkadeAvroFile *f = palloc0(sizeof(SkadeAvroFile));

	MemoryContext caller;

	f->location = pstrdup(location);
	f->block = -1;
	f->bytes = bytes;
	f->real_path = real_path;
	SkadeAvroCheckLength(location, f->bytes->len, expected_length);
	f->container = SkadeAvroContainerDecode(f->location, f->bytes->data, f->bytes->len);
	f->current = palloc(sizeof(SkadeAvroValue));
	f->current->file = f;

	/* libavro-c's allocations, and jansson's as it parses the schema, go here */
	f->cxt = AllocSetContextCreate(CurrentMemoryContext, "skade avro",
								   ALLOCSET_DEFAULT_SIZES);
	f->cleanup.func = release;
	f->cleanup.arg = f;
	MemoryContextRegisterResetCallback(f->cxt, &f->cleanup);
	caller = MemoryContextSwitchTo(f->cxt);
	avro_active = f;

	/* the schema was validated: libavro-c may parse it now */
	avro_set_error("%s", "");
	if (avro_schema_from_json_length(f->container->schema, f->container->schema_len,
									 &f->schema) != 0)
		report_avro(f, "could not parse the writer schema of");
	check_shape(f, kind);
	f->iface = avro_generic_class_from_schema(f->schema);
	if (f->iface == NULL || avro_generic_value_new(f->iface, &f->value) != 0)
		report_avro(f, "could not read the schema of");
	f->have_value = true;
	f->reader = avro_reader_memory(NULL, 0);
	if (f->reader == NULL)
		report_avro(f, "could not read");

	avro_active = NULL;
	MemoryContextSwitchTo(caller);
	return f;
}

/*
 * The top-level fields a kind of file must have, with their types: a
 * manifest list's manifest_path (string), a manifest's status (int) and
 * data_file (record) with file_path (string).  Optional ones are checked
 * where they are read.
 */
static void
check_shape(SkadeAvroFile *f, SkadeAvroKind kind)
{
	avro_schema_t df;
	const char *missing = NULL;

	if (!is_avro_record(f->schema))
		missing = "a record at its top level";
	else if (kind == SKADE_AVRO_MANIFEST_LIST)
	{
		if (!schema_has(f->schema, "manifest_path", AVRO_STRING, NULL))
			missing = "manifest_path (string)";
	}
	else if (!schema_has(f->schema, "status", AVRO_INT32, NULL))
		missing = "status (int)";
	else if (!schema_has(f->schema, "data_file", AVRO_RECORD, &df))
		missing = "data_file (record)";
	else if (!schema_has(df, "file_path", AVRO_STRING, NULL))
		missing = "data_file.file_path (string)";
	if (missing)
		ereport(ERROR,
				(errcode(ERRCODE_SKADE_INVALID_FILE),
				 errmsg("Avro file \"%s\" is not an Iceberg %s", f->location,
						kind == SKADE_AVRO_MANIFEST_LIST ? "manifest list" : "manifest"),
				 errdetail("Its writer schema lacks %s.", missing)));
}

/* Has record rec a field of this type (also as a union branch)? */
static bool
schema_has(avro_schema_t rec, const char *field, avro_type_t type, avro_schema_t *out)
{
	/* not avro_schema_record_field_get(), which crashes on a missing field */
	int			index = avro_schema_record_field_get_index(rec, field);
	avro_schema_t s;
	size_t		i;

	if (index < 0)
		return false;
	s = avro_schema_record_field_get_by_index(rec, index);
	if (is_avro_union(s))
	{
		for (i = 0; i < avro_schema_union_size(s); i++)
		{
			avro_schema_t b = avro_schema_union_branch(s, i);

			if (avro_typeof(b) == type)
			{
				if (out)
					*out = b;
				return true;
			}
		}
		return false;
	}
	if (out)
		*out = s;
	return avro_typeof(s) == type;
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

	while (f->left == 0)
		if (!next_block(f))
			return NULL;
	avro_active = f;
	avro_value_reset(&f->value);
	avro_set_error("%s", "");	/* libavro prefixes its messages to the last one */
	rc = avro_value_read(f->reader, &f->value);
	avro_active = NULL;
	if (rc != 0)
		report_avro(f, "could not read a record of");
	f->left--;
	f->current->v = f->value;
	return f->current;
}

/*
 * Move to the next block (false at the end of the file), after checking
 * that the records of the current one used up its bytes.
 */
static bool
next_block(SkadeAvroFile *f)
{
	const SkadeAvroBlock *b;

	if (f->block >= 0)
	{
		char		extra;
		int64		n = f->container->blocks[f->block].count;

		if (avro_read(f->reader, &extra, 1) == 0)
			ereport(ERROR,
					(errcode(ERRCODE_SKADE_INVALID_FILE),
					 errmsg_plural("block %d of Avro file \"%s\" has bytes left after its %lld record",
								   "block %d of Avro file \"%s\" has bytes left after its %lld records",
								   (unsigned long) n, f->block + 1, f->location, (long long) n),
					 errhint("The file may be truncated or corrupt.")));
	}
	if (f->block + 1 >= f->container->nblocks)
	{
		f->block = f->container->nblocks;
		return false;
	}
	b = &f->container->blocks[++f->block];
	avro_reader_memory_set_source(f->reader, f->container->decoded->data + b->off, b->len);
	f->left = b->count;
	return true;
}

void
SkadeAvroClose(SkadeAvroFile *f)
{
	MemoryContextDelete(f->cxt);	/* release() runs first */
}

/* A header metadata value (e.g. "format-version", "schema"), or NULL */
const char *
SkadeAvroMeta(const SkadeAvroFile *f, const char *key)
{
	return SkadeAvroContainerMeta(f->container, key);
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
	size = size > 0 ? size - 1 : 0;
	check_text(rec->file, s, size, name);
	*out = pnstrdup(s, size);
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
			(errcode(ERRCODE_SKADE_INVALID_FILE),
			 errmsg("field \"%s\" of Avro file \"%s\" is not of type %s",
					name, rec->file->location, expected),
			 errhint("The file does not follow the Iceberg manifest schema.")));
}

/* a string from the file must be valid UTF-8 without NULs to become text */
static void
check_text(const SkadeAvroFile *f, const char *s, size_t len, const char *what)
{
	if (len > (size_t) PG_INT32_MAX || !pg_verifymbstr(s, (int) len, true))
		ereport(ERROR,
				(errcode(ERRCODE_SKADE_INVALID_FILE),
				 errmsg("Avro file \"%s\" holds a string that is not valid UTF-8", f->location),
				 errdetail("In %s.", what),
				 errhint("Iceberg writes strings as UTF-8 without NUL bytes.")));
}

static void
report_avro(const SkadeAvroFile *f, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_SKADE_INVALID_FILE),
			 errmsg("%s Avro file \"%s\"", what, f->location),
			 errdetail("libavro: %s", avro_strerror()),
			 errhint("The file may be truncated or corrupt.")));
}

/*
 * The file's context is going: release libavro-c's objects while their
 * memory is still there (a broken file's are left alone, their memory goes
 * with the context).
 */
static void
release(void *arg)
{
	SkadeAvroFile *f = (SkadeAvroFile *) arg;

	if (avro_active == f)
		avro_active = NULL;
	if (f->broken)
		return;
	avro_active = f;			/* frees are counted against it */
	if (f->have_value)
		avro_value_decref(&f->value);
	if (f->iface != NULL)
		avro_value_iface_decref(f->iface);
	if (f->schema != NULL)
		avro_schema_decref(f->schema);
	if (f->reader != NULL)
		avro_reader_free(f->reader);
	avro_active = NULL;
}

/* ------------------------------------------------------------ writing */

/*
 * Records are built and encoded by libavro-c too (the container around them
 * is framed by manifest_write.c: libavro-c's file writer cannot add header
 * metadata).  A writer is a SkadeAvroFile without bytes or container: its
 * schema, class and one record value live in its own context, under the
 * same allocator accounting; errors name the file being written.
 */

/*
 * SkadeAvroWriterCreate
 *		A writer for records of the given schema (JSON skade generated);
 *		what names the file for messages.
 */
SkadeAvroFile *
SkadeAvroWriterCreate(const char *schema_json, const char *what)
{
	SkadeAvroFile *f = palloc0(sizeof(SkadeAvroFile));
	MemoryContext caller;

	f->location = pstrdup(what);
	f->block = -1;
	f->current = palloc(sizeof(SkadeAvroValue));
	f->current->file = f;
	f->cxt = AllocSetContextCreate(CurrentMemoryContext, "skade avro writer",
								   ALLOCSET_DEFAULT_SIZES);
	f->cleanup.func = release;
	f->cleanup.arg = f;
	MemoryContextRegisterResetCallback(f->cxt, &f->cleanup);
	caller = MemoryContextSwitchTo(f->cxt);
	avro_active = f;
	avro_set_error("%s", "");
	if (avro_schema_from_json_length(schema_json, strlen(schema_json), &f->schema) != 0)
		elog(ERROR, "skade generated an Avro schema libavro-c refuses for \"%s\": %s",
			 what, avro_strerror());
	f->iface = avro_generic_class_from_schema(f->schema);
	if (f->iface == NULL || avro_generic_value_new(f->iface, &f->value) != 0)
		elog(ERROR, "libavro-c cannot make a value of the schema for \"%s\": %s",
			 what, avro_strerror());
	f->have_value = true;
	avro_active = NULL;
	MemoryContextSwitchTo(caller);
	return f;
}

/* the writer's record, emptied, to fill for the next SkadeAvroWriterEncode */
SkadeAvroValue *
SkadeAvroWriterRecord(SkadeAvroFile *w)
{
	avro_active = w;
	avro_value_reset(&w->value);
	avro_active = NULL;
	w->current->v = w->value;
	return w->current;
}

/* the record, Avro binary-encoded, appended to out */
void
SkadeAvroWriterEncode(SkadeAvroFile *w, StringInfo out)
{
	size_t		size = 0;
	avro_writer_t wr;

	avro_active = w;
	avro_set_error("%s", "");
	if (avro_value_sizeof(&w->value, &size) != 0)
		elog(ERROR, "could not encode a record of \"%s\": %s", w->location, avro_strerror());
	if (size > (size_t) (MaxAllocSize / 2))
		elog(ERROR, "a record of \"%s\" takes %zu bytes", w->location, size);
	enlargeStringInfo(out, (int) size);
	wr = avro_writer_memory(out->data + out->len, (int64_t) size);
	if (wr == NULL || avro_value_write(wr, &w->value) != 0)
		elog(ERROR, "could not encode a record of \"%s\": %s", w->location, avro_strerror());
	avro_writer_free(wr);
	avro_active = NULL;
	out->len += (int) size;
	out->data[out->len] = '\0';
}

void
SkadeAvroWriterFree(SkadeAvroFile *w)
{
	MemoryContextDelete(w->cxt);
}

/*
 * The named field of a record being written, through a nullable union onto
 * its non-null branch (null: onto its null branch; false if the field is
 * required).
 */
static bool
set_field(SkadeAvroValue *rec, const char *name, bool null, avro_value_t *out)
{
	avro_value_t f;

	if (avro_value_get_by_name(&rec->v, name, &f, NULL) != 0)
		elog(ERROR, "\"%s\" has no field \"%s\"", rec->file->location, name);
	return union_branch(&f, null, out);
}

/* onto the null (or the first other) branch of a union; a non-union as is */
static bool
union_branch(avro_value_t *v, bool null, avro_value_t *out)
{
	avro_schema_t s;
	size_t		i;

	if (avro_value_get_type(v) != AVRO_UNION)
	{
		*out = *v;
		return !null || avro_value_get_type(v) == AVRO_NULL;
	}
	s = avro_value_get_schema(v);
	for (i = 0; i < avro_schema_union_size(s); i++)
	{
		bool		isnull = is_avro_null(avro_schema_union_branch(s, i));

		if (isnull == null)
		{
			if (avro_value_set_branch(v, (int) i, out) != 0)
				elog(ERROR, "could not set a union branch: %s", avro_strerror());
			return true;
		}
	}
	return false;
}

void
SkadeAvroSetNull(SkadeAvroValue *rec, const char *name)
{
	avro_value_t v;

	avro_active = (SkadeAvroFile *) rec->file;
	if (!set_field(rec, name, true, &v))
		elog(ERROR, "field \"%s\" of \"%s\" cannot be null", name, rec->file->location);
	avro_value_set_null(&v);
	avro_active = NULL;
}

/* an int or long field (by its schema) */
void
SkadeAvroSetLong(SkadeAvroValue *rec, const char *name, int64 x)
{
	avro_value_t v;

	avro_active = (SkadeAvroFile *) rec->file;
	set_field(rec, name, false, &v);
	if (avro_value_get_type(&v) == AVRO_INT32)
	{
		if (x < PG_INT32_MIN || x > PG_INT32_MAX)
			elog(ERROR, "field \"%s\" of \"%s\" cannot hold %lld", name, rec->file->location,
				 (long long) x);
		avro_value_set_int(&v, (int32_t) x);
	}
	else
		avro_value_set_long(&v, x);
	avro_active = NULL;
}

void
SkadeAvroSetBool(SkadeAvroValue *rec, const char *name, bool b)
{
	avro_value_t v;

	avro_active = (SkadeAvroFile *) rec->file;
	set_field(rec, name, false, &v);
	avro_value_set_boolean(&v, b ? 1 : 0);
	avro_active = NULL;
}

/* a string, bytes or fixed field (by its schema) */
void
SkadeAvroSetBytes(SkadeAvroValue *rec, const char *name, const char *p, size_t len)
{
	avro_value_t v;

	avro_active = (SkadeAvroFile *) rec->file;
	set_field(rec, name, false, &v);
	if (avro_value_get_type(&v) == AVRO_STRING)
		avro_value_set_string_len(&v, pnstrdup(p, len), len + 1);
	else if (avro_value_get_type(&v) == AVRO_FIXED)
		avro_value_set_fixed(&v, (void *) p, len);
	else
		avro_value_set_bytes(&v, (void *) p, len);
	avro_active = NULL;
}

/* a record field (through a nullable union) to fill */
SkadeAvroValue *
SkadeAvroSetRecord(SkadeAvroValue *rec, const char *name)
{
	SkadeAvroValue *out = palloc(sizeof(SkadeAvroValue));

	avro_active = (SkadeAvroFile *) rec->file;
	out->file = rec->file;
	set_field(rec, name, false, &out->v);
	avro_active = NULL;
	return out;
}

/* a new element of an array value, onto the non-null branch if nullable */
SkadeAvroValue *
SkadeAvroAppend(SkadeAvroValue *array)
{
	SkadeAvroValue *out = palloc(sizeof(SkadeAvroValue));
	avro_value_t e;

	avro_active = (SkadeAvroFile *) array->file;
	out->file = array->file;
	if (avro_value_append(&array->v, &e, NULL) != 0)
		elog(ERROR, "could not append to an array of \"%s\": %s", array->file->location,
			 avro_strerror());
	union_branch(&e, false, &out->v);
	avro_active = NULL;
	return out;
}

/*
 * SkadeAvroCopy
 *		Copy record src (read from a file) into record dst (being written),
 *		field by field by name, recursively: unions are unwrapped on both
 *		sides, ints widen to longs, floats to doubles, and bytes, fixed and
 *		string hold one another (fixed only at its size).  The record field
 *		named positional (if any) of the top record is copied field by field
 *		by position (a partition tuple: its names may be sanitised
 *		differently by different writers).  A dst field src lacks is null,
 *		or its default: content 0, block_size_in_bytes 67108864 (what Java
 *		writes); a required one without a default is 22SK1.
 */
void
SkadeAvroCopy(SkadeAvroValue *dst, const SkadeAvroValue *src, const char *positional)
{
	avro_active = (SkadeAvroFile *) dst->file;
	copy_record(dst->file, &dst->v, &src->v, src->file, positional, false);
	avro_active = NULL;
}

static void
copy_record(const SkadeAvroFile *w, avro_value_t *dst, const avro_value_t *src,
			const SkadeAvroFile *rf, const char *positional, bool by_position)
{
	size_t		n = 0,
				srcn = 0,
				i;

	if (avro_value_get_type(src) != AVRO_RECORD)
		copy_mismatch(rf, "a record");
	avro_value_get_size(dst, &n);
	avro_value_get_size(src, &srcn);
	if (by_position && n != srcn)
		ereport(ERROR,
				(errcode(ERRCODE_SKADE_INVALID_FILE),
				 errmsg("Avro file \"%s\" has a partition tuple of %zu fields where its spec has %zu",
						rf->location, srcn, n)));
	for (i = 0; i < n; i++)
	{
		const char *name;
		avro_value_t df,
					sf;

		avro_value_get_by_index(dst, i, &df, &name);
		if (by_position)
			avro_value_get_by_index(src, i, &sf, NULL);
		else if (avro_value_get_by_name(src, name, &sf, NULL) != 0)
		{
			avro_value_t b;

			if (union_branch(&df, true, &b))
				avro_value_set_null(&b);
			else if (strcmp(name, "content") == 0 && avro_value_get_type(&df) == AVRO_INT32)
				avro_value_set_int(&df, 0);
			else if (strcmp(name, "block_size_in_bytes") == 0)
				avro_value_set_long(&df, INT64CONST(67108864));
			else
				ereport(ERROR,
						(errcode(ERRCODE_SKADE_INVALID_FILE),
						 errmsg("Avro file \"%s\" lacks the required field \"%s\"",
								rf->location, name)));
			continue;
		}
		copy_value(w, &df, &sf, rf, positional && strcmp(name, positional) == 0);
	}
}

static void
copy_value(const SkadeAvroFile *w, avro_value_t *dst, const avro_value_t *src,
		   const SkadeAvroFile *rf, bool by_position)
{
	avro_value_t s = *src;
	avro_value_t d;
	avro_type_t st;

	check_stack_depth();
	CHECK_FOR_INTERRUPTS();
	if (avro_value_get_type(&s) == AVRO_UNION)
	{
		avro_value_t b;

		if (avro_value_get_current_branch(&s, &b) != 0)
			copy_mismatch(rf, "a union with a branch");
		s = b;
	}
	st = avro_value_get_type(&s);
	if (!union_branch(dst, st == AVRO_NULL, &d))
		copy_mismatch(rf, st == AVRO_NULL ? "a value (not null)" : "null");
	switch (avro_value_get_type(&d))
	{
		case AVRO_NULL:
			avro_value_set_null(&d);
			return;
		case AVRO_RECORD:
			copy_record(w, &d, &s, rf, NULL, by_position);
			return;
		case AVRO_ARRAY:
			{
				size_t		n = 0,
							i;

				if (st != AVRO_ARRAY)
					copy_mismatch(rf, "an array");
				avro_value_get_size(&s, &n);
				for (i = 0; i < n; i++)
				{
					avro_value_t se,
								de;

					avro_value_get_by_index(&s, i, &se, NULL);
					if (avro_value_append(&d, &de, NULL) != 0)
						copy_mismatch(rf, "an array element");
					copy_value(w, &de, &se, rf, false);
				}
				return;
			}
		case AVRO_BOOLEAN:
			{
				int			b;

				if (st != AVRO_BOOLEAN)
					copy_mismatch(rf, "a boolean");
				avro_value_get_boolean(&s, &b);
				avro_value_set_boolean(&d, b);
				return;
			}
		case AVRO_INT32:
		case AVRO_INT64:
			{
				int64		x;

				if (!int_value(&s, &x) ||
					(avro_value_get_type(&d) == AVRO_INT32 && st != AVRO_INT32))
					copy_mismatch(rf, "an int or long");
				if (avro_value_get_type(&d) == AVRO_INT32)
					avro_value_set_int(&d, (int32_t) x);
				else
					avro_value_set_long(&d, x);
				return;
			}
		case AVRO_FLOAT:
		case AVRO_DOUBLE:
			{
				float		fx;
				double		x;

				if (st == AVRO_FLOAT)
				{
					avro_value_get_float(&s, &fx);
					x = fx;
				}
				else if (st == AVRO_DOUBLE && avro_value_get_type(&d) == AVRO_DOUBLE)
					avro_value_get_double(&s, &x);
				else
					copy_mismatch(rf, "a float or double");
				if (avro_value_get_type(&d) == AVRO_FLOAT)
					avro_value_set_float(&d, (float) x);
				else
					avro_value_set_double(&d, x);
				return;
			}
		case AVRO_STRING:
		case AVRO_BYTES:
		case AVRO_FIXED:
			copy_bytes(&d, &s, rf);
			return;
		default:
			copy_mismatch(rf, "a value skade writes");
	}
}

/* bytes, fixed or string into bytes, fixed (of the same size) or string */
static void
copy_bytes(avro_value_t *d, const avro_value_t *s, const SkadeAvroFile *rf)
{
	const void *p = NULL;
	const char *str;
	size_t		n = 0;

	switch (avro_value_get_type(s))
	{
		case AVRO_STRING:
			avro_value_get_string(s, &str, &n);
			n = n > 0 ? n - 1 : 0;
			p = str;
			break;
		case AVRO_BYTES:
			avro_value_get_bytes(s, &p, &n);
			break;
		case AVRO_FIXED:
			avro_value_get_fixed(s, &p, &n);
			break;
		default:
			copy_mismatch(rf, "a string, bytes or fixed value");
	}
	switch (avro_value_get_type(d))
	{
		case AVRO_STRING:
			check_text(rf, p, n, "a string value");
			avro_value_set_string_len(d, pnstrdup(p, n), n + 1);
			break;
		case AVRO_FIXED:
			if (avro_value_set_fixed(d, (void *) p, n) != 0)
				copy_mismatch(rf, "a fixed value of the partition type's size");
			break;
		default:
			avro_value_set_bytes(d, (void *) p, n);
	}
}

static void
copy_mismatch(const SkadeAvroFile *rf, const char *expected)
{
	ereport(ERROR,
			(errcode(ERRCODE_SKADE_INVALID_FILE),
			 errmsg("Avro file \"%s\" has a value of another type where %s belongs",
					rf->location, expected),
			 errhint("The file does not follow the Iceberg manifest schema.")));
}
