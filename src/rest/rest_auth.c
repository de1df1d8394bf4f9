/*-------------------------------------------------------------------------
 *
 * rest_auth.c
 *	  Who a REST request is: the Authorization header mapped to a role
 *	  that may log in now, or a refusal (a 401 for the caller).
 *
 * Invariants
 *   - A static token (Bearer <token>, or Basic <role>:<token>) counts only
 *     when its SHA-256 is in skade.rest_tokens, unexpired, and the role it
 *     was made for -- bound by OID, so a role dropped and created again
 *     under the same name is a stranger -- passes RestRoleUsable: it
 *     exists, has LOGIN, its VALID UNTIL has not passed, and it is not a
 *     superuser unless skade.rest_allow_superuser says so.  The same
 *     checks run on every request: ALTER ROLE ... NOLOGIN or VALID UNTIL
 *     takes effect on the next one.
 *   - A Bearer JWT (three base64url parts, not a skade_ token) is verified
 *     by rest_oidc.c when OpenID issuers and an audience are configured.
 *     Its role: first skade.rest_oidc_roles, the rows of the token's
 *     issuer whose claim (a dotted path into the claims) equals or, for an
 *     array, holds their value -- a "sub" row wins over the others, and the
 *     rows that decide must all name one role (else refused: ambiguous);
 *     without a row, the string claim skade.rest_oidc_role_claim (default
 *     "sub"; empty: the table only) names the role.  It meets the same
 *     checks as a token's role.
 *   - No credentials: skade.rest_anonymous_role when set (it need not have
 *     LOGIN -- it is a group the operator chose -- but may not be a
 *     superuser unless allowed), else a refusal.
 *   - Every refusal says the same to the caller ("invalid or expired
 *     credentials": nothing that tells a guessed token from a disabled
 *     role); why it was refused, when the token was a known one, goes to
 *     the server log with the token's id, never its secret.
 *
 * Locking: none of its own; reads rest_tokens through SPI (the caller's
 * transaction and SPI connection) and pg_authid through the syscache.
 *
 * IDENTIFICATION
 *	  src/rest/rest_auth.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "access/htup_details.h"
#include "catalog/pg_authid.h"
#include "common/base64.h"
#include "executor/spi.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "util/guc.h"
#include "rest/rest_auth.h"
#include "rest/rest_oidc.h"
#include "util/sigv4.h"

#define REFUSED "invalid or expired credentials"

static Oid	token_role(const char *token, const char *user, const char **problem);
static bool looks_like_jwt(const char *token);
static Oid	oidc_role(const char *issuer, const char *claims, const char **why);

/*
 * RestAuthenticate
 *		The role the credentials in authorization (the header, or NULL)
 *		stand for, or InvalidOid with *problem saying what to answer.
 *		Inside a transaction, SPI connected, as the executor's superuser.
 */
Oid
RestAuthenticate(const char *authorization, const char **problem)
{
	const char *h = authorization;
	const char *token = NULL;
	char	   *user = NULL;

	*problem = REFUSED;
	if (h == NULL)
	{
		const char *why;
		Oid			anon;

		if (skade_rest_anonymous_role == NULL || skade_rest_anonymous_role[0] == '\0')
		{
			*problem = "credentials are required";
			return InvalidOid;
		}
		anon = get_role_oid(skade_rest_anonymous_role, true);
		if (!RestRoleUsable(anon, false, &why))
		{
			ereport(LOG,
					(errmsg("skade.rest_anonymous_role \"%s\" refused: %s",
							skade_rest_anonymous_role, why)));
			*problem = "credentials are required";
			return InvalidOid;
		}
		return anon;
	}
	if (pg_strncasecmp(h, "Bearer ", 7) == 0)
		token = h + 7;
	else if (pg_strncasecmp(h, "Basic ", 6) == 0)
	{
		int			len = pg_b64_dec_len(strlen(h + 6));
		char	   *dec = palloc(len + 1);
		int			n = pg_b64_decode(h + 6, strlen(h + 6), (uint8 *) dec, len);
		char	   *colon;

		if (n >= 0)
		{
			dec[n] = '\0';
			if ((colon = strchr(dec, ':')) != NULL)
			{
				*colon = '\0';
				user = dec;
				token = colon + 1;
			}
		}
	}
	if (token == NULL || token[0] == '\0')
	{
		*problem = "unsupported or malformed credentials";
		return InvalidOid;
	}
	if (user == NULL && looks_like_jwt(token) && RestOidcConfigured())
	{
		const char *why = NULL;
		char	   *issuer;
		char	   *claims;
		Oid			role = InvalidOid;

		if (RestOidcVerify(token, &issuer, &claims, &why))
			role = oidc_role(issuer, claims, &why);

		if (OidIsValid(role) && !RestRoleUsable(role, true, &why))
			role = InvalidOid;
		if (!OidIsValid(role))
			ereport(LOG,
					(errmsg("REST bearer token refused: %s", why ? why : "not verified")));
		return role;
	}
	return token_role(token, user, problem);
}

/*
 * RestRoleUsable
 *		May requests run as role?  It exists, is not a superuser (unless
 *		skade.rest_allow_superuser), and with need_login has LOGIN and an
 *		unexpired VALID UNTIL; else false with *why for the log.
 */
