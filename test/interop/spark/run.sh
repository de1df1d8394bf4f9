#!/usr/bin/env bash
# Spark interop suite: Spark 3.5 (PySpark) with Iceberg's SparkCatalog over
# the stock JdbcCatalog against a throwaway PostgreSQL with skade.
#   test/interop/spark/run.sh [pytest args...]      (as root; the server runs as postgres)
#   test/interop/spark/run.sh --prepare             (only the jars and the virtualenv: for
#                                                    test/rest/run.sh's Spark phase)
# skade must be installed in the server PG_CONFIG names (the system one by
# default), as for test/interop/run.sh.  Installs what is missing (JDK 17 +
# Maven, python3-venv); the Iceberg Spark runtime and the PostgreSQL driver come
# from Maven Central (pom.xml, into target/jars), PySpark from PyPI into the
# virtualenv $SKADE_SPARK_VENV or test/interop/spark/.venv (made once, reused,
# under a lock).  Maven: MAVEN_REPO_LOCAL overrides ~/.m2/repository,
# SKADE_MVN_OFFLINE=1 adds -o.
# Its own port, data directory, warehouse and fixture copies: two runs at once
# do not meet.
set -uo pipefail
. "$(dirname "$0")/../../lib.sh"

HERE="$SKADE_ROOT/test/interop/spark"
prepare_only=0
[ "${1:-}" = --prepare ] && { prepare_only=1; shift; }

command -v mvn >/dev/null 2>&1 && command -v java >/dev/null 2>&1 || install_packages openjdk-17-jdk-headless maven
python3 -c 'import ensurepip, venv' 2>/dev/null || install_packages python3-venv

# the jars Spark loads (spark.jars): copied afresh from the local Maven
# repository each run, under a lock (two runs share target/)
mvn_args=(-B -q -Dstyle.color=never)
[ -n "${MAVEN_REPO_LOCAL:-}" ] && mvn_args+=("-Dmaven.repo.local=$MAVEN_REPO_LOCAL")
[ "${SKADE_MVN_OFFLINE:-0}" = 1 ] && mvn_args+=(-o)
mkdir -p "$HERE/target"
(
    flock 9
    rm -rf "$HERE/target/jars"
    cd "$HERE" && mvn "${mvn_args[@]}" dependency:copy-dependencies \
        -DoutputDirectory="$HERE/target/jars" -DexcludeTransitive=true 2>&1 | sed -u 's/\x1b\[[0-9;]*m//g'
    ls "$HERE"/target/jars/iceberg-spark-runtime-*.jar "$HERE"/target/jars/postgresql-*.jar >/dev/null
) 9>"$HERE/target/jars.lock" || { echo "spark: could not get the jars (mvn)" >&2; exit 1; }

venv="${SKADE_SPARK_VENV:-$HERE/.venv}"
(
    flock 9
    [ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv "$venv" || exit 1
    # quick when everything is already installed at the pinned versions
    "$venv/bin/python" -m pip install --disable-pip-version-check -q -r "$HERE/requirements.txt"
) 9>"$venv.lock" || { echo "spark: could not prepare $venv" >&2; exit 1; }
[ $prepare_only = 1 ] && exit 0

PORT=$(free_port)
DATA=$(mktemp -d /tmp/skade-spark-pg.XXXXXX)
SCRATCH=$(mktemp -d /tmp/skade-spark-tmp.XXXXXX)
WAREHOUSE=$(mktemp -d /tmp/skade-spark-wh.XXXXXX)
# the committed fixtures (written by Java and pyiceberg), copied with their
# recorded paths rewritten (test/fixtures.py; DEST as long as the recorded
# /tmp/skade-fixtures); the tests commit to these copies
FIXDIR=$(mktemp -d /tmp/skade-XXXXXXXX)
cleanup() {
    stop_server "$DATA"
    rm -rf "$DATA" "$SCRATCH" "$WAREHOUSE" "$FIXDIR"
}
trap cleanup EXIT
"$(tools_python)" "$SKADE_ROOT/test/fixtures.py" "$SKADE_ROOT/test/data" "$FIXDIR" || exit 1
cp "$SKADE_ROOT/test/data/clients/java/tables.tsv" "$FIXDIR/java/tables.tsv"
sed -e "s#/tmp/skade-fixture-py#$FIXDIR/p#g" "$SKADE_ROOT/test/data/clients/python/fixtures.json" >"$FIXDIR/p/fixtures.json"
# Spark (root) writes into the warehouse and the fixture copies, the server
# (postgres) writes metadata and manifests into the same table directories
chmod -R a+rwX "$WAREHOUSE" "$FIXDIR"
chmod 755 "$SCRATCH"

start_server "$DATA" "$PORT"
echo "skade.allowed_roots = '$WAREHOUSE,$FIXDIR'" >>"$DATA/postgresql.conf"
echo "skade.write_roots = '$WAREHOUSE,$FIXDIR'" >>"$DATA/postgresql.conf"
as_pg "$PGBIN/pg_ctl" -D "$DATA" -w restart -l "$DATA/server.log" >/dev/null || exit 1
pg "$PORT" -q -c 'CREATE EXTENSION skade' postgres || { tail -n 20 "$DATA/server.log"; exit 1; }

export PGHOST=127.0.0.1 PGPORT=$PORT PGUSER=postgres PGDATABASE=postgres
export SKADE_WAREHOUSE=$WAREHOUSE SKADE_SPARK_JARS="$HERE/target/jars" SKADE_SPARK_SCRATCH=$SCRATCH
export SKADE_JAVA_FIXTURES="$FIXDIR/java" SKADE_PY_FIXTURES="$FIXDIR/p"
# Spark's driver runs in a JVM the pytest process starts: timestamps in UTC
# (Python turns Spark's timestamps into naive local times), loopback only
export TZ=UTC SPARK_LOCAL_IP=127.0.0.1
umask 000

start=$(date +%s)
cd "$HERE" && "$venv/bin/python" -m pytest "$@"
rc=$?
echo "[spark interop] $(( $(date +%s) - start ))s"
[ $rc -ne 0 ] && { echo "---- server log (errors)"; grep -E -A2 'ERROR|FATAL|PANIC|TRAP' "$DATA/server.log" | tail -n 40; }
exit $rc
