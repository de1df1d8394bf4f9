#!/usr/bin/env bash
# pyiceberg 0.12 RestCatalog smoke test (smoke_fixture.py) in the virtualenv of the pyiceberg
# interop suite (test/interop/python/requirements.txt: pyiceberg 0.12.0, pyarrow).
#   test/rest/python/run.sh --uri http://127.0.0.1:PORT/ [smoke_fixture.py options...]
# The virtualenv is $SKADE_VENV or test/interop/python/.venv (made and filled if missing).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
reqs="$here/../../interop/python/requirements.txt"
venv="${SKADE_VENV:-$here/../../interop/python/.venv}"
python="${PYTHON:-python3.11}"
command -v "$python" >/dev/null 2>&1 || python=python3

# under the interop suite's lock: runs at once share the virtualenv
(
	flock 9
	if [ ! -x "$venv/bin/python" ]; then
		echo "run.sh: creating virtualenv $venv"
		"$python" -m venv "$venv"
	fi
	"$venv/bin/python" -m pip install --disable-pip-version-check -q -r "$reqs"
) 9>"$venv.lock" || exit 1

exec "$venv/bin/python" "$here/smoke_fixture.py" "$@"
