/*-------------------------------------------------------------------------
 *
 * gzip.h
 *	  Inflate gzip and raw deflate buffers, gzip and raw-deflate them, CRC-32 (wrapper for zlib).
 *
 * IDENTIFICATION
 *	  src/util/gzip.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_GZIP_H
#define SKADE_GZIP_H

#include "lib/stringinfo.h"

extern bool SkadeIsGzip(const char *buf, size_t len);
extern StringInfo SkadeGunzip(const char *buf, size_t len, size_t max_out,
							  const char *what);
extern void SkadeInflateRaw(const char *buf, size_t len, StringInfo out, size_t max_out,
							const char *what, const char *limit_hint);
extern uint32 SkadeCrc32(const char *buf, size_t len);
extern StringInfo SkadeGzip(const char *buf, size_t len);
extern StringInfo SkadeGzipLevel(const char *buf, size_t len, int level);
extern void SkadeDeflateRawAppend(const char *buf, size_t len, int level, StringInfo out);

#endif							/* SKADE_GZIP_H */
