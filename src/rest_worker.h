/*-------------------------------------------------------------------------
 *
 * rest_worker.h
 *	  The background workers that serve skade's Iceberg REST catalog
 *	  (see rest_worker.c).
 *
 * IDENTIFICATION
 *	  src/rest_worker.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_REST_WORKER_H
#define SKADE_REST_WORKER_H

#include "fmgr.h"

extern void SkadeRestWorkersRegister(void);
extern PGDLLEXPORT void skade_rest_worker_main(Datum arg);

#endif							/* SKADE_REST_WORKER_H */
