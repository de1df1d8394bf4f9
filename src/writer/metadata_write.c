/*-------------------------------------------------------------------------
 *
 * metadata_write.c
 *	  skade.write_table_metadata(): write one new Iceberg table metadata
 *	  file, the only kind of file SQL can make skade write; and the name
 *	  of the next one.
 *
 * Invariants
 *   - The file name is Iceberg's: "<5+ digits>-<uuid>.metadata.json", or
 *     ".gz.metadata.json" (then the text is gzip-compressed, as for
 *     write.metadata.compression-codec = gzip); anything else is 22023.
 *   - The content is checked to be Iceberg table metadata by the same
 *     parser that reads it (metadata_json.c): what is written can be read
 *     back (22SK1 otherwise, and nothing is written).
 *   - The file is created under skade.write_roots, create-only, durably
 *     (file_create.c); an existing file is never replaced.
 *   - What was parsed is installed in the L0 cache for that location
 *     (immutable from now on), so the commit that follows does not read and
 *     parse the file again.
 *   - Nothing is written in a read-only transaction (so never on a hot
 *     standby): the commit that would follow could not happen there.
 * A writer may thus create metadata files, never overwrite or delete
 * anything; EXECUTE on this function is granted to skade_writer, as on
 * the functions that commit pointers.
 *
 * The name of the next metadata file of a table or view is made here only
 * (SkadeNextMetadataLocation: the update_table fast path, and through
 * skade.next_metadata_location() create_table, update_table, create_view
 * and update_view).
 *
 * IDENTIFICATION
 *	  src/writer/metadata_write.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "cache/l0_cache.h"
#include "catalog/privileges.h"
#include "format/metadata_json.h"
#include "io/file_create.h"
#include "util/guc.h"
#include "util/gzip.h"
#include "util/names.h"
#include "writer/metadata_write.h"

PG_FUNCTION_INFO_V1(skade_write_table_metadata);
PG_FUNCTION_INFO_V1(skade_next_metadata_location);


/*
 * skade.write_table_metadata(location text, metadata jsonb, namespace text,
 *		catalog text) -> location
 *
 * namespace (and catalog), when given, name the table's namespace, whose
 * s3.* properties apply to an s3:// location.
 */
Datum
skade_write_table_metadata(PG_FUNCTION_ARGS)
{
	char	   *location;
	Jsonb	   *metadata;
	char	   *text;
	bool		gzip;
	SkadeRoute	route;
	SkadeMeta  *meta;
	char	   *real_path;

	SkadeMetadataWriteArgs(fcinfo, &location, &metadata, &route, &gzip);
	text = JsonbToCString(NULL, &metadata->root, VARSIZE(metadata));
	/* readable by skade's own reader, or not written at all */
	meta = SkadeParseMetadata(text, strlen(text), location);
	real_path = SkadeMetadataWrite(&route, location, text, strlen(text), gzip);
	/* the commit that follows reads it from the cache, not the disk */
	L0Seed(location, meta, real_path);
	PG_RETURN_TEXT_P(cstring_to_text(location));
}

/*
 * SkadeMetadataWriteArgs
 *		The checked arguments (location, metadata, namespace, catalog) of
 *		write_table_metadata and write_view_metadata: metadata not NULL, the
 *		caller may write location (in the namespace, when one is given: then
 *		*route is its route, else the settings'), the transaction may write,
 *		and the file name is a metadata file's (*gzip: a .gz one).
 */
void
SkadeMetadataWriteArgs(FunctionCallInfo fcinfo, char **location, Jsonb **metadata,
					   SkadeRoute *route, bool *gzip)
{
	*location = SkadeTextArg(fcinfo, 0, "location");
	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("metadata must not be NULL")));
	*metadata = PG_GETARG_JSONB_P(1);
	route->catalog = route->ns = route->resolved = NULL;
	if (PG_NARGS() > 2 && !PG_ARGISNULL(2))
	{
		route->catalog = SkadeResolveCatalog(SkadeOptTextArg(fcinfo, 3));
		route->ns = SkadeTextArg(fcinfo, 2, "namespace");
	}
	SkadeRequireWriteIn(route->catalog, route->ns, *location);
	/* a hot standby or a read-only transaction writes no file either */
	if (XactReadOnly)
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot write \"%s\" in a read-only transaction", *location),
				 RecoveryInProgress() ?
				 errdetail("This server is a hot standby: write through the primary.") : 0));
	if (!SkadeMetadataFileName(*location, gzip))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("\"%s\" is not the name of an Iceberg metadata file", *location),
				 errdetail("The file name must be <version>-<uuid>.metadata.json or <version>-<uuid>.gz.metadata.json.")));
}

