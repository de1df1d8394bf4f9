/*-------------------------------------------------------------------------
 *
 * stree64_sql.c
 *	  SQL-callable self-test and microbenchmark of STree64.
 *
 * skade_test.stree64_selftest() builds trees over many sizes (0, 1, node and
 * layer edges, up to 10^6 + 3), with and without heavy duplicates and with
 * INT64_MIN / INT64_MAX keys, and compares every lookup path (scalar, AVX2
 * when the CPU has it, batched) with a plain binary search, for present,
 * absent, neighbouring and extreme query keys.  One row per size.
 *
 * skade_test.stree64_bench(n, queries) reports ns per lookup for a binary
 * search and each tree path, on random keys; it asserts nothing and exists
 * for bench/.
 *
 * Memory: everything in a "skade stree64 test" context deleted before
 * returning.
 *
 * IDENTIFICATION
 *	  src/test/stree64_sql.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include <time.h>

#include "common/pg_prng.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "index/stree64.h"

PG_FUNCTION_INFO_V1(skade_stree64_selftest);
PG_FUNCTION_INFO_V1(skade_stree64_bench);

static STree64 *build_tree(const int64 *keys, uint64 n);
static uint64 binary_lower_bound(const int64 *keys, uint64 n, int64 x);
static int	int64_cmp(const void *a, const void *b);
static double now_ns(void);

static const uint64 test_sizes[] = {
	0, 1, 2, 7, 8, 9, 15, 16, 17, 63, 64, 65, 71, 72, 73, 80, 81, 100,
	511, 512, 513, 647, 648, 649, 1000, 4096, 5832, 5833, 65536, 100000, 1000003
};

/*
 * skade_test.stree64_selftest() -> setof (n, duplicates, queries, scalar_mismatches,
 *		avx2_mismatches, batch_mismatches, implementation)
 */
