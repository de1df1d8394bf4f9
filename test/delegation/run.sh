#!/usr/bin/env bash
# Access delegation through skade's REST catalog against an S3 server that enforces session
# policies: MinIO (built once from the Go module proxy, about 3 minutes, kept in
# $SKADE_CACHE), whose STS AssumeRole honours the inline policy skade sends and whose S3
# refuses what that policy does not allow and credentials once they expire.  A throwaway
# PostgreSQL signs with MinIO's root key (skade.s3_credentials_file) and vends through MinIO's
# STS (skade.s3_sts_endpoint); the clients hold no S3 key at all.  Then pytest
# (test_delegation.py): pyiceberg's RestCatalog with vended credentials and with remote
# signing, boto3 proving the scope (table A's credentials cannot read B or, for a reader,
# write A), the signing route's refusals and bad input, STS down / refusing.
#
#   test/delegation/run.sh [pytest args...]          (as root; the servers run as postgres)
#
# SKADE_LONG=1 adds the expiry test: credentials of MinIO's shortest lifetime (15 minutes)
# are refused once expired, and a refresh keeps a long read going (about 16 minutes).
# Hermetic: free ports of 127.0.0.1, fresh directories, stopped and removed at the end.
# PG_CONFIG picks the installation (as for make).
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
HERE="$SKADE_ROOT/test/delegation"
MINIO_VERSION=v0.0.0-20260212201848-7aac2a2c5b7c
CACHE=${SKADE_CACHE:-/tmp/skade-cache}

# the MinIO binary, built once per version (under a lock: parallel runs share it)
minio_binary() {
    local dir=$CACHE/minio-$MINIO_VERSION
    mkdir -p "$dir"
    (
        flock 9
        [ -x "$dir/minio" ] && exit 0
        command -v go >/dev/null || install_packages golang-go
        log "delegation: building MinIO $MINIO_VERSION from the Go module proxy (once)" >&2
        GOBIN="$dir" GOFLAGS=-buildvcs=false go install "github.com/minio/minio@$MINIO_VERSION" >&2
    ) 9>"$dir.lock" || return 1
    echo "$dir/minio"
}

MINIO=$(minio_binary) || { echo "could not build MinIO"; exit 1; }
DATA=$(mktemp -d /tmp/skade-deleg-pg.XXXXXX)
MINIO_DIR=$(mktemp -d /tmp/skade-deleg-minio.XXXXXX)
PORT=$(free_port)
REST_PORT=$(free_port)
S3_PORT=$(free_port)
CONSOLE_PORT=$(free_port)
ROOT_USER=skademinio
ROOT_PASSWORD=$(python3 -c 'import secrets; print(secrets.token_hex(16))')
MINIO_PID=

cleanup() {
    stop_server "$DATA"
    [ -n "$MINIO_PID" ] && kill "$MINIO_PID" 2>/dev/null && wait "$MINIO_PID" 2>/dev/null
    rm -rf "$DATA" "$MINIO_DIR"
}
trap cleanup EXIT

chown "$PG_USER" "$MINIO_DIR"
MINIO_ROOT_USER=$ROOT_USER MINIO_ROOT_PASSWORD=$ROOT_PASSWORD MINIO_BROWSER=off \
    runuser -u "$PG_USER" -- "$MINIO" server "$MINIO_DIR/data" --quiet \
    --address "127.0.0.1:$S3_PORT" --console-address "127.0.0.1:$CONSOLE_PORT" >"$MINIO_DIR/minio.log" 2>&1 &
MINIO_PID=$!

(
    start_server "$DATA" "$PORT"
    printf '[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n' "$ROOT_USER" "$ROOT_PASSWORD" \
        >"$DATA/s3_credentials"
    chown "$PG_USER" "$DATA/s3_credentials" && chmod 600 "$DATA/s3_credentials"
    cat >>"$DATA/postgresql.conf" <<CONF
skade.allowed_roots = 's3://lake/wh, s3://other'
skade.write_roots = 's3://lake/wh'
skade.warehouse = 's3://lake/wh'
skade.s3_endpoint = 'http://127.0.0.1:$S3_PORT'
skade.s3_path_style = on
skade.s3_region = 'us-east-1'
skade.s3_credentials_file = '$DATA/s3_credentials'
skade.s3_sts_endpoint = 'http://127.0.0.1:$S3_PORT'
skade.s3_sts_role_arn = 'arn:minio:iam:::role/skade-vended'
skade.s3_vended_credentials_duration = '${SKADE_DELEGATION_DURATION:-1h}'
skade.rest_port = $REST_PORT
skade.rest_listen_addresses = '127.0.0.1'
skade.rest_workers = 2
skade.rest_database = 'postgres'
max_worker_processes = 32
CONF
    as_pg "$PGBIN/pg_ctl" -D "$DATA" -w restart -l "$DATA/server.log" >/dev/null
) || { echo "could not start PostgreSQL"; cat "$DATA/server.log" 2>/dev/null; exit 1; }

