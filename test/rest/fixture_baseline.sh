#!/usr/bin/env bash
# The REST suites against Iceberg's REST fixture 1.11.0 on a throwaway PostgreSQL (no skade):
# what skade's REST server is compared with.  Hermetic: its own cluster, warehouse and ports.
#
#   test/rest/fixture_baseline.sh [conformance|tables|views|smoke|all] [MAVEN ARGS...]
#                                                                        (default: all)
# all = conformance + smoke.  As root (the cluster runs as postgres).  KEEP=1 leaves the
# cluster and the fixture running and prints how to reach and stop them.
#
# The fixture's JdbcCatalog lets a table be created in a namespace that does not exist and
# makes no unique table locations, so the run sets what Iceberg's own REST compatibility
# kit sets for it: tables.requires-namespace-create=false, createTableInUniqueLocation skipped.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
here="$SKADE_ROOT/test/rest"

what=${1:-all}
[[ $# -gt 0 ]] && shift
case "$what" in
    conformance|tables|views|smoke|all) ;;
    *) echo "usage: $0 [conformance|tables|views|smoke|all] [MAVEN ARGS...]" >&2; exit 2 ;;
esac

# a plain server of the system's PostgreSQL (the fixture needs no extension)
pgbin=/usr/lib/postgresql/$PG_MAJOR/bin
work=$(mktemp -d /tmp/skade-rest-baseline.XXXXXX)
chmod 755 "$work"
pgport=$(free_port)
mkdir "$work/pg" && chown "$PG_USER" "$work/pg"
as_pg "$pgbin/initdb" -D "$work/pg" -A trust -U postgres --encoding=UTF8 >/dev/null || exit 1
cat >>"$work/pg/postgresql.conf" <<CONF
port = $pgport
listen_addresses = '127.0.0.1'
unix_socket_directories = '$work/pg'
max_connections = 60
CONF
as_pg "$pgbin/pg_ctl" -D "$work/pg" -l "$work/pg/server.log" -w start >/dev/null || exit 1

cleanup() {
    if [[ "${KEEP:-0}" == 1 ]]; then
        echo "KEEP=1: fixture on port $fxport, PostgreSQL on $pgport; stop with:"
        echo "  $here/fixture.sh stop $work/fixture; runuser -u postgres -- $pgbin/pg_ctl -D $work/pg -m fast stop; rm -rf $work"
        return
    fi
    "$here/fixture.sh" stop "$work/fixture"
    as_pg "$pgbin/pg_ctl" -D "$work/pg" -m fast -w stop >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

fxport=$(free_port)
t0=$(date +%s%N)
"$here/fixture.sh" start "$work/fixture" "$fxport" "jdbc:postgresql://127.0.0.1:$pgport/postgres" \
    postgres "$work/warehouse" skade || exit 1
echo "fixture up in $(( ($(date +%s%N) - t0) / 1000000 )) ms (classpath resolution included)"

uri="http://127.0.0.1:$fxport/"
rc=0
if [[ "$what" != smoke ]]; then
    mode=$what
    [[ "$mode" == all ]] && mode=conformance
    SKADE_REST_URI=$uri "$here/java/run.sh" "$mode" \
        -Dskade.rest.tables.requires-namespace-create=false \
        -Dskade.rest.skip=createTableInUniqueLocation "$@" || rc=1
fi
if [[ "$what" == smoke || "$what" == all ]]; then
    "$here/python/run.sh" --uri "$uri" || rc=1
    "$here/python/run.sh" --uri "$uri" --prefix skade --token t0ken --warehouse skade || rc=1
fi
exit $rc
