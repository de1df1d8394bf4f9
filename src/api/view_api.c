/*-------------------------------------------------------------------------
 *
 * view_api.c
 *	  Iceberg view metadata files: read the current one of a view, write a
 *	  new one; and the changes of a view's row, logged as API changes (the
 *	  view logic itself is SQL: skade.create_view, skade.update_view, ... in
 *	  the extension's script).
 *
 * Invariants
 *   - A view is a row of public.iceberg_tables with iceberg_type 'VIEW', as
 *     the JDBC catalog keeps it; its metadata is read through the same
 *     confined file access as a table's (file_access.c: roots, size cap,
 *     gzip) and handed over as text that must be valid UTF-8 without NUL
 *     (the SQL side parses it as jsonb and checks its shape).
 *   - A view metadata file is written create-only under skade.write_roots
 *     with Iceberg's file names (<version>-<uuid>[.gz].metadata.json), only
 *     when it is a JSON object with a string view-uuid, format-version 1, a
 *     location and a non-empty versions array (skade's own output, checked).
 *   - Reads and writes run as the caller: EXECUTE on these functions and
 *     the privileges on public.iceberg_tables decide who may.
 *   - skade.view_pointer() makes each change of a view's row (insert, swap,
 *     move, delete: catalog_store.c, on rows with iceberg_type 'VIEW' only)
 *     between SkadeOpBegin and SkadeOpEnd, so the commit log records it as
 *     the API change it is (source 'api', op create/register/commit/
 *     rename/drop), as it records skade's table functions.
 *
 * IDENTIFICATION
 *	  src/api/view_api.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "fmgr.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "api/api.h"
#include "catalog/catalog_store.h"
#include "catalog/commit_log.h"
#include "io/file_access.h"
#include "io/file_create.h"
#include "util/guc.h"
#include "util/gzip.h"
#include "writer/metadata_write.h"
#include "util/names.h"
#include "catalog/privileges.h"
#include "io/object_store.h"
#include "util/shmem.h"
#include "util/skade_limits.h"

PG_FUNCTION_INFO_V1(skade_view_metadata);
PG_FUNCTION_INFO_V1(skade_write_view_metadata);
PG_FUNCTION_INFO_V1(skade_view_pointer);

static bool view_shaped(Jsonb *j);

/*
 * skade.view_metadata(namespace, name, catalog) -> text: the current
 * metadata file of the view, as stored.
 */
Datum
skade_view_metadata(PG_FUNCTION_ARGS)
{
	char	   *ns = SkadeTextArg(fcinfo, 0, "namespace");
	char	   *name = SkadeTextArg(fcinfo, 1, "name");
	const char *catalog = SkadeResolveCatalog(SkadeOptTextArg(fcinfo, 2));
	StoreTable	t;
	StringInfo	s;

	SkadeRequireShared();
	if (!SkadeLookupTable(catalog, ns, name, &t) || !t.is_view)
	{
		SkadeRequireNamespace(catalog, ns);
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("view \"%s.%s\" does not exist in catalog \"%s\"", ns, name, catalog)));
	}
	if (t.metadata_location == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("view \"%s.%s\" has no metadata location", ns, name)));
	s = SkadeReadLocation(SKADE_ROUTE(catalog, ns), t.metadata_location, NULL);
	if (memchr(s->data, '\0', s->len) != NULL ||
		!pg_verify_mbstr(PG_UTF8, s->data, s->len, true))
		ereport(ERROR,
				(errcode(ERRCODE_SKADE_INVALID_FILE),
				 errmsg("view metadata \"%s\" is not valid UTF-8 text", t.metadata_location)));
	PG_RETURN_TEXT_P(cstring_to_text_with_len(s->data, s->len));
}

/*
 * skade.write_view_metadata(location, metadata jsonb, namespace, catalog)
 *		-> location: a new view metadata file (see the banner).
 */
