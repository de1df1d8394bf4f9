/*-------------------------------------------------------------------------
 *
 * file_create.h
 *	  Confined, durable, create-only writing of new files (file_create.c).
 *
 * IDENTIFICATION
 *	  src/file_create.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_FILE_CREATE_H
#define SKADE_FILE_CREATE_H

extern char *SkadeCreateFile(const char *location, const char *data, Size len);

#endif							/* SKADE_FILE_CREATE_H */
