#!/usr/bin/env bash
# Access delegation through skade's REST catalog against an S3 server that enforces session
# policies: MinIO (servers.sh: built once from the Go module proxy, about 3 minutes, kept in
# $SKADE_CACHE), whose STS AssumeRole honours the inline policy skade sends and whose S3
# refuses what that policy does not allow, and credentials once they expire.  skade signs with
# MinIO's root key (skade.s3_credentials_file) and vends through MinIO's STS
# (skade.s3_sts_endpoint); no client holds an S3 key.  Phases:
#   python  test_delegation.py: pyiceberg 0.12 RestCatalog with vended credentials and with
#           remote signing (its fsspec signer); boto3 proving the scope (table A's credentials
#           cannot read B, nor write A for a reader; a restricted role's table only); the
#           credentials and signing routes, their refusals and bad input; STS down, refusing
#   java    java/DelegationTest.java: Java RESTCatalog 1.12.0 with S3FileIO, both modes
#   spark   spark_delegation.py: Spark 3.5 over REST writing and reading an s3:// table
#
#   test/delegation/run.sh [pytest args for the python phase...]   (as root)
#
# SKADE_DELEGATION_PHASES picks phases (default "python java spark").  SKADE_LONG=1 adds two
# tests of credentials of MinIO's shortest lifetime (15 minutes), about 16 minutes each:
# pyiceberg's are refused once expired and reloading the table keeps a long read going;
# Java's S3FileIO refreshes its own (VendedCredentialsProvider) through a read of one Table.  Hermetic:
# free ports of 127.0.0.1, fresh directories, stopped and removed at the end.  PG_CONFIG
# picks the installation (as for make).
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/servers.sh"

passed=0
failed=0
step() {
    log "delegation: $*"
    if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAILED: $*"; fi
}

python_phase() {
    (cd "$HERE" && "$VENV/bin/python" -m pytest -p no:cacheprovider -q test_delegation.py "$@")
}

# Java RESTCatalog 1.12.0 with S3FileIO (java/DelegationTest.java)
java_phase() {
    local args=(-B -q -Dstyle.color=never)
    [[ -n "${MAVEN_REPO_LOCAL:-}" ]] && args+=("-Dmaven.repo.local=$MAVEN_REPO_LOCAL")
    (cd "$HERE/java" && mvn "${args[@]}" test 2>&1 | sed -u 's/\x1b\[[0-9;]*m//g'; exit "${PIPESTATUS[0]}")
}

# Spark 3.5 over the REST catalog with S3FileIO and no key (spark_delegation.py); the jars
# are the Spark interop suite's, with the iceberg-aws-bundle the Java phase downloaded
spark_phase() {
    bash "$SKADE_ROOT/test/interop/spark/run.sh" --prepare || return 1
    local venv=${SKADE_SPARK_VENV:-$SKADE_ROOT/test/interop/spark/.venv}
    local repo=${MAVEN_REPO_LOCAL:-$HOME/.m2/repository}
    local bundle=$repo/org/apache/iceberg/iceberg-aws-bundle/1.12.0/iceberg-aws-bundle-1.12.0.jar
    [ -f "$bundle" ] || (cd "$HERE/java" && mvn -B -q dependency:resolve >/dev/null) || return 1
    local scratch rc=0
    scratch=$(mktemp -d /tmp/skade-deleg-spark.XXXXXX)
    (cd "$HERE" && TZ=UTC SPARK_LOCAL_IP=127.0.0.1 SKADE_SPARK_SCRATCH="$scratch" \
        SKADE_SPARK_JARS="$SKADE_ROOT/test/interop/spark/target/jars" SKADE_AWS_BUNDLE="$bundle" \
        "$venv/bin/python" -m pytest -p no:cacheprovider -q spark_delegation.py) || rc=$?
    rm -rf "$scratch"
    return $rc
}

case "${SKADE_DELEGATION_PHASES:-python java spark}" in *python*) step python_phase "$@" ;; esac
# (the long Java test reads past its credentials' expiry: MinIO's shortest lifetime)
if [ "${SKADE_LONG:-0}" = 1 ]; then
    psql -XAtq -c "ALTER SYSTEM SET skade.s3_vended_credentials_duration = '15min'" -c "SELECT pg_reload_conf()" >/dev/null
    sleep 1
fi
case "${SKADE_DELEGATION_PHASES:-python java spark}" in *java*) step java_phase ;; esac
case "${SKADE_DELEGATION_PHASES:-python java spark}" in *spark*) step spark_phase ;; esac
echo "delegation phases: $passed passed, $failed failed"
[ "$failed" -eq 0 ] || { tail -n 40 "$DATA/server.log"; exit 1; }
