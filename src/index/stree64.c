/*-------------------------------------------------------------------------
 *
 * stree64.c
 *	  STree64: static B+ tree ("S+ tree") over sorted int64 keys, B = 8 keys
 *	  per 64-byte node, built in O(n), searched with an AVX2 rank (picked
 *	  at load time) or a portable scalar rank, one lookup at a time or in
 *	  software-pipelined batches with prefetch.
 *
 * Layout (after Slotin's S+ tree): layers bottom-up in one array; layer 0
 * is the sorted keys padded to a whole node with INT64_MAX; key i of node k
 * in layer h > 0 is the smallest key of child 9k+i+1 of layer h-1.  A
 * search descends k = 9k + rank(node) per layer, where rank = number of
 * keys < x (popcount of a compare mask: no permutation, no x-1 overflow),
 * and ends with a global lower bound into the sorted keys, so duplicates
 * and a parallel payload array work directly.  Every lookup reads exactly
 * "height" cache lines.
 *
 * The block holds offsets only (no pointers), so a tree built in a DSM
 * segment is usable at any mapping address.  This file needs nothing from
 * PostgreSQL beyond c.h types; callers allocate the block.
 *
 * IDENTIFICATION
 *	  src/index/stree64.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define STREE64_X86 1
#include <immintrin.h>
#endif

#include "index/stree64.h"

#define KEY_INF		PG_INT64_MAX
#define BATCH		16			/* queries in flight per batch */

typedef uint64 (*lower_bound_fn) (const STree64 *tree, int64 key);
typedef void (*batch_fn) (const STree64 *tree, const int64 *keys, uint64 *out, uint64 m);

static uint64 lb_scalar(const STree64 *tree, int64 key);
static void batch_scalar(const STree64 *tree, const int64 *keys, uint64 *out, uint64 m);
#ifdef STREE64_X86
static uint64 lb_avx2(const STree64 *tree, int64 key);
static void batch_avx2(const STree64 *tree, const int64 *keys, uint64 *out, uint64 m);
#endif

static lower_bound_fn lower_bound_impl = lb_scalar;
static batch_fn batch_impl = batch_scalar;
static bool have_avx2 = false;

static uint64 blocks(uint64 n);
static uint64 prev_keys(uint64 n);
static uint32 layout(uint64 n, uint64 *layer_off);

/* ---------------------------------------------------------------- layout */

/* nodes needed for n keys */
static uint64
blocks(uint64 n)
{
	return (n + STREE64_B - 1) / STREE64_B;
}

/* keys in the layer above a layer of n keys */
static uint64
prev_keys(uint64 n)
{
	return (blocks(n) + STREE64_B) / (STREE64_B + 1) * STREE64_B;
}

/* layer offsets (in keys) and height for n keys; n = 0 gets one padded leaf */
static uint32
layout(uint64 n, uint64 *layer_off)
{
	uint64		keys = Max(n, 1);
	uint32		h = 0;

	layer_off[0] = 0;
	for (;;)
	{
		layer_off[h + 1] = layer_off[h] + blocks(keys) * STREE64_B;
		h++;
		if (keys <= STREE64_B)
			break;
		keys = prev_keys(keys);
		if (h >= STREE64_MAX_HEIGHT)
			elog(ERROR, "STree64 too large");
	}
	return h;
}

/* Bytes for a tree of n keys (header + nodes), a multiple of 64. */
Size
STree64Size(uint64 n)
{
	uint64		off[STREE64_MAX_HEIGHT + 1];
	uint32		h = layout(n, off);

	return TYPEALIGN(64, sizeof(STree64)) + off[h] * sizeof(int64);
}

/*
 * STree64Build
 *		Build the tree for sorted_keys[0..n) into tree, a 64-byte aligned
 *		block of STree64Size(n) bytes.  O(n): one pass per layer over a
 *		scratch array of subtree minima.
 */
void
STree64Build(STree64 *tree, const int64 *sorted_keys, uint64 n)
{
	int64	   *t;
	int64	   *mk;
	uint64		nodes_below;
	uint64		i;
	uint32		h;

	memset(tree, 0, sizeof(STree64));
	tree->n = n;
	tree->height = layout(n, tree->layer_off);
	tree->nodes_off = TYPEALIGN(64, sizeof(STree64));
	t = (int64 *) (((char *) tree) + tree->nodes_off);

	/* layer 0: the keys themselves, padded */
	if (n > 0)
		memcpy(t, sorted_keys, n * sizeof(int64));
	for (i = n; i < tree->layer_off[1]; i++)
		t[i] = KEY_INF;

	nodes_below = blocks(Max(n, 1));
	mk = palloc(sizeof(int64) * nodes_below);
	for (i = 0; i < nodes_below; i++)
		mk[i] = (i * STREE64_B < n) ? sorted_keys[i * STREE64_B] : KEY_INF;

	for (h = 1; h < tree->height; h++)
	{
		uint64		nodes = (tree->layer_off[h + 1] - tree->layer_off[h]) / STREE64_B;
		int64	   *layer = t + tree->layer_off[h];
		uint64		j;

		for (j = 0; j < nodes; j++)
		{
			int			k;

			for (k = 0; k < STREE64_B; k++)
			{
				uint64		child = j * (STREE64_B + 1) + k + 1;

				layer[j * STREE64_B + k] = child < nodes_below ? mk[child] : KEY_INF;
			}
		}
		/* minimum of each node of this layer = minimum of its leftmost child */
		for (j = 0; j < nodes; j++)
			mk[j] = (j * (STREE64_B + 1) < nodes_below) ? mk[j * (STREE64_B + 1)] : KEY_INF;
		nodes_below = nodes;
	}
	pfree(mk);
}

/* ---------------------------------------------------------------- dispatch */

