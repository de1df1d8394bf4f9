#!/usr/bin/env bash
# Issue 6 benchmark P7: skade.plan_files() vs pyiceberg's planner on a table
# of 10,000 data files in 100 manifests, same filters, one run, one server.
# Usage: bash bench/plan_files.sh [manifests=100] [files-per-manifest=100] [runs=7]
set -euo pipefail
. "$(dirname "$0")/../test/lib.sh"

PORT=${SKADE_BENCH_PORT:-5469}
TMPBASE=${SKADE_BENCH_TMP:-/tmp}
DATA=$TMPBASE/skade-bench-plan-pg
WH=$TMPBASE/skade-bench-plan-wh

install_build_deps
bench_build_and_install
rm -rf "$WH" && mkdir -p "$WH" && chmod 777 "$WH"
start_server "$DATA" "$PORT"
echo "skade.allowed_roots = '$WH'" >>"$DATA/postgresql.conf"
as_pg "$PGBIN/pg_ctl" -D "$DATA" -w restart -l "$DATA/server.log" >/dev/null
trap 'stop_server "$DATA"' EXIT
pg "$PORT" -q -c 'CREATE EXTENSION skade' postgres

# pyiceberg from the interop suite's virtualenv
VENV=${SKADE_VENV:-$SKADE_ROOT/test/interop/python/.venv}
python3 -c 'import ensurepip, venv' 2>/dev/null || install_packages python3-venv
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install --disable-pip-version-check -q -r "$SKADE_ROOT/test/interop/python/requirements.txt"

PGHOST=127.0.0.1 PGPORT=$PORT PGUSER=postgres PGDATABASE=postgres \
    "$VENV/bin/python" "$SKADE_ROOT/bench/plan_files.py" "$WH" "$@"
