/*-------------------------------------------------------------------------
 *
 * file_create.h
 *	  Confined, durable, create-only writing of new files, and their
 *	  confined removal (file_create.c).
 *
 * IDENTIFICATION
 *	  src/io/file_create.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_FILE_CREATE_H
#define SKADE_FILE_CREATE_H

#include "io/route.h"

extern char *SkadeCreateFile(const SkadeRoute *route, const char *location, const char *data,
							 Size len);
extern void SkadeWritablePath(const SkadeRoute *route, const char *location, const char *verb,
							  char **root, char **rest);
extern int	SkadeRemoveBelow(const char *root, const char *rest);

#endif							/* SKADE_FILE_CREATE_H */
