/*-------------------------------------------------------------------------
 *
 * rest_metrics.c
 *	  What the REST listener counts, and GET /metrics in Prometheus' text
 *	  format (version 0.0.4): requests by route and status, latency
 *	  histograms by route, connections, executors, the queue, requests
 *	  refused or timed out, connections cut and why, Idempotency-Key
 *	  replays, and skade's cache, commit and S3 counters from shared memory.
 *
 * Invariants
 *   - Counted in the listener only (one process: no locks); an answer is
 *     counted when it is queued on its connection, its latency from the
 *     moment all of its request had arrived.  The counters start at zero
 *     when the listener starts (Prometheus' counter resets).
 *   - Routes are the route patterns of rest_routes.c (bounded: no label
 *     holds a name from a request); answers the listener gives itself are
 *     route "listener".
 *
 * IDENTIFICATION
 *	  src/rest/rest_metrics.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "cache/blob_cache.h"
#include "cache/l0_cache.h"
#include "cache/manifest_cache.h"
#include "rest/rest_metrics.h"
#include "rest/rest_pool.h"
#include "util/shmem.h"

#define MAX_SERIES	128
#define NBUCKETS	14

static const double bounds[NBUCKETS] =
{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};

static const char *const cut_names[REST_CUT_KINDS] =
{"idle", "body_deadline", "slow_body", "slow_reader", "reclaimed"};

/* one (method, route, status) */
typedef struct Series
{
	char		method[8];
	char		route[64];
	int			status;
	uint64		count;
} Series;

/* one (method, route)'s latencies */
typedef struct Histogram
{
	char		method[8];
	char		route[64];
	uint64		buckets[NBUCKETS];
	uint64		count;
	double		sum;
} Histogram;

static Series series[MAX_SERIES];
static int	nseries = 0;
static Histogram histograms[MAX_SERIES];
static int	nhistograms = 0;
static uint64 cuts[REST_CUT_KINDS];
static uint64 replays = 0;

static void label(StringInfo out, const char *method, const char *route);
static void put_caches(StringInfo out);

/*
 * RestMetricsRequest
 *		Count an answer (route NULL: the listener's own).
 */
void
RestMetricsRequest(const char *method, const char *route, int status, bool replayed,
				   double seconds)
{
	int			i;
	Histogram  *h = NULL;
	Series	   *s = NULL;

	route = route ? route : "listener";
	if (replayed)
		replays++;
	for (i = 0; i < nseries && s == NULL; i++)
		if (series[i].status == status && strcmp(series[i].route, route) == 0 &&
			strcmp(series[i].method, method) == 0)
			s = &series[i];
	if (s == NULL && nseries < MAX_SERIES)
	{
		s = &series[nseries++];
		strlcpy(s->method, method, sizeof(s->method));
		strlcpy(s->route, route, sizeof(s->route));
		s->status = status;
	}
	if (s)
		s->count++;
	for (i = 0; i < nhistograms && h == NULL; i++)
		if (strcmp(histograms[i].route, route) == 0 && strcmp(histograms[i].method, method) == 0)
			h = &histograms[i];
	if (h == NULL && nhistograms < MAX_SERIES)
	{
		h = &histograms[nhistograms++];
		strlcpy(h->method, method, sizeof(h->method));
		strlcpy(h->route, route, sizeof(h->route));
	}
	if (h == NULL)
		return;
	for (i = 0; i < NBUCKETS; i++)
		if (seconds <= bounds[i])
			h->buckets[i]++;
	h->count++;
	h->sum += seconds;
}

/* RestMetricsCut: count a connection shut down. */
void
RestMetricsCut(RestCut why)
{
	cuts[why]++;
}

/* {method="GET",route="..."} without the closing brace */
static void
label(StringInfo out, const char *method, const char *route)
{
	/* (methods and routes are the server's own words: nothing to escape) */
	appendStringInfo(out, "{method=\"%s\",route=\"%s\"", method, route);
}

/*
 * The caches' figures, one family at a time (Prometheus' text format keeps
 * a family's samples together).
 */
