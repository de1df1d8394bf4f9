/*-------------------------------------------------------------------------
 *
 * safe_sql.h
 *	  The one way skade runs SQL on behalf of someone other than the
 *	  caller's own search_path: pinned search_path, optionally as another
 *	  role (see safe_sql.c).
 *
 * IDENTIFICATION
 *	  src/util/safe_sql.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_SAFE_SQL_H
#define SKADE_SAFE_SQL_H

/* what SkadeSafeSqlEnd restores */
typedef struct SkadeSafeSql
{
	Oid			save_userid;
	int			save_sec_context;
	int			nestlevel;
	bool		switched;
} SkadeSafeSql;

/* the search_path every statement of skade runs under */
#define SKADE_SAFE_SEARCH_PATH	"pg_catalog, pg_temp"

extern void SkadeSafeSqlBegin(SkadeSafeSql *s, Oid role);
extern void SkadeSafeSqlEnd(SkadeSafeSql *s);
extern void SkadeSafeSqlPinProcess(void);
extern Oid	SkadeCatalogOwner(void);

#endif							/* SKADE_SAFE_SQL_H */
