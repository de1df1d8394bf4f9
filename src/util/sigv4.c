/*-------------------------------------------------------------------------
 *
 * sigv4.c
 *	  AWS Signature Version 4 (Authorization header form) for skade's S3
 *	  client, computed over PostgreSQL's own SHA-256 and HMAC
 *	  (common/cryptohash.h, common/hmac.h).  The only file that signs.
 *
 * Given a request already laid out as it goes on the wire, this file builds
 * the canonical request, the string to sign and the Authorization value:
 *
 *	- the canonical URI is taken as is (S3 style: the caller encodes each key
 *	  segment once and keeps '/'; no path normalisation, no second encoding);
 *	- the query is split on '&' (empty pieces are dropped), "a" means "a=",
 *	  and the parameters are sorted bytewise by name, then by value; names
 *	  and values are used as sent (already encoded);
 *	- header names are lowercased, values trimmed of spaces and tabs with
 *	  inner runs squeezed to one space; headers are sorted by name and
 *	  repeated names are joined with ',' in the order given; every header
 *	  given is signed.
 *
 * Everything is checked before it goes into a canonical text, so that no
 * input can forge one line of it out of another: method and header names
 * are HTTP tokens, URI and query are printable ASCII without spaces, header
 * values carry no control character but tab, region and service are
 * [A-Za-z0-9._-], the date is YYYYMMDD'T'HHMMSS'Z' and equals the
 * x-amz-date header, host is present, the payload hash is 64 lowercase hex
 * digits or UNSIGNED-PAYLOAD.  A violation is ERROR 22023.
 *
 * Secrets: "AWS4" + secret key and every derived key (date, region,
 * service, signing) are wiped with explicit_bzero as soon as the next step
 * is computed; pg_hmac_free and pg_cryptohash_free wipe their own states.
 * A failing hash or HMAC (out of memory, or an OpenSSL error) frees its
 * context and raises ERROR.  With OpenSSL, PostgreSQL tracks those
 * contexts in CurrentResourceOwner, so callers need one (any backend or a
 * worker inside a transaction has it).
 *
 * Memory: everything is palloc'd in CurrentMemoryContext; nothing is kept
 * between calls, no locks are taken.  Pure function of its arguments.
 *
 * IDENTIFICATION
 *	  src/util/sigv4.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "common/cryptohash.h"
#include "common/hmac.h"
#include "common/sha2.h"

#include "util/sigv4.h"

#define SIGV4_ALGORITHM		"AWS4-HMAC-SHA256"
#define SIGV4_TERMINATOR	"aws4_request"
#define SIGV4_UNSIGNED		"UNSIGNED-PAYLOAD"
#define SIGV4_DATE_LEN		16	/* YYYYMMDDTHHMMSSZ */

/* one header in canonical form; pos keeps the caller's order for ties */
typedef struct CanonHeader
{
	char	   *name;
	char	   *value;
	int			pos;
} CanonHeader;

/* one query parameter, pointing into a private copy of the query */
typedef struct QueryParam
{
	const char *name;
	const char *value;
} QueryParam;

static void check_request(const SkadeSigV4Request *r);
static void check_amz_date(const char *d);
static void check_chars(const char *what, const char *s, bool (*ok) (unsigned char),
						bool allow_empty);
static bool is_tchar(unsigned char c);
static bool is_wire_char(unsigned char c);
static bool is_scope_char(unsigned char c);
static bool is_key_char(unsigned char c);
static void check_header_value(const char *name, const char *value);
static bool is_payload_hash(const char *h);
static void append_canonical_query(StringInfo out, const char *query);
static int	query_param_cmp(const void *a, const void *b);
static CanonHeader *canonical_headers(const SkadeSigV4Request *r);
static int	canon_header_cmp(const void *a, const void *b);
static char *squeeze_value(const char *v);
static void append_headers(StringInfo creq, StringInfo signed_headers,
						   const CanonHeader *h, int n);
static void signing_signature(const SkadeSigV4Request *r, const char *sts, char *hex);
static void hmac_sha256(const uint8 *key, size_t keylen, const char *msg, size_t len,
						uint8 *out);
