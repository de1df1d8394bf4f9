/*-------------------------------------------------------------------------
 *
 * rest_http.h
 *	  What a REST request and its answer are to the routes (rest_routes.c),
 *	  whichever process holds them: the listener parses a request over HTTP
 *	  (rest_http.c), an executor answers it (rest_pool.c, rest_worker.c);
 *	  rest_request.c carries both across and decodes paths.
 *
 * IDENTIFICATION
 *	  src/rest/rest_http.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_REST_HTTP_H
#define SKADE_REST_HTTP_H

#include "rest/rest_request.h"

extern void SkadeRestListen(void);

#endif							/* SKADE_REST_HTTP_H */
