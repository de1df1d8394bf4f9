#!/usr/bin/env bash
# loadTable and commit throughput with per-table privileges (issue 27, part 4):
#   none:   no grants at all, the role a database-wide writer (skade_writer) -- the
#           catalog as it was before grants existed;
#   10000:  10,000 rows in skade.grants (1,000 roles of skade_user with 10 each), the role
#           a member of skade_user whose write grant on the namespace is one of them: every
#           statement goes through the row-level security policies and skade.may();
#   10000 + db-wide writer: the same 10,000 grants, the database-wide writer (what grants
#           cost a role they do not govern);
#   no policies: no grants and row-level security off on the JDBC tables, the database-wide
#           writer -- skade before 1.9: what the policies cost a role they do not restrict.
# Same server, same run, pgbench with prepared statements, 4 clients, configurations
# interleaved ROUNDS times (default 3, each round starting at another configuration), medians.  loadTable is skade.load_table(...,
# snapshots => 'none'): the pointer alone, no metadata file read -- the harshest case for
# the check, whose cost a real load (L0 lookup, JSON out) would dilute; commit is
# skade.commit_table's compare-and-swap, each client on its own table.
# Usage: bash bench/grants.sh [seconds-per-run]
set -euo pipefail
. "$(dirname "$0")/../test/lib.sh"

SECS=${1:-10}
ROUNDS=${SKADE_BENCH_ROUNDS:-3}
PORT=${SKADE_BENCH_PORT:-5467}
TMPBASE=${SKADE_BENCH_TMP:-/tmp}
DATA=$(mktemp -d "$TMPBASE/skade-bench-grants-pg.XXXXXX")
OUT=$(mktemp -d "$TMPBASE/skade-bench-grants.XXXXXX")

install_build_deps
bench_build_and_install
start_server "$DATA" "$PORT"
trap 'stop_server "$DATA"; rm -rf "$OUT" "$DATA"' EXIT

pg "$PORT" -q >/dev/null <<'SQL'
CREATE EXTENSION skade;
SELECT skade.create_namespace('bench', '{}', 'b');
SELECT skade.register_table('bench', 't' || i, 'v0-' || i, 'b') FROM generate_series(0, 15) i;
CREATE ROLE bw_db LOGIN IN ROLE skade_writer;
CREATE ROLE bw_user LOGIN IN ROLE skade_user;
-- 999 other roles with 10 grants each, bw_user with 10 (its write on bench among them)
DO $$
BEGIN
	FOR i IN 1..999 LOOP
		EXECUTE format('CREATE ROLE bw_g%s NOLOGIN IN ROLE skade_user', i);
	END LOOP;
END
$$;
SET client_min_messages = warning;
SELECT skade.grant(CASE WHEN j % 2 = 0 THEN 'read' ELSE 'write' END, 'bw_g' || i,
                   'ns' || (i % 50) || CASE WHEN j = 9 THEN '.sub' ELSE '' END,
                   CASE WHEN j < 8 THEN 't' || j END, 'b')
FROM generate_series(1, 999) i, generate_series(0, 9) j;
SELECT skade.grant('write', 'bw_user', 'bench', NULL, 'b');
SELECT skade.grant('read', 'bw_user', 'other' || j, 't' || j, 'b') FROM generate_series(1, 9) j;
CREATE TABLE public.bench_grants AS SELECT * FROM skade.grants;
SQL
echo "grants: $(pg "$PORT" -Atc 'SELECT count(*) FROM skade.grants')"

cat >"$OUT/load.sql" <<'SQL'
SELECT metadata_location FROM skade.load_table('bench', 't' || (:client_id % 16), catalog => 'b', snapshots => 'none');
SQL
cat >"$OUT/commit.sql" <<'SQL'
SELECT skade.commit_table('bench', 't' || (:client_id % 16),
    (SELECT metadata_location FROM skade.load_table('bench', 't' || (:client_id % 16), catalog => 'b', snapshots => 'none')),
    'a' || md5(random()::text), 'b');
SQL

grants_none() { pg "$PORT" -qc "DELETE FROM skade.grants" >/dev/null; }
grants_all() {
    pg "$PORT" -qc "DELETE FROM skade.grants; INSERT INTO skade.grants SELECT * FROM public.bench_grants" >/dev/null
}

# run NAME ROLE SCRIPT -> tps
run() {
    local name=$1 role=$2 script=$3 tps
    pgbench -h 127.0.0.1 -p "$PORT" -U "$role" -n -M prepared -c 4 -j 2 -T "$SECS" \
        -f "$OUT/$script.sql" postgres >"$OUT/run.log" 2>&1 || { cat "$OUT/run.log"; exit 1; }
    tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$OUT/run.log")
    echo "$tps" >>"$OUT/$script.$name.rate"
    printf '  round %s  %-8s %-26s %10s tps\n' "$round" "$script" "$name" "$tps"
}

echo
echo "loadTable and commit, 4 clients, ${SECS}s per run, $ROUNDS rounds"
rls() {
    pg "$PORT" -qc "ALTER TABLE public.iceberg_tables $1 ROW LEVEL SECURITY;
                    ALTER TABLE public.iceberg_namespace_properties $1 ROW LEVEL SECURITY" >/dev/null
}
# one configuration: its grants and policies, then the run
config() {
    case $1 in
        no_policies) grants_none; rls DISABLE; run no_policies bw_db "$2"; rls ENABLE ;;
        none) grants_none; run none bw_db "$2" ;;
        10000) grants_all; run 10000 bw_user "$2" ;;
        10000_dbwide) grants_all; run 10000_dbwide bw_db "$2" ;;
    esac
}
CONFIGS=(none 10000 10000_dbwide no_policies)
for round in $(seq 1 "$ROUNDS"); do
    for script in load commit; do
        # each round starts at another configuration: no order effect favours one
        for k in 0 1 2 3; do
            config "${CONFIGS[$(( (k + round) % 4 ))]}" "$script"
        done
    done
done
echo
echo "medians over $ROUNDS rounds (transactions per second)"
python3 - "$OUT" <<'PY'
import statistics, sys
out = sys.argv[1]
r = lambda s, n: statistics.median(float(x) for x in open(f"{out}/{s}.{n}.rate").read().split())
for s, what in (("load", "loadTable"), ("commit", "commit")):
    none = r(s, "none")
    print(f"  {what:<10} no grants (database-wide writer)          {none:10.1f}")
    print(f"  {what:<10} 10,000 grants, restricted role             {r(s, '10000'):10.1f}   ratio = {r(s, '10000') / none:.2f}x   (target >= 0.9x)")
    print(f"  {what:<10} 10,000 grants, database-wide writer        {r(s, '10000_dbwide'):10.1f}   ratio = {r(s, '10000_dbwide') / none:.2f}x")
    print(f"  {what:<10} no policies (as before 1.9), db-wide      {r(s, 'no_policies'):10.1f}   policies' cost: none / this = {none / r(s, 'no_policies'):.2f}x")
PY
