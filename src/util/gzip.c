/*-------------------------------------------------------------------------
 *
 * gzip.c
 *	  Inflate gzip and raw deflate buffers, gzip (and raw-deflate) buffers
 *	  skade writes, and compute CRC-32, for skade.  The only file that calls zlib.
 *
 * Iceberg writers may store table metadata gzip-compressed
 * ("*.gz.metadata.json"), and Avro files (manifest lists, manifests) in
 * "deflate" blocks, which are raw deflate streams.  This file turns such a
 * buffer into plain bytes, refusing to produce more than a caller-given
 * number of bytes (a bomb stops there, after at most that many bytes of
 * output) and reporting a corrupt or truncated stream.  zlib allocates
 * through palloc/pfree in the caller's memory context, so an ERROR (or a
 * cancel: long inflates check for interrupts) anywhere releases its state
 * with that context; nothing needs explicit cleanup.  The exception is the
 * raw-deflate stream: a manifest has a block per few records, so one
 * stream is kept for the backend's life in its own context ("skade
 * inflate") and reset for each block (inflateReset); one an ERROR left in
 * use is dropped with that context's contents and made again.
 *
 * This file knows nothing about JSON, Avro or Iceberg.
 *
 * IDENTIFICATION
 *	  src/util/gzip.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include <zlib.h>

#include "miscadmin.h"
#include "utils/memutils.h"

#include "util/gzip.h"
#include "util/skade_limits.h"

/* windowBits 15 + 16: expect a gzip header and trailer */
#define SKADE_GZIP_WINDOW_BITS	(15 + 16)
/* windowBits -15: a raw deflate stream (Avro's "deflate" codec) */
#define SKADE_RAW_WINDOW_BITS	(-15)
#define SKADE_INFLATE_CHUNK		65536

typedef enum InflateStatus
{
	INFLATE_OK,
	INFLATE_TOO_LARGE,
	INFLATE_TRUNCATED,
	INFLATE_CORRUPT,
	INFLATE_TRAILING
} InflateStatus;

/* the raw-deflate stream reused between Avro blocks */
static MemoryContext raw_cxt = NULL;
static z_stream raw_zs;
static bool raw_ready = false;	/* raw_zs is initialised */
static bool raw_busy = false;	/* raw_zs is in use (an ERROR may leave it so) */

static InflateStatus inflate_into(const char *buf, size_t len, int window_bits,
								  StringInfo out, size_t max_out, char **zmsg);
static InflateStatus inflate_stream(z_stream *zs, const char *buf, size_t len,
									StringInfo out, size_t max_out, char **zmsg);
static z_stream *raw_stream(void);
static voidpf gzip_zalloc(voidpf opaque, uInt items, uInt size);
static void gzip_zfree(voidpf opaque, voidpf address);

/* Does buf start with the gzip magic bytes? */
bool
SkadeIsGzip(const char *buf, size_t len)
{
	return len >= 2 && (unsigned char) buf[0] == 0x1f && (unsigned char) buf[1] == 0x8b;
}

/*
 * SkadeGunzip
 *		Return the inflated contents of buf (len bytes) in a StringInfo
 *		allocated in CurrentMemoryContext.  More than max_out output bytes
 *		is an error (54000); so is a corrupt or truncated stream (22SK1).
 *		"what" names the input (a location) in error messages.
 */
StringInfo
SkadeGunzip(const char *buf, size_t len, size_t max_out, const char *what)
{
	StringInfo	out = makeStringInfo();
	char	   *zmsg = NULL;

	switch (inflate_into(buf, len, SKADE_GZIP_WINDOW_BITS, out, max_out, &zmsg))
	{
		case INFLATE_OK:
			return out;
		case INFLATE_TOO_LARGE:
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("metadata file \"%s\" is too large once decompressed", what),
					 errdetail("It inflates to more than %zu bytes.", max_out),
					 errhint("Raise skade.max_metadata_size if the file is legitimate.")));
			break;
		case INFLATE_TRUNCATED:
			ereport(ERROR,
					(errcode(ERRCODE_SKADE_INVALID_FILE),
					 errmsg("gzip metadata file \"%s\" is truncated", what)));
			break;
		case INFLATE_TRAILING:
			ereport(ERROR,
					(errcode(ERRCODE_SKADE_INVALID_FILE),
					 errmsg("gzip metadata file \"%s\" has trailing data", what)));
			break;
		case INFLATE_CORRUPT:
			ereport(ERROR,
					(errcode(ERRCODE_SKADE_INVALID_FILE),
					 errmsg("could not decompress gzip metadata file \"%s\"", what),
					 errdetail_internal("zlib: %s", zmsg ? zmsg : "unknown error")));
			break;
	}
	pg_unreachable();
}

/*
 * SkadeInflateRaw
 *		Append the inflated contents of the raw deflate stream buf (len
 *		bytes) to out, which must not grow past max_out bytes in all (54000,
 *		with limit_hint as the hint); a corrupt, truncated or over-long
 *		stream is 22SK1.  "what" names the input, e.g. "block 2 of Avro file
 *		\"...\"".
 */
