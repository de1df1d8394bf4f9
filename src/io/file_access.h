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

/* Why a location could not be read (SkadeProbeLocation) */
typedef enum SkadeReadStatus
{
	SKADE_READ_OK,
	SKADE_READ_UNSUPPORTED,		/* a scheme other than file (s3://, ...) */
	SKADE_READ_DENIED,			/* outside skade.allowed_roots, or none set */
	SKADE_READ_MISSING,			/* no such file (inside the roots) */
	SKADE_READ_FAILED			/* anything else */
} SkadeReadStatus;

extern StringInfo SkadeReadLocation(const char *location, char **real_path);
extern SkadeReadStatus SkadeProbeLocation(const char *location);
extern bool SkadePathAllowed(const char *real_path);
extern void SkadeRefuseControlChars(const char *location);
extern char *SkadeLocalPath(const char *location);

#endif							/* SKADE_FILE_ACCESS_H */
