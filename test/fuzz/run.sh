#!/usr/bin/env bash
# skade's mutational fuzzer against a throwaway server (see README.md).
#
#   test/fuzz/run.sh [--seconds N] [--execs N] [--seed S] [--targets a,b,...]
#                    [--keep] [--out DIR] [--replay DIR...] [-- fuzz.py options]
#
# Defaults: a bounded pass of 180 s with seed 1 over every target (what CI
# runs).  --seconds 0 runs until interrupted (Ctrl-C prints the report).
# --replay DIR... only replays saved findings / regress cases.
#
# As root (like every test script here): makes its own scratch directory
# (mktemp under /tmp) and port, initdb's a cluster run by the user postgres
# with skade preloaded, runs fuzz.py, stops the server and removes the
# scratch directory unless --keep or there were findings.  Server binaries:
# ${SKADE_PGBIN:-/usr/lib/postgresql/15/bin}; virtualenv:
# ${SKADE_FUZZ_VENV:-test/fuzz/.venv}.  Exit status: 0 no finding, 1 findings,
# 2 setup failure.
set -uo pipefail
umask 022

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PGBIN=${SKADE_PGBIN:-/usr/lib/postgresql/15/bin}
PG_USER=postgres
venv="${SKADE_FUZZ_VENV:-$here/.venv}"

seconds=180 execs=0 seed=1 targets="" keep=0 out="" replay=() extra=()
while [ $# -gt 0 ]; do
	case "$1" in
		--seconds) seconds=$2; shift 2 ;;
		--execs) execs=$2; shift 2 ;;
		--seed) seed=$2; shift 2 ;;
		--targets) targets=$2; shift 2 ;;
		--keep) keep=1; shift ;;
		--out) out=$2; shift 2 ;;
		--replay) shift
			while [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; do
				[ -f "$1/case.json" ] && replay+=("$(cd "$1" && pwd)")   # (README.md etc. skipped)
				shift
			done ;;
		--) shift; extra+=("$@"); break ;;
		-h|--help) sed -n '2,19p' "$0"; exit 0 ;;
		*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" -eq 0 ] || { echo "run.sh: run as root (the server runs as $PG_USER)" >&2; exit 2; }
[ -x "$PGBIN/postgres" ] || { echo "run.sh: no server at $PGBIN" >&2; exit 2; }

# ---------------------------------------------------------------- virtualenv
python="${PYTHON:-python3.11}"
command -v "$python" >/dev/null 2>&1 || python=python3
(
	flock 9
	if [ ! -x "$venv/bin/python" ]; then
		echo "run.sh: creating virtualenv $venv"
		"$python" -m venv "$venv" || exit 1
	fi
	"$venv/bin/python" -m pip install --disable-pip-version-check -q -r "$here/requirements.txt"
) 9>"$venv.lock" || { echo "run.sh: could not set up $venv" >&2; exit 2; }

# ------------------------------------------------------------ scratch + server
scratch=$(mktemp -d /tmp/skade-fuzz.XXXXXXXXXX)
chmod 755 "$scratch"
data=$scratch/pgdata
mkdir -p "$data" "$scratch/sock" "$scratch/log" "$scratch/root"
chown "$PG_USER" "$data" "$scratch/sock" "$scratch/log"
out=${out:-$scratch/out}
mkdir -p "$out"
log=$scratch/log/server.log
as_pg() { runuser -u "$PG_USER" -- "$@"; }

free_port() {
	"$venv/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

stop_server() {
	[ -f "$data/postmaster.pid" ] || return 0
	as_pg "$PGBIN/pg_ctl" -D "$data" -m fast -w -t 60 stop >/dev/null 2>&1 ||
		as_pg "$PGBIN/pg_ctl" -D "$data" -m immediate -w stop >/dev/null 2>&1 || true
}
cleanup_on_error() { stop_server; echo "run.sh: setup failed; scratch kept at $scratch" >&2; exit 2; }

as_pg "$PGBIN/initdb" -D "$data" -A trust -U postgres --encoding=UTF8 --no-locale >"$scratch/log/initdb.log" 2>&1 ||
	{ cat "$scratch/log/initdb.log"; cleanup_on_error; }
cat >>"$data/postgresql.conf" <<CONF
# skade fuzz: a throwaway cluster
shared_preload_libraries = 'skade'
listen_addresses = '127.0.0.1'
unix_socket_directories = '$scratch/sock'
max_connections = 30
shared_buffers = 16MB
fsync = off
full_page_writes = off
# keep the log to what shows a crash: no per-error lines from the fuzz calls
log_min_messages = log
log_min_error_statement = panic
restart_after_crash = on
skade.allowed_roots = '$scratch'
# bombs are cut at these sizes: memory past --mem-limit-mb (256 MB) is then
# amplification, not a file as big as allowed
skade.max_metadata_size = ${SKADE_FUZZ_MAX_METADATA:-16MB}
skade.max_manifest_size = ${SKADE_FUZZ_MAX_MANIFEST:-32MB}
# small caches, so that eviction paths run
skade.metadata_cache_size = 2MB
skade.manifest_cache_size = 2MB
skade.pointer_cache_entries = 64
skade.index_rebuild_commits = 200
skade.index_rebuild_interval = 5
CONF
started=0
for attempt in 1 2 3 4 5; do
	port=$(free_port)
	echo "port = $port" >>"$data/postgresql.conf"
	# its own session (Ctrl-C must not stop it) and a cap on its memory
	if as_pg bash -c "ulimit -v ${SKADE_FUZZ_VMEM_KB:-8388608}; exec setsid '$PGBIN/pg_ctl' -D '$data' -l '$log' -w -t 60 start" >/dev/null 2>&1; then
		started=1
		break
	fi
done
[ $started -eq 1 ] || { tail -n 20 "$log"; cleanup_on_error; }
"$PGBIN/psql" -X -q -h 127.0.0.1 -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1 \
	-c 'CREATE EXTENSION skade' -f "$here/../functions.sql" >/dev/null || { tail -n 20 "$log"; cleanup_on_error; }
echo "run.sh: server on 127.0.0.1:$port, scratch $scratch, seed $seed, ${seconds}s"

# --------------------------------------------------------------------- fuzz
args=(--port "$port" --scratch "$scratch" --log "$log" --out "$out" --seconds "$seconds"
      --execs "$execs" --seed "$seed")
[ -n "$targets" ] && args+=(--targets "$targets")
[ ${#replay[@]} -gt 0 ] && args+=(--replay-only --replay "${replay[@]}")
prof=()                 # SKADE_FUZZ_PROFILE=FILE: cProfile the driver itself
[ -n "${SKADE_FUZZ_PROFILE:-}" ] && prof=(-m cProfile -o "$SKADE_FUZZ_PROFILE")
trap ':' INT            # the fuzzer handles Ctrl-C (report); we still clean up
"$venv/bin/python" "${prof[@]}" "$here/fuzz.py" "${args[@]}" "${extra[@]}"
rc=$?
trap - INT

stop_server
if [ $rc -eq 0 ] && [ $keep -eq 0 ]; then
	rm -rf "$scratch"
else
	[ $keep -eq 0 ] && rm -rf "$data"        # the findings are self-contained
	echo "run.sh: kept $scratch (findings: $out/findings, server log: $log)"
fi
exit $rc
