#!/usr/bin/env bash
# Why the stree64 probe loop alone is slower on PostgreSQL 18 than on 15 (bench/majors.sh):
# the server or the compiler flags? PGXS compiles skade with the server's own CFLAGS, and
# Debian's 15 adds flags (-g -fno-omit-frame-pointer -fstack-protector-strong) the wheel's 18
# lacks. This measures skade_test.stree64_bench (1M keys, 1M random lookups, ns per lookup: binary
# search, scalar, AVX2, batched) on three builds, one server at a time, rounds alternating:
#   15             skade built for 15 (its flags)
#   MAJOR          skade built for MAJOR (its flags)
#   MAJOR+15flags  skade built for MAJOR with COPT = the flags 15 has and MAJOR has not
# If the third row matches the first, the difference is code generation, not the server.
#   bash bench/probe_cflags.sh [MAJOR=18] [rounds=3]
# Installs into both majors (the last install is MAJOR's own build again); SKADE_PG15_CONFIG /
# test/pg_majors.sh pick them. Prints one line per round and build, then the medians.
set -euo pipefail
. "$(dirname "$0")/../test/lib.sh"

OTHER=${1:-18}
ROUNDS=${2:-3}
PG15=$(bash "$SKADE_ROOT/test/pg_majors.sh" 15)
PGO=$(bash "$SKADE_ROOT/test/pg_majors.sh" "$OTHER")
WORK=$(mktemp -d /tmp/skade-bench-cflags.XXXXXX)
chmod 755 "$WORK"
PORT=$(free_port)
cleanup() {
    for b in 15 "$OTHER" "$OTHER+15flags"; do
        [ -d "$WORK/pg-$b" ] && PGBIN=$(cat "$WORK/bin-$b") stop_server "$WORK/pg-$b"
    done
    rm -rf "$WORK"
}
trap cleanup EXIT

# the flags of 15's CFLAGS that MAJOR's lack
EXTRA=$(python3 - "$("$PG15" --cflags)" "$("$PGO" --cflags)" <<'PY'
import sys
a, b = sys.argv[1].split(), set(sys.argv[2].split())
print(" ".join(dict.fromkeys(f for f in a if f not in b and not f.startswith("-W"))))
PY
)
echo "15:        $("$PG15" --version), CFLAGS $("$PG15" --cflags | grep -o -- ' -[gOf][^ ]*' | tr -d '\n')"
echo "$OTHER:        $("$PGO" --version), CFLAGS $("$PGO" --cflags | grep -o -- ' -[gOf][^ ]*' | tr -d '\n')"
echo "$OTHER+15flags: COPT=\"$EXTRA\""

# build NAME PG_CONFIG [COPT] : skade.so of that build kept as $WORK/NAME.so
build() {
    local name=$1 pgc=$2 copt=${3:-} tree=$WORK/src-$1
    mkdir -p "$tree"
    git -C "$SKADE_ROOT" archive HEAD | tar -C "$tree" -x
    make -C "$tree" -s -j2 PG_CONFIG="$pgc" COPT="$copt" >/dev/null
    flock /tmp/skade-install.lock make -C "$tree" -s PG_CONFIG="$pgc" COPT="$copt" install >/dev/null
    cp "$tree/skade.so" "$WORK/$name.so"
    "$pgc" --bindir >"$WORK/bin-$name"
    "$pgc" --pkglibdir >"$WORK/lib-$name"
}
log "building skade three times"
install_build_deps
build 15 "$PG15"
build "$OTHER+15flags" "$PGO" "$EXTRA"
build "$OTHER" "$PGO"

# measure NAME : its .so installed, a fresh server, one stree64_bench line
measure() {
    local name=$1
    PGBIN=$(cat "$WORK/bin-$name")
    install -m 755 "$WORK/$name.so" "$(cat "$WORK/lib-$name")/skade.so"
    start_server "$WORK/pg-$name" "$PORT"
    pg "$PORT" -qc 'CREATE EXTENSION skade' postgres >/dev/null
    pg "$PORT" -q -f "$SKADE_ROOT/test/functions.sql" postgres >/dev/null
    printf '%s\t%s\n' "$name" "$(pg "$PORT" -Atc "SELECT string_agg(coalesce(round(ns_per_lookup::numeric, 1)::text, 'nan'), ' '
        ORDER BY method) FROM skade_test.stree64_bench(1000000, 1000000)" postgres)" | tee -a "$WORK/results.tsv"
    stop_server "$WORK/pg-$name"
}
log "stree64_bench, ns per lookup: $(echo 'binary search, stree64 avx2, stree64 batched, stree64 scalar')"
for r in $(seq "$ROUNDS"); do
    if [ $((r % 2)) = 1 ]; then order="15 $OTHER $OTHER+15flags"; else order="$OTHER+15flags $OTHER 15"; fi
    for b in $order; do measure "$b"; done
done
install -m 755 "$WORK/$OTHER.so" "$(cat "$WORK/lib-$OTHER")/skade.so"
python3 - "$WORK/results.tsv" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, vals = line.rstrip("\n").split("\t")
    rows.setdefault(name, []).append([float(v) for v in vals.split()])
names = ["binary search", "stree64 avx2", "stree64 batched", "stree64 scalar"]
print()
print("| build | " + " | ".join(names) + " |")
print("|---|" + "---:|" * len(names))
first = None
for name, runs in rows.items():
    med = [statistics.median(r[i] for r in runs) for i in range(len(names))]
    first = first or med
    print(f"| {name} | " + " | ".join(f"{m:.1f} ns ({m / f:.2f}x)" for m, f in zip(med, first)) + " |")
PY
