#!/usr/bin/env bash
# Commit throughput of skade.commit_table vs a plain JDBC CAS UPDATE on a
# table without skade's triggers, same server, same run (pgbench, prepared
# statements), plus the JDBC clients' own UPDATE on skade's iceberg_tables.
#   distinct: 8 clients, each on its own table (no conflicts)
#   hot:      8 clients on one table (conflicts; the API retries on 40001,
#             the CAS UPDATE just affects 0 rows)
# Rates are successful commits per second: commit-log rows for skade,
# n_tup_upd of the plain table for the baseline.  Then a correctness run:
# 16 clients x 10k commits over 10 tables through both paths -> lost updates.
# Each configuration runs ROUNDS times (default 3), interleaved with the
# others so drift hits all alike; the median is reported.
# Usage: bash bench/commit_throughput.sh [seconds-per-run] [correctness-commits-per-client]
set -euo pipefail
. "$(dirname "$0")/../test/lib.sh"

SECS=${1:-10}
PER_CLIENT=${2:-10000}
ROUNDS=${SKADE_BENCH_ROUNDS:-3}
PORT=${SKADE_BENCH_PORT:-5466}
TMPBASE=${SKADE_BENCH_TMP:-/tmp}
DATA=$TMPBASE/skade-bench-pg
OUT=$(mktemp -d "$TMPBASE/skade-bench.XXXXXX")

install_build_deps
bench_build_and_install
start_server "$DATA" "$PORT"
trap 'stop_server "$DATA"; rm -rf "$OUT"' EXIT

pg "$PORT" -q >/dev/null <<'SQL'
CREATE EXTENSION skade;
SELECT skade.create_namespace('bench', '{}', 'b');
SELECT skade.register_table('bench', 't' || i, 'v0-' || i, 'b') FROM generate_series(0, 16) i;
-- the baseline: the same table shape and keys, no skade
CREATE SCHEMA plain;
CREATE TABLE plain.iceberg_tables (LIKE public.iceberg_tables INCLUDING ALL);
INSERT INTO plain.iceberg_tables SELECT * FROM public.iceberg_tables;
SQL

cat >"$OUT/api_distinct.sql" <<'SQL'
SELECT skade.commit_table('bench', 't' || :client_id,
    (SELECT metadata_location FROM skade.load_table('bench', 't' || :client_id, catalog => 'b', snapshots => 'none')),
    'a' || md5(random()::text), 'b');
SQL
cat >"$OUT/api_hot.sql" <<'SQL'
SELECT skade.commit_table('bench', 't0',
    (SELECT metadata_location FROM skade.load_table('bench', 't0', catalog => 'b', snapshots => 'none')),
    'a' || md5(random()::text), 'b');
SQL
for t in public plain; do
    for mode in distinct hot; do
        if [ $mode = distinct ]; then tbl="'t' || :client_id"; else tbl="'t0'"; fi
        cat >"$OUT/${t}_${mode}.sql" <<SQL
UPDATE $t.iceberg_tables SET metadata_location = 'u' || md5(random()::text), previous_metadata_location = metadata_location
WHERE catalog_name = 'b' AND table_namespace = 'bench' AND table_name = $tbl
  AND metadata_location = (SELECT metadata_location FROM $t.iceberg_tables
      WHERE catalog_name = 'b' AND table_namespace = 'bench' AND table_name = $tbl)
  AND (iceberg_type = 'TABLE' OR iceberg_type IS NULL);
SQL
    done
done

log_rows() { pg "$PORT" -Atc "SELECT count(*) FROM skade.commit_log WHERE op = 'commit'"; }
plain_upd() { sleep 1.2; pg "$PORT" -Atc "SELECT pg_stat_clear_snapshot(); SELECT n_tup_upd FROM pg_stat_user_tables WHERE schemaname = 'plain'" | tail -1; }

# run NAME SCRIPT COUNTER -> prints commits/s
run() {
    local name=$1 script=$2 counter=$3 before after start end
    before=$($counter)
    start=$(date +%s.%N)
    pgbench -h 127.0.0.1 -p "$PORT" -U postgres -n -M prepared -c 8 -j 2 -T "$SECS" \
        --max-tries=100000 -f "$script" postgres >"$OUT/$name.log" 2>&1
    end=$(date +%s.%N)
    after=$($counter)
    local attempts
    attempts=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$OUT/$name.log")
    python3 -c "print(round(($after - $before) / ($end - $start), 1))" >> "$OUT/$name.rate"
    printf '  round %s  %-34s %10s commits/s   (pgbench tps %s)\n' "$round" "$name" "$(tail -1 "$OUT/$name.rate")" "$attempts"
}

echo
echo "commit throughput, 8 clients, ${SECS}s per run, $ROUNDS rounds, synchronous_commit = on (skade.durability = immediate)"
for round in $(seq 1 "$ROUNDS"); do
    for mode in distinct hot; do
        if [ $((round % 2)) -eq 1 ]; then
            run "plain CAS UPDATE ($mode)" "$OUT/plain_$mode.sql" plain_upd
            run "skade.commit_table ($mode)" "$OUT/api_$mode.sql" log_rows
            run "JDBC UPDATE on skade ($mode)" "$OUT/public_$mode.sql" log_rows
        else
            run "JDBC UPDATE on skade ($mode)" "$OUT/public_$mode.sql" log_rows
            run "skade.commit_table ($mode)" "$OUT/api_$mode.sql" log_rows
            run "plain CAS UPDATE ($mode)" "$OUT/plain_$mode.sql" plain_upd
        fi
    done
