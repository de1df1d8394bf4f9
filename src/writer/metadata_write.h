/*-------------------------------------------------------------------------
 *
 * metadata_write.h
 *	  Writing table metadata files (see metadata_write.c).
 *
 * IDENTIFICATION
 *	  src/writer/metadata_write.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_METADATA_WRITE_H
#define SKADE_METADATA_WRITE_H

#include "fmgr.h"
#include "utils/jsonb.h"

#include "io/route.h"

extern bool SkadeMetadataFileName(const char *location, bool *gzip);
extern void SkadeMetadataWriteArgs(FunctionCallInfo fcinfo, char **location, Jsonb **metadata,
								   SkadeRoute *route, bool *gzip);
extern char *SkadeNextMetadataLocation(const char *previous, const char *table_location,
									   const char *metadata_path, const char *codec, bool *gzip);
extern char *SkadeMetadataWrite(const SkadeRoute *route, const char *location, const char *text,
								Size len, bool gzip);

#endif							/* SKADE_METADATA_WRITE_H */
