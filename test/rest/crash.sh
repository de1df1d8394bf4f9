#!/usr/bin/env bash
# Durability of REST commits under group commit (issue 30, commit_group.c): 32 light writers
# (bench/rest's loadgen "append": real manifests and manifest lists per attempt) append to one
# table with skade.rebase-appends=true and skade.group_commit on; mid-run a busy REST worker is
# killed with SIGKILL (the postmaster resets every process and recovers), later the server
# stops with -m immediate and starts again; the writers go on throughout. Afterwards
# (bench/hot/check.py on the table's metadata file): every acknowledged append is in the
# table's history exactly once (lost 0, dup 0), nothing is half-applied (no snapshot off the
# history, every manifest list there), skade's own reads agree with the file, and commits went
# on after each crash. An append whose answer a crash cut off may have committed: such
# "extra" snapshots are allowed, at most the writers per crash. Before the first crash,
# commits were grouped (skade_commits_grouped_total > 0), so the crashes met groups.
#
#   test/rest/crash.sh            (as root; the server runs as postgres; PG_CONFIG picks it)
# Environment: SKADE_CRASH_WRITERS (32), SKADE_CRASH_SECONDS (the writers' run, 16).
# Hermetic: its own scratch directory and free ports; exit status 0 when every check holds.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"

WRITERS=${SKADE_CRASH_WRITERS:-32}
SECS=${SKADE_CRASH_SECONDS:-16}
WORK=$(mktemp -d /tmp/skade-crash.XXXXXX)
chmod 755 "$WORK"
DATA=$WORK/pg WH=$WORK/wh
mkdir -p "$WH/c"
chown -R "$PG_USER" "$WH"
cleanup() {
    [ -n "${LGPID:-}" ] && kill "$LGPID" 2>/dev/null
    stop_server "$DATA"
    rm -rf "$WORK"
}
trap cleanup EXIT

build_loadgen "$WORK/loadgen" || exit 1
PGPORT=$(free_port)
RPORT=$(free_port)
while [ "$RPORT" = "$PGPORT" ]; do RPORT=$(free_port); done
start_server "$DATA" "$PGPORT"
cat >>"$DATA/postgresql.conf" <<CONF
skade.allowed_roots = '$WH'
skade.write_roots = '$WH'
skade.rest_port = $RPORT
skade.rest_workers = 4
skade.rest_max_workers = 16
skade.rest_listen_addresses = '127.0.0.1'
skade.group_commit = on
CONF
as_pg "$PGBIN/pg_ctl" -D "$DATA" -w restart -l "$DATA/server.log" >/dev/null || exit 1
pg "$PGPORT" -q >/dev/null <<SQL || exit 1
CREATE EXTENSION skade;
CREATE ROLE crash_writer LOGIN;
GRANT skade_writer TO crash_writer;
SELECT skade.create_namespace('c', jsonb_build_object('location', '$WH/c'), 'skade');
SELECT skade.create_table('c', 'hot',
    '{"type": "struct", "fields": [{"id": 1, "name": "id", "required": true, "type": "long"}]}',
    properties => '{"skade.rebase-appends": "true"}', location => '$WH/c/hot', catalog => 'skade');
SQL
chmod -R a+rwX "$WH/c/hot"
TOKEN=$(pg "$PGPORT" -Atq -c "SELECT skade.rest_create_token('crash_writer')")
q() { pg "$PGPORT" -Atq -c "$1" 2>/dev/null; }
metric() { curl -s "http://127.0.0.1:$RPORT/metrics" | awk -v m="$1" '$1 == m {print $2}'; }
snapshots() { q "SELECT count(*) FROM skade.snapshots('c', 'hot', 'skade')"; }
up() {  # the server answers SQL and REST again (within 60 s)
    local i
    for i in $(seq 1 120); do
        [ -n "$(metric skade_commits_total)" ] && q "SELECT 1" >/dev/null && return 0
        sleep 0.5
    done
    return 1
}
fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAILED: $1"; fail=1; fi; }

