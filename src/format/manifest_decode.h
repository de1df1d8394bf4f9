/*-------------------------------------------------------------------------
 *
 * manifest_decode.h
 *	  An Iceberg manifest decoded into a SkadeManifest blob (see
 *	  manifest_decode.c).
 *
 * IDENTIFICATION
 *	  src/format/manifest_decode.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_MANIFEST_DECODE_H
#define SKADE_MANIFEST_DECODE_H

#include "lib/stringinfo.h"

extern void *SkadeManifestDecode(const char *path, const StringInfoData *bytes,
								 int64 expected_length, Size *size);

#endif							/* SKADE_MANIFEST_DECODE_H */
