#!/usr/bin/env bash
# skade on S3 answers as on local files: the fixture tables of
# data/ re-homed twice (test/s3/fixtures_s3.py: a local copy and a copy in a
# moto S3 server that checks SigV4 signatures), every read function compared
# on both, the caches (no second GET), and the metadata writer on S3
# (test/s3/equivalence.py says what is checked).  A throwaway server and
# moto on free ports, everything under one temporary directory.  Run as root
# (the server runs as postgres).  Exits 0 when everything held.
#   test/s3/equivalence.sh [SECTION...]      (reads, caching, writes)
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
. "$SKADE_ROOT/test/s3/lib.sh"
. "$SKADE_ROOT/test/s3/suite_lib.sh"

[ "$(id -u)" -eq 0 ] || { echo "equivalence.sh: run as root (the server runs as $PG_USER)"; exit 1; }
BASE=$(mktemp -d /tmp/skade-s3eq.XXXXXX)
chmod 755 "$BASE"
cleanup() { stop_server "$BASE/pg"; stop_s3 "$BASE/s3"; rm -rf "$BASE"; }
trap cleanup EXIT
py=$(s3_tools_python) || exit 1
start_s3 "$BASE/s3" skade-eq || { echo "equivalence.sh: moto did not start"; exit 1; }
"$py" "$SKADE_ROOT/test/s3/fixtures_s3.py" "$SKADE_ROOT/test/data" "$BASE/stage" "$BASE/l" skade-eq \
    --extra w1 || exit 1
chmod -R a+rX "$BASE/l"
PORT=$(free_port)
start_s3_server "$BASE/pg" "$PORT" "$S3_ENDPOINT" "$BASE/s3/credentials" \
    "$BASE/l, s3://skade-eq" "s3://skade-eq/w1" || { echo "equivalence.sh: the server did not start"; exit 1; }
"$py" "$SKADE_ROOT/test/s3/equivalence.py" "$PORT" "$BASE/stage" "$BASE/s3/moto.log" skade-eq "$@"
rc=$?
if [ $rc -ne 0 ]; then
    echo "---- server log (tail)"; tail -n 30 "$BASE/pg/server.log"
fi
exit $rc
