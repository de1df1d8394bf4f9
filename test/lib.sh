# Shared shell helpers for test/demo.sh, test/run-all.sh and bench/*.sh.
# Source it; it does nothing by itself.  Run as root on Debian 12: packages
# are installed with apt-get, the server runs as the unprivileged user
# "postgres" (PostgreSQL refuses to run as root).

SKADE_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PG_MAJOR=15
# PG_CONFIG (as for make) may name another installation, e.g. a private copy
# of the server where a parallel build installs without meeting others
if [ -n "${PG_CONFIG:-}" ]; then PGBIN=$("$PG_CONFIG" --bindir); else PGBIN=/usr/lib/postgresql/$PG_MAJOR/bin; fi
PG_USER=postgres

log() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

# install_packages PKG... : apt-get install whatever is not installed yet
install_packages() {
    local missing=()
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        log "installing ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
}

# build dependencies and the server
install_build_deps() {
    install_packages postgresql-$PG_MAJOR postgresql-server-dev-$PG_MAJOR postgresql-client-$PG_MAJOR \
        libjansson-dev zlib1g-dev libavro-dev libsnappy-dev libcurl4-openssl-dev libmicrohttpd-dev libssl-dev libgnutls28-dev pkg-config make gcc libipc-run-perl python3
}

# build_and_install [TREE] : build TREE (default the checkout) and install it;
# the install holds a lock, so that runs at once do not interleave their copies
build_and_install() {
    local tree=${1:-$SKADE_ROOT}
    log "building and installing skade"
    make -C "$tree" -s clean >/dev/null 2>&1 || true
    make -C "$tree" -s
    flock /tmp/skade-install.lock make -C "$tree" -s install >/dev/null
}

# bench_build_and_install : build_and_install, unless SKADE_BENCH_NO_BUILD=1 says the
# skade already installed is to be used (bench/report builds once for all the benchmarks)
bench_build_and_install() {
    if [ "${SKADE_BENCH_NO_BUILD:-0}" = 1 ]; then
        log "SKADE_BENCH_NO_BUILD=1: using the skade already installed"
    else
        build_and_install
    fi
}

# build_loadgen OUT : the benchmarks' HTTP/SQL load generator (bench/rest/*.go, Go's standard
# library, one package without a module) built into OUT; Go installed when missing
build_loadgen() {
    local go
    go=$(command -v go || echo /usr/local/go/bin/go)
    [ -x "$go" ] || { install_packages golang-go; go=$(command -v go); }
    (cd "$SKADE_ROOT/bench/rest" && "$go" build -o "$1" $(ls *.go | grep -v '_test\.go$'))
}

# a TCP port on 127.0.0.1 that nothing listens on now
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# tools_python : a Python with the test tools' packages (fastavro, cramjam),
# in a virtualenv of the checkout made once (under a lock)
tools_python() {
    local venv=$SKADE_ROOT/test/.venv-tools
    (
        flock 9
        [ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv "$venv" >&2 || exit 1
        "$venv/bin/python" -m pip install --disable-pip-version-check -q \
            -r "$SKADE_ROOT/test/fuzz/requirements.txt" >&2
    ) 9>"$venv.lock" || return 1
    echo "$venv/bin/python"
}

as_pg() { runuser -u "$PG_USER" -- "$@"; }

# start_server DATADIR PORT : a throwaway cluster with skade preloaded
start_server() {
    local dir=$1 port=$2
    if [ -f "$dir/postmaster.pid" ]; then
        as_pg "$PGBIN/pg_ctl" -D "$dir" -m fast stop >/dev/null 2>&1 || true
    fi
    rm -rf "$dir"
    mkdir -p "$dir" && chown "$PG_USER" "$dir"
    as_pg "$PGBIN/initdb" -D "$dir" -A trust -U postgres --encoding=UTF8 >/dev/null
    cat >>"$dir/postgresql.conf" <<CONF
shared_preload_libraries = 'skade'
port = $port
listen_addresses = '127.0.0.1'
unix_socket_directories = '/tmp'
max_connections = 60
CONF
    as_pg "$PGBIN/pg_ctl" -D "$dir" -l "$dir/server.log" -w start >/dev/null
}

stop_server() {
    local dir=$1
    [ -f "$dir/postmaster.pid" ] && as_pg "$PGBIN/pg_ctl" -D "$dir" -m fast -w stop >/dev/null 2>&1 || true
}

# psql against a throwaway server on 127.0.0.1
pg() { local port=$1; shift; psql -X -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U postgres "$@"; }
