#!/usr/bin/env bash
# Long-mode check (not part of test/run-all.sh): skade against versitygw, a real S3 server
# implementation that verifies every request's SigV4 signature, where the CI suite
# (test/s3/run.sh) has moto behind a wrapper that checks them.
#
#   test/s3/versitygw.sh            (as root; PostgreSQL runs as postgres)
#
# 1. versitygw is built once into test/s3/.bin (SKADE_VGW_BIN; `go install` of
#    github.com/versity/versitygw/cmd/versitygw@$SKADE_VGW_VERSION, default v1.8.0, from the
#    Go module proxy: ~12 minutes on 2 cores) and reused while the binary exists.
# 2. It runs with the posix backend in a fresh directory on a free port of 127.0.0.1 with a
#    random root key; boto3 (test/s3's virtualenv) creates the bucket; a throwaway
#    PostgreSQL with skade gets that key from a credentials file only, as in run.sh.
# 3. test/s3/sigv4_botocore.py (skade's signer against botocore's), then
#    test/s3/versitygw_checks.py (the pyiceberg 0.12 virtualenv of test/interop/python):
#    create_table/update_table on s3://, pyiceberg appends, metadata byte for byte against
#    boto3 GET, files()/plan_files()/snapshots() against pyiceberg, create-only writes (58P02),
#    a wrong secret (42501, SignatureDoesNotMatch), keys with spaces, UTF-8 and + = % ~.
# 4. Prints "versitygw: N checks passed, M failed"; the exit status is the result.
#
# Hermetic: fresh directories and free ports, everything stopped and removed at the end
# (SKADE_VGW_KEEP=1 keeps the directories). PG_CONFIG picks the installation (as for make).
# SKADE_S3_VENV / SKADE_VENV: the boto3 and pyiceberg virtualenvs (defaults as in run.sh).
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
. "$SKADE_ROOT/test/s3/lib.sh"

HERE="$SKADE_ROOT/test/s3"
VGW_VERSION=${SKADE_VGW_VERSION:-v1.8.0}
BIN_DIR=${SKADE_VGW_BIN:-$HERE/.bin}
VGW=$BIN_DIR/versitygw
BUCKET=vgw-wh

# ---- 1. the server, built once
if [ ! -x "$VGW" ]; then
    command -v go >/dev/null 2>&1 || install_packages golang-go
    log "building versitygw $VGW_VERSION into $BIN_DIR (once; slow)"
    mkdir -p "$BIN_DIR"
    GOBIN=$BIN_DIR GOFLAGS=-buildvcs=false go install "github.com/versity/versitygw/cmd/versitygw@$VGW_VERSION" ||
        { echo "could not build versitygw"; exit 1; }
fi
VGW_BUILT=$(go version -m "$VGW" 2>/dev/null | awk '$1 == "mod" && $2 == "github.com/versity/versitygw" {print $3}')
log "versitygw ${VGW_BUILT:-(unknown version)} ($VGW)"

python3 -c 'import ensurepip, venv' 2>/dev/null || install_packages python3-venv
BOTO_PY=$(s3_python) || { echo "no Python with boto3"; exit 1; }
PY_VENV=${SKADE_VENV:-$SKADE_ROOT/test/interop/python/.venv}
(
    py=python3.11
    command -v "$py" >/dev/null 2>&1 || py=python3
    flock 9
    [ -x "$PY_VENV/bin/python" ] || "$py" -m venv "$PY_VENV" || exit 1
    "$PY_VENV/bin/python" -c 'import pyiceberg, psycopg2' 2>/dev/null ||
        "$PY_VENV/bin/python" -m pip install --disable-pip-version-check -q \
            -r "$SKADE_ROOT/test/interop/python/requirements.txt"
) 9>"$PY_VENV.lock" || { echo "no pyiceberg virtualenv"; exit 1; }

# ---- 2. versitygw (posix backend), the bucket, the key, PostgreSQL
VDIR=$(mktemp -d /tmp/skade-vgw.XXXXXX)
DATA=$(mktemp -d /tmp/skade-vgw-pg.XXXXXX)
VGW_PORT=$(free_port)
PORT=$(free_port)
VGW_PID=
cleanup() {
    stop_server "$DATA"
    [ -n "$VGW_PID" ] && kill "$VGW_PID" 2>/dev/null && wait "$VGW_PID" 2>/dev/null
    [ "${SKADE_VGW_KEEP:-0}" = 1 ] && { echo "kept $VDIR $DATA"; return; }
    rm -rf "$DATA" "$VDIR"
}
trap cleanup EXIT
chmod 755 "$VDIR"                # the server (user postgres) reads the credentials in there
mkdir -p "$VDIR/root"
RESULTS=$VDIR/results
: >"$RESULTS"

rand() { python3 -c "import secrets, string, sys; a = sys.argv[1]; print(''.join(secrets.choice(a) for _ in range($1)))" "$2"; }
export AWS_ACCESS_KEY_ID="VGW$(rand 17 ABCDEFGHIJKLMNOPQRSTUVWXYZ234567)"
export AWS_SECRET_ACCESS_KEY="$(rand 40 abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/)"
export AWS_REGION=us-east-1 S3_ENDPOINT="http://127.0.0.1:$VGW_PORT"

