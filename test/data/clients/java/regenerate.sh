#!/usr/bin/env bash
# Regenerates the Java-written fixture tables in test/data/clients/java/ (see README.md there).
#
#   test/data/clients/java/regenerate.sh
#
# Needs a PostgreSQL with skade (PGHOST, PGPORT, PGUSER, PGDATABASE as for
# test/interop/java/run.sh). The tables are written by the stock Iceberg JdbcCatalog into the
# fixed warehouse /tmp/skade-fixtures/java (override: SKADE_FIXTURE_WAREHOUSE), whose absolute
# paths end up inside the metadata, then copied here.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
suite="$here/../../../interop/java"
wh="${SKADE_FIXTURE_WAREHOUSE:-/tmp/skade-fixtures/java}"

rm -rf "$wh"
mkdir -p "$wh"
SKADE_FIXTURE_WAREHOUSE="$wh" "$suite/run.sh" fixtures

rm -rf "$here/warehouse"
mkdir -p "$here/warehouse"
cp -r "$wh/fixtures" "$here/warehouse/"
# tables.tsv holds paths relative to the warehouse root
cp "$wh/tables.tsv" "$here/tables.tsv"
# Hadoop's local file system leaves .crc checksum files next to every file: not fixtures
find "$here/warehouse" -name '.*.crc' -delete

echo "fixtures in $here:"
(cd "$here" && find warehouse -type f | sort)
du -sh --apparent-size "$here/warehouse" "$here/tables.tsv"