done
echo
echo "medians over $ROUNDS rounds (successful commits per second)"
for mode in distinct hot; do
    python3 - "$OUT" "$mode" <<'PY'
import statistics, sys
out, mode = sys.argv[1], sys.argv[2]
r = lambda n: statistics.median(float(x) for x in open(f"{out}/{n}.rate").read().split())
plain = r(f"plain CAS UPDATE ({mode})")
print(f"  {'plain CAS UPDATE (' + mode + ')':<34} {plain:10.1f}")
for n in (f"skade.commit_table ({mode})", f"JDBC UPDATE on skade ({mode})"):
    print(f"  {n:<34} {r(n):10.1f}   ratio vs plain = {r(n) / plain:.2f}x   (target >= 0.8x)")
PY
done

echo
echo "correctness: 16 clients x $PER_CLIENT commits over 10 tables, both paths"
cat >"$OUT/c_api.sql" <<'SQL'
\set t random(1, 10)
SELECT skade.commit_table('bench', 't' || :t,
    (SELECT metadata_location FROM skade.load_table('bench', 't' || :t, catalog => 'b', snapshots => 'none')),
    'ca' || md5(random()::text || clock_timestamp()::text), 'b');
SQL
cat >"$OUT/c_jdbc.sql" <<'SQL'
\set t random(1, 10)
UPDATE iceberg_tables SET metadata_location = 'cj' || md5(random()::text || clock_timestamp()::text), previous_metadata_location = metadata_location
WHERE catalog_name = 'b' AND table_namespace = 'bench' AND table_name = 't' || :t
  AND metadata_location = (SELECT metadata_location FROM iceberg_tables
      WHERE catalog_name = 'b' AND table_namespace = 'bench' AND table_name = 't' || :t)
  AND (iceberg_type = 'TABLE' OR iceberg_type IS NULL);
SQL
# let statements of the timed runs that outlived their pgbench finish first
pg "$PORT" -Atq -c "DO \$\$BEGIN WHILE (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()) > 0 LOOP PERFORM pg_sleep(0.1); END LOOP; END\$\$"
start_seq=$(pg "$PORT" -Atc "SELECT max(seq) FROM skade.commit_log")
pgbench -h 127.0.0.1 -p "$PORT" -U postgres -n -M prepared -c 16 -j 2 -t "$PER_CLIENT" \
    --max-tries=100000 -f "$OUT/c_api.sql" -f "$OUT/c_jdbc.sql" postgres >"$OUT/correct.log" 2>&1
grep -E '^(number of transactions actually processed|number of transactions retried|tps)' "$OUT/correct.log" | sed 's/^/  /'
api_txns=$(sed -n '/c_api.sql/,/transactions/s/^ - \([0-9]*\) transactions.*/\1/p' "$OUT/correct.log" | head -1)
jdbc_txns=$(sed -n '/c_jdbc.sql/,/transactions/s/^ - \([0-9]*\) transactions.*/\1/p' "$OUT/correct.log" | head -1)
# pgbench 15's per-script counts can fall short of its total (seen: 1199 of
# 1200 with -j 2), so the per-script API count is a lower bound, not exact
echo "  pgbench per-script sum $((api_txns + jdbc_txns)) of $((16 * PER_CLIENT)) processed"
pg "$PORT" -At -F ' ' <<SQL | while read -r k v; do printf '  %-44s %s\n' "$k" "$v"; done
SELECT 'api_transactions(pgbench)', '$api_txns';
SELECT 'api_commits_logged', count(*) FROM skade.commit_log WHERE seq > $start_seq AND source = 'api' AND metadata_location LIKE 'ca%';
SELECT 'jdbc_commits_logged', count(*) FROM skade.commit_log WHERE seq > $start_seq AND source = 'sql' AND metadata_location LIKE 'cj%';
SELECT 'mislabelled_log_rows', count(*) FROM skade.commit_log WHERE seq > $start_seq
  AND ((source = 'api') <> (metadata_location LIKE 'ca%'));
SELECT 'lost_updates(commit_not_continuing_chain)', count(*) FROM (
    SELECT op, previous_metadata_location,
           lag(metadata_location) OVER (PARTITION BY table_name ORDER BY seq) AS before
    FROM skade.commit_log WHERE catalog_name = 'b' AND table_name IN (SELECT 't' || i FROM generate_series(1, 10) i)) s
WHERE op = 'commit' AND previous_metadata_location IS DISTINCT FROM before;
SELECT 'commits_sharing_a_base', count(*) FROM (
    SELECT table_name, previous_metadata_location FROM skade.commit_log
    WHERE seq > $start_seq GROUP BY 1, 2 HAVING count(*) > 1) s;
SELECT 'tables_whose_pointer_is_not_the_log_head', count(*) FROM iceberg_tables t
WHERE catalog_name = 'b' AND metadata_location IS DISTINCT FROM (
    SELECT metadata_location FROM skade.commit_log l
    WHERE l.catalog_name = 'b' AND l.table_name = t.table_name ORDER BY seq DESC LIMIT 1);
SQL
