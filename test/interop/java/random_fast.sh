#!/usr/bin/env bash
# UpdateTableRandomTest (Java's TableMetadata.Builder as the reference for skade.update_table)
# at N sequences, twice on one throwaway server: with update_table's C fast path on (the
# default) and off (skade.update_fast_path = off: every commit runs the PL/pgSQL engine). Both
# runs must have 0 mismatches, and the same outcome for every sequence (a refusal: the same
# SQLSTATE and message, whichever engine raised it). The interop suite runs the harness at 1,000 sequences with the
# fast path on; this is the long form (issue 30 part 3: the C path checked against the
# reference on and off).
#
#   test/interop/java/random_fast.sh [sequences=10000] [seed=1]     (as root)
set -euo pipefail
. "$(dirname "$0")/../../lib.sh"
N=${1:-10000}
SEED=${2:-1}
HERE="$SKADE_ROOT/test/interop/java"
command -v mvn >/dev/null 2>&1 && command -v javac >/dev/null 2>&1 || install_packages openjdk-17-jdk-headless maven
DATA=$(mktemp -d /tmp/skade-random-pg.XXXXXX)
WAREHOUSE=$(mktemp -d /tmp/skade-random-wh.XXXXXX)
WORK=$(mktemp -d /tmp/skade-random-mvn.XXXXXX)
chmod 755 "$WAREHOUSE" && chown "$PG_USER" "$WAREHOUSE"
PORT=$(free_port)
trap 'stop_server "$DATA"; rm -rf "$DATA" "$WAREHOUSE" "$WORK"' EXIT
start_server "$DATA" "$PORT"
echo "skade.allowed_roots = '$WAREHOUSE'" >>"$DATA/postgresql.conf"
echo "skade.write_roots = '$WAREHOUSE'" >>"$DATA/postgresql.conf"
as_pg "$PGBIN/pg_ctl" -D "$DATA" -w restart -l "$DATA/server.log" >/dev/null
pg "$PORT" -q -c 'CREATE EXTENSION skade' postgres
export PGHOST=127.0.0.1 PGPORT=$PORT PGUSER=postgres PGDATABASE=postgres SKADE_WAREHOUSE=$WAREHOUSE
umask 000
cp -a "$HERE/." "$WORK/" && rm -rf "$WORK/target"
cd "$WORK"
rc=0
for fast in on off; do
    pg "$PORT" -q -c "ALTER SYSTEM SET skade.update_fast_path = $fast" -c 'SELECT pg_reload_conf()' postgres >/dev/null
    sleep 1
    log "UpdateTableRandomTest: $N sequences, seed $SEED, skade.update_fast_path = $fast"
    start=$(date +%s)
    if mvn -B -q -Dstyle.color=never -Pmain -Dtest=UpdateTableRandomTest -Dsurefire.failIfNoSpecifiedTests=false \
        "-Dskade.sequences=$N" "-Dskade.seed=$SEED" "-Dskade.outcomes=$WORK/outcomes-$fast.txt" "-Dskade.left=$WORK/left-$fast.txt" test 2>&1 | sed -u 's/\x1b\[[0-9;]*m//g' | grep -v "^#" | grep -v "^  " | tail -20; then :; fi
    out=$(ls target/surefire-reports/*UpdateTableRandomTest-output.txt 2>/dev/null | head -1 || true)
    [ -n "$out" ] && cp "$out" "$WORK/output-$fast.txt"
    [ -n "$out" ] && grep -E "^UpdateTableRandomTest: (seed .* sequences:|engines:|the 12)|^    +[0-9]+  v|mismatch|^  [a-z].*  [0-9]+ +[0-9]+ +[0-9]+ +[0-9]+$" "$out" | head -80
    f=$(ls target/surefire-reports/TEST-*UpdateTableRandomTest.xml 2>/dev/null | head -1 || true)
    if [ -z "$f" ] || grep -q '<failure\|<error' "$f"; then
        echo "fast path $fast: FAILED"; rc=1
    else
        echo "fast path $fast: passed ($(( $(date +%s) - start )) s)"
    fi
done
# (SKADE_RANDOM_OUTCOMES=DIR keeps both outcome files there, the harness's output of each run
# (a mismatch's sequence in full) and left-on.txt: the sequences the C path left to PL/pgSQL)
[ -n "${SKADE_RANDOM_OUTCOMES:-}" ] && mkdir -p "$SKADE_RANDOM_OUTCOMES" && cp "$WORK"/outcomes-*.txt "$WORK"/output-*.txt "$WORK"/left-on.txt "$SKADE_RANDOM_OUTCOMES/" 2>/dev/null || true
# the same sequences, the same outcomes: every refusal with the same SQLSTATE and words
# whichever engine made it
if [ -s "$WORK/outcomes-on.txt" ] && [ -s "$WORK/outcomes-off.txt" ]; then
    if diff "$WORK/outcomes-off.txt" "$WORK/outcomes-on.txt" >"$WORK/outcomes.diff"; then
        echo "outcomes: the C path on and off agree on all $(wc -l <"$WORK/outcomes-on.txt") sequences ($(grep -c ' refused ' "$WORK/outcomes-on.txt") refusals: SQLSTATE and message), e.g.:"
        grep ' refused ' "$WORK/outcomes-on.txt" | awk '!seen[$3]++' | head -4
    else
        echo "outcomes DIFFER between the C path off (<) and on (>):"; head -40 "$WORK/outcomes.diff"; rc=1
    fi
else
    echo "outcomes: missing"; rc=1
fi
exit $rc