log "$WRITERS writers for ${SECS}s; a SIGKILL, then an immediate shutdown, under them"
"$WORK/loadgen" append -url "http://127.0.0.1:$RPORT/v1/skade/namespaces/c/tables/hot" \
    -H "Authorization: Bearer $TOKEN" -c "$WRITERS" -d "$SECS" -id-base 7000000000000000000 \
    -acked "$WORK/acked" >"$WORK/out.json" 2>"$WORK/loadgen.err" &
LGPID=$!
sleep 4
grouped=$(metric skade_commits_grouped_total)
# a REST worker busy with a commit (the committer of a group first), looked for a few times:
# a sample can fall between two requests
victim=
for i in $(seq 1 50); do
    victim=$(q "SELECT pid FROM pg_stat_activity WHERE backend_type = 'skade rest worker' AND state = 'active'
                 AND query LIKE 'POST %' ORDER BY coalesce(wait_event_type, '') = 'Extension', pid LIMIT 1")
    [ -n "$victim" ] && break
    sleep 0.1
done
before_kill=$(snapshots)
echo "before the SIGKILL: $before_kill snapshots, ${grouped:-?} commits grouped; killing REST worker ${victim:-none}"
[ -n "$victim" ] && kill -9 "$victim"
up || { echo "FAILED: the server did not come back after the SIGKILL"; fail=1; }
sleep 4
before_stop=$(snapshots)
echo "before the immediate shutdown: $before_stop snapshots"
as_pg "$PGBIN/pg_ctl" -D "$DATA" -m immediate -w stop >/dev/null
as_pg "$PGBIN/pg_ctl" -D "$DATA" -l "$DATA/server.log" -w start >/dev/null
up || { echo "FAILED: the server did not come back after the immediate shutdown"; fail=1; }
wait "$LGPID"
LGPID=
out=$(cat "$WORK/out.json")
location=$(q "SELECT metadata_location FROM iceberg_tables WHERE catalog_name = 'skade' AND table_namespace = 'c' AND table_name = 'hot'")
chk=$(python3 "$SKADE_ROOT/bench/hot/check.py" "$location" "$WORK/acked")
final=$(snapshots)
echo "writers: $out"
echo "check:   $chk"
field() { python3 -c 'import json, sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }

check "the victim was a REST worker busy with a commit" '[ -n "$victim" ]'
check "commits were grouped before the first crash" '[ "${grouped:-0}" -gt 0 ]'
check "every acknowledged append is in the history (lost 0)" '[ "$(field "$chk" lost)" = 0 ]'
check "no append acknowledged twice (dup 0)" '[ "$(field "$chk" dup)" = 0 ]'
check "nothing half-applied: no snapshot off the history" '[ "$(field "$chk" orphans)" = 0 ]'
check "nothing half-applied: every manifest list of the history is there" '[ "$(field "$chk" missing_lists)" = 0 ]'
check "unanswered commits at most the writers per crash (extra $(field "$chk" extra))" \
    '[ "$(field "$chk" extra)" -le $((2 * WRITERS)) ]'
check "skade reads the snapshots the file holds ($final)" '[ "$final" = "$(field "$chk" chain)" ]'
check "commits went on after the SIGKILL ($before_kill -> $before_stop) and the restart (-> $final)" \
    '[ "$before_stop" -gt "$before_kill" ] && [ "$final" -gt "$before_stop" ]'
check "the writers were answered (acked $(field "$chk" acked))" '[ "$(field "$chk" acked)" -gt 0 ]'
if [ $fail != 0 ]; then
    echo "---- loadgen stderr"; tail -n 20 "$WORK/loadgen.err"
    echo "---- server log"; grep -E "ERROR|PANIC|TRAP|terminated" "$DATA/server.log" | tail -n 30
fi
exit $fail
