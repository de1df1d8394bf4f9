/*-------------------------------------------------------------------------
 *
 * guc.c
 *	  Every skade.* configuration parameter, documented where it is defined.
 *
 * Parameters are registered from _PG_init whether or not the library is
 * preloaded, so that SET skade.catalog works in any session; the prefix is
 * reserved so that misspelled skade.* settings are reported.
 *
 * IDENTIFICATION
 *	  src/guc.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "utils/guc.h"

#include "guc.h"
#include "names.h"
#include "skade.h"

/*
 * skade.catalog: the catalog (the catalog_name column of the JDBC tables)
 * that SQL API calls use when their "catalog" argument is NULL or omitted.
 * A JDBC client's catalog name is its own configuration (Spark's
 * spark.sql.catalog.<name>, pyiceberg's load_catalog(name)); set this to the
 * same name to see that client's tables.
 */
char	   *skade_catalog = NULL;

/*
 * skade.durability: how skade's pointer changes reach disk.  "immediate"
 * makes every transaction that changes a pointer (SQL API or JDBC DML) wait
 * for its WAL flush, even when the session runs with synchronous_commit =
 * off; "eventual" runs those transactions with synchronous_commit = off
 * (a crash may lose the last few hundred milliseconds of commits, never
 * corrupt them).
 */
int			skade_durability = SKADE_DURABILITY_IMMEDIATE;

static const struct config_enum_entry durability_options[] = {
	{"immediate", SKADE_DURABILITY_IMMEDIATE, false},
	{"eventual", SKADE_DURABILITY_EVENTUAL, false},
	{NULL, 0, false}
};

static bool check_catalog(char **newval, void **extra, GucSource source);

/*
 * SkadeGucInit
 *		Define all skade.* parameters.  Called once from _PG_init.
 */
void
SkadeGucInit(void)
{
	DefineCustomStringVariable("skade.catalog",
							   "Default catalog name (catalog_name) for skade's SQL API.",
							   "Must equal the catalog name the JDBC clients are configured with.",
							   &skade_catalog,
							   "skade",
							   PGC_USERSET,
							   0,
							   check_catalog, NULL, NULL);

	DefineCustomEnumVariable("skade.durability",
							 "Durability of skade's pointer changes: immediate or eventual.",
							 "eventual runs pointer-changing transactions with synchronous_commit = off.",
							 &skade_durability,
							 SKADE_DURABILITY_IMMEDIATE,
							 durability_options,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	MarkGUCPrefixReserved("skade");
}

/* A catalog name must fit the catalog_name column; "" is rejected at use. */
static bool
check_catalog(char **newval, void **extra, GucSource source)
{
	if (*newval && strlen(*newval) > SKADE_MAX_NAME_LEN)
	{
		GUC_check_errdetail("Catalog names are at most %d bytes long.",
							SKADE_MAX_NAME_LEN);
		return false;
	}
	return true;
}

/*
 * SkadeResolveCatalog
 *		The catalog an API call works on: its argument, else skade.catalog.
 */
const char *
SkadeResolveCatalog(const char *catalog_arg)
{
	const char *catalog = catalog_arg ? catalog_arg : skade_catalog;

	if (catalog == NULL || catalog[0] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("no catalog name given"),
				 errhint("Pass the catalog argument or SET skade.catalog.")));
	SkadeCheckName(catalog, "catalog");
	return catalog;
}

/*
 * SkadeApplyDurability
 *		Map skade.durability onto synchronous_commit for the current
 *		transaction.  Called whenever a pointer changes; the setting is
 *		transaction-local (like SET LOCAL), so it never leaks into the
 *		session.
 */
void
SkadeApplyDurability(void)
{
	const char *want = NULL;

	if (skade_durability == SKADE_DURABILITY_EVENTUAL)
	{
		if (synchronous_commit != SYNCHRONOUS_COMMIT_OFF)
			want = "off";
	}
	else if (synchronous_commit < SYNCHRONOUS_COMMIT_LOCAL_FLUSH)
		want = "on";

	if (want)
		(void) set_config_option("synchronous_commit", want,
								 PGC_USERSET, PGC_S_SESSION,
								 GUC_ACTION_LOCAL, true, 0, false);
}
