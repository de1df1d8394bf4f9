/*-------------------------------------------------------------------------
 *
 * snappy_block.c
 *	  Decompress one block of an Avro file written with the "snappy" codec:
 *	  the snappy-compressed bytes, then the CRC-32 (big-endian) of the
 *	  uncompressed bytes.  The only file that calls libsnappy.
 *
 * The stream is validated (without decompressing) and the uncompressed
 * length it declares checked against the caller's limit before anything is
 * allocated, and the output is checked
 * against the CRC, so neither a "snappy bomb" nor a corrupt block gets
 * past here.  libsnappy allocates nothing we keep: the output goes into
 * the caller's StringInfo (palloc), so an ERROR leaks nothing.
 *
 * This file knows nothing about Iceberg; see avro_container.c.
 *
 * IDENTIFICATION
 *	  src/util/snappy_block.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include <snappy-c.h>

#include "util/gzip.h"
#include "util/skade_limits.h"
#include "util/snappy_block.h"

/*
 * SkadeSnappyBlock
 *		Append the uncompressed bytes of the snappy block buf (len bytes,
 *		CRC included) to out, which must not grow past max_out bytes in all
 *		(54000, with limit_hint as the hint).  A corrupt block is 22SK1.
 *		"what" names the block in messages.
 */
void
SkadeSnappyBlock(const char *buf, size_t len, StringInfo out, size_t max_out,
				 const char *what, const char *limit_hint)
{
	size_t		ulen;
	size_t		got;
	uint32		crc;
	const unsigned char *c;

	if (len < 4 ||
		snappy_validate_compressed_buffer(buf, len - 4) != SNAPPY_OK ||
		snappy_uncompressed_length(buf, len - 4, &ulen) != SNAPPY_OK)
		ereport(ERROR,
				(errcode(ERRCODE_SKADE_INVALID_FILE),
				 errmsg("could not decompress %s", what),
				 errdetail("It is not a snappy block.")));
	if (ulen > max_out || (size_t) out->len > max_out - ulen)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("%s is too large once decompressed", what),
				 errdetail("It declares %zu bytes; the file's decompressed blocks may have at most %zu.",
						   ulen, max_out),
				 errhint("%s", limit_hint)));
	enlargeStringInfo(out, (int) ulen);
	got = ulen;
	if (snappy_uncompress(buf, len - 4, out->data + out->len, &got) != SNAPPY_OK ||
		got != ulen)
		ereport(ERROR,
				(errcode(ERRCODE_SKADE_INVALID_FILE),
				 errmsg("could not decompress %s", what),
				 errdetail("Its snappy stream is corrupt.")));
	c = (const unsigned char *) buf + len - 4;
	crc = ((uint32) c[0] << 24) | ((uint32) c[1] << 16) | ((uint32) c[2] << 8) | c[3];
	if (crc != SkadeCrc32(out->data + out->len, ulen))
		ereport(ERROR,
				(errcode(ERRCODE_SKADE_INVALID_FILE),
				 errmsg("could not decompress %s", what),
				 errdetail("Its CRC-32 does not match its content.")));
	out->len += (int) ulen;
	out->data[out->len] = '\0';
}