bool
RestRoleUsable(Oid role, bool need_login, const char **why)
{
	HeapTuple	tup;
	Form_pg_authid a;
	bool		isnull;
	Datum		until;
	bool		ok = false;

	if (!OidIsValid(role) ||
		!HeapTupleIsValid(tup = SearchSysCache1(AUTHOID, ObjectIdGetDatum(role))))
	{
		*why = "its role no longer exists";
		return false;
	}
	a = (Form_pg_authid) GETSTRUCT(tup);
	until = SysCacheGetAttr(AUTHOID, tup, Anum_pg_authid_rolvaliduntil, &isnull);
	if (a->rolsuper && !skade_rest_allow_superuser)
		*why = psprintf("role \"%s\" is a superuser (skade.rest_allow_superuser is off)",
						NameStr(a->rolname));
	else if (need_login && !a->rolcanlogin)
		*why = psprintf("role \"%s\" cannot log in", NameStr(a->rolname));
	else if (need_login && !isnull && DatumGetTimestampTz(until) < GetCurrentTimestamp())
		*why = psprintf("the password of role \"%s\" has expired (VALID UNTIL)", NameStr(a->rolname));
	else
		ok = true;
	ReleaseSysCache(tup);
	return ok;
}

/*
 * The role of a static token (user: the role Basic named, or NULL), or
 * InvalidOid.
 */
static Oid
token_role(const char *token, const char *user, const char **problem)
{
	char		hex[65];
	Oid			types[1] = {TEXTOID};
	Datum		values[1];
	int64		id;
	Oid			role;
	char	   *name;
	bool		isnull;
	const char *why;

	SkadeSha256Hex(token, strlen(token), hex);
	values[0] = CStringGetTextDatum(hex);
	if (SPI_execute_with_args("SELECT t.token_id, t.role_oid, t.role_name::pg_catalog.text"
							  " FROM skade.rest_tokens t"
							  " WHERE t.token_hash OPERATOR(pg_catalog.=) pg_catalog.decode($1, 'hex')"
							  " AND (t.expires_at IS NULL"
							  "      OR t.expires_at OPERATOR(pg_catalog.>) pg_catalog.now())",
							  1, types, values, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not look up a REST token");
	if (SPI_processed == 0)
		return InvalidOid;		/* unknown or expired: not logged */
	id = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	role = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
	name = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3);
	if (user && strcmp(user, name) != 0)
	{
		ereport(LOG,
				(errmsg("REST token %lld refused: Basic credentials name another role",
						(long long) id)));
		return InvalidOid;
	}
	if (!RestRoleUsable(role, true, &why))
	{
		ereport(LOG,
				(errmsg("REST token %lld (made for role \"%s\") refused: %s",
						(long long) id, name, why)));
		return InvalidOid;
	}
	*problem = NULL;
	return role;
}

/* header.payload.signature, each base64url, not one of skade's tokens */
static bool
looks_like_jwt(const char *token)
{
	const char *p;
	int			dots = 0;

	if (strncmp(token, "skade_", 6) == 0)
		return false;
	for (p = token; *p; p++)
	{
		if (*p == '.')
			dots++;
		else if (!(isalnum((unsigned char) *p) || *p == '-' || *p == '_'))
			return false;
	}
	return dots == 2;
}

/* the role of a verified JWT's claims (see the banner), or InvalidOid */
static Oid
oidc_role(const char *issuer, const char *claims, const char **why)
{
	Oid			types[3] = {TEXTOID, TEXTOID, TEXTOID};
	Datum		values[3];
	char		nulls[3] = {' ', ' ', ' '};
	Oid			role = InvalidOid;
	bool		first_sub = false;
	const char *claim = skade_rest_oidc_role_claim;
	uint64		i;
	bool		isnull;
	char	   *name;

	values[0] = CStringGetTextDatum(issuer);
	values[1] = CStringGetTextDatum(claims);
	/* "sub" rows first: when there is one, the group rows after it do not count */
	if (SPI_execute_with_args("SELECT m.role_oid, m.claim OPERATOR(pg_catalog.=) 'sub'"
							  " FROM skade.rest_oidc_roles m"
							  " WHERE m.issuer OPERATOR(pg_catalog.=) $1"
							  " AND ($2::pg_catalog.jsonb OPERATOR(pg_catalog.#>)"
							  "      pg_catalog.string_to_array(m.claim, '.'))"
							  "     OPERATOR(pg_catalog.@>) pg_catalog.to_jsonb(m.value)"
							  " ORDER BY 2 DESC",
							  2, types, values, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not look up the role of an OpenID token");
	for (i = 0; i < SPI_processed; i++)
	{
		Oid			r = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[i],
													   SPI_tuptable->tupdesc, 1, &isnull));
		bool		sub = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[i],
													 SPI_tuptable->tupdesc, 2, &isnull));

		if (i == 0)
			first_sub = sub;
		else if (sub != first_sub)
			break;
		if (OidIsValid(role) && r != role)
		{
			*why = "the token maps to more than one role in skade.rest_oidc_roles";
			return InvalidOid;
		}
		role = r;
	}
	if (OidIsValid(role))
		return role;
	if (claim == NULL || claim[0] == '\0')
	{
		*why = "the token maps to no role in skade.rest_oidc_roles";
		return InvalidOid;
	}
	values[2] = CStringGetTextDatum(claim);
	if (SPI_execute_with_args("SELECT $2::pg_catalog.jsonb OPERATOR(pg_catalog.#>>)"
							  " pg_catalog.string_to_array($3, '.')"
							  " WHERE pg_catalog.jsonb_typeof($2::pg_catalog.jsonb OPERATOR(pg_catalog.#>)"
							  " pg_catalog.string_to_array($3, '.')) OPERATOR(pg_catalog.=) 'string'",
							  3, types, values, nulls, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the role claim of an OpenID token");
	name = SPI_processed == 1 ? SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1) : NULL;
	if (name == NULL || !OidIsValid(role = get_role_oid(name, true)))
	{
		*why = psprintf("the token's claim \"%s\" names no role", claim);
		return InvalidOid;
	}
	return role;
}
