/*-------------------------------------------------------------------------
 *
 * gzip.c
 *	  Inflate gzip buffers for skade.  The only file that calls zlib.
 *
 * Iceberg writers may store table metadata gzip-compressed
 * ("*.gz.metadata.json").  This file turns such a buffer into plain bytes,
 * refusing to produce more than a caller-given number of bytes (a gzip bomb
 * stops there) and reporting a corrupt or truncated stream.  zlib allocates
 * through palloc/pfree in the caller's memory context, so an ERROR anywhere
 * releases its state with that context; nothing needs explicit cleanup.
 *
 * This file knows nothing about JSON or Iceberg; see metadata_json.c.
 *
 * IDENTIFICATION
 *	  src/gzip.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <zlib.h>

#include "gzip.h"

/* windowBits 15 + 16: expect a gzip header and trailer */
#define SKADE_GZIP_WINDOW_BITS	(15 + 16)

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
 *		is an error (54000); so is a corrupt or truncated stream (XX001).
 *		"what" names the input (a location) in error messages.
 */
StringInfo
SkadeGunzip(const char *buf, size_t len, size_t max_out, const char *what)
{
	z_stream	zs;
	StringInfo	out = makeStringInfo();
	int			rc;

	memset(&zs, 0, sizeof(zs));
	zs.zalloc = gzip_zalloc;
	zs.zfree = gzip_zfree;
	zs.next_in = (Bytef *) buf;
	zs.avail_in = len;
	if (inflateInit2(&zs, SKADE_GZIP_WINDOW_BITS) != Z_OK)
		elog(ERROR, "could not initialize zlib: %s", zs.msg ? zs.msg : "unknown error");

	for (;;)
	{
		if (out->maxlen - out->len < 65536)
			enlargeStringInfo(out, 65536);
		zs.next_out = (Bytef *) out->data + out->len;
		zs.avail_out = out->maxlen - out->len - 1;
		rc = inflate(&zs, Z_NO_FLUSH);
		out->len = (char *) zs.next_out - out->data;
		if ((size_t) out->len > max_out)
		{
			inflateEnd(&zs);
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("metadata file \"%s\" is too large once decompressed", what),
					 errdetail("It inflates to more than %zu bytes.", max_out),
					 errhint("Raise skade.max_metadata_size if the file is legitimate.")));
		}
		if (rc == Z_STREAM_END)
			break;
		if (rc == Z_OK)
			continue;
		if (rc == Z_BUF_ERROR && zs.avail_in == 0)
		{
			inflateEnd(&zs);
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("gzip metadata file \"%s\" is truncated", what)));
		}
		inflateEnd(&zs);
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("could not decompress gzip metadata file \"%s\"", what),
				 errdetail_internal("zlib: %s", zs.msg ? zs.msg : "unknown error")));
	}
	if (zs.avail_in != 0)
	{
		inflateEnd(&zs);
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("gzip metadata file \"%s\" has trailing data", what)));
	}
	inflateEnd(&zs);
	out->data[out->len] = '\0';
	return out;
}

static voidpf
gzip_zalloc(voidpf opaque, uInt items, uInt size)
{
	return palloc((Size) items * size);
}

static void
gzip_zfree(voidpf opaque, voidpf address)
{
	pfree(address);
}
