#!/usr/bin/env bash
# bench/majors.sh: the same benchmarks on PostgreSQL 15 and on another major (18 by default),
# one after the other in one run, side by side: each metric's value on both and the ratio
# other/15 (for times: above 1 is slower on the other major). The majors come from
# test/pg_majors.sh (15: Debian's, or SKADE_PG15_CONFIG, e.g. a private copy).
#   bash bench/majors.sh [--quick] [MAJOR=18] [BENCHMARKS=metadata_load,time_travel,commit_throughput,plan_files,rest]
# Each major gets its own bench/report run (built and installed into that major, its report in
# bench/out/majors-<stamp>/<major>/); then the table. Metrics a major did not produce show "-".
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
QUICK=()
if [ "${1:-}" = --quick ]; then QUICK=(--quick); shift; fi
OTHER=${1:-18}
ONLY=${2:-metadata_load,time_travel,commit_throughput,plan_files,rest}
OUT=$HERE/out/majors-$(date +%Y-%m-%d-%H%M%S)
mkdir -p "$OUT"
for major in 15 "$OTHER"; do
    pgc=$(bash "$HERE/../test/pg_majors.sh" "$major")
    echo "== PostgreSQL $major ($pgc)"
    PG_CONFIG=$pgc "$HERE/report" "${QUICK[@]}" --only "$ONLY" --out "$OUT/$major" --json "$OUT/$major.json" ||
        echo "(some benchmark of PostgreSQL $major failed: see $OUT/$major)"
done
python3 - "$OUT/15.json" "$OUT/$OTHER.json" "$OTHER" <<'PY'
import json, re, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
other = sys.argv[3]
# a metric's name may carry when it was read ("t=156 s"): not part of what it is
key = lambda m: (m["bench"], re.sub(r"t=\d+ s", "t=* s", m["name"]))
bm = {key(m): m for m in b["metrics"]}
print(f"15: {a['pg']}   {other}: {b['pg']}   commit {a['commit']}")
print(f"| benchmark | metric | 15 | {other} | {other}/15 |")
print("|---|---|---:|---:|---:|")
def f(v, u):
    return "-" if v is None else (f"{v:,.3g} {u}".strip())
for m in a["metrics"]:
    o = bm.get(key(m))
    r = "-"
    if o and m["value"] and o["value"] is not None:
        r = f"{o['value'] / m['value']:.2f}x"
    print(f"| {m['bench']} | {m['name']} | {f(m['value'], m['unit'])} | {f(o['value'] if o else None, m['unit'])} | {r} |")
PY
