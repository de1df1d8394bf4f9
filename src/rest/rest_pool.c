/*-------------------------------------------------------------------------
 *
 * rest_pool.c
 *	  The REST listener's executors: between skade.rest_workers and
 *	  skade.rest_max_workers dynamic background workers, each a session on
 *	  skade.rest_database that runs one request at a time, fed through a
 *	  pair of shm_mq queues; and the bounded queue of requests waiting for
 *	  one.  Runs in the listener only (rest_http.c), never blocks it.
 *
 * Invariants
 *   - A request that waits (a row lock, storage, a slow statement) holds
 *     one executor and nothing else: the listener goes on accepting,
 *     parsing and answering, and other requests run on other executors.
 *   - Requests that name one table (its routes' path up to the table;
 *     reads and changes counted apart), and the creates or registers of
 *     tables (or views) in one namespace, run on at most half of
 *     skade.rest_max_workers executors at once (at least one); more of them
 *     wait in the queue, so a table whose row lock is held, or whose
 *     storage hangs, never takes every executor, and commits waiting for
 *     its row lock never hold up its loads.
 *   - A request finds an idle executor, else one is started (up to
 *     skade.rest_max_workers; while any is below it one idle executor is
 *     kept spare, warmed up before its first request), else it waits in the
 *     queue (at most
 *     skade.rest_max_queue requests, each at most skade.rest_queue_timeout);
 *     a full queue answers 503 with Retry-After at once, a timed-out wait
 *     503, or 409 for a commit (it certainly did not happen: Iceberg's
 *     clients refresh and retry).
 *   - Executors above skade.rest_workers that stay idle for
 *     EXECUTOR_IDLE_LIFETIME are retired (their queue detached: they exit
 *     0); one that ends under a request (terminated, FATAL) loses it: a
 *     500 (the change's state is unknown).  A request it had not received
 *     whole never ran: it goes back to the head of the queue, for another
 *     executor (503 once MAX_HANDOFFS executors ended under it, its queue
 *     wait still bounded by skade.rest_queue_timeout) — the listener keeps
 *     at least skade.rest_workers
 *     executors running, starting one at most every RESTART_BACKOFF_MS
 *     after one ended.
 *   - Each executor's DSM segment holds its two queues (listener to
 *     executor, executor to listener) of QUEUE_SIZE bytes; the executor
 *     attaches it by the handle in its bgw_main_arg.  The listener creates
 *     it and detaches it once the executor is gone.
 *
 * Memory: jobs belong to the caller (rest_http.c); the pool keeps pointers
 * to them until it hands them back through the RestJobDone callback.
 *
 * IDENTIFICATION
 *	  src/rest/rest_pool.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "miscadmin.h"
#include "postmaster/bgworker.h"
#include "storage/dsm.h"
#include "storage/ipc.h"
#include "storage/proc.h"
#include "storage/shm_mq.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "util/guc.h"
#include "rest/rest_pool.h"
#include "rest/rest_request.h"

#define QUEUE_SIZE		(256 * 1024)
#define MAX_EXECUTORS	256
#define EXECUTOR_IDLE_LIFETIME_MS	60000
#define RESTART_BACKOFF_MS	1000
#define MAX_HANDOFFS	3		/* executors a request may find ended */

typedef enum ExecutorState
{
	EX_NONE = 0,				/* slot unused */
	EX_IDLE,
	EX_BUSY,					/* job assigned: being sent, or running */
} ExecutorState;

typedef struct Executor
{
	ExecutorState state;
	BackgroundWorkerHandle *handle;
	dsm_segment *seg;
	shm_mq_handle *to;			/* requests */
	shm_mq_handle *from;		/* answers */
	RestJob    *job;
	bool		sent;			/* the job's message is all in the queue */
	TimestampTz idle_since;
} Executor;

/* ---- Local variables ---- */

static Executor executors[MAX_EXECUTORS];
static dlist_head queue = DLIST_STATIC_INIT(queue);
static int	nqueued = 0;
static RestJobDone job_done = NULL;
static RestPoolStats stats;
static TimestampTz last_start_failure = 0;

static int	start_executor(void);
static void stop_executor(int i, bool retire);
static void assign(int i, RestJob *job);
static void push(Executor *e);
static void pull(int i);
static void finish(RestJob *job, int status, const char *type, const char *message);
static int	idle_executor(void);
static int	live_executors(void);
static bool target_full(const RestJob *job);
static void unqueue(RestJob *job);
static void dispatch_queue(void);
static void expire_queue(void);
static void keep_pool(void);

