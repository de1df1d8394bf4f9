#!/usr/bin/env bash
# Regenerates the Avro fixtures in test/data/avro/warehouse (see README.md there).
#
#   test/data/avro/regenerate.sh
#
# Writes every table at FIXTURE_ROOT (default /tmp/skade-fixtures/avro, the root
# test/regress/sql/avro_formats.sql copies them back to), so the absolute paths inside point
# there, then copies FIXTURE_ROOT to warehouse/ here.  Needs python3 (a venv at
# $SKADE_AVRO_VENV, default /tmp/skade-avro-venv, is made from requirements.txt),
# Java 17 and Maven with Iceberg 1.12.0 (test/interop/java/pom.xml's class path;
# SKADE_MVN_OFFLINE=1 adds -o).  No PostgreSQL is needed.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
root="${FIXTURE_ROOT:-/tmp/skade-fixtures/avro}"
venv="${SKADE_AVRO_VENV:-/tmp/skade-avro-venv}"
python="${PYTHON:-python3.11}"
command -v "$python" >/dev/null 2>&1 || python=python3

if [ ! -x "$venv/bin/python" ]; then
	"$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --disable-pip-version-check -q -r "$here/requirements.txt"

# 1. pyiceberg: v1, v2 in codecs null/deflate/snappy/zstandard; derived bad tables
FIXTURE_ROOT="$root" "$venv/bin/python" "$here/make_fixtures.py" write

# 2. Java Iceberg 1.12.0: v3
cp="$(mktemp)"
trap 'rm -f "$cp"' EXIT
mvn_args=(-B -q -Dstyle.color=never)
[[ "${SKADE_MVN_OFFLINE:-0}" == 1 ]] && mvn_args+=(-o)
(cd "$repo/test/interop/java" &&
	mvn "${mvn_args[@]}" dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile="$cp" 2>&1 |
		sed "s/\x1b\[[0-9;]*m//g")
java -cp "$(cat "$cp")" "$here/V3Fixture.java" "$root/v3" 2>&1 | grep '^v3:'
find "$root" -name '.*.crc' -delete    # Hadoop's checksum side files

# 3. check every client file re-encodes byte for byte; tables.tsv
FIXTURE_ROOT="$root" "$venv/bin/python" "$here/make_fixtures.py" index

rm -rf "$here/warehouse"
mkdir -p "$here/warehouse"
cp -r "$root/." "$here/warehouse/"
echo "fixtures in $here/warehouse: $(find "$here/warehouse" -type f | wc -l) files," \
	"$(du -sb --apparent-size "$here/warehouse" | cut -f1) bytes"
