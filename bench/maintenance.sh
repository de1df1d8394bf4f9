#!/usr/bin/env bash
# Issue 12: table maintenance on a table of APPENDS fast appends (one data
# file and one new manifest each, so the current snapshot lists APPENDS
# manifests): the time of skade.expire_snapshots(older_than => now(),
# retain_last => 1) and of skade.rewrite_manifests(), and what a reader
# feels -- pyiceberg's scan().plan_files() before and after (median of RUNS
# cold plans), with skade.plan_files() beside it; metadata.json size,
# snapshots and manifests before and after; the rows pyiceberg reads back
# must be the same before and after (the script fails otherwise).
# The table is built by bench/maintenance.py (see its docstring: the first
# append is pyiceberg's, the others are real files written with pyiceberg's
# writers and committed through skade.update_table()).
# Usage: bash bench/maintenance.sh [appends=10000] [runs=5]
# (SKADE_BENCH_EXPIRE_TIMEOUT=seconds: cancel expire_snapshots after that long)
set -euo pipefail
. "$(dirname "$0")/../test/lib.sh"

APPENDS=${1:-10000}
RUNS=${2:-5}
PORT=$(free_port)
BASE=$(mktemp -d /tmp/skade-bench-maint.XXXXXX)
chmod 755 "$BASE"
DATA=$BASE/pg
WH=$BASE/wh
# pyiceberg (root) and the server (postgres) both write below the warehouse
mkdir -p "$WH" && chmod 777 "$WH"
install_build_deps
bench_build_and_install
start_server "$DATA" "$PORT"
trap 'stop_server "$DATA"; rm -rf "$BASE"' EXIT
cat >>"$DATA/postgresql.conf" <<CONF
skade.allowed_roots = '$WH'
skade.write_roots = '$WH'
CONF
as_pg "$PGBIN/pg_ctl" -D "$DATA" -w restart -l "$DATA/server.log" >/dev/null
pg "$PORT" -q -c 'CREATE EXTENSION skade' postgres

# pyiceberg from the interop suite's virtualenv
VENV=${SKADE_VENV:-$SKADE_ROOT/test/interop/python/.venv}
python3 -c 'import ensurepip, venv' 2>/dev/null || install_packages python3-venv
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install --disable-pip-version-check -q -r "$SKADE_ROOT/test/interop/python/requirements.txt"

PGHOST=127.0.0.1 PGPORT=$PORT PGUSER=postgres PGDATABASE=postgres TMPDIR=$BASE \
    "$VENV/bin/python" "$SKADE_ROOT/bench/maintenance.py" "$WH" "$APPENDS" "$RUNS"
