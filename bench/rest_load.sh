#!/usr/bin/env bash
# Issue 14 benchmark Load: skade's REST port under a mixed load for a while, and whether it
# stays correct and its workers' memory flat. 32 clients (keep-alive, one connection each) for
# 2 minutes, each request a table (a few, two of them hot) and a kind drawn at random:
#   all     loadTable, snapshots=all            refs    loadTable, snapshots=refs
#   inm     loadTable with If-None-Match (the client's last ETag of the table: 304 if unchanged)
#   commit  an append (add-snapshot + set-snapshot-ref main, assert-ref-snapshot-id from the
#           client's last view); on 409 reload with snapshots=refs and retry, as bench/rest.sh B2
# The load generator is bench/rest/loadgen.go's "mix" mode (Go standard library, built here).
# Reports requests by kind, errors by status (must be 0 other than 409s), commits/s, p50/p99 per
# kind, lost updates (acknowledged commits missing from their table's parent chain after the
# run: must be 0), and each REST worker's memory (RssAnon; Private_* of its private mappings in
# smaps) every 10 s with a verdict: flat when the last sample is within the tolerance of the first
# after the warm-up. The appends make the tables' metadata grow (a hot table from 100 to ~2,500
# snapshots, 50 kB to 1 MB), and a worker's working set follows the largest metadata it reads,
# parses, compresses and answers (glibc keeps the high-water mark of large allocations), so the
# tolerance grows with the largest metadata file: see SKADE_BENCH_MEM_TOLERANCE.
# No baseline server: the verdicts are the result. Exits 1 if a verdict fails.
#
# Usage: bash bench/rest_load.sh [seconds=120] [clients=32]
# Environment: SKADE_BENCH_LOAD_TABLES ("hot1:30,hot2:20,t3:10,t4:10,t5:10,t6:10,t7:10", NAME:WEIGHT),
#   SKADE_BENCH_LOAD_MIX ("all:25,refs:30,inm:30,commit:15"), SKADE_BENCH_LOAD_SNAPSHOTS (each
#   table's snapshots to start, 100), SKADE_BENCH_REST_WORKERS (skade.rest_workers, 2),
#   SKADE_BENCH_MEM_INTERVAL (10 s), SKADE_BENCH_MEM_WARMUP (30 s: the memory baseline is the
#   first sample from then on), SKADE_BENCH_MEM_TOLERANCE ("2048 10 4": the growth allowed is the
#   larger of K kB and P percent, plus F times the growth of the largest metadata file meanwhile),
#   SKADE_BENCH_NO_BUILD=1 (use the skade already installed), SKADE_BENCH_KEEP=1 (keep the work
#   directory: results, samples, server log)
set -euo pipefail
. "$(dirname "$0")/../test/lib.sh"

SECS=${1:-120}
CLIENTS=${2:-32}
TABLES=${SKADE_BENCH_LOAD_TABLES:-hot1:30,hot2:20,t3:10,t4:10,t5:10,t6:10,t7:10}
MIX=${SKADE_BENCH_LOAD_MIX:-all:25,refs:30,inm:30,commit:15}
SNAPS=${SKADE_BENCH_LOAD_SNAPSHOTS:-100}
WORKERS=${SKADE_BENCH_REST_WORKERS:-2}
INTERVAL=${SKADE_BENCH_MEM_INTERVAL:-10}
WARMUP=${SKADE_BENCH_MEM_WARMUP:-30}
read -r TOL_KB TOL_PCT META_FACTOR <<<"${SKADE_BENCH_MEM_TOLERANCE:-2048 10 4}"
HERE=$SKADE_ROOT/bench/rest
START=$SECONDS

WORK=$(mktemp -d /tmp/skade-bench-rest-load.XXXXXX)
chmod 755 "$WORK"
DATA=$WORK/pg WH=$WORK/wh
SAMPLER_PID=

# build_tools : skade installed (unless SKADE_BENCH_NO_BUILD=1) and the load generator
build_tools() {
    if [ "${SKADE_BENCH_NO_BUILD:-0}" != 1 ]; then
        install_build_deps
        build_and_install
    fi
    build_loadgen "$WORK/loadgen"
    LG=$WORK/loadgen
}

# make_tables : one metadata file of SNAPS snapshots per table (bench/rest/tables.py)
make_tables() {
    local args=() spec
    IFS=, read -ra specs <<<"$TABLES"
    for spec in "${specs[@]}"; do args+=("${spec%%:*}:$SNAPS"); done
    log "tables: ${#args[@]} of $SNAPS snapshots (weights $TABLES)"
    mkdir -p "$WH"
    python3 "$HERE/tables.py" "$WH" "${args[@]}" >"$WORK/tables.txt"
    chown -R "$PG_USER" "$WH"
    chmod -R a+rwX "$WH"
}