static void
put_caches(StringInfo out)
{
	static const char *const names[2] = {"l0_metadata", "l05_manifests"};
	static const char *const families[5][3] = {
		{"skade_cache_hits_total", "counter", "Lookups a shared-memory cache answered."},
		{"skade_cache_misses_total", "counter", "Lookups a shared-memory cache could not answer."},
		{"skade_cache_evictions_total", "counter", "Entries evicted from a shared-memory cache."},
		{"skade_cache_bytes", "gauge", "Bytes a shared-memory cache holds."},
		{"skade_cache_capacity_bytes", "gauge", "Bytes a shared-memory cache may hold."}};
	SkadeBlobCache *caches[2] = {L0Cache(), ManifestCache()};
	SkadeBlobCacheStats st[2];
	int			f;
	int			i;

	for (i = 0; i < 2; i++)
		if (caches[i])
			SkadeBlobCacheStatsGet(caches[i], &st[i]);
	for (f = 0; f < 5; f++)
	{
		appendStringInfo(out, "# HELP %s %s\n# TYPE %s %s\n",
						 families[f][0], families[f][2], families[f][0], families[f][1]);
		for (i = 0; i < 2; i++)
		{
			int64		v;

			if (caches[i] == NULL)
				continue;
			v = f == 0 ? st[i].hits : f == 1 ? st[i].misses : f == 2 ? st[i].evictions
				: f == 3 ? st[i].bytes : st[i].capacity;
			appendStringInfo(out, "%s{cache=\"%s\"} " INT64_FORMAT "\n", families[f][0], names[i], v);
		}
	}
}

/*
 * RestMetricsRender
 *		Every metric in Prometheus' text format.
 */
