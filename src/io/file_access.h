/*-------------------------------------------------------------------------
 *
 * file_access.h
 *	  Confined reading of the files named by metadata locations and
 *	  manifest paths (see file_access.c).
 *
 * IDENTIFICATION
 *	  src/io/file_access.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_FILE_ACCESS_H
#define SKADE_FILE_ACCESS_H

#include "lib/stringinfo.h"

#include "io/object_store.h"

/* SkadeReadStatus: io/object_store.h (the object store answers probes too) */

extern StringInfo SkadeReadLocation(const SkadeRoute *route, const char *location,
									char **real_path);
extern SkadeReadStatus SkadeProbeLocation(const char *location);
extern bool SkadePathAllowed(const char *real_path);
extern void SkadeRefuseControlChars(const char *location);
extern char *SkadeLocalPath(const char *location);

#endif							/* SKADE_FILE_ACCESS_H */