/*
 * RestPoolStart
 *		Start skade.rest_workers executors; answers go to done.
 */
void
RestPoolStart(RestJobDone done)
{
	job_done = done;
	keep_pool();
}

/*
 * RestPoolSubmit
 *		Run job: on an idle executor, a new one, or after waiting in the
 *		queue; answered through the RestJobDone callback (at once when the
 *		pool is full: 503).
 */
void
RestPoolSubmit(RestJob *job)
{
	int			i;

	job->executor = -1;
	job->queued = false;
	job->handoffs = 0;
	job->submitted = GetCurrentTimestamp();
	if (!target_full(job))
	{
		if ((i = idle_executor()) < 0 && live_executors() < Min(skade_rest_max_workers, MAX_EXECUTORS))
			i = start_executor();
		if (i >= 0)
		{
			assign(i, job);
			return;
		}
	}
	if (nqueued >= skade_rest_max_queue)
	{
		stats.refused_busy++;
		finish(job, 503, "ServiceUnavailableException",
			   "the REST server is busy: every worker is serving a request and the queue is full");
		return;
	}
	job->queued = true;
	dlist_push_tail(&queue, &job->node);
	nqueued++;
}

/*
 * RestPoolWithdraw
 *		The job's client went away: a queued job leaves the queue (it is
 *		never answered).  True if the pool still holds the job: it runs,
 *		and its answer comes through the callback all the same.
 */
bool
RestPoolWithdraw(RestJob *job)
{
	if (job->queued)
	{
		unqueue(job);
	}
	return job->executor >= 0;
}

/*
 * RestPoolPoll
 *		Move requests and answers, start and retire executors, expire
 *		waits.  Called on every wake-up of the listener.
 */
void
RestPoolPoll(void)
{
	int			i;

	for (i = 0; i < MAX_EXECUTORS; i++)
	{
		Executor   *e = &executors[i];

		if (e->state == EX_BUSY)
		{
			if (!e->sent)
				push(e);
			if (e->state == EX_BUSY && e->sent)
				pull(i);
		}
		else if (e->state == EX_IDLE)
		{
			pid_t		pid;

			if (GetBackgroundWorkerPid(e->handle, &pid) == BGWH_STOPPED)
				stop_executor(i, false);
		}
	}
	expire_queue();
	dispatch_queue();
	keep_pool();
}

/* RestPoolStop: detach every executor's queues (they exit). */
void
RestPoolStop(void)
{
	int			i;

	for (i = 0; i < MAX_EXECUTORS; i++)
		if (executors[i].state != EX_NONE)
			stop_executor(i, true);
}

/* RestPoolGetStats: the pool's figures now. */
void
RestPoolGetStats(RestPoolStats *out)
{
	int			i;

	*out = stats;
	out->executors = 0;
	out->busy = 0;
	for (i = 0; i < MAX_EXECUTORS; i++)
	{
		out->executors += executors[i].state != EX_NONE;
		out->busy += executors[i].state == EX_BUSY;
	}
	out->queued = nqueued;
}

/* ------------------------------------------------------------ executors */

/*
 * A new executor in a free slot (its DSM segment and queues made, the
 * worker registered); -1 if none can be started now.
 */
static int
start_executor(void)
{
	BackgroundWorker worker = {0};
	Executor   *e = NULL;
	int			i;
	shm_mq	   *to;
	shm_mq	   *from;

	if (last_start_failure != 0 &&
		!TimestampDifferenceExceeds(last_start_failure, GetCurrentTimestamp(), RESTART_BACKOFF_MS))
		return -1;
	for (i = 0; i < MAX_EXECUTORS && e == NULL; i++)
		if (executors[i].state == EX_NONE)
			e = &executors[i];
	if (e == NULL)
		return -1;
	i = e - executors;
	e->seg = dsm_create(2 * QUEUE_SIZE, 0);
	dsm_pin_mapping(e->seg);
	to = shm_mq_create(dsm_segment_address(e->seg), QUEUE_SIZE);
	from = shm_mq_create((char *) dsm_segment_address(e->seg) + QUEUE_SIZE, QUEUE_SIZE);
	shm_mq_set_sender(to, MyProc);
	shm_mq_set_receiver(from, MyProc);

	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_ConsistentState;
	worker.bgw_restart_time = BGW_NEVER_RESTART;
	worker.bgw_main_arg = UInt32GetDatum(dsm_segment_handle(e->seg));
	worker.bgw_notify_pid = MyProcPid;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "skade");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "skade_rest_executor_main");
	snprintf(worker.bgw_name, BGW_MAXLEN, "skade rest worker %d", i);
	snprintf(worker.bgw_type, BGW_MAXLEN, "skade rest worker");
	if (!RegisterDynamicBackgroundWorker(&worker, &e->handle))
	{
		static TimestampTz last_said = 0;

		dsm_detach(e->seg);
		e->seg = NULL;
		last_start_failure = GetCurrentTimestamp();
		/* (said once a minute at most: demand goes on while it lasts) */
		if (TimestampDifferenceExceeds(last_said, last_start_failure, 60000))
		{
			last_said = last_start_failure;
			ereport(LOG,
					(errmsg("skade REST server: could not start a worker: no background worker slot is free"),
					 errhint("Raise max_worker_processes, or lower skade.rest_max_workers.")));
		}
		return -1;
	}
	last_start_failure = 0;
	e->to = shm_mq_attach(to, e->seg, e->handle);
	e->from = shm_mq_attach(from, e->seg, e->handle);
	e->state = EX_IDLE;
	e->job = NULL;
	e->idle_since = GetCurrentTimestamp();
	stats.started++;
	return i;
}