# start_skade : PostgreSQL with skade's REST port; the tables registered; a writer's token
start_skade() {
    PGPORT=$(free_port)
    RPORT=$(free_port)
    while [ "$RPORT" = "$PGPORT" ]; do RPORT=$(free_port); done
    log "PostgreSQL + skade (REST port $RPORT, $WORKERS workers)"
    start_server "$DATA" "$PGPORT"
    cat >>"$DATA/postgresql.conf" <<CONF
skade.allowed_roots = '$WH'
skade.write_roots = '$WH'
skade.metadata_cache_size = 256MB
skade.rest_port = $RPORT
skade.rest_workers = $WORKERS
skade.rest_listen_addresses = '127.0.0.1'
CONF
    as_pg "$PGBIN/pg_ctl" -D "$DATA" -w restart -l "$DATA/server.log" >/dev/null
    trap cleanup EXIT
    pg "$PGPORT" -q >/dev/null <<'SQL'
CREATE EXTENSION skade;
CREATE ROLE bench LOGIN;
GRANT skade_writer TO bench;
SELECT skade.create_namespace('b');
SQL
    local name path
    while read -r name path; do
        pg "$PGPORT" -Atq -c "SELECT skade.register_table('b', '$name', 'file:$path')" >/dev/null
    done <"$WORK/tables.txt"
    TOKEN=$(pg "$PGPORT" -Atq -c "SELECT skade.rest_create_token('bench')")
}

cleanup() {
    [ -n "$SAMPLER_PID" ] && kill "$SAMPLER_PID" 2>/dev/null || true
    stop_server "$DATA"
    if [ "${SKADE_BENCH_KEEP:-0}" = 1 ]; then echo "kept $WORK"; else rm -rf "$WORK"; fi
}

# run_load : the memory sampler in the background, the load in the foreground
run_load() {
    local pm
    pm=$(head -1 "$DATA/postmaster.pid")
    local t0=$SECONDS
    python3 "$HERE/load.py" sample "$pm" "$INTERVAL" "$WH" "$WORK/samples.tsv" &
    SAMPLER_PID=$!
    log "load: $CLIENTS clients for $SECS s, mix $MIX"
    "$LG" mix -base "http://127.0.0.1:$RPORT/v1/skade/namespaces/b/tables" -tables "$TABLES" -mix "$MIX" \
        -H "Authorization: Bearer $TOKEN" -H "Accept-Encoding: gzip" -c "$CLIENTS" -d "$SECS" \
        -manifest-list "file:$WH/manifest-list.avro" -id-base 8000000000000000000 \
        -acked "$WORK/acked.txt" >"$WORK/result.json"
    # the sampler stops; one sample more once the load is over
    kill "$SAMPLER_PID"
    wait "$SAMPLER_PID" 2>/dev/null || true
    SAMPLER_PID=
    sleep 2
    python3 "$HERE/load.py" sample-once "$pm" $((SECONDS - t0)) "$WH" "$WORK/samples.tsv"
}

# locations : each table's metadata location now, and as registered
locations() {
    local name path loc
    while read -r name path; do
        loc=$(pg "$PGPORT" -Atq -c "SELECT metadata_location FROM iceberg_tables WHERE catalog_name = 'skade' AND table_namespace = 'b' AND table_name = '$name'")
        printf '%s\t%s\t%s\n' "$name" "$loc" "$path"
    done <"$WORK/tables.txt" >"$WORK/locations.tsv"
}

build_tools
make_tables
start_skade
run_load
locations
cat >"$WORK/config.json" <<JSON
{"workers": $WORKERS, "tables": "$TABLES", "mix": "$MIX", "interval": $INTERVAL, "warmup": $WARMUP,
 "tol_kb": $TOL_KB, "tol_pct": $TOL_PCT, "meta_factor": $META_FACTOR}
JSON
rc=0
python3 "$HERE/load.py" report "$WORK/result.json" "$WORK/acked.txt" "$WORK/locations.tsv" \
    "$WORK/samples.tsv" "$WORK/config.json" || rc=$?
echo
echo "warehouse after the run: $(du -sh "$WH" | cut -f1) ($(find "$WH" -name '*.metadata.json' | wc -l) metadata files)"
echo "server log: $(grep -c 'ERROR:' "$DATA/server.log" || true) ERROR lines; the most frequent:"
grep -o 'ERROR: .*' "$DATA/server.log" | cut -c1-160 | sort | uniq -c | sort -rn | head -5 || true
if grep -E 'PANIC|was terminated by signal|server process .* exited with exit code [^0]' "$DATA/server.log"; then
    echo "the server log shows a crash (above)"
    rc=1
fi
echo "Machine caveat: $(nproc) cores shared by the server, the load generator and other work. Run time $((SECONDS - START)) s."
exit $rc
