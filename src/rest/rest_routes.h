/*-------------------------------------------------------------------------
 *
 * rest_routes.h
 *	  The Iceberg REST routes skade serves (see rest_routes.c).
 *
 * IDENTIFICATION
 *	  src/rest/rest_routes.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_REST_ROUTES_H
#define SKADE_REST_ROUTES_H

#include "rest/rest_request.h"

extern void SkadeRestRoute(RestRequest *req, RestResponse *resp);
extern void SkadeRestWarmUp(void);
extern void SkadeRestSweepIdempotency(void);

#endif							/* SKADE_REST_ROUTES_H */
