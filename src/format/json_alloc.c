/*-------------------------------------------------------------------------
 *
 * json_alloc.c
 *	  jansson's allocator in skade: palloc within a parse budget, or, for
 *	  the parse of one metadata file, an arena.
 *
 * jansson allocates through one process-wide pair of functions
 * (json_set_alloc_funcs, set once from _PG_init), libavro-c's schema parser
 * included.  Outside an arena they are palloc and pfree in the current
 * memory context.  While SkadeJsonLoad parses, its allocations count
 * against a budget, SKADE_PARSE_BUDGET_FACTOR times skade.max_metadata_size:
 * past it the allocation fails, which jansson reports as a failed parse,
 * and the caller reports the budget (54000).
 *
 * The arena (SkadeJsonArenaBegin .. SkadeJsonArenaEnd) serves the parse of
 * a whole metadata file and what is derived from its values: allocation is
 * a pointer bump in large blocks, free does nothing, and everything goes
 * when the memory context that was current at SkadeJsonArenaBegin is reset
 * or deleted (the blocks are palloc'd there).  jansson makes some 82,000
 * allocations for a metadata file of 1,000 snapshots (0.9 MB): 3.7 MB
 * bumped, where palloc's chunk headers and power-of-two rounding made them
 * 6.4 MB (fresh pages: a page fault each), and palloc with the budget's
 * per-chunk accounting was a tenth of a cold load.  In the arena the budget
 * counts blocks.  Its user must not free a
 * value after SkadeJsonArenaEnd (json_decref would pfree arena memory):
 * it drops the context instead.  The arena ends by SkadeJsonArenaEnd, and
 * also when its context is reset or deleted (an ERROR), so that no
 * allocation can ever land in freed memory.
 *
 * IDENTIFICATION
 *	  src/format/json_alloc.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "utils/memutils.h"

#include "util/guc.h"
#include "format/json_alloc.h"

/* the smallest arena block */
#define ARENA_MIN_BLOCK		(64 * 1024)

typedef struct JsonArena
{
	MemoryContext cxt;			/* where the blocks are palloc'd */
	char	   *next;			/* free space of the current block */
	char	   *end;
	Size		next_block;		/* size of the next block */
	Size		allocated;		/* bytes of all blocks */
	MemoryContextCallback on_reset;
} JsonArena;

/* the arena in use (NULL: palloc), and the budget of the parse in progress */
static JsonArena *arena = NULL;
static Size budget = 0;			/* 0: none */
static Size budget_left = 0;
static bool budget_exceeded = false;

static void *json_alloc(size_t size);
static void json_free(void *ptr);
static void *arena_grow(size_t size);
static void arena_forget(void *arg);

/*
 * SkadeJsonAllocInit
 *		Route jansson's allocations through this file.  Called from _PG_init.
 */
void
SkadeJsonAllocInit(void)
{
	json_set_alloc_funcs(json_alloc, json_free);
}

/* the budget of a parse: SKADE_PARSE_BUDGET_FACTOR times skade.max_metadata_size */
Size
SkadeJsonParseBudget(void)
{
	return (Size) skade_max_metadata_size * SKADE_PARSE_BUDGET_FACTOR;
}

/*
 * SkadeJsonLoad
 *		json_loadb of len bytes of text within the budget of a parse; NULL
 *		on failure, with *over_budget (if not NULL) telling whether the
 *		budget was the reason.
 */
json_t *
SkadeJsonLoad(const char *text, size_t len, size_t flags, json_error_t *err, bool *over_budget)
{
	json_t	   *root;

	budget = budget_left = SkadeJsonParseBudget();
	if (arena)
		budget_left = budget > arena->allocated ? budget - arena->allocated : 0;
	budget_exceeded = false;
	PG_TRY();
	{
		root = json_loadb(text, len, flags, err);
	}
	PG_FINALLY();
	{
		budget = 0;
	}
	PG_END_TRY();
	if (over_budget)
		*over_budget = root == NULL && budget_exceeded;
	return root;
}

/*
 * SkadeJsonArenaBegin
 *		From now on jansson allocates from an arena in CurrentMemoryContext,
 *		the first block sized for about expected bytes of values.
 */
void
SkadeJsonArenaBegin(Size expected)
{
	JsonArena  *a;

	Assert(arena == NULL);
	a = palloc0(sizeof(JsonArena));
	a->cxt = CurrentMemoryContext;
	a->next_block = Max(MAXALIGN(expected), ARENA_MIN_BLOCK);
	a->on_reset.func = arena_forget;
	a->on_reset.arg = a;
	MemoryContextRegisterResetCallback(a->cxt, &a->on_reset);
	arena = a;
}

/*
 * SkadeJsonArenaEnd
 *		Back to palloc.  The arena's memory stays until its context goes.
 */
void
SkadeJsonArenaEnd(void)
{
	arena = NULL;
}

/* the arena's context is reset or deleted: its blocks are gone */
static void
arena_forget(void *arg)
{
	if (arena == arg)
		arena = NULL;
}

/*
 * jansson's malloc: from the arena, else palloc; within the budget of the
 * parse in progress (budget > 0): past it, NULL, which jansson reports as a
 * failed parse.
 */
static void *
json_alloc(size_t size)
{
	void	   *p;

	if (arena)
	{
		size = MAXALIGN(size > 0 ? size : 1);
		if (size > (Size) (arena->end - arena->next))
			return arena_grow(size);
		p = arena->next;
		arena->next += size;
		return p;
	}
	if (budget > 0 && (Size) size + 64 > budget_left)
	{
		budget_exceeded = true;
		return NULL;
	}
	p = palloc(size > 0 ? size : 1);
	if (budget > 0)
		budget_left -= GetMemoryChunkSpace(p);
	return p;
}

/* a new arena block for an allocation of size bytes (MAXALIGNed); NULL past the budget */
static void *
arena_grow(size_t size)
{
	Size		block = Max(arena->next_block, size);
	char	   *p;

	if (budget > 0)
	{
		if (size > budget_left)
		{
			budget_exceeded = true;
			return NULL;
		}
		block = Min(block, budget_left);
		budget_left -= block;
	}
	p = MemoryContextAllocHuge(arena->cxt, block);
	arena->allocated += block;
	arena->next_block = Min(block * 2, MaxAllocHugeSize / 2);
	arena->next = p + size;
	arena->end = p + block;
	return p;
}

/* jansson's free: nothing in the arena (it goes whole), else pfree */
static void
json_free(void *ptr)
{
	if (ptr == NULL || arena)
		return;
	if (budget > 0)
		budget_left = Min(budget, budget_left + GetMemoryChunkSpace(ptr));
	pfree(ptr);
}
