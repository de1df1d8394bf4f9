/*-------------------------------------------------------------------------
 *
 * s3_client.c
 *	  HTTP requests to an S3 endpoint over libcurl (the only file that
 *	  calls libcurl): signed with SigV4, several at once, retried with
 *	  backoff, interruptible.
 *
 * Invariants
 *   - Every attempt is signed afresh (sigv4.c; x-amz-date of its start) with
 *     host, x-amz-date, x-amz-content-sha256 (the SHA-256 of the body, never
 *     UNSIGNED-PAYLOAD), the session token if any, and for PUT Content-Type,
 *     Content-MD5 (the server checks the bytes) and If-None-Match: * when
 *     create-only.  The Host header sent is the one signed; the path is sent
 *     as is (CURLOPT_PATH_AS_IS: curl never rewrites "." or ".."), only
 *     http and https, no redirects followed.
 *   - Every call started (S3Start; S3Perform starts and finishes a batch)
 *     runs concurrently with the others in flight on one curl multi handle
 *     kept for the backend's life, so connections are reused across calls;
 *     a call in flight makes progress whenever any call is being finished
 *     (S3Finish), and its socket buffers fill meanwhile.  The loop waits on
 *     curl's sockets and the process latch together (WaitEventSet): with
 *     interruptible, cancel, statement_timeout and termination act
 *     mid-transfer (CHECK_FOR_INTERRUPTS between waits); an ERROR out of the
 *     loop abandons every transfer in flight (S3AbandonAll; also the
 *     callers' duty at transaction end).  Without interruptible (commit and
 *     abort callbacks) the loop only waits, bounded by the timeouts.
 *   - Each attempt is bounded by skade.s3_connect_timeout and
 *     skade.s3_request_timeout; transport failures, 408, 429, 5xx and a
 *     body whose length or MD5 ETag disagree with it are retried up to
 *     skade.s3_max_retries times after an exponential backoff with jitter
 *     (from 100 ms, at most 5 s); the outcome of the last attempt is kept.
 *   - libcurl's callbacks never raise: they copy into memory reserved with
 *     MCXT_ALLOC_NO_OOM and report failure to curl by their return value
 *     (too big, out of memory); errors are raised only from the loop,
 *     outside any curl call.  A response body never exceeds max_bytes.
 *   - A GET's body is checked: its length against Content-Length, and
 *     against a plain MD5 ETag (32 hex digits, unless the object is
 *     encrypted with KMS or a customer key, whose ETags are not MD5s).
 *   - A call without credentials is a plain HTTP request (rest_oidc.c's
 *     discovery and key documents): nothing signed, no x-amz header, no
 *     ETag check; the same transport, bounds and retries otherwise (a call
 *     may ask for its own time-out and for one attempt only).
 *
 * Memory: response bodies (and error codes) are allocated in the context
 * current at S3Start; each call's bookkeeping in its own "skade s3
 * transfer" context, deleted when the call is finished or abandoned; curl
 * allocates its own (handles, header lists) and they are freed on every
 * path.
 *
 * IDENTIFICATION
 *	  src/io/s3_client.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include <curl/curl.h>

#include "common/base64.h"
#include "common/md5.h"
#include "common/pg_prng.h"
#include "miscadmin.h"
#include "nodes/pg_list.h"
#include "pgtime.h"
#include "storage/latch.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "util/guc.h"
#include "io/s3_client.h"
#include "util/shmem.h"
#include "util/sigv4.h"

#define MAX_SOCKETS			256
#define BACKOFF_FIRST_MS	100
#define BACKOFF_MAX_MS		5000
#define ERROR_BODY_MAX		(64 * 1024)

/* one call's attempts */
typedef struct Attempt
{
	MemoryContext cxt;			/* this, its headers' text */
	S3Call	   *call;
	CURL	   *easy;			/* NULL between attempts */
	struct curl_slist *headers;
	char		payload_hash[65];
	char		content_md5[32];
	TimestampTz retry_at;		/* when the next attempt may start */
	bool		oom;
	char		etag[80];		/* of the response being received */
	int64		content_length; /* -1: none */
	bool		encrypted;		/* KMS or customer key: no MD5 ETag */
	MemoryContext body_cxt;
	char		errbuf[CURL_ERROR_SIZE];
} Attempt;

