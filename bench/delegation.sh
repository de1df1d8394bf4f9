#!/usr/bin/env bash
# Access delegation's cost (issue 28): loadTable p50 with vended credentials, cold (the
# AssumeRole call to STS) and warm (credentials cached), against a plain loadTable of the
# same table in the same run, for a small table and a wide one (whose answer is gzip'd);
# a signing request's p50, and requests per second at 32 clients (ab, keep-alive) for the
# signing route beside plain loadTable.  The servers are test/delegation's (MinIO and its
# STS, skade's REST port with 2 executors); the client is Python (requests, keep-alive),
# sequential, rounds interleaved.
#   bash bench/delegation.sh [rounds]
set -euo pipefail
. "$(dirname "$0")/../test/lib.sh"
install_build_deps
bench_build_and_install
command -v ab >/dev/null || install_packages apache2-utils
set +e
. "$SKADE_ROOT/test/delegation/servers.sh"
"$VENV/bin/python" "$SKADE_ROOT/bench/delegation.py" "${1:-7}"