void
RestMetricsRender(StringInfo out)
{
	RestPoolStats ps;
	int			i;
	int			j;

	RestPoolGetStats(&ps);
	appendStringInfoString(out, "# HELP skade_rest_requests_total REST answers by route and status.\n"
						   "# TYPE skade_rest_requests_total counter\n");
	for (i = 0; i < nseries; i++)
	{
		appendStringInfoString(out, "skade_rest_requests_total");
		label(out, series[i].method, series[i].route);
		appendStringInfo(out, ",status=\"%d\"} " UINT64_FORMAT "\n", series[i].status, series[i].count);
	}
	appendStringInfoString(out, "# HELP skade_rest_request_duration_seconds Time from a request's arrival to its answer.\n"
						   "# TYPE skade_rest_request_duration_seconds histogram\n");
	for (i = 0; i < nhistograms; i++)
	{
		Histogram  *h = &histograms[i];

		for (j = 0; j < NBUCKETS; j++)
		{
			appendStringInfoString(out, "skade_rest_request_duration_seconds_bucket");
			label(out, h->method, h->route);
			appendStringInfo(out, ",le=\"%g\"} " UINT64_FORMAT "\n", bounds[j], h->buckets[j]);
		}
		appendStringInfoString(out, "skade_rest_request_duration_seconds_bucket");
		label(out, h->method, h->route);
		appendStringInfo(out, ",le=\"+Inf\"} " UINT64_FORMAT "\n", h->count);
		appendStringInfoString(out, "skade_rest_request_duration_seconds_sum");
		label(out, h->method, h->route);
		appendStringInfo(out, "} %.6f\n", h->sum);
		appendStringInfoString(out, "skade_rest_request_duration_seconds_count");
		label(out, h->method, h->route);
		appendStringInfo(out, "} " UINT64_FORMAT "\n", h->count);
	}
	appendStringInfo(out,
					 "# HELP skade_rest_in_flight Requests running in an executor.\n"
					 "# TYPE skade_rest_in_flight gauge\nskade_rest_in_flight %d\n"
					 "# HELP skade_rest_queued Requests waiting for an executor.\n"
					 "# TYPE skade_rest_queued gauge\nskade_rest_queued %d\n"
					 "# HELP skade_rest_executors Executors running or starting.\n"
					 "# TYPE skade_rest_executors gauge\nskade_rest_executors %d\n"
					 "# HELP skade_rest_executors_started_total Executors started.\n"
					 "# TYPE skade_rest_executors_started_total counter\nskade_rest_executors_started_total " UINT64_FORMAT "\n"
					 "# HELP skade_rest_refused_total Requests answered 503 at once: every executor busy and the queue full.\n"
					 "# TYPE skade_rest_refused_total counter\nskade_rest_refused_total " UINT64_FORMAT "\n"
					 "# HELP skade_rest_queue_timeouts_total Requests that waited skade.rest_queue_timeout for an executor.\n"
					 "# TYPE skade_rest_queue_timeouts_total counter\nskade_rest_queue_timeouts_total " UINT64_FORMAT "\n"
					 "# HELP skade_rest_lost_total Requests whose executor ended while running them.\n"
					 "# TYPE skade_rest_lost_total counter\nskade_rest_lost_total " UINT64_FORMAT "\n"
					 "# HELP skade_rest_idempotent_replays_total Answers replayed for an Idempotency-Key.\n"
					 "# TYPE skade_rest_idempotent_replays_total counter\nskade_rest_idempotent_replays_total " UINT64_FORMAT "\n",
					 ps.busy, ps.queued, ps.executors, ps.started, ps.refused_busy,
					 ps.queue_timeouts, ps.lost, replays);
	appendStringInfoString(out, "# HELP skade_rest_connections_cut_total Connections shut down by the listener, by reason.\n"
						   "# TYPE skade_rest_connections_cut_total counter\n");
	for (i = 0; i < REST_CUT_KINDS; i++)
		appendStringInfo(out, "skade_rest_connections_cut_total{reason=\"%s\"} " UINT64_FORMAT "\n",
						 cut_names[i], cuts[i]);
	put_caches(out);
	if (skade_shared)
		appendStringInfo(out,
						 "# HELP skade_commits_total Pointer changes logged, all paths.\n"
						 "# TYPE skade_commits_total counter\nskade_commits_total " UINT64_FORMAT "\n"
						 "# HELP skade_commit_conflicts_total Compare-and-swap commits lost through the SQL API.\n"
						 "# TYPE skade_commit_conflicts_total counter\nskade_commit_conflicts_total " UINT64_FORMAT "\n"
						 "# HELP skade_commits_rebased_total Stale appends rebased onto their branch's head instead of a 409.\n"
						 "# TYPE skade_commits_rebased_total counter\nskade_commits_rebased_total " UINT64_FORMAT "\n"
						 "# HELP skade_commit_groups_total Group commits that made other requests' commits too.\n"
						 "# TYPE skade_commit_groups_total counter\nskade_commit_groups_total " UINT64_FORMAT "\n"
						 "# HELP skade_commits_grouped_total Commits made by another request's group commit.\n"
						 "# TYPE skade_commits_grouped_total counter\nskade_commits_grouped_total " UINT64_FORMAT "\n"
						 "# HELP skade_update_table_total Commits to existing tables through update_table, by the engine that applied them.\n"
						 "# TYPE skade_update_table_total counter\n"
						 "skade_update_table_total{engine=\"c\"} " UINT64_FORMAT "\n"
						 "skade_update_table_total{engine=\"plpgsql\"} " UINT64_FORMAT "\n",
						 pg_atomic_read_u64(&skade_shared->commits),
						 pg_atomic_read_u64(&skade_shared->conflicts),
						 pg_atomic_read_u64(&skade_shared->rebased),
						 pg_atomic_read_u64(&skade_shared->group_commits),
						 pg_atomic_read_u64(&skade_shared->group_members),
						 pg_atomic_read_u64(&skade_shared->update_c),
						 pg_atomic_read_u64(&skade_shared->update_engine));
	if (skade_shared)
		appendStringInfo(out,
						 "# HELP skade_s3_requests_total S3 request attempts by every process.\n"
						 "# TYPE skade_s3_requests_total counter\nskade_s3_requests_total " UINT64_FORMAT "\n"
						 "# HELP skade_s3_retries_total S3 request attempts that were retries.\n"
						 "# TYPE skade_s3_retries_total counter\nskade_s3_retries_total " UINT64_FORMAT "\n",
						 pg_atomic_read_u64(&skade_shared->s3_requests),
						 pg_atomic_read_u64(&skade_shared->s3_retries));
}
