#!/usr/bin/env bash
# The change feed (issue 31): skade.changes() read throughput over a commit log of ROWS rows
# (default 1,000,000, written through the JDBC path's trigger, so each has its feed row), and
# the latency from a commit to a waiting consumer having the change, p50/p99 -- each beside its
# baseline measured in the same run on the same server:
#   throughput: changes() a page of 10,000 at a time, server-side, vs the plain poll of the log
#               "SELECT ... FROM skade.commit_log WHERE seq > $1 ORDER BY seq LIMIT 10000" (which
#               is not exact: it may pass a change still being committed), each page returned by a
#               set-returning function as changes() returns its own;
#   latency:    a writer commits a change every 20 ms; a consumer that LISTENs on skade_changes
#               and reads changes() when woken, vs one that polls the log with that plain SELECT
#               every POLL_MS (default 100) ms.
# Usage: bash bench/changes.sh [rows] [latency-seconds]
set -euo pipefail
. "$(dirname "$0")/../test/lib.sh"

ROWS=${1:-1000000}
SECS=${2:-20}
POLL_MS=${SKADE_BENCH_POLL_MS:-100}
PORT=${SKADE_BENCH_PORT:-5469}
TMPBASE=${SKADE_BENCH_TMP:-/tmp}
DATA=$(mktemp -d "$TMPBASE/skade-bench-changes-pg.XXXXXX")

install_build_deps
bench_build_and_install
start_server "$DATA" "$PORT"
trap 'stop_server "$DATA"; rm -rf "$DATA"' EXIT

VENV=${SKADE_VENV:-$SKADE_ROOT/test/interop/python/.venv}
python3 -c 'import ensurepip, venv' 2>/dev/null || install_packages python3-venv
(
    flock 9
    [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
    "$VENV/bin/python" -m pip install --disable-pip-version-check -q -r "$SKADE_ROOT/test/interop/python/requirements.txt"
) 9>"$VENV.lock"

log "a commit log of $ROWS rows (JDBC inserts through the trigger)"
pg "$PORT" -q <<SQL
CREATE EXTENSION skade;
-- the LISTEN consumer's wake-up (off by default)
ALTER SYSTEM SET skade.notify_changes = on;
SELECT pg_reload_conf();
SELECT skade.create_namespace('b');
\timing on
INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, metadata_location, iceberg_type)
SELECT 'skade', 'b', 't' || g, 'file:///bench/t' || g || '/v1.metadata.json', 'TABLE'
FROM generate_series(1, $ROWS) g;
\timing off
VACUUM ANALYZE skade.commit_log, skade.commit_log_feed;
SQL
echo "log rows: $(pg "$PORT" -Atc 'SELECT count(*) FROM skade.commit_log') feed rows: $(pg "$PORT" -Atc 'SELECT count(*) FROM skade.commit_log_feed')"

log "read throughput: the whole log, 10,000 a page, 3 runs each, interleaved"
cat >"$DATA/read.sql" <<'SQL'
-- the plain poll, returning its page as changes() returns its own (a set-returning function)
CREATE FUNCTION pg_temp.poll(pos bigint, n integer)
	RETURNS TABLE (seq bigint, op text, namespace text, name text, metadata_location text,
				   previous_metadata_location text, committed_at timestamptz, committed_by name)
LANGUAGE plpgsql STABLE AS $$
BEGIN
	RETURN QUERY SELECT l.seq, l.op, l.table_namespace, l.table_name, l.metadata_location,
						l.previous_metadata_location, l.committed_at, l.committed_by
				   FROM skade.commit_log l WHERE l.seq > pos ORDER BY l.seq LIMIT n;
END $$;
CREATE FUNCTION pg_temp.read_all(feed boolean) RETURNS double precision LANGUAGE plpgsql AS $$
DECLARE
	pos bigint := 0;
	last bigint;
	n bigint;
	total bigint := 0;
	t0 timestamptz := clock_timestamp();
BEGIN
	LOOP
		IF feed THEN
			SELECT max(c.seq), count(*) INTO last, n FROM skade.changes(pos, 10000) c;
		ELSE
			SELECT max(p.seq), count(*) INTO last, n FROM pg_temp.poll(pos, 10000) p;
		END IF;
		EXIT WHEN n = 0;
		total := total + n;
		pos := last;
	END LOOP;
	RETURN total / extract(epoch FROM clock_timestamp() - t0);
END $$;
SQL
feed_rates=() poll_rates=()
for r in 1 2 3; do
    f=$(pg "$PORT" -Atq -f "$DATA/read.sql" -c 'SELECT round(pg_temp.read_all(true))')
    p=$(pg "$PORT" -Atq -f "$DATA/read.sql" -c 'SELECT round(pg_temp.read_all(false))')
    echo "run $r: changes() $f events/s, plain SELECT $p rows/s"
    feed_rates+=("$f") poll_rates+=("$p")
done
median() { printf '%s\n' "$@" | sort -n | sed -n "$(( ($# + 1) / 2 ))p"; }
F=$(median "${feed_rates[@]}") P=$(median "${poll_rates[@]}")
echo "read throughput (median of 3): changes() $F events/s, plain SELECT $P rows/s, changes()/plain $(python3 -c "print(f'{$F / $P:.2f}x')")"

log "latency from commit to consumer, $SECS s, a commit every 20 ms, polling every $POLL_MS ms"
"$VENV/bin/python" "$SKADE_ROOT/bench/changes.py" "host=127.0.0.1 port=$PORT user=postgres dbname=postgres" "$SECS" "$POLL_MS"
