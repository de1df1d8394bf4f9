#!/usr/bin/env bash
# Copies the results of a pg_regress run in RUN (regress-run/ of a tree) back
# to SRCDIR/test/regress/expected (or test/isolation/expected, for an
# isolation test) as expected output, with this run's directories turned
# back into the fixed names the tests are written with (the reverse of
# test/regress_prepare.sh).  Review the diff before committing it.
# Usage: regress_accept.sh RUN SRCDIR TEST...
set -euo pipefail
run=$1 src=$2
shift 2
{ read -r fx; read -r sc; read -r fx2; } <"$run/paths"
for t in "$@"; do
	dest=$src/test/regress/expected/$t.out
	[ -f "$src/test/isolation/specs/$t.spec" ] && dest=$src/test/isolation/expected/$t.out
	sed -e "s#$fx/p#/tmp/skade-fixture-py#g" -e "s#$fx#/tmp/skade-fixtures#g" \
		-e "s#$sc#/tmp/skade_regress#g" -e "s#$fx2#/tmp/skade-fixture2#g" \
		-e "s#^\\\\set abs_srcdir '[^']*'\$#\\\\getenv abs_srcdir PG_ABS_SRCDIR#" \
		"$run/results/$t.out" >"$dest"
done
