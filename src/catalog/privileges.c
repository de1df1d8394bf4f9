/*-------------------------------------------------------------------------
 *
 * privileges.c
 *	  Privileges per catalog, namespace and table or view: skade.grant(),
 *	  skade.revoke(), and the checks every path applies (SkadeMay).
 *
 * The model:
 *   - A role that is not a member of skade_user is not restricted here:
 *     skade_reader and skade_writer stay the database-wide grants they
 *     were, and a role given table privileges directly keeps them.
 *   - A member of skade_user (with its privileges: INHERIT) may read or
 *     write what a row of skade.grants gives one of its roles: a catalog
 *     (namespace NULL), a namespace and the namespaces below it (name
 *     NULL), or one table or view.  write implies read.  Membership in
 *     skade_writer (skade_reader) still gives write (read) everywhere.
 *   - A namespace is visible to a role that may read it or holds a grant
 *     on something below it (so the path to a granted table can be listed).
 * Enforcement: the catalog tables (iceberg_tables,
 * iceberg_namespace_properties, commit_log, snapshot_map, the archive)
 * carry row-level security policies that call skade.may() and
 * skade.check_write() for members of skade_user (skade.attach_policies;
 * skade_reader and skade_writer have constant policies, which the planner
 * folds away, so only restricted roles evaluate anything per row),
 * so the SQL API (whose statements run as the caller through SPI), the
 * JDBC clients' own statements and REST see the same rows.  What answers
 * without the heap checks here itself: the pointer mirror
 * (SkadeLookupTable), the snapshot index (time_travel_api.c), the files a
 * writer may create (metadata_write.c).  An object a role may not read is
 * absent to it (the same answer as for one that does not exist); one it
 * may read but not write is refused with 42501.
 *
 * Cache: the grants of the last few users, each sorted by a key
 * ("C" catalog | "N" catalog US namespace | "T" catalog US namespace US
 * name), per backend in "skade privileges"; dropped on any change of
 * skade.grants (a statement trigger sends a relcache invalidation of the
 * table, so other backends see it at their next command after commit),
 * of pg_authid or of pg_auth_members.  Grants are read as the owner of
 * skade.commit_log under the pinned search path of safe_sql.c.
 *
 * Locking: none of its own; readers of skade.grants take AccessShareLock.
 *
 * IDENTIFICATION
 *	  src/catalog/privileges.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"

#include "catalog/change_feed.h"
#include "catalog/commit_log.h"
#include "util/guc.h"
#include "util/names.h"
#include "catalog/privileges.h"
#include "util/safe_sql.h"

#define KEY_SEP		'\x1f'		/* never in a validated name (no control characters) */
#define CACHED_USERS 8

typedef struct GrantKey
{
	char	   *key;
	SkadeAccess level;
} GrantKey;

typedef struct UserPrivileges
{
	Oid			user;
	bool		valid;
	bool		restricted;		/* a member of skade_user, not superuser */
	SkadeAccess everywhere;		/* from skade_reader / skade_writer */
	GrantKey   *keys;			/* sorted by key */
	int			nkeys;
	MemoryContext cxt;
} UserPrivileges;

static UserPrivileges cache[CACHED_USERS];
static int	next_slot = 0;
static bool callbacks_registered = false;
static Oid	grants_relid = InvalidOid;
static MemoryContext privileges_cxt = NULL;
static StringInfoData keybuf;

PG_FUNCTION_INFO_V1(skade_may);
PG_FUNCTION_INFO_V1(skade_may_see_namespace);
PG_FUNCTION_INFO_V1(skade_check_write);
PG_FUNCTION_INFO_V1(skade_grant);
PG_FUNCTION_INFO_V1(skade_revoke);
PG_FUNCTION_INFO_V1(skade_grants_changed);

static UserPrivileges *current_privileges(void);
static bool may_everywhere(const UserPrivileges *u, SkadeAccess want);
static void load_user(UserPrivileges *u, Oid user);
static void fetch_grants(UserPrivileges *u, Oid user);
static SkadeAccess granted_level(UserPrivileges *u, const char *catalog, const char *ns,
								 const char *name);
static SkadeAccess lookup(UserPrivileges *u, const char *key);
static bool any_with_prefix(UserPrivileges *u, const char *prefix, SkadeAccess want);
static void make_key(char kind, const char *catalog, const char *ns, int nslen, const char *name);
static void invalidate_all(void);
static void on_syscache(Datum arg, int cacheid, uint32 hashvalue);
static void on_relcache(Datum arg, Oid relid);
static SkadeAccess parse_access(text *t);

