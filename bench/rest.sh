#!/usr/bin/env bash
# Issue 14 benchmarks B1 and B2: skade's Iceberg REST catalog (background workers on
# skade.rest_port) vs the baseline, Iceberg's REST fixture 1.11.0 (RESTCatalogServer over a
# JdbcCatalog, test/rest/fixture.sh) on the SAME PostgreSQL and the SAME iceberg_tables rows
# (skade.register_table writes them; the fixture's JdbcCatalog reads them), in one run.
#   B1  loadTable warm at 100, 1,000, 9,000 and 50,000 snapshots: 1 client p50/p99 for
#       snapshots=all (gzip accepted, as Java's and pyiceberg's HTTP clients ask), all without
#       gzip, snapshots=refs and If-None-Match -> 304 (both servers have all three), and req/s
#       with 8 and 32 concurrent clients (50,000: 1 and 8 clients only -- the fixture does
#       not survive 32 concurrent 33 MB loads in a 4 GB heap, and each round takes minutes)
#   B2  commits on one hot table (100 snapshots to start, a fresh table per run): 1, 8 and 32
#       writers appending a snapshot (add-snapshot + set-snapshot-ref main, requirement
#       assert-ref-snapshot-id; on 409 the writer reloads with snapshots=refs and retries)
#       until COMMITS commits succeeded: commits/s, p50/p95 (first attempt to success), 409
#       rate, attempts per success, and lost updates (acknowledged commits missing from the
#       table's parent chain) -- must be 0
# The load generator is bench/rest/loadgen.go (Go standard library, keep-alive connections, one
# per client; built here); its ceiling on this machine is measured first against a trivial
# in-process server, and GET /v1/config on both servers.
# Ratios are skade's advantage (fixture/skade for latencies, skade/fixture for rates).
#
# Usage: bash bench/rest.sh [seconds-per-load-run=2] [commits-per-B2-run=300]
# Environment: SKADE_BENCH_SIZES ("100 1000 9000 50000"), SKADE_BENCH_WRITERS ("1 8 32"),
#   SKADE_BENCH_REST_WORKERS (skade.rest_workers, 2), SKADE_BENCH_FIXTURE_CLIENTS (the
#   fixture's JDBC pool, 8), SKADE_BENCH_FIXTURE_JAVA_OPTS ("-Xms1g -Xmx4g"),
#   SKADE_BENCH_NO_BUILD=1 (use the skade already installed), SKADE_BENCH_KEEP=1 (keep the
#   work directory: results.tsv, server and fixture logs)
set -euo pipefail
. "$(dirname "$0")/../test/lib.sh"

SECS=${1:-2}
COMMITS=${2:-300}
SIZES=${SKADE_BENCH_SIZES:-100 1000 9000 50000}
WRITERS=${SKADE_BENCH_WRITERS:-1 8 32}
WORKERS=${SKADE_BENCH_REST_WORKERS:-2}
FXCLIENTS=${SKADE_BENCH_FIXTURE_CLIENTS:-8}
FXJAVA=${SKADE_BENCH_FIXTURE_JAVA_OPTS:--Xms1g -Xmx4g}
HERE=$SKADE_ROOT/bench/rest
START=$SECONDS

WORK=$(mktemp -d /tmp/skade-bench-rest.XXXXXX)
chmod 755 "$WORK"
DATA=$WORK/pg WH=$WORK/wh FX=$WORK/fixture RES=$WORK/results.tsv
: >"$RES"

if [ "${SKADE_BENCH_NO_BUILD:-0}" != 1 ]; then
    install_build_deps
    build_and_install
fi
command -v java >/dev/null && command -v mvn >/dev/null || install_packages default-jdk-headless maven
command -v curl >/dev/null || install_packages curl
build_loadgen "$WORK/loadgen"
LG=$WORK/loadgen

PGPORT=$(free_port)
RPORT=$(free_port)
while [ "$RPORT" = "$PGPORT" ]; do RPORT=$(free_port); done
FPORT=$(free_port)
while [ "$FPORT" = "$PGPORT" ] || [ "$FPORT" = "$RPORT" ]; do FPORT=$(free_port); done

# ---------------------------------------------------------------- tables
log "tables: metadata with ${SIZES// /, } snapshots (B1), 100 (B2)"
args=()
for n in $SIZES; do args+=("s$n:$n"); done
for w in $WRITERS; do args+=("sk$w:100" "fx$w:100"); done
args+=("warm:100")
mkdir -p "$WH"
python3 "$HERE/tables.py" "$WH" "${args[@]}" >"$WORK/tables.txt"
chown -R "$PG_USER" "$WH"
chmod -R a+rwX "$WH"