void
SkadeInflateRaw(const char *buf, size_t len, StringInfo out, size_t max_out,
				const char *what, const char *limit_hint)
{
	char	   *zmsg = NULL;

	InflateStatus status = inflate_stream(raw_stream(), buf, len, out, max_out, &zmsg);

	raw_busy = false;
	switch (status)
	{
		case INFLATE_OK:
			return;
		case INFLATE_TOO_LARGE:
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("%s is too large once decompressed", what),
					 errdetail("The file's decompressed blocks exceed %zu bytes.", max_out),
					 errhint("%s", limit_hint)));
			break;
		case INFLATE_TRUNCATED:
			ereport(ERROR,
					(errcode(ERRCODE_SKADE_INVALID_FILE),
					 errmsg("%s is truncated", what),
					 errdetail("Its deflate stream ends early.")));
			break;
		case INFLATE_TRAILING:
			/* fastavro writes zlib's output minus its header and 3 of its 4 checksum bytes */
			return;
		case INFLATE_CORRUPT:
			ereport(ERROR,
					(errcode(ERRCODE_SKADE_INVALID_FILE),
					 errmsg("could not decompress %s", what),
					 errdetail_internal("zlib: %s", zmsg ? zmsg : "unknown error")));
			break;
	}
}

/* The CRC-32 (ISO 3309, as java.util.zip.CRC32) of buf. */
uint32
SkadeCrc32(const char *buf, size_t len)
{
	uLong		crc = crc32(0L, Z_NULL, 0);

	while (len > 0)
	{
		uInt		n = (uInt) Min(len, (size_t) PG_INT32_MAX);

		crc = crc32(crc, (const Bytef *) buf, n);
		buf += n;
		len -= n;
	}
	return (uint32) crc;
}

/*
 * Inflate buf into out (appending) until the stream ends; never more than
 * max_out bytes in out.  On INFLATE_CORRUPT, *zmsg is zlib's message.
 */
static InflateStatus
inflate_into(const char *buf, size_t len, int window_bits, StringInfo out,
			 size_t max_out, char **zmsg)
{
	z_stream	zs;
	InflateStatus status;

	memset(&zs, 0, sizeof(zs));
	zs.zalloc = gzip_zalloc;
	zs.zfree = gzip_zfree;
	if (inflateInit2(&zs, window_bits) != Z_OK)
		elog(ERROR, "could not initialize zlib: %s", zs.msg ? zs.msg : "unknown error");
	status = inflate_stream(&zs, buf, len, out, max_out, zmsg);
	inflateEnd(&zs);
	return status;
}

/*
 * The backend's raw-deflate stream, reset, marked busy (the caller clears
 * raw_busy when done); made afresh if an ERROR left it busy.
 */
static z_stream *
raw_stream(void)
{
	if (raw_busy || raw_cxt == NULL)
	{
		if (raw_cxt == NULL)
			raw_cxt = AllocSetContextCreate(TopMemoryContext, "skade inflate",
											ALLOCSET_DEFAULT_SIZES);
		MemoryContextReset(raw_cxt);	/* what a stream left in use held */
		raw_ready = false;
	}
	if (!raw_ready)
	{
		memset(&raw_zs, 0, sizeof(raw_zs));
		raw_zs.zalloc = gzip_zalloc;
		raw_zs.zfree = gzip_zfree;
		raw_zs.opaque = raw_cxt;
		if (inflateInit2(&raw_zs, SKADE_RAW_WINDOW_BITS) != Z_OK)
			elog(ERROR, "could not initialize zlib: %s",
				 raw_zs.msg ? raw_zs.msg : "unknown error");
		raw_ready = true;
	}
	else if (inflateReset(&raw_zs) != Z_OK)
		elog(ERROR, "could not reset zlib stream");
	raw_busy = true;
	return &raw_zs;
}

/*
 * Run the initialised stream zs over buf, appending to out until the
 * stream ends; never more than max_out bytes in out.  Z_FINISH: a stream
 * that ends within the first output chunk needs no window (zlib allocates
 * and fills none then).
 */
static InflateStatus
inflate_stream(z_stream *zs, const char *buf, size_t len, StringInfo out,
			   size_t max_out, char **zmsg)
{
	int			rc;
	InflateStatus status;

	if (len > (size_t) PG_UINT32_MAX)
		return INFLATE_TOO_LARGE;	/* no such input comes through the size caps */
	zs->next_in = (Bytef *) buf;
	zs->avail_in = (uInt) len;
	for (;;)
	{
		size_t		room;

		if ((size_t) out->len >= max_out)
		{
			/* full: one more byte would be too many (or the stream ends here) */
			char		probe;

			zs->next_out = (Bytef *) &probe;
			zs->avail_out = 1;
			rc = inflate(zs, Z_NO_FLUSH);
			if (zs->avail_out == 0)
			{
				status = INFLATE_TOO_LARGE;
				break;
			}
		}
		else
		{
			room = Min((size_t) SKADE_INFLATE_CHUNK, max_out - out->len);
			enlargeStringInfo(out, (int) room);
			zs->next_out = (Bytef *) out->data + out->len;
			zs->avail_out = (uInt) room;
			rc = inflate(zs, Z_FINISH);
			out->len = (char *) zs->next_out - out->data;
		}
		if (rc == Z_STREAM_END)
		{
			status = zs->avail_in != 0 ? INFLATE_TRAILING : INFLATE_OK;
			break;
		}
		/* no progress with room to write: the input ended early */
		if (rc == Z_BUF_ERROR && zs->avail_out != 0)
		{
			status = INFLATE_TRUNCATED;
			break;
		}
		if (rc != Z_OK && rc != Z_BUF_ERROR)
		{
			*zmsg = zs->msg ? pstrdup(zs->msg) : NULL;
			status = INFLATE_CORRUPT;
			break;
		}
		CHECK_FOR_INTERRUPTS();
	}
	out->data[out->len] = '\0';
	return status;
}

