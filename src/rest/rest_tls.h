/*-------------------------------------------------------------------------
 *
 * rest_tls.h
 *	  TLS of the REST port: its certificate, key and client CA read from
 *	  their files, and a client's certificate checked (see rest_tls.c).
 *
 * IDENTIFICATION
 *	  src/rest/rest_tls.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_REST_TLS_H
#define SKADE_REST_TLS_H

/* TLS 1.2 and 1.3 only, GnuTLS's defaults otherwise */
#define REST_TLS_PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"

typedef struct RestTls
{
	MemoryContext cxt;			/* everything below; deleted by RestTlsFree */
	char	   *cert;			/* PEM text */
	char	   *key;
	char	   *ca;				/* NULL: no client certificate asked */
	char		fingerprint[65];	/* SHA-256 hex of the three */
} RestTls;

extern bool RestTlsConfigured(void);
extern RestTls *RestTlsLoad(int elevel);
extern void RestTlsFree(RestTls *tls);
extern bool RestTlsPeerVerified(void *gnutls_session);

#endif							/* SKADE_REST_TLS_H */
