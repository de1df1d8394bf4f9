/*-------------------------------------------------------------------------
 *
 * jwt.c
 *	  JSON Web Tokens signed with a public key (RFC 7515 compact form,
 *	  RFC 7517 key sets, RFC 7518 algorithms, RFC 7519 claims).  The only
 *	  file that calls OpenSSL's libcrypto.
 *
 * Invariants
 *   - The algorithms are RS256/384/512, PS256/384/512 and ES256/384/512;
 *     every other header "alg" ("none", the HMAC family, anything unknown)
 *     is refused before a key is looked at.  A key signs only for its own
 *     family and size: an RSA key (2048 bits or more) for RS and PS, an EC
 *     key for the ES algorithm of its curve (P-256 for ES256, ...), and
 *     when the JWK names an "alg" only that one; a key whose "use" is not
 *     "sig" is never used.  The token alone never chooses how it is
 *     checked: the key set does.
 *   - Symmetric ("oct") and unknown keys in a JWKS are skipped, never an
 *     error: a key set is what it holds of RSA and EC public keys.
 *   - A token with a "kid" is checked with the keys of that kid only; one
 *     without, with each key that may sign its alg.
 *   - ES signatures arrive as R || S of the curve's size exactly and are
 *     re-encoded as DER for EVP; PS uses a salt of the digest's length.
 *   - Claims: "exp" must be present and not passed, "nbf" (if present)
 *     reached, both with the leeway; "iss" the issuer, exactly;
 *     "aud" (a string or an array of strings) holds the audience.
 *   - Every part is parsed from the token's own bytes: base64url without
 *     padding, then JSON (jansson, palloc'd in the current context); a part
 *     that is not valid is a refusal, never an ERROR.
 *
 * Memory: what JwtDecode returns is palloc'd in the current context; a key
 * set's EVP_PKEYs (OpenSSL's memory) are freed when the context it was
 * parsed in is reset or deleted (a reset callback).
 *
 * IDENTIFICATION
 *	  src/util/jwt.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/rsa.h>

#include "common/base64.h"
#include "utils/memutils.h"

#include "util/jwt.h"

#define MIN_RSA_BITS 2048

typedef enum KeyFamily
{
	FAMILY_RSA,					/* RS*: PKCS#1 v1.5 */
	FAMILY_PSS,					/* PS*: RSASSA-PSS */
	FAMILY_EC
} KeyFamily;

typedef struct Algorithm
{
	const char *name;
	KeyFamily	family;
	const char *digest;			/* for EVP_get_digestbyname */
	const char *curve;			/* EC: the JWK "crv" */
	int			coord;			/* EC: bytes of R and of S */
} Algorithm;

static const Algorithm algorithms[] = {
	{"RS256", FAMILY_RSA, "SHA256", NULL, 0},
	{"RS384", FAMILY_RSA, "SHA384", NULL, 0},
	{"RS512", FAMILY_RSA, "SHA512", NULL, 0},
	{"PS256", FAMILY_PSS, "SHA256", NULL, 0},
	{"PS384", FAMILY_PSS, "SHA384", NULL, 0},
	{"PS512", FAMILY_PSS, "SHA512", NULL, 0},
	{"ES256", FAMILY_EC, "SHA256", "P-256", 32},
	{"ES384", FAMILY_EC, "SHA384", "P-384", 48},
	{"ES512", FAMILY_EC, "SHA512", "P-521", 66},
};

typedef struct Jwk
{
	char	   *kid;			/* or NULL */
	char	   *alg;			/* or NULL: any of its family */
	bool		rsa;			/* else EC */
	const char *curve;			/* EC: P-256, P-384 or P-521 */
	EVP_PKEY   *pkey;
} Jwk;

struct JwkSet
{
	int			nkeys;
	Jwk		   *keys;
	MemoryContextCallback free_keys;
};

static const Algorithm *algorithm(const char *name);
static bool parse_key(json_t *k, Jwk *out);
static EVP_PKEY *rsa_key(json_t *k);
static EVP_PKEY *ec_key(json_t *k, const char *curve, int coord);
static unsigned char *b64url(const char *s, size_t len, size_t *out_len);
static bool b64url_member(json_t *o, const char *name, unsigned char **out, size_t *len);
static bool key_may_sign(const Jwk *k, const Algorithm *a);
static bool verify_with(const Jwk *k, const Algorithm *a, const Jwt *t);
static void free_keys(void *arg);

/* ------------------------------------------------------------ key sets */

/*
 * JwkSetParse
 *		The RSA and EC public keys of a JWKS document ({"keys": [...]}), or
 *		NULL with *why when it is not one.
 */
