#!/usr/bin/env bash
# A stock Java RESTCatalog (Iceberg 1.12.0 or 1.10.1) through a table's lifecycle against
# skade's REST port, cross-checked through skade's SQL over JDBC (RestClientLifecycleTest).
#
#   test/rest/java-clients/run.sh 1.12|1.10 [MAVEN ARGS...]
#   test/rest/java-clients/run.sh 1.12|1.10 secure [MAVEN ARGS...]
#
# secure: RestSecureClientTest instead (https, an OAuth2 client credential refreshed by the
# client), with SKADE_REST_SECURE_URI, SKADE_REST_CREDENTIAL, SKADE_REST_OAUTH2_URI,
# SKADE_REST_TRUSTSTORE, SKADE_REST_SECURE_ROLE and SKADE_REST_TOKEN_LIFETIME from
# test/rest/python/secure_phase.py.
#
# Environment (test/rest/run.sh sets it): SKADE_REST_URI, SKADE_REST_WRITER_TOKEN,
# SKADE_REST_WRITER_ROLE, SKADE_REST_CATALOG (sent as warehouse), PGHOST/PGPORT/PGUSER/
# PGDATABASE (the superuser, for the cross-checks).  The client writes manifests into the
# table directories the server writes metadata into: run it as the server's OS user.
# Maven: MAVEN_REPO_LOCAL overrides ~/.m2/repository; SKADE_MVN_OFFLINE=1 adds -o.
set -euo pipefail

version=${1:-}
case "$version" in
    1.12) profile=iceberg-1.12 ;;
    1.10) profile=iceberg-1.10 ;;
    *) echo "usage: $0 1.12|1.10 [MAVEN ARGS...]" >&2; exit 2 ;;
esac
shift
secure=0
[[ "${1:-}" == secure ]] && { secure=1; shift; }
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

mvn_args=(-B -q -Dstyle.color=never -P "$profile" "-Dskade.rest.warehouse=$SKADE_REST_CATALOG"
    "-Dskade.pg.url=jdbc:postgresql://${PGHOST:-127.0.0.1}:${PGPORT:-5432}/${PGDATABASE:-postgres}"
    "-Dskade.pg.user=${PGUSER:-postgres}")
if [[ $secure == 1 ]]; then
    mvn_args+=(-Dtest=RestSecureClientTest "-Dskade.rest.uri=$SKADE_REST_SECURE_URI"
        "-Dskade.rest.credential=$SKADE_REST_CREDENTIAL" "-Dskade.rest.oauth2.uri=$SKADE_REST_OAUTH2_URI"
        "-Dskade.rest.truststore=$SKADE_REST_TRUSTSTORE" "-Dskade.rest.role=$SKADE_REST_SECURE_ROLE"
        "-Dskade.rest.token.lifetime=$SKADE_REST_TOKEN_LIFETIME")
else
    # the rebase and group commit against the newest client only (CI time: the server's
    # side is the same for both; the lifecycle covers what differs between releases)
    tests=RestClientLifecycleTest
    [[ $profile == iceberg-1.12 ]] && tests+=,RestRebaseTest
    mvn_args+=(-Dtest=$tests "-Dskade.rest.uri=$SKADE_REST_URI"
        "-Dskade.rest.token=$SKADE_REST_WRITER_TOKEN" "-Dskade.rest.role=$SKADE_REST_WRITER_ROLE")
fi
[[ -n "${MAVEN_REPO_LOCAL:-}" ]] && mvn_args+=("-Dmaven.repo.local=$MAVEN_REPO_LOCAL")
[[ "${SKADE_MVN_OFFLINE:-0}" == 1 ]] && mvn_args+=(-o)

start=$(date +%s)
rc=0
# Maven 3.8 prints bare colour resets even in batch mode: strip escape sequences
mvn "${mvn_args[@]}" "$@" test 2>&1 | sed -u 's/\x1b\[[0-9;]*m//g' || rc=$?
out=$(ls target/surefire-reports/*-output.txt 2>/dev/null | head -n1 || true)
[[ -n "$out" ]] && cat "$out"
echo "[rest java client $version] $(( $(date +%s) - start ))s, exit $rc"
exit "$rc"