static void crypto_failed(const char *what, const char *detail);
static void hex_encode_lower(const uint8 *bytes, size_t n, char *hex);

/*
 * SkadeSigV4Authorization: the Authorization header value for r; see
 * sigv4.h.  The canonical request and string to sign go to the optional
 * out parameters.
 */
char *
SkadeSigV4Authorization(const SkadeSigV4Request *r, char **canonical_request,
						char **string_to_sign)
{
	StringInfoData creq;
	StringInfoData sts;
	StringInfoData signed_headers;
	CanonHeader *headers;
	char		creq_hash[PG_SHA256_DIGEST_STRING_LENGTH];
	char		signature[PG_SHA256_DIGEST_STRING_LENGTH];
	char	   *auth;

	check_request(r);
	headers = canonical_headers(r);

	/* canonical request */
	initStringInfo(&creq);
	initStringInfo(&signed_headers);
	appendStringInfo(&creq, "%s\n%s\n", r->method, r->canonical_uri);
	append_canonical_query(&creq, r->query);
	appendStringInfoChar(&creq, '\n');
	append_headers(&creq, &signed_headers, headers, r->nheaders);
	appendStringInfo(&creq, "\n%s\n%s", signed_headers.data, r->payload_hash);

	/* string to sign */
	SkadeSha256Hex(creq.data, creq.len, creq_hash);
	initStringInfo(&sts);
	appendStringInfo(&sts, "%s\n%s\n%.8s/%s/%s/%s\n%s", SIGV4_ALGORITHM, r->amz_date,
					 r->amz_date, r->region, r->service, SIGV4_TERMINATOR, creq_hash);

	signing_signature(r, sts.data, signature);
	auth = psprintf("%s Credential=%s/%.8s/%s/%s/%s, SignedHeaders=%s, Signature=%s",
					SIGV4_ALGORITHM, r->access_key, r->amz_date, r->region, r->service,
					SIGV4_TERMINATOR, signed_headers.data, signature);

	if (canonical_request)
		*canonical_request = creq.data;
	else
		pfree(creq.data);
	if (string_to_sign)
		*string_to_sign = sts.data;
	else
		pfree(sts.data);
	pfree(signed_headers.data);
	return auth;
}

/* SkadeSha256Hex: lowercase hex SHA-256 of data into hex[65] */
void
SkadeSha256Hex(const void *data, size_t len, char *hex)
{
	pg_cryptohash_ctx *ctx = pg_cryptohash_create(PG_SHA256);
	uint8		digest[PG_SHA256_DIGEST_LENGTH];

	if (ctx == NULL)
		crypto_failed("SHA-256", NULL);
	if (pg_cryptohash_init(ctx) < 0 ||
		pg_cryptohash_update(ctx, (const uint8 *) data, len) < 0 ||
		pg_cryptohash_final(ctx, digest, sizeof(digest)) < 0)
	{
		char	   *detail = pstrdup(pg_cryptohash_error(ctx));

		pg_cryptohash_free(ctx);
		crypto_failed("SHA-256", detail);
	}
	pg_cryptohash_free(ctx);
	hex_encode_lower(digest, sizeof(digest), hex);
}

/* SkadeUriEncode: RFC 3986 percent-encoding as SigV4 defines it */
void
SkadeUriEncode(StringInfo out, const char *s, size_t len, bool keep_slash)
{
	static const char hexdigits[] = "0123456789ABCDEF";
	size_t		i;

	for (i = 0; i < len; i++)
	{
		unsigned char c = (unsigned char) s[i];

		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
			(c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' || c == '~' ||
			(c == '/' && keep_slash))
			appendStringInfoChar(out, (char) c);
		else
		{
			appendStringInfoChar(out, '%');
			appendStringInfoChar(out, hexdigits[c >> 4]);
			appendStringInfoChar(out, hexdigits[c & 0xF]);
		}
	}
}

/* ---------------------------------------------------------------- checks */

