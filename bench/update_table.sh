#!/usr/bin/env bash
# Issue 12: skade.update_table() appending one snapshot (add-snapshot +
# set-snapshot-ref main, with an assert-ref-snapshot-id requirement), end to
# end in one backend (lock, read the base through L0, apply, write the next
# metadata file with fsync, CAS, commit-log trigger), on tables of 1,000 and
# 10,000 snapshots; beside it, in the same run, the cost of only reading and
# parsing that metadata to jsonb, and of only writing it (write_table_metadata).
# Then, same run, the same property change committed by skade.update_table()
# and by a Java JdbcCatalog client (refresh = read and parse the metadata,
# write the next file, compare-and-swap; test/interop/java CommitBenchTest).
# Then, same run, remove-snapshots (one old snapshot per call) on the same tables by
# update_table's C path (N calls) and by its PL/pgSQL engine (skade.update_fast_path = off;
# 3 calls, on the 1,000-snapshot table only: its removal rebuilds the snapshot log with a
# subquery per entry, and one call on 10,000 snapshots ran for minutes).
# Prints the average latency of each over N calls, and Java / skade.
# Usage: bash bench/update_table.sh [calls=20]
set -euo pipefail
. "$(dirname "$0")/../test/lib.sh"

N=${1:-20}
PORT=$(free_port)
BASE=$(mktemp -d /tmp/skade-bench-update.XXXXXX)
chmod 755 "$BASE"
DATA=$BASE/pg
WH=$BASE/wh
mkdir -p "$WH" && chown "$PG_USER" "$WH"
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

avg() { # file -> average ms of its \timing lines (the first line of write.sql is setup)
    pg "$PORT" -q -f "$1" postgres 2>&1 | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' |
        awk '{ s += $1; n++ } END { printf "%.1f", s / n }'
}

command -v mvn >/dev/null 2>&1 && command -v javac >/dev/null 2>&1 || install_packages openjdk-17-jdk-headless maven
RESULTS=$BASE/results
: >"$RESULTS"
printf '\n%-12s %18s %18s %18s\n' "snapshots" "update_table ms" "read+parse ms" "write only ms"
for S in 1000 10000; do
    pg "$PORT" -q postgres >/dev/null <<SQL
SELECT skade.create_namespace('b$S', '{"location": "$WH/b$S"}');
SELECT skade.create_table('b$S', 't', '{"fields": [{"id": 1, "name": "id", "required": true, "type": "long"}]}');
SELECT skade.update_table('b$S', 't', '[]', jsonb_build_array(jsonb_build_object('action', 'set-properties',
  'updates', jsonb_build_object('bench', 'yes'))));
SELECT skade.write_table_metadata('$WH/b$S/t/metadata/00009-0f0e0d0c-0b0a-0908-0706-050403020100.metadata.json',
  jsonb_set(jsonb_set(jsonb_set(m, '{snapshots}', (SELECT jsonb_agg(jsonb_strip_nulls(jsonb_build_object(
      'snapshot-id', i, 'parent-snapshot-id', CASE WHEN i > 1 THEN i - 1 END, 'sequence-number', i,
      'timestamp-ms', 1700000000000 + i, 'manifest-list', '$WH/b$S/t/metadata/snap-' || i || '.avro',
      'summary', jsonb_build_object('operation', 'append', 'added-records', '10', 'total-records', (i * 10)::text),
      'schema-id', 0))) FROM generate_series(1, $S) i)),
    '{snapshot-log}', (SELECT jsonb_agg(jsonb_build_object('timestamp-ms', 1700000000000 + i, 'snapshot-id', i))
                       FROM generate_series(1, $S) i)),
    '{refs}', jsonb_build_object('main', jsonb_build_object('snapshot-id', $S, 'type', 'branch')))
  || jsonb_build_object('current-snapshot-id', $S, 'last-sequence-number', $S))
FROM (SELECT metadata::jsonb AS m FROM skade.load_table('b$S', 't')) x;
SELECT skade.commit_table('b$S', 't', (SELECT metadata_location FROM skade.load_table('b$S', 't', 'none')),
  '$WH/b$S/t/metadata/00009-0f0e0d0c-0b0a-0908-0706-050403020100.metadata.json');
SQL
    upd=$BASE/upd.sql read=$BASE/read.sql write=$BASE/write.sql
    echo '\timing on' >"$upd"
    echo '\timing on' >"$read"
    printf '%s\n' "SELECT metadata::jsonb AS m FROM skade.load_table('b$S', 't') \\gset" '\timing on' >"$write"
    for i in $(seq 1 "$N"); do
        id=$((S + i)) prev=$((S + i - 1))
        cat >>"$upd" <<SQL
