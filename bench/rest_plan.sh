#!/usr/bin/env bash
# Issue 14 benchmark B3: planTableScan with a selective filter on tables of 10,000 and 100,000
# data files, warm and cold. skade: POST /v1/{prefix}/namespaces/b/tables/T/plan on skade's REST
# port (skade.plan_table_scan() plans in the server from its L0/L0.5 caches and answers
# "completed" with the file-scan-tasks). Baseline, same run: client-side planning by pyiceberg
# 0.12 (RestCatalog on Iceberg's REST fixture 1.11.0, test/rest/fixture.sh, over the SAME
# PostgreSQL and the SAME iceberg_tables rows: table.scan(row_filter=...).plan_files()).
#   cold  skade: the first plan after SELECT skade.cache_reset() (L0 and L0.5 empty; the REST
#         worker's session itself has planned before); pyiceberg: a fresh process (imports and
#         RestCatalog set-up not timed: load_table + plan_files)
#   warm  skade: the same request repeated; pyiceberg: plan_files() repeated on the same table
#         object in one process
# Prints p50/p99 per case, ratios (pyiceberg / skade; target: skade >= 20x faster warm), the
# data files each planner returns (the same set of paths, or the script fails), and bytes: skade's
# HTTP answer vs what pyiceberg reads (the fixture's loadTable answer + manifest list +
# manifests). The tables are written by pyiceberg's own manifest writers (bench/s3.py
# plan_table: identity partition part, bounds on every column, no Parquet file).
#
# Usage: bash bench/rest_plan.sh
# Environment: SKADE_BENCH_PLAN_TABLES ("t10k:100x100 t100k:100x1000", NAME:MANIFESTSxFILES),
#   SKADE_BENCH_PLAN_FILTERS ("part idrange": 100 files each, by partition value and by column
#   bounds; also id1pct, idpoint, partid: see bench/rest/plan.py),
#   SKADE_BENCH_PLAN_RUNS ("skade_cold skade_warm py_cold py_warm", default "10 100 5 5"),
#   SKADE_BENCH_PLAN_RUNS_BIG (the same for tables of 50,000 files and more, "5 30 3 3"),
#   SKADE_BENCH_NO_BUILD=1 (use the skade already installed), SKADE_BENCH_KEEP=1 (keep the work
#   directory), SKADE_VENV (pyiceberg's virtualenv, default test/interop/python/.venv)
set -euo pipefail
. "$(dirname "$0")/../test/lib.sh"

TABLES=${SKADE_BENCH_PLAN_TABLES:-t10k:100x100 t100k:100x1000}
FILTERS=${SKADE_BENCH_PLAN_FILTERS:-part idrange}
RUNS=${SKADE_BENCH_PLAN_RUNS:-10 100 5 5}
RUNS_BIG=${SKADE_BENCH_PLAN_RUNS_BIG:-5 30 3 3}
HERE=$SKADE_ROOT/bench/rest
START=$SECONDS

WORK=$(mktemp -d /tmp/skade-bench-rest-plan.XXXXXX)
chmod 755 "$WORK"
DATA=$WORK/pg WH=$WORK/wh FX=$WORK/fixture