JwkSet *
JwkSetParse(const char *text, size_t len, const char **why)
{
	json_error_t err;
	json_t	   *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);
	json_t	   *keys = doc ? json_object_get(doc, "keys") : NULL;
	JwkSet	   *set;
	size_t		i;

	if (!json_is_array(keys))
	{
		*why = "not a JWKS document (no \"keys\" array)";
		if (doc)
			json_decref(doc);
		return NULL;
	}
	set = palloc0(sizeof(JwkSet));
	set->keys = palloc0(sizeof(Jwk) * Max(json_array_size(keys), 1));
	set->free_keys.func = free_keys;
	set->free_keys.arg = set;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, &set->free_keys);
	for (i = 0; i < json_array_size(keys); i++)
		if (parse_key(json_array_get(keys, i), &set->keys[set->nkeys]))
			set->nkeys++;
	json_decref(doc);
	return set;
}

bool
JwkSetHasKid(const JwkSet *set, const char *kid)
{
	int			i;

	for (i = 0; set && kid && i < set->nkeys; i++)
		if (set->keys[i].kid && strcmp(set->keys[i].kid, kid) == 0)
			return true;
	return false;
}

/* one JWK into out: false when it is not a usable public signing key */
static bool
parse_key(json_t *k, Jwk *out)
{
	const char *kty = json_string_value(json_object_get(k, "kty"));
	const char *use = json_string_value(json_object_get(k, "use"));
	const char *alg = json_string_value(json_object_get(k, "alg"));
	const char *kid = json_string_value(json_object_get(k, "kid"));
	const Algorithm *a = alg ? algorithm(alg) : NULL;

	if (!json_is_object(k) || kty == NULL || (use && strcmp(use, "sig") != 0) ||
		(alg && a == NULL))
		return false;
	memset(out, 0, sizeof(Jwk));
	if (strcmp(kty, "RSA") == 0)
	{
		if (a && a->family == FAMILY_EC)
			return false;
		out->rsa = true;
		out->pkey = rsa_key(k);
	}
	else if (strcmp(kty, "EC") == 0)
	{
		const char *crv = json_string_value(json_object_get(k, "crv"));
		int			i;

		for (i = 0; i < lengthof(algorithms); i++)
			if (algorithms[i].curve && crv && strcmp(algorithms[i].curve, crv) == 0)
				break;
		if (i == lengthof(algorithms) || (a && a != &algorithms[i]))
			return false;
		out->curve = algorithms[i].curve;
		out->pkey = ec_key(k, algorithms[i].curve, algorithms[i].coord);
	}
	if (out->pkey == NULL)
		return false;
	out->kid = kid ? pstrdup(kid) : NULL;
	out->alg = alg ? pstrdup(alg) : NULL;
	return true;
}

/* an RSA public key from "n" and "e", at least MIN_RSA_BITS */
static EVP_PKEY *
rsa_key(json_t *k)
{
	unsigned char *n,
			   *e;
	size_t		nlen,
				elen;
	BIGNUM	   *bn_n = NULL,
			   *bn_e = NULL;
	OSSL_PARAM_BLD *bld = NULL;
	OSSL_PARAM *params = NULL;
	EVP_PKEY_CTX *ctx = NULL;
	EVP_PKEY   *pkey = NULL;

	if (!b64url_member(k, "n", &n, &nlen) || !b64url_member(k, "e", &e, &elen))
		return NULL;
	if ((bn_n = BN_bin2bn(n, nlen, NULL)) != NULL &&
		(bn_e = BN_bin2bn(e, elen, NULL)) != NULL &&
		(bld = OSSL_PARAM_BLD_new()) != NULL &&
		OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, bn_n) &&
		OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, bn_e) &&
		(params = OSSL_PARAM_BLD_to_param(bld)) != NULL &&
		(ctx = EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL)) != NULL &&
		EVP_PKEY_fromdata_init(ctx) == 1)
		(void) EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_PUBLIC_KEY, params);
	if (pkey && EVP_PKEY_get_bits(pkey) < MIN_RSA_BITS)
	{
		EVP_PKEY_free(pkey);
		pkey = NULL;
	}
	EVP_PKEY_CTX_free(ctx);
	OSSL_PARAM_free(params);
	OSSL_PARAM_BLD_free(bld);
	BN_free(bn_n);
	BN_free(bn_e);
	return pkey;
}