/* ---------------------------------------------------------------- checks */

bool
SkadeMay(SkadeAccess want, const char *catalog, const char *ns, const char *name)
{
	UserPrivileges *u = current_privileges();

	return may_everywhere(u, want) || granted_level(u, catalog, ns, name) >= want;
}

/* Does u have want on everything, whatever the grants (unrestricted, or a database-wide role)? */
static bool
may_everywhere(const UserPrivileges *u, SkadeAccess want)
{
	return !u->restricted || u->everywhere >= want;
}

bool
SkadeMaySeeNamespace(const char *catalog, const char *ns)
{
	UserPrivileges *u = current_privileges();

	if (SkadeMay(SKADE_ACCESS_READ, catalog, ns, NULL))
		return true;
	if (strchr(catalog, KEY_SEP) || strchr(ns, KEY_SEP))
		return false;
	/* a namespace below ns, a table in ns, a table below ns */
	make_key('N', catalog, ns, -1, NULL);
	appendStringInfoChar(&keybuf, '.');
	if (any_with_prefix(u, keybuf.data, SKADE_ACCESS_READ))
		return true;
	make_key('T', catalog, ns, -1, NULL);
	appendStringInfoChar(&keybuf, KEY_SEP);
	if (any_with_prefix(u, keybuf.data, SKADE_ACCESS_READ))
		return true;
	make_key('T', catalog, ns, -1, NULL);
	appendStringInfoChar(&keybuf, '.');
	return any_with_prefix(u, keybuf.data, SKADE_ACCESS_READ);
}

bool
SkadeMayWriteIn(const char *catalog, const char *ns)
{
	UserPrivileges *u = current_privileges();

	if (SkadeMay(SKADE_ACCESS_WRITE, catalog, ns, NULL))
		return true;
	if (strchr(catalog, KEY_SEP) || strchr(ns, KEY_SEP))
		return false;
	make_key('T', catalog, ns, -1, NULL);
	appendStringInfoChar(&keybuf, KEY_SEP);
	return any_with_prefix(u, keybuf.data, SKADE_ACCESS_WRITE);
}

/* The grants of the current user, loaded if need be. */
static UserPrivileges *
current_privileges(void)
{
	Oid			user = GetUserId();
	UserPrivileges *u;
	int			i;

	if (!callbacks_registered)
	{
		CacheRegisterSyscacheCallback(AUTHOID, on_syscache, (Datum) 0);
		CacheRegisterSyscacheCallback(AUTHMEMROLEMEM, on_syscache, (Datum) 0);
		CacheRegisterRelcacheCallback(on_relcache, (Datum) 0);
		privileges_cxt = AllocSetContextCreate(TopMemoryContext, "skade privileges",
											   ALLOCSET_SMALL_SIZES);
		{
			MemoryContext old = MemoryContextSwitchTo(privileges_cxt);

			initStringInfo(&keybuf);
			MemoryContextSwitchTo(old);
		}
		callbacks_registered = true;
	}
	for (i = 0; i < CACHED_USERS; i++)
		if (cache[i].valid && cache[i].user == user)
			return &cache[i];
	u = &cache[next_slot];
	next_slot = (next_slot + 1) % CACHED_USERS;
	u->valid = false;
	load_user(u, user);
	return u;
}

/* What user may everywhere, and (when restricted) the grants of its roles. */
static void
load_user(UserPrivileges *u, Oid user)
{
	Oid			skade_user = get_role_oid("skade_user", true);
	Oid			writer = get_role_oid("skade_writer", true);
	Oid			reader = get_role_oid("skade_reader", true);

	if (u->cxt == NULL)
		u->cxt = AllocSetContextCreate(privileges_cxt, "skade privileges of a role",
									   ALLOCSET_SMALL_SIZES);
	MemoryContextReset(u->cxt);
	u->user = user;
	u->keys = NULL;
	u->nkeys = 0;
	u->restricted = !superuser_arg(user) && OidIsValid(skade_user) &&
		has_privs_of_role(user, skade_user);
	if (!u->restricted || (OidIsValid(writer) && has_privs_of_role(user, writer)))
		u->everywhere = SKADE_ACCESS_WRITE;
	else if (OidIsValid(reader) && has_privs_of_role(user, reader))
		u->everywhere = SKADE_ACCESS_READ;
	else
		u->everywhere = SKADE_ACCESS_NONE;
	if (u->restricted && u->everywhere < SKADE_ACCESS_WRITE)
		fetch_grants(u, user);
	u->valid = true;
}

