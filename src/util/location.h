/*-------------------------------------------------------------------------
 *
 * location.h
 *	  s3:// locations, roots settings and S3 endpoints (location.c).
 *
 * IDENTIFICATION
 *	  src/util/location.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_LOCATION_H
#define SKADE_LOCATION_H

#include "nodes/pg_list.h"

/* a parsed s3:// location */
typedef struct S3Location
{
	char	   *bucket;
	char	   *key;
	char	   *canonical;		/* s3://bucket/key */
} S3Location;

extern bool SkadeIsObjectLocation(const char *location);
extern bool SkadeS3Parse(const char *location, S3Location *o, const char *verb, bool report,
						 bool prefix);
extern bool SkadeS3PrefixContains(const char *prefix, const S3Location *o);
extern bool SkadeSplitRoots(const char *setting, List **dirs, List **prefixes);
extern bool SkadeEndpointValid(const char *text);

#endif							/* SKADE_LOCATION_H */