/* an EC public key on curve from "x" and "y" (coord bytes each) */
static EVP_PKEY *
ec_key(json_t *k, const char *curve, int coord)
{
	unsigned char *x,
			   *y;
	size_t		xlen,
				ylen;
	unsigned char *point;
	OSSL_PARAM_BLD *bld = NULL;
	OSSL_PARAM *params = NULL;
	EVP_PKEY_CTX *ctx = NULL;
	EVP_PKEY   *pkey = NULL;

	if (!b64url_member(k, "x", &x, &xlen) || !b64url_member(k, "y", &y, &ylen) ||
		xlen != coord || ylen != coord)
		return NULL;
	point = palloc(1 + 2 * coord);	/* uncompressed: 04 || X || Y */
	point[0] = 0x04;
	memcpy(point + 1, x, coord);
	memcpy(point + 1 + coord, y, coord);
	if ((bld = OSSL_PARAM_BLD_new()) != NULL &&
		OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, curve, 0) &&
		OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, point, 1 + 2 * coord) &&
		(params = OSSL_PARAM_BLD_to_param(bld)) != NULL &&
		(ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL)) != NULL &&
		EVP_PKEY_fromdata_init(ctx) == 1)
		(void) EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_PUBLIC_KEY, params);
	EVP_PKEY_CTX_free(ctx);
	OSSL_PARAM_free(params);
	OSSL_PARAM_BLD_free(bld);
	return pkey;
}

static void
free_keys(void *arg)
{
	JwkSet	   *set = arg;
	int			i;

	for (i = 0; i < set->nkeys; i++)
		EVP_PKEY_free(set->keys[i].pkey);
	set->nkeys = 0;
}

/* --------------------------------------------------------------- tokens */

/*
 * JwtDecode
 *		token taken apart (header, claims, signature), or NULL with *why.
 *		Checks the form and the header's alg, not the signature.
 */
Jwt *
JwtDecode(const char *token, const char **why)
{
	const char *dot1 = strchr(token, '.');
	const char *dot2 = dot1 ? strchr(dot1 + 1, '.') : NULL;
	unsigned char *h,
			   *p;
	size_t		hlen,
				plen;
	json_error_t err;
	Jwt		   *t;

	*why = "malformed token";
	if (dot2 == NULL || strchr(dot2 + 1, '.') != NULL)
		return NULL;
	if ((h = b64url(token, dot1 - token, &hlen)) == NULL ||
		(p = b64url(dot1 + 1, dot2 - dot1 - 1, &plen)) == NULL)
		return NULL;
	t = palloc0(sizeof(Jwt));
	t->header = json_loadb((const char *) h, hlen, JSON_REJECT_DUPLICATES, &err);
	t->claims = json_loadb((const char *) p, plen, JSON_REJECT_DUPLICATES, &err);
	t->signature = b64url(dot2 + 1, strlen(dot2 + 1), &t->signature_len);
	if (!json_is_object(t->header) || !json_is_object(t->claims) ||
		t->signature == NULL || t->signature_len == 0)
		return NULL;
	t->alg = json_string_value(json_object_get(t->header, "alg"));
	if (t->alg == NULL || algorithm(t->alg) == NULL)
	{
		*why = "the token's algorithm is not accepted";
		return NULL;
	}
	if (json_object_get(t->header, "crit") != NULL)
	{
		*why = "the token has critical header parameters";
		return NULL;
	}
	t->kid = json_string_value(json_object_get(t->header, "kid"));
	t->signed_part = token;
	t->signed_len = dot2 - token;
	return t;
}

/*
 * JwtVerify
 *		Is the token signed by a key of set that may sign its alg?
 */
bool
JwtVerify(const Jwt *t, const JwkSet *set, const char **why)
{
	const Algorithm *a = algorithm(t->alg);
	bool		candidate = false;
	int			i;

	for (i = 0; set && i < set->nkeys; i++)
	{
		const Jwk  *k = &set->keys[i];

		if (t->kid && (k->kid == NULL || strcmp(k->kid, t->kid) != 0))
			continue;
		if (!key_may_sign(k, a))
			continue;
		candidate = true;
		if (verify_with(k, a, t))
			return true;
	}
	*why = candidate ? "bad signature" : "no key of the issuer may have signed the token";
	return false;
}

/* may k sign with a?  Its family, its curve, and its own "alg" if any */
static bool
key_may_sign(const Jwk *k, const Algorithm *a)
{
	if (k->alg && strcmp(k->alg, a->name) != 0)
		return false;
	if (a->family == FAMILY_EC)
		return !k->rsa && strcmp(k->curve, a->curve) == 0;
	return k->rsa;
}

