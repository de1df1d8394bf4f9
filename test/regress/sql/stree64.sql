-- STree64 self-test: every lookup path (scalar, AVX2 when the CPU has it,
-- batched) against a plain binary search, sizes 0 .. 10^6 + 3, with and
-- without heavy duplicates, INT64_MIN / INT64_MAX keys and queries.
SELECT n, duplicates, queries,
       scalar_mismatches + coalesce(avx2_mismatches, 0) + batch_mismatches AS mismatches
FROM skade_test.stree64_selftest()
ORDER BY n, duplicates;
SELECT implementation IN ('avx2', 'scalar') AS known_implementation
FROM skade_test.stree64_selftest() LIMIT 1;
-- the microbenchmark runs (its numbers belong in bench/, not here)
SELECT count(*) AS methods FROM skade_test.stree64_bench(1000, 1000);
SELECT skade_test.stree64_bench(0, 10);