static int
key_cmp(const void *a, const void *b)
{
	return strcmp(((const GrantKey *) a)->key, ((const GrantKey *) b)->key);
}

/* Read the grants of every role whose privileges user has. */
static void
fetch_grants(UserPrivileges *u, Oid user)
{
	Oid			skade_ns = get_namespace_oid("skade", true);
	Oid			argtypes[1] = {OIDOID};
	Datum		args[1] = {ObjectIdGetDatum(user)};
	SkadeSafeSql safe;
	uint64		i;

	grants_relid = OidIsValid(skade_ns) ? get_relname_relid("grants", skade_ns) : InvalidOid;
	if (!OidIsValid(grants_relid))
		return;					/* an older version of the SQL objects */
	SPI_connect();
	SkadeSafeSqlBegin(&safe, SkadeCatalogOwner());
	if (SPI_execute_with_args("SELECT g.access, g.catalog_name, g.namespace, g.name"
							  " FROM skade.grants g"
							  " WHERE g.grantee::pg_catalog.oid OPERATOR(pg_catalog.=) ANY"
							  " (ARRAY(SELECT r.oid FROM pg_catalog.pg_roles r"
							  "  WHERE pg_catalog.pg_has_role($1, r.oid, 'USAGE')))",
							  1, argtypes, args, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "skade: could not read skade.grants");
	u->keys = MemoryContextAlloc(u->cxt, sizeof(GrantKey) * (SPI_processed + 1));
	for (i = 0; i < SPI_processed; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		char	   *access = SPI_getvalue(tup, desc, 1);
		char	   *catalog = SPI_getvalue(tup, desc, 2);
		char	   *ns = SPI_getvalue(tup, desc, 3);
		char	   *name = SPI_getvalue(tup, desc, 4);

		make_key(ns == NULL ? 'C' : name == NULL ? 'N' : 'T', catalog, ns, -1, name);
		u->keys[u->nkeys].key = MemoryContextStrdup(u->cxt, keybuf.data);
		u->keys[u->nkeys].level = strcmp(access, "write") == 0 ?
			SKADE_ACCESS_WRITE : SKADE_ACCESS_READ;
		u->nkeys++;
	}
	SkadeSafeSqlEnd(&safe);
	SPI_finish();
	qsort(u->keys, u->nkeys, sizeof(GrantKey), key_cmp);
}

/* The level the grants give on catalog / ns (and its ancestors) / name. */
static SkadeAccess
granted_level(UserPrivileges *u, const char *catalog, const char *ns, const char *name)
{
	SkadeAccess level;
	const char *dot;

	if (u->nkeys == 0 || strchr(catalog, KEY_SEP) ||
		(ns && strchr(ns, KEY_SEP)) || (name && strchr(name, KEY_SEP)))
		return SKADE_ACCESS_NONE;
	make_key('C', catalog, NULL, 0, NULL);
	level = lookup(u, keybuf.data);
	if (ns == NULL)
		return level;
	/* ns and each of its ancestors: "a", "a.b", ..., ns */
	for (dot = strchr(ns, '.');; dot = strchr(dot + 1, '.'))
	{
		make_key('N', catalog, ns, dot ? (int) (dot - ns) : -1, NULL);
		level = Max(level, lookup(u, keybuf.data));
		if (dot == NULL)
			break;
	}
	if (name != NULL)
	{
		make_key('T', catalog, ns, -1, name);
		level = Max(level, lookup(u, keybuf.data));
	}
	return level;
}

static SkadeAccess
lookup(UserPrivileges *u, const char *key)
{
	GrantKey	probe = {(char *) key, SKADE_ACCESS_NONE};
	GrantKey   *hit = bsearch(&probe, u->keys, u->nkeys, sizeof(GrantKey), key_cmp);

	return hit ? hit->level : SKADE_ACCESS_NONE;
}

/* Is there a key starting with prefix that gives at least want? */
static bool
any_with_prefix(UserPrivileges *u, const char *prefix, SkadeAccess want)
{
	size_t		len = strlen(prefix);
	int			lo = 0;
	int			hi = u->nkeys;

	while (lo < hi)				/* the first key >= prefix */
	{
		int			mid = lo + (hi - lo) / 2;

		if (strcmp(u->keys[mid].key, prefix) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < u->nkeys && strncmp(u->keys[lo].key, prefix, len) == 0; lo++)
		if (u->keys[lo].level >= want)
			return true;
	return false;
}

/* keybuf := kind catalog [US ns[0..nslen)] [US name]; nslen -1: all of ns */
static void
make_key(char kind, const char *catalog, const char *ns, int nslen, const char *name)
{
	resetStringInfo(&keybuf);
	appendStringInfoChar(&keybuf, kind);
	appendStringInfoString(&keybuf, catalog);
	if (ns != NULL)
	{
		appendStringInfoChar(&keybuf, KEY_SEP);
		appendBinaryStringInfo(&keybuf, ns, nslen < 0 ? (int) strlen(ns) : nslen);
	}
	if (name != NULL)
	{
		appendStringInfoChar(&keybuf, KEY_SEP);
		appendStringInfoString(&keybuf, name);
	}
}

static void
invalidate_all(void)
{
	int			i;

	for (i = 0; i < CACHED_USERS; i++)
		cache[i].valid = false;
}

static void
on_syscache(Datum arg, int cacheid, uint32 hashvalue)
{
	invalidate_all();
}

static void
on_relcache(Datum arg, Oid relid)
{
	if (relid == InvalidOid || relid == grants_relid)
		invalidate_all();
}

/* ---------------------------------------------------------------- SQL */

static SkadeAccess
parse_access(text *t)
{
	char	   *s = text_to_cstring(t);

	if (strcmp(s, "read") == 0)
		return SKADE_ACCESS_READ;
	if (strcmp(s, "write") == 0)
		return SKADE_ACCESS_WRITE;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("access must be 'read' or 'write', not \"%s\"", s)));
	return SKADE_ACCESS_NONE;	/* keep compiler quiet */
}