# ---------------------------------------------------------------- servers
log "PostgreSQL + skade (REST port $RPORT, $WORKERS workers); the fixture on port $FPORT"
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
cleanup() {
    bash "$SKADE_ROOT/test/rest/fixture.sh" stop "$FX" || true
    stop_server "$DATA"
    if [ "${SKADE_BENCH_KEEP:-0}" = 1 ]; then echo "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

pg "$PGPORT" -q >/dev/null <<'SQL'
CREATE EXTENSION skade;
CREATE ROLE bench LOGIN;
GRANT skade_writer TO bench;
SELECT skade.create_namespace('b');
SQL
while read -r name path; do
    pg "$PGPORT" -Atq -c "SELECT skade.register_table('b', '$name', 'file:$path')" >/dev/null
done <"$WORK/tables.txt"
TOKEN=$(pg "$PGPORT" -Atq -c "SELECT skade.rest_create_token('bench')")

FIXTURE_EXTRA_ENV="CATALOG_CLIENTS=$FXCLIENTS" FIXTURE_JAVA_OPTS="$FXJAVA" \
    bash "$SKADE_ROOT/test/rest/fixture.sh" start "$FX" "$FPORT" \
    "jdbc:postgresql://127.0.0.1:$PGPORT/postgres" postgres "$WH" skade

SK=http://127.0.0.1:$RPORT/v1/skade/namespaces/b/tables
FU=http://127.0.0.1:$FPORT/v1/namespaces/b/tables
AUTH="Authorization: Bearer $TOKEN"
GZ="Accept-Encoding: gzip"
# the same table through both: skade sees what the fixture sees
for srv in skade fixture; do
    if [ $srv = skade ]; then u=$SK/warm h=$AUTH; else u=$FU/warm h="X-No: auth"; fi
    curl -fsS -H "$h" "$u" | python3 "$HERE/fmt.py" table $srv
done

# m KEY LOADGEN-ARGS... : one measurement, its JSON line into results.tsv, a progress line
m() {
    local key=$1 out
    shift
    out=$("$LG" "$@")
    printf '%s\t%s\n' "$key" "$out" >>"$RES"
    python3 "$HERE/fmt.py" progress "$key" "$out"
}
etag() { curl -fsS -o /dev/null -D - "$@" | tr -d '\r' | sed -n 's/^[Ee][Tt][Aa][Gg]: //p'; }

cat <<EOF

Machine caveat: $(nproc) cores shared by PostgreSQL (skade's $WORKERS REST workers), the fixture's
JVM and the load generator; read ratios, not absolutes. skade.rest_workers = $WORKERS; the fixture's
JDBC pool CATALOG_CLIENTS = $FXCLIENTS, JVM $FXJAVA. Both answer gzip when asked; every request
below sends Accept-Encoding: gzip (as Java's RESTCatalog and pyiceberg do) unless it says no gzip.
EOF

# ---------------------------------------------------------------- warm-up
log "load generator check and warm-up (the fixture's JIT, both servers' caches)"
m "self 1" selftest -c 1 -d "$SECS"
m "self 32" selftest -c 32 -d "$SECS"
m "config skade 1" get -url "http://127.0.0.1:$RPORT/v1/config?warehouse=skade" -H "$AUTH" -c 1 -d "$SECS"
m "config fixture 1" get -url "http://127.0.0.1:$FPORT/v1/config" -c 1 -d "$SECS"
m "config skade 32" get -url "http://127.0.0.1:$RPORT/v1/config?warehouse=skade" -H "$AUTH" -c 32 -d "$SECS"
m "config fixture 32" get -url "http://127.0.0.1:$FPORT/v1/config" -c 32 -d "$SECS"
for srv in skade fixture; do
    if [ $srv = skade ]; then u=$SK h=$AUTH; else u=$FU h="X-No: auth"; fi
    "$LG" get -url "$u/warm" -H "$h" -H "$GZ" -c 4 -d 3 >/dev/null
    "$LG" get -url "$u/warm?snapshots=refs" -H "$h" -H "$GZ" -c 4 -d 1 >/dev/null
    "$LG" commit -url "$u/warm" -H "$h" -H "$GZ" -reload snapshots=refs -c 4 -total 200 -d 4 \
        -manifest-list "file:$WH/manifest-list.avro" -id-base $((5000000000000000000 + ${#srv} * 100000000000000)) >/dev/null
done

# ---------------------------------------------------------------- B1
for n in $SIZES; do
    log "B1 loadTable, $n snapshots"
    nmin=20 cmax=32
    if [ "$n" -ge 50000 ]; then nmin=8 cmax=8; fi
    for srv in skade fixture; do
        if [ $srv = skade ]; then u=$SK/s$n h=$AUTH; else u=$FU/s$n h="X-No: auth"; fi
        # the fixture's ETag: Jetty suffixes "--gzip" to it on a gzip answer and then does not
        # match that form in If-None-Match (200 again); its 304 rows send the bare ETag
        tag=$(etag -H "$h" -H "Accept-Encoding: identity" "$u")
        if [ $srv = fixture ] && [ "$n" = "$(set -- $SIZES; echo "$1")" ]; then
            gztag=$(etag -H "$h" -H "$GZ" "$u")
            code=$(curl -s -o /dev/null -w '%{http_code}' -H "$GZ" -H "If-None-Match: $gztag" "$u")
            echo "  note: the fixture's ETag on a gzip answer is $gztag; If-None-Match: $gztag -> $code (bare $tag -> 304)"
        fi
        m "b1 $n all 1 $srv" get -url "$u" -H "$h" -H "$GZ" -c 1 -d "$SECS" -n $nmin
        m "b1 $n identity 1 $srv" get -url "$u" -H "$h" -H "Accept-Encoding: identity" -c 1 -d "$SECS" -n $nmin
        m "b1 $n refs 1 $srv" get -url "$u?snapshots=refs" -H "$h" -H "$GZ" -c 1 -d "$SECS" -n $nmin
        m "b1 $n 304 1 $srv" get -url "$u" -H "$h" -H "$GZ" -H "If-None-Match: $tag" -expect 304 -c 1 -d "$SECS" -n $nmin
        for c in 8 32; do
            [ "$c" -gt "$cmax" ] && continue
            m "b1 $n all $c $srv" get -url "$u" -H "$h" -H "$GZ" -c $c -d "$SECS" -n $nmin
            m "b1 $n refs $c $srv" get -url "$u?snapshots=refs" -H "$h" -H "$GZ" -c $c -d "$SECS" -n $nmin
            m "b1 $n 304 $c $srv" get -url "$u" -H "$h" -H "$GZ" -H "If-None-Match: $tag" -expect 304 -c $c -d "$SECS" -n $nmin
        done
    done
done

# ---------------------------------------------------------------- B2
log "B2 commits on one hot table, $COMMITS commits per run"
for w in $WRITERS; do
    for srv in skade fixture; do
        if [ $srv = skade ]; then tbl=sk$w u=$SK/sk$w h=$AUTH; else tbl=fx$w u=$FU/fx$w h="X-No: auth"; fi
        out=$("$LG" commit -url "$u" -H "$h" -H "$GZ" -reload snapshots=refs -c "$w" -total "$COMMITS" -d 60 \
            -manifest-list "file:$WH/manifest-list.avro" -id-base $((6000000000000000000 + w * 1000000000000000 + ${#srv} * 10000000000000)))
        ok=$(python3 "$HERE/fmt.py" field "$out" commits)
        loc=$(pg "$PGPORT" -Atq -c "SELECT metadata_location FROM iceberg_tables WHERE catalog_name = 'skade' AND table_namespace = 'b' AND table_name = '$tbl'")
        chain=$(python3 "$HERE/chain.py" "$loc" 100 "$ok")
        merged=$(python3 "$HERE/fmt.py" merge "$out" "$chain")
        printf '%s\t%s\n' "b2 $w $srv" "$merged" >>"$RES"
        python3 "$HERE/fmt.py" progress "b2 $w $srv" "$merged"
    done
done

# ---------------------------------------------------------------- report
log "results"
python3 "$HERE/report.py" "$RES" "$SIZES" "$WRITERS"
pm=$(head -1 "$DATA/postmaster.pid")
rss=$(for p in $(pgrep -P "$pm" -f "skade rest worker" || true); do awk '/^RssAnon/ {print $2}' "/proc/$p/status"; done | paste -sd/ -)
echo "skade REST workers' private RSS (RssAnon) after the run: ${rss:-?} kB; fixture JVM RSS: $(awk '/^VmRSS/ {print $2}' "/proc/$(cat "$FX/fixture.pid")/status" 2>/dev/null || echo '?') kB"
echo "Machine caveat: $(nproc) cores shared by the server, the fixture and the load generator. Run time $((SECONDS - START)) s."
