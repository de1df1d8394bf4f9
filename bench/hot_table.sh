#!/usr/bin/env bash
# Issue 30 benchmark: appends to ONE hot table through REST, 1, 8 and 32 writers, for each of
#   strict    skade, Iceberg's optimistic concurrency (today: a stale append gets 409, the
#             writer reloads and tries again)
#   rebase    skade, the table property skade.rebase-appends=true (commit_rebase.c: a stale
#             fast append is rebased onto the head by the server), skade.group_commit = off
#   fixture   Iceberg's REST fixture 1.11.0 (a JdbcCatalog, test/rest/fixture.sh) on the same
#             PostgreSQL, same warehouse
#   group     rebase + group commit (skade.group_commit = on, the default; commit_group.c:
#             appends that arrive while a commit is in flight are applied by one committer
#             into one metadata file, one pointer move)
#   sql_strict, sql_rebase  the same two through SQL: SELECT skade.update_table(...) on a
#             connection per writer as the REST writers' role (loadgen "sqlappend", pgwire.go),
#             40001 counted as a 409, the next base read from skade.snapshots()
# The writers are loadgen's "append" mode (bench/rest/append.go + avro.go, Go standard
# library): per attempt a real manifest of one data file and a real manifest list over the
# base snapshot's (read from the warehouse), then the commit -- so the server reads, checks
# and rewrites real files, and the figures are the server's. Reported per run: acknowledged
# commits/s, commit p50/p99 (first attempt to success, retries included), the 409 rate
# (409 answers / commit attempts), rebased answers, errors, and the lost/duplicate check
# (bench/hot/check.py: every acknowledged snapshot in the table's parent chain once, nothing
# else in it) -- lost, dup and extra must be 0.
# Then pyiceberg writers beside them (bench/hot/pywriters.py, W processes, pyiceberg's own
# retries as it ships them): strict, rebase and rebase + group, commits/s, p50/p99 of an
# append, the 409 rate, failures, and a scan: every acknowledged row in the table once.
# Ratios (same run): group/strict, rebase/strict, group/rebase and group/fixture commits/s;
# targets (issue 30), on rebase + group: at 32 writers >= 10x strict and >= 20x fixture, 409
# rate < 1%, p99 < 100 ms; 8 pyiceberg writers >= 2x strict, 409 rate < 1%.
#
# Usage: bash bench/hot_table.sh [seconds-per-run=10]
# Environment: SKADE_BENCH_WRITERS ("1 8 32"), SKADE_BENCH_PY_WRITERS (8; 0: no pyiceberg
#   phase), SKADE_BENCH_FIXTURE (1; 0: no fixture), SKADE_BENCH_REST_WORKERS (skade.rest_workers,
#   4), SKADE_BENCH_REST_MAX_WORKERS (skade.rest_max_workers, 16: the commits of one table run
#   on at most half of them, so a group holds at most that many; every mode runs with it), SKADE_BENCH_NO_BUILD=1 (use the skade installed), SKADE_BENCH_KEEP=1 (keep the work
#   directory), SKADE_VENV (pyiceberg's virtualenv, default test/interop/python/.venv)
set -euo pipefail
. "$(dirname "$0")/../test/lib.sh"

SECS=${1:-10}
WRITERS=${SKADE_BENCH_WRITERS:-1 8 32}
PYW=${SKADE_BENCH_PY_WRITERS:-8}
FIXTURE=${SKADE_BENCH_FIXTURE:-1}
WORKERS=${SKADE_BENCH_REST_WORKERS:-4}
MAX_WORKERS=${SKADE_BENCH_REST_MAX_WORKERS:-16}
HERE=$SKADE_ROOT/bench
START=$SECONDS

WORK=$(mktemp -d /tmp/skade-bench-hot.XXXXXX)
chmod 755 "$WORK"
DATA=$WORK/pg WH=$WORK/wh FX=$WORK/fixture RES=$WORK/results.tsv
: >"$RES"

