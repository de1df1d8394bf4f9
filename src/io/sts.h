/*-------------------------------------------------------------------------
 *
 * sts.h
 *	  Vended credentials: STS AssumeRole scoped to a table's location,
 *	  cached per process (see sts.c).
 *
 * IDENTIFICATION
 *	  src/io/sts.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_STS_H
#define SKADE_STS_H

#include "io/object_store.h"

typedef struct SkadeVended
{
	char	   *access_key;
	char	   *secret_key;
	char	   *session_token;
	int64		expires_at_ms;	/* since the Unix epoch, as STS said */
} SkadeVended;

extern bool SkadeVendCredentials(const SkadeObjectPrefix *p, bool write, SkadeVended *out);
extern void SkadeVendedForget(void);

#endif							/* SKADE_STS_H */
