/*-------------------------------------------------------------------------
 *
 * jwt.h
 *	  JSON Web Tokens signed with a public key (JWS compact form): key sets
 *	  from JWKS text, signature verification over OpenSSL's libcrypto, the
 *	  registered claims (see jwt.c).
 *
 * IDENTIFICATION
 *	  src/util/jwt.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_JWT_H
#define SKADE_JWT_H

#include <jansson.h>

typedef struct JwkSet JwkSet;	/* public keys; opaque */

/* a token taken apart, its signature not yet checked */
typedef struct Jwt
{
	const char *alg;			/* the header's, one jwt.c accepts */
	const char *kid;			/* the header's, or NULL */
	json_t	   *header;
	json_t	   *claims;			/* the payload, an object */
	const char *signed_part;	/* header.payload as received */
	size_t		signed_len;
	unsigned char *signature;
	size_t		signature_len;
} Jwt;

extern JwkSet *JwkSetParse(const char *text, size_t len, const char **why);
extern bool JwkSetHasKid(const JwkSet *set, const char *kid);
extern Jwt *JwtDecode(const char *token, const char **why);
extern bool JwtVerify(const Jwt *token, const JwkSet *set, const char **why);
extern bool JwtCheckClaims(const Jwt *token, const char *issuer, const char *audience, int64 now,
						   int leeway, const char **why);

#endif							/* SKADE_JWT_H */
