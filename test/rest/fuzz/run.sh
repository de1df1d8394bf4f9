#!/usr/bin/env bash
# skade's REST HTTP/JSON fuzzer against a throwaway server (see README.md).
#
#   test/rest/fuzz/run.sh [--seconds N] [--executions N] [--seed S] [--threads N]
#                         [--known FILE|none] [--keep] [--out DIR] [--replay DIR...]
#                         [--serve SECONDS] [-- fuzz.py options]
#
# Defaults: 90 s, seed 1, the known classes of known.txt (what CI runs).
# --seconds 0 with --executions N: stop after N requests only.
# --replay DIR...: only resend saved findings (their request.bin) and report.
# --serve SECONDS: no fuzzing; the seeded server stays up that long (for reproductions).
#
# As root: makes its own scratch directory (mktemp under /tmp) and free ports
# on 127.0.0.1, initdb's a cluster run by the user postgres with skade
# preloaded, the REST port (2 workers), a scratch warehouse under
# skade.allowed_roots/write_roots, roles rest_writer/rest_reader with tokens;
# runs fuzz.py (Python stdlib only), stops the server and removes the scratch
# directory unless --keep or there were findings.  PG_CONFIG picks the
# installation (as for make; test/lib.sh).  Exit status: 0 no finding,
# 1 findings, 2 setup failure.
set -uo pipefail
umask 022
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/../../lib.sh"

seconds=90 executions=0 seed=1 threads=6 known="$here/known.txt" keep=0 out="" replay=() extra=() serve=0
while [ $# -gt 0 ]; do
	case "$1" in
		--seconds) seconds=$2; shift 2 ;;
		--executions|--execs) executions=$2; shift 2 ;;
		--seed) seed=$2; shift 2 ;;
		--threads) threads=$2; shift 2 ;;
		--known) known=$2; shift 2 ;;
		--keep) keep=1; shift ;;
		--serve) serve=$2; shift 2 ;;
		--out) out=$2; shift 2 ;;
		--replay) shift
			while [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; do
				[ -f "$1/request.bin" ] && replay+=("$(cd "$1" && pwd)")
				shift
			done ;;
		--) shift; extra+=("$@"); break ;;
		-h|--help) sed -n '2,20p' "$0"; exit 0 ;;
		*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" -eq 0 ] || { echo "run.sh: run as root (the server runs as $PG_USER)" >&2; exit 2; }
[ -x "$PGBIN/postgres" ] || { echo "run.sh: no server at $PGBIN" >&2; exit 2; }
python=$(command -v python3.11 || command -v python3)

scratch=$(mktemp -d /tmp/skade-rest-fuzz.XXXXXXXXXX)
chmod 755 "$scratch"
data=$scratch/pgdata
wh=$scratch/warehouse
mkdir -p "$data" "$wh" "$scratch/sock" "$scratch/log"
chown "$PG_USER" "$data" "$wh" "$scratch/sock" "$scratch/log"
out=${out:-$scratch/out}
mkdir -p "$out"
log=$scratch/log/server.log

stop() {
	[ -f "$data/postmaster.pid" ] || return 0
	as_pg "$PGBIN/pg_ctl" -D "$data" -m fast -w -t 60 stop >/dev/null 2>&1 ||
		as_pg "$PGBIN/pg_ctl" -D "$data" -m immediate -w stop >/dev/null 2>&1 || true
}
setup_failed() { stop; echo "run.sh: setup failed ($1); scratch kept at $scratch" >&2; tail -n 20 "$log" 2>/dev/null; exit 2; }

as_pg "$PGBIN/initdb" -D "$data" -A trust -U postgres --encoding=UTF8 --no-locale >"$scratch/initdb.log" 2>&1 ||
	{ cat "$scratch/initdb.log"; setup_failed initdb; }
started=0
for attempt in 1 2 3 4 5; do
	port=$(free_port)
	rest_port=$(free_port)
	[ "$port" = "$rest_port" ] && continue
	cat >"$data/postgresql.auto.conf" <<CONF
# skade REST fuzz: a throwaway cluster
shared_preload_libraries = 'skade'
port = $port
listen_addresses = '127.0.0.1'
unix_socket_directories = '$scratch/sock'
max_connections = 40
max_worker_processes = 32
shared_buffers = 32MB
fsync = off
full_page_writes = off
synchronous_commit = off
log_min_messages = log
log_min_error_statement = panic
restart_after_crash = on
statement_timeout = 20s
skade.allowed_roots = '$scratch'
skade.write_roots = '$wh'
skade.warehouse = 'file://$wh'
skade.rest_port = $rest_port
skade.rest_listen_addresses = '127.0.0.1'
skade.rest_workers = 2
skade.rest_database = 'postgres'
skade.rest_idle_timeout = 1s
skade.rest_max_body = 1MB
skade.rest_max_connections = 32
CONF
	if as_pg bash -c "ulimit -v ${SKADE_REST_FUZZ_VMEM_KB:-8388608}; exec setsid '$PGBIN/pg_ctl' -D '$data' -l '$log' -w -t 60 start" >/dev/null 2>&1; then
		started=1
		break
	fi
done
[ $started -eq 1 ] || setup_failed "server start"
psql_() { "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U postgres -d postgres "$@"; }
psql_ >/dev/null <<'SQL' || setup_failed roles
CREATE EXTENSION skade;
CREATE ROLE rest_writer LOGIN;
CREATE ROLE rest_reader LOGIN;
GRANT skade_writer TO rest_writer;
GRANT skade_reader TO rest_reader;
SQL
token() { psql_ -At -c "SELECT skade.rest_create_token('$1', '1 day', 'test/rest/fuzz')"; }
writer=$(token rest_writer) && reader=$(token rest_reader) || setup_failed tokens
echo "run.sh: server on 127.0.0.1:$port, REST on 127.0.0.1:$rest_port, scratch $scratch, seed $seed, ${seconds}s"

args=(--rest-port "$rest_port" --pg-port "$port" --log "$log" --out "$out" --warehouse "$wh"
      --seconds "$seconds" --executions "$executions" --seed "$seed" --threads "$threads"
      --writer-token "$writer" --reader-token "$reader")
[ "$known" != none ] && [ -n "$known" ] && args+=(--known "$known")
[ ${#replay[@]} -gt 0 ] && args+=(--replay "${replay[@]}")
[ "$serve" != 0 ] && args+=(--serve "$serve")
trap ':' INT            # the fuzzer handles Ctrl-C (report); we still clean up
"$python" "$here/fuzz.py" "${args[@]}" "${extra[@]}"
rc=$?
trap - INT

stop
if [ $rc -eq 0 ] && [ $keep -eq 0 ]; then
	rm -rf "$scratch"
else
	[ $keep -eq 0 ] && rm -rf "$data" "$wh"     # the findings are self-contained; the log stays
	echo "run.sh: kept $scratch (findings: $out/findings, server log: $log)"
fi
exit $rc
