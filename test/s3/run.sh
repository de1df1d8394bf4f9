#!/usr/bin/env bash
# Real clients on object storage: pyiceberg SqlCatalog (pyarrow's S3 FileIO) and Java
# JdbcCatalog (S3FileIO) write Iceberg tables to a local S3 server (moto, checking SigV4
# signatures), and skade, configured for that server, reads them; tables skade's metadata
# writer made on S3 are read back by both clients; a bucket outside skade.allowed_roots and
# an endpoint outside skade.s3_allowed_endpoints are refused without a request.
#
#   test/s3/run.sh [all|python|java] [pytest args...]      (as root; the server runs as postgres)
#
# Hermetic: moto and PostgreSQL on free ports of 127.0.0.1, fresh directories, all stopped at
# the end. PG_CONFIG picks the installation (as for make). Installs what the clients need
# (JDK 17 + Maven, python3-venv) when missing. SKADE_VENV: the pyiceberg virtualenv (default
# test/interop/python/.venv, shared with the interop suite under its lock).
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
. "$SKADE_ROOT/test/s3/lib.sh"

what=${1:-all}
[ $# -gt 0 ] && shift
case "$what" in all|python|java) ;; *) echo "usage: $0 [all|python|java] [pytest args...]" >&2; exit 2 ;; esac
HERE="$SKADE_ROOT/test/s3"

if [ "$what" != python ]; then
    command -v mvn >/dev/null 2>&1 && command -v javac >/dev/null 2>&1 || install_packages openjdk-17-jdk-headless maven
fi
python3 -c 'import ensurepip, venv' 2>/dev/null || install_packages python3-venv

BUCKET=skade-wh          # under skade.allowed_roots; skade.write_roots is s3://$BUCKET/wh
OUTSIDE=skade-outside    # clients write there, skade may not read it
S3DIR=$(mktemp -d /tmp/skade-s3.XXXXXX)
DATA=$(mktemp -d /tmp/skade-s3-pg.XXXXXX)
PORT=$(free_port)
ALT_PORT=$(free_port)    # a second allowed endpoint: a relay the Python tests bind

cleanup() {
    stop_server "$DATA"
    stop_s3 "$S3DIR"
    rm -rf "$DATA" "$S3DIR"
}
trap cleanup EXIT

# the server (user postgres) reads the credentials file in there
chmod 755 "$S3DIR"
start_s3 "$S3DIR" "$BUCKET" "$OUTSIDE" || { echo "could not start the S3 server"; cat "$S3DIR/moto.log"; exit 1; }
MOTO_PORT=${S3_ENDPOINT##*:}

# the server takes its key from the credentials file only: not from this environment
(
    unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN
    start_server "$DATA" "$PORT"
    cat >>"$DATA/postgresql.conf" <<CONF
skade.allowed_roots = 's3://$BUCKET'
skade.write_roots = 's3://$BUCKET/wh'
skade.s3_endpoint = '$S3_ENDPOINT'
skade.s3_region = '$AWS_REGION'
skade.s3_path_style = on
skade.s3_credentials_file = '$S3DIR/credentials'
skade.s3_allowed_endpoints = 'http://localhost:$MOTO_PORT,http://127.0.0.1:$ALT_PORT'
CONF
    as_pg "$PGBIN/pg_ctl" -D "$DATA" -w restart -l "$DATA/server.log" >/dev/null
) || { echo "could not start PostgreSQL"; exit 1; }
pg "$PORT" -q -c 'CREATE EXTENSION skade' postgres || exit 1

export PGHOST=127.0.0.1 PGPORT=$PORT PGUSER=postgres PGDATABASE=postgres
export SKADE_S3_BUCKET=$BUCKET SKADE_S3_OUTSIDE_BUCKET=$OUTSIDE SKADE_S3_DIR=$S3DIR SKADE_S3_ALT_PORT=$ALT_PORT

passed=0
failed=0
step() {
    log "s3: $*"
    if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAILED: $*"; fi
}

python_suite() {
    local venv=${SKADE_VENV:-$SKADE_ROOT/test/interop/python/.venv}
    local py=python3.11
    command -v "$py" >/dev/null 2>&1 || py=python3
    (
        flock 9
        [ -x "$venv/bin/python" ] || "$py" -m venv "$venv" || exit 1
        "$venv/bin/python" -m pip install --disable-pip-version-check -q \
            -r "$SKADE_ROOT/test/interop/python/requirements.txt"
    ) 9>"$venv.lock" || return 1
    (cd "$HERE/python" && "$venv/bin/python" -m pytest "$@")
}

# python first: its modules reset the extension; the Java tests use names of their own
[ "$what" = java ] || step python_suite "$@"
[ "$what" = python ] || step "$SKADE_ROOT/test/interop/java/run.sh" s3

if [ "$failed" -ne 0 ]; then
    echo "---- server log (tail)"; tail -n 40 "$DATA/server.log"
fi
echo "s3 phases: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
