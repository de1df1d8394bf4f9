/*-------------------------------------------------------------------------
 *
 * json_compact.c
 *	  jansson values as compact JSON text, byte for byte what
 *	  json_dumps(value, JSON_COMPACT | JSON_ENCODE_ANY) writes, appended
 *	  to a StringInfo.
 *
 * Why not json_dumps: it keeps a hashtable of the containers it is inside
 * (to refuse cycles), one allocation and hash per object or array, and
 * writes through a callback per token into a buffer it then copies; the
 * refs variant of a metadata file (its snapshot log alone is thousands of
 * objects) cost more to write than its summary to build.
 *
 * What jansson writes, and so this file: objects in insertion order
 * (jansson 2.8 and later keeps it), "," and ":" with no space; integers as
 * "%lld"; strings with \" \\ \b \f \n \r \t escaped and every other code
 * point below U+0020 as \uXXXX (upper-case hex), nothing else escaped (no
 * JSON_ESCAPE_SLASH, no JSON_ENSURE_ASCII); a string is UTF-8 (jansson's
 * parser checked it), so a byte-wise scan finds exactly the code points
 * that need escaping.  Reals, rare in metadata, are written by jansson
 * itself (json_dumps of the one value), since its %.17g and fix-ups are its
 * own.  Values come from a parse, so they hold no cycle; their depth is
 * bounded by jansson's parser (and checked against the stack here).
 *
 * IDENTIFICATION
 *	  src/format/json_compact.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "miscadmin.h"

#include "format/json_compact.h"

static void append_int(StringInfo buf, int64 v);

/*
 * SkadeJsonAppendString
 *		len bytes of s (UTF-8, may hold NUL) as a JSON string, escaped as
 *		jansson escapes.
 */
void
SkadeJsonAppendString(StringInfo buf, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *) s;
	const unsigned char *end = p + len;
	const unsigned char *run = p;

	enlargeStringInfo(buf, (int) len + 2);
	buf->data[buf->len++] = '"';
	for (; p < end; p++)
	{
		unsigned char c = *p;

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		appendBinaryStringInfo(buf, (const char *) run, p - run);
		switch (c)
		{
			case '"':
				appendBinaryStringInfo(buf, "\\\"", 2);
				break;
			case '\\':
				appendBinaryStringInfo(buf, "\\\\", 2);
				break;
			case '\b':
				appendBinaryStringInfo(buf, "\\b", 2);
				break;
			case '\f':
				appendBinaryStringInfo(buf, "\\f", 2);
				break;
			case '\n':
				appendBinaryStringInfo(buf, "\\n", 2);
				break;
			case '\r':
				appendBinaryStringInfo(buf, "\\r", 2);
				break;
			case '\t':
				appendBinaryStringInfo(buf, "\\t", 2);
				break;
			default:
				appendStringInfo(buf, "\\u%04X", (unsigned int) c);
				break;
		}
		run = p + 1;
	}
	appendBinaryStringInfo(buf, (const char *) run, end - run);
	appendStringInfoChar(buf, '"');
}

/*
 * SkadeJsonAppendCompact
 *		value as json_dumps(value, JSON_COMPACT | JSON_ENCODE_ANY) writes it.
 */
void
SkadeJsonAppendCompact(StringInfo buf, json_t *value)
{
	switch (json_typeof(value))
	{
		case JSON_NULL:
			appendBinaryStringInfo(buf, "null", 4);
			break;
		case JSON_TRUE:
			appendBinaryStringInfo(buf, "true", 4);
			break;
		case JSON_FALSE:
			appendBinaryStringInfo(buf, "false", 5);
			break;
		case JSON_INTEGER:
			append_int(buf, (int64) json_integer_value(value));
			break;
		case JSON_REAL:
			{
				char	   *s = json_dumps(value, JSON_COMPACT | JSON_ENCODE_ANY);
				json_malloc_t malloc_fn;
				json_free_t free_fn;

				if (s == NULL)
					elog(ERROR, "could not serialize a JSON number");
				appendStringInfoString(buf, s);
				json_get_alloc_funcs(&malloc_fn, &free_fn);
				free_fn(s);
				break;
			}
		case JSON_STRING:
			SkadeJsonAppendString(buf, json_string_value(value), json_string_length(value));
			break;
		case JSON_ARRAY:
			{
				size_t		i;
				size_t		n = json_array_size(value);

				check_stack_depth();
				appendStringInfoChar(buf, '[');
				for (i = 0; i < n; i++)
				{
					if (i > 0)
						appendStringInfoChar(buf, ',');
					SkadeJsonAppendCompact(buf, json_array_get(value, i));
				}
				appendStringInfoChar(buf, ']');
				break;
			}
		case JSON_OBJECT:
			{
				void	   *iter = json_object_iter(value);
				bool		first = true;

				check_stack_depth();
				appendStringInfoChar(buf, '{');
				for (; iter; iter = json_object_iter_next(value, iter))
				{
					if (!first)
						appendStringInfoChar(buf, ',');
					SkadeJsonAppendString(buf, json_object_iter_key(iter),
										  json_object_iter_key_len(iter));
					appendStringInfoChar(buf, ':');
					SkadeJsonAppendCompact(buf, json_object_iter_value(iter));
					first = false;
				}
				appendStringInfoChar(buf, '}');
				break;
			}
	}
}

/* v in decimal, as printf's %lld writes it */
static void
append_int(StringInfo buf, int64 v)
{
	char		digits[24];
	int			n = 0;
	uint64		u = v < 0 ? -(uint64) v : (uint64) v;

	do
	{
		digits[n++] = (char) ('0' + u % 10);
		u /= 10;
	} while (u > 0);
	if (v < 0)
		digits[n++] = '-';
	enlargeStringInfo(buf, n);
	while (n > 0)
		buf->data[buf->len++] = digits[--n];
	buf->data[buf->len] = '\0';
}
