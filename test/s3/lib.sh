# test/s3/lib.sh: a throwaway local S3 server for skade's tests (source it
# after test/lib.sh).
#
#   s3_python              a Python with moto and boto3 (virtualenv
#                          $SKADE_S3_VENV or test/s3/.venv, made once,
#                          under a lock)
#   start_s3 DIR BUCKET... moto on a free port of 127.0.0.1, checking SigV4
#                          signatures; DIR gets credentials (0600, owned by
#                          $PG_USER, for skade.s3_credentials_file), s3.env
#                          (S3_ENDPOINT, AWS_* of the key) and moto.pid;
#                          the buckets exist.  Exports S3_ENDPOINT and the
#                          AWS_* variables of the key.
#   stop_s3 DIR            stops it
s3_python() {
    local venv=${SKADE_S3_VENV:-$SKADE_ROOT/test/s3/.venv}
    (
        flock 9
        [ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv "$venv" >&2 || exit 1
        "$venv/bin/python" -c 'import moto, boto3' 2>/dev/null ||
            "$venv/bin/python" -m pip install --disable-pip-version-check -q \
                -r "$SKADE_ROOT/test/s3/requirements.txt" >&2
    ) 9>"$venv.lock" || return 1
    echo "$venv/bin/python"
}

start_s3() {
    local dir=$1; shift
    local py port i
    py=$(s3_python) || return 1
    mkdir -p "$dir"
    port=$(free_port)
    # (moto_server.py: moto, checking query strings' signatures as AWS does)
    INITIAL_NO_AUTH_ACTION_COUNT=3 setsid "$py" "${SKADE_S3_MOTO:-$SKADE_ROOT/test/s3/moto_server.py}" -H 127.0.0.1 -p "$port" \
        >"$dir/moto.log" 2>&1 &
    echo $! >"$dir/moto.pid"
    for i in $(seq 1 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
        sleep 0.1
    done
    "$py" "$SKADE_ROOT/test/s3/moto_setup.py" "http://127.0.0.1:$port" "$dir" "$@" || return 1
    chown "$PG_USER" "$dir/credentials"
    set -a; . "$dir/s3.env"; set +a
}

stop_s3() {
    local dir=$1
    [ -f "$dir/moto.pid" ] && kill "$(cat "$dir/moto.pid")" 2>/dev/null
    rm -f "$dir/moto.pid"
}
