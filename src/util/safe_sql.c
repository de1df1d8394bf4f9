/*-------------------------------------------------------------------------
 *
 * safe_sql.c
 *	  Run SQL that no caller's search_path can redirect: the commit-log
 *	  trigger's writes as the log's owner, and the index worker.
 *
 * SQL that skade runs as a role other than the caller (the owner of
 * skade.commit_log and skade.snapshot_map, usually the superuser who ran
 * CREATE EXTENSION), or in a background worker as the bootstrap superuser,
 * must not resolve a single name through a search_path someone else chose:
 * a caller (or a database owner, through ALTER DATABASE ... SET
 * search_path) could put an operator or function of their own ahead of
 * pg_catalog and have it run with the owner's rights.  As core's
 * ri_triggers.c does, every such statement
 *   - runs with search_path = pg_catalog, pg_temp, set through a new GUC
 *     nest level (so it is restored on return, and by the (sub)transaction
 *     abort on error: nothing leaks into the caller's session);
 *   - or, for SQL that runs as the caller (the catalog statements,
 *     resolve_many's heap path), with pg_catalog alone pushed as an
 *     override search path: the same protection without the GUC machinery
 *     and the two recomputations of the search path it costs per statement
 *     (about 5% of a catalog lookup); popped on return, and by the
 *     (sub)transaction abort on error.  PostgreSQL 17 removed override
 *     search paths: there it is pg_catalog, pg_temp at a new GUC nest level
 *     too, at that cost (SkadePushCatalogSearchPath, pg_compat.h);
 *   - names every relation schema-qualified and every operator as
 *     OPERATOR(pg_catalog.=) (see the statements in snapshot_map.c,
 *     commit_log.c, warm.c, snapshot_index.c, privileges.c and log_api.c);
 *   - when it runs as another role, does so with SECURITY_LOCAL_USERID_CHANGE
 *     and SECURITY_RESTRICTED_OPERATION (no SET ROLE, no temporary objects);
 *     the previous role is restored on return or by the abort.
 * Cached plans record the search_path they were made under and are
 * re-planned when it differs; with it pinned, they never are.
 *
 * SkadeCatalogOwner is the role those statements run as: the owner of
 * skade.commit_log, cached until the next pg_class invalidation.
 *
 * Locking: none.
 *
 * IDENTIFICATION
 *	  src/util/safe_sql.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "miscadmin.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "util/safe_sql.h"

/*
 * SkadeSafeSqlBegin
 *		Pin search_path until SkadeSafeSqlEnd, and run as role (InvalidOid:
 *		as the caller, through an override search path).  On ERROR, the
 *		(sub)transaction abort restores both.
 */
void
SkadeSafeSqlBegin(SkadeSafeSql *s, Oid role)
{
	s->switched = OidIsValid(role);
	if (!s->switched)
	{
		SkadePushCatalogSearchPath(&s->nestlevel);
		return;
	}
	GetUserIdAndSecContext(&s->save_userid, &s->save_sec_context);
	s->nestlevel = NewGUCNestLevel();
	(void) set_config_option("search_path", SKADE_SAFE_SEARCH_PATH,
							 PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	SetUserIdAndSecContext(role, s->save_sec_context |
						   SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
}

/* Undo SkadeSafeSqlBegin (normal exit). */
void
SkadeSafeSqlEnd(SkadeSafeSql *s)
{
	if (!s->switched)
	{
		SkadePopCatalogSearchPath(s->nestlevel);
		return;
	}
	SetUserIdAndSecContext(s->save_userid, s->save_sec_context);
	AtEOXact_GUC(true, s->nestlevel);
}

/*
 * SkadeSafeSqlPinProcess
 *		For a background worker: pin search_path for the life of the
 *		process, above any database- or role-level setting (PGC_S_OVERRIDE
 *		also survives configuration reloads).
 */
void
SkadeSafeSqlPinProcess(void)
{
	SetConfigOption("search_path", SKADE_SAFE_SEARCH_PATH, PGC_SUSET, PGC_S_OVERRIDE);
}

static Oid	cached_owner = InvalidOid;

static void
owner_invalidate(Datum arg, int cacheid, uint32 hashvalue)
{
	cached_owner = InvalidOid;
}

/*
 * SkadeCatalogOwner
 *		The role that owns skade's tables (skade.commit_log's owner: the
 *		role that ran CREATE EXTENSION).
 */
Oid
SkadeCatalogOwner(void)
{
	static bool callback_registered = false;
	Oid			relid;
	HeapTuple	tp;
	Oid			owner;

	if (!callback_registered)
	{
		CacheRegisterSyscacheCallback(RELOID, owner_invalidate, (Datum) 0);
		callback_registered = true;
	}
	if (OidIsValid(cached_owner))
		return cached_owner;
	relid = get_relname_relid("commit_log", get_namespace_oid("skade", false));
	if (!OidIsValid(relid))
		elog(ERROR, "skade.commit_log is missing");
	tp = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(tp))
		elog(ERROR, "skade.commit_log is missing");
	owner = ((Form_pg_class) GETSTRUCT(tp))->relowner;
	ReleaseSysCache(tp);
	/* (the lookups see every change an invalidation they processed named) */
	cached_owner = owner;
	return owner;
}