/* zlib's allocations: in opaque's memory context if set, else the current one */
static voidpf
gzip_zalloc(voidpf opaque, uInt items, uInt size)
{
	return opaque ? MemoryContextAlloc((MemoryContext) opaque, (Size) items * size)
		: palloc((Size) items * size);
}

static void
gzip_zfree(voidpf opaque, voidpf address)
{
	pfree(address);
}

/*
 * SkadeGzip
 *		buf (len bytes) as a gzip stream (default level), palloc'd: what
 *		Iceberg writers produce for write.metadata.compression-codec=gzip.
 */
StringInfo
SkadeGzip(const char *buf, size_t len)
{
	return SkadeGzipLevel(buf, len, Z_DEFAULT_COMPRESSION);
}

/*
 * SkadeGzipLevel
 *		SkadeGzip at a zlib level (1: fastest, for answers made per request).
 */
StringInfo
SkadeGzipLevel(const char *buf, size_t len, int level)
{
	z_stream	zs;
	StringInfo	out = makeStringInfo();
	int			rc;
	int			wbits = 15;

	if (len > (size_t) PG_UINT32_MAX)
		elog(ERROR, "skade: %zu bytes are too many to compress at once", len);
	memset(&zs, 0, sizeof(zs));
	zs.zalloc = gzip_zalloc;
	zs.zfree = gzip_zfree;
	/*
	 * + 16: a gzip header and trailer.  A window no larger than the input
	 * (at least 512 bytes) and memory to match: a small text (a REST answer's
	 * tail) is not worth zlib's 256 kB of state; any inflater reads it.
	 */
	while (wbits > 9 && ((size_t) 1 << (wbits - 1)) >= len)
		wbits--;
	if (deflateInit2(&zs, level, Z_DEFLATED, wbits + 16, Max(1, Min(8, wbits - 7)),
					 Z_DEFAULT_STRATEGY) != Z_OK)
		elog(ERROR, "could not initialize zlib: %s", zs.msg ? zs.msg : "unknown error");
	enlargeStringInfo(out, (int) deflateBound(&zs, (uLong) len));
	zs.next_in = (Bytef *) buf;
	zs.avail_in = (uInt) len;
	zs.next_out = (Bytef *) out->data;
	zs.avail_out = (uInt) (out->maxlen - 1);
	rc = deflate(&zs, Z_FINISH);
	if (rc != Z_STREAM_END)
		elog(ERROR, "could not gzip: %s", zs.msg ? zs.msg : "output buffer too small");
	out->len = (int) zs.total_out;
	out->data[out->len] = '\0';
	deflateEnd(&zs);
	return out;
}

/*
 * SkadeDeflateRawAppend
 *		buf (len bytes) as a raw deflate stream (no header: Avro's "deflate"
 *		codec) at zlib level level (Java's Avro writes manifests at 9),
 *		appended to out.
 */
void
SkadeDeflateRawAppend(const char *buf, size_t len, int level, StringInfo out)
{
	z_stream	zs;
	int			rc;
	uLong		bound;

	if (len > (size_t) PG_INT32_MAX / 2)
		elog(ERROR, "skade: %zu bytes are too many to compress at once", len);
	memset(&zs, 0, sizeof(zs));
	zs.zalloc = gzip_zalloc;
	zs.zfree = gzip_zfree;
	/* windowBits -15: raw deflate */
	if (deflateInit2(&zs, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		elog(ERROR, "could not initialize zlib: %s", zs.msg ? zs.msg : "unknown error");
	bound = deflateBound(&zs, (uLong) len);
	enlargeStringInfo(out, (int) bound);
	zs.next_in = (Bytef *) buf;
	zs.avail_in = (uInt) len;
	zs.next_out = (Bytef *) out->data + out->len;
	zs.avail_out = (uInt) (out->maxlen - out->len - 1);
	rc = deflate(&zs, Z_FINISH);
	if (rc != Z_STREAM_END)
	{
		deflateEnd(&zs);
		elog(ERROR, "could not deflate: %s", zs.msg ? zs.msg : "output buffer too small");
	}
	out->len += (int) zs.total_out;
	out->data[out->len] = '\0';
	deflateEnd(&zs);
}
