/*-------------------------------------------------------------------------
 *
 * file_access.h
 *	  Confined reading of metadata files named by a metadata location.
 *
 * IDENTIFICATION
 *	  src/file_access.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_FILE_ACCESS_H
#define SKADE_FILE_ACCESS_H

#include "lib/stringinfo.h"

/* Why a location could not be read (SkadeTryReadLocation) */
typedef enum SkadeReadStatus
{
	SKADE_READ_OK,
	SKADE_READ_UNSUPPORTED,		/* a scheme other than file (s3://, ...) */
	SKADE_READ_DENIED,			/* outside skade.allowed_roots, or none set */
	SKADE_READ_MISSING,			/* no such file */
	SKADE_READ_FAILED			/* anything else; the error was reported */
} SkadeReadStatus;

extern StringInfo SkadeReadLocation(const char *location);
extern SkadeReadStatus SkadeProbeLocation(const char *location);

#endif							/* SKADE_FILE_ACCESS_H */
