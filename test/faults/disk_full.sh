#!/usr/bin/env bash
# A full disk under skade's writes: the table's warehouse is a
# small tmpfs (mounted here, so this needs root: run-all runs it as root; the
# server runs as postgres).  Filled up, update_table and create_table fail
# with 53100 (disk_full), the pointer and the commit log are unchanged and no
# partial metadata file is left; with room again, commits work and nothing
# is an orphan.  Exits 0 when everything held, 1 otherwise.
#   test/faults/disk_full.sh
set -uo pipefail
. "$(dirname "$0")/../lib.sh"

[ "$(id -u)" -eq 0 ] || { echo "disk_full.sh: needs root (it mounts a tmpfs)"; exit 1; }
PORT=$(free_port)
BASE=$(mktemp -d /tmp/skade-diskfull.XXXXXX)
chmod 755 "$BASE"
WH=$BASE/wh
mkdir -p "$WH"
if ! mount -t tmpfs -o size=2m,mode=0777 tmpfs "$WH"; then
    echo "disk_full.sh: cannot mount a tmpfs here"; rm -rf "$BASE"; exit 1
fi
cleanup() { stop_server "$BASE/pg" 2>/dev/null; umount "$WH" 2>/dev/null; rm -rf "$BASE"; }
trap cleanup EXIT
start_server "$BASE/pg" "$PORT"
cat >>"$BASE/pg/postgresql.conf" <<CONF
skade.allowed_roots = '$WH'
skade.write_roots = '$WH'
CONF
as_pg "$PGBIN/pg_ctl" -D "$BASE/pg" -w restart -l "$BASE/pg/server.log" >/dev/null
q() { pg "$PORT" -qAt -c "$1" postgres 2>&1; }
q 'CREATE EXTENSION skade' >/dev/null
q "SELECT skade.create_namespace('f', '{\"location\": \"$WH/f\"}')" >/dev/null
q "SELECT skade.create_table('f', 't', '{\"fields\": [{\"id\": 1, \"name\": \"id\", \"required\": true, \"type\": \"long\"}]}')" >/dev/null
before=$(q "SELECT metadata_location FROM skade.load_table('f', 't', 'none')")
log_before=$(q "SELECT count(*) FROM skade.commit_log")
files_before=$(ls "$WH/f/t/metadata" | wc -l)

fails=0
check() { if [ "$2" = "$3" ]; then echo "ok - $1"; else echo "not ok - $1: got '$2', expected '$3'"; fails=$((fails + 1)); fi; }

# fill the disk, leaving less than a metadata file (a big property makes it ~100 kB)
dd if=/dev/zero of="$WH/filler" bs=4k 2>/dev/null
out=$(pg "$PORT" -qAt -v VERBOSITY=verbose -c \
    "SELECT skade.update_table('f', 't', '[]', jsonb_build_array(jsonb_build_object('action', 'set-properties', 'updates', jsonb_build_object('big', repeat('x', 60000)))))" postgres 2>&1)
check "update_table on a full disk fails with 53100" "$(echo "$out" | grep -o 'ERROR:  53100' | head -1)" "ERROR:  53100"
echo "$out" | grep -q "No space left on device" && echo "ok - the message says why" || { echo "not ok - the message: $out"; fails=$((fails + 1)); }
check "the pointer is unchanged" "$(q "SELECT metadata_location FROM skade.load_table('f', 't', 'none')")" "$before"
check "nothing was logged" "$(q "SELECT count(*) FROM skade.commit_log")" "$log_before"
check "no partial file is left" "$(ls "$WH/f/t/metadata" | wc -l)" "$files_before"
out=$(pg "$PORT" -qAt -v VERBOSITY=verbose -c \
    "SELECT skade.create_table('f', 'u', '{\"fields\": [{\"id\": 1, \"name\": \"id\", \"required\": true, \"type\": \"long\"}]}', properties => jsonb_build_object('big', repeat('x', 60000)))" postgres 2>&1)
check "create_table on a full disk fails with 53100" "$(echo "$out" | grep -o 'ERROR:  53100' | head -1)" "ERROR:  53100"
check "and no table was made" "$(q "SELECT skade.table_exists('f', 'u')")" "f"

# room again: commits work, nothing is left to sweep
rm -f "$WH/filler"
check "with room again update_table commits" \
    "$(q "SELECT skade.update_table('f', 't', '[]', '[{\"action\": \"set-properties\", \"updates\": {\"k\": \"v\"}}]') <> '$before'")" "t"
check "no orphan files" "$(q 'SELECT count(*) FROM skade.orphan_files()')" "0"
echo "disk_full.sh: $fails failed"
[ "$fails" -eq 0 ]