/* a socket curl asked us to watch */
typedef struct Watched
{
	curl_socket_t fd;
	int			what;			/* CURL_POLL_IN, _OUT, _INOUT */
} Watched;

/* ---- Local variables ---- */

static CURLM *multi = NULL;		/* for the backend's life: its connections */
static List *inflight = NIL;	/* Attempt, not finished (in TopMemoryContext) */
static Watched watched[MAX_SOCKETS];
static int	nwatched = 0;
static long timer_ms = -1;		/* curl's timer, from timer_set_at */
static TimestampTz timer_set_at = 0;

static void ensure_multi(void);
static int	socket_cb(CURL *easy, curl_socket_t s, int what, void *userp, void *socketp);
static int	timer_cb(CURLM *m, long timeout_ms, void *userp);
static void prepare(Attempt *a);
static void start_attempt(Attempt *a);
static void drop_elapsed(char *s);
static void sign_headers(Attempt *a);
static void plain_headers(Attempt *a);
static void set_headers(Attempt *a, struct curl_slist *l);
static void finish_attempt(Attempt *a, CURLcode rc);
static bool retryable(const Attempt *a, CURLcode rc);
static void drop_easy(Attempt *a);
static void drive(bool interruptible);
static void wait_and_drive(void);
static void drain_done(void);
static void forget(Attempt *a);
static size_t write_cb(char *ptr, size_t size, size_t nmemb, void *userdata);
static size_t header_cb(char *ptr, size_t size, size_t nmemb, void *userdata);
static bool reserve(Attempt *a, size_t more);
static bool body_matches(Attempt *a);

/*
 * S3Perform
 *		Run the n calls to completion (each success or final failure is in
 *		its outcome fields; only interrupts and out-of-memory raise).
 */
void
S3Perform(S3Call **calls, int n, bool interruptible)
{
	int			i;

	for (i = 0; i < n; i++)
		S3Start(calls[i]);
	for (i = 0; i < n; i++)
		S3Finish(calls[i], interruptible);
}

/*
 * S3Start
 *		Put the call in flight; its body goes to the current memory context.
 */
void
S3Start(S3Call *call)
{
	MemoryContext cxt;
	Attempt    *a;
	MemoryContext old;

	ensure_multi();
	/* as the setting is now (a SET applies to the next call) */
	curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long) skade_s3_max_concurrency);
	curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, (long) skade_s3_max_concurrency);
	cxt = AllocSetContextCreate(TopMemoryContext, "skade s3 transfer", ALLOCSET_SMALL_SIZES);
	a = MemoryContextAllocZero(cxt, sizeof(Attempt));
	a->cxt = cxt;
	a->call = call;
	a->body_cxt = CurrentMemoryContext;
	call->done = false;
	call->out_of_memory = false;
	call->priv = a;
	old = MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		prepare(a);
		start_attempt(a);
		MemoryContextSwitchTo(TopMemoryContext);
		inflight = lappend(inflight, a);
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(old);
		drop_easy(a);
		call->priv = NULL;
		call->done = true;
		MemoryContextDelete(cxt);
		PG_RE_THROW();
	}
	PG_END_TRY();
	MemoryContextSwitchTo(old);
}

/*
 * S3Finish
 *		Drive every call in flight until this one is finished.
 */
void
S3Finish(S3Call *call, bool interruptible)
{
	while (!call->done)
		drive(interruptible);
	if (call->out_of_memory)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory receiving \"%s\"", call->url)));
}

/*
 * S3AbandonAll
 *		Take every call in flight out of curl and mark it finished with no
 *		response (after an error, at transaction end).  Never raises.
 */
void
S3AbandonAll(void)
{
	while (inflight != NIL)
	{
		Attempt    *a = linitial(inflight);

		strlcpy(a->call->transport, "abandoned", sizeof(a->call->transport));
		a->call->status = 0;
		a->call->unreachable = false;
		forget(a);
	}
}

/*
 * S3Abandon
 *		Take one call out of flight (finished, no response).  Never raises.
 */
void
S3Abandon(S3Call *call)
{
	Attempt    *a = call->priv;

	if (a == NULL)
		return;
	strlcpy(call->transport, "abandoned", sizeof(call->transport));
	call->status = 0;
	call->unreachable = false;
	forget(a);
}