pg "$PORT" -q postgres <<'SQL' || { echo "could not set up the roles"; exit 1; }
CREATE EXTENSION skade;
CREATE ROLE deleg_writer LOGIN;
CREATE ROLE deleg_reader LOGIN;
CREATE ROLE deleg_a_reader LOGIN;
GRANT skade_writer TO deleg_writer;
GRANT skade_reader TO deleg_reader;
GRANT skade_user TO deleg_a_reader;
SQL
token() { pg "$PORT" -qAt -c "SELECT skade.rest_create_token('$1', '1 day', 'test/delegation')" postgres; }
export SKADE_DELEG_WRITER_TOKEN SKADE_DELEG_READER_TOKEN SKADE_DELEG_A_READER_TOKEN
SKADE_DELEG_WRITER_TOKEN=$(token deleg_writer) && SKADE_DELEG_READER_TOKEN=$(token deleg_reader) &&
    SKADE_DELEG_A_READER_TOKEN=$(token deleg_a_reader) || { echo "could not make the tokens"; exit 1; }

# the clients hold no key: none from the environment or a profile either
unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_PROFILE AWS_DEFAULT_PROFILE
export AWS_SHARED_CREDENTIALS_FILE=$DATA/no-such-file AWS_CONFIG_FILE=$DATA/no-such-file
export AWS_EC2_METADATA_DISABLED=true
# pyiceberg 0.12's signer is unregistered and registered again on the s3fs client that fsspec
# shares between threads, each time a thread opens the FileIO: a request sent meanwhile by
# another thread goes out unsigned (and is refused).  One worker thread keeps its requests
# in sequence.
export PYICEBERG_MAX_WORKERS=1
export PGHOST=127.0.0.1 PGPORT=$PORT PGUSER=postgres PGDATABASE=postgres
export SKADE_DELEG_URI="http://127.0.0.1:$REST_PORT" SKADE_DELEG_CATALOG=deleg
export SKADE_DELEG_S3="http://127.0.0.1:$S3_PORT" SKADE_DELEG_ROOT_USER=$ROOT_USER
export SKADE_DELEG_ROOT_PASSWORD=$ROOT_PASSWORD SKADE_DELEG_DATA=$DATA SKADE_DELEG_PGBIN=$PGBIN

python3 - "$REST_PORT" "$S3_PORT" <<'PY' || { echo "the servers do not answer"; tail -n 20 "$DATA/server.log" "$MINIO_DIR/minio.log"; exit 1; }
import socket, sys, time
for port in sys.argv[1:]:
    for _ in range(300):
        try:
            socket.create_connection(("127.0.0.1", int(port)), timeout=1).close()
            break
        except OSError:
            time.sleep(0.1)
    else:
        sys.exit(1)
PY

passed=0
failed=0
step() {
    log "delegation: $*"
    if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAILED: $*"; fi
}

VENV=${SKADE_DELEGATION_VENV:-$HERE/.venv}
py=python3.11
command -v "$py" >/dev/null 2>&1 || py=python3
(
    flock 9
    [ -x "$VENV/bin/python" ] || "$py" -m venv "$VENV" || exit 1
    "$VENV/bin/python" -m pip install --disable-pip-version-check -q -r "$HERE/requirements.txt"
) 9>"$VENV.lock" || { echo "could not install the clients"; exit 1; }
# the buckets, and objects no vended credential or signature may reach
"$VENV/bin/python" - <<'PY' || { echo "could not make the buckets"; exit 1; }
import os, boto3
from botocore.config import Config
s3 = boto3.client("s3", endpoint_url=os.environ["SKADE_DELEG_S3"], region_name="us-east-1",
                  aws_access_key_id=os.environ["SKADE_DELEG_ROOT_USER"],
                  aws_secret_access_key=os.environ["SKADE_DELEG_ROOT_PASSWORD"],
                  config=Config(s3={"addressing_style": "path"}))
for b in ("lake", "other"):
    s3.create_bucket(Bucket=b)
s3.put_object(Bucket="other", Key="secret/x", Body=b"not yours")
s3.put_object(Bucket="lake", Key="wh/outside", Body=b"not yours")
PY

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
case "${SKADE_DELEGATION_PHASES:-python java spark}" in *java*) step java_phase ;; esac
case "${SKADE_DELEGATION_PHASES:-python java spark}" in *spark*) step spark_phase ;; esac
echo "delegation phases: $passed passed, $failed failed"
[ "$failed" -eq 0 ] || { tail -n 40 "$DATA/server.log"; exit 1; }
