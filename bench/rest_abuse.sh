#!/usr/bin/env bash
# REST abuse benchmark: how much a normal client of skade's REST port suffers while other
# clients abuse it. One PostgreSQL with skade (skade.rest_workers = 2, rest_max_connections = 16,
# rest_idle_timeout = 10s), one run, four conditions one after the other against the same server:
#   (a) alone
#   (b) 2 x skade.rest_max_connections slow-body connections: headers of POST .../metrics with
#       Content-Length: 100000 (no credentials), then one body byte every 2-4 s, for the whole
#       measurement (one the server closes is opened again)
#   (c) a psql session holds iceberg_tables' row of table "hot" (SELECT ... FOR UPDATE, then
#       pg_sleep) while more REST commits to "hot" than there are REST workers are in flight
#       (set-properties, the writer's token; 8 by default)
#   (d) the S3 endpoint hung: moto behind test/s3/fault_proxy.py in hang mode, 2 x workers
#       clients loading a table whose metadata is on s3:// (they hang)
# In each, a normal client (the reader's token) sends N sequential GET /v1/config, then N
# loadTable of an unrelated file:// table, each on a fresh keep-alive connection, with a 5 s
# client timeout: a failed request (timeout, transport error, any status but 200) counts AT the
# timeout, so a stalled server shows as a huge p99. Prints p50/p99 per condition, failures,
# the ratio of each p99 to (a)'s, and the target line per condition (p99 within 3x of (a) and
# below 100 ms). The client side is bench/rest_abuse.py (Python standard library).
# Bounded: each measurement stops sending after SKADE_ABUSE_BUDGET seconds (the requests not
# sent count as failed), every abuser stops after 2 x budget + 30 s, the lock holder's pg_sleep
# ends by itself, and the server gets SKADE_ABUSE_RECOVER seconds to recover between conditions.
# Only loopback traffic; scratch under SKADE_BENCH_TMP (or /tmp), removed at the end.
#
# Usage: bash bench/rest_abuse.sh [--quick] [requests=1000]      (as root; the server runs as postgres)
#   --quick: 50 requests per measurement, 20 s budget (about 3 minutes with the setup)
# Environment: SKADE_ABUSE_WORKERS (skade.rest_workers, 2), SKADE_ABUSE_MAX_CONNECTIONS
#   (skade.rest_max_connections, 16), SKADE_ABUSE_SLOW ((b)'s connections, 2 x max connections),
#   SKADE_ABUSE_COMMITS ((c)'s commits, 8), SKADE_ABUSE_HUNG ((d)'s clients, 2 x workers, at
#   least 4), SKADE_ABUSE_TIMEOUT (client timeout, 5 s), SKADE_ABUSE_BUDGET (s per measurement,
#   60; quick 20), SKADE_ABUSE_RECOVER (s, 60), SKADE_ABUSE_CONDITIONS ("a b c d"),
#   SKADE_ABUSE_CONF (lines appended to postgresql.conf, e.g. skade.rest_lock_timeout = '1s':
#   settings the server does not know are warned about by PostgreSQL and ignored),
#   SKADE_BENCH_PORT (PostgreSQL's port; the REST port is a free one), SKADE_BENCH_TMP,
#   SKADE_BENCH_NO_BUILD=1 (use the skade already installed), SKADE_BENCH_KEEP=1 (keep the work
#   directory: server, moto and proxy logs), PG_CONFIG (the installation, as for make)
set -euo pipefail
. "$(dirname "$0")/../test/lib.sh"
. "$SKADE_ROOT/test/s3/lib.sh"

QUICK=0
if [ "${1:-}" = --quick ]; then QUICK=1; shift; fi
REQUESTS=${1:-$([ $QUICK = 1 ] && echo 50 || echo 1000)}
BUDGET=${SKADE_ABUSE_BUDGET:-$([ $QUICK = 1 ] && echo 20 || echo 60)}
WORKERS=${SKADE_ABUSE_WORKERS:-2}
MAXCONN=${SKADE_ABUSE_MAX_CONNECTIONS:-16}
SLOW=${SKADE_ABUSE_SLOW:-$((2 * MAXCONN))}
COMMITS=${SKADE_ABUSE_COMMITS:-8}
HUNG=${SKADE_ABUSE_HUNG:-$((2 * WORKERS > 4 ? 2 * WORKERS : 4))}
TIMEOUT=${SKADE_ABUSE_TIMEOUT:-5}
RECOVER=${SKADE_ABUSE_RECOVER:-60}
CONDITIONS=${SKADE_ABUSE_CONDITIONS:-a b c d}
BUCKET=skade-abuse
START=$SECONDS