/* One round: start due retries, wait, let curl work, collect the finished. */
static void
drive(bool interruptible)
{
	ListCell   *lc;

	PG_TRY();
	{
		foreach(lc, inflight)
		{
			Attempt    *a = lfirst(lc);

			if (a->easy == NULL && GetCurrentTimestamp() >= a->retry_at)
			{
				MemoryContext old = MemoryContextSwitchTo(a->cxt);

				start_attempt(a);
				MemoryContextSwitchTo(old);
			}
		}
		wait_and_drive();
		drain_done();
		if (interruptible)
			CHECK_FOR_INTERRUPTS();
	}
	PG_CATCH();
	{
		S3AbandonAll();
		PG_RE_THROW();
	}
	PG_END_TRY();
}

/* The call of a is finished: out of the list, out of curl, its memory freed. */
static void
forget(Attempt *a)
{
	drop_easy(a);
	inflight = list_delete_ptr(inflight, a);
	a->call->done = true;
	a->call->priv = NULL;
	MemoryContextDelete(a->cxt);
}

/* The multi handle and curl itself, once per backend. */
static void
ensure_multi(void)
{
	if (multi)
		return;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK ||
		(multi = curl_multi_init()) == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("could not initialise libcurl")));
	curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, socket_cb);
	curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, timer_cb);
}

static int
socket_cb(CURL *easy, curl_socket_t s, int what, void *userp, void *socketp)
{
	int			i;

	for (i = 0; i < nwatched; i++)
		if (watched[i].fd == s)
			break;
	if (what == CURL_POLL_REMOVE)
	{
		if (i < nwatched)
			watched[i] = watched[--nwatched];
		return 0;
	}
	if (i == nwatched)
	{
		if (nwatched == MAX_SOCKETS)
			return -1;
		nwatched++;
	}
	watched[i].fd = s;
	watched[i].what = what;
	return 0;
}

static int
timer_cb(CURLM *m, long timeout_ms, void *userp)
{
	timer_ms = timeout_ms;
	timer_set_at = GetCurrentTimestamp();
	return 0;
}

/* Once per call: its payload hash and Content-MD5, its outcome reset. */
static void
prepare(Attempt *a)
{
	S3Call	   *c = a->call;
	uint8		md5[16];
	const char *errstr = NULL;

	c->status = 0;
	c->attempts = 0;
	c->s3_code = c->s3_message = NULL;
	memset(&c->body_out, 0, sizeof(StringInfoData));
	SkadeSha256Hex(c->body ? c->body : "", c->body ? c->body_len : 0, a->payload_hash);
	if (c->body)
	{
		int			len;

		if (!pg_md5_binary(c->body, c->body_len, md5, &errstr))
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("could not compute MD5: %s", errstr)));
		len = pg_b64_encode(md5, 16, a->content_md5, sizeof(a->content_md5) - 1);
		a->content_md5[len < 0 ? 0 : len] = '\0';
	}
}

/*
 * Drop libcurl's " after N ms" from a transport message: the same failure
 * reads the same whatever it took (messages are compared, and logged).
 */
static void
drop_elapsed(char *s)
{
	char	   *p = s;

	while ((p = strstr(p, " after ")) != NULL)
	{
		char	   *q = p + 7;

		while (isdigit((unsigned char) *q))
			q++;
		if (q > p + 7 && strncmp(q, " ms", 3) == 0)
			memmove(p, q + 3, strlen(q + 3) + 1);
		else
			p += 7;
	}
}