/* check_request: every field well-formed (ERROR 22023 otherwise) */
static void
check_request(const SkadeSigV4Request *r)
{
	check_chars("method", r->method, is_tchar, false);
	check_chars("canonical URI", r->canonical_uri, is_wire_char, false);
	if (r->canonical_uri[0] != '/')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("AWS SigV4 canonical URI must start with \"/\"")));
	if (r->query != NULL)
		check_chars("query", r->query, is_wire_char, true);
	check_chars("region", r->region, is_scope_char, false);
	check_chars("service", r->service, is_scope_char, false);
	check_chars("access key", r->access_key, is_key_char, false);
	if (r->secret_key == NULL || r->secret_key[0] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("AWS SigV4 secret key must not be empty")));
	if (!is_payload_hash(r->payload_hash))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid AWS SigV4 payload hash \"%s\"",
						r->payload_hash ? r->payload_hash : ""),
				 errdetail("It must be 64 lowercase hexadecimal digits or \"%s\".",
						   SIGV4_UNSIGNED)));
	check_amz_date(r->amz_date);
	if (r->nheaders < 0 || (r->nheaders > 0 && r->headers == NULL))
		elog(ERROR, "AWS SigV4 request with %d headers and no header array", r->nheaders);
}

/* check_amz_date: YYYYMMDD'T'HHMMSS'Z' with plausible field ranges */
static void
check_amz_date(const char *d)
{
	static const char shape[] = "DDDDDDDDTDDDDDDZ";
	bool		ok = d != NULL && strlen(d) == SIGV4_DATE_LEN;
	int			i;

	for (i = 0; ok && i < SIGV4_DATE_LEN; i++)
		ok = shape[i] == 'D' ? (d[i] >= '0' && d[i] <= '9') : d[i] == shape[i];
#define FIELD(at) ((d[at] - '0') * 10 + (d[(at) + 1] - '0'))
	if (ok)
		ok = FIELD(4) >= 1 && FIELD(4) <= 12 && FIELD(6) >= 1 && FIELD(6) <= 31 &&
			FIELD(9) <= 23 && FIELD(11) <= 59 && FIELD(13) <= 60;
#undef FIELD
	if (!ok)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid AWS SigV4 date \"%s\"", d ? d : ""),
				 errdetail("The date must have the form YYYYMMDD'T'HHMMSS'Z', in UTC.")));
}

/* check_chars: s is not NULL, empty only if allowed, and every byte ok */
static void
check_chars(const char *what, const char *s, bool (*ok) (unsigned char), bool allow_empty)
{
	const unsigned char *p;

	if (s == NULL || (!allow_empty && s[0] == '\0'))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("AWS SigV4 %s must not be empty", what)));
	for (p = (const unsigned char *) s; *p; p++)
		if (!ok(*p))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid character in AWS SigV4 %s \"%s\"", what, s),
					 errdetail("Byte 0x%02x at offset %d is not allowed there.",
							   *p, (int) (p - (const unsigned char *) s))));
}

/* RFC 9110 token character (method, header name) */
static bool
is_tchar(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		(c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* printable ASCII without space or '#' (encoded URI, query) */
static bool
is_wire_char(unsigned char c)
{
	return c > 0x20 && c < 0x7F && c != '#';
}

/* credential scope component (region, service) */
static bool
is_scope_char(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		c == '-' || c == '_' || c == '.';
}

/* access key id: printable ASCII, no separator of the Authorization value */
static bool
is_key_char(unsigned char c)
{
	return c > 0x20 && c < 0x7F && c != '/' && c != ',' && c != '=';
}

/* check_header_value: no control character but tab */
static void
check_header_value(const char *name, const char *value)
{
	const unsigned char *p;

	if (value == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("AWS SigV4 header \"%s\" has no value", name)));
	for (p = (const unsigned char *) value; *p; p++)
		if ((*p < 0x20 && *p != '\t') || *p == 0x7F)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid character in the value of AWS SigV4 header \"%s\"", name),
					 errdetail("Byte 0x%02x at offset %d is a control character.",
							   *p, (int) (p - (const unsigned char *) value))));
}

/* is_payload_hash: 64 lowercase hex digits or UNSIGNED-PAYLOAD */
static bool
is_payload_hash(const char *h)
{
	int			i;

	if (h == NULL)
		return false;
	if (strcmp(h, SIGV4_UNSIGNED) == 0)
		return true;
	for (i = 0; i < PG_SHA256_DIGEST_LENGTH * 2; i++)
		if (!((h[i] >= '0' && h[i] <= '9') || (h[i] >= 'a' && h[i] <= 'f')))
			return false;
	return h[i] == '\0';
}

