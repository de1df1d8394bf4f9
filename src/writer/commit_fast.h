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

extern Datum skade_update_table_fast(PG_FUNCTION_ARGS);

#endif							/* SKADE_COMMIT_FAST_H */
