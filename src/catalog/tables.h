/*-------------------------------------------------------------------------
 *
 * tables.h
 *	  The catalog's tables and namespaces for C callers (tables.c).
 *
 * IDENTIFICATION
 *	  src/catalog/tables.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_TABLES_H
#define SKADE_TABLES_H

#include "catalog/catalog_store.h"

extern void SkadeCheckTableIdent(const char *ns, const char *name);
extern bool SkadeLookupTable(const char *catalog, const char *ns, const char *name,
							 StoreTable *t);
extern struct varlena *SkadeLoadTablePinned(const char *catalog, const char *ns,
											const char *name, bool refs,
											const char **location);
extern const char *SkadeRequireMetadataLocation(const char *ns, const char *name,
												const StoreTable *t);
extern int64 SkadeCommitTable(const char *catalog, const char *ns, const char *name,
							  const char *expected, const char *location);
extern int64 SkadeInsertTable(const char *catalog, const char *ns, const char *name,
							  const char *location, const char *op);
extern int64 SkadeCasTable(const char *catalog, const char *ns, const char *name,
						   const char *expected, const char *location);
extern void SkadeRequireNamespace(const char *catalog, const char *ns);
pg_noreturn extern void SkadeReportMissingNamespace(const char *catalog, const char *ns);
pg_noreturn extern void SkadeReportMissingTable(const char *catalog, const char *ns,
												const char *name);

#endif							/* SKADE_TABLES_H */
