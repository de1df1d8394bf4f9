# test/s3/suite_lib.sh: what test/s3/equivalence.sh and test/faults/s3.sh
# share (source it after test/lib.sh and test/s3/lib.sh).
#
#   s3_tools_python          s3_python (moto, boto3) with test/fuzz's
#                            requirements too (fastavro, cramjam, psycopg2)
#   start_s3_server DIR PORT ENDPOINT CREDENTIALS ALLOWED WRITE [EXTRA_CONF]
#                            start_server DIR PORT, then skade's S3 settings:
#                            path-style requests to ENDPOINT signed with the
#                            key of CREDENTIALS (copied into DIR, 0600,
#                            owned by the server's user), skade.allowed_roots
#                            ALLOWED and skade.write_roots WRITE, and the
#                            lines of EXTRA_CONF; restarted, with the
#                            extension created
s3_tools_python() {
    local py
    py=$(s3_python) || return 1
    (
        flock 9
        "$py" -c 'import fastavro, cramjam, psycopg2' 2>/dev/null ||
            "$py" -m pip install --disable-pip-version-check -q \
                -r "$SKADE_ROOT/test/fuzz/requirements.txt" >&2
    ) 9>"$SKADE_ROOT/test/s3/.venv.lock" || return 1
    echo "$py"
}

start_s3_server() {
    local dir=$1 port=$2 endpoint=$3 creds=$4 allowed=$5 write=$6 extra=${7:-}
    start_server "$dir" "$port" || return 1
    install -o "$PG_USER" -m 0600 "$creds" "$dir/s3_credentials"
    cat >>"$dir/postgresql.conf" <<CONF
skade.allowed_roots = '$allowed'
skade.write_roots = '$write'
skade.s3_endpoint = '$endpoint'
skade.s3_path_style = on
skade.s3_region = 'us-east-1'
skade.s3_credentials_file = '$dir/s3_credentials'
$extra
CONF
    as_pg "$PGBIN/pg_ctl" -D "$dir" -w restart -l "$dir/server.log" >/dev/null || return 1
    pg "$port" -qAt -c 'CREATE EXTENSION skade' postgres >/dev/null
}
