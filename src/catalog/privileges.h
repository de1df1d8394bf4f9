/*-------------------------------------------------------------------------
 *
 * privileges.h
 *	  Who may read or write which catalog, namespace, table or view
 *	  (skade.grants, skade_user); see privileges.c.
 *
 * IDENTIFICATION
 *	  src/catalog/privileges.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_PRIVILEGES_H
#define SKADE_PRIVILEGES_H

typedef enum SkadeAccess
{
	SKADE_ACCESS_NONE = 0,
	SKADE_ACCESS_READ = 1,
	SKADE_ACCESS_WRITE = 2			/* implies read */
} SkadeAccess;

/*
 * May the current user have want on the object?  ns NULL: the catalog;
 * name NULL: the namespace ns (and everything below it).
 */
extern bool SkadeMay(SkadeAccess want, const char *catalog, const char *ns,
					 const char *name);
/* may the current user see namespace ns (read it, or hold a grant below it)? */
extern bool SkadeMaySeeNamespace(const char *catalog, const char *ns);
/* may the current user write anything directly in namespace ns? */
extern bool SkadeMayWriteIn(const char *catalog, const char *ns);
extern void SkadeRequireWriteIn(const char *catalog, const char *ns, const char *location);
/* may the current user read everything? */
extern bool SkadeMayReadAll(void);

#endif							/* SKADE_PRIVILEGES_H */
