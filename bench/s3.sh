#!/usr/bin/env bash
# Issue 13 benchmark: skade on S3-hosted tables (a local moto S3 server that
# checks SigV4 signatures) vs, in the same run, the raw GET of the same
# objects (curl), pyiceberg 0.12 reading the same objects from the same server
# (pyarrow S3 FileIO, endpoint override), and skade on file:// (the same
# tables on local disk).  See bench/README.md.
#   load_table (snapshots all) of generated metadata with 1,000 and 10,000
#       snapshots: cold (a fresh backend after skade.cache_reset()) and warm
#   plan_files of a table of 10,000 data files in 100 manifests: cold with
#       skade.s3_max_concurrency 16 and 1, and warm, vs pyiceberg's
#       scan().plan_files() cold (manifest cache cleared, table reloaded) and warm;
#       cold again through a relay that adds S3's first-byte latency
#       (SKADE_BENCH_S3_DELAY_MS, default 20) to each request
# Usage: bash bench/s3.sh [runs=9] [manifests=100] [files-per-manifest=100]
# (SKADE_BENCH_NO_BUILD=1 skips the rebuild; SKADE_VENV names pyiceberg's virtualenv;
# SKADE_BENCH_KEEP=1 leaves the servers running and the files in place)
set -euo pipefail
. "$(dirname "$0")/../test/lib.sh"
. "$SKADE_ROOT/test/s3/lib.sh"

RUNS=${1:-9}
MANIFESTS=${2:-100}
PER=${3:-100}
DELAY_MS=${SKADE_BENCH_S3_DELAY_MS:-20}
BUCKET=skade-bench
WORK=$(mktemp -d /tmp/skade-bench-s3.XXXXXX)
chmod 755 "$WORK"
DATA=$WORK/pg
S3DIR=$WORK/s3
STAGE=$WORK/stage   # the objects to upload, as STAGE/BUCKET/key
FILES=$WORK/files   # the same tables on local disk (file://)
mkdir -p "$S3DIR" "$STAGE" "$FILES"
chmod 755 "$S3DIR"

RELAY_PID=
PORT=$(free_port)
S3_ENDPOINT=
cleanup() {
    if [ -n "${SKADE_BENCH_KEEP:-}" ]; then
        echo "kept: $WORK (server port $PORT, moto $S3_ENDPOINT, relay pid $RELAY_PID)" >&2
        return
    fi
    [ -n "$RELAY_PID" ] && kill "$RELAY_PID" 2>/dev/null
    stop_server "$DATA"
    stop_s3 "$S3DIR"
    rm -rf "$WORK"
}
trap cleanup EXIT

install_build_deps
install_packages curl
[ -n "${SKADE_BENCH_NO_BUILD:-}" ] || build_and_install >&2

log "starting moto (S3) and PostgreSQL"
start_s3 "$S3DIR" "$BUCKET" >&2 || { cat "$S3DIR/moto.log"; exit 1; }
(
    # the server takes its key from the credentials file only
    unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN
    start_server "$DATA" "$PORT"
    cat >>"$DATA/postgresql.conf" <<CONF
skade.allowed_roots = 's3://$BUCKET, $FILES'
skade.s3_endpoint = '$S3_ENDPOINT'
skade.s3_region = '$AWS_REGION'
skade.s3_path_style = on
skade.s3_credentials_file = '$S3DIR/credentials'
skade.metadata_cache_size = 256MB
CONF
    as_pg "$PGBIN/pg_ctl" -D "$DATA" -w restart -l "$DATA/server.log" >/dev/null
)
pg "$PORT" -q -c 'CREATE EXTENSION skade' postgres

# pyiceberg from the interop suite's virtualenv
VENV=${SKADE_VENV:-$SKADE_ROOT/test/interop/python/.venv}
python3 -c 'import ensurepip, venv' 2>/dev/null || install_packages python3-venv
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install --disable-pip-version-check -q -r "$SKADE_ROOT/test/interop/python/requirements.txt"
PY=$VENV/bin/python
S3PY=$(s3_python)

