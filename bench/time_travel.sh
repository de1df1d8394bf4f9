#!/usr/bin/env bash
# Issue 5 benchmarks: the STree64 snapshot index vs the heap, in one run.
#   P3   resolve_many of 100k random ids over a 1M-entry snapshot map vs the SQL
#        btree join on the same data (target >= 30x); the tree probe alone
#        (scalar, AVX2, pipelined; target <= 60 ns per key batched)
#   P4   load_table_as_of on a table with 100k snapshots vs a linear walk of its
#        snapshot log (target >= 100x)
#   single load_table_at latency (warm), and the rebuild time for 1M entries
# Usage: bash bench/time_travel.sh [seconds-per-pgbench-run=5]
set -euo pipefail
. "$(dirname "$0")/../test/lib.sh"

SECS=${1:-5}
PORT=${SKADE_BENCH_PORT:-5468}
DATA=/tmp/skade-bench-tt-pg
FILES=/tmp/skade-bench-tt
OUT=$(mktemp -d /tmp/skade-bench.XXXXXX)

install_build_deps
build_and_install
rm -rf "$FILES" && mkdir -p "$FILES" && chmod 755 "$FILES"
python3 "$SKADE_ROOT/data/metadata/generate.py" big 100000 "$FILES/big.metadata.json"
python3 "$SKADE_ROOT/data/metadata/generate.py" big 100 "$FILES/small.metadata.json"
chmod 644 "$FILES"/*
start_server "$DATA" "$PORT"
cat >>"$DATA/postgresql.conf" <<CONF
skade.allowed_roots = '$FILES'
skade.max_metadata_size = 512MB
skade.metadata_cache_size = 1GB
skade.index_rebuild_commits = 0
skade.index_rebuild_interval = 0
skade.index_rebuild_misses = 0
CONF
as_pg "$PGBIN/pg_ctl" -D "$DATA" -w restart -l "$DATA/server.log" >/dev/null
trap 'stop_server "$DATA"; rm -rf "$OUT"' EXIT

lat() {
    echo "$1" >"$OUT/q.sql"
    pgbench -h 127.0.0.1 -p "$PORT" -U postgres -n -M prepared -c 1 -T "$SECS" \
        -f "$OUT/q.sql" postgres 2>&1 | sed -n 's/^latency average = \([0-9.]*\) ms/\1/p'
}
ms() { pg "$PORT" -Atq -c '\timing on' -c "$1" 2>&1 | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -1; }

echo
echo "setup: 1,000,000 snapshots over 1,000 tables in skade.snapshot_map"
pg "$PORT" -q >/dev/null <<SQL
CREATE EXTENSION skade;
SELECT skade.create_namespace('b');
INSERT INTO skade.snapshot_map
SELECT 'skade', 'b', 't' || (g % 1000), (g::bigint * 2654435761) % 9000000000000000000, g % 7 <> 0,
       g, 'file:/wh/b/t' || (g % 1000) || '/metadata/' || lpad(g::text, 8, '0') || '-x.metadata.json',
       now()
FROM generate_series(1, 1000000) g;
ANALYZE skade.snapshot_map;
CREATE TABLE probe AS
SELECT array(SELECT snapshot_id FROM skade.snapshot_map ORDER BY random() LIMIT 95000)
       || array(SELECT (random() * 9e18)::bigint FROM generate_series(1, 5000)) AS ids;
SELECT skade.register_table('b', 'big', 'file://$FILES/big.metadata.json');
SELECT skade.register_table('b', 'small', 'file://$FILES/small.metadata.json');
SQL

echo
echo "rebuild of the index (1M entries + the registered tables' snapshots):"
for run in 1 2; do
    wall=$(ms "SELECT skade.rebuild_index()")
    pg "$PORT" -Atq -c "SELECT '  run $run: build ' || round(build_ms::numeric, 1) || ' ms in the worker, ' || '$wall' || ' ms wall, ' || entries || ' entries, ' || pg_size_pretty(bytes) || ', ' || implementation FROM skade.index_status()"
done

echo
echo "P3: resolve_many of 100k ids (95k known, 5k unknown) over 1M entries"
for run in 1 2; do
    tree=$(ms "SELECT count(r.metadata_location) FROM probe, skade.resolve_many(probe.ids) r")
    heap=$(ms "SET skade.index_enabled = off; SELECT count(r.metadata_location) FROM probe, skade.resolve_many(probe.ids) r")
    join=$(ms "SELECT count(x.metadata_location) FROM probe, unnest(probe.ids) WITH ORDINALITY q(id, ord)
               LEFT JOIN LATERAL (SELECT m.metadata_location FROM skade.snapshot_map m WHERE m.snapshot_id = q.id
                                  ORDER BY m.made_current DESC, m.seq LIMIT 1) x ON true")
    python3 -c "
t, h, j = $tree, $heap, $join
print(f'  run $run: tree {t:8.1f} ms ({t / 100:.3f} us/id)   heap path {h:8.1f} ms ({h / 100:.3f} us/id)   SQL btree join {j:8.1f} ms ({j / 100:.3f} us/id)')
print(f'         tree vs SQL btree join: {j / t:.1f}x   (target >= 30x);  tree vs skade heap path: {h / t:.1f}x')"
done
pg "$PORT" -Atq -c "SELECT '  routing: tree answers ' || tree_answers || ', heap answers ' || heap_answers FROM skade.index_status()"

echo
echo "tree probe alone, 1M keys, 1M random lookups (ns per key; target <= 60 batched)"
pg "$PORT" -Atq -F ' ' -c "SELECT method, round(ns_per_lookup::numeric, 1) FROM skade.stree64_bench(1000000, 1000000)" | sed 's/^/  /'

echo
echo "P4: load_table_as_of on a table with 100k snapshots (89 MB of metadata) vs a linear walk of its snapshot log"
pg "$PORT" -Atq -c "SELECT count(*) FROM skade.history('b', 'big')" >/dev/null   # warm the cache
# 90% into the log: the client's walk covers 90,000 entries
TS="to_timestamp((1700000000000 + 90000::bigint * 60000) / 1000.0)"
asof=$(lat "SELECT snapshot_id FROM skade.load_table_as_of('b', 'big', $TS, snapshots => 'none');")
walk_sql=$(lat "SELECT snapshot_id FROM skade.history('b', 'big') WHERE made_current_at <= $TS ORDER BY made_current_at DESC LIMIT 1;")
python3 - "$FILES" "$asof" "$walk_sql" <<'PY'
import json, sys, time
files, asof, walk_sql = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
with open(f"{files}/big.metadata.json", "rb") as f:
    md = json.loads(f.read())
log = md["snapshot-log"]
ts = 1700000000000 + 90000 * 60000      # the same instant as TS
reps = 50
t = time.perf_counter()
for _ in range(reps):
    hit = None
    for e in log:                       # the client's way: walk the log
        if e["timestamp-ms"] <= ts:
            hit = e["snapshot-id"]
        else:
            break
walk_py = (time.perf_counter() - t) / reps * 1000
print(f"  load_table_as_of (binary search on the cached log), end to end: {asof:.3f} ms")
print(f"  linear walk in SQL over skade.history() (same cached log), end to end: {walk_sql:.3f} ms -> {walk_sql / asof:.1f}x")
print(f"  linear walk in Python over the parsed log (parse not counted): {walk_py:.3f} ms -> {walk_py / asof:.1f}x   (target >= 100x)")
PY

echo
echo "single load_table_at, warm (ms per call, pgbench end to end)"
sid=$(pg "$PORT" -Atq -c "SELECT snapshot_id FROM skade.snapshots('b', 'small') ORDER BY snapshot_id LIMIT 1 OFFSET 50")
pg "$PORT" -Atq -c "SELECT skade.rebuild_index()" >/dev/null
echo "  pointer only (snapshots => 'none'): $(lat "SELECT metadata_location FROM skade.load_table_at('b', 'small', $sid, snapshots => 'none');") ms"
echo "  with metadata (100 snapshots, 90 kB): $(lat "SELECT metadata FROM skade.load_table_at('b', 'small', $sid);") ms"
echo "  SELECT 1 for reference: $(lat "SELECT 1;") ms"
