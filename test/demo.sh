#!/usr/bin/env bash
# skade demo: installs what is missing, builds and installs skade, starts a
# throwaway PostgreSQL 15 with skade preloaded (port 5455, data in
# /tmp/skade-demo), and shows the catalog at work through its paths: the
# SQL API, the plain SQL a JDBC-catalog client sends, and the Iceberg REST
# protocol served by the server's own background workers (port 5456).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

PORT=${SKADE_DEMO_PORT:-5455}
REST_PORT=${SKADE_DEMO_REST_PORT:-$((PORT + 1))}
DATA=${SKADE_DEMO_DATA:-/tmp/skade-demo}

install_build_deps
build_and_install
log "starting a throwaway PostgreSQL on port $PORT (data in $DATA)"
start_server "$DATA" "$PORT"
# a real table written by Apache Iceberg's Java JdbcCatalog (test/data/clients/java)
WH=/tmp/skade-fixtures/java
mkdir -p "$WH" && cp -r "$SKADE_ROOT/test/data/clients/java/warehouse/." "$WH/" && chmod -R a+rX /tmp/skade-fixtures
echo "skade.allowed_roots = '$WH'" >>"$DATA/postgresql.conf"
printf "skade.rest_port = %s\nskade.rest_listen_addresses = '127.0.0.1'\n" "$REST_PORT" >>"$DATA/postgresql.conf"
as_pg "$PGBIN/pg_ctl" -D "$DATA" -w restart -l "$DATA/server.log" >/dev/null

run() { printf '\n\033[36m%s\033[0m\n' "$1"; pg "$PORT" -c "$1"; }

run "CREATE EXTENSION skade"
log "namespaces"
run "SELECT skade.create_namespace('analytics', '{\"owner\": \"data-eng\"}')"
run "SELECT skade.create_namespace('analytics.web')"
run "SELECT * FROM skade.list_namespaces('analytics')"
log "tables"
run "SELECT skade.register_table('analytics.web', 'events', 'file:///warehouse/analytics/web/events/metadata/00000-0a1b.metadata.json')"
run "SELECT * FROM skade.list_tables('analytics.web')"
log "a commit through the SQL API (compare-and-swap)"
run "SELECT skade.commit_table('analytics.web', 'events', 'file:///warehouse/analytics/web/events/metadata/00000-0a1b.metadata.json', 'file:///warehouse/analytics/web/events/metadata/00001-2c3d.metadata.json')"
log "a commit the way a stock JDBC-catalog client (Spark, Trino, JdbcCatalog, pyiceberg) sends it"
run "UPDATE iceberg_tables SET metadata_location = 'file:///warehouse/analytics/web/events/metadata/00002-4e5f.metadata.json', previous_metadata_location = 'file:///warehouse/analytics/web/events/metadata/00001-2c3d.metadata.json' WHERE catalog_name = 'skade' AND table_namespace = 'analytics.web' AND table_name = 'events' AND metadata_location = 'file:///warehouse/analytics/web/events/metadata/00001-2c3d.metadata.json' AND (iceberg_type = 'TABLE' OR iceberg_type IS NULL)"
log "a stale commit loses with SQLSTATE 40001 and says what won"
pg "$PORT" -c "SELECT skade.commit_table('analytics.web', 'events', 'file:///warehouse/analytics/web/events/metadata/00001-2c3d.metadata.json', 'file:///warehouse/analytics/web/events/metadata/00002-ffff.metadata.json')" || true
run "SELECT * FROM skade.load_table('analytics.web', 'events', snapshots => 'none')"
log "the commit log: both paths, in order"
run "SELECT seq, op, source, table_namespace || '.' || table_name AS tbl, metadata_location, committed_by FROM skade.commit_log ORDER BY seq"