/* ---------------------------------------------------------------- query */

/* append_canonical_query: the parameters sorted by name, then value */
static void
append_canonical_query(StringInfo out, const char *query)
{
	char	   *copy;
	char	   *piece;
	char	   *next;
	QueryParam *params;
	int			n = 0;
	int			i;

	if (query == NULL || query[0] == '\0')
		return;
	copy = pstrdup(query);
	params = palloc(sizeof(QueryParam) * (strlen(query) / 2 + 1));
	for (piece = copy; piece != NULL; piece = next)
	{
		char	   *eq;

		next = strchr(piece, '&');
		if (next)
			*next++ = '\0';
		if (piece[0] == '\0')
			continue;			/* "a&&b", a trailing '&' */
		eq = strchr(piece, '=');
		if (eq)
			*eq++ = '\0';
		params[n].name = piece;
		params[n].value = eq ? eq : "";
		n++;
	}
	qsort(params, n, sizeof(QueryParam), query_param_cmp);
	for (i = 0; i < n; i++)
		appendStringInfo(out, "%s%s=%s", i > 0 ? "&" : "", params[i].name, params[i].value);
	pfree(params);
	pfree(copy);
}

static int
query_param_cmp(const void *a, const void *b)
{
	const QueryParam *x = (const QueryParam *) a;
	const QueryParam *y = (const QueryParam *) b;
	int			c = strcmp(x->name, y->name);

	return c != 0 ? c : strcmp(x->value, y->value);
}

/* -------------------------------------------------------------- headers */

/*
 * canonical_headers: r's headers lowercased, squeezed and sorted (stable on
 * equal names); checks that host and x-amz-date (= r->amz_date) are there
 */
static CanonHeader *
canonical_headers(const SkadeSigV4Request *r)
{
	CanonHeader *h = palloc(sizeof(CanonHeader) * (r->nheaders + 1));
	bool		have_host = false;
	bool		have_date = false;
	int			i;

	for (i = 0; i < r->nheaders; i++)
	{
		char	   *p;

		check_chars("header name", r->headers[i].name, is_tchar, false);
		check_header_value(r->headers[i].name, r->headers[i].value);
		h[i].name = pstrdup(r->headers[i].name);
		for (p = h[i].name; *p; p++)
			*p = pg_ascii_tolower((unsigned char) *p);
		h[i].value = squeeze_value(r->headers[i].value);
		h[i].pos = i;
		if (strcmp(h[i].name, "host") == 0)
			have_host = true;
		else if (strcmp(h[i].name, "x-amz-date") == 0)
		{
			if (strcmp(h[i].value, r->amz_date) != 0)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("AWS SigV4 header x-amz-date \"%s\" differs from the signing date \"%s\"",
								h[i].value, r->amz_date)));
			have_date = true;
		}
	}
	if (!have_host || !have_date)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("AWS SigV4 request lacks the \"%s\" header",
						have_host ? "x-amz-date" : "host"),
				 errdetail("The host and x-amz-date headers are always signed.")));
	qsort(h, r->nheaders, sizeof(CanonHeader), canon_header_cmp);
	return h;
}

static int
canon_header_cmp(const void *a, const void *b)
{
	const CanonHeader *x = (const CanonHeader *) a;
	const CanonHeader *y = (const CanonHeader *) b;
	int			c = strcmp(x->name, y->name);

	return c != 0 ? c : (x->pos > y->pos) - (x->pos < y->pos);
}

/* squeeze_value: v trimmed of spaces and tabs, inner runs made one space */
static char *
squeeze_value(const char *v)
{
	char	   *out = palloc(strlen(v) + 1);
	char	   *o = out;
	bool		pending_space = false;

	for (; *v; v++)
	{
		if (*v == ' ' || *v == '\t')
		{
			pending_space = (o != out);
			continue;
		}
		if (pending_space)
			*o++ = ' ';
		pending_space = false;
		*o++ = *v;
	}
	*o = '\0';
	return out;
}