/* skade.may(access, namespace, name, catalog) -> may the current user? */
Datum
skade_may(PG_FUNCTION_ARGS)
{
	SkadeAccess want;
	const char *ns = SkadeOptTextArg(fcinfo, 1);
	const char *name = SkadeOptTextArg(fcinfo, 2);
	const char *catalog = SkadeResolveCatalog(SkadeOptTextArg(fcinfo, 3));

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("access must not be NULL")));
	want = parse_access(PG_GETARG_TEXT_PP(0));
	if (ns == NULL && name != NULL)
		PG_RETURN_BOOL(false);
	if (!current_privileges()->restricted && !superuser())
	{
		/* not governed by grants: what its privileges on the JDBC table give */
		Oid			tables = RangeVarGetRelid(makeRangeVar("public", "iceberg_tables", -1),
											  NoLock, true);

		PG_RETURN_BOOL(OidIsValid(tables) &&
					   pg_class_aclcheck(tables, GetUserId(), want == SKADE_ACCESS_WRITE ?
										 ACL_UPDATE : ACL_SELECT) == ACLCHECK_OK);
	}
	PG_RETURN_BOOL(SkadeMay(want, catalog, ns, name));
}

/* skade.may_see_namespace(namespace, catalog) */
Datum
skade_may_see_namespace(PG_FUNCTION_ARGS)
{
	const char *ns = SkadeOptTextArg(fcinfo, 0);
	const char *catalog = SkadeResolveCatalog(SkadeOptTextArg(fcinfo, 1));

	PG_RETURN_BOOL(ns != NULL && SkadeMaySeeNamespace(catalog, ns));
}

/*
 * skade.check_write(namespace, name, catalog): the write policies' test
 * (INSERT's and UPDATE's WITH CHECK, UPDATE's and DELETE's USING; its
 * COST puts it after the statement's own cheap conditions, so that rows
 * those exclude never reach it).  true if the current user may write the
 * object (the namespace when name is NULL); false if it may not even see
 * it (the row is absent to it); else 42501, so that a change of something
 * it can see is refused as such (REST: 403), not reported as absent.
 */
Datum
skade_check_write(PG_FUNCTION_ARGS)
{
	const char *ns = SkadeOptTextArg(fcinfo, 0);
	const char *name = SkadeOptTextArg(fcinfo, 1);
	const char *catalog = SkadeResolveCatalog(SkadeOptTextArg(fcinfo, 2));

	if (ns == NULL)
		PG_RETURN_BOOL(false);
	if (SkadeMay(SKADE_ACCESS_WRITE, catalog, ns, name))
		PG_RETURN_BOOL(true);
	if (name != NULL ? !SkadeMay(SKADE_ACCESS_READ, catalog, ns, name)
		: !SkadeMaySeeNamespace(catalog, ns))
		PG_RETURN_BOOL(false);
	if (name != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to change \"%s.%s\" in catalog \"%s\"",
						ns, name, catalog),
				 errhint("skade.grant('write', ...) gives a role write access.")));
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("permission denied to change namespace \"%s\" in catalog \"%s\"",
					ns, catalog),
			 errhint("skade.grant('write', ...) gives a role write access.")));
	PG_RETURN_BOOL(false);		/* keep compiler quiet */
}