if [ "${SKADE_BENCH_NO_BUILD:-0}" != 1 ]; then
    install_build_deps
    build_and_install
fi
build_loadgen "$WORK/loadgen"
LG=$WORK/loadgen
if [ "$FIXTURE" = 1 ]; then
    command -v java >/dev/null && command -v mvn >/dev/null || install_packages default-jdk-headless maven
fi

PGPORT=$(free_port)
RPORT=$(free_port)
while [ "$RPORT" = "$PGPORT" ]; do RPORT=$(free_port); done
FPORT=$(free_port)
while [ "$FPORT" = "$PGPORT" ] || [ "$FPORT" = "$RPORT" ]; do FPORT=$(free_port); done
mkdir -p "$WH/b"
chown -R "$PG_USER" "$WH"

log "PostgreSQL + skade (REST port $RPORT, $WORKERS workers)${FIXTURE:+; fixture on $FPORT}"
start_server "$DATA" "$PGPORT"
cat >>"$DATA/postgresql.conf" <<CONF
skade.allowed_roots = '$WH'
skade.write_roots = '$WH'
skade.rest_port = $RPORT
skade.rest_workers = $WORKERS
skade.rest_max_workers = $MAX_WORKERS
skade.rest_listen_addresses = '127.0.0.1'
CONF
as_pg "$PGBIN/pg_ctl" -D "$DATA" -w restart -l "$DATA/server.log" >/dev/null
cleanup() {
    [ "$FIXTURE" = 1 ] && { bash "$SKADE_ROOT/test/rest/fixture.sh" stop "$FX" || true; }
    stop_server "$DATA"
    if [ "${SKADE_BENCH_KEEP:-0}" = 1 ]; then echo "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

pg "$PGPORT" -q >/dev/null <<SQL
CREATE EXTENSION skade;
CREATE ROLE bench LOGIN;
GRANT skade_writer TO bench;
SELECT skade.create_namespace('b', jsonb_build_object('location', '$WH/b'), 'skade');
SQL
TOKEN=$(pg "$PGPORT" -Atq -c "SELECT skade.rest_create_token('bench')")
if [ "$FIXTURE" = 1 ]; then
    bash "$SKADE_ROOT/test/rest/fixture.sh" start "$FX" "$FPORT" \
        "jdbc:postgresql://127.0.0.1:$PGPORT/postgres" postgres "$WH" skade
fi
SK=http://127.0.0.1:$RPORT/v1/skade/namespaces/b/tables
FU=http://127.0.0.1:$FPORT/v1/namespaces/b/tables
AUTH="Authorization: Bearer $TOKEN"

# table NAME REBASE : a fresh empty v2 table (one long column), rebase-appends REBASE
table() {
    pg "$PGPORT" -Atq -c "SELECT skade.create_table('b', '$1',
        '{\"type\": \"struct\", \"fields\": [{\"id\": 1, \"name\": \"id\", \"required\": true, \"type\": \"long\"}]}',
        properties => jsonb_build_object('skade.rebase-appends', '$2'),
        location => '$WH/b/$1', catalog => 'skade')" >/dev/null
    chmod -R a+rwX "$WH/b/$1"
}
# group_commit on|off : skade.group_commit for the next run (a reload; the REST workers read it
# at their next request, well within the pause)
group_commit() {
    pg "$PGPORT" -Atq -c "ALTER SYSTEM SET skade.group_commit = $1" -c "SELECT pg_reload_conf()" >/dev/null
    sleep 1
}
location() {
    pg "$PGPORT" -Atq -c "SELECT metadata_location FROM iceberg_tables WHERE catalog_name = 'skade' AND table_namespace = 'b' AND table_name = '$1'"
}

cat <<EOF

