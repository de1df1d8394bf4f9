#!/usr/bin/env bash
# Java interop suite: stock Apache Iceberg JdbcCatalog against PostgreSQL + skade.
#
#   test/interop/java/run.sh [main|mixed-write|mixed-read|fixtures|s3]   (default: main)
#
# Connection from the libpq variables PGHOST (a socket directory means 127.0.0.1), PGPORT,
# PGUSER, PGDATABASE, PGPASSWORD; the server must have skade in shared_preload_libraries and
# CREATE EXTENSION skade done. Warehouse: SKADE_WAREHOUSE (a local directory; a temporary one
# if unset; the mixed phases need the one the Python suite uses).
# Maven: MAVEN_REPO_LOCAL overrides ~/.m2/repository; SKADE_MVN_OFFLINE=1 adds -o.
set -euo pipefail

phase="${1:-main}"
case "$phase" in
  main|mixed-write|mixed-read|fixtures|s3) ;;   # s3: from test/s3/run.sh (a local S3 server)
  *) echo "usage: $0 [main|mixed-write|mixed-read|fixtures|s3]" >&2; exit 2 ;;
esac

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

mvn_args=(-B -q -Dstyle.color=never -P"$phase")
if [[ -n "${MAVEN_REPO_LOCAL:-}" ]]; then
  mvn_args+=("-Dmaven.repo.local=$MAVEN_REPO_LOCAL")
fi
if [[ "${SKADE_MVN_OFFLINE:-0}" == 1 ]]; then
  mvn_args+=(-o)
fi

reports="$here/target/surefire-reports"
rm -rf "$reports"

start=$(date +%s)
rc=0
# (Maven 3.8 prints bare colour resets even in batch mode: strip escape sequences)
mvn "${mvn_args[@]}" test 2>&1 | sed -u 's/\x1b\[[0-9;]*m//g' || rc=$?
elapsed=$(( $(date +%s) - start ))

# mvn -q hides Surefire's own summary: print it from the reports Surefire wrote.
# the counters of a report's <testsuite> element
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
  grep -h "Tests run:" "$f" || true
done
echo
echo "[java interop: $phase] ${elapsed}s. Results:"
echo "Tests run: $tests, Failures: $failures, Errors: $errors, Skipped: $skipped"
passed=$((tests - failures - errors - skipped))
echo "java: $passed passed, $((failures + errors)) failed, $skipped skipped"

if [[ $rc -ne 0 ]]; then
  exit "$rc"
fi
if [[ $tests -eq 0 ]]; then
  echo "no test ran" >&2
  exit 1
fi
