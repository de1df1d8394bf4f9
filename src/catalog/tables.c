/*-------------------------------------------------------------------------
 *
 * tables.c
 *	  The catalog's tables for C callers (the SQL functions, the REST
 *	  server, the update_table fast path): a table's row looked up through
 *	  the pointer mirror or the heap, its metadata loaded and pinned, its
 *	  pointer compared-and-swapped, and the precise error for a table or a
 *	  namespace that is not there.
 *
 * Invariants
 *   - A lookup answers as the caller's snapshot sees the heap, and only
 *     what the caller may read (privileges.c): a row the caller may not
 *     read is absent.  What is read of a table's files goes by its
 *     namespace's route (SKADE_ROUTE(catalog, ns), route.h).
 *   - A commit is one compare-and-swap of iceberg_tables.metadata_location
 *     (the one JDBC clients send), labelled for the commit-log trigger; a
 *     lost race is 40001 with the current location in errdetail, and
 *     changes nothing.
 *
 * IDENTIFICATION
 *	  src/catalog/tables.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "cache/l0_cache.h"
#include "cache/pointer_mirror.h"
#include "catalog/catalog_store.h"
#include "catalog/commit_log.h"
#include "catalog/privileges.h"
#include "catalog/tables.h"
#include "util/guc.h"
#include "util/names.h"
#include "util/shmem.h"

/*
 * SkadeLoadTablePinned
 *		skade.table_metadata() for C callers (the REST server): the checks
 *		and errors of a load, the table's metadata location in *location and
 *		its text (refs: the refs-only variant), pinned in the cache until the
 *		end of the transaction on a hit.
 */
struct varlena *
SkadeLoadTablePinned(const char *catalog, const char *ns, const char *name, bool refs,
					 const char **location)
{
	StoreTable	t;

	SkadeRequireShared();
	SkadeCheckTableIdent(ns, name);
	if (!SkadeLookupTable(catalog, ns, name, &t) || t.is_view)
		SkadeReportMissingTable(catalog, ns, name);
	*location = SkadeRequireMetadataLocation(ns, name, &t);
	return L0FetchJsonPinned(SKADE_ROUTE(catalog, ns), *location, refs);
}

/* The table's metadata location, or an error if it has none. */
const char *
SkadeRequireMetadataLocation(const char *ns, const char *name, const StoreTable *t)
{
	if (t->metadata_location == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("table \"%s.%s\" has no metadata location", ns, name)));
	return t->metadata_location;
}

/*
 * SkadeLookupTable
 *		The row of ns.name (table or view) as the caller's snapshot sees it:
 *		from the L1 mirror when it can answer, else from the heap (and then
 *		offered to the mirror).  false if there is no such row, or if the
 *		caller may not read it (privileges.c: the mirror knows no roles).
 */
bool
SkadeLookupTable(const char *catalog, const char *ns, const char *name, StoreTable *t)
{
	const MirrorScope *scope = StoreAttachedScope();
	uint64		epoch;

	if (!SkadeMay(SKADE_ACCESS_READ, catalog, ns, name))
		return false;
	if (MirrorLookup(scope, catalog, ns, name, t))
		return true;
	epoch = MirrorEpoch();
	if (!StoreGetTable(catalog, ns, name, false, t))
		return false;
	MirrorFill(scope, catalog, ns, name, t, epoch);
	return true;
}

/*
 * SkadeCommitTable
 *		skade.commit_table() for C callers (the update_table fast path):
 *		the same checks and the same compare-and-swap; returns the seq.
 */
int64
SkadeCommitTable(const char *catalog, const char *ns, const char *name,
				 const char *expected, const char *location)
{
	SkadeRequireShared();
	SkadeCheckTableIdent(ns, name);
	SkadeCheckLocation(expected, "expected_location");
	SkadeCheckLocation(location, "new_location");
	return SkadeCasTable(catalog, ns, name, expected, location);
}

/*
 * SkadeInsertTable
 *		A new table's pointer (register_table, create_table_commit, the C
 *		path's creates), logged as op; returns the seq.  The namespace must
 *		exist; a table or view of that name is a unique violation.
 */
