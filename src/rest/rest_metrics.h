/*-------------------------------------------------------------------------
 *
 * rest_metrics.h
 *	  The REST listener's counters and their Prometheus text (see
 *	  rest_metrics.c).
 *
 * IDENTIFICATION
 *	  src/rest/rest_metrics.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_REST_METRICS_H
#define SKADE_REST_METRICS_H

#include "lib/stringinfo.h"

/* why the listener shut a connection down */
typedef enum RestCut
{
	REST_CUT_IDLE,
	REST_CUT_BODY_DEADLINE,
	REST_CUT_SLOW_BODY,
	REST_CUT_SLOW_READER,
	REST_CUT_RECLAIMED,
	REST_CUT_KINDS
} RestCut;

extern void RestMetricsRequest(const char *method, const char *route, int status,
							   bool replayed, double seconds);
extern void RestMetricsCut(RestCut why);
extern void RestMetricsRender(StringInfo out);

#endif							/* SKADE_REST_METRICS_H */
