#!/usr/bin/env bash
# Issue 27 benchmark: skade's REST port over TLS vs plain HTTP, on ONE server in one run: the
# main port speaks TLS (skade.rest_tls_cert_file, an EC P-256 certificate made here), the same
# listener serves plain HTTP on skade.rest_plaintext_port, so both see the same workers, caches
# and tables. Rounds alternate which goes first.
#   loadTable p50/p99, 1 client, keep-alive: snapshots=all with gzip (as Java and pyiceberg
#     ask), snapshots=refs, and If-None-Match -> 304 (TLS framing on a tiny answer)
#   req/s with 32 clients (one keep-alive connection each): snapshots=refs and all (gzip)
#   new connections: GET /v1/config, 1 client, a new connection per request (-H Connection:
#     close): what the TLS handshake costs a client that does not keep connections
# Prints per metric the median over rounds of plain and TLS and the ratio tls/plain (latency:
# above 1 is slower over TLS; rates: below 1 is fewer over TLS).
#
# Usage: bash bench/rest_tls.sh [seconds-per-run=3] [rounds=3]
# Environment: SKADE_BENCH_TLS_SNAPSHOTS (the table's snapshots, 1000), SKADE_BENCH_REST_WORKERS
#   (skade.rest_workers, 2), SKADE_BENCH_NO_BUILD=1, SKADE_BENCH_KEEP=1 (keep the work directory)
set -euo pipefail
. "$(dirname "$0")/../test/lib.sh"

SECS=${1:-3}
ROUNDS=${2:-3}
SNAPS=${SKADE_BENCH_TLS_SNAPSHOTS:-1000}
WORKERS=${SKADE_BENCH_REST_WORKERS:-2}
HERE=$SKADE_ROOT/bench/rest

WORK=$(mktemp -d /tmp/skade-bench-rest-tls.XXXXXX)
chmod 755 "$WORK"
DATA=$WORK/pg WH=$WORK/wh PKI=$WORK/pki RES=$WORK/results.tsv
: >"$RES"

if [ "${SKADE_BENCH_NO_BUILD:-0}" != 1 ]; then
    install_build_deps
    build_and_install
fi
command -v openssl >/dev/null || install_packages openssl
command -v curl >/dev/null || install_packages curl
build_loadgen "$WORK/loadgen"
LG=$WORK/loadgen

PGPORT=$(free_port)
TPORT=$(free_port)
while [ "$TPORT" = "$PGPORT" ]; do TPORT=$(free_port); done
PPORT=$(free_port)
while [ "$PPORT" = "$PGPORT" ] || [ "$PPORT" = "$TPORT" ]; do PPORT=$(free_port); done

# ---------------------------------------------------------------- a CA and the server's certificate
mkdir -p "$PKI"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "/CN=skade bench CA" \
    -keyout "$PKI/ca.key" -out "$PKI/ca.pem" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=127.0.0.1" \
    -keyout "$PKI/server.key" -out "$PKI/server.csr" 2>/dev/null
printf 'subjectAltName = IP:127.0.0.1, DNS:localhost\n' >"$PKI/san.ext"
openssl x509 -req -in "$PKI/server.csr" -CA "$PKI/ca.pem" -CAkey "$PKI/ca.key" -CAcreateserial -days 2 \
    -extfile "$PKI/san.ext" -out "$PKI/server.pem" 2>/dev/null
chown -R "$PG_USER" "$PKI"
chmod 755 "$PKI" && chmod 600 "$PKI/server.key"

