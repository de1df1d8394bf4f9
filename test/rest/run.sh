#!/usr/bin/env bash
# skade's Iceberg REST catalog against real and plain HTTP clients: a throwaway server with
# skade.rest_port on a free port and 2 REST workers, a scratch warehouse (file://), a writer
# and a reader role with Bearer tokens; then pyiceberg's RestCatalog (full lifecycle, each
# commit cross-checked through skade's SQL functions), the protocol (error model, statuses,
# ETag/304, names), robustness (slowloris, many connections, a killed worker) and mixed
# writers (REST, JDBC-style UPDATEs, skade.commit_table) on one hot table; last a clean
# shutdown with REST connections open.
#
#   test/rest/run.sh [all|python|java|spark|secure] [pytest args...]   (as root; the server runs as postgres)
#
# all (default): the pytest suite, Iceberg's conformance tests (Java), Java RESTCatalog
# 1.12.0 and 1.10.1 lifecycles (java-clients/), Spark 3.5 over the REST catalog (spark/),
# then the shutdown check; python: the pytest suite only; java: the two Java client
# lifecycles only; spark: the Spark phase only; secure: Java RESTCatalog and Spark over https
# with an OAuth2 client credential (secure_phase.py) only.
# Hermetic: PostgreSQL on free ports of 127.0.0.1 (SQL and REST), fresh directories, stopped
# and removed at the end; the exit status is the result. PG_CONFIG picks the installation (as
# for make). SKADE_VENV: the pyiceberg virtualenv (default test/interop/python/.venv, shared
# with the interop suite under its lock).
#
# The tests get: SKADE_REST_URI (http://127.0.0.1:PORT), SKADE_REST_CATALOG (the prefix, a
# JDBC catalog name), SKADE_REST_WRITER_TOKEN / SKADE_REST_READER_TOKEN (roles
# SKADE_REST_WRITER_ROLE / SKADE_REST_READER_ROLE), SKADE_REST_PG_DSN and PGHOST/PGPORT/
# PGUSER/PGDATABASE (the superuser, for cross-checks), SKADE_WAREHOUSE, SKADE_REST_DATA (the
# data directory, for pg_ctl) and SKADE_REST_PGBIN.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"

what=${1:-all}
[ $# -gt 0 ] && shift
case "$what" in all|python|conformance|java|spark|secure) ;; *) echo "usage: $0 [all|python|conformance|java|spark|secure] [pytest args...]" >&2; exit 2 ;; esac
HERE="$SKADE_ROOT/test/rest"

python3 -c 'import ensurepip, venv' 2>/dev/null || install_packages python3-venv

DATA=$(mktemp -d /tmp/skade-rest-pg.XXXXXX)
WAREHOUSE=$(mktemp -d /tmp/skade-rest-wh.XXXXXX)
PORT=$(free_port)
REST_PORT=$(free_port)
while [ "$REST_PORT" = "$PORT" ]; do REST_PORT=$(free_port); done
CATALOG=rest_cat
# an S3 endpoint that accepts connections and never answers (test_rest_stuck.py serves it)
HUNG_S3_PORT=$(free_port)
while [ "$HUNG_S3_PORT" = "$PORT" ] || [ "$HUNG_S3_PORT" = "$REST_PORT" ]; do HUNG_S3_PORT=$(free_port); done

cleanup() {
    stop_server "$DATA"
    rm -rf "$DATA" "$WAREHOUSE"
}
trap cleanup EXIT

# the server writes metadata there, the clients (root) data files
chmod 755 "$WAREHOUSE" && chown "$PG_USER" "$WAREHOUSE"

(
    start_server "$DATA" "$PORT"
    printf '[default]\naws_access_key_id = hung\naws_secret_access_key = hung\n' >"$DATA/s3_credentials"
    chown "$PG_USER" "$DATA/s3_credentials" && chmod 600 "$DATA/s3_credentials"
    cat >>"$DATA/postgresql.conf" <<CONF
skade.allowed_roots = '$WAREHOUSE, s3://hung'
skade.s3_endpoint = 'http://127.0.0.1:$HUNG_S3_PORT'
skade.s3_path_style = on
skade.s3_region = 'us-east-1'
skade.s3_credentials_file = '$DATA/s3_credentials'
skade.write_roots = '$WAREHOUSE'
skade.warehouse = 'file://$WAREHOUSE'
skade.rest_port = $REST_PORT
skade.rest_listen_addresses = '127.0.0.1'
skade.rest_workers = 2
skade.rest_database = 'postgres'
skade.rest_idle_timeout = 2s
skade.rest_max_body = 1MB
skade.rest_max_connections = 16
max_worker_processes = 32
CONF
    as_pg "$PGBIN/pg_ctl" -D "$DATA" -w restart -l "$DATA/server.log" >/dev/null
) || { echo "could not start PostgreSQL"; cat "$DATA/server.log" 2>/dev/null; exit 1; }

