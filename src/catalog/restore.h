/*-------------------------------------------------------------------------
 *
 * restore.h
 *	  pg_dump restores: a dump's CREATE TABLE of the JDBC catalog tables
 *	  replaces the untouched ones CREATE EXTENSION skade made.
 *
 * IDENTIFICATION
 *	  src/catalog/restore.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_RESTORE_H
#define SKADE_RESTORE_H

extern void SkadeRestoreInit(void);

#endif							/* SKADE_RESTORE_H */