Machine caveat: $(nproc) cores shared by PostgreSQL (skade's $WORKERS REST workers), the fixture's
JVM and the writers; read ratios, not absolutes. ${SECS}s per run, fresh table per run.
EOF

# ---------------------------------------------------------------- light writers
n=0
for w in $WRITERS; do
    for mode in strict rebase group fixture sql_strict sql_rebase; do
        [ "$mode" = fixture ] && [ "$FIXTURE" != 1 ] && continue
        n=$((n + 1))
        name=${mode}_$w
        case $mode in
            strict) table "$name" false; u=$SK/$name h=$AUTH ;;
            rebase) table "$name" true; group_commit off; u=$SK/$name h=$AUTH ;;
            group) table "$name" true; group_commit on; u=$SK/$name h=$AUTH ;;
            fixture) table "$name" false; u=$FU/$name h="X-No: auth" ;;
            sql_strict) table "$name" false ;;
            sql_rebase) table "$name" true ;;
        esac
        log "$w writers, $mode"
        ids=$((5000000000000000000 + n * 10000000000000))
        if [ "${mode#sql_}" != "$mode" ]; then
            out=$("$LG" sqlappend -url "127.0.0.1:$PGPORT" -table "b.$name" -catalog skade -role bench \
                -dir "$WH/b/$name/metadata" -c "$w" -d "$SECS" -id-base "$ids" -acked "$WORK/acked_$name")
        else
            out=$("$LG" append -url "$u" -H "$h" -H "Accept-Encoding: gzip" -c "$w" -d "$SECS" \
                -id-base "$ids" -acked "$WORK/acked_$name")
        fi
        chk=$(python3 "$HERE/hot/check.py" "$(location "$name")" "$WORK/acked_$name")
        printf '%s\t%s\t%s\t%s\n' "$mode" "$w" "$out" "$chk" >>"$RES"
        python3 - "$mode" "$w" "$out" "$chk" <<'PY'
import json, sys
mode, w, o, c = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), json.loads(sys.argv[4])
print(f"  {mode:8} {w:>3} writers: {o['commits_per_s']:8.1f} commits/s  p50 {o['p50_ms']:7.1f} ms  p99 {o['p99_ms']:7.1f} ms"
      f"  409 rate {o['conflict_rate']*100:5.1f}%  rebased {o['rebased']}  errors {o['errors']}"
      f"  lost {c['lost']} dup {c['dup']} extra {c['extra']}" + (f"  first error: {o['first_error']}" if o.get('first_error') else ""))
PY
    done
done

# ---------------------------------------------------------------- pyiceberg writers
if [ "$PYW" != 0 ]; then
    venv=${SKADE_VENV:-$SKADE_ROOT/test/interop/python/.venv}
    if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import pyiceberg' 2>/dev/null; then
        python3 -m venv "$venv"
        "$venv/bin/python" -m pip install --disable-pip-version-check -q -r "$SKADE_ROOT/test/interop/python/requirements.txt"
    fi
    for mode in strict rebase group; do
        name=py_$mode
        case $mode in
            strict) table "$name" false ;;
            rebase) table "$name" true; group_commit off ;;
            group) table "$name" true; group_commit on ;;
        esac
        log "$PYW pyiceberg writers, $mode"
        out=$("$venv/bin/python" "$HERE/hot/pywriters.py" "http://127.0.0.1:$RPORT" skade "$TOKEN" b "$name" "$PYW" "$SECS" 2>>"$WORK/pywriters.log")
        printf '%s\t%s\t%s\t%s\n' "py_$mode" "$PYW" "$out" '{}' >>"$RES"
        python3 - "$mode" "$PYW" "$out" <<'PY'
import json, sys
mode, w, o = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
print(f"  pyiceberg {mode:8} {w:>3} writers: {o['commits_per_s']:7.2f} commits/s  p50 {o['p50_ms']:7.1f} ms  p99 {o['p99_ms']:7.1f} ms"
      f"  409 rate {o['conflict_rate']*100:5.1f}%  failures {o['failures']}  lost {o['lost']} dup {o['dup']} extra {o['extra']}")
PY
    done
fi

# ---------------------------------------------------------------- report
log "results"
python3 "$HERE/hot/report.py" "$RES"
echo "Run time $((SECONDS - START)) s."
