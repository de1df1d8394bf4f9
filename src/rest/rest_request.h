/*-------------------------------------------------------------------------
 *
 * rest_request.h
 *	  A REST request and its answer as bytes between the listener and an
 *	  executor, and the decoding of paths (see rest_request.c).
 *
 * IDENTIFICATION
 *	  src/rest/rest_request.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_REST_REQUEST_H
#define SKADE_REST_REQUEST_H

#include "rest/rest_http.h"

extern const char *RestPathProblem(const RestRequest *req);
extern void RestRequestWriteHead(StringInfo out, const RestRequest *req);
extern RestRequest *RestRequestRead(const char *data, Size len);
extern void RestResponseWriteHead(StringInfo out, const RestResponse *resp);
extern void RestResponseRead(const char *data, Size len, RestResponse *resp);
extern void RestErrorAnswer(RestResponse *resp, int status, const char *type, const char *message);

#endif							/* SKADE_REST_REQUEST_H */
