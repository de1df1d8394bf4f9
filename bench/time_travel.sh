#!/usr/bin/env bash
# Issue 5 benchmarks: the STree64 snapshot index vs the heap, in one run.
#   P3   resolve_many and resolve_locations of 100k random ids over a 1M-entry snapshot
#        map vs the best of PostgreSQL's plans for the same question (the planner's own
#        join choice, reported, and the per-id btree LATERAL form; target >= 30x), and
#        the same at 20k ids over a 20k-entry map (target >= 3x); the tree probe alone
#        (scalar, AVX2, pipelined; target <= 60 ns per key batched); each way of P3 is timed
#        as the best of 3 in one session (this machine is shared: one timing measures the
#        neighbours too)
#   P4   load_table_as_of on a table with 100k snapshots vs a linear walk of its
#        snapshot log (target >= 100x)
#   single load_table_at latency (warm), and the rebuild time for 1M entries
# Usage: bash bench/time_travel.sh [seconds-per-pgbench-run=5]
# Sizes (environment; the defaults are the issue's): SKADE_BENCH_MAP_ENTRIES (1000000, the
#   map of P3), SKADE_BENCH_PROBE_IDS (100000 ids, 95% known), SKADE_BENCH_SMALL_MAP (20000:
#   the second P3 case, that many ids over that many entries), SKADE_BENCH_ASOF_SNAPSHOTS
#   (100000, P4's table); SKADE_BENCH_PORT, SKADE_BENCH_TMP (scratch directory, /tmp),
#   SKADE_BENCH_NO_BUILD=1 (use the skade already installed)
set -euo pipefail
. "$(dirname "$0")/../test/lib.sh"

SECS=${1:-5}
MAP=${SKADE_BENCH_MAP_ENTRIES:-1000000}
IDS=${SKADE_BENCH_PROBE_IDS:-100000}
SMALL_MAP=${SKADE_BENCH_SMALL_MAP:-20000}
ASOF=${SKADE_BENCH_ASOF_SNAPSHOTS:-100000}
# human N: 1000000 -> 1M, 95000 -> 95k (as the headings print the default sizes)
human() { python3 -c "n = $1; print(f'{n // 10**6}M' if n % 10**6 == 0 else f'{n // 1000}k' if n % 1000 == 0 else n)"; }
PORT=${SKADE_BENCH_PORT:-5468}
TMPBASE=${SKADE_BENCH_TMP:-/tmp}
DATA=$TMPBASE/skade-bench-tt-pg
FILES=$TMPBASE/skade-bench-tt
OUT=$(mktemp -d "$TMPBASE/skade-bench.XXXXXX")

install_build_deps
bench_build_and_install
rm -rf "$FILES" && mkdir -p "$FILES" && chmod 755 "$FILES"
python3 "$SKADE_ROOT/test/data/metadata/generate.py" big "$ASOF" "$FILES/big.metadata.json"
python3 "$SKADE_ROOT/test/data/metadata/generate.py" big 100 "$FILES/small.metadata.json"
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
# best (least) of N timings of one statement in one session: on this shared 2-core machine a
# single timing measures the neighbours as much as the statement; every way gets the same N
ms_best() {
    local n=$1 sql=$2 args=(-c '\timing on') i
    for i in $(seq "$n"); do args+=(-c "$sql"); done
    pg "$PORT" -Atq "${args[@]}" 2>&1 | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | sort -n | head -1
}

echo
echo "setup: $(python3 -c "print(f'{$MAP:,}')") snapshots over 1,000 tables in skade.snapshot_map"
pg "$PORT" -q -c 'CREATE EXTENSION skade' -f "$SKADE_ROOT/test/functions.sql" >/dev/null
pg "$PORT" -q >/dev/null <<SQL
SELECT skade.create_namespace('b');
INSERT INTO skade.snapshot_map
SELECT 'skade', 'b', 't' || (g % 1000), (g::bigint * 2654435761) % 9000000000000000000, g % 7 <> 0,
       g, 'file:/wh/b/t' || (g % 1000) || '/metadata/' || lpad(g::text, 8, '0') || '-x.metadata.json',
       now()
FROM generate_series(1, $MAP) g;
ANALYZE skade.snapshot_map;
CREATE TABLE probe AS
SELECT array(SELECT snapshot_id FROM skade.snapshot_map ORDER BY random() LIMIT $((IDS * 95 / 100)))
       || array(SELECT (random() * 9e18)::bigint FROM generate_series(1, $((IDS - IDS * 95 / 100)))) AS ids;
SELECT skade.register_table('b', 'big', 'file://$FILES/big.metadata.json');
SELECT skade.register_table('b', 'small', 'file://$FILES/small.metadata.json');
SQL

echo
echo "rebuild of the index ($(human "$MAP") entries + the registered tables' snapshots):"
for run in 1 2; do
    wall=$(ms "SELECT skade.rebuild_index()")
    pg "$PORT" -Atq -c "SELECT '  run $run: build ' || round(build_ms::numeric, 1) || ' ms in the worker, ' || '$wall' || ' ms wall, ' || entries || ' entries, ' || pg_size_pretty(bytes) || ', ' || implementation FROM skade.index_status()"
done

