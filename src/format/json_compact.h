/*-------------------------------------------------------------------------
 *
 * json_compact.h
 *	  jansson values as compact JSON text, byte for byte what
 *	  json_dumps(value, JSON_COMPACT | JSON_ENCODE_ANY) writes.
 *
 * IDENTIFICATION
 *	  src/format/json_compact.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_JSON_COMPACT_H
#define SKADE_JSON_COMPACT_H

#include <jansson.h>

#include "lib/stringinfo.h"

extern void SkadeJsonAppendCompact(StringInfo buf, json_t *value);
extern void SkadeJsonAppendString(StringInfo buf, const char *s, size_t len);

#endif							/* SKADE_JSON_COMPACT_H */
