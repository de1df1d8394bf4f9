/*-------------------------------------------------------------------------
 *
 * names.h
 *	  Validation of catalog, namespace, table and location strings, and of
 *	  SQL-callable arguments.
 *
 * IDENTIFICATION
 *	  src/util/names.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_NAMES_H
#define SKADE_NAMES_H

#include "fmgr.h"

extern void SkadeCheckName(const char *name, const char *what);
extern void SkadeCheckNamespace(const char *ns);
extern void SkadeCheckLocation(const char *location, const char *what);
extern void SkadeCheckPathComponent(const char *name, const char *what);
extern bool SkadeIsPathComponent(const char *name);
extern void SkadeCheckPropertyKey(const char *key);
extern void SkadeCheckPropertyValue(const char *key, const char *value);

extern char *SkadeTextArg(FunctionCallInfo fcinfo, int argno, const char *what);
extern char *SkadeOptTextArg(FunctionCallInfo fcinfo, int argno);

#endif							/* SKADE_NAMES_H */
