#!/usr/bin/env bash
# Prepares a hermetic pg_regress/isolation run (make installcheck runs it
# through REGRESS_PREP): per-run scratch directories, the fixtures copied
# there with their recorded paths rewritten, and the tests (test/regress/sql
# and expected, test/isolation/specs and expected) copied to OUT's sql/,
# expected/ and specs/ with the fixed paths they name replaced by this run's
# directories.  The new paths are exactly as long as the old ones, so
# expected output (column widths included) is unchanged.
#   /tmp/skade-fixtures    -> FX   = /tmp/skade-XXXXXXXX (the table fixtures)
#   /tmp/skade-fixture-py  -> FX/p (the pyiceberg fixtures)
#   /tmp/skade_regress     -> SC   = /tmp/skadeXXXXXXXX  (scratch the tests fill)
#   /tmp/skade-fixture2    -> FX2  = /tmp/skade-XXXXXXXX (a copy tests may destroy)
# Two runs at once use different directories.  OUT/paths lists them; the
# next preparation in OUT (or make regress-clean) removes them.
# Needs a Python 3 with fastavro and cramjam (SKADE_TEST_PYTHON, else a
# python3 that has them, else a virtualenv OUT/.venv from test/fuzz's
# requirements).
# Usage: regress_prepare.sh OUT SRCDIR
set -euo pipefail
out=$1
src=$(cd "$2" && pwd)
mkdir -p "$out"

py=${SKADE_TEST_PYTHON:-}
if [ -z "$py" ]; then
	if "${PYTHON:-/usr/bin/python3}" -c "import fastavro, cramjam" 2>/dev/null; then
		py=${PYTHON:-/usr/bin/python3}
	else
		[ -x "$out/.venv/bin/python" ] || "${PYTHON:-/usr/bin/python3}" -m venv "$out/.venv"
		"$out/.venv/bin/python" -m pip install --disable-pip-version-check -q \
			-r "$src/test/fuzz/requirements.txt"
		py=$out/.venv/bin/python
	fi
fi

if [ -f "$out/paths" ]; then
	while read -r d; do
		case "$d" in /tmp/skade*) rm -rf "$d" ;; esac
	done <"$out/paths"
fi
rm -rf "$out/sql" "$out/expected" "$out/specs"
fx=$(mktemp -d /tmp/skade-XXXXXXXX)
sc=$(mktemp -d /tmp/skadeXXXXXXXX)
fx2=$(mktemp -d /tmp/skade-XXXXXXXX)
printf '%s\n' "$fx" "$sc" "$fx2" >"$out/paths"
chmod 755 "$fx" "$sc" "$fx2"
"$py" "$src/test/fixtures.py" "$src/test/data" "$fx"
# a second copy the tests may destroy (expire_snapshots deleting files)
"$py" "$src/test/fixtures.py" "$src/test/data" "$fx2"
for d in sql expected specs; do
	mkdir -p "$out/$d"
	case $d in
	sql) from=("$src/test/regress/sql"/*) ;;
	expected) from=("$src/test/regress/expected"/* "$src/test/isolation/expected"/*) ;;
	specs) from=("$src/test/isolation/specs"/*) ;;
	esac
	for f in "${from[@]}"; do
		# (and the tests' source directory is the checkout, not OUT)
		sed -e "s#/tmp/skade-fixture-py#$fx/p#g" -e "s#/tmp/skade-fixtures#$fx#g" \
			-e "s#/tmp/skade-fixture2#$fx2#g" -e "s#/tmp/skade_regress#$sc#g" \
			-e "s#^\\\\getenv abs_srcdir PG_ABS_SRCDIR\$#\\\\set abs_srcdir '$src'#" \
			"$f" >"$out/$d/$(basename "$f")"
	done
done
echo "regress_prepare.sh: fixtures in $fx, scratch in $sc, tests in $out"