# ---------------------------------------------------------------- the table and the server
mkdir -p "$WH"
python3 "$HERE/tables.py" "$WH" "t:$SNAPS" >"$WORK/tables.txt"
chown -R "$PG_USER" "$WH"
chmod -R a+rwX "$WH"
log "PostgreSQL + skade: TLS on port $TPORT, plain HTTP on $PPORT (one listener, $WORKERS workers)"
start_server "$DATA" "$PGPORT"
cat >>"$DATA/postgresql.conf" <<CONF
skade.allowed_roots = '$WH'
skade.write_roots = '$WH'
skade.metadata_cache_size = 256MB
skade.rest_port = $TPORT
skade.rest_plaintext_port = $PPORT
skade.rest_tls_cert_file = '$PKI/server.pem'
skade.rest_tls_key_file = '$PKI/server.key'
skade.rest_workers = $WORKERS
skade.rest_listen_addresses = '127.0.0.1'
CONF
as_pg "$PGBIN/pg_ctl" -D "$DATA" -w restart -l "$DATA/server.log" >/dev/null
cleanup() {
    stop_server "$DATA"
    if [ "${SKADE_BENCH_KEEP:-0}" = 1 ]; then echo "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
pg "$PGPORT" -q >/dev/null <<'SQL'
CREATE EXTENSION skade;
CREATE ROLE bench LOGIN;
GRANT skade_reader TO bench;
SELECT skade.create_namespace('b');
SQL
while read -r name path; do
    pg "$PGPORT" -Atq -c "SELECT skade.register_table('b', '$name', 'file:$path')" >/dev/null
done <"$WORK/tables.txt"
TOKEN=$(pg "$PGPORT" -Atq -c "SELECT skade.rest_create_token('bench')")
AUTH="Authorization: Bearer $TOKEN"
GZ="Accept-Encoding: gzip"
for _ in $(seq 50); do
    curl -fsS --cacert "$PKI/ca.pem" -o /dev/null -H "$AUTH" "https://127.0.0.1:$TPORT/v1/config" 2>/dev/null && break
    sleep 0.2
done
proto=$(curl -sS --cacert "$PKI/ca.pem" -o /dev/null -w '%{http_version}' -H "$AUTH" -v \
    "https://127.0.0.1:$TPORT/v1/config" 2>&1 | sed -n 's/.*SSL connection using \(TLSv[0-9.]*\).*/\1/p' | head -1)
echo "TLS: ${proto:-?} (curl's view), certificate EC P-256; plain HTTP on the second port of the same listener"
url() { if [ "$1" = tls ]; then echo "https://127.0.0.1:$TPORT"; else echo "http://127.0.0.1:$PPORT"; fi; }
T=/v1/skade/namespaces/b/tables/t
TAG=$(curl -fsS -o /dev/null -D - -H "$AUTH" "http://127.0.0.1:$PPORT$T" | tr -d '\r' | sed -n 's/^[Ee][Tt][Aa][Gg]: //p')

# m KEY LOADGEN-ARGS... : one measurement, its JSON line into results.tsv
m() {
    local key=$1 out
    shift
    out=$("$LG" "$@" -cacert "$PKI/ca.pem")
    printf '%s\t%s\n' "$key" "$out" >>"$RES"
    python3 "$HERE/fmt.py" progress "$key" "$out"
}

log "warm-up"
for p in plain tls; do "$LG" get -url "$(url $p)$T" -H "$AUTH" -H "$GZ" -c 4 -d 2 -cacert "$PKI/ca.pem" >/dev/null; done

for r in $(seq "$ROUNDS"); do
    log "round $r of $ROUNDS"
    if [ $((r % 2)) = 1 ]; then order="plain tls"; else order="tls plain"; fi
    for p in $order; do
        u=$(url $p)
        m "all 1 $p" get -url "$u$T" -H "$AUTH" -H "$GZ" -c 1 -d "$SECS"
        m "refs 1 $p" get -url "$u$T?snapshots=refs" -H "$AUTH" -H "$GZ" -c 1 -d "$SECS"
        m "304 1 $p" get -url "$u$T" -H "$AUTH" -H "$GZ" -H "If-None-Match: $TAG" -expect 304 -c 1 -d "$SECS"
        m "refs 32 $p" get -url "$u$T?snapshots=refs" -H "$AUTH" -H "$GZ" -c 32 -d "$SECS"
        m "all 32 $p" get -url "$u$T" -H "$AUTH" -H "$GZ" -c 32 -d "$SECS"
        m "newconn 1 $p" get -url "$u/v1/config" -H "$AUTH" -H "Connection: close" -c 1 -d "$SECS"
    done
done

python3 - "$RES" "$SNAPS" <<'PY'
import json, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    key, js = line.rstrip("\n").split("\t", 1)
    what, c, proto = key.rsplit(" ", 2)
    rows.setdefault((what, c), {}).setdefault(proto, []).append(json.loads(js))
errors = sum(d.get("errors", 0) for v in rows.values() for ds in v.values() for d in ds)
names = {"all": f"loadTable snapshots=all gzip ({sys.argv[2]} snapshots)", "refs": "loadTable snapshots=refs gzip",
         "304": "loadTable If-None-Match -> 304", "newconn": "GET /v1/config, a new connection per request"}
print()
print("| metric | clients | plain | TLS | TLS/plain |")
print("|---|---:|---:|---:|---:|")
for (what, c), v in rows.items():
    med = lambda p, f: statistics.median(d[f] for d in v[p])
    if c == "1":
        for f, label in (("p50_ms", "p50"), ("p99_ms", "p99")):
            a, b = med("plain", f), med("tls", f)
            print(f"| {names[what]} {label} | 1 | {a:.3f} ms | {b:.3f} ms | {b / a:.2f}x |")
    a, b = med("plain", "rps"), med("tls", "rps")
    print(f"| {names[what]} req/s | {c} | {a:,.0f} | {b:,.0f} | {b / a:.2f}x |")
print(f"\nerrors: {errors}")
sys.exit(1 if errors else 0)
PY