/* The arguments of skade.grant() and skade.revoke(), checked. */
typedef struct GrantArgs
{
	SkadeAccess access;
	Oid			role;
	char	   *role_name;
	char	   *ns;
	char	   *name;
	const char *catalog;
} GrantArgs;

static void
grant_args(FunctionCallInfo fcinfo, GrantArgs *g)
{
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("access and role must not be NULL")));
	g->access = parse_access(PG_GETARG_TEXT_PP(0));
	g->role_name = NameStr(*PG_GETARG_NAME(1));
	g->role = get_role_oid(g->role_name, false);
	g->ns = SkadeOptTextArg(fcinfo, 2);
	g->name = SkadeOptTextArg(fcinfo, 3);
	g->catalog = SkadeResolveCatalog(SkadeOptTextArg(fcinfo, 4));
	if (g->ns != NULL)
		SkadeCheckNamespace(g->ns);
	if (g->name != NULL)
	{
		if (g->ns == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("a grant on a table or view names its namespace")));
		SkadeCheckName(g->name, "name");
	}
}

/* Append the grant or revoke to the commit log (inside change_grants' SPI, as the owner). */
static void
log_grant_change(const GrantArgs *g, const char *op, const char *caller)
{
	Oid			types[9] = {TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, INT8OID};
	Datum		args[9];
	char		nulls[10] = "         ";
	Datum		pending;
	int64		seq;

	args[0] = CStringGetTextDatum(op);
	args[1] = CStringGetTextDatum(g->access == SKADE_ACCESS_WRITE ? "write" : "read");
	args[2] = CStringGetTextDatum(g->catalog);
	args[3] = CStringGetTextDatum(g->ns ? g->ns : "");
	args[4] = CStringGetTextDatum(g->name ? g->name : "");
	args[5] = CStringGetTextDatum(caller);
	args[6] = CStringGetTextDatum(g->role_name);
	args[7] = CStringGetTextDatum(g->ns == NULL ? "catalog" : g->name == NULL ? "namespace" : "table");
	/* the seq reserved as the trigger's rows are (the change feed) */
	seq = SkadeCommitLogReserve(&pending);
	args[8] = Int64GetDatum(seq);
	if (SPI_execute_with_args("INSERT INTO skade.commit_log (seq, op, source, catalog_name,"
							  " table_namespace, table_name, committed_by, detail)"
							  " OVERRIDING SYSTEM VALUE VALUES ($9, $1, 'api', $3, $4, $5, $6,"
							  " pg_catalog.jsonb_build_object('access', $2, 'grantee', $7, 'on', $8))",
							  9, types, args, nulls, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "skade: could not log the change of skade.grants");
	SkadeFeedRecord(seq, pending, NULL, NULL, false);
}

/*
 * Run one change of skade.grants (sql: $1 grantee, $2 access, $3 catalog,
 * $4 namespace, $5 name, $6 the caller) as the owner, and when it changed
 * a row, log op in the commit log.  Returns whether it changed a row.
 */
static bool
change_grants(const GrantArgs *g, const char *sql, const char *op)
{
	Oid			types[6] = {REGROLEOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID};
	Datum		args[6];
	char		nulls[7] = "      ";
	char	   *caller = GetUserNameFromId(GetUserId(), false);
	SkadeSafeSql safe;
	bool		changed;

	args[0] = ObjectIdGetDatum(g->role);
	args[1] = CStringGetTextDatum(g->access == SKADE_ACCESS_WRITE ? "write" : "read");
	args[2] = CStringGetTextDatum(g->catalog);
	args[3] = g->ns ? CStringGetTextDatum(g->ns) : (Datum) 0;
	nulls[3] = g->ns ? ' ' : 'n';
	args[4] = g->name ? CStringGetTextDatum(g->name) : (Datum) 0;
	nulls[4] = g->name ? ' ' : 'n';
	args[5] = CStringGetTextDatum(caller);

	SPI_connect();
	SkadeSafeSqlBegin(&safe, SkadeCatalogOwner());
	if (SPI_execute_with_args(sql, 6, types, args, nulls, false, 0) < 0)
		elog(ERROR, "skade: could not change skade.grants");
	changed = SPI_processed > 0;
	if (changed)
		log_grant_change(g, op, caller);
	SkadeSafeSqlEnd(&safe);
	SPI_finish();
	return changed;
}

static void
note_not_restricted(const GrantArgs *g)
{
	Oid			skade_user = get_role_oid("skade_user", true);

	if (!OidIsValid(skade_user) || !has_privs_of_role(g->role, skade_user))
		ereport(NOTICE,
				(errmsg("role \"%s\" is not a member of skade_user", g->role_name),
				 errdetail("Grants restrict and enable only members of skade_user; other roles "
						   "keep the access their privileges on the catalog tables give.")));
}

/* skade.grant(access, role, namespace, name, catalog) -> changed */
Datum
skade_grant(PG_FUNCTION_ARGS)
{
	GrantArgs	g;

	grant_args(fcinfo, &g);
	note_not_restricted(&g);
	/* write replaces read; read beside write changes nothing */
	PG_RETURN_BOOL(change_grants(&g,
								 "INSERT INTO skade.grants AS g (grantee, access, catalog_name,"
								 " namespace, name, granted_by, granted_at)"
								 " VALUES ($1, $2, $3, $4, $5, $6, pg_catalog.now())"
								 " ON CONFLICT (grantee, catalog_name, namespace, name) DO UPDATE"
								 " SET access = 'write', granted_by = EXCLUDED.granted_by,"
								 " granted_at = EXCLUDED.granted_at"
								 " WHERE g.access OPERATOR(pg_catalog.=) 'read'"
								 " AND EXCLUDED.access OPERATOR(pg_catalog.=) 'write'",
								 "grant"));
}

/* skade.revoke(access, role, namespace, name, catalog) -> changed */
Datum
skade_revoke(PG_FUNCTION_ARGS)
{
	GrantArgs	g;
	const char *sql;

	grant_args(fcinfo, &g);
	/* revoking read takes the grant (write implies read); revoking write leaves read */
	if (g.access == SKADE_ACCESS_READ)
		sql = "DELETE FROM skade.grants g"
			" WHERE g.grantee::pg_catalog.oid OPERATOR(pg_catalog.=) $1::pg_catalog.oid"
			" AND $2 IS NOT NULL AND $6 IS NOT NULL"
			" AND g.catalog_name OPERATOR(pg_catalog.=) $3"
			" AND g.namespace IS NOT DISTINCT FROM $4 AND g.name IS NOT DISTINCT FROM $5";
	else
		sql = "UPDATE skade.grants g SET access = 'read'"
			" WHERE g.grantee::pg_catalog.oid OPERATOR(pg_catalog.=) $1::pg_catalog.oid"
			" AND g.access OPERATOR(pg_catalog.=) $2 AND $6 IS NOT NULL"
			" AND g.catalog_name OPERATOR(pg_catalog.=) $3"
			" AND g.namespace IS NOT DISTINCT FROM $4 AND g.name IS NOT DISTINCT FROM $5";
	PG_RETURN_BOOL(change_grants(&g, sql, "revoke"));
}

/* statement trigger on skade.grants: every backend drops its cached grants */
Datum
skade_grants_changed(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;

	if (!CALLED_AS_TRIGGER(fcinfo))
		elog(ERROR, "skade_grants_changed: not called as a trigger");
	CacheInvalidateRelcacheByRelid(RelationGetRelid(trigdata->tg_relation));
	grants_relid = RelationGetRelid(trigdata->tg_relation);
	return PointerGetDatum(NULL);
}

/*
 * SkadeRequireWriteIn
 *		Before a file of a table or view in namespace ns is written: the
 *		current user may write something there (42501 otherwise; a member of
 *		skade_user must name the namespace).
 */
void
SkadeRequireWriteIn(const char *catalog, const char *ns, const char *location)
{
	if (ns != NULL ? SkadeMayWriteIn(catalog, ns)
		: may_everywhere(current_privileges(), SKADE_ACCESS_WRITE))
		return;
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("permission denied to write \"%s\"", location),
			 ns == NULL ? errdetail("A member of skade_user names the namespace of the file.")
			 : errdetail("The role may write no table or view of namespace \"%s\".", ns)));
}

/* May the current user read everything (so that no answer needs a check)? */
bool
SkadeMayReadAll(void)
{
	return may_everywhere(current_privileges(), SKADE_ACCESS_READ);
}
