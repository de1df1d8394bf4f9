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

#include "cache/pointer_mirror.h"

extern void MirrorWalInit(void);
extern void MirrorWalLogChange(const MirrorScope *scope, const char *names);
extern void MirrorWalLogTruncate(const MirrorScope *scope);

#endif							/* SKADE_MIRROR_WAL_H */
