/*-------------------------------------------------------------------------
 *
 * avro_out.c
 *	  The Avro object container around records encoded elsewhere
 *	  (avro_reader.c's writer): magic, header metadata, a random sync
 *	  marker, deflated blocks -- as Iceberg's Java writes manifests and
 *	  manifest lists.
 *
 * Invariants: a block holds at least one record; the caller flushes a
 * block once it reaches SKADE_AVRO_BLOCK_BYTES and at the end; the buffer
 * is the whole file, handed to SkadeCreateFile by the caller.
 *
 * Locking: none (backend-local memory).
 *
 * IDENTIFICATION
 *	  src/writer/avro_out.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/gzip.h"
#include "writer/avro_out.h"

static void avro_long(StringInfo s, int64 v);
static void avro_bytes(StringInfo s, const char *p, size_t len);

/* magic, the header metadata (nkv key/value pairs), a random sync marker */
void
SkadeAvroOutBegin(SkadeAvroOut *o, const char **kv, int nkv)
{
	int			i;

	o->buf = makeStringInfo();
	o->block = makeStringInfo();
	o->nrecords = 0;
	o->level = 9;
	if (!pg_strong_random(o->sync, sizeof(o->sync)))
		elog(ERROR, "could not generate a random sync marker");
	appendBinaryStringInfo(o->buf, "Obj\001", 4);
	avro_long(o->buf, nkv);
	for (i = 0; i < nkv; i++)
	{
		avro_bytes(o->buf, kv[2 * i], strlen(kv[2 * i]));
		avro_bytes(o->buf, kv[2 * i + 1], strlen(kv[2 * i + 1]));
	}
	avro_long(o->buf, 0);
	appendBinaryStringInfo(o->buf, o->sync, sizeof(o->sync));
}

/* the records of the current block, deflated, as a block */
void
SkadeAvroOutFlush(SkadeAvroOut *o)
{
	StringInfoData z;

	if (o->nrecords == 0)
		return;
	initStringInfo(&z);
	SkadeDeflateRawAppend(o->block->data, o->block->len, o->level, &z);
	avro_long(o->buf, o->nrecords);
	avro_long(o->buf, z.len);
	appendBinaryStringInfo(o->buf, z.data, z.len);
	appendBinaryStringInfo(o->buf, o->sync, sizeof(o->sync));
	pfree(z.data);
	resetStringInfo(o->block);
	o->nrecords = 0;
}

/* Avro's zig-zag varint */
static void
avro_long(StringInfo s, int64 v)
{
	uint64		n = ((uint64) v << 1) ^ (uint64) (v >> 63);

	while (n & ~UINT64CONST(0x7f))
	{
		appendStringInfoChar(s, (char) ((n & 0x7f) | 0x80));
		n >>= 7;
	}
	appendStringInfoChar(s, (char) n);
}

static void
avro_bytes(StringInfo s, const char *p, size_t len)
{
	avro_long(s, (int64) len);
	appendBinaryStringInfo(s, p, len);
}

/* a copy of len bytes that may hold NULs (not pnstrdup) */
char *
SkadeBytesDup(const char *p, size_t len)
{
	char	   *out = palloc(len + 1);

	memcpy(out, p, len);
	out[len] = '\0';
	return out;
}