int64
SkadeInsertTable(const char *catalog, const char *ns, const char *name,
				 const char *location, const char *op)
{
	StoreTable	existing;
	int64		seq;

	SkadeRequireShared();
	SkadeCheckTableIdent(ns, name);
	SkadeCheckLocation(location, "metadata_location");
	SkadeRequireNamespace(catalog, ns);
	if (StoreGetTable(catalog, ns, name, false, &existing))
		ereport(ERROR,
				(errcode(ERRCODE_UNIQUE_VIOLATION),
				 errmsg("%s \"%s.%s\" already exists in catalog \"%s\"",
						existing.is_view ? "view" : "table", ns, name, catalog)));

	SkadeOpBegin(op);
	PG_TRY();
	{
		StoreInsertTable(catalog, ns, name, location);
		seq = SkadeOpLastSeq();
	}
	PG_FINALLY();
	{
		SkadeOpEnd();
	}
	PG_END_TRY();
	return seq;
}

/*
 * SkadeCasTable
 *		Compare-and-swap one table's pointer; returns the commit-log seq.
 */
int64
SkadeCasTable(const char *catalog, const char *ns, const char *name,
		   const char *expected, const char *location)
{
	bool		swapped;
	int64		seq;
	StoreTable	t;

	SkadeOpBegin(SKADE_OP_COMMIT);
	PG_TRY();
	{
		swapped = StoreCasTable(catalog, ns, name, expected, location);
		seq = SkadeOpLastSeq();
	}
	PG_FINALLY();
	{
		SkadeOpEnd();
	}
	PG_END_TRY();

	if (swapped)
		return seq;

	/* look at the latest committed row, not our statement's snapshot */
	if (!StoreGetTable(catalog, ns, name, true, &t) || t.is_view)
		SkadeReportMissingTable(catalog, ns, name);
	pg_atomic_fetch_add_u64(&skade_shared->conflicts, 1);
	ereport(ERROR,
			(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
			 errmsg("commit to table \"%s.%s\" failed: its metadata location has changed",
					ns, name),
			 errdetail("Expected location \"%s\"; current metadata location is \"%s\".",
					   expected,
					   t.metadata_location ? t.metadata_location : "(null)"),
			 errhint("Reload the table, reapply the change and retry.")));
	return 0;					/* keep compiler quiet */
}

/*
 * SkadeReportMissingTable
 *		Raise the most precise error for a table that is not there.
 */
void
SkadeReportMissingTable(const char *catalog, const char *ns, const char *name)
{
	StoreTable	t;

	if (StoreGetTable(catalog, ns, name, true, &t) && t.is_view)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s.%s\" is a view, not a table", ns, name)));
	SkadeRequireNamespace(catalog, ns);
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_TABLE),
			 errmsg("table \"%s.%s\" does not exist in catalog \"%s\"",
					ns, name, catalog)));
}

/* A table's namespace and name, checked like every stored name. */
void
SkadeCheckTableIdent(const char *ns, const char *name)
{
	SkadeCheckNamespace(ns);
	SkadeCheckName(name, "table");
}

/*
 * SkadeRequireNamespace
 *		Error out unless ns exists in catalog.
 */
void
SkadeRequireNamespace(const char *catalog, const char *ns)
{
	if (!StoreNamespaceExists(catalog, ns))
		SkadeReportMissingNamespace(catalog, ns);
}

/*
 * SkadeReportMissingNamespace
 *		Raise the most precise error for a namespace that is not there: the
 *		whole catalog may be unknown (a misspelled skade.catalog, or a client
 *		configured with another catalog name).
 */
void
SkadeReportMissingNamespace(const char *catalog, const char *ns)
{
	if (!StoreCatalogExists(catalog))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_CATALOG_NAME),
				 errmsg("catalog \"%s\" does not exist", catalog),
				 errdetail("No namespace or table has catalog_name \"%s\".", catalog),
				 errhint("Check skade.catalog or the catalog argument; JDBC clients use their configured catalog name.")));
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_SCHEMA),
			 errmsg("namespace \"%s\" does not exist in catalog \"%s\"", ns, catalog)));
}
