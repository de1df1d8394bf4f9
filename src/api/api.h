/*-------------------------------------------------------------------------
 *
 * api.h
 *	  Helpers shared by the SQL-callable catalog functions.
 *
 * IDENTIFICATION
 *	  src/api/api.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_API_H
#define SKADE_API_H

#include "catalog/catalog_store.h"
#include "util/pg_compat.h"
#include "datatype/timestamp.h"
#include "fmgr.h"

extern bool SkadeLookupTable(const char *catalog, const char *ns, const char *name,
							 StoreTable *t);
extern int	SkadeSnapshotsMode(const char *mode);
extern struct varlena *SkadeLoadTablePinned(const char *catalog, const char *ns,
											const char *name, bool refs,
											const char **location);
extern void SkadeTableArgs(FunctionCallInfo fcinfo, int catalog_argno, const char **catalog,
						   char **ns, char **name, StoreTable *t);
extern const char *SkadeRequireMetadataLocation(const char *ns, const char *name,
												const StoreTable *t);
extern TimestampTz SkadeMsToTimestamptz(int64 ms);
extern void SkadeRequireNamespace(const char *catalog, const char *ns);
pg_noreturn extern void SkadeReportMissingNamespace(const char *catalog, const char *ns);
pg_noreturn extern void SkadeReportMissingTable(const char *catalog, const char *ns,
									const char *name);
extern int64 SkadeCommitTable(const char *catalog, const char *ns, const char *name,
							  const char *expected, const char *location);

#endif							/* SKADE_API_H */