/* A new attempt: a fresh easy handle, signed, added to the multi handle. */
static void
start_attempt(Attempt *a)
{
	S3Call	   *c = a->call;
	CURL	   *e = curl_easy_init();

	if (e == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("could not create a libcurl handle")));
	a->easy = e;
	c->attempts++;
	if (skade_shared && c->cred)	/* (an OpenID document is no S3 request) */
	{
		pg_atomic_fetch_add_u64(&skade_shared->s3_requests, 1);
		if (c->attempts > 1)
			pg_atomic_fetch_add_u64(&skade_shared->s3_retries, 1);
	}
	c->status = 0;
	c->timed_out = c->too_big = c->corrupt = c->unreachable = false;
	c->transport[0] = '\0';
	c->s3_code = c->s3_message = NULL;
	if (c->body_out.data)
		pfree(c->body_out.data);
	memset(&c->body_out, 0, sizeof(StringInfoData));
	a->etag[0] = '\0';
	a->content_length = -1;
	a->encrypted = false;
	a->errbuf[0] = '\0';
	sign_headers(a);

	curl_easy_setopt(e, CURLOPT_URL, c->url);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(e, CURLOPT_PATH_AS_IS, 1L);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long) skade_s3_connect_timeout);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS,
					 (long) (c->timeout_ms > 0 ? c->timeout_ms : skade_s3_request_timeout));
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, a->headers);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, a->errbuf);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, write_cb);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, a);
	curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, header_cb);
	curl_easy_setopt(e, CURLOPT_HEADERDATA, a);
	curl_easy_setopt(e, CURLOPT_PRIVATE, a);
	if (strcmp(c->method, "HEAD") == 0)
		curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
	else if (strcmp(c->method, "GET") != 0)
		curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, c->method);
	if (c->body)
	{
		curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) c->body_len);
		curl_easy_setopt(e, CURLOPT_POSTFIELDS, c->body);
	}
	if (curl_multi_add_handle(multi, e) != CURLM_OK)
	{
		drop_easy(a);
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("could not start a request to \"%s\"", c->url)));
	}
}

/* The attempt's header list, with a signature of now. */
static void
sign_headers(Attempt *a)
{
	S3Call	   *c = a->call;
	SkadeSigV4Header h[8];
	int			nh = 0;
	char		amz_date[32];
	pg_time_t	now = timestamptz_to_time_t(GetCurrentTimestamp());
	SkadeSigV4Request r = {0};
	char	   *auth;
	int			i;
	struct curl_slist *l = NULL;

	if (c->cred == NULL)
	{
		plain_headers(a);
		return;
	}
	pg_strftime(amz_date, sizeof(amz_date), "%Y%m%dT%H%M%SZ", pg_gmtime(&now));
	h[nh++] = (SkadeSigV4Header) {"host", c->host};
	h[nh++] = (SkadeSigV4Header) {"x-amz-date", amz_date};
	h[nh++] = (SkadeSigV4Header) {"x-amz-content-sha256", a->payload_hash};
	if (c->cred->session_token)
		h[nh++] = (SkadeSigV4Header) {"x-amz-security-token", c->cred->session_token};
	if (c->body)
	{
		h[nh++] = (SkadeSigV4Header) {"content-type",
			c->content_type ? c->content_type : "application/octet-stream"};
		h[nh++] = (SkadeSigV4Header) {"content-md5", a->content_md5};
	}
	if (c->create_only)
		h[nh++] = (SkadeSigV4Header) {"if-none-match", "*"};
	r.method = c->method;
	r.canonical_uri = c->canonical_uri;
	r.query = NULL;
	r.headers = h;
	r.nheaders = nh;
	r.payload_hash = a->payload_hash;
	r.region = c->region;
	r.service = c->service ? c->service : "s3";
	r.amz_date = amz_date;
	r.access_key = c->cred->access_key;
	r.secret_key = c->cred->secret_key;
	auth = SkadeSigV4Authorization(&r, NULL, NULL);

	for (i = 0; i < nh; i++)
		l = curl_slist_append(l, psprintf("%s: %s", h[i].name, h[i].value));
	l = l ? curl_slist_append(l, psprintf("Authorization: %s", auth)) : NULL;
	explicit_bzero(auth, strlen(auth));
	set_headers(a, l);
}

/* The header list of a plain request: nothing signed. */
static void
plain_headers(Attempt *a)
{
	set_headers(a, curl_slist_append(NULL, "Accept: application/json"));
}

/*
 * l, with the headers every attempt sends, becomes the attempt's list (the
 * previous one freed); l NULL: curl ran out of memory building it.
 */
