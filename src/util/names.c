/*-------------------------------------------------------------------------
 *
 * names.c
 *	  Validation of the strings skade stores in the JDBC catalog tables.
 *
 * Every value that reaches iceberg_tables or iceberg_namespace_properties
 * through skade's SQL API passes through here first, so that it fits the
 * clients' columns and round-trips through the clients' encodings:
 * namespaces are dot-joined levels with no empty level, names and
 * locations carry no control characters.  A name that becomes a
 * component of a derived location (a table's or view's default location,
 * a namespace level under skade.warehouse) must be one path component
 * (SkadeCheckPathComponent).  Errors are raised before any change is made.
 *
 * IDENTIFICATION
 *	  src/util/names.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "utils/builtins.h"

#include "util/names.h"
#include "util/skade_limits.h"

static void check_no_control(const char *s, const char *what);
static int	path_component_fault(const char *name, int *at);

PG_FUNCTION_INFO_V1(skade_path_component);

/*
 * SkadeCheckName
 *		A catalog or table name: 1..255 bytes, no control characters.
 */
void
SkadeCheckName(const char *name, const char *what)
{
	size_t		len = strlen(name);

	if (len == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_NAME),
				 errmsg("%s name must not be empty", what)));
	if (len > SKADE_MAX_NAME_LEN)
		ereport(ERROR,
				(errcode(ERRCODE_NAME_TOO_LONG),
				 errmsg("%s name is too long", what),
				 errdetail("The name is %zu bytes long; at most %d are allowed.",
						   len, SKADE_MAX_NAME_LEN)));
	check_no_control(name, what);
}

/*
 * SkadeCheckNamespace
 *		A namespace: dot-joined levels (the JDBC encoding), 1..255 bytes,
 *		no empty level.
 */
void
SkadeCheckNamespace(const char *ns)
{
	size_t		len;
	const char *p;

	SkadeCheckName(ns, "namespace");
	len = strlen(ns);
	for (p = ns; *p; p++)
	{
		if (*p == '.' && (p == ns || p[1] == '.' || p[1] == '\0'))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_NAME),
					 errmsg("namespace \"%s\" has an empty level", ns),
					 errdetail("Namespace levels are joined with \".\"; "
							   "a level must not be empty (at byte %d of %zu).",
							   (int) (p - ns) + 1, len)));
	}
}

/*
 * SkadeCheckLocation
 *		A metadata location: 1..1000 bytes, no control characters.
 */
void
SkadeCheckLocation(const char *location, const char *what)
{
	size_t		len = strlen(location);

	if (len == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not be empty", what)));
	if (len > SKADE_MAX_LOCATION_LEN)
		ereport(ERROR,
				(errcode(ERRCODE_STRING_DATA_RIGHT_TRUNCATION),
				 errmsg("%s is too long", what),
				 errdetail("It is %zu bytes long; at most %d are allowed.",
						   len, SKADE_MAX_LOCATION_LEN)));
	check_no_control(location, what);
}

/*
 * SkadeCheckPathComponent
 *		A name that becomes one component of a derived location: 1..255
 *		bytes, not "." or "..", no "/" and no control character; else 42602
 *		(invalid_name), whose message does not repeat a name that is too
 *		long or holds a control character.
 */
void
SkadeCheckPathComponent(const char *name, const char *what)
{
	int			at;

	switch (path_component_fault(name, &at))
	{
		case 0:
			return;
		case 1:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_NAME),
					 errmsg("%s name must not be empty", what)));
			break;
		case 2:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_NAME),
					 errmsg("%s name is too long to be a path component", what),
					 errdetail("The name is %zu bytes long; at most %d are allowed.",
							   strlen(name), SKADE_MAX_NAME_LEN)));
			break;
		case 3:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_NAME),
					 errmsg("%s name contains a control character", what),
					 errdetail("Byte %d is 0x%02x.", at + 1, (unsigned char) name[at])));
			break;
		default:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_NAME),
					 errmsg("%s name \"%s\" is not a single path component", what, name),
					 errdetail("Without an explicit location the name becomes a directory of its location: "
							   "it must not be \".\" or \"..\" nor contain \"/\"."),
					 errhint("Choose another name, or pass an explicit location.")));
			break;
	}
}

/* Is name one path component (see SkadeCheckPathComponent)? */
bool
SkadeIsPathComponent(const char *name)
{
	int			at;

	return path_component_fault(name, &at) == 0;
}

/*
 * What keeps name from being one path component: 0 nothing, 1 empty, 2 too
 * long, 3 a control character (at *at), 4 ".", ".." or a "/".
 */
static int
path_component_fault(const char *name, int *at)
{
	size_t		len = strlen(name);
	const unsigned char *p;

	if (len == 0)
		return 1;
	if (len > SKADE_MAX_NAME_LEN)
		return 2;
	for (p = (const unsigned char *) name; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
		{
			*at = (int) (p - (const unsigned char *) name);
			return 3;
		}
	if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0 || strchr(name, '/') != NULL)
		return 4;
	return 0;
}

/*
 * skade.path_component(name, what) -> name
 *
 * name, checked to be one path component (SkadeCheckPathComponent): the
 * SQL functions that derive a default location append it through this.
 */
Datum
skade_path_component(PG_FUNCTION_ARGS)
{
	text	   *name = PG_GETARG_TEXT_PP(0);
	char	   *what = text_to_cstring(PG_GETARG_TEXT_PP(1));

	SkadeCheckPathComponent(text_to_cstring(name), what);
	PG_RETURN_TEXT_P(name);
}

/* A namespace property key: like a name, and never the reserved marker. */
void
SkadeCheckPropertyKey(const char *key)
{
	SkadeCheckName(key, "property");
	if (strcmp(key, SKADE_NAMESPACE_EXISTS_KEY) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("namespace property \"%s\" is reserved", key),
				 errdetail("JDBC catalogs use it to mark that a namespace exists.")));
}

/* A namespace property value must fit property_value varchar(1000). */
void
SkadeCheckPropertyValue(const char *key, const char *value)
{
	size_t		len = strlen(value);

	if (len > SKADE_MAX_LOCATION_LEN)
		ereport(ERROR,
				(errcode(ERRCODE_STRING_DATA_RIGHT_TRUNCATION),
				 errmsg("value of namespace property \"%s\" is too long", key),
				 errdetail("It is %zu bytes long; at most %d are allowed.",
						   len, SKADE_MAX_LOCATION_LEN)));
}

/*
 * SkadeTextArg
 *		Fetch a required text argument as a C string; NULL is an error.
 */
char *
SkadeTextArg(FunctionCallInfo fcinfo, int argno, const char *what)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be NULL", what)));
	return text_to_cstring(PG_GETARG_TEXT_PP(argno));
}

/* An optional text argument: NULL stays NULL. */
char *
SkadeOptTextArg(FunctionCallInfo fcinfo, int argno)
{
	if (PG_NARGS() <= argno || PG_ARGISNULL(argno))
		return NULL;
	return text_to_cstring(PG_GETARG_TEXT_PP(argno));
}

static void
check_no_control(const char *s, const char *what)
{
	const unsigned char *p;

	for (p = (const unsigned char *) s; *p; p++)
	{
		if (*p < 0x20 || *p == 0x7f)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s contains a control character", what),
					 errdetail("Byte %d is 0x%02x.",
							   (int) (p - (const unsigned char *) s) + 1, *p)));
	}
}