pg "$PORT" -q postgres <<'SQL' || { echo "could not set up the roles"; exit 1; }
CREATE EXTENSION skade;
CREATE ROLE rest_writer LOGIN;
CREATE ROLE rest_reader LOGIN;
GRANT skade_writer TO rest_writer;
GRANT skade_reader TO rest_reader;
SQL
token() { pg "$PORT" -qAt -c "SELECT skade.rest_create_token('$1', '1 day', 'test/rest')" postgres; }
SKADE_REST_WRITER_TOKEN=$(token rest_writer) && SKADE_REST_READER_TOKEN=$(token rest_reader) ||
    { echo "could not make the tokens"; exit 1; }

export PGHOST=127.0.0.1 PGPORT=$PORT PGUSER=postgres PGDATABASE=postgres
export SKADE_REST_PG_DSN="host=127.0.0.1 port=$PORT user=postgres dbname=postgres"
export SKADE_REST_URI="http://127.0.0.1:$REST_PORT" SKADE_REST_CATALOG=$CATALOG
export SKADE_REST_WRITER_TOKEN SKADE_REST_READER_TOKEN
export SKADE_REST_WRITER_ROLE=rest_writer SKADE_REST_READER_ROLE=rest_reader
export SKADE_WAREHOUSE=$WAREHOUSE SKADE_REST_DATA=$DATA SKADE_REST_PGBIN=$PGBIN
export SKADE_REST_HUNG_S3_PORT=$HUNG_S3_PORT

# the REST workers listen once the server is consistent
python3 - "$REST_PORT" <<'PY' || { echo "the REST port does not answer"; tail -n 20 "$DATA/server.log"; exit 1; }
import socket, sys, time
for _ in range(100):
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=1).close()
        sys.exit(0)
    except OSError:
        time.sleep(0.1)
sys.exit(1)
PY