log "generating the tables"
# metadata of N snapshots (test/data/metadata/generate.py, as bench/metadata_load.sh):
# its recorded paths moved under s3://BUCKET/wh/snap/sN; the very same bytes
# are the file:// copy
load_cfg=""
pg "$PORT" -q -c "SELECT skade.create_namespace('b')" postgres >/dev/null
# a tiny file:// table: each cold run's backend first loads it (PostgreSQL's
# catalog caches warm), then the caches are emptied
mkdir -p "$FILES/tiny"
python3 "$SKADE_ROOT/test/data/metadata/generate.py" big 1 "$FILES/tiny/00000-tiny.metadata.json"
pg "$PORT" -qAt -c "SELECT skade.register_table('b', 'tiny', 'file://$FILES/tiny/00000-tiny.metadata.json')" \
    postgres >/dev/null
for n in 1000 10000; do
    name=00000-$(cat /proc/sys/kernel/random/uuid).metadata.json
    mkdir -p "$STAGE/$BUCKET/wh/snap/s$n/metadata" "$FILES/s$n"
    python3 "$SKADE_ROOT/test/data/metadata/generate.py" big "$n" "$WORK/gen.json"
    sed "s|file:/warehouse/db/events|s3://$BUCKET/wh/snap/s$n|g" "$WORK/gen.json" \
        >"$STAGE/$BUCKET/wh/snap/s$n/metadata/$name"
    cp "$STAGE/$BUCKET/wh/snap/s$n/metadata/$name" "$FILES/s$n/$name"
    bytes=$(stat -c %s "$FILES/s$n/$name")
    pg "$PORT" -qAt postgres >/dev/null <<SQL
SELECT skade.register_table('b', 's$n', 's3://$BUCKET/wh/snap/s$n/metadata/$name');
SELECT skade.register_table('b', 'f$n', 'file://$FILES/s$n/$name');
SQL
    load_cfg+="${load_cfg:+,}{\"snapshots\": $n, \"bytes\": $bytes, \"s3\": \"s3://$BUCKET/wh/snap/s$n/metadata/$name\", \"s3_table\": \"s$n\", \"file_table\": \"f$n\"}"
done
rm -f "$WORK/gen.json"
# the table to plan: written by pyiceberg's manifest writers, once under
# s3:// and once under file:// (same content; only the recorded paths differ)
"$PY" "$SKADE_ROOT/bench/s3.py" plan-table "$STAGE/$BUCKET/wh/plan/t" "s3://$BUCKET/wh/plan/t" \
    "$MANIFESTS" "$PER" >"$WORK/plan-s3.json"
"$PY" "$SKADE_ROOT/bench/s3.py" plan-table "$FILES/plan/t" "file://$FILES/plan/t" \
    "$MANIFESTS" "$PER" >"$WORK/plan-file.json"
chmod -R a+rX "$FILES"
"$S3PY" "$SKADE_ROOT/bench/s3.py" upload "$STAGE" "$BUCKET"
pg "$PORT" -qAt postgres >/dev/null <<SQL
SELECT skade.create_namespace('p');
SELECT skade.register_table('p', 't', (SELECT pg_read_file('$WORK/plan-s3.json')::json ->> 'metadata'));
SELECT skade.register_table('p', 'f', (SELECT pg_read_file('$WORK/plan-file.json')::json ->> 'metadata'));
SQL

# S3 answers small GETs after 10-30 ms, moto at once: a relay in front of it
# adds that latency, so that what concurrent fetches save shows
python3 "$SKADE_ROOT/bench/s3.py" relay "$S3DIR/relay.port" "${S3_ENDPOINT##*:}" "$DELAY_MS" \
    >"$S3DIR/relay.log" 2>&1 &
RELAY_PID=$!
for i in $(seq 1 50); do [ -s "$S3DIR/relay.port" ] && break; sleep 0.1; done

cat >"$WORK/config.json" <<JSON
{"runs": $RUNS, "moto": "$("$S3PY" -c 'import moto; print(moto.__version__)')",
 "load": [$load_cfg],
 "plan": {"s3_info": "$WORK/plan-s3.json"},
 "relay": {"endpoint": "http://127.0.0.1:$(cat "$S3DIR/relay.port")", "delay_ms": $DELAY_MS}}
JSON

log "measuring (median of $RUNS runs each)"
PGHOST=127.0.0.1 PGPORT=$PORT PGUSER=postgres PGDATABASE=postgres \
    "$PY" "$SKADE_ROOT/bench/s3.py" measure "$WORK/config.json"
