/*-------------------------------------------------------------------------
 *
 * rest_tls.c
 *	  TLS of the REST port: the certificate, key and client CA files read
 *	  into memory for libmicrohttpd, and a client's certificate checked
 *	  against that CA.  The only file that calls GnuTLS (libmicrohttpd's
 *	  TLS library in Debian's build) directly.
 *
 * Invariants
 *   - TLS is on when skade.rest_tls_cert_file and skade.rest_tls_key_file
 *     are both set; the REST port then speaks TLS 1.2 or 1.3 only
 *     (REST_TLS_PRIORITIES) and plain HTTP only on
 *     skade.rest_plaintext_port, when one is set.
 *   - The key file is refused as PostgreSQL refuses its ssl_key_file
 *     (check_ssl_key_file_permissions: owned by the server's user with no
 *     group or world access, or by root with group read at most).  Each
 *     file is at most TLS_FILE_MAX bytes.
 *   - A fingerprint (SHA-256 of the three texts) tells the listener when
 *     a reload changed them (rest_http.c then starts daemons with the new
 *     ones and lets the old drain).
 *   - With skade.rest_tls_ca_file, libmicrohttpd asks every client for a
 *     certificate and RestTlsPeerVerified checks it: present, valid now,
 *     and signed by that CA (gnutls_certificate_verify_peers2); the
 *     listener refuses a request of a connection that fails it.
 *
 * Memory: what RestTlsLoad returns lives in a "skade rest tls" context of
 * its own, below TopMemoryContext, until RestTlsFree.
 *
 * IDENTIFICATION
 *	  src/rest/rest_tls.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include <gnutls/gnutls.h>
#include <sys/stat.h>

#include "storage/fd.h"
#include "utils/memutils.h"

#include "util/guc.h"
#include "rest/rest_tls.h"
#include "util/sigv4.h"

#define TLS_FILE_MAX (1024 * 1024)

/*
 * be-secure-common.c's, declared in libpq/libpq.h (the same on 15 to 18),
 * which this file does not include: it drags in libpq-be.h and the GSSAPI
 * headers, which a build without them lacks.
 */
extern bool check_ssl_key_file_permissions(const char *ssl_key_file, bool isServerStart);

static char *read_pem(const char *what, const char *path, bool key, int elevel);

/* Are a certificate and a key set? */
bool
RestTlsConfigured(void)
{
	return skade_rest_tls_cert_file && skade_rest_tls_cert_file[0] &&
		skade_rest_tls_key_file && skade_rest_tls_key_file[0];
}

/*
 * RestTlsLoad
 *		The files of the settings, or NULL (reported at elevel) when TLS is
 *		not configured (not reported) or a file cannot be used.
 */
RestTls *
RestTlsLoad(int elevel)
{
	MemoryContext cxt;
	MemoryContext old;
	RestTls    *t;
	StringInfoData all;

	if (!RestTlsConfigured())
		return NULL;
	cxt = AllocSetContextCreate(TopMemoryContext, "skade rest tls", ALLOCSET_SMALL_SIZES);
	old = MemoryContextSwitchTo(cxt);
	t = palloc0(sizeof(RestTls));
	t->cxt = cxt;
	t->cert = read_pem("skade.rest_tls_cert_file", skade_rest_tls_cert_file, false, elevel);
	t->key = t->cert ? read_pem("skade.rest_tls_key_file", skade_rest_tls_key_file, true, elevel) : NULL;
	if (t->key && skade_rest_tls_ca_file && skade_rest_tls_ca_file[0])
	{
		t->ca = read_pem("skade.rest_tls_ca_file", skade_rest_tls_ca_file, false, elevel);
		if (t->ca == NULL)
			t->key = NULL;
	}
	MemoryContextSwitchTo(old);
	if (t->key == NULL)
	{
		MemoryContextDelete(cxt);
		return NULL;
	}
	initStringInfo(&all);
	appendStringInfo(&all, "%s%c%s%c%s", t->cert, 0, t->key, 0, t->ca ? t->ca : "");
	SkadeSha256Hex(all.data, all.len, t->fingerprint);
	explicit_bzero(all.data, all.len);
	pfree(all.data);
	return t;
}

void
RestTlsFree(RestTls *t)
{
	if (t == NULL)
		return;
	if (t->key)
		explicit_bzero(t->key, strlen(t->key));
	MemoryContextDelete(t->cxt);
}

/*
 * RestTlsPeerVerified
 *		Did the client of this GnuTLS session present a certificate that
 *		skade.rest_tls_ca_file's CA signed and that is valid now?
 */
bool
RestTlsPeerVerified(void *session)
{
	gnutls_session_t s = (gnutls_session_t) session;
	unsigned int status = 0;
	unsigned int n = 0;

	if (s == NULL || gnutls_certificate_get_peers(s, &n) == NULL || n == 0)
		return false;
	return gnutls_certificate_verify_peers2(s, &status) == GNUTLS_E_SUCCESS && status == 0;
}

/* the text of a PEM file (NULL, reported at elevel, when it cannot be used) */
static char *
read_pem(const char *what, const char *path, bool key, int elevel)
{
	struct stat st;
	FILE	   *f;
	char	   *buf;
	size_t		n;

	if (stat(path, &st) != 0)
	{
		ereport(elevel,
				(errcode_for_file_access(),
				 errmsg("could not access %s \"%s\": %m", what, path)));
		return NULL;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > TLS_FILE_MAX)
	{
		ereport(elevel,
				(errcode(ERRCODE_CONFIG_FILE_ERROR),
				 errmsg("%s \"%s\" is not a regular file of at most %d bytes", what, path, TLS_FILE_MAX)));
		return NULL;
	}
	/* PostgreSQL's own rule for ssl_key_file (it logs why, at LOG) */
	if (key && !check_ssl_key_file_permissions(path, false))
	{
		ereport(elevel,
				(errcode(ERRCODE_CONFIG_FILE_ERROR),
				 errmsg("%s \"%s\" cannot be used: its owner or permissions are not those of a private key",
						what, path),
				 errdetail("It must be owned by the database user with permissions u=rw (0600) or less, "
						   "or by root with permissions u=rw,g=r (0640) or less.")));
		return NULL;
	}
	if ((f = AllocateFile(path, PG_BINARY_R)) == NULL)
	{
		ereport(elevel,
				(errcode_for_file_access(),
				 errmsg("could not open %s \"%s\": %m", what, path)));
		return NULL;
	}
	buf = palloc(TLS_FILE_MAX + 1);
	n = fread(buf, 1, TLS_FILE_MAX, f);
	if (ferror(f))
	{
		FreeFile(f);
		ereport(elevel,
				(errcode_for_file_access(),
				 errmsg("could not read %s \"%s\": %m", what, path)));
		return NULL;
	}
	FreeFile(f);
	buf[n] = '\0';
	if (strstr(buf, "-----BEGIN ") == NULL)
	{
		ereport(elevel,
				(errcode(ERRCODE_CONFIG_FILE_ERROR),
				 errmsg("%s \"%s\" holds no PEM block", what, path)));
		return NULL;
	}
	return buf;
}