/* append_headers: "name:v1,v2\n" lines to creq, "a;b;c" to signed_headers */
static void
append_headers(StringInfo creq, StringInfo signed_headers, const CanonHeader *h, int n)
{
	int			i;

	for (i = 0; i < n; i++)
	{
		if (i > 0 && strcmp(h[i].name, h[i - 1].name) == 0)
		{
			/* a repeated name: its values join the previous line */
			creq->data[--creq->len] = '\0';
			appendStringInfo(creq, ",%s\n", h[i].value);
			continue;
		}
		appendStringInfo(creq, "%s:%s\n", h[i].name, h[i].value);
		appendStringInfo(signed_headers, "%s%s", i > 0 ? ";" : "", h[i].name);
	}
}

/* ---------------------------------------------------------------- crypto */

/*
 * signing_signature: hex HMAC of sts under the key derived from the secret,
 * date, region and service; every intermediate key is wiped
 */
static void
signing_signature(const SkadeSigV4Request *r, const char *sts, char *hex)
{
	char	   *secret = psprintf("AWS4%s", r->secret_key);
	uint8		k1[PG_SHA256_DIGEST_LENGTH];
	uint8		k2[PG_SHA256_DIGEST_LENGTH];

	hmac_sha256((const uint8 *) secret, strlen(secret), r->amz_date, 8, k1);
	explicit_bzero(secret, strlen(secret));
	pfree(secret);
	hmac_sha256(k1, sizeof(k1), r->region, strlen(r->region), k2);	/* kRegion */
	hmac_sha256(k2, sizeof(k2), r->service, strlen(r->service), k1);	/* kService */
	hmac_sha256(k1, sizeof(k1), SIGV4_TERMINATOR, strlen(SIGV4_TERMINATOR), k2);	/* kSigning */
	hmac_sha256(k2, sizeof(k2), sts, strlen(sts), k1);	/* the signature */
	explicit_bzero(k2, sizeof(k2));
	hex_encode_lower(k1, sizeof(k1), hex);
	explicit_bzero(k1, sizeof(k1));
}

/* hmac_sha256: out = HMAC-SHA256(key, msg) */
static void
hmac_sha256(const uint8 *key, size_t keylen, const char *msg, size_t len, uint8 *out)
{
	pg_hmac_ctx *ctx = pg_hmac_create(PG_SHA256);

	if (ctx == NULL)
		crypto_failed("HMAC-SHA256", NULL);
	if (pg_hmac_init(ctx, key, keylen) < 0 ||
		pg_hmac_update(ctx, (const uint8 *) msg, len) < 0 ||
		pg_hmac_final(ctx, out, PG_SHA256_DIGEST_LENGTH) < 0)
	{
		char	   *detail = pstrdup(pg_hmac_error(ctx));

		pg_hmac_free(ctx);
		explicit_bzero(out, PG_SHA256_DIGEST_LENGTH);
		crypto_failed("HMAC-SHA256", detail);
	}
	pg_hmac_free(ctx);
}

/*
 * crypto_failed: ERROR for a failed hash; detail NULL means the context
 * could not be allocated
 */
static void
crypto_failed(const char *what, const char *detail)
{
	bool		oom = detail == NULL || strcmp(detail, "out of memory") == 0 ||
		strcmp(detail, _("out of memory")) == 0;

	ereport(ERROR,
			(errcode(oom ? ERRCODE_OUT_OF_MEMORY : ERRCODE_EXTERNAL_ROUTINE_EXCEPTION),
			 errmsg("could not compute %s for AWS SigV4 signing", what),
			 detail ? errdetail_internal("%s", detail) : 0));
}

/* hex_encode_lower: n bytes to 2n lowercase hex digits and a NUL */
static void
hex_encode_lower(const uint8 *bytes, size_t n, char *hex)
{
	static const char digits[] = "0123456789abcdef";
	size_t		i;

	for (i = 0; i < n; i++)
	{
		hex[2 * i] = digits[bytes[i] >> 4];
		hex[2 * i + 1] = digits[bytes[i] & 0xF];
	}
	hex[2 * n] = '\0';
}
