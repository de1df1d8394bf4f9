/*-------------------------------------------------------------------------
 *
 * commit_fast.h
 *	  update_table's fast path: the common commit shapes, spliced in C
 *	  (commit_fast.c).
 *
 * IDENTIFICATION
 *	  src/writer/commit_fast.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_COMMIT_FAST_H
#define SKADE_COMMIT_FAST_H

#include "fmgr.h"
#include "utils/jsonb.h"

/* commits applied in memory one onto another and written once (a group) */
typedef struct SkadeFastChain SkadeFastChain;

extern Datum skade_update_table_fast(PG_FUNCTION_ARGS);
extern SkadeFastChain *SkadeFastChainBegin(const char *catalog, const char *ns, const char *name,
										   const char *base_location);
extern bool SkadeFastChainStep(SkadeFastChain *ch, Jsonb *requirements, Jsonb *updates);
extern bool SkadeFastChainRebases(const SkadeFastChain *ch);
extern char *SkadeFastChainFinish(SkadeFastChain *ch);

#endif							/* SKADE_COMMIT_FAST_H */