/*
 * Retire executor i (retire), or forget one that ended: its queues
 * detached, its slot freed.  A job it held is answered: 503 if it never got
 * all of its request (it cannot have run it), else 500 (a change it ran may
 * or may not have been committed).  After an executor ended, the next start
 * waits RESTART_BACKOFF_MS (no loop of workers failing at once).
 */
static void
stop_executor(int i, bool retire)
{
	Executor   *e = &executors[i];

	if (e->job)
	{
		RestJob    *job = e->job;

		e->job = NULL;
		job->executor = -1;
		if (e->sent)
		{
			stats.lost++;
			finish(job, 500, "InternalServerError",
				   "the worker serving this request ended; a change it made may or may not have been committed");
		}
		else if (!retire && ++job->handoffs < MAX_HANDOFFS)
		{
			/*
			 * it never had the whole request and its executor ended (not
			 * retired: at shutdown nothing runs it): first in line for another
			 */
			job->queued = true;
			dlist_push_head(&queue, &job->node);
			nqueued++;
		}
		else
		{
			stats.lost++;
			finish(job, 503, "ServiceUnavailableException",
				   "the worker for this request ended before it received the request; nothing was done");
		}
	}
	if (!retire)
		last_start_failure = GetCurrentTimestamp();
	shm_mq_detach(e->to);
	shm_mq_detach(e->from);
	dsm_detach(e->seg);
	pfree(e->handle);
	memset(e, 0, sizeof(*e));
}

/* Hand job to executor i. */
static void
assign(int i, RestJob *job)
{
	Executor   *e = &executors[i];

	e->state = EX_BUSY;
	e->job = job;
	e->sent = false;
	job->executor = i;
	push(e);
}

/* Send as much of e's job as its queue takes now. */
static void
push(Executor *e)
{
	shm_mq_iovec iov[2];
	shm_mq_result r;

	iov[0].data = e->job->head.data;
	iov[0].len = e->job->head.len;
	iov[1].data = e->job->body->data;
	iov[1].len = e->job->body->len;
	r = shm_mq_sendv(e->to, iov, 2, true, true);
	if (r == SHM_MQ_SUCCESS)
		e->sent = true;
	else if (r == SHM_MQ_DETACHED)
		stop_executor(e - executors, false);
}

/* Take executor i's answer if it is there. */
static void
pull(int i)
{
	Executor   *e = &executors[i];
	Size		n;
	void	   *data;
	shm_mq_result r = shm_mq_receive(e->from, &n, &data, true);

	if (r == SHM_MQ_WOULD_BLOCK)
		return;
	if (r == SHM_MQ_DETACHED)
	{
		stop_executor(i, false);
		return;
	}
	{
		RestJob    *job = e->job;
		RestResponse resp = {0};
		MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "skade rest answer",
												  ALLOCSET_DEFAULT_SIZES);
		MemoryContext old = MemoryContextSwitchTo(cxt);

		RestResponseRead(data, n, &resp);
		e->job = NULL;
		e->state = EX_IDLE;
		e->idle_since = GetCurrentTimestamp();
		job->executor = -1;
		job_done(job, &resp);
		MemoryContextSwitchTo(old);
		MemoryContextDelete(cxt);
	}
}