static void
set_headers(Attempt *a, struct curl_slist *l)
{
	if (a->headers)
		curl_slist_free_all(a->headers);
	a->headers = NULL;
	l = l ? curl_slist_append(l, "Expect:") : NULL;
	l = l ? curl_slist_append(l, "Accept-Encoding: identity") : NULL;
	if (l == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory building a request")));
	a->headers = l;
}

/* ------------------------------------------------------------- the loop */

/* Wait for curl's sockets, its timer, a retry falling due or the latch. */
static void
wait_and_drive(void)
{
	ListCell   *lc;
	long		timeout = 1000;
	TimestampTz now = GetCurrentTimestamp();
	WaitEventSet *set;
	WaitEvent	events[MAX_SOCKETS + 1];
	int			nev;
	int			running;
	int			i;

	if (timer_ms >= 0)
		timeout = Min(timeout, Max(0, timer_ms -
								   (long) ((now - timer_set_at) / 1000)));
	foreach(lc, inflight)
	{
		Attempt    *a = lfirst(lc);

		if (a->easy == NULL)
			timeout = Min(timeout, Max(0, (long) ((a->retry_at - now) / 1000)));
	}

	set = CreateWaitEventSet(CurrentResourceOwner, nwatched + 2);
	AddWaitEventToSet(set, WL_LATCH_SET, PGINVALID_SOCKET, MyLatch, NULL);
	AddWaitEventToSet(set, WL_EXIT_ON_PM_DEATH, PGINVALID_SOCKET, NULL, NULL);
	for (i = 0; i < nwatched; i++)
		AddWaitEventToSet(set,
						  ((watched[i].what & CURL_POLL_IN) ? WL_SOCKET_READABLE : 0) |
						  ((watched[i].what & CURL_POLL_OUT) ? WL_SOCKET_WRITEABLE : 0),
						  watched[i].fd, NULL, NULL);
	nev = WaitEventSetWait(set, timeout, events, lengthof(events), PG_WAIT_EXTENSION);
	FreeWaitEventSet(set);

	for (i = 0; i < nev; i++)
	{
		int			flags = 0;

		if (events[i].events & WL_LATCH_SET)
		{
			ResetLatch(MyLatch);
			continue;
		}
		if (events[i].events & WL_SOCKET_READABLE)
			flags |= CURL_CSELECT_IN;
		if (events[i].events & WL_SOCKET_WRITEABLE)
			flags |= CURL_CSELECT_OUT;
		curl_multi_socket_action(multi, events[i].fd, flags, &running);
	}
	if (timer_ms >= 0 &&
		GetCurrentTimestamp() >= timer_set_at + (TimestampTz) timer_ms * 1000)
	{
		timer_ms = -1;
		curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &running);
	}
}

/* Collect the attempts curl has finished. */
static void
drain_done(void)
{
	CURLMsg    *m;
	int			left;

	while ((m = curl_multi_info_read(multi, &left)) != NULL)
	{
		Attempt    *a = NULL;

		if (m->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **) &a);
		if (a)
			finish_attempt(a, m->data.result);
	}
}

/* An attempt has ended: its outcome, and whether another one follows. */
static void
finish_attempt(Attempt *a, CURLcode rc)
{
	S3Call	   *c = a->call;
	long		status = 0;

	if (rc == CURLE_OK)
		curl_easy_getinfo(a->easy, CURLINFO_RESPONSE_CODE, &status);
	c->status = (int) status;
	c->timed_out = (rc == CURLE_OPERATION_TIMEDOUT);
	/* not the request's own fault (a bad URL, our callbacks' refusal) */
	c->unreachable = rc != CURLE_OK && !c->too_big && !a->oom &&
		rc != CURLE_URL_MALFORMAT && rc != CURLE_UNSUPPORTED_PROTOCOL &&
		rc != CURLE_OUT_OF_MEMORY && rc != CURLE_WRITE_ERROR &&
		rc != CURLE_ABORTED_BY_CALLBACK;
	if (rc != CURLE_OK && !c->too_big)
	{
		strlcpy(c->transport, a->errbuf[0] ? a->errbuf : curl_easy_strerror(rc),
				sizeof(c->transport));
		drop_elapsed(c->transport);
	}
	drop_easy(a);
	if (a->oom)
	{
		c->out_of_memory = true;	/* S3Finish raises */
		forget(a);
		return;
	}
	if (rc == CURLE_OK && status == 200 && strcmp(c->method, "GET") == 0)
		c->corrupt = !body_matches(a);
	if (rc == CURLE_OK && status >= 300 && c->body_out.data)
	{
		MemoryContext old = MemoryContextSwitchTo(a->body_cxt);

		c->s3_code = S3XmlElement(&c->body_out, "Code", 1024);
		c->s3_message = S3XmlElement(&c->body_out, "Message", 1024);
		MemoryContextSwitchTo(old);
	}
	if (retryable(a, rc) && !c->no_retry && c->attempts <= skade_s3_max_retries)
	{
		double		delay = Min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS << Min(c->attempts - 1, 10));

		delay *= 0.5 + 0.5 * pg_prng_double(&pg_global_prng_state);
		a->retry_at = GetCurrentTimestamp() + (TimestampTz) (delay * 1000);
		return;
	}
	forget(a);
}