Datum
skade_write_view_metadata(PG_FUNCTION_ARGS)
{
	char	   *location;
	Jsonb	   *metadata;
	char	   *text;
	bool		gzip;
	SkadeRoute	route;

	SkadeMetadataWriteArgs(fcinfo, &location, &metadata, &route, &gzip);
	if (!view_shaped(metadata))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("not Iceberg view metadata"),
				 errdetail("It needs a string view-uuid, format-version 1, a location and a non-empty versions array.")));
	text = JsonbToCString(NULL, &metadata->root, VARSIZE(metadata));
	(void) SkadeMetadataWrite(&route, location, text, strlen(text), gzip);
	PG_RETURN_TEXT_P(cstring_to_text(location));
}

/* The shape view_shaped checks (see the banner). */
static bool
view_shaped(Jsonb *j)
{
	JsonbValue	k;
	JsonbValue *v;

	if (!JB_ROOT_IS_OBJECT(j))
		return false;
#define FIELD(name) (k.type = jbvString, k.val.string.val = (name), \
					 k.val.string.len = strlen(name), \
					 findJsonbValueFromContainer(&j->root, JB_FOBJECT, &k))
	if ((v = FIELD("view-uuid")) == NULL || v->type != jbvString)
		return false;
	if ((v = FIELD("location")) == NULL || v->type != jbvString)
		return false;
	if ((v = FIELD("format-version")) == NULL || v->type != jbvNumeric ||
		DatumGetInt32(DirectFunctionCall1(numeric_int4, NumericGetDatum(v->val.numeric))) != 1)
		return false;
	if ((v = FIELD("versions")) == NULL || v->type != jbvBinary ||
		!JsonContainerIsArray(v->val.binary.data) || JsonContainerSize(v->val.binary.data) == 0)
		return false;
#undef FIELD
	return true;
}

/*
 * skade.view_pointer(op, namespace, name, catalog, a, b) -> rows changed
 *
 * op 'create' or 'register': insert the view's row (a: its metadata
 * location); 'commit': swap its location from a to b; 'rename': move it to
 * namespace a, name b; 'drop': delete it.  0 rows: no such view, or a lost
 * swap.  The skade view functions' only way to change a view's row.
 */
Datum
skade_view_pointer(PG_FUNCTION_ARGS)
{
	static const struct
	{
		const char *op;
		StoreViewChange change;
		int			nargs;		/* of a, b */
	}			ops[] = {
		{SKADE_OP_CREATE, STORE_VIEW_INSERT, 1},
		{SKADE_OP_REGISTER, STORE_VIEW_INSERT, 1},
		{SKADE_OP_COMMIT, STORE_VIEW_SWAP, 2},
		{SKADE_OP_RENAME, STORE_VIEW_MOVE, 2},
		{SKADE_OP_DROP, STORE_VIEW_DELETE, 0},
	};
	char	   *op = SkadeTextArg(fcinfo, 0, "op");
	char	   *ns = SkadeTextArg(fcinfo, 1, "namespace");
	char	   *name = SkadeTextArg(fcinfo, 2, "name");
	const char *catalog = SkadeResolveCatalog(SkadeOptTextArg(fcinfo, 3));
	char	   *a = SkadeOptTextArg(fcinfo, 4);
	char	   *b = SkadeOptTextArg(fcinfo, 5);
	uint64		changed = 0;
	int			k;

	for (k = 0; k < lengthof(ops); k++)
		if (strcmp(op, ops[k].op) == 0)
			break;
	if (k == lengthof(ops))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown view change \"%s\"", op),
				 errhint("The changes are create, register, commit, rename and drop.")));
	if ((ops[k].nargs >= 1 && a == NULL) || (ops[k].nargs == 2 && b == NULL))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("view change \"%s\" needs %d non-null arguments after the catalog",
						op, ops[k].nargs)));
	SkadeOpBegin(ops[k].op);
	PG_TRY();
	{
		changed = StoreChangeView(ops[k].change, catalog, ns, name, a, b);
	}
	PG_FINALLY();
	{
		SkadeOpEnd();
	}
	PG_END_TRY();
	PG_RETURN_INT64((int64) changed);
}
