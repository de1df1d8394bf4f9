#!/usr/bin/env bash
# Iceberg's catalog conformance tests (CatalogTests / ViewCatalogTests, iceberg-core 1.11.0)
# through a stock RESTCatalog against any REST catalog server.
#
#   test/rest/java/run.sh [conformance|tables|views] [MAVEN ARGS...]    (default: conformance)
#
#   conformance  both classes: RestCatalogConformanceTests and RestViewCatalogConformanceTests
#   tables       RestCatalogConformanceTests only
#   views        RestViewCatalogConformanceTests only
#
# The server: SKADE_REST_URI (required unless -Dskade.rest.uri=... is given), SKADE_REST_TOKEN
# (a Bearer token), SKADE_REST_WAREHOUSE (the "warehouse" sent to GET /v1/config). Every other
# setting is a -D passed through to Maven, for instance
#   -Dtest='RestCatalogConformanceTests#testRenameTable*'   (a narrower selection)
#   -Dskade.rest.supports-names-with-slashes=true           (a capability flag, see RestTarget.java)
#   -Dskade.rest.skip=createTableInUniqueLocation,...       (reported as skipped)
#   -Dskade.rest.catalog.header.X-Foo=bar                   (any RESTCatalog property)
# The tests EMPTY THE CATALOG before each test (drop every view, table and namespace through
# the REST API): never point them at a catalog whose contents matter.
#
# Explicit table and view locations the tests ask for go under SKADE_REST_LOCATION_ROOT
# (tables/ and views/; the server must be able to write there), by default a fresh directory
# /tmp/skade-rest-loc.* of mode 0777, removed afterwards.
#
# Reports: target/surefire-reports (one TEST-*.xml per class, per-test output in *-output.txt).
# Maven: MAVEN_REPO_LOCAL overrides ~/.m2/repository; SKADE_MVN_OFFLINE=1 adds -o.
set -euo pipefail

mode=conformance
if [[ $# -gt 0 && "$1" != -* ]]; then
    mode=$1
    shift
fi
case "$mode" in
    conformance) tests='RestCatalogConformanceTests,RestViewCatalogConformanceTests' ;;
    tables) tests='RestCatalogConformanceTests' ;;
    views) tests='RestViewCatalogConformanceTests' ;;
    *) echo "usage: $0 [conformance|tables|views] [MAVEN ARGS...]" >&2; exit 2 ;;
esac

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

mvn_args=(-B -q -Dstyle.color=never -Dsurefire.failIfNoSpecifiedTests=false)
[[ -n "${MAVEN_REPO_LOCAL:-}" ]] && mvn_args+=("-Dmaven.repo.local=$MAVEN_REPO_LOCAL")
[[ "${SKADE_MVN_OFFLINE:-0}" == 1 ]] && mvn_args+=(-o)
[[ -n "${SKADE_REST_URI:-}" ]] && mvn_args+=("-Dskade.rest.uri=$SKADE_REST_URI")
[[ -n "${SKADE_REST_TOKEN:-}" ]] && mvn_args+=("-Dskade.rest.token=$SKADE_REST_TOKEN")
[[ -n "${SKADE_REST_WAREHOUSE:-}" ]] && mvn_args+=("-Dskade.rest.warehouse=$SKADE_REST_WAREHOUSE")

have_test=0 have_uri=0
for a in "$@"; do
    case "$a" in
        -Dtest=*) have_test=1 ;;
        -Dskade.rest.uri=*) have_uri=1 ;;
    esac
done
[[ -n "${SKADE_REST_URI:-}" ]] && have_uri=1
if [[ $have_uri -eq 0 ]]; then
    echo "run.sh: name the server: SKADE_REST_URI=http://HOST:PORT/ or -Dskade.rest.uri=..." >&2
    exit 2
fi
[[ $have_test -eq 0 ]] && mvn_args+=("-Dtest=$tests")

locroot=${SKADE_REST_LOCATION_ROOT:-}
own_locroot=0
if [[ -z "$locroot" ]]; then
    locroot=$(mktemp -d /tmp/skade-rest-loc.XXXXXX)
    chmod 777 "$locroot"
    own_locroot=1
    trap 'rm -rf "$locroot"' EXIT
fi
mkdir -p "$locroot/tables" "$locroot/views"
[[ $own_locroot -eq 1 ]] && chmod 777 "$locroot/tables" "$locroot/views"
mvn_args+=("-Dskade.rest.table-location-root=file:$locroot/tables"
    "-Dskade.rest.view-location-root=file:$locroot/views")

reports="$here/target/surefire-reports"
rm -rf "$reports"

start=$(date +%s)
rc=0
# (Maven 3.8 prints bare colour resets even in batch mode: strip escape sequences)
mvn "${mvn_args[@]}" "$@" test 2>&1 | sed -u 's/\x1b\[[0-9;]*m//g' || rc=$?
elapsed=$(( $(date +%s) - start ))

# mvn -q hides Surefire's summary: count from the reports it wrote
attr() {
    local v
    v=$(sed -n '/<testsuite /{p;q}' "$1" | grep -o " $2=\"[0-9]*\"" | head -n1 | tr -dc '0-9')
    echo "${v:-0}"
}
tests=0 failures=0 errors=0 skipped=0
shopt -s nullglob
for f in "$reports"/TEST-*.xml; do
    tests=$((tests + $(attr "$f" tests)))
    failures=$((failures + $(attr "$f" failures)))
    errors=$((errors + $(attr "$f" errors)))
    skipped=$((skipped + $(attr "$f" skipped)))
done
for f in "$reports"/*.txt; do
    case "$f" in *-output.txt) continue ;; esac
    grep -h "Tests run:" "$f" || true
done
# the failed tests by name (testcase elements followed by a failure or an error)
failed_list=$(cat "$reports"/TEST-*.xml 2>/dev/null | awk '
    /<testcase / { match($0, /name="[^"]*"/); n = substr($0, RSTART + 6, RLENGTH - 7);
                   match($0, /classname="[^"]*"/); c = substr($0, RSTART + 11, RLENGTH - 12);
                   sub(/.*\./, "", c) }
    /<(failure|error)[ >]/ { print "  FAILED " c "#" n }' | sort -u)
if [[ -n "$failed_list" ]]; then
    echo "$failed_list"
fi
echo
echo "[rest conformance: $mode] ${elapsed}s; reports in $reports"
echo "Tests run: $tests, Failures: $failures, Errors: $errors, Skipped: $skipped"
passed=$((tests - failures - errors - skipped))
echo "rest: $passed passed, $((failures + errors)) failed, $skipped skipped"

if [[ $tests -eq 0 ]]; then
    echo "no test ran" >&2
    exit 1
fi
exit "$rc"
