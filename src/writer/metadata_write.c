/*-------------------------------------------------------------------------
 *
 * metadata_write.c
 *	  skade.write_table_metadata(): write one new Iceberg table metadata
 *	  file, the only kind of file SQL can make skade write.
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

#include "io/file_create.h"
#include "util/guc.h"
#include "util/gzip.h"
#include "cache/l0_cache.h"
#include "format/metadata_json.h"
#include "catalog/privileges.h"
#include "writer/metadata_write.h"
#include "io/object_store.h"
#include "util/names.h"

PG_FUNCTION_INFO_V1(skade_write_table_metadata);


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
	char	   *location = SkadeTextArg(fcinfo, 0, "location");
	Jsonb	   *metadata;
	char	   *text;
	bool		gzip;
	SkadeMeta  *meta;
	char	   *real_path;

	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("metadata must not be NULL")));
	metadata = PG_GETARG_JSONB_P(1);
	if (PG_NARGS() > 2 && !PG_ARGISNULL(2))
	{
		const char *catalog = SkadeResolveCatalog(SkadeOptTextArg(fcinfo, 3));
		char	   *ns = SkadeTextArg(fcinfo, 2, "namespace");

		SkadeObjectScope(catalog, ns);
		SkadeRequireWriteIn(catalog, ns, location);
	}
	else
		SkadeRequireWriteIn(NULL, NULL, location);
	/* a hot standby or a read-only transaction writes no file either */
	if (XactReadOnly)
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot write \"%s\" in a read-only transaction", location),
				 RecoveryInProgress() ?
				 errdetail("This server is a hot standby: write through the primary.") : 0));
	if (!SkadeMetadataFileName(location, &gzip))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("\"%s\" is not the name of an Iceberg metadata file", location),
				 errdetail("The file name must be <version>-<uuid>.metadata.json or <version>-<uuid>.gz.metadata.json.")));
	text = JsonbToCString(NULL, &metadata->root, VARSIZE(metadata));
	/* readable by skade's own reader, or not written at all */
	meta = SkadeParseMetadata(text, strlen(text), location);
	if (gzip)
	{
		StringInfo	z = SkadeGzip(text, strlen(text));

		real_path = SkadeCreateFile(location, z->data, z->len);
	}
	else
		real_path = SkadeCreateFile(location, text, strlen(text));
	/* the commit that follows reads it from the cache, not the disk */
	L0Seed(location, meta, real_path);
	PG_RETURN_TEXT_P(cstring_to_text(location));
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
