/*-------------------------------------------------------------------------
 *
 * avro_out.h
 *	  Avro object container files written (see avro_out.c).
 *
 * IDENTIFICATION
 *	  src/writer/avro_out.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_AVRO_OUT_H
#define SKADE_AVRO_OUT_H

#include "lib/stringinfo.h"

/* an Avro block ends once its records reach this many bytes, uncompressed */
#define SKADE_AVRO_BLOCK_BYTES	(64 * 1024)

/* an Avro object container being written */
typedef struct SkadeAvroOut
{
	StringInfo	buf;			/* the file so far */
	StringInfo	block;			/* records of the current block, encoded */
	int64		nrecords;		/* in block */
	int			level;			/* zlib level of the blocks (Begin: 9, Java's) */
	char		sync[16];
} SkadeAvroOut;

extern void SkadeAvroOutBegin(SkadeAvroOut *o, const char **kv, int nkv);
extern void SkadeAvroOutFlush(SkadeAvroOut *o);
extern char *SkadeBytesDup(const char *p, size_t len);

#endif							/* SKADE_AVRO_OUT_H */