/* one signature check with EVP */
static bool
verify_with(const Jwk *k, const Algorithm *a, const Jwt *t)
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	EVP_PKEY_CTX *pctx = NULL;
	const EVP_MD *digest = EVP_get_digestbyname(a->digest);
	unsigned char *der = NULL;
	const unsigned char *sig = t->signature;
	size_t		siglen = t->signature_len;
	ECDSA_SIG  *es = NULL;
	bool		ok = false;

	if (md == NULL || digest == NULL)
		goto done;
	if (a->family == FAMILY_EC)
	{
		BIGNUM	   *r,
				   *s;
		int			n;

		if (siglen != 2 * a->coord || (es = ECDSA_SIG_new()) == NULL)
			goto done;
		r = BN_bin2bn(sig, a->coord, NULL);
		s = BN_bin2bn(sig + a->coord, a->coord, NULL);
		if (r == NULL || s == NULL || ECDSA_SIG_set0(es, r, s) != 1)
		{
			BN_free(r);
			BN_free(s);
			goto done;
		}
		if ((n = i2d_ECDSA_SIG(es, &der)) <= 0)
			goto done;
		sig = der;
		siglen = n;
	}
	if (EVP_DigestVerifyInit(md, &pctx, digest, NULL, k->pkey) != 1)
		goto done;
	if (a->family == FAMILY_PSS &&
		(EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING) != 1 ||
		 EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, RSA_PSS_SALTLEN_DIGEST) != 1))
		goto done;
	ok = EVP_DigestVerify(md, sig, siglen, (const unsigned char *) t->signed_part,
						  t->signed_len) == 1;
done:
	OPENSSL_free(der);
	ECDSA_SIG_free(es);
	EVP_MD_CTX_free(md);
	return ok;
}

/*
 * JwtCheckClaims
 *		exp, nbf (now: Unix seconds; leeway: seconds), iss the issuer, aud
 *		holding audience.
 */
bool
JwtCheckClaims(const Jwt *t, const char *issuer, const char *audience, int64 now, int leeway,
			   const char **why)
{
	json_t	   *exp = json_object_get(t->claims, "exp");
	json_t	   *nbf = json_object_get(t->claims, "nbf");
	const char *iss = json_string_value(json_object_get(t->claims, "iss"));
	json_t	   *aud = json_object_get(t->claims, "aud");
	bool		aud_ok = false;
	size_t		i;

	if (!json_is_number(exp))
	{
		*why = "the token has no expiry";
		return false;
	}
	if (json_number_value(exp) + leeway < (double) now)
	{
		*why = "the token has expired";
		return false;
	}
	if (nbf && (!json_is_number(nbf) || json_number_value(nbf) - leeway > (double) now))
	{
		*why = "the token is not valid yet";
		return false;
	}
	if (iss == NULL || strcmp(iss, issuer) != 0)
	{
		*why = "the token's issuer is not a configured one";
		return false;
	}
	if (json_is_string(aud))
		aud_ok = strcmp(json_string_value(aud), audience) == 0;
	else if (json_is_array(aud))
		for (i = 0; i < json_array_size(aud); i++)
			aud_ok |= json_is_string(json_array_get(aud, i)) &&
				strcmp(json_string_value(json_array_get(aud, i)), audience) == 0;
	if (!aud_ok)
	{
		*why = "the token is not meant for this audience";
		return false;
	}
	return true;
}

/* --------------------------------------------------------------- base64 */

static const Algorithm *
algorithm(const char *name)
{
	int			i;

	for (i = 0; i < lengthof(algorithms); i++)
		if (strcmp(algorithms[i].name, name) == 0)
			return &algorithms[i];
	return NULL;
}

/* base64url (no padding) of len bytes of s, decoded; NULL if it is not */
static unsigned char *
b64url(const char *s, size_t len, size_t *out_len)
{
	char	   *std;
	unsigned char *out;
	size_t		i,
				padded = (len + 3) / 4 * 4;
	int			n;

	if (len % 4 == 1 || len > 64 * 1024)
		return NULL;
	std = palloc(padded + 1);
	for (i = 0; i < len; i++)
	{
		char		c = s[i];

		if (c == '-')
			c = '+';
		else if (c == '_')
			c = '/';
		else if (!isalnum((unsigned char) c))
			return NULL;		/* '+', '/', '=' and the rest are not base64url */
		std[i] = c;
	}
	for (; i < padded; i++)
		std[i] = '=';
	out = palloc(pg_b64_dec_len(padded) + 1);
	n = pg_b64_decode(std, padded, out, pg_b64_dec_len(padded));
	if (n < 0)
		return NULL;
	*out_len = n;
	return out;
}

/* the bytes of o's base64url member name */
static bool
b64url_member(json_t *o, const char *name, unsigned char **out, size_t *len)
{
	const char *v = json_string_value(json_object_get(o, name));

	return v != NULL && (*out = b64url(v, strlen(v), len)) != NULL && *len > 0;
}
