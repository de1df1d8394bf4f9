#!/usr/bin/env bash
# Issue 11 §2: reads on a hot standby vs the same reads on its primary, in one
# run on this machine (a primary and a streaming standby made with
# pg_basebackup -R, both preloading skade).
#   warm load_table (snapshots => 'none' and 'all'), load_table_at and
#   table_exists over 200 tables: pgbench tps on each node, and the ratio
#   primary/standby latency (target: standby within 1.2x);
#   freshness: 200 commits on the primary; after each, the standby is polled
#   until its heap shows the new pointer, and skade's answer in the same
#   snapshot must show it too (count of polls where the heap was ahead).
# Usage: bash bench/standby.sh [seconds-per-pgbench-run=5]
# (SKADE_BENCH_FRESHNESS_COMMITS: commits of the freshness check, 200; SKADE_BENCH_NO_BUILD=1)
set -euo pipefail
. "$(dirname "$0")/../test/lib.sh"

SECS=${1:-5}
FRESH=${SKADE_BENCH_FRESHNESS_COMMITS:-200}
P1=$(free_port)
P2=$(free_port)
BASE=$(mktemp -d /tmp/skade-bench-standby.XXXXXX)
chmod 755 "$BASE"
mkdir "$BASE/standby" && chown "$PG_USER" "$BASE/standby" && chmod 700 "$BASE/standby"
PRIMARY=$BASE/primary
STANDBY=$BASE/standby
FILES=$BASE/meta
OUT=$BASE/out

install_build_deps
bench_build_and_install
mkdir -p "$FILES" "$OUT"
python3 "$SKADE_ROOT/test/data/metadata/generate.py" big 100 "$FILES/m.metadata.json"
cp "$FILES/m.metadata.json" "$FILES/n.metadata.json"
chmod -R a+rX "$FILES"
chown "$PG_USER" "$OUT"
start_server "$PRIMARY" "$P1"
echo "skade.allowed_roots = '$FILES'" >>"$PRIMARY/postgresql.conf"
as_pg "$PGBIN/pg_ctl" -D "$PRIMARY" -w restart -l "$PRIMARY/server.log" >/dev/null
trap 'stop_server "$STANDBY"; stop_server "$PRIMARY"; rm -rf "$BASE"' EXIT

pg "$P1" -q postgres <<SQL
CREATE EXTENSION skade;
SELECT skade.create_namespace('b');
SELECT count(skade.register_table('b', 't' || i, 'file://$FILES/m.metadata.json'))
  FROM generate_series(1, 200) i;
SELECT skade.rebuild_index();
SQL
SNAP=$(pg "$P1" -At -c "SELECT snapshot_id FROM skade.snapshots('b', 't1') ORDER BY snapshot_id LIMIT 1 OFFSET 50" postgres)

as_pg "$PGBIN/pg_basebackup" -h 127.0.0.1 -p "$P1" -U postgres -D "$STANDBY" -R -X stream -c fast >/dev/null
sed -i "s/^port = .*/port = $P2/" "$STANDBY/postgresql.conf"
as_pg "$PGBIN/pg_ctl" -D "$STANDBY" -l "$STANDBY/server.log" -w start >/dev/null
until [ "$(pg "$P2" -At -c "SELECT count(*) FROM iceberg_tables" postgres 2>/dev/null)" = 200 ]; do sleep 0.2; done

tps() { # port script
    echo "$2" >"$OUT/q.sql"
    pgbench -h 127.0.0.1 -p "$1" -U postgres -n -M prepared -c 2 -j 2 -T "$SECS" \
        -f "$OUT/q.sql" postgres 2>&1 | sed -n 's/^tps = \([0-9.]*\) .*/\1/p'
}
printf '\n%-28s %12s %12s %18s\n' "read (2 clients)" "primary tps" "standby tps" "standby/primary tps"
for q in \
    "load_table none|SELECT metadata_location FROM skade.load_table('b', 't' || (random() * 199 + 1)::int, snapshots => 'none');" \
    "load_table all|SELECT metadata_location FROM skade.load_table('b', 't' || (random() * 199 + 1)::int);" \
    "load_table_at|SELECT metadata_location FROM skade.load_table_at('b', 't' || (random() * 199 + 1)::int, $SNAP);" \
    "table_exists|SELECT skade.table_exists('b', 't' || (random() * 199 + 1)::int);"
do
    name=${q%%|*}
    sql=${q#*|}
    a=$(tps "$P1" "$sql")
    b=$(tps "$P2" "$sql")
    printf '%-28s %12.0f %12.0f %17.2fx\n' "$name" "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN { print b / a }')"
done

# freshness: after each primary commit, poll the standby until its heap shows
# it; in that same snapshot, skade's answer must show it too
behind=0
for i in $(seq 1 "$FRESH"); do
    if [ $((i % 2)) -eq 0 ]; then new=m; old=n; else new=n; old=m; fi
    pg "$P1" -q -c "SELECT skade.commit_table('b', 't1', 'file://$FILES/$old.metadata.json', 'file://$FILES/$new.metadata.json')" postgres >/dev/null
    while :; do
        r=$(pg "$P2" -At -c "SELECT (SELECT metadata_location FROM iceberg_tables WHERE table_namespace = 'b' AND table_name = 't1'), (SELECT metadata_location FROM skade.load_table('b', 't1', snapshots => 'none'))" postgres)
        heap=${r%%|*}
        api=${r#*|}
        if [ "$heap" = "file://$FILES/$new.metadata.json" ]; then
            [ "$api" = "$heap" ] || behind=$((behind + 1))
            break
        fi
        [ "$api" = "$heap" ] || behind=$((behind + 1))
    done
done
echo
echo "freshness: $FRESH commits; standby answers behind its own heap: $behind times (target 0)"
