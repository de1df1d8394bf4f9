#!/usr/bin/env bash
# Runs every skade test on a fresh Debian 12 machine (as root):
#   1. installs what is missing, builds and installs skade;
#   2. make installcheck as the unprivileged user postgres: pg_regress and
#      isolation tests each in their own temporary instance with skade
#      preloaded, then the TAP tests;
#   3. a bounded pass of the fuzzer (test/fuzz), against its own server;
#   4. the real-client suites (Java JdbcCatalog, pyiceberg SqlCatalog)
#      against a throwaway server, when present.
# Ends with one line "N passed, N failed" (suites) and exits non-zero on any
# failure.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

set -e
install_build_deps
build_and_install
set +e

passed=0
failed=0
failures=()
suite() {
    local name=$1; shift
    log "suite: $name"
    if "$@"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        failures+=("$name")
    fi
}

# pg_regress/isolation/TAP write into the tree: run them in a copy owned by postgres
WORK=$(mktemp -d /tmp/skade-test.XXXXXX)
tar -C "$SKADE_ROOT" --exclude=.git --exclude=.venv --exclude=target -cf - . | tar -C "$WORK" -xf -
chown -R "$PG_USER" "$WORK"
# the manifests tests copy the Java fixtures to the root they record, and
# link the pyiceberg ones' root to the copy (a link an earlier run left, as
# root, could not be replaced by postgres)
mkdir -p /tmp/skade-fixtures && chown -R "$PG_USER" /tmp/skade-fixtures
if [ -L /tmp/skade-fixture-py ]; then rm -f /tmp/skade-fixture-py; fi
installcheck() {
    if as_pg make -C "$WORK" installcheck; then
        return 0
    fi
    for d in "$WORK/regression.diffs" "$WORK/output_iso/regression.diffs"; do
        [ -f "$d" ] && { echo "---- $d"; head -c 20000 "$d"; }
    done
    for f in "$WORK"/tmp_check/log/regress_log_*; do
        [ -f "$f" ] && grep -q "not ok" "$f" && { echo "---- $f"; tail -n 60 "$f"; }
    done
    return 1
}
suite "make installcheck (regress, isolation, TAP)" installcheck

# the fuzzer: a bounded pass with a fixed seed (test/fuzz/README.md); it
# fails on a crash, a hang, an internal error, a memory blow-up or state
# changed by a failed call
python3 -c 'import ensurepip, venv' 2>/dev/null || install_packages python3-venv
suite "fuzzer (bounded pass, seed 1)" \
    "$SKADE_ROOT/test/fuzz/run.sh" --seconds "${SKADE_FUZZ_SECONDS:-150}" --seed 1

# real clients
INTEROP_PORT=${SKADE_INTEROP_PORT:-5477}
INTEROP_DATA=/tmp/skade-interop-pg
if [ -x "$SKADE_ROOT/test/interop/run.sh" ]; then
    suite "real clients (Java JdbcCatalog, pyiceberg SqlCatalog)" \
        "$SKADE_ROOT/test/interop/run.sh" "$INTEROP_PORT" "$INTEROP_DATA"
fi

rm -rf "$WORK"
log "summary"
for f in "${failures[@]}"; do echo "FAILED: $f"; done
echo "suites: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
