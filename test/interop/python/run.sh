#!/usr/bin/env bash
# Run skade's pyiceberg interop suite.
#   test/interop/python/run.sh [main|mixed] [extra pytest args...]
# Needs PGHOST/PGPORT/PGUSER/PGDATABASE (a Postgres with skade preloaded and
# installed) and, for `mixed`, SKADE_WAREHOUSE shared with the Java suite.
# The virtualenv is $SKADE_VENV or test/interop/python/.venv (reused if present).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
phase="${1:-main}"
[ $# -gt 0 ] && shift

venv="${SKADE_VENV:-$here/.venv}"
python="${PYTHON:-python3.11}"
command -v "$python" >/dev/null 2>&1 || python=python3

# under a lock: two runs at once share the virtualenv
(
	flock 9
	if [ ! -x "$venv/bin/python" ]; then
		echo "run.sh: creating virtualenv $venv"
		"$python" -m venv "$venv"
	fi
	# pip is quick when everything is already installed at the pinned versions
	"$venv/bin/python" -m pip install --disable-pip-version-check -q -r "$here/requirements.txt"
) 9>"$venv.lock" || exit 1

case "$phase" in
	main)  marker='not mixed' ;;
	mixed)
		if [ -z "${SKADE_WAREHOUSE:-}" ]; then
			echo "run.sh: the mixed phase needs SKADE_WAREHOUSE (shared with the Java suite)" >&2
			exit 2
		fi
		marker='mixed' ;;
	*) echo "usage: $0 [main|mixed] [pytest args...]" >&2; exit 2 ;;
esac

cd "$here"
exec "$venv/bin/python" -m pytest -m "$marker" "$@"