# build_and_tools : skade installed (unless SKADE_BENCH_NO_BUILD=1), Java for the fixture,
# pyiceberg's virtualenv
build_and_tools() {
    if [ "${SKADE_BENCH_NO_BUILD:-0}" != 1 ]; then
        install_build_deps
        build_and_install
    fi
    command -v java >/dev/null && command -v mvn >/dev/null || install_packages default-jdk-headless maven
    command -v curl >/dev/null || install_packages curl
    VENV=${SKADE_VENV:-$SKADE_ROOT/test/interop/python/.venv}
    python3 -c 'import ensurepip, venv' 2>/dev/null || install_packages python3-venv
    [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
    "$VENV/bin/python" -m pip install --disable-pip-version-check -q -r "$SKADE_ROOT/test/interop/python/requirements.txt"
    PY=$VENV/bin/python
}

# start_servers : PostgreSQL + skade's REST port (one worker: every request meets the same
# session and caches), then the fixture on the same database
start_servers() {
    PGPORT=$(free_port)
    RPORT=$(free_port)
    while [ "$RPORT" = "$PGPORT" ]; do RPORT=$(free_port); done
    FPORT=$(free_port)
    while [ "$FPORT" = "$PGPORT" ] || [ "$FPORT" = "$RPORT" ]; do FPORT=$(free_port); done
    log "PostgreSQL + skade (REST port $RPORT); the fixture on port $FPORT"
    start_server "$DATA" "$PGPORT"
    cat >>"$DATA/postgresql.conf" <<CONF
skade.allowed_roots = '$WH'
skade.metadata_cache_size = 64MB
skade.manifest_cache_size = 1GB
skade.rest_port = $RPORT
skade.rest_workers = 1
skade.rest_listen_addresses = '127.0.0.1'
CONF
    as_pg "$PGBIN/pg_ctl" -D "$DATA" -w restart -l "$DATA/server.log" >/dev/null
    trap cleanup EXIT
    pg "$PGPORT" -q >/dev/null <<'SQL'
CREATE EXTENSION skade;
CREATE ROLE bench LOGIN;
GRANT skade_reader TO bench;
SELECT skade.create_namespace('b');
SQL
    TOKEN=$(pg "$PGPORT" -Atq -c "SELECT skade.rest_create_token('bench')")
    FIXTURE_JAVA_OPTS="-Xms512m -Xmx2g" \
        bash "$SKADE_ROOT/test/rest/fixture.sh" start "$FX" "$FPORT" \
        "jdbc:postgresql://127.0.0.1:$PGPORT/postgres" postgres "$WH" skade
}

cleanup() {
    bash "$SKADE_ROOT/test/rest/fixture.sh" stop "$FX" || true
    stop_server "$DATA"
    if [ "${SKADE_BENCH_KEEP:-0}" = 1 ]; then echo "kept $WORK"; else rm -rf "$WORK"; fi
}

# make_tables : write the tables (pyiceberg's writers) and register them in skade
make_tables() {
    log "tables: $TABLES (NAME:MANIFESTSxFILES-PER-MANIFEST)"
    mkdir -p "$WH"
    # shellcheck disable=SC2086
    "$PY" "$HERE/plan.py" tables "$WH" "$WORK/tables.jsonl" $TABLES >"$WORK/tables.tsv"
    chmod -R a+rX "$WH"
    local name meta
    while IFS=$'\t' read -r name meta; do
        pg "$PGPORT" -Atq -c "SELECT skade.register_table('b', '$name', '$meta')" >/dev/null
    done <"$WORK/tables.tsv"
}

# write_config : what bench/rest/plan.py measures, as JSON
write_config() {
    "$PY" - "$WORK" "$PGPORT" "$RPORT" "$FPORT" "$TOKEN" "$FILTERS" "$RUNS" "$RUNS_BIG" <<'PYCFG' >"$WORK/config.json"
import json, sys
work, pg, rest, fx, token, filters, runs, runs_big = sys.argv[1:]
keys = ("skade_cold", "skade_warm", "py_cold", "py_warm")
tables = [json.loads(l) for l in open(f"{work}/tables.jsonl")]
print(json.dumps({"work": work, "pg_port": int(pg), "rest_port": int(rest), "fixture_port": int(fx),
                  "token": token, "warehouse": "skade", "filters": filters.split(), "tables": tables,
                  "runs": dict(zip(keys, map(int, runs.split()))),
                  "runs_big": dict(zip(keys, map(int, runs_big.split())))}))
PYCFG
}

build_and_tools
start_servers
make_tables
write_config

# the same table through both servers: skade sees what the fixture sees
first=${TABLES%% *}
first=${first%%:*}
for srv in skade fixture; do
    if [ $srv = skade ]; then
        u=http://127.0.0.1:$RPORT/v1/skade/namespaces/b/tables/$first h="Authorization: Bearer $TOKEN"
    else
        u=http://127.0.0.1:$FPORT/v1/namespaces/b/tables/$first h="X-No: auth"
    fi
    curl -fsS -H "$h" "$u" | python3 "$HERE/fmt.py" table "$srv" | sed "s/b.warm/b.$first/"
done

cat <<EOF

Machine caveat: $(nproc) cores shared by PostgreSQL (skade's REST worker), the fixture's JVM and
pyiceberg; the manifests sit in the OS page cache for both planners. Read ratios, not
absolutes. Runs (skade cold, skade warm, pyiceberg cold, pyiceberg warm): $RUNS; tables of
50,000 files and more: $RUNS_BIG.
EOF
log "measuring"
rc=0
"$PY" "$HERE/plan.py" measure "$WORK/config.json" || rc=$?
pm=$(head -1 "$DATA/postmaster.pid")
rss=$(for p in $(pgrep -P "$pm" -f "skade rest worker" || true); do awk '/^RssAnon/ {print $2}' "/proc/$p/status"; done | paste -sd/ -)
echo "skade REST worker's private RSS (RssAnon) after the run: ${rss:-?} kB. Run time $((SECONDS - START)) s."
if grep -E 'PANIC|server process .* was terminated|TRAP' "$DATA/server.log"; then
    echo "the server log shows a crash (above)"
    rc=1
fi
exit $rc
