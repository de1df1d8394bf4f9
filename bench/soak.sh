#!/usr/bin/env bash
# Issue 10 soak: does a backend's memory stay flat over many calls of each
# read function?  For each function, one fresh backend calls it in a loop
# (a procedure that commits every 1,000 calls, as a client's transactions
# would) and prints its RssAnon after 10k, 100k and 200k calls, with the
# growth per call between 10k and 200k.  The baseline is the same loop
# calling a plain SQL function of the same shape (SELECT 1): its growth is
# the noise floor.  Fixtures: the Avro tables of test/data/avro (deflate, null,
# snappy) and metadata of test/data/metadata.
# Usage: bash bench/soak.sh [calls=200000] [function ...]
set -euo pipefail
. "$(dirname "$0")/../test/lib.sh"

CALLS=${1:-200000}
shift || true
PORT=${SKADE_BENCH_PORT:-5468}
DATA=$(mktemp -d /tmp/skade-bench-soak-pg.XXXXXX)
FIX=$(mktemp -d /tmp/skade-bench-soak-fix.XXXXXX)

install_build_deps
bench_build_and_install
# the Avro fixtures record absolute paths under /tmp/skade-fixtures/avro
mkdir -p /tmp/skade-fixtures/avro
cp -r "$SKADE_ROOT/test/data/avro/warehouse/." /tmp/skade-fixtures/avro/
cp "$SKADE_ROOT"/test/data/metadata/*.json "$FIX/"
chmod -R a+rX /tmp/skade-fixtures "$FIX"
start_server "$DATA" "$PORT"
echo "skade.allowed_roots = '/tmp/skade-fixtures,$FIX'" >>"$DATA/postgresql.conf"
as_pg "$PGBIN/pg_ctl" -D "$DATA" -w restart -l "$DATA/server.log" >/dev/null
trap 'stop_server "$DATA"; rm -rf "$DATA" "$FIX"' EXIT
pg "$PORT" -q postgres <<SQL
CREATE EXTENSION skade;
SELECT skade.create_namespace('avro');
SELECT skade.register_table('avro', t, 'file:///tmp/skade-fixtures/avro/' || t || '/metadata/' || f)
FROM (VALUES ('v2_deflate', '00003-8e5ecf91-2abf-4cc5-952e-273716cbed30.metadata.json'),
             ('v2_snappy', '00003-a0718e4b-d226-42af-a147-53802781f53c.metadata.json'),
             ('v2_null', '00003-5a979ef0-a2ce-4858-b3ee-bb67710a668b.metadata.json')) v(t, f);
SELECT skade.register_table('avro', 'md', '$FIX/00003-v2.metadata.json');
CREATE FUNCTION baseline() RETURNS int LANGUAGE sql AS 'SELECT 1';
-- the backend's anonymous resident memory, in kB
CREATE FUNCTION rss_kb() RETURNS bigint LANGUAGE sql AS \$\$
	SELECT (regexp_match(pg_read_file('/proc/self/status'), 'RssAnon:\s+(\d+)'))[1]::bigint
\$\$;
-- n calls of query, committing every 1,000 (pins and the like end with a transaction)
CREATE PROCEDURE soak(query text, n int) LANGUAGE plpgsql AS \$\$
DECLARE
	i int;
	r bigint;
BEGIN
	FOR i IN 1 .. n LOOP
		EXECUTE query INTO r;
		IF i % 1000 = 0 THEN
			COMMIT;
		END IF;
	END LOOP;
END \$\$;
SQL

# function label -> one call (returns a number)
declare -A Q=(
    [baseline]="SELECT baseline()"
    [load_table]="SELECT length(metadata::text) FROM skade.load_table('avro', 'md')"
    [table_metadata]="SELECT length(skade.table_metadata('avro', 'md')::text)"
    [snapshots]="SELECT count(*) FROM skade.snapshots('avro', 'md')"
    [load_table_at]="SELECT snapshot_id FROM skade.load_table_at('avro', 'md', 3051729675574597002, snapshots => 'none')"
    [resolve_many]="SELECT count(*) FROM skade.resolve_many(ARRAY[3051729675574597000, 3051729675574597002, 42])"
    [manifests]="SELECT count(*) FROM skade.manifests('avro', 'v2_deflate')"
    [files]="SELECT count(*) FROM skade.files('avro', 'v2_snappy')"
    [plan_files]="SELECT count(*) FROM skade.plan_files('avro', 'v2_null', '{\"type\": \"eq\", \"term\": \"category\", \"value\": \"a\"}')"
)
ORDER=(baseline load_table table_metadata snapshots load_table_at resolve_many manifests files plan_files)
[ $# -gt 0 ] && ORDER=("$@")

first=$((CALLS / 20))
mid=$((CALLS / 2))
printf '\n%-16s %12s %12s %12s %14s\n' function "RssAnon@$first" "@$mid" "@$CALLS" "B/call $first..$CALLS"
for f in "${ORDER[@]}"; do
    q=${Q[$f]}
    out=$(pg "$PORT" -qAt postgres <<SQL
CALL soak(\$q\$$q\$q\$, $first);
SELECT rss_kb();
CALL soak(\$q\$$q\$q\$, $((mid - first)));
SELECT rss_kb();
CALL soak(\$q\$$q\$q\$, $((CALLS - mid)));
SELECT rss_kb();
SQL
)
    read -r a b c <<<"$(echo $out)"
    printf '%-16s %9s kB %9s kB %9s kB %14.2f\n' "$f" "$a" "$b" "$c" \
        "$(echo "($c - $a) * 1024 / ($CALLS - $first)" | bc -l)"
done
