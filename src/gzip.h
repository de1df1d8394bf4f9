/*-------------------------------------------------------------------------
 *
 * gzip.h
 *	  Inflate gzip buffers (wrapper for zlib).
 *
 * IDENTIFICATION
 *	  src/gzip.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_GZIP_H
#define SKADE_GZIP_H

#include "lib/stringinfo.h"

extern bool SkadeIsGzip(const char *buf, size_t len);
extern StringInfo SkadeGunzip(const char *buf, size_t len, size_t max_out,
							  const char *what);

#endif							/* SKADE_GZIP_H */
