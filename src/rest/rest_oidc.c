/*-------------------------------------------------------------------------
 *
 * rest_oidc.c
 *	  Bearer JWTs from OpenID providers: which keys may have signed a
 *	  token, and whether it is meant for this catalog now.
 *
 * Invariants
 *   - Configured means skade.rest_oidc_issuers names at least one issuer
 *     and skade.rest_oidc_audience is set: a token is accepted only with
 *     an "iss" among the issuers (exactly) and an "aud" holding the
 *     audience, unexpired (jwt.c: exp, nbf with LEEWAY_SECS).
 *   - Keys: those of skade.rest_oidc_jwks_file (re-read whenever the file
 *     or the setting changes: the file is stat'ed per token), then the
 *     issuer's own: its discovery document ({issuer}/.well-known/openid-
 *     configuration, whose "issuer" must be the issuer) names its jwks_uri,
 *     fetched with skade's HTTP client (s3_client.c, unsigned).  Issuer
 *     and jwks_uri are https, or http to a loopback address only.  An
 *     issuer's keys are fetched again when they are older than
 *     KEYS_MAX_AGE, or when a token names a kid they lack -- at most once
 *     per skade.rest_oidc_refetch_interval per issuer, whatever tokens arrive, so a flood
 *     of made-up kids costs the provider one request per interval.  When a
 *     refetch fails, the keys held are kept (and logged).
 *   - The role a verified token stands for is rest_auth.c's to find (from
 *     the issuer and the claims returned).
 *   - Nothing of a token is logged or answered; a refusal's reason goes to
 *     rest_auth.c for the server log.
 *
 * Memory and locking: each executor keeps its own keys, in "skade oidc
 * keys" under TopMemoryContext (a context per key set, dropped with it);
 * a token's parse lives in the request's context.  Runs inside the
 * request's transaction (the JWKS file is opened with AllocateFile); no
 * locks.
 *
 * IDENTIFICATION
 *	  src/rest/rest_oidc.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include <sys/stat.h>

#include "storage/fd.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "util/guc.h"
#include "util/jwt.h"
#include "rest/rest_oidc.h"
#include "io/s3_client.h"

#define LEEWAY_SECS			60
#define KEYS_MAX_AGE_MS		(3600 * 1000)	/* keys are fetched again after an hour */
#define FETCH_TIMEOUT_MS	5000
#define DOCUMENT_MAX_BYTES	(1024 * 1024)
#define MAX_ISSUERS			16

typedef struct IssuerKeys
{
	char	   *issuer;
	MemoryContext cxt;			/* the keys'; NULL: none yet */
	JwkSet	   *keys;
	TimestampTz fetched_at;		/* of the keys held */
	TimestampTz tried_at;		/* of the last attempt (0: never) */
} IssuerKeys;

static MemoryContext oidc_cxt = NULL;
static IssuerKeys issuers[MAX_ISSUERS];
static int	nissuers = 0;
static char *issuers_setting = NULL;	/* what issuers[] was made from */

/* the JWKS file's keys, and what they were read from */
static MemoryContext file_cxt = NULL;
static JwkSet *file_keys = NULL;
static char *file_path = NULL;
static struct stat file_stat;
static bool file_missing = false;	/* (logged once until it is there again) */

static void load_issuers(void);
static IssuerKeys *issuer_of(const char *iss);
static const JwkSet *file_key_set(void);
static char *read_key_file(const char *path, size_t *len);
static bool refresh_issuer(IssuerKeys *ik, const char **why);
static char *fetch(const char *url, const char **why);
static bool acceptable_url(const char *url);

/*
 * RestOidcConfigured
 *		Are bearer JWTs accepted at all (issuers and an audience set)?
 */
bool
RestOidcConfigured(void)
{
	return skade_rest_oidc_issuers && skade_rest_oidc_issuers[0] &&
		skade_rest_oidc_audience && skade_rest_oidc_audience[0];
}

/*
 * RestOidcVerify
 *		Is token a JWT of a configured issuer, signed by one of its keys,
 *		meant for this catalog and valid now?  Then its issuer and its
 *		claims (compact JSON text, for rest_auth.c's role lookup), else
 *		false with *why.
 */
