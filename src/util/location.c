/*-------------------------------------------------------------------------
 *
 * location.c
 *	  The syntax of locations, roots and endpoints: an s3:// location
 *	  parsed and checked, a roots setting split into local directories and
 *	  s3:// prefixes, an S3 endpoint checked.  Pure functions of their
 *	  arguments, below both the settings (guc.c's check hooks) and the
 *	  object store (which confines requests with them).
 *
 * Invariants
 *   - A location is s3://bucket/key (s3a:// and s3n:// read as s3://): a
 *     bucket of 3 to 63 letters, digits, '.', '-' or '_', a key of at most
 *     1024 bytes with no control characters and no "." or ".." segment (a
 *     server or proxy could resolve them; S3 itself would not).  Its
 *     canonical form is s3://bucket/key.
 *   - A roots entry s3://b/p contains keys "p" and "p/..." of bucket b (the
 *     literal string, no normalisation), s3://b the whole bucket.
 *   - An endpoint is http(s)://host[:port] and nothing else.
 *
 * Memory: results in CurrentMemoryContext.
 *
 * IDENTIFICATION
 *	  src/util/location.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "utils/varlena.h"

#include "util/location.h"

#define MAX_KEY_LEN 1024

/*
 * SkadeIsObjectLocation
 *		Does location name an object (s3://, s3a://, s3n://)?
 */
bool
SkadeIsObjectLocation(const char *location)
{
	return strncmp(location, "s3://", 5) == 0 || strncmp(location, "s3a://", 6) == 0 ||
		strncmp(location, "s3n://", 6) == 0;
}

/*
 * SkadeSplitRoots
 *		The entries of a roots setting: local directories (as
 *		SplitDirectoriesString gives them) into *dirs, s3:// prefixes
 *		(canonical, no trailing slash) into *prefixes.  false on a syntax
 *		error.
 */
bool
SkadeSplitRoots(const char *setting, List **dirs, List **prefixes)
{
	StringInfoData local;
	char	   *copy = pstrdup(setting ? setting : "");
	char	   *save = NULL;
	char	   *tok;

	*dirs = NIL;
	*prefixes = NIL;
	initStringInfo(&local);
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
	{
		char	   *t = tok;
		size_t		n;
		S3Location	o;

		while (*t == ' ' || *t == '\t')
			t++;
		n = strlen(t);
		while (n > 0 && (t[n - 1] == ' ' || t[n - 1] == '\t'))
			t[--n] = '\0';
		if (!SkadeIsObjectLocation(t))
		{
			appendStringInfo(&local, "%s%s", local.len ? "," : "", t);
			continue;
		}
		while (n > 0 && t[n - 1] == '/')
			t[--n] = '\0';
		if (!SkadeS3Parse(t, &o, NULL, false, true))
			return false;
		*prefixes = lappend(*prefixes, o.canonical);
	}
	return SplitDirectoriesString(local.data, ',', dirs);
}

/*
 * SkadeS3Parse
 *		Parse and check an s3:// location (see the banner).  report: raise (verb names
 * the act) instead of returning false.  prefix: a roots entry, whose key
 * may be empty (a whole bucket; canonical "s3://bucket").
 */
bool
SkadeS3Parse(const char *location, S3Location *o, const char *verb, bool report, bool prefix)
{
	const char *p = strstr(location, "://");
	const char *slash;
	const char *why = NULL;
	size_t		blen;
	const unsigned char *c;

	p = p ? p + 3 : location;
	slash = strchr(p, '/');
	blen = slash ? (size_t) (slash - p) : strlen(p);
	if (!SkadeIsObjectLocation(location))
		why = "it is not an s3:// location";
	else if (!prefix && (slash == NULL || slash[1] == '\0'))
		why = "it names no object key";
	else if (blen < 3 || blen > 63 ||
			 strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_") < blen)
		why = "its bucket name is not valid";
	else if (slash && strlen(slash + 1) > MAX_KEY_LEN)
		why = "its key is longer than 1024 bytes";
	for (c = (const unsigned char *) location; why == NULL && *c; c++)
		if (*c < 0x20 || *c == 0x7f)
			why = "it contains a control character";
	if (why == NULL && slash)
	{
		const char *k = slash + 1;

		while (why == NULL && *k)
		{
			size_t		n = strcspn(k, "/");

			if ((n == 1 && k[0] == '.') || (n == 2 && k[0] == '.' && k[1] == '.'))
				why = "its key has a \".\" or \"..\" segment";
			k += n;
			if (*k == '/')
				k++;
		}
	}
	if (why)
	{
		if (!report)
			return false;
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot %s \"%s\": %s", verb, location, why)));
	}
	o->bucket = pnstrdup(p, blen);
	o->key = pstrdup(slash ? slash + 1 : "");
	o->canonical = o->key[0] ? psprintf("s3://%s/%s", o->bucket, o->key)
		: psprintf("s3://%s", o->bucket);
	return true;
}

/*
 * SkadeS3PrefixContains
 *		Is the object inside the s3:// entry prefix ("s3://b" or "s3://b/p")?
 */
bool
SkadeS3PrefixContains(const char *prefix, const S3Location *o)
{
	const char *b = prefix + 5;
	size_t		blen = strcspn(b, "/");
	const char *p;
	size_t		plen;

	if (blen != strlen(o->bucket) || strncmp(b, o->bucket, blen) != 0)
		return false;
	if (b[blen] == '\0')
		return true;
	p = b + blen + 1;
	plen = strlen(p);
	return strncmp(o->key, p, plen) == 0 && (o->key[plen] == '/' || o->key[plen] == '\0');
}

/*
 * SkadeEndpointValid
 *		Is text an endpoint: http(s)://host[:port], optionally one trailing
 *		slash, host of letters, digits, '-', '.', or a bracketed IPv6
 *		address, and no user, path, query or control characters?
 */
bool
SkadeEndpointValid(const char *text)
{
	const char *p = text;

	if (strncmp(p, "https://", 8) == 0)
		p += 8;
	else if (strncmp(p, "http://", 7) == 0)
		p += 7;
	else
		return false;
	if (*p == '[')
	{
		p++;
		p += strspn(p, "0123456789abcdefABCDEF:.");
		if (*p++ != ']')
			return false;
	}
	else
	{
		size_t		n = strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-.");

		if (n == 0)
			return false;
		p += n;
	}
	if (*p == ':')
	{
		size_t		n = strspn(p + 1, "0123456789");

		if (n == 0 || n > 5)
			return false;
		p += 1 + n;
	}
	if (*p == '/')
		p++;
	return *p == '\0';
}
