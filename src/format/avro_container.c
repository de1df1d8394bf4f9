/*-------------------------------------------------------------------------
 *
 * avro_container.c
 *	  Parse an Avro object container file (an Iceberg manifest list or
 *	  manifest) and decompress its blocks, within bounds, before any of it
 *	  reaches libavro-c (avro_reader.c) or skade's own record decoder
 *	  (avro_decode.c).
 *
 * libavro-c's own container reader trusts the file: it inflates a deflate
 * block into as much memory as the block expands to (a 1 MB file can ask
 * for gigabytes), ignores a codec's failure (a corrupt block is then read
 * from the previous block's bytes), and takes a block's record count at
 * its word.  So skade reads the container itself, and hands libavro-c
 * (avro_reader.c), or its own decoder (avro_decode.c), only decoded block
 * bytes to read records from:
 *   - the header (magic, metadata map, sync marker) is parsed with bounds
 *     on every length; the codec must be null, deflate or snappy
 *     (zstandard and others are feature_not_supported);
 *   - the writer schema is validated and compiled (avro_schema.c) before
 *     anything else;
 *   - each block's count and size must be non-negative and fit the file,
 *     and the block must end with the header's sync marker;
 *   - blocks are decompressed here (zlib through gzip.c, libsnappy through
 *     snappy_block.c, checking snappy's CRC), and all of them together may
 *     decode to at most skade.max_manifest_size bytes (54000 beyond), a
 *     limit enforced while inflating, so a bomb stops there;
 *   - a block may claim no more records than its decoded bytes can hold
 *     (the schema's smallest record size), and a block of no records holds
 *     no bytes.
 * Malformed input is 22SK1 naming the file and the block.
 *
 * Memory: everything is palloc'd in the caller's memory context; the
 * decoded bytes of all blocks are one buffer.
 *
 * IDENTIFICATION
 *	  src/format/avro_container.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "format/avro_container.h"
#include "format/avro_schema.h"
#include "util/guc.h"
#include "util/gzip.h"
#include "util/skade_limits.h"
#include "util/snappy_block.h"

#define AVRO_SYNC_SIZE	16

/* one header metadata entry */
typedef struct AvroMeta
{
	char	   *key;
	char	   *value;			/* NUL-terminated copy */
	size_t		len;			/* bytes in value (it may hold NULs) */
} AvroMeta;

static const char *parse_header(SkadeAvroContainer *c, const char *p, const char *end,
								char *sync);
static void decode_blocks(SkadeAvroContainer *c, const char *p, const char *end,
						  const char *sync);
static const char *block_what(const SkadeAvroContainer *c, StringInfo buf);
static void decode_block(SkadeAvroContainer *c, const char *data, int64 size,
						 const char *what);
static bool read_long(const char **p, const char *end, int64 *out);
static const AvroMeta *find_meta(const SkadeAvroContainer *c, const char *key);
pg_noreturn static void container_error(const SkadeAvroContainer *c, const char *msg,
							const char *detail);

/*
 * SkadeAvroContainerDecode
 *		Parse the Avro file bytes (len bytes, read from location), validate
 *		its writer schema and decode its blocks.
 */
SkadeAvroContainer *
SkadeAvroContainerDecode(const char *location, const char *bytes, size_t len)
{
	SkadeAvroContainer *c = palloc0(sizeof(SkadeAvroContainer));
	char		sync[AVRO_SYNC_SIZE];
	const char *p;
	const AvroMeta *schema;

	c->location = location;
	p = parse_header(c, bytes, bytes + len, sync);
	schema = find_meta(c, "avro.schema");
	if (schema == NULL)
		container_error(c, "has no writer schema", "Its header lacks \"avro.schema\".");
	c->schema = schema->value;
	c->schema_len = schema->len;
	c->compiled = SkadeAvroSchemaGet(schema->value, schema->len, location);
	c->min_record_size = c->compiled->min_record_size;
	decode_blocks(c, p, bytes + len, sync);
	return c;
}

