/*-------------------------------------------------------------------------
 *
 * sigv4_sql.c
 *	  skade_test.sigv4_sign(): the AWS SigV4 signer of sigv4.c, callable from SQL
 *	  for tests and debugging.
 *
 * skade_test.sigv4_sign(method, canonical_uri, query, headers text[],
 *	payload_hash, region, service, amz_date, access_key, secret_key,
 *	OUT canonical_request, OUT string_to_sign, OUT authorization)
 *
 * It signs exactly what it is given and reads no server setting or secret:
 * a pure function (IMMUTABLE).  Each headers element is "name:value", split
 * at the first ':'.  A NULL argument other than query gives a NULL result
 * (as STRICT would); query NULL means no query.  A NULL headers element, or
 * one without ':', is an error.
 *
 * Memory: the caller's (per-call) memory context.
 *
 * IDENTIFICATION
 *	  src/test/sigv4_sql.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"

#include "util/sigv4.h"

PG_FUNCTION_INFO_V1(skade_sigv4_sign);

static SkadeSigV4Header *headers_from_array(ArrayType *arr, int *n);

/* argument positions; query (2) is the only one that may be NULL */
enum
{
	ARG_METHOD, ARG_URI, ARG_QUERY, ARG_HEADERS, ARG_PAYLOAD, ARG_REGION,
	ARG_SERVICE, ARG_DATE, ARG_ACCESS_KEY, ARG_SECRET_KEY, NUM_ARGS
};

/*
 * skade_test.sigv4_sign(...) -> (canonical_request, string_to_sign, authorization)
 */
Datum
skade_sigv4_sign(PG_FUNCTION_ARGS)
{
	SkadeSigV4Request r;
	TupleDesc	tupdesc;
	Datum		values[3];
	bool		nulls[3] = {false, false, false};
	char	   *creq;
	char	   *sts;
	int			i;

	for (i = 0; i < NUM_ARGS; i++)
		if (i != ARG_QUERY && PG_ARGISNULL(i))
			PG_RETURN_NULL();
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	r.method = text_to_cstring(PG_GETARG_TEXT_PP(ARG_METHOD));
	r.canonical_uri = text_to_cstring(PG_GETARG_TEXT_PP(ARG_URI));
	r.query = PG_ARGISNULL(ARG_QUERY) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(ARG_QUERY));
	r.headers = headers_from_array(PG_GETARG_ARRAYTYPE_P(ARG_HEADERS), &r.nheaders);
	r.payload_hash = text_to_cstring(PG_GETARG_TEXT_PP(ARG_PAYLOAD));
	r.region = text_to_cstring(PG_GETARG_TEXT_PP(ARG_REGION));
	r.service = text_to_cstring(PG_GETARG_TEXT_PP(ARG_SERVICE));
	r.amz_date = text_to_cstring(PG_GETARG_TEXT_PP(ARG_DATE));
	r.access_key = text_to_cstring(PG_GETARG_TEXT_PP(ARG_ACCESS_KEY));
	r.secret_key = text_to_cstring(PG_GETARG_TEXT_PP(ARG_SECRET_KEY));

	values[2] = CStringGetTextDatum(SkadeSigV4Authorization(&r, &creq, &sts));
	values[0] = CStringGetTextDatum(creq);
	values[1] = CStringGetTextDatum(sts);
	explicit_bzero((char *) r.secret_key, strlen(r.secret_key));
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/* headers_from_array: "name:value" elements split at the first ':' */
static SkadeSigV4Header *
headers_from_array(ArrayType *arr, int *n)
{
	Datum	   *elems;
	bool	   *elem_nulls;
	SkadeSigV4Header *h;
	int			i;

	deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, &elems, &elem_nulls, n);
	h = palloc(sizeof(SkadeSigV4Header) * (*n + 1));
	for (i = 0; i < *n; i++)
	{
		char	   *s;
		char	   *colon;

		if (elem_nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("header %d of skade_test.sigv4_sign() is NULL", i + 1),
					 errhint("Give each header as 'name:value'.")));
		s = TextDatumGetCString(elems[i]);
		colon = strchr(s, ':');
		if (colon == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("header %d of skade_test.sigv4_sign() has no ':'", i + 1),
					 errdetail("The element is \"%s\".", s),
					 errhint("Give each header as 'name:value'.")));
		*colon = '\0';
		h[i].name = s;
		h[i].value = colon + 1;
	}
	return h;
}
