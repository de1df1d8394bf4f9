/*-------------------------------------------------------------------------
 *
 * rest_worker.h
 *	  The background workers that serve skade's Iceberg REST catalog: the
 *	  listener and its executors (see rest_worker.c).
 *
 * IDENTIFICATION
 *	  src/rest/rest_worker.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_REST_WORKER_H
#define SKADE_REST_WORKER_H

#include "fmgr.h"

extern void SkadeRestWorkersRegister(void);
extern PGDLLEXPORT void skade_rest_listener_main(Datum arg);
extern PGDLLEXPORT void skade_rest_executor_main(Datum arg);

#endif							/* SKADE_REST_WORKER_H */