/* Answer job without running it. */
static void
finish(RestJob *job, int status, const char *type, const char *message)
{
	RestResponse resp = {0};

	initStringInfo(&resp.body);
	RestErrorAnswer(&resp, status, type, message);
	job->executor = -1;
	job_done(job, &resp);
	pfree(resp.body.data);
}

static int
idle_executor(void)
{
	int			i;

	for (i = 0; i < MAX_EXECUTORS; i++)
		if (executors[i].state == EX_IDLE)
			return i;
	return -1;
}

static int
live_executors(void)
{
	int			i;
	int			n = 0;

	for (i = 0; i < MAX_EXECUTORS; i++)
		n += executors[i].state != EX_NONE;
	return n;
}

/* Does job's table already run on as many executors as one table may? */
static bool
target_full(const RestJob *job)
{
	int			cap = Max(1, Min(skade_rest_max_workers, MAX_EXECUTORS) / 2);
	int			n = 0;
	int			i;

	if (job->target == NULL)
		return false;
	for (i = 0; i < MAX_EXECUTORS; i++)
		if (executors[i].state == EX_BUSY && executors[i].job->target &&
			strcmp(executors[i].job->target, job->target) == 0)
			n++;
	return n >= cap;
}

static void
unqueue(RestJob *job)
{
	dlist_delete(&job->node);
	job->queued = false;
	nqueued--;
}

/* Queued jobs, oldest first, onto idle (or new) executors. */
static void
dispatch_queue(void)
{
	dlist_mutable_iter it;

	dlist_foreach_modify(it, &queue)
	{
		RestJob    *job = dlist_container(RestJob, node, it.cur);
		int			i;

		if (target_full(job))
			continue;
		if ((i = idle_executor()) < 0 && live_executors() < Min(skade_rest_max_workers, MAX_EXECUTORS))
			i = start_executor();
		if (i < 0)
			return;
		unqueue(job);
		assign(i, job);
	}
}

/* Jobs that waited longer than skade.rest_queue_timeout are answered. */
static void
expire_queue(void)
{
	dlist_mutable_iter it;
	TimestampTz now = GetCurrentTimestamp();

	dlist_foreach_modify(it, &queue)
	{
		RestJob    *job = dlist_container(RestJob, node, it.cur);

		if (!TimestampDifferenceExceeds(job->submitted, now, skade_rest_queue_timeout))
			continue;
		unqueue(job);
		stats.queue_timeouts++;
		if (job->commit)
			finish(job, 409, "CommitFailedException",
				   "the table is busy with other requests; nothing was committed: refresh and retry");
		else
			finish(job, 503, "ServiceUnavailableException",
				   "the REST server is busy: no worker became free in time");
	}
}

/*
 * At least skade.rest_workers executors; those above it idle for too long
 * (or above skade.rest_max_workers, after a reload) retired.
 */
static void
keep_pool(void)
{
	TimestampTz now = GetCurrentTimestamp();
	int			live = live_executors();
	int			i;

	while (live < Min(skade_rest_workers, MAX_EXECUTORS) && start_executor() >= 0)
		live++;
	/* a spare: the next request finds an executor started and warmed up */
	if (idle_executor() < 0 && live < Min(skade_rest_max_workers, MAX_EXECUTORS) &&
		start_executor() >= 0)
		live++;
	for (i = MAX_EXECUTORS - 1; i >= 0 && live > skade_rest_workers; i--)
	{
		Executor   *e = &executors[i];

		if (e->state == EX_IDLE &&
			(live > skade_rest_max_workers ||
			 TimestampDifferenceExceeds(e->idle_since, now, EXECUTOR_IDLE_LIFETIME_MS)))
		{
			stop_executor(i, true);
			live--;
		}
	}
}

/* ------------------------------------------------------ executor side */

/*
 * RestExecutorAttach
 *		In an executor: attach the segment named by the worker's argument
 *		and its two queues (exits if the listener is gone already).
 */
void
RestExecutorAttach(Datum arg, shm_mq_handle **in, shm_mq_handle **out)
{
	dsm_segment *seg = dsm_attach(DatumGetUInt32(arg));
	shm_mq	   *to;
	shm_mq	   *from;

	if (seg == NULL)
		proc_exit(0);
	dsm_pin_mapping(seg);
	to = (shm_mq *) dsm_segment_address(seg);
	from = (shm_mq *) ((char *) dsm_segment_address(seg) + QUEUE_SIZE);
	shm_mq_set_receiver(to, MyProc);
	shm_mq_set_sender(from, MyProc);
	*in = shm_mq_attach(to, seg, NULL);
	*out = shm_mq_attach(from, seg, NULL);
}