/* Pick the AVX2 rank when the CPU has it (called once from _PG_init). */
void
STree64SelectImpl(void)
{
#ifdef STREE64_X86
	__builtin_cpu_init();
	have_avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
	if (have_avx2)
	{
		lower_bound_impl = lb_avx2;
		batch_impl = batch_avx2;
	}
#endif
}

const char *
STree64ImplName(void)
{
	return have_avx2 ? "avx2" : "scalar";
}

bool
STree64HaveAvx2(void)
{
	return have_avx2;
}

/* First index i with keys[i] >= key (n if none). */
uint64
STree64LowerBound(const STree64 *tree, int64 key)
{
	return lower_bound_impl(tree, key);
}

/* Lower bounds of keys[0..m) into out[0..m), several queries in flight. */
void
STree64LowerBoundBatch(const STree64 *tree, const int64 *keys, uint64 *out, uint64 m)
{
	batch_impl(tree, keys, out, m);
}

uint64
STree64LowerBoundScalar(const STree64 *tree, int64 key)
{
	return lb_scalar(tree, key);
}

uint64
STree64LowerBoundAvx2(const STree64 *tree, int64 key)
{
#ifdef STREE64_X86
	if (have_avx2)
		return lb_avx2(tree, key);
#endif
	return lb_scalar(tree, key);
}

/* ---------------------------------------------------------------- scalar */

static inline unsigned
rank8_scalar(int64 x, const int64 *node)
{
	unsigned	r = 0;
	int			i;

	for (i = 0; i < STREE64_B; i++)
		r += node[i] < x;
	return r;
}

static uint64
lb_scalar(const STree64 *tree, int64 key)
{
	const int64 *t = STree64Keys(tree);
	uint64		k = 0;
	int			h;
	uint64		p;

	for (h = (int) tree->height - 1; h > 0; h--)
		k = k * (STREE64_B + 1) + rank8_scalar(key, t + tree->layer_off[h] + k * STREE64_B);
	p = k * STREE64_B + rank8_scalar(key, t + k * STREE64_B);
	return p < tree->n ? p : tree->n;
}

static void
batch_scalar(const STree64 *tree, const int64 *keys, uint64 *out, uint64 m)
{
	const int64 *t = STree64Keys(tree);
	uint64		base;

	for (base = 0; base < m; base += BATCH)
	{
		uint64		cnt = Min(m - base, BATCH);
		uint64		k[BATCH];
		uint64		q;
		int			h;

		for (q = 0; q < cnt; q++)
			k[q] = 0;
		for (h = (int) tree->height - 1; h > 0; h--)
		{
			const int64 *layer = t + tree->layer_off[h];
			const int64 *below = t + tree->layer_off[h - 1];

			for (q = 0; q < cnt; q++)
			{
				k[q] = k[q] * (STREE64_B + 1) + rank8_scalar(keys[base + q], layer + k[q] * STREE64_B);
				__builtin_prefetch(below + k[q] * STREE64_B);
			}
		}
		for (q = 0; q < cnt; q++)
		{
			uint64		p = k[q] * STREE64_B + rank8_scalar(keys[base + q], t + k[q] * STREE64_B);

			out[base + q] = p < tree->n ? p : tree->n;
		}
	}
}

/* ---------------------------------------------------------------- AVX2 */

#ifdef STREE64_X86
/* number of keys < x in one 8-key node: two 4-lane signed compares, popcount */
__attribute__((target("avx2,popcnt")))
static inline unsigned
rank8_avx2(__m256i xv, const int64 *node)
{
	__m256i		a = _mm256_load_si256((const __m256i *) node);
	__m256i		b = _mm256_load_si256((const __m256i *) (node + 4));
	unsigned	m = (unsigned) _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(xv, a)))
		| ((unsigned) _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(xv, b))) << 4);

	return (unsigned) __builtin_popcount(m);
}

__attribute__((target("avx2,popcnt")))
static uint64
lb_avx2(const STree64 *tree, int64 key)
{
	const int64 *t = STree64Keys(tree);
	__m256i		xv = _mm256_set1_epi64x(key);
	uint64		k = 0;
	int			h;
	uint64		p;

	for (h = (int) tree->height - 1; h > 0; h--)
		k = k * (STREE64_B + 1) + rank8_avx2(xv, t + tree->layer_off[h] + k * STREE64_B);
	p = k * STREE64_B + rank8_avx2(xv, t + k * STREE64_B);
	return p < tree->n ? p : tree->n;
}

__attribute__((target("avx2,popcnt")))
static void
batch_avx2(const STree64 *tree, const int64 *keys, uint64 *out, uint64 m)
{
	const int64 *t = STree64Keys(tree);
	uint64		base;

	for (base = 0; base < m; base += BATCH)
	{
		uint64		cnt = Min(m - base, BATCH);
		uint64		k[BATCH];
		__m256i		xv[BATCH];
		uint64		q;
		int			h;

		for (q = 0; q < cnt; q++)
		{
			k[q] = 0;
			xv[q] = _mm256_set1_epi64x(keys[base + q]);
		}
		for (h = (int) tree->height - 1; h > 0; h--)
		{
			const int64 *layer = t + tree->layer_off[h];
			const int64 *below = t + tree->layer_off[h - 1];

			for (q = 0; q < cnt; q++)
			{
				k[q] = k[q] * (STREE64_B + 1) + rank8_avx2(xv[q], layer + k[q] * STREE64_B);
				__builtin_prefetch(below + k[q] * STREE64_B);
			}
		}
		for (q = 0; q < cnt; q++)
		{
			uint64		p = k[q] * STREE64_B + rank8_avx2(xv[q], t + k[q] * STREE64_B);

			out[base + q] = p < tree->n ? p : tree->n;
		}
	}
}
#endif