bool
RestOidcVerify(const char *token, char **issuer, char **claims, const char **why)
{
	Jwt		   *t = JwtDecode(token, why);
	const char *iss;
	IssuerKeys *ik;
	bool		verified;
	pg_time_t	now = timestamptz_to_time_t(GetCurrentTimestamp());

	if (t == NULL)
		return false;
	load_issuers();
	iss = json_string_value(json_object_get(t->claims, "iss"));
	if (iss == NULL || (ik = issuer_of(iss)) == NULL)
	{
		*why = "the token's issuer is not a configured one";
		return false;
	}
	verified = JwtVerify(t, file_key_set(), why);
	if (!verified)
	{
		bool		stale = ik->keys == NULL ||
			TimestampDifferenceExceeds(ik->fetched_at, GetCurrentTimestamp(), KEYS_MAX_AGE_MS) ||
			(t->kid && !JwkSetHasKid(ik->keys, t->kid));

		if (stale)
			(void) refresh_issuer(ik, why);
		verified = ik->keys && JwtVerify(t, ik->keys, why);
	}
	if (!verified)
		return false;
	if (!JwtCheckClaims(t, ik->issuer, skade_rest_oidc_audience, (int64) now, LEEWAY_SECS, why))
		return false;
	*issuer = pstrdup(iss);
	*claims = json_dumps(t->claims, JSON_COMPACT);
	return *claims != NULL;
}

/* ------------------------------------------------------------------ keys */

/* issuers[] from skade.rest_oidc_issuers, when the setting changed */
static void
load_issuers(void)
{
	char	   *list;
	char	   *tok;
	char	   *save;
	int			i;

	if (oidc_cxt == NULL)
		oidc_cxt = AllocSetContextCreate(TopMemoryContext, "skade oidc keys",
										 ALLOCSET_SMALL_SIZES);
	if (issuers_setting && strcmp(issuers_setting, skade_rest_oidc_issuers) == 0)
		return;
	for (i = 0; i < nissuers; i++)
	{
		if (issuers[i].cxt)
			MemoryContextDelete(issuers[i].cxt);
		pfree(issuers[i].issuer);
	}
	nissuers = 0;
	if (issuers_setting)
		pfree(issuers_setting);
	issuers_setting = MemoryContextStrdup(oidc_cxt, skade_rest_oidc_issuers);
	list = pstrdup(skade_rest_oidc_issuers);
	for (tok = strtok_r(list, ", \t\n", &save); tok; tok = strtok_r(NULL, ", \t\n", &save))
	{
		IssuerKeys *ik;

		if (nissuers == MAX_ISSUERS)
		{
			ereport(WARNING,
					(errmsg("skade.rest_oidc_issuers names more than %d issuers: \"%s\" and those after it are ignored",
							MAX_ISSUERS, tok)));
			break;
		}
		ik = &issuers[nissuers++];

		memset(ik, 0, sizeof(IssuerKeys));
		ik->issuer = MemoryContextStrdup(oidc_cxt, tok);
	}
}

static IssuerKeys *
issuer_of(const char *iss)
{
	int			i;

	for (i = 0; i < nissuers; i++)
		if (strcmp(issuers[i].issuer, iss) == 0)
			return &issuers[i];
	return NULL;
}

/* the keys of skade.rest_oidc_jwks_file (NULL: none), re-read when changed */
static const JwkSet *
file_key_set(void)
{
	const char *path = skade_rest_oidc_jwks_file;
	struct stat st;
	bool		same;

	if (path == NULL || path[0] == '\0')
		return NULL;
	if (stat(path, &st) != 0)
	{
		if (!file_missing)
			ereport(LOG,
					(errmsg("could not read skade.rest_oidc_jwks_file \"%s\": %m", path)));
		file_missing = true;
		return NULL;
	}
	file_missing = false;
	same = file_cxt && file_path && strcmp(file_path, path) == 0 &&
		st.st_mtime == file_stat.st_mtime && st.st_size == file_stat.st_size &&
		st.st_ino == file_stat.st_ino;
	if (!same)
	{
		MemoryContext old;
		char	   *text;
		size_t		len;
		const char *why = NULL;

		if (file_cxt)
			MemoryContextDelete(file_cxt);
		file_cxt = AllocSetContextCreate(TopMemoryContext, "skade oidc jwks file",
										 ALLOCSET_SMALL_SIZES);
		old = MemoryContextSwitchTo(file_cxt);
		file_path = pstrdup(path);
		file_stat = st;
		text = read_key_file(path, &len);
		file_keys = text ? JwkSetParse(text, len, &why) : NULL;
		MemoryContextSwitchTo(old);
		if (file_keys == NULL)
			ereport(LOG,
					(errmsg("skade.rest_oidc_jwks_file \"%s\" holds no key set: %s",
							path, why ? why : "it cannot be read")));
	}
	return file_keys;
}

