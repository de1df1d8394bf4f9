/*-------------------------------------------------------------------------
 *
 * rest_oidc.h
 *	  Bearer JWTs of OpenID providers: the issuers' keys and the checks
 *	  (see rest_oidc.c).
 *
 * IDENTIFICATION
 *	  src/rest/rest_oidc.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_REST_OIDC_H
#define SKADE_REST_OIDC_H

extern bool RestOidcConfigured(void);
extern bool RestOidcVerify(const char *token, char **issuer, char **claims, const char **why);

#endif							/* SKADE_REST_OIDC_H */
