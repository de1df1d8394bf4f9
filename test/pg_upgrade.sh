#!/usr/bin/env bash
# The pg_upgrade test (test/tap/017_pg_upgrade.pl): builds skade for the old and the
# new major, installs it into both, and runs the test as the user postgres
# (as root; the servers cannot run as root), printing prove's result.
#
# Usage (as root, from anywhere):
#   bash test/pg_upgrade.sh [--no-build]
# Environment:
#   SKADE_UPGRADE_FROM_CONFIG  pg_config of the old installation
#                              (default: 15 from test/pg_majors.sh, which
#                              honours SKADE_PG15_CONFIG, e.g. a private copy)
#   SKADE_UPGRADE_TO_CONFIG    pg_config of the new installation
#                              (default: test/pg_majors.sh's SKADE_UPGRADE_TO_MAJOR, 18)
#   TAP_PERL_MODULES           PostgreSQL's Perl test modules (default: the
#                              old installation's, else Debian 15's)
#   SKADE_KEEP=1               keep the work directory (it is kept on failure)
# --no-build: use the skade already installed in both (also the way to run it
# as a user other than root: the test then runs as that user).
# Exit status: prove's (0 when every test passed).
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/test/pg_majors.sh"

build=1
[ "${1:-}" = --no-build ] && build=0

from_cfg=${SKADE_UPGRADE_FROM_CONFIG:-$(pg_major_config 15)} || exit 1
to_cfg=${SKADE_UPGRADE_TO_CONFIG:-$(pg_major_config "${SKADE_UPGRADE_TO_MAJOR:-18}")} || exit 1
for c in "$from_cfg" "$to_cfg"; do
    "$c" --version >/dev/null 2>&1 || { echo "pg_upgrade.sh: $c does not answer" >&2; exit 1; }
done
echo "pg_upgrade.sh: from $("$from_cfg" --version) ($from_cfg)"
echo "pg_upgrade.sh: to   $("$to_cfg" --version) ($to_cfg)"

work=$(mktemp -d /tmp/skade-pgupgrade.XXXXXX)
copy_tree() {
    mkdir -p "$1"
    tar -C "$here" --exclude=.git --exclude=.venv --exclude=.venv-tools --exclude=target \
        --exclude=regress-run --exclude=tmp_check --exclude=tmp_check_iso -cf - . | tar -C "$1" -xf -
}

if [ "$build" = 1 ]; then
    if [ "$(id -u)" != 0 ]; then
        echo "pg_upgrade.sh: building and installing needs root (or --no-build)" >&2
        exit 1
    fi
    # one build tree per major (PGXS builds in place)
    for side in from to; do
        cfg=$from_cfg; [ $side = to ] && cfg=$to_cfg
        copy_tree "$work/build-$side"
        # (objects built for another major may be in the tree: PGXS would link them)
        make -C "$work/build-$side" -s clean >/dev/null 2>&1 || true
        echo "pg_upgrade.sh: building skade for $("$cfg" --version)"
        if ! make -C "$work/build-$side" -s -j2 PG_CONFIG="$cfg" >"$work/build-$side.log" 2>&1 ||
           ! flock /tmp/skade-install.lock make -C "$work/build-$side" -s PG_CONFIG="$cfg" install >>"$work/build-$side.log" 2>&1; then
            echo "pg_upgrade.sh: the build for $cfg failed:" >&2
            tail -n 40 "$work/build-$side.log" >&2
            exit 1
        fi
    done
fi

perl_modules=${TAP_PERL_MODULES:-}
if [ -z "$perl_modules" ]; then
    perl_modules="$("$from_cfg" --pkglibdir)/pgxs/src/test/perl"
    [ -f "$perl_modules/PostgreSQL/Test/Cluster.pm" ] || perl_modules=/usr/lib/postgresql/15/lib/pgxs/src/test/perl
fi
[ -f "$perl_modules/PostgreSQL/Test/Cluster.pm" ] || {
    echo "pg_upgrade.sh: no PostgreSQL::Test::Cluster in $perl_modules (postgresql-server-dev-15)" >&2; exit 1; }
pg_regress="$("$from_cfg" --pkglibdir)/pgxs/src/test/regress/pg_regress"
[ -x "$pg_regress" ] || pg_regress=/usr/lib/postgresql/15/lib/pgxs/src/test/regress/pg_regress

# the test runs in its own copy (TESTDIR: tmp_check, logs), owned by its user
copy_tree "$work/run"
run_as=()
if [ "$(id -u)" = 0 ]; then
    chown -R postgres "$work"
    run_as=(runuser -u postgres --)
fi
(
    cd "$work/run" &&
    "${run_as[@]}" env \
        SKADE_UPGRADE_FROM="$from_cfg" SKADE_UPGRADE_TO="$to_cfg" \
        TESTDIR="$work/run" PG_REGRESS="$pg_regress" \
        PATH="$("$from_cfg" --bindir):$PATH" \
        prove ${PROVE_FLAGS:-} -I "$perl_modules" -I . test/tap/017_pg_upgrade.pl
)
rc=$?
if [ $rc -ne 0 ]; then
    for f in "$work"/run/tmp_check/log/regress_log_*; do
        [ -f "$f" ] && { echo "---- $f (end)"; tail -n 80 "$f"; }
    done
    echo "pg_upgrade.sh: failed; the logs are in $work/run/tmp_check/log" >&2
elif [ "${SKADE_KEEP:-0}" != 1 ]; then
    rm -rf "$work"
else
    echo "pg_upgrade.sh: kept $work"
fi
exit $rc