echo
# p3 PROBE N : the P3 question over the map as it is, for the ids in PROBE.ids (N of them),
# four ways: resolve_many (rows), resolve_locations (one array), and PostgreSQL's own plans
# for the same question (the newest mapping per id, input order kept): the planner's free
# choice of join (reported) and the per-id btree LATERAL form; the best of the two is the
# baseline
p3() {
    local probe=$1 n=$2 run tree locs heap free lat plan
    local free_sql="SELECT count(x.loc) FROM (SELECT DISTINCT ON (q.ord) q.ord, m.metadata_location AS loc
               FROM $probe, unnest($probe.ids) WITH ORDINALITY q(id, ord)
               LEFT JOIN skade.snapshot_map m ON m.snapshot_id = q.id
               ORDER BY q.ord, m.made_current DESC, m.seq) x"
    plan=$(pg "$PORT" -Atq -c "EXPLAIN (FORMAT JSON) $free_sql" | python3 -c "
import json, sys
def walk(n):
    if n['Node Type'] in ('Hash Join', 'Merge Join', 'Nested Loop'):
        return n['Node Type'] + (' (' + n.get('Join Type', '') + ')' if n.get('Join Type') else '')
    for c in n.get('Plans', []):
        r = walk(c)
        if r:
            return r
print(walk(json.load(sys.stdin)[0]['Plan']) or 'no join')")
    echo "  PostgreSQL's own choice for the join: $plan"
    for run in 1 2; do
        tree=$(ms_best 3 "SELECT count(r.metadata_location) FROM $probe, skade.resolve_many($probe.ids) r")
        locs=$(ms_best 3 "SELECT cardinality(skade.resolve_locations($probe.ids)) FROM $probe")
        heap=$(ms "SET skade.index_enabled = off; SELECT count(r.metadata_location) FROM $probe, skade.resolve_many($probe.ids) r")
        free=$(ms_best 3 "$free_sql")
        lat=$(ms_best 3 "SELECT count(x.metadata_location) FROM $probe, unnest($probe.ids) WITH ORDINALITY q(id, ord)
               LEFT JOIN LATERAL (SELECT m.metadata_location FROM skade.snapshot_map m WHERE m.snapshot_id = q.id
                                  ORDER BY m.made_current DESC, m.seq LIMIT 1) x ON true")
        python3 -c "
n, t, l, h, f, j = $n, $tree, $locs, $heap, $free, $lat
best = min(f, j)
us = lambda v: v * 1000 / n
print(f'  run $run: resolve_many {t:8.1f} ms ({us(t):.3f} us/id)   resolve_locations {l:8.1f} ms ({us(l):.3f} us/id)   heap path {h:8.1f} ms')
print(f'         SQL, planner\'s join {f:8.1f} ms ({us(f):.3f} us/id)   SQL, btree LATERAL {j:8.1f} ms ({us(j):.3f} us/id)   best SQL {best:.1f} ms')
print(f'         vs the best SQL plan: resolve_many {best / t:.1f}x, resolve_locations {best / l:.1f}x   (target >= $3x);  tree vs skade heap path: {h / t:.1f}x')"
    done
}

echo "P3: resolving $(human "$IDS") ids ($(human $((IDS * 95 / 100))) known, $(human $((IDS - IDS * 95 / 100))) unknown) over $(human "$MAP") entries"
p3 probe "$IDS" 30
pg "$PORT" -Atq -c "SELECT '  routing: tree answers ' || tree_answers || ', heap answers ' || heap_answers FROM skade.index_status()"

echo
echo "tree probe alone, 1M keys, 1M random lookups (ns per key; target <= 60 batched)"
pg "$PORT" -Atq -F ' ' -c "SELECT method, round(ns_per_lookup::numeric, 1) FROM skade_test.stree64_bench(1000000, 1000000)" | sed 's/^/  /'

echo
echo "P4: load_table_as_of on a table with $(human "$ASOF") snapshots ($(($(stat -c %s "$FILES/big.metadata.json") / 1000000)) MB of metadata) vs a linear walk of its snapshot log"
pg "$PORT" -Atq -c "SELECT count(*) FROM skade.history('b', 'big')" >/dev/null   # warm the cache
# 90% into the log: the client's walk covers 90% of the entries (90,000 of 100k)
AT=$((ASOF * 9 / 10))
TS="to_timestamp((1700000000000 + $AT::bigint * 60000) / 1000.0)"
asof=$(lat "SELECT snapshot_id FROM skade.load_table_as_of('b', 'big', $TS, snapshots => 'none');")
walk_sql=$(lat "SELECT snapshot_id FROM skade.history('b', 'big') WHERE made_current_at <= $TS ORDER BY made_current_at DESC LIMIT 1;")
python3 - "$FILES" "$asof" "$walk_sql" "$AT" <<'PY'
import json, sys, time
files, asof, walk_sql, at = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
with open(f"{files}/big.metadata.json", "rb") as f:
    md = json.loads(f.read())
log = md["snapshot-log"]
ts = 1700000000000 + at * 60000         # the same instant as TS
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

echo
S=$SMALL_MAP SK=$((SMALL_MAP * 95 / 100))
echo "P3 at $(human "$S") ids over a $(human "$S")-entry map ($(human "$SK") known, $(human $((S - SK))) unknown; the map cut to its first $(python3 -c "print(f'{$S:,}')") rows)"
pg "$PORT" -q >/dev/null <<SQL
DELETE FROM skade.snapshot_map WHERE table_name = 'big' OR (table_name <> 'small' AND seq > $S);
ANALYZE skade.snapshot_map;
CREATE TABLE probe20k AS
SELECT array(SELECT snapshot_id FROM skade.snapshot_map WHERE seq <= $S ORDER BY random() LIMIT $SK)
       || array(SELECT (random() * 9e18)::bigint FROM generate_series(1, $((S - SK)))) AS ids;
SELECT skade.rebuild_index();
SQL
pg "$PORT" -Atq -c "SELECT '  map entries: ' || count(*) FROM skade.snapshot_map"
p3 probe20k "$S" 3
