#!/usr/bin/env bash
# Real-client interop suites against a throwaway PostgreSQL with skade:
# pyiceberg SqlCatalog (python/) and Java JdbcCatalog (java/), then the mixed
# protocol (Java writes, Python reads and writes, Java reads).
#   test/interop/run.sh [PORT] [DATADIR]        (as root; the server runs as postgres)
# By default a free port and a fresh directory: two runs at once do not meet.
# Installs what the clients need (JDK 17 + Maven, python3-venv) when missing.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"

PORT=${1:-$(free_port)}
DATA=${2:-$(mktemp -d /tmp/skade-interop-pg.XXXXXX)}
HERE="$SKADE_ROOT/test/interop"

command -v mvn >/dev/null 2>&1 && command -v javac >/dev/null 2>&1 || install_packages openjdk-17-jdk-headless maven
python3 -c 'import ensurepip, venv' 2>/dev/null || install_packages python3-venv

WAREHOUSE=$(mktemp -d /tmp/skade-interop-wh.XXXXXX)
# the server writes metadata there too (skade.create_table); clients run as root
chmod 755 "$WAREHOUSE" && chown "$PG_USER" "$WAREHOUSE"
# the committed fixtures, copied to this run's own directory with their
# recorded paths rewritten (test/fixtures.py), where the server (user
# postgres) can read them even when the checkout is private; the pyiceberg
# fixtures' index (fixtures.json) names the new places too
FIXDIR=$(mktemp -d /tmp/skade-XXXXXXXX)
"$(tools_python)" "$SKADE_ROOT/test/fixtures.py" "$SKADE_ROOT/test/data" "$FIXDIR" || exit 1
mkdir "$FIXDIR/pyindex"
sed -e "s#/tmp/skade-fixture-py#$FIXDIR/p#g" "$SKADE_ROOT/test/data/clients/python/fixtures.json" \
    >"$FIXDIR/pyindex/fixtures.json"
ln -s "$FIXDIR/p" "$FIXDIR/pyindex/warehouse"
chmod -R a+rX "$FIXDIR"
export SKADE_PY_FIXTURES="$FIXDIR/pyindex" SKADE_JAVA_FIXTURE_WAREHOUSE="$FIXDIR/java"
# the server reads metadata only under these roots: the shared warehouse and
# this run's fixtures
ROOTS="$WAREHOUSE,$FIXDIR"

start_server "$DATA" "$PORT"
echo "skade.allowed_roots = '$ROOTS'" >>"$DATA/postgresql.conf"
echo "skade.write_roots = '$WAREHOUSE'" >>"$DATA/postgresql.conf"
# the smallest L0.5 manifest cache: python/test_manifest_cache.py overflows it
echo "skade.manifest_cache_size = '1MB'" >>"$DATA/postgresql.conf"
as_pg "$PGBIN/pg_ctl" -D "$DATA" -w restart -l "$DATA/server.log" >/dev/null
pg "$PORT" -q -c 'CREATE EXTENSION skade' postgres

export PGHOST=127.0.0.1 PGPORT=$PORT PGUSER=postgres PGDATABASE=postgres SKADE_WAREHOUSE=$WAREHOUSE

# the clients (root) make table directories the server (postgres) writes
# metadata into as well (skade.update_table): let it
umask 000
passed=0
failed=0
step() {
    log "interop: $*"
    if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAILED: $*"; fi
}
# python main resets the extension itself, so it runs first
step "$HERE/python/run.sh" main
step "$HERE/java/run.sh" main
step "$HERE/java/run.sh" mixed-write
step "$HERE/python/run.sh" mixed
step "$HERE/java/run.sh" mixed-read

stop_server "$DATA"
rm -rf "$WAREHOUSE" "$FIXDIR" "$DATA"
echo "interop phases: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
