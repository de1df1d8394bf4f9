#!/usr/bin/env bash
# Regenerate the pyiceberg-written fixtures in this directory (see README.md).
#   test/data/clients/python/regenerate.sh
# Uses the interop suite's virtualenv ($SKADE_VENV or test/interop/python/.venv),
# creating it from test/interop/python/requirements.txt if needed.
# FIXTURE_ROOT (default /tmp/skade-fixture-py) is where the tables are written,
# and so the absolute path prefix recorded inside every metadata/manifest file.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../../.." && pwd)"
reqs="$repo/test/interop/python/requirements.txt"
venv="${SKADE_VENV:-$repo/test/interop/python/.venv}"
python="${PYTHON:-python3.11}"
command -v "$python" >/dev/null 2>&1 || python=python3

if [ ! -x "$venv/bin/python" ]; then
	"$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --disable-pip-version-check -q -r "$reqs"
exec "$venv/bin/python" "$here/make_fixtures.py"
