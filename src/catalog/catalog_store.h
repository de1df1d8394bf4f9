/*-------------------------------------------------------------------------
 *
 * catalog_store.h
 *	  The only code that knows the columns of the JDBC catalog tables.
 *
 * IDENTIFICATION
 *	  src/catalog/catalog_store.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_CATALOG_STORE_H
#define SKADE_CATALOG_STORE_H

#include "nodes/pg_list.h"
#include "utils/array.h"
#include "utils/jsonb.h"

#include "cache/pointer_mirror.h"

/* StoreTable, one iceberg_tables row: cache/pointer_mirror.h (the mirror keeps them) */

struct MirrorScope;
extern const struct MirrorScope *StoreAttachedScope(void);
extern void StoreRequireAttached(void);

/* namespaces */
extern bool StoreCatalogExists(const char *catalog);
extern bool StoreNamespaceExists(const char *catalog, const char *ns);
extern bool StoreNamespaceHasObjects(const char *catalog, const char *ns);
extern bool StoreNamespaceHasChildren(const char *catalog, const char *ns);
extern List *StoreListNamespaces(const char *catalog, const char *parent);
extern Jsonb *StoreNamespaceProperties(const char *catalog, const char *ns);
extern void StoreInsertProperties(const char *catalog, const char *ns, Jsonb *props);
extern List *StoreUpsertProperties(const char *catalog, const char *ns, Jsonb *props);
extern List *StoreRemoveProperties(const char *catalog, const char *ns, ArrayType *keys);
extern void StoreDeleteNamespace(const char *catalog, const char *ns);

/* tables (views are rows of iceberg_tables too, typed 'VIEW') */
extern bool StoreGetTable(const char *catalog, const char *ns, const char *name,
						  bool latest, StoreTable *out);
extern char *StoreLockTable(const char *catalog, const char *ns, const char *name);
extern List *StoreListTables(const char *catalog, const char *ns);
extern void StoreInsertTable(const char *catalog, const char *ns, const char *name,
							 const char *location);
extern bool StoreCasTable(const char *catalog, const char *ns, const char *name,
						  const char *expected, const char *location);
extern bool StoreRenameTable(const char *catalog, const char *ns, const char *name,
							 const char *new_ns, const char *new_name);
/* StoreChangeView's changes */
typedef enum StoreViewChange
{
	STORE_VIEW_INSERT,
	STORE_VIEW_SWAP,
	STORE_VIEW_MOVE,
	STORE_VIEW_DELETE
} StoreViewChange;

extern uint64 StoreChangeView(StoreViewChange change, const char *catalog, const char *ns,
							  const char *name, const char *a, const char *b);
extern bool StoreDeleteTable(const char *catalog, const char *ns, const char *name,
							 char **location);

#endif							/* SKADE_CATALOG_STORE_H */