# the clients (root) make directories the server (postgres) writes metadata into: let it
umask 000
passed=0
failed=0
# update_table's commits by engine (skade.commit_stats(): the C path, the PL/pgSQL engine)
engines() { pg "$PORT" -qAt -F ' ' -c "SELECT update_c, update_plpgsql FROM skade.commit_stats()" postgres 2>/dev/null; }
step() {
    log "rest: $*"
    local phase="$*" before after ok=1
    before=$(engines)
    "$@" || ok=0
    # every commit a client made was applied by update_table's C path: none reached the
    # PL/pgSQL engine (the counters are shared memory: a phase that crash-restarts the
    # server starts them again, and is then judged by what came after)
    after=$(engines)
    set -- $before $after
    if [ $# -eq 4 ]; then
        local c=$(($3 - $1)) p=$(($4 - $2))
        [ "$3" -lt "$1" ] && c=$3 p=$4
        echo "update_table in this phase: $c commits by the C path, $p by the PL/pgSQL engine"
        [ "$p" -eq 0 ] || { ok=0; echo "commits reached the PL/pgSQL engine"; }
    fi
    if [ $ok = 1 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAILED: $phase"; fi
}

VENV=${SKADE_VENV:-$SKADE_ROOT/test/interop/python/.venv}
python_suite() {
    local py=python3.11
    command -v "$py" >/dev/null 2>&1 || py=python3
    (
        flock 9
        [ -x "$VENV/bin/python" ] || "$py" -m venv "$VENV" || exit 1
        "$VENV/bin/python" -m pip install --disable-pip-version-check -q \
            -r "$SKADE_ROOT/test/interop/python/requirements.txt"
    ) 9>"$VENV.lock" || return 1
    (cd "$HERE/python" && "$VENV/bin/python" -m pytest "$@")
}

# Iceberg's own CatalogTests and ViewCatalogTests (iceberg-core 1.11.0) through Java's
# RESTCatalog (test/rest/java), run as the server's OS user: the tests write data files
# into directories the server writes metadata into.  Skipped besides the tests' own
# capability flags: createTableInUniqueLocation (locations are the JDBC catalog's
# <namespace>/<name>, as Iceberg's REST fixture's) and testLoadTableWithMissingMetadataFile
# (metadata files are immutable; a load is answered from the cache).
conformance() {
    command -v mvn >/dev/null 2>&1 && command -v javac >/dev/null 2>&1 ||
        install_packages openjdk-17-jdk-headless maven
    local repo=${SKADE_REST_M2:-$HERE/java/.m2-$PG_USER}
    local work rc=0
    work=$(mktemp -d /tmp/skade-rest-java.XXXXXX)
    cp -a "$HERE/java/." "$work/" && rm -rf "$work/target" "$work/.m2-$PG_USER"
    mkdir -p "$repo" "$WAREHOUSE/conformance"
    chown -R "$PG_USER" "$repo" "$work" "$WAREHOUSE/conformance"
    as_pg env HOME="$work" MAVEN_REPO_LOCAL="$repo" SKADE_REST_URI="$SKADE_REST_URI/" \
        SKADE_REST_TOKEN="$SKADE_REST_WRITER_TOKEN" SKADE_REST_WAREHOUSE="$CATALOG" \
        SKADE_REST_LOCATION_ROOT="$WAREHOUSE/conformance" \
        bash "$work/run.sh" conformance \
        -Dskade.rest.skip=createTableInUniqueLocation,testLoadTableWithMissingMetadataFile || rc=$?
    rm -rf "$work"
    return $rc
}

# A stock Java RESTCatalog of one Iceberg release (java-clients/: 1.12 or 1.10) through a
# table's lifecycle, cross-checked over JDBC; as the server's OS user (the client writes
# manifests beside the server's metadata), with the conformance phase's Maven repository.
java_client() {
    command -v mvn >/dev/null 2>&1 && command -v javac >/dev/null 2>&1 ||
        install_packages openjdk-17-jdk-headless maven
    local repo=${SKADE_REST_M2:-$HERE/java/.m2-$PG_USER}
    local work rc=0
    work=$(mktemp -d /tmp/skade-rest-jc.XXXXXX)
    cp -a "$HERE/java-clients/." "$work/" && rm -rf "$work/target"
    mkdir -p "$repo"
    chown -R "$PG_USER" "$repo" "$work"
    as_pg env HOME="$work" MAVEN_REPO_LOCAL="$repo" SKADE_REST_URI="$SKADE_REST_URI/" \
        bash "$work/run.sh" "$1" || rc=$?
    rm -rf "$work"
    return $rc
}

# Spark 3.5 (PySpark) with Iceberg 1.12.0's SparkCatalog of type rest on skade's REST port
# (spark/test_spark_rest.py); the jars and the virtualenv are the Spark interop suite's
# (test/interop/spark/run.sh --prepare installs what is missing).  Spark runs as root with
# umask 000, as that suite does.
spark_rest() {
    bash "$SKADE_ROOT/test/interop/spark/run.sh" --prepare || return 1
    local venv=${SKADE_SPARK_VENV:-$SKADE_ROOT/test/interop/spark/.venv}
    local scratch rc=0
    scratch=$(mktemp -d /tmp/skade-rest-spark.XXXXXX)
    (cd "$HERE/spark" && TZ=UTC SPARK_LOCAL_IP=127.0.0.1 SKADE_SPARK_SCRATCH="$scratch" \
        SKADE_SPARK_JARS="$SKADE_ROOT/test/interop/spark/target/jars" \
        "$venv/bin/python" -m pytest -p no:cacheprovider test_spark_rest.py "$@") || rc=$?
    rm -rf "$scratch"
    return $rc
}

# Java RESTCatalog 1.12 and Spark over https with an OAuth2 client credential they refresh
# themselves, against the test's OpenID provider (python/secure_phase.py holds the server on
# TLS and OpenID meanwhile; java-clients/ RestSecureClientTest, spark/test_spark_rest_secure.py)
secure_clients() {
    command -v mvn >/dev/null 2>&1 && command -v javac >/dev/null 2>&1 ||
        install_packages openjdk-17-jdk-headless maven
    bash "$SKADE_ROOT/test/interop/spark/run.sh" --prepare || return 1
    local repo=${SKADE_REST_M2:-$HERE/java/.m2-$PG_USER}
    local venv=${SKADE_SPARK_VENV:-$SKADE_ROOT/test/interop/spark/.venv}
    local work scratch rc=0
    work=$(mktemp -d /tmp/skade-rest-sec.XXXXXX)
    scratch=$(mktemp -d /tmp/skade-rest-spark-sec.XXXXXX)
    cp -a "$HERE/java-clients/." "$work/" && rm -rf "$work/target"
    mkdir -p "$repo"
    chown -R "$PG_USER" "$repo" "$work"
    (cd "$HERE/python" && "$VENV/bin/python" secure_phase.py \
        ::: runuser -u "$PG_USER" -- env HOME="$work" MAVEN_REPO_LOCAL="$repo" bash "$work/run.sh" 1.12 secure \
        ::: env TZ=UTC SPARK_LOCAL_IP=127.0.0.1 SKADE_SPARK_SCRATCH="$scratch" \
            SKADE_SPARK_JARS="$SKADE_ROOT/test/interop/spark/target/jars" \
            "$venv/bin/python" -m pytest -p no:cacheprovider "$HERE/spark/test_spark_rest_secure.py") || rc=$?
    rm -rf "$work" "$scratch"
    return $rc
}

# pg_ctl stop -m fast with REST connections open (idle keep-alive ones and one mid-request):
# the server stops, the workers with it, and the port is free again
shutdown_check() {
    "$VENV/bin/python" "$HERE/python/shutdown_check.py"
}

case "$what" in
    python) step python_suite "$@" ;;
    conformance) step conformance ;;
    java) step java_client 1.12; step java_client 1.10 ;;
    spark) step spark_rest "$@" ;;
    secure) step secure_clients ;;
    all)
        step python_suite "$@"
        step conformance
        step java_client 1.12
        step java_client 1.10
        step spark_rest
        step secure_clients
        step shutdown_check
        ;;
esac

if [ "$failed" -ne 0 ]; then
    echo "---- server log (tail)"; tail -n 60 "$DATA/server.log"
fi
echo "rest phases: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
