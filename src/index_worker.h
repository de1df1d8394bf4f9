/*-------------------------------------------------------------------------
 *
 * index_worker.h
 *	  The background worker that builds and publishes the snapshot index.
 *
 * IDENTIFICATION
 *	  src/index_worker.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_INDEX_WORKER_H
#define SKADE_INDEX_WORKER_H

extern void SkadeIndexWorkerRegister(void);
extern PGDLLEXPORT void skade_index_worker_main(Datum arg) pg_attribute_noreturn();

#endif							/* SKADE_INDEX_WORKER_H */