Datum
skade_stree64_selftest(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "skade stree64 test",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old;
	pg_prng_state rng;
	int			s;
	int			dup;

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	pg_prng_seed(&rng, 20261129);

	for (s = 0; s < (int) lengthof(test_sizes); s++)
	{
		for (dup = 0; dup <= 1; dup++)
		{
			uint64		n = test_sizes[s];
			int64	   *keys;
			int64	   *queries;
			uint64	   *batch_out;
			uint64		nq;
			uint64		i;
			int64		mism_scalar = 0,
						mism_avx2 = 0,
						mism_batch = 0;
			STree64    *tree;
			Datum		values[7];
			bool		nulls[7] = {0};

			old = MemoryContextSwitchTo(cxt);
			keys = MemoryContextAllocHuge(cxt, sizeof(int64) * (n + 1));
			for (i = 0; i < n; i++)
			{
				if (dup)
					keys[i] = (int64) (pg_prng_uint64(&rng) % (n / 4 + 2)) - (int64) (n / 8);
				else
					keys[i] = (int64) pg_prng_uint64(&rng);
			}
			/* extreme keys, when there is room */
			if (n >= 2)
			{
				keys[0] = PG_INT64_MIN;
				keys[n - 1] = PG_INT64_MAX;
			}
			qsort(keys, n, sizeof(int64), int64_cmp);
			tree = build_tree(keys, n);

			/* every key, its neighbours, randoms and extremes */
			nq = Min(n, 20000) * 3 + 2000 + 4;
			queries = MemoryContextAllocHuge(cxt, sizeof(int64) * nq);
			batch_out = MemoryContextAllocHuge(cxt, sizeof(uint64) * nq);
			nq = 0;
			for (i = 0; i < Min(n, 20000); i++)
			{
				int64		k = keys[pg_prng_uint64(&rng) % n];

				queries[nq++] = k;
				queries[nq++] = k == PG_INT64_MIN ? k : k - 1;
				queries[nq++] = k == PG_INT64_MAX ? k : k + 1;
			}
			for (i = 0; i < 2000; i++)
				queries[nq++] = dup ? (int64) (pg_prng_uint64(&rng) % (n / 2 + 3)) - (int64) (n / 4)
					: (int64) pg_prng_uint64(&rng);
			queries[nq++] = PG_INT64_MIN;
			queries[nq++] = PG_INT64_MAX;
			queries[nq++] = 0;
			queries[nq++] = -1;

			STree64LowerBoundBatch(tree, queries, batch_out, nq);
			for (i = 0; i < nq; i++)
			{
				uint64		want = binary_lower_bound(keys, n, queries[i]);

				mism_scalar += STree64LowerBoundScalar(tree, queries[i]) != want;
				mism_avx2 += STree64LowerBoundAvx2(tree, queries[i]) != want;
				mism_batch += batch_out[i] != want;
			}
			MemoryContextSwitchTo(old);
			MemoryContextReset(cxt);

			values[0] = Int64GetDatum(n);
			values[1] = BoolGetDatum(dup);
			values[2] = Int64GetDatum(nq);
			values[3] = Int64GetDatum(mism_scalar);
			values[4] = Int64GetDatum(mism_avx2);
			nulls[4] = !STree64HaveAvx2();
			values[5] = Int64GetDatum(mism_batch);
			values[6] = CStringGetTextDatum(STree64ImplName());
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	}
	MemoryContextDelete(cxt);
	return (Datum) 0;
}

/*
 * skade_test.stree64_bench(n bigint, queries bigint) -> setof (method, ns_per_lookup)
 */
Datum
skade_stree64_bench(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int64		n;
	int64		m;
	MemoryContext cxt;
	MemoryContext old;
	pg_prng_state rng;
	int64	   *keys;
	int64	   *queries;
	uint64	   *out;
	STree64    *tree;
	uint64		sink = 0;
	int64		i;
	double		t0;
	const char *names[4] = {"binary search", "stree64 scalar", "stree64 avx2", "stree64 batched"};
	double		ns[4];
	int			k;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("n and queries must not be NULL")));
	n = PG_GETARG_INT64(0);
	m = PG_GETARG_INT64(1);
	if (n < 1 || n > 100000000 || m < 1 || m > 100000000)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("n and queries must be between 1 and 100000000")));
	cxt = AllocSetContextCreate(CurrentMemoryContext, "skade stree64 test",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(cxt);
	pg_prng_seed(&rng, 42);
	keys = MemoryContextAllocHuge(cxt, sizeof(int64) * n);
	for (i = 0; i < n; i++)
		keys[i] = (int64) pg_prng_uint64(&rng);
	qsort(keys, n, sizeof(int64), int64_cmp);
	queries = MemoryContextAllocHuge(cxt, sizeof(int64) * m);
	out = MemoryContextAllocHuge(cxt, sizeof(uint64) * m);
	for (i = 0; i < m; i++)
		queries[i] = keys[pg_prng_uint64(&rng) % n];
	tree = build_tree(keys, n);

	t0 = now_ns();
	for (i = 0; i < m; i++)
		sink += binary_lower_bound(keys, n, queries[i]);
	ns[0] = (now_ns() - t0) / m;
	t0 = now_ns();
	for (i = 0; i < m; i++)
		sink += STree64LowerBoundScalar(tree, queries[i]);
	ns[1] = (now_ns() - t0) / m;
	t0 = now_ns();
	for (i = 0; i < m; i++)
		sink += STree64LowerBoundAvx2(tree, queries[i]);
	ns[2] = (now_ns() - t0) / m;
	t0 = now_ns();
	STree64LowerBoundBatch(tree, queries, out, m);
	ns[3] = (now_ns() - t0) / m;
	sink += out[m - 1];

	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
	if (sink == 1)				/* keep the loops from being optimised away */
		elog(DEBUG5, "sink");

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	for (k = 0; k < 4; k++)
	{
		Datum		values[2];
		bool		nulls[2] = {false, k == 2 && !STree64HaveAvx2()};

		values[0] = CStringGetTextDatum(names[k]);
		values[1] = Float8GetDatum(ns[k]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/* a 64-byte aligned tree in CurrentMemoryContext */
static STree64 *
build_tree(const int64 *keys, uint64 n)
{
	Size		size = STree64Size(n);
	char	   *raw = MemoryContextAllocHuge(CurrentMemoryContext, size + 64);
	STree64    *tree = (STree64 *) TYPEALIGN(64, raw);

	STree64Build(tree, keys, n);
	return tree;
}

static uint64
binary_lower_bound(const int64 *keys, uint64 n, int64 x)
{
	uint64		lo = 0,
				hi = n;

	while (lo < hi)
	{
		uint64		mid = lo + (hi - lo) / 2;

		if (keys[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int
int64_cmp(const void *a, const void *b)
{
	int64		x = *(const int64 *) a;
	int64		y = *(const int64 *) b;

	return x < y ? -1 : x > y ? 1 : 0;
}

static double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec * 1e9 + ts.tv_nsec;
}
