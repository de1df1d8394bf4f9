/*-------------------------------------------------------------------------
 *
 * commit_group.h
 *	  Group commit: concurrent REST appends to one table applied by one
 *	  committer into one metadata file (commit_group.c).
 *
 * IDENTIFICATION
 *	  src/writer/commit_group.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_COMMIT_GROUP_H
#define SKADE_COMMIT_GROUP_H

/* what SkadeGroupCommit did with a commit */
typedef enum SkadeGroupResult
{
	SKADE_GROUP_NOT_TAKEN,		/* nothing: commit it the usual way */
	SKADE_GROUP_LED,			/* made in this transaction (as the group's
								 * committer): durable once it commits */
	SKADE_GROUP_COMMITTED		/* made and committed by another's group:
								 * durable now, whatever this one does */
} SkadeGroupResult;

extern Size SkadeGroupShmemSize(void);
extern void SkadeGroupShmemRequest(void);
extern void SkadeGroupShmemInit(void);
extern SkadeGroupResult SkadeGroupCommit(const char *catalog, const char *ns, const char *name,
										 const char *body);

#endif							/* SKADE_COMMIT_GROUP_H */