/*
 * SkadeAvroContainerMeta
 *		A header metadata value (e.g. "format-version", "schema") as text,
 *		or NULL if absent; one that is not valid UTF-8 text is 22SK1.
 */
const char *
SkadeAvroContainerMeta(const SkadeAvroContainer *c, const char *key)
{
	const AvroMeta *m = find_meta(c, key);

	if (m == NULL)
		return NULL;
	if (m->len > (size_t) PG_INT32_MAX || !pg_verifymbstr(m->value, (int) m->len, true))
		container_error(c, psprintf("has a header value \"%s\" that is not text", key),
						"It is not valid UTF-8, or holds a NUL byte.");
	return m->value;
}

/* ---------------------------------------------------------------- header */

/*
 * The header: magic, a map<string, bytes> in blocks, the sync marker.
 * Returns where the first block starts.
 */
static const char *
parse_header(SkadeAvroContainer *c, const char *p, const char *end, char *sync)
{
	int64		count;

	if (end - p < 4 || memcmp(p, "Obj\001", 4) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_SKADE_INVALID_FILE),
				 errmsg("\"%s\" is not an Avro object container file", c->location),
				 errdetail("It does not start with the Avro magic bytes.")));
	p += 4;
	for (;;)
	{
		if (!read_long(&p, end, &count))
			goto truncated;
		if (count == 0)
			break;
		if (count < 0)
		{
			int64		blocksize;

			count = -count;
			if (!read_long(&p, end, &blocksize))
				goto truncated;
		}
		while (count-- > 0)
		{
			int64		klen,
						vlen;
			AvroMeta   *m = palloc(sizeof(AvroMeta));

			if (!read_long(&p, end, &klen) || klen < 0 || klen > end - p)
				goto truncated;
			m->key = pnstrdup(p, klen);
			p += klen;
			if (!read_long(&p, end, &vlen) || vlen < 0 || vlen > end - p)
				goto truncated;
			m->value = palloc(vlen + 1);
			memcpy(m->value, p, vlen);
			m->value[vlen] = '\0';
			m->len = vlen;
			p += vlen;
			c->meta = lappend(c->meta, m);
		}
	}
	if (end - p < AVRO_SYNC_SIZE)
		goto truncated;
	memcpy(sync, p, AVRO_SYNC_SIZE);
	p += AVRO_SYNC_SIZE;

	c->codec = SkadeAvroContainerMeta(c, "avro.codec");
	if (c->codec == NULL || c->codec[0] == '\0')
		c->codec = "null";
	if (strcmp(c->codec, "null") != 0 && strcmp(c->codec, "deflate") != 0 &&
		strcmp(c->codec, "snappy") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("Avro codec \"%s\" of \"%s\" is not supported", c->codec, c->location),
				 errdetail("skade reads the codecs null, deflate and snappy."),
				 errhint("Write manifests with one of those codecs (Iceberg's "
						 "write.avro.compression-codec), e.g. gzip, which is deflate.")));
	return p;

truncated:
	ereport(ERROR,
			(errcode(ERRCODE_SKADE_INVALID_FILE),
			 errmsg("Avro file \"%s\" has a truncated or corrupt header", c->location)));
	pg_unreachable();
}

/* ---------------------------------------------------------------- blocks */