[ "$(id -u)" -eq 0 ] || { echo "rest_abuse.sh: run as root (the server runs as $PG_USER)"; exit 1; }
WORK=$(mktemp -d "${SKADE_BENCH_TMP:-/tmp}/skade-bench-rest-abuse.XXXXXX")
chmod 755 "$WORK"
DATA=$WORK/pg WH=$WORK/wh
PROXY_PID=

cleanup() {
    stop_server "$DATA"
    [ -n "$PROXY_PID" ] && kill "$PROXY_PID" 2>/dev/null || true
    stop_s3 "$WORK/s3" || true
    if [ "${SKADE_BENCH_KEEP:-0}" = 1 ]; then echo "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

bench_build_and_install
PY=$(s3_python) || { echo "rest_abuse.sh: no Python with moto and boto3"; exit 1; }

# ---------------------------------------------------------------- S3: moto, the fault proxy
log "S3: moto (SigV4 checked) behind test/s3/fault_proxy.py"
start_s3 "$WORK/s3" "$BUCKET" || { echo "rest_abuse.sh: moto did not start"; exit 1; }
PROXY_PORT=$(free_port)
CTL_PORT=$(free_port)
while [ "$CTL_PORT" = "$PROXY_PORT" ]; do CTL_PORT=$(free_port); done
"$PY" "$SKADE_ROOT/test/s3/fault_proxy.py" "$PROXY_PORT" "$CTL_PORT" "$S3_ENDPOINT" >"$WORK/proxy.log" 2>&1 &
PROXY_PID=$!
for _ in $(seq 1 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$CTL_PORT") 2>/dev/null && break
    sleep 0.1
done

# ---------------------------------------------------------------- tables
# t (the normal client's loadTable) and hot ((c)'s commits) on file://; s3t on s3:// (uploaded
# straight to moto, not through the proxy: skade never reads it before (d))
log "tables: ns.t and ns.hot (file://), ns.s3t (s3://$BUCKET)"
mkdir -p "$WH"
python3 "$SKADE_ROOT/bench/rest/tables.py" "$WH" t:10 hot:10 >"$WORK/tables.txt"
python3 "$SKADE_ROOT/bench/rest/tables.py" "$WORK/stage" s3t:10 >"$WORK/s3tables.txt"
chown -R "$PG_USER" "$WH"
chmod -R a+rwX "$WH"
read -r _ S3LOCAL <"$WORK/s3tables.txt"
S3KEY=wh/ns/s3t/metadata/$(basename "$S3LOCAL")
"$PY" - "$S3LOCAL" "$BUCKET" "$S3KEY" <<'PY'
import json, os, sys
import boto3
path, bucket, key = sys.argv[1:]
md = json.load(open(path))
md["location"] = f"s3://{bucket}/wh/ns/s3t"
boto3.client("s3", endpoint_url=os.environ["S3_ENDPOINT"], region_name="us-east-1").put_object(
    Bucket=bucket, Key=key, Body=json.dumps(md, separators=(",", ":")).encode())
PY

# ---------------------------------------------------------------- the server
PGPORT=${SKADE_BENCH_PORT:-$(free_port)}
RPORT=$(free_port)
while [ "$RPORT" = "$PGPORT" ]; do RPORT=$(free_port); done
log "PostgreSQL + skade (port $PGPORT, REST port $RPORT, $WORKERS workers, $MAXCONN connections each)"
start_server "$DATA" "$PGPORT"
install -o "$PG_USER" -m 0600 "$WORK/s3/credentials" "$DATA/s3_credentials"
cat >>"$DATA/postgresql.conf" <<CONF
max_worker_processes = 32
skade.allowed_roots = '$WH, s3://$BUCKET/wh'
skade.write_roots = '$WH'
skade.rest_port = $RPORT
skade.rest_listen_addresses = '127.0.0.1'
skade.rest_database = 'postgres'
skade.rest_workers = $WORKERS
skade.rest_max_connections = $MAXCONN
skade.rest_idle_timeout = 10s
skade.s3_endpoint = 'http://127.0.0.1:$PROXY_PORT'
skade.s3_path_style = on
skade.s3_region = 'us-east-1'
skade.s3_credentials_file = '$DATA/s3_credentials'
CONF
if [ -n "${SKADE_ABUSE_CONF:-}" ]; then
    printf '# SKADE_ABUSE_CONF\n%s\n' "$SKADE_ABUSE_CONF" >>"$DATA/postgresql.conf"
fi
as_pg "$PGBIN/pg_ctl" -D "$DATA" -w restart -l "$DATA/server.log" >/dev/null ||
    { echo "rest_abuse.sh: the server did not start"; tail -n 20 "$DATA/server.log"; exit 1; }
pg "$PGPORT" -q postgres <<'SQL'
CREATE EXTENSION skade;
CREATE ROLE abuse_writer LOGIN;
CREATE ROLE abuse_reader LOGIN;
GRANT skade_writer TO abuse_writer;
GRANT skade_reader TO abuse_reader;
SELECT skade.create_namespace('ns');
SQL
while read -r name path; do
    pg "$PGPORT" -Atq -c "SELECT skade.register_table('ns', '$name', 'file:$path')" >/dev/null
done <"$WORK/tables.txt"
pg "$PGPORT" -Atq -c "SELECT skade.register_table('ns', 's3t', 's3://$BUCKET/$S3KEY')" >/dev/null
WRITER=$(pg "$PGPORT" -Atq -c "SELECT skade.rest_create_token('abuse_writer', '1 day', 'bench/rest_abuse')")
READER=$(pg "$PGPORT" -Atq -c "SELECT skade.rest_create_token('abuse_reader', '1 day', 'bench/rest_abuse')")
# the REST workers listen once the server is consistent
for _ in $(seq 1 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$RPORT") 2>/dev/null && break
    sleep 0.1
done
echo "settings:"
pg "$PGPORT" -Atq -F ' = ' -c "SELECT name, setting || coalesce(unit, '') FROM pg_settings
    WHERE name ~ '^skade\.(rest_|s3_(connect|request)_timeout|s3_max_retries)' OR name = 'max_worker_processes' ORDER BY name" |
    sed 's/^/  /'
[ -n "${SKADE_ABUSE_CONF:-}" ] && { echo "SKADE_ABUSE_CONF:"; printf '%s\n' "$SKADE_ABUSE_CONF" | sed 's/^/  /'; }
echo "skade.so: $(md5sum "$("${PG_CONFIG:-pg_config}" --pkglibdir)/skade.so" | cut -c1-12) ($(git -C "$SKADE_ROOT" rev-parse --short HEAD 2>/dev/null || echo '?'))"

# ---------------------------------------------------------------- the measurement
cat >"$WORK/config.json" <<JSON
{"rest": "http://127.0.0.1:$RPORT", "prefix": "skade", "ns": "ns", "table": "t", "hot": "hot",
 "s3table": "s3t", "reader": "$READER", "writer": "$WRITER",
 "psql": ["psql", "-X", "-h", "127.0.0.1", "-p", "$PGPORT", "-U", "postgres", "postgres"],
 "proxy_ctl": "http://127.0.0.1:$CTL_PORT", "requests": $REQUESTS, "timeout": $TIMEOUT,
 "budget": $BUDGET, "slow": $SLOW, "commits": $COMMITS, "hung": $HUNG,
 "lock_sleep": $((3 * BUDGET + 60)), "recover": $RECOVER, "conditions": "$CONDITIONS"}
JSON
log "conditions: $CONDITIONS ($REQUESTS requests per measurement; (b) $SLOW slow connections, (c) $COMMITS commits, (d) $HUNG hung loads)"
rc=0
python3 "$SKADE_ROOT/bench/rest_abuse.py" "$WORK/config.json" || rc=$?

echo
echo "server log: $(grep -c 'ERROR:' "$DATA/server.log" || true) ERROR lines; the most frequent:"
grep -o 'ERROR: .*' "$DATA/server.log" | cut -c1-160 | sort | uniq -c | sort -rn | head -5 || true
grep -E 'WARNING: .*(invalid configuration parameter|unrecognized)' "$DATA/server.log" | sort -u | head -5 || true
if grep -E 'PANIC|was terminated by signal|server process .* exited with exit code [^0]' "$DATA/server.log"; then
    echo "the server log shows a crash (above)"
    rc=1
fi
echo "Machine caveat: $(nproc) cores shared by the server, the clients, moto and other work. Run time $((SECONDS - START)) s."
exit $rc