static bool
retryable(const Attempt *a, CURLcode rc)
{
	const S3Call *c = a->call;

	if (c->too_big)
		return false;
	if (rc != CURLE_OK)
		return rc != CURLE_URL_MALFORMAT && rc != CURLE_UNSUPPORTED_PROTOCOL &&
			rc != CURLE_OUT_OF_MEMORY;
	return c->corrupt || c->status == 408 || c->status == 429 || c->status >= 500;
}

/* Take the attempt's easy handle out of the multi handle and free it. */
static void
drop_easy(Attempt *a)
{
	if (a->easy)
	{
		curl_multi_remove_handle(multi, a->easy);
		curl_easy_cleanup(a->easy);
		a->easy = NULL;
	}
	if (a->headers)
	{
		curl_slist_free_all(a->headers);
		a->headers = NULL;
	}
}

/* -------------------------------------------------- curl's callbacks */

static size_t
write_cb(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	Attempt    *a = userdata;
	S3Call	   *c = a->call;
	size_t		n = size * nmemb;
	size_t		cap = c->max_bytes;
	long		status = 0;

	curl_easy_getinfo(a->easy, CURLINFO_RESPONSE_CODE, &status);
	if (status >= 300)
		cap = Min(cap, ERROR_BODY_MAX);
	if ((size_t) c->body_out.len + n > cap)
	{
		c->too_big = true;
		return 0;
	}
	if (!reserve(a, n))
	{
		a->oom = true;
		return 0;
	}
	memcpy(c->body_out.data + c->body_out.len, ptr, n);
	c->body_out.len += n;
	c->body_out.data[c->body_out.len] = '\0';
	return n;
}