log "a real Iceberg table (written by Java JdbcCatalog): its five metadata files committed in order"
files=( $(ls "$WH"/fixtures/events/metadata/*.metadata.json | sort) )
run "SELECT skade.create_namespace('fixtures')"
run "SELECT skade.register_table('fixtures', 'events', '${files[0]}')"
for ((i = 1; i < ${#files[@]}; i++)); do
    pg "$PORT" -q -c "SELECT skade.commit_table('fixtures', 'events', '${files[i-1]}', '${files[i]}')" >/dev/null
done
log "load_table: pointer and metadata, from shared memory (L1 pointer mirror + L0 metadata cache)"
run "SELECT regexp_replace(metadata_location, '^.*/', '') AS file, metadata->>'format-version' AS v, metadata->>'table-uuid' AS uuid, metadata->>'current-snapshot-id' AS current, length(metadata::text) AS bytes FROM skade.load_table('fixtures', 'events')"
run "SELECT snapshot_id, parent_id, sequence_number, committed_at, operation, summary->>'added-records' AS added, is_current FROM skade.snapshots('fixtures', 'events')"
run "SELECT op, regexp_replace(metadata_location, '^.*/', '') AS file, snapshot_id FROM skade.commit_log WHERE table_namespace = 'fixtures' AND table_name = 'events' ORDER BY seq"
log "time travel through the STree64 index (built by the background worker, published in DSM)"
run "SELECT skade.rebuild_index() AS generation"
run "SELECT generation, entries, coverage, bytes, round(build_ms::numeric, 2) AS build_ms, implementation FROM skade.index_status()"
run "SELECT r.snapshot_id, r.name, regexp_replace(r.metadata_location, '^.*/', '') AS file FROM skade.resolve_many((SELECT array_agg(snapshot_id) FROM skade.snapshots('fixtures', 'events')) || 42::bigint) r"
run "SELECT a.snapshot_id, regexp_replace(a.metadata_location, '^.*/', '') AS file, a.metadata->>'current-snapshot-id' AS current_there FROM skade.snapshots('fixtures', 'events') s, skade.load_table_at('fixtures', 'events', s.snapshot_id) a ORDER BY s.sequence_number LIMIT 1"
run "SELECT h.made_current_at AS asked_at, a.snapshot_id, regexp_replace(a.metadata_location, '^.*/', '') AS file FROM skade.history('fixtures', 'events') h, skade.load_table_as_of('fixtures', 'events', h.made_current_at + interval '1 millisecond', snapshots => 'none') a"
log "scan planning in SQL: manifests (Avro, libavro-c), files with decoded statistics, plan_files with a filter"
run "SELECT regexp_replace(path, '^.*/', '') AS manifest, sequence_number, added_files_count, added_rows_count, partitions FROM skade.manifests('fixtures', 'events')"
run "SELECT regexp_replace(file_path, '^.*/', '') AS file, partition, record_count, columns->'id'->'lower' AS id_min, columns->'id'->'upper' AS id_max FROM skade.files('fixtures', 'events')"
run "SELECT regexp_replace(file_path, '^.*/', '') AS file, partition FROM skade.plan_files('fixtures', 'events', '{\"type\": \"and\", \"left\": {\"type\": \"gt\", \"term\": \"id\", \"value\": 4}, \"right\": {\"type\": \"eq\", \"term\": \"category\", \"value\": \"a\"}}')"
run "SELECT hits, misses, entries, bytes, pointer_hits, manifest_hits, manifest_misses, manifest_entries, manifest_bytes FROM skade.cache_stats()"

log "the same catalog over the Iceberg REST protocol (background workers on port $REST_PORT)"
run "CREATE ROLE demo_rest LOGIN; GRANT skade_writer TO demo_rest"
TOKEN=$(pg "$PORT" -qAt -c "SELECT skade.rest_create_token('demo_rest', '1 day', 'demo')")
python3 - "$REST_PORT" "$TOKEN" <<'PY'
import json, sys, urllib.request
base, token = f"http://127.0.0.1:{sys.argv[1]}/v1", sys.argv[2]
def call(path, **headers):
    req = urllib.request.Request(base + path, headers={"Authorization": f"Bearer {token}", **headers})
    try:
        with urllib.request.urlopen(req) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()
status, _, body = call("/config?warehouse=skade")
print("GET /v1/config ->", status, "prefix", json.loads(body)["overrides"]["prefix"],
      "and", len(json.loads(body)["endpoints"]), "endpoints")
status, _, body = call("/skade/namespaces")
print("GET /v1/skade/namespaces ->", status, json.loads(body)["namespaces"])
status, headers, body = call("/skade/namespaces/fixtures/tables/events?snapshots=refs")
meta = json.loads(body)
print("GET .../tables/events?snapshots=refs ->", status, meta["metadata-location"].rsplit("/", 1)[-1],
      "ETag", headers["ETag"], len(body), "bytes")
status, _, body = call("/skade/namespaces/fixtures/tables/events?snapshots=refs", **{"If-None-Match": headers["ETag"]})
print("the same with If-None-Match ->", status, len(body), "bytes")
PY

cat <<TXT

skade is running.  Connect with:
    psql -h 127.0.0.1 -p $PORT -U postgres
JDBC clients (Java JdbcCatalog, Spark, Trino):
    uri = jdbc:postgresql://127.0.0.1:$PORT/postgres?user=postgres   catalog name = skade
pyiceberg SqlCatalog:
    uri = postgresql+psycopg2://postgres@127.0.0.1:$PORT/postgres     catalog name = skade
Iceberg REST clients (Spark, Trino, pyiceberg RestCatalog, ...):
    uri = http://127.0.0.1:$REST_PORT   warehouse = skade   token = $TOKEN
Stop it with:
    runuser -u postgres -- $PGBIN/pg_ctl -D $DATA stop
TXT
