/*-------------------------------------------------------------------------
 *
 * json_alloc.h
 *	  jansson's allocator in skade: palloc within a parse budget, or an
 *	  arena for the parse of one metadata file.
 *
 * IDENTIFICATION
 *	  src/format/json_alloc.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_JSON_ALLOC_H
#define SKADE_JSON_ALLOC_H

#include <jansson.h>

/*
 * A parse may take at most this many times skade.max_metadata_size of memory
 * (jansson's values of realistic metadata take 3 to 5 times its text; a file
 * of nothing but tiny values, 20 times).
 */
#define SKADE_PARSE_BUDGET_FACTOR 8

extern void SkadeJsonAllocInit(void);
extern Size SkadeJsonParseBudget(void);
extern json_t *SkadeJsonLoad(const char *text, size_t len, size_t flags, json_error_t *err,
							 bool *over_budget);
extern void SkadeJsonArenaBegin(Size expected);
extern void SkadeJsonArenaEnd(void);

#endif							/* SKADE_JSON_ALLOC_H */