/* the text of the JWKS file (at most DOCUMENT_MAX_BYTES), or NULL */
static char *
read_key_file(const char *path, size_t *len)
{
	FILE	   *f = AllocateFile(path, PG_BINARY_R);
	char	   *buf;

	if (f == NULL)
		return NULL;
	buf = palloc(DOCUMENT_MAX_BYTES + 1);
	*len = fread(buf, 1, DOCUMENT_MAX_BYTES + 1, f);
	if (ferror(f) || *len > DOCUMENT_MAX_BYTES)
	{
		FreeFile(f);
		return NULL;
	}
	FreeFile(f);
	buf[*len] = '\0';
	return buf;
}

/*
 * Fetch ik's keys afresh (discovery, then jwks_uri), at most once per
 * skade.rest_oidc_refetch_interval; false (keys kept) when that is not now or it fails.
 */
static bool
refresh_issuer(IssuerKeys *ik, const char **why)
{
	TimestampTz now = GetCurrentTimestamp();
	MemoryContext cxt;
	MemoryContext old;
	char	   *doc;
	char	   *jwks;
	json_t	   *d;
	json_error_t err;
	const char *uri;
	const char *fail = NULL;
	JwkSet	   *keys = NULL;
	size_t		ilen = strlen(ik->issuer);

	if (ik->tried_at != 0 && !TimestampDifferenceExceeds(ik->tried_at, now, skade_rest_oidc_refetch_interval))
		return false;
	ik->tried_at = now;
	cxt = AllocSetContextCreate(oidc_cxt, "skade oidc issuer keys", ALLOCSET_SMALL_SIZES);
	old = MemoryContextSwitchTo(cxt);
	doc = fetch(psprintf("%.*s/.well-known/openid-configuration",
						 (int) (ilen > 0 && ik->issuer[ilen - 1] == '/' ? ilen - 1 : ilen),
						 ik->issuer), &fail);
	d = doc ? json_loads(doc, 0, &err) : NULL;
	uri = d ? json_string_value(json_object_get(d, "jwks_uri")) : NULL;
	if (doc && (d == NULL || !json_is_string(json_object_get(d, "issuer")) ||
				strcmp(json_string_value(json_object_get(d, "issuer")), ik->issuer) != 0))
		fail = "its discovery document is not the issuer's";
	else if (doc && (uri == NULL || !acceptable_url(uri)))
		fail = "its discovery document names no acceptable jwks_uri";
	else if (doc && (jwks = fetch(uri, &fail)) != NULL)
		keys = JwkSetParse(jwks, strlen(jwks), &fail);
	MemoryContextSwitchTo(old);
	if (keys == NULL)
	{
		ereport(LOG,
				(errmsg("could not fetch the keys of OpenID issuer \"%s\": %s",
						ik->issuer, fail ? fail : "unknown failure")));
		MemoryContextDelete(cxt);
		*why = "the issuer's keys could not be fetched";
		return false;
	}
	if (ik->cxt)
		MemoryContextDelete(ik->cxt);
	ik->cxt = cxt;
	ik->keys = keys;
	ik->fetched_at = now;
	return true;
}

/* the body of a GET of url (200 only), or NULL with *why */
static char *
fetch(const char *url, const char **why)
{
	S3Call		c = {0};
	S3Call	   *calls[1] = {&c};

	if (!acceptable_url(url))
	{
		*why = "not an https URL (http only to a loopback address)";
		return NULL;
	}
	c.method = "GET";
	c.url = url;
	c.max_bytes = DOCUMENT_MAX_BYTES;
	c.timeout_ms = FETCH_TIMEOUT_MS;
	c.no_retry = true;
	S3Perform(calls, 1, true);
	if (c.status != 200)
	{
		*why = c.status == 0 ? psprintf("%s: %s", url, c.transport[0] ? c.transport : "no answer")
			: psprintf("%s answered %d", url, c.status);
		return NULL;
	}
	return c.body_out.data ? c.body_out.data : pstrdup("");
}

/* https://..., or http:// to 127.0.0.1, [::1] or localhost */
static bool
acceptable_url(const char *url)
{
	static const char *const loopback[] = {"127.0.0.1", "[::1]", "localhost"};
	int			i;

	if (pg_strncasecmp(url, "https://", 8) == 0)
		return url[8] != '\0';
	if (pg_strncasecmp(url, "http://", 7) != 0)
		return false;
	for (i = 0; i < lengthof(loopback); i++)
	{
		size_t		n = strlen(loopback[i]);

		if (pg_strncasecmp(url + 7, loopback[i], n) == 0 &&
			(url[7 + n] == ':' || url[7 + n] == '/' || url[7 + n] == '\0'))
			return true;
	}
	return false;
}
