/*-------------------------------------------------------------------------
 *
 * rest_pool.h
 *	  The REST listener's executors: dynamic background workers that run
 *	  requests, and the bounded queue in front of them (see rest_pool.c).
 *
 * IDENTIFICATION
 *	  src/rest/rest_pool.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_REST_POOL_H
#define SKADE_REST_POOL_H

#include "datatype/timestamp.h"
#include "lib/ilist.h"
#include "storage/shm_mq.h"

#include "rest/rest_request.h"

/* a request handed to the pool (owned by the caller; see RestPoolSubmit) */
typedef struct RestJob
{
	dlist_node	node;			/* in the queue, while queued */
	StringInfoData head;		/* the request's message head */
	const StringInfoData *body; /* sent after it */
	char	   *target;			/* what it may wait for (a table, a namespace's creates), or NULL */
	bool		commit;			/* a commit: a queue timeout answers 409 */
	int			executor;		/* running on it, or -1 */
	bool		queued;
	int			handoffs;		/* executors that ended before it was sent */
	TimestampTz submitted;
	void	   *owner;			/* the caller's (RestJobDone gets the job back) */
} RestJob;

/*
 * Called with the job's answer once (in the listener's context for the
 * answer: the callee copies what it keeps); after it the pool holds nothing
 * of the job.
 */
typedef void (*RestJobDone) (RestJob *job, RestResponse *resp);

/* gauges and counters for /metrics */
typedef struct RestPoolStats
{
	int			executors;		/* running or starting */
	int			busy;
	int			queued;
	uint64		started;		/* executors started since the listener began */
	uint64		refused_busy;	/* 503 at once: every executor busy, queue full */
	uint64		queue_timeouts;
	uint64		lost;			/* requests whose executor ended under them */
} RestPoolStats;

extern void RestPoolStart(RestJobDone done);
extern void RestPoolSubmit(RestJob *job);
extern bool RestPoolWithdraw(RestJob *job);
extern void RestPoolPoll(void);
extern void RestPoolStop(void);
extern void RestPoolGetStats(RestPoolStats *stats);


/* the executor's side of its queues (rest_worker.c) */
extern void RestExecutorAttach(Datum arg, shm_mq_handle **in, shm_mq_handle **out);

#endif							/* SKADE_REST_POOL_H */
