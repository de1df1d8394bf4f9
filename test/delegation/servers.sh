# Sourced by test/delegation/run.sh and bench/delegation.sh (after test/lib.sh): MinIO (built
# once from the Go module proxy into $SKADE_CACHE) and a throwaway PostgreSQL with skade's REST
# port, signing with MinIO's root key and vending through MinIO's STS; the roles
# deleg_writer (skade_writer), deleg_reader (skade_reader) and deleg_a_reader (skade_user) with
# tokens; the client virtualenv; the buckets lake and other.  Exports SKADE_DELEG_* (URI,
# CATALOG, S3, the tokens, ROOT_USER/ROOT_PASSWORD, DATA, PGBIN) and PGHOST/PGPORT; an EXIT
# trap stops and removes everything.  Clients get no key from the environment or a profile.
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