SELECT skade.update_table('b$S', 't', '[{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": $prev}]',
  '[{"action": "add-snapshot", "snapshot": {"snapshot-id": $id, "parent-snapshot-id": $prev, "sequence-number": $id,
     "timestamp-ms": $((1700000000000 + S + i)), "manifest-list": "$WH/x.avro", "summary": {"operation": "append"}, "schema-id": 0}},
    {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": $id, "type": "branch"}]') IS NOT NULL;
SQL
        echo "SELECT length((metadata::jsonb)::text) FROM skade.load_table('b$S', 't');" >>"$read"
        printf "SELECT skade.write_table_metadata('%s/w%s/%05d-0f0e0d0c-0b0a-0908-0706-050403020100.metadata.json', :'m') IS NOT NULL;\n" \
            "$WH" "$S" "$i" >>"$write"
    done
    props=$BASE/props.sql
    echo '\timing on' >"$props"
    for i in $(seq 1 "$N"); do
        echo "SELECT skade.update_table('b$S', 't', '[]', '[{\"action\": \"set-properties\", \"updates\": {\"skade$i\": \"x\"}}]') IS NOT NULL;" >>"$props"
    done
    rmc=$BASE/rmc.sql rmp=$BASE/rmp.sql
    echo '\timing on' >"$rmc"
    printf '%s\n' 'SET skade.update_fast_path = off;' '\timing on' >"$rmp"
    for i in $(seq 1 "$N"); do
        echo "SELECT skade.update_table('b$S', 't', '[]', '[{\"action\": \"remove-snapshots\", \"snapshot-ids\": [$i]}]') IS NOT NULL;" >>"$rmc"
    done
    for i in $( [ "$S" -le 1000 ] && echo 1 2 3 ); do
        echo "SELECT skade.update_table('b$S', 't', '[]', '[{\"action\": \"remove-snapshots\", \"snapshot-ids\": [$((N + i))]}]') IS NOT NULL;" >>"$rmp"
    done
    chown "$PG_USER" "$upd" "$read" "$write" "$props" "$rmc" "$rmp"
    a=$(avg "$upd")
    printf '%-12s %18s %18s %18s\n' "$S" "$a" "$(avg "$read")" "$(avg "$write")"
    echo "b$S.t $(avg "$props") $a" >>"$RESULTS"
    echo "b$S.t $(avg "$rmc") $( [ "$S" -le 1000 ] && avg "$rmp" || echo n/a)" >>"$BASE/remove"
done
printf '\n%-12s %24s %24s %14s\n' "table" "remove-snapshots C ms" "remove-snapshots PL/pgSQL" "PL/pgSQL/C"
while read -r t c p; do
    printf '%-12s %24s %24s %14s\n' "$t" "$c" "$p" "$(awk -v a="$c" -v b="$p" 'BEGIN { if (b + 0 > 0) printf "%.2fx", b / a; else print "n/a" }')"
done <"$BASE/remove"

# the same property change: skade.update_table() vs a Java JdbcCatalog commit
if ! (cd "$SKADE_ROOT/test/interop/java" &&
    PGHOST=127.0.0.1 PGPORT=$PORT PGUSER=postgres PGDATABASE=postgres SKADE_WAREHOUSE=$WH \
    SKADE_BENCH_TABLES=b1000.t,b10000.t SKADE_BENCH_CALLS=$N \
    mvn -B -q -Dstyle.color=never -Dgroups=bench test) >"$BASE/mvn.log" 2>&1; then
    echo "the Java side failed:"; tail -n 30 "$BASE/mvn.log"
fi
# (Surefire writes the test's output to its report directory)
cat "$SKADE_ROOT/test/interop/java/target/surefire-reports/skade.interop.CommitBenchTest-output.txt" \
    >>"$BASE/mvn.log" 2>/dev/null || true
sed -n 's/.*JAVA_COMMIT_MS \(.*\)/\1/p' "$BASE/mvn.log" >"$BASE/java"
ratio() { awk -v a="$1" -v b="${2:-0}" 'BEGIN { if (b > 0) printf "%.2f", b / a; else print "n/a" }'; }
printf '\n%-12s %22s %22s %12s %16s %12s\n' "table" "skade set-property ms" "Java commit ms" "Java/skade" \
    "skade append ms" "Java/append"
while read -r t ms app; do
    j=$(awk -v t="$t" '$1 == t { print $2 }' "$BASE/java")
    printf '%-12s %22s %22s %11sx %16s %11sx\n' "$t" "$ms" "${j:-n/a}" "$(ratio "$ms" "$j")" \
        "$app" "$(ratio "$app" "$j")"
done <"$RESULTS"