/*
 * SkadeMetadataWrite
 *		Create the metadata file at location (by route) holding the len bytes of text, gzip'd
 *		when gzip; returns its real path.
 */
char *
SkadeMetadataWrite(const SkadeRoute *route, const char *location, const char *text, Size len,
				   bool gzip)
{
	if (gzip)
	{
		StringInfo	z = SkadeGzip(text, len);

		return SkadeCreateFile(route, location, z->data, z->len);
	}
	return SkadeCreateFile(route, location, text, len);
}

/*
 * SkadeMetadataFileName
 *		Is the last component of location "<digits>-<uuid>[.gz].metadata.json"?
 */
bool
SkadeMetadataFileName(const char *location, bool *gzip)
{
	const char *name = strrchr(location, '/');
	const char *p;
	int			digits = 0;
	int			i;

	if (name == NULL)
		return false;
	name++;
	for (p = name; *p >= '0' && *p <= '9'; p++)
		digits++;
	if (digits < 5 || *p++ != '-')
		return false;
	/* 8-4-4-4-12 hex digits */
	for (i = 0; i < 36; i++, p++)
	{
		bool		dash = (i == 8 || i == 13 || i == 18 || i == 23);

		if (dash ? *p != '-' : !((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return false;
	}
	*gzip = strcmp(p, ".gz.metadata.json") == 0;
	return *gzip || strcmp(p, ".metadata.json") == 0;
}

/* s without its trailing slashes (in place) */
static char *
rtrim_slashes(char *s)
{
	size_t		n = strlen(s);

	while (n > 0 && s[n - 1] == '/')
		s[--n] = '\0';
	return s;
}

/*
 * SkadeNextMetadataLocation
 *		The location of the metadata file that follows the one at previous
 *		(NULL: the first, version 0), as Iceberg's writers name it:
 *		<dir>/<version, at least 5 digits>-<random uuid>.metadata.json, or
 *		.gz.metadata.json when codec is gzip (*gzip then); version is one
 *		more than the digits previous's file name starts with (1 when it
 *		has none); dir is metadata_path without trailing slashes, else
 *		table_location's "metadata" directory.  A version of more than 18
 *		digits is 22003.
 */
char *
SkadeNextMetadataLocation(const char *previous, const char *table_location,
						  const char *metadata_path, const char *codec, bool *gzip)
{
	int64		version = 0;
	char	   *dir;
	uint8		u[16];

	if (previous)
	{
		const char *last = strrchr(previous, '/');
		int			digits = 0;

		while (last && last[1 + digits] >= '0' && last[1 + digits] <= '9')
			digits++;
		if (digits > 18)
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("the version of metadata file \"%s\" is out of range", previous)));
		if (digits > 0 && last[1 + digits] == '-')
			version = strtoi64(last + 1, NULL, 10);
		version++;
	}
	if (metadata_path)
		dir = rtrim_slashes(pstrdup(metadata_path));
	else
		dir = psprintf("%s/metadata", rtrim_slashes(pstrdup(table_location ? table_location : "")));
	*gzip = codec && pg_strcasecmp(codec, "gzip") == 0;
	if (!pg_strong_random(u, sizeof(u)))
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("could not generate random values")));
	u[6] = (u[6] & 0x0f) | 0x40;	/* version 4, as gen_random_uuid() */
	u[8] = (u[8] & 0x3f) | 0x80;
	return psprintf("%s/%05lld-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
					"%02x%02x%02x%02x%02x%02x%s",
					dir, (long long) version,
					u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9],
					u[10], u[11], u[12], u[13], u[14], u[15],
					*gzip ? ".gz.metadata.json" : ".metadata.json");
}

/*
 * skade.next_metadata_location(previous text, table_location text,
 *		metadata_path text, codec text) -> text: SkadeNextMetadataLocation
 *		for the PL/pgSQL writers (the properties write.metadata.path and
 *		write.metadata.compression-codec as ->> gives them).
 */
Datum
skade_next_metadata_location(PG_FUNCTION_ARGS)
{
	bool		gzip;

	if (PG_ARGISNULL(1) && PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("table_location and metadata_path must not both be NULL")));
	PG_RETURN_TEXT_P(cstring_to_text(SkadeNextMetadataLocation(SkadeOptTextArg(fcinfo, 0),
															   SkadeOptTextArg(fcinfo, 1),
															   SkadeOptTextArg(fcinfo, 2),
															   SkadeOptTextArg(fcinfo, 3),
															   &gzip)));
}
