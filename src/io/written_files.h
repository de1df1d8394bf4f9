/*-------------------------------------------------------------------------
 *
 * written_files.h
 *	  The journal of files skade writes, their removal when the writing
 *	  transaction aborts, and removals deferred to commit (written_files.c).
 *
 * IDENTIFICATION
 *	  src/io/written_files.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_WRITTEN_FILES_H
#define SKADE_WRITTEN_FILES_H

extern void SkadeWrittenSubscribe(void);
extern void SkadeWrittenInit(void);
extern void SkadeWrittenJournal(const char *location, const char *route);
extern void SkadeWrittenRemember(const char *root, const char *rest);

#endif							/* SKADE_WRITTEN_FILES_H */