/* Every block to the end of the file: count, size, data, sync marker. */
static void
decode_blocks(SkadeAvroContainer *c, const char *p, const char *end, const char *sync)
{
	int			cap = 8;
	StringInfoData what_buf;

	initStringInfo(&what_buf);
	c->decoded = makeStringInfo();
	c->blocks = palloc(sizeof(SkadeAvroBlock) * cap);
	while (p < end)
	{
		int64		count;
		int64		size;
		int			before = c->decoded->len;
		const char *what = block_what(c, &what_buf);
		SkadeAvroBlock *b;

		if (!read_long(&p, end, &count) || !read_long(&p, end, &size))
			container_error(c, psprintf("is truncated in the header of its block %d", c->nblocks + 1),
							NULL);
		if (count < 0 || size < 0 || size > end - p)
			container_error(c, psprintf("has a block %d of impossible size", c->nblocks + 1),
							psprintf("It claims " INT64_FORMAT " records in " INT64_FORMAT " bytes; "
									 "%lld bytes are left in the file.",
									 count, size, (long long) (end - p)));
		decode_block(c, p, size, what);
		p += size;
		if (end - p < AVRO_SYNC_SIZE || memcmp(p, sync, AVRO_SYNC_SIZE) != 0)
			container_error(c, psprintf("has no sync marker after its block %d", c->nblocks + 1),
							"The file is truncated, or its blocks are corrupt.");
		p += AVRO_SYNC_SIZE;

		/* a block can hold no more records than its bytes can encode */
		size = c->decoded->len - before;
		if (count > size / c->min_record_size || (count == 0 && size > 0))
			container_error(c, psprintf("has a block %d whose record count does not fit its size",
										c->nblocks + 1),
							psprintf("It claims " INT64_FORMAT " records in " INT64_FORMAT
									 " decoded bytes; a record takes at least " INT64_FORMAT ".",
									 count, size, c->min_record_size));
		if (c->nblocks == cap)
		{
			cap *= 2;
			c->blocks = repalloc(c->blocks, sizeof(SkadeAvroBlock) * cap);
		}
		b = &c->blocks[c->nblocks++];
		b->count = count;
		b->off = before;
		b->len = size;
		c->records += count;
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * "block N of Avro file \"location\"" (N the next block's number) in buf:
 * what a block's errors name, made for every block without a printf
 */
static const char *
block_what(const SkadeAvroContainer *c, StringInfo buf)
{
	char		num[12];

	pg_ltoa(c->nblocks + 1, num);
	resetStringInfo(buf);
	appendStringInfoString(buf, "block ");
	appendStringInfoString(buf, num);
	appendStringInfoString(buf, " of Avro file \"");
	appendStringInfoString(buf, c->location);
	appendStringInfoChar(buf, '"');
	return buf->data;
}

/* Append one block's decoded bytes to c->decoded, within the limit. */
static void
decode_block(SkadeAvroContainer *c, const char *data, int64 size, const char *what)
{
	size_t		max_out = (size_t) skade_max_manifest_size;
	const char *hint = "Raise skade.max_manifest_size if the file is legitimate.";

	if (strcmp(c->codec, "deflate") == 0)
		SkadeInflateRaw(data, size, c->decoded, max_out, what, hint);
	else if (strcmp(c->codec, "snappy") == 0)
		SkadeSnappyBlock(data, size, c->decoded, max_out, what, hint);
	else
	{
		if ((size_t) size > max_out - Min(max_out, (size_t) c->decoded->len))
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("%s is too large", what),
					 errdetail("The file's blocks exceed %zu bytes.", max_out),
					 errhint("%s", hint)));
		appendBinaryStringInfo(c->decoded, data, (int) size);
	}
}

/* ---------------------------------------------------------------- helpers */

/* an Avro long: zig-zag varint of at most 10 bytes */
static bool
read_long(const char **p, const char *end, int64 *out)
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

static const AvroMeta *
find_meta(const SkadeAvroContainer *c, const char *key)
{
	ListCell   *lc;

	foreach(lc, c->meta)
	{
		const AvroMeta *m = lfirst(lc);

		if (strcmp(m->key, key) == 0)
			return m;
	}
	return NULL;
}

static void
container_error(const SkadeAvroContainer *c, const char *msg, const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_SKADE_INVALID_FILE),
			 errmsg("Avro file \"%s\" %s", c->location, msg),
			 detail ? errdetail("%s", detail) : 0,
			 errhint("The file may be truncated or corrupt.")));
}
