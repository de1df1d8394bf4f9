/*-------------------------------------------------------------------------
 *
 * snappy_block.h
 *	  Decompress Avro "snappy" blocks (wrapper for libsnappy).
 *
 * IDENTIFICATION
 *	  src/util/snappy_block.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_SNAPPY_BLOCK_H
#define SKADE_SNAPPY_BLOCK_H

#include "lib/stringinfo.h"

extern void SkadeSnappyBlock(const char *buf, size_t len, StringInfo out, size_t max_out,
							 const char *what, const char *limit_hint);

#endif							/* SKADE_SNAPPY_BLOCK_H */
