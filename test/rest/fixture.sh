#!/usr/bin/env bash
# Iceberg's REST fixture 1.11.0 (org.apache.iceberg.rest.RESTCatalogServer from
# org.apache.iceberg:iceberg-open-api:1.11.0:test-fixtures) serving a JdbcCatalog on a
# PostgreSQL database: the baseline of the REST benchmarks and a reference server for the
# conformance tests (java/run.sh) and the pyiceberg smoke test (python/smoke_fixture.py).
#
#   test/rest/fixture.sh start DIR PORT JDBC_URL JDBC_USER WAREHOUSE [CATALOG]
#   test/rest/fixture.sh stop DIR
#   test/rest/fixture.sh status DIR
#
# DIR      a directory of this fixture alone: fixture.pid, fixture.log, classpath.txt
# PORT     the HTTP port (Jetty binds it on every interface: the fixture has no address setting)
# JDBC_URL e.g. jdbc:postgresql://127.0.0.1:5432/postgres
# WAREHOUSE a local directory (or file: URI): the JdbcCatalog's warehouse
# CATALOG  the JdbcCatalog's name, i.e. iceberg_tables.catalog_name (default skade); the
#          fixture serves it with no prefix (GET /v1/config answers no "prefix" override)
#
# Environment: FIXTURE_JDBC_PASSWORD (JDBC password, default none), FIXTURE_JAVA_OPTS
# (default -Xms256m -Xmx1g), FIXTURE_LOG_LEVEL (slf4j-simple level, default warn: info
# prints the catalog properties, the password among them), FIXTURE_EXTRA_ENV (more
# "CATALOG_X=y" words for the fixture's catalog properties, see below), MAVEN_REPO_LOCAL,
# SKADE_MVN_OFFLINE=1 (as for test/interop/java/run.sh).
#
# The fixture reads its settings from environment variables CATALOG_*: the prefix is
# dropped, "__" becomes "-", "_" becomes "." and the name is lowercased
# (CATALOG_CATALOG__IMPL -> catalog-impl, CATALOG_JDBC_USER -> jdbc.user,
# CATALOG_REST_PORT -> rest.port, CATALOG_CATALOG_NAME -> catalog.name). It runs with a
# clean environment so that no stray CATALOG_* variable of the caller leaks in.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
javadir="$here/java"

usage() {
    sed -n '8,10p' "$0" | sed 's/^# *//' >&2
    exit 2
}

# the fixture's classpath (from the Maven project beside this script), cached in DIR
build_classpath() {
    local dir=$1 out="$1/classpath.txt"
    if [[ -s "$out" && "$out" -nt "$javadir/pom.xml" ]]; then
        return 0
    fi
    local args=(-B -q -Dstyle.color=never -f "$javadir/pom.xml" dependency:build-classpath
        "-Dmdep.outputFile=$out" -Dmdep.includeScope=test)
    [[ -n "${MAVEN_REPO_LOCAL:-}" ]] && args+=("-Dmaven.repo.local=$MAVEN_REPO_LOCAL")
    [[ "${SKADE_MVN_OFFLINE:-0}" == 1 ]] && args+=(-o)
    if ! mvn "${args[@]}" >"$dir/mvn.log" 2>&1; then
        cat "$dir/mvn.log" >&2
        echo "fixture.sh: could not resolve the fixture's classpath" >&2
        return 1
    fi
}

is_running() {
    local pidfile="$1/fixture.pid"
    [[ -f "$pidfile" ]] && kill -0 "$(cat "$pidfile")" 2>/dev/null
}

cmd_start() {
    [[ $# -ge 5 && $# -le 6 ]] || usage
    local dir=$1 port=$2 url=$3 user=$4 warehouse=$5 catalog=${6:-skade}
    mkdir -p "$dir"
    dir="$(cd "$dir" && pwd)"
    if is_running "$dir"; then
        echo "fixture.sh: already running in $dir (pid $(cat "$dir/fixture.pid"))" >&2
        return 1
    fi
    case "$warehouse" in
        *://*|file:*) ;;
        *) mkdir -p "$warehouse"; warehouse="$(cd "$warehouse" && pwd)" ;;
    esac
    build_classpath "$dir"

    local java
    java="$(command -v java)"
    local -a envv=(
        "PATH=$PATH" "HOME=${HOME:-/root}" "LANG=C.UTF-8"
        "CATALOG_CATALOG__IMPL=org.apache.iceberg.jdbc.JdbcCatalog"
        "CATALOG_CATALOG_NAME=$catalog"
        "CATALOG_URI=$url"
        "CATALOG_JDBC_USER=$user"
        "CATALOG_JDBC_SCHEMA__VERSION=V1"
        "CATALOG_WAREHOUSE=$warehouse"
        "CATALOG_REST_PORT=$port"
    )
    [[ -n "${FIXTURE_JDBC_PASSWORD:-}" ]] && envv+=("CATALOG_JDBC_PASSWORD=$FIXTURE_JDBC_PASSWORD")
    [[ -n "${JAVA_HOME:-}" ]] && envv+=("JAVA_HOME=$JAVA_HOME")
    # shellcheck disable=SC2206
    [[ -n "${FIXTURE_EXTRA_ENV:-}" ]] && envv+=(${FIXTURE_EXTRA_ENV})
    # shellcheck disable=SC2206
    local -a jopts=(${FIXTURE_JAVA_OPTS:--Xms256m -Xmx1g})

    : >"$dir/fixture.log"
    # setsid: the fixture outlives this script, in its own process group
    env -i "${envv[@]}" setsid "$java" "${jopts[@]}" \
        "-Dorg.slf4j.simpleLogger.defaultLogLevel=${FIXTURE_LOG_LEVEL:-warn}" \
        -cp "$(cat "$dir/classpath.txt")" org.apache.iceberg.rest.RESTCatalogServer \
        >>"$dir/fixture.log" 2>&1 </dev/null &
    echo $! >"$dir/fixture.pid"

    # ready when GET /v1/config answers 200
    local i
    for i in $(seq 1 240); do
        if ! is_running "$dir"; then
            echo "fixture.sh: the fixture exited; its log:" >&2
            tail -n 40 "$dir/fixture.log" >&2
            rm -f "$dir/fixture.pid"
            return 1
        fi
        if curl -fsS -o /dev/null "http://127.0.0.1:$port/v1/config" 2>/dev/null; then
            echo "fixture: http://127.0.0.1:$port/ (catalog $catalog, pid $(cat "$dir/fixture.pid"))"
            return 0
        fi
        sleep 0.25
    done
    echo "fixture.sh: no answer on port $port after 60 s; its log:" >&2
    tail -n 40 "$dir/fixture.log" >&2
    cmd_stop "$dir"
    return 1
}

cmd_stop() {
    [[ $# -eq 1 ]] || usage
    local dir=$1 pid i
    [[ -f "$dir/fixture.pid" ]] || return 0
    pid=$(cat "$dir/fixture.pid")
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null || true
        for i in $(seq 1 40); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.25
        done
        kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$dir/fixture.pid"
}

cmd_status() {
    [[ $# -eq 1 ]] || usage
    if is_running "$1"; then
        echo "running (pid $(cat "$1/fixture.pid"))"
    else
        echo "stopped"
        return 1
    fi
}

[[ $# -ge 1 ]] || usage
op=$1
shift
case "$op" in
    start) cmd_start "$@" ;;
    stop) cmd_stop "$@" ;;
    status) cmd_status "$@" ;;
    *) usage ;;
esac
