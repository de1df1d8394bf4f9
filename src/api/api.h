/*-------------------------------------------------------------------------
 *
 * api.h
 *	  Helpers shared by the SQL-callable catalog functions (the catalog
 *	  lookups they share with the REST server: catalog/tables.h).
 *
 * IDENTIFICATION
 *	  src/api/api.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_API_H
#define SKADE_API_H

#include "catalog/tables.h"
#include "util/pg_compat.h"
#include "datatype/timestamp.h"
#include "fmgr.h"

extern int	SkadeSnapshotsMode(const char *mode);
extern void SkadeTableArgs(FunctionCallInfo fcinfo, int catalog_argno, const char **catalog,
						   char **ns, char **name, StoreTable *t);
extern TimestampTz SkadeMsToTimestamptz(int64 ms);

#endif							/* SKADE_API_H */
