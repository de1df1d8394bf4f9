/*-------------------------------------------------------------------------
 *
 * index_worker.h
 *	  The background worker that builds and publishes the snapshot index.
 *
 * IDENTIFICATION
 *	  src/index/index_worker.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_INDEX_WORKER_H
#define SKADE_INDEX_WORKER_H

#include "util/pg_compat.h"

extern void SkadeIndexWorkerRegister(void);
pg_noreturn extern PGDLLEXPORT void skade_index_worker_main(Datum arg);

#endif							/* SKADE_INDEX_WORKER_H */