# the root key through versitygw's environment (not its command line); its access log
# (one line a request: status, method, path) goes to versitygw.log
ROOT_ACCESS_KEY_ID=$AWS_ACCESS_KEY_ID ROOT_SECRET_ACCESS_KEY=$AWS_SECRET_ACCESS_KEY \
    setsid "$VGW" --region "$AWS_REGION" --port "127.0.0.1:$VGW_PORT" posix "$VDIR/root" \
    >"$VDIR/versitygw.log" 2>&1 &
VGW_PID=$!
for _ in $(seq 1 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$VGW_PORT") 2>/dev/null && break
    sleep 0.1
done
"$BOTO_PY" "$HERE/versitygw_boto.py" mkbucket "$BUCKET" ||
    { echo "could not create the bucket"; cat "$VDIR/versitygw.log"; exit 1; }

umask_was=$(umask); umask 077
printf '[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n' \
    "$AWS_ACCESS_KEY_ID" "$AWS_SECRET_ACCESS_KEY" >"$VDIR/credentials"
# the same access key, another secret: versitygw answers SignatureDoesNotMatch
printf '[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n' \
    "$AWS_ACCESS_KEY_ID" "$(rand 40 abcdefghijklmnopqrstuvwxyz0123456789)" >"$VDIR/credentials.wrong"
umask "$umask_was"
chown "$PG_USER" "$VDIR/credentials" "$VDIR/credentials.wrong"

(
    unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN
    start_server "$DATA" "$PORT"
    cat >>"$DATA/postgresql.conf" <<CONF
skade.allowed_roots = 's3://$BUCKET'
skade.write_roots = 's3://$BUCKET/wh'
skade.s3_endpoint = '$S3_ENDPOINT'
skade.s3_region = '$AWS_REGION'
skade.s3_path_style = on
skade.s3_credentials_file = '$VDIR/credentials'
CONF
    as_pg "$PGBIN/pg_ctl" -D "$DATA" -w restart -l "$DATA/server.log" >/dev/null
) || { echo "could not start PostgreSQL"; exit 1; }
pg "$PORT" -q -c 'CREATE EXTENSION skade' postgres || exit 1
pg "$PORT" -q -f "$SKADE_ROOT/test/functions.sql" postgres || exit 1
export PGHOST=127.0.0.1 PGPORT=$PORT PGUSER=postgres PGDATABASE=postgres

# ---- 3. the checks
log "versitygw: skade's signer against botocore's (sigv4_botocore.py)"
if "$BOTO_PY" "$HERE/sigv4_botocore.py" --count 500; then
    echo "ok - sigv4_botocore.py: 500 requests signed as botocore signs them" >>"$RESULTS"
else
    echo "FAIL - sigv4_botocore.py" >>"$RESULTS"
fi

log "versitygw: skade and pyiceberg on versitygw (versitygw_checks.py)"
S3_ENDPOINT=$S3_ENDPOINT VGW_BUCKET=$BUCKET VGW_RESULTS=$RESULTS VGW_BOTO_PY=$BOTO_PY \
VGW_WRONG_CREDENTIALS=$VDIR/credentials.wrong \
    "$PY_VENV/bin/python" "$HERE/versitygw_checks.py" ||
    grep -q '^FAIL' "$RESULTS" || echo "FAIL - versitygw_checks.py did not finish" >>"$RESULTS"

# versitygw's access log: it refused nothing but the wrong secret's requests (403 on the
# 00097-/00099- objects of that check) and the create-only writes over existing names (412);
# a 400 (a malformed or unverifiable Authorization, a bad Content-MD5) would show here
log "versitygw: refused requests in its access log"
awk -F' [|] ' '$3 ~ /^[45][0-9][0-9]$/ {print $3, $6}' "$VDIR/versitygw.log" | sort | uniq -c
unexpected=$(awk -F' [|] ' '$3 ~ /^[45][0-9][0-9]$/ && !($3 == 404 && $6 == "HEAD") && !($3 == 412 && $6 == "PUT") &&
    !($3 == 403 && $7 ~ /\/metadata\/0009[79]-[^/]*[.]metadata[.]json$/)' "$VDIR/versitygw.log")
n403=$(awk -F' [|] ' '$3 == 403' "$VDIR/versitygw.log" | wc -l)
n412=$(awk -F' [|] ' '$3 == 412' "$VDIR/versitygw.log" | wc -l)
if [ -z "$unexpected" ] && [ "$n403" -ge 2 ] && [ "$n412" -eq 2 ]; then
    echo "ok - versitygw refused only the wrong secret's requests ($n403 x 403) and the create-only overwrites ($n412 x 412)" >>"$RESULTS"
else
    echo "FAIL - versitygw's refusals: $n403 x 403, $n412 x 412, unexpected: $(echo "$unexpected" | head -3)" >>"$RESULTS"
fi

# ---- 4. the summary
passed=$(grep -c '^ok' "$RESULTS")
failed=$(grep -c '^FAIL' "$RESULTS")
log "versitygw ${VGW_BUILT:-?}: results"
cat "$RESULTS"
if [ "$failed" -ne 0 ]; then
    echo "---- server log (tail)"; tail -n 30 "$DATA/server.log" | cut -c1-400
    echo "---- versitygw log (tail)"; tail -n 30 "$VDIR/versitygw.log"
fi
echo "versitygw: $passed checks passed, $failed failed"
[ "$failed" -eq 0 ]