/* Room for more bytes in the body (never raises). */
static bool
reserve(Attempt *a, size_t more)
{
	StringInfo	s = &a->call->body_out;
	size_t		need = (size_t) s->len + more + 1;
	size_t		cap;
	char	   *p;

	if (s->data && need <= (size_t) s->maxlen)
		return true;
	cap = s->data ? (size_t) s->maxlen * 2 : 8192;
	if (a->content_length > 0 && (size_t) a->content_length + 1 > cap &&
		(size_t) a->content_length <= a->call->max_bytes)
		cap = (size_t) a->content_length + 1;
	if (cap < need)
		cap = need;
	p = MemoryContextAllocExtended(a->body_cxt, cap, MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
	if (p == NULL)
		return false;
	if (s->data)
	{
		memcpy(p, s->data, s->len);
		pfree(s->data);
	}
	s->data = p;
	s->maxlen = (int) Min(cap, (size_t) INT_MAX);
	return true;
}

static size_t
header_cb(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	Attempt    *a = userdata;
	size_t		n = size * nmemb;
	size_t		vlen;
	const char *colon = memchr(ptr, ':', n);
	const char *v;

	if (n >= 5 && strncmp(ptr, "HTTP/", 5) == 0)
	{
		/* a new response (after a 100 Continue, say) */
		a->etag[0] = '\0';
		a->content_length = -1;
		a->encrypted = false;
		return n;
	}
	if (colon == NULL)
		return n;
	v = colon + 1;
	while (v < ptr + n && (*v == ' ' || *v == '\t'))
		v++;
	vlen = ptr + n - v;
	while (vlen > 0 && (v[vlen - 1] == '\r' || v[vlen - 1] == '\n' || v[vlen - 1] == ' '))
		vlen--;
#define IS(h) ((size_t) (colon - ptr) == strlen(h) && pg_strncasecmp(ptr, h, strlen(h)) == 0)
	if (IS("etag") && vlen < sizeof(a->etag))
	{
		memcpy(a->etag, v, vlen);
		a->etag[vlen] = '\0';
	}
	else if (IS("content-length") && vlen > 0 && vlen < 20)
	{
		char		num[21];

		memcpy(num, v, vlen);
		num[vlen] = '\0';
		a->content_length = strtoll(num, NULL, 10);
	}
	else if ((IS("x-amz-server-side-encryption") && vlen >= 7 && pg_strncasecmp(v, "aws:kms", 7) == 0) ||
			 IS("x-amz-server-side-encryption-customer-algorithm"))
		a->encrypted = true;
#undef IS
	return n;
}

/* A GET's body agrees with its Content-Length and plain MD5 ETag. */
static bool
body_matches(Attempt *a)
{
	S3Call	   *c = a->call;
	const char *body = c->body_out.data ? c->body_out.data : "";
	char		hex[33];
	const char *errstr = NULL;
	size_t		elen = strlen(a->etag);
	const char *etag = a->etag;

	if (a->content_length >= 0 && a->content_length != c->body_out.len)
		return false;
	if (elen == 34 && etag[0] == '"' && etag[33] == '"')
	{
		etag++;
		elen -= 2;
	}
	if (c->cred == NULL || elen != 32 || a->encrypted || strspn(etag, "0123456789abcdefABCDEF") < 32)
		return true;
	if (!pg_md5_hash(body, c->body_out.len, hex, &errstr))
		return true;			/* cannot check: out of memory */
	return pg_strncasecmp(hex, etag, 32) == 0;
}

/*
 * S3XmlElement
 *		The text of the first <name>...</name> of an XML body (an S3 or STS
 *		answer: elements without attributes), at most max bytes, control
 *		characters blanked; NULL if absent or longer (palloc'd).
 */
char *
S3XmlElement(const StringInfoData *body, const char *name, size_t max)
{
	char	   *open = psprintf("<%s>", name);
	char	   *close = psprintf("</%s>", name);
	char	   *s = body->data ? strstr(body->data, open) : NULL;
	char	   *e;
	char	   *out;
	char	   *p;

	if (s == NULL)
		return NULL;
	s += strlen(open);
	e = strstr(s, close);
	if (e == NULL || (size_t) (e - s) > max)
		return NULL;
	out = pnstrdup(s, e - s);
	for (p = out; *p; p++)
		if ((unsigned char) *p < 0x20)
			*p = ' ';
	return out;
}

/*
 * S3SplitUrl
 *		An http(s) URL's scheme, authority, path and query as sent.
 */
bool
S3SplitUrl(const char *url, char **scheme, char **authority, char **path, char **query)
{
	CURLU	   *u = curl_url();
	char	   *part[5] = {NULL, NULL, NULL, NULL, NULL};
	static const CURLUPart parts[5] = {CURLUPART_SCHEME, CURLUPART_HOST, CURLUPART_PORT,
	CURLUPART_PATH, CURLUPART_QUERY};
	bool		ok;
	int			i;

	if (u == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory")));
	ok = curl_url_set(u, CURLUPART_URL, url, CURLU_PATH_AS_IS) == CURLUE_OK;
	for (i = 0; ok && i < 5; i++)
	{
		CURLUcode	rc = curl_url_get(u, parts[i], &part[i], 0);

		/* (a port, a query may be absent) */
		ok = rc == CURLUE_OK || (i == 2 && rc == CURLUE_NO_PORT) || (i == 4 && rc == CURLUE_NO_QUERY);
	}
	ok = ok && (strcmp(part[0], "http") == 0 || strcmp(part[0], "https") == 0);
	if (ok)
	{
		*scheme = pstrdup(part[0]);
		*authority = part[2] ? psprintf("%s:%s", part[1], part[2]) : pstrdup(part[1]);
		*path = pstrdup(part[3] && part[3][0] ? part[3] : "/");
		*query = part[4] ? pstrdup(part[4]) : NULL;
	}
	for (i = 0; i < 5; i++)
		curl_free(part[i]);
	curl_url_cleanup(u);
	return ok;
}
