#!/usr/bin/env bash
# S3 faults under skade: a proxy (test/s3/fault_proxy.py) between
# skade and a moto S3 server that checks SigV4 signatures plays a server
# that is down, slow, throttling, failing, denying, hanging, or sending
# truncated or altered bodies; test/s3/faults_s3.py says what skade must do
# for each (retry and succeed, or fail with the contract's SQLSTATE and the
# S3 code in DETAIL, never caching what it did not verify; yield to
# statement_timeout and pg_cancel_backend mid-transfer; never request
# outside skade.allowed_roots; 42501 SignatureDoesNotMatch for a wrong
# key).  A throwaway server, moto and the proxy on free ports, everything
# under one temporary directory.  Run as root (the server runs as postgres).
# Exits 0 when everything held, 1 otherwise.
#   test/faults/s3.sh [SECTION...]   (read_faults, hangs, write_faults, confinement)
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
. "$SKADE_ROOT/test/s3/lib.sh"
. "$SKADE_ROOT/test/s3/suite_lib.sh"

[ "$(id -u)" -eq 0 ] || { echo "s3.sh: run as root (the server runs as $PG_USER)"; exit 1; }
BASE=$(mktemp -d /tmp/skade-s3faults.XXXXXX)
chmod 755 "$BASE"
cleanup() {
    stop_server "$BASE/pg"
    [ -f "$BASE/proxy.pid" ] && kill "$(cat "$BASE/proxy.pid")" 2>/dev/null
    stop_s3 "$BASE/s3"
    rm -rf "$BASE"
}
trap cleanup EXIT
py=$(s3_tools_python) || exit 1
start_s3 "$BASE/s3" skade-f skade-other || { echo "s3.sh: moto did not start"; exit 1; }
extra=()
for i in $(seq 10 33); do extra+=(--extra "in/r$i"); done
"$py" "$SKADE_ROOT/test/s3/fixtures_s3.py" "$SKADE_ROOT/test/data" "$BASE/stage" "$BASE/l" skade-f \
    --only py/fixtures/events "${extra[@]}" >/dev/null || exit 1
chmod -R a+rX "$BASE/l"

PROXY_PORT=$(free_port)
CTL_PORT=$(free_port)
"$py" "$SKADE_ROOT/test/s3/fault_proxy.py" "$PROXY_PORT" "$CTL_PORT" "$S3_ENDPOINT" \
    >"$BASE/proxy.log" 2>&1 &
echo $! >"$BASE/proxy.pid"
for _ in $(seq 1 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$CTL_PORT") 2>/dev/null && break
    sleep 0.1
done
PORT=$(free_port)
start_s3_server "$BASE/pg" "$PORT" "http://127.0.0.1:$PROXY_PORT" "$BASE/s3/credentials" \
    "$BASE/l, s3://skade-f/in" "s3://skade-f/in/w" \
    "skade.s3_connect_timeout = '1s'
skade.s3_request_timeout = '3s'
skade.s3_max_retries = 2" || { echo "s3.sh: the server did not start"; exit 1; }
"$py" "$SKADE_ROOT/test/s3/faults_s3.py" "$PORT" "http://127.0.0.1:$CTL_PORT" "$BASE/stage" "$BASE" "$@"
rc=$?
if [ $rc -ne 0 ]; then
    echo "---- server log (tail)"; grep -v "^\s*$" "$BASE/pg/server.log" | grep -E "PANIC|TRAP|terminated by signal|FATAL" | tail -n 10
    echo "---- proxy log (tail)"; tail -n 10 "$BASE/proxy.log"
fi
exit $rc
