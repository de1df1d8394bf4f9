/*-------------------------------------------------------------------------
 *
 * mirror_wal.h
 *	  skade's WAL resource manager: L1 mirror invalidation on standbys.
 *
 * IDENTIFICATION
 *	  src/cache/mirror_wal.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_MIRROR_WAL_H
#define SKADE_MIRROR_WAL_H

/*
 * What an entry belongs to: the database, the catalog table and the commit-log
 * trigger that keeps the mirror in step (its row's xmin changes whenever the
 * trigger is disabled, re-enabled or replaced, so entries made under an older
 * attachment are never found again).
 */
typedef struct MirrorScope
{
	Oid			dboid;
	Oid			relid;
	Oid			tgoid;
	TransactionId tgxmin;
} MirrorScope;

/* what replaying a record does to the mirror (pointer_mirror.c) */
typedef struct MirrorWalRedo
{
	void		(*change) (const MirrorScope *scope, const char *names);
	void		(*truncate) (const MirrorScope *scope, TransactionId xid);
} MirrorWalRedo;

extern void MirrorWalInit(const MirrorWalRedo *redo);
extern void MirrorWalLogChange(const MirrorScope *scope, const char *names);
extern void MirrorWalLogTruncate(const MirrorScope *scope);

#endif							/* SKADE_MIRROR_WAL_H */
