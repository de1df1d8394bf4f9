#!/usr/bin/env bash
# skade demo: installs what is missing, builds and installs skade, starts a
# throwaway PostgreSQL 15 with skade preloaded (port 5455, data in
# /tmp/skade-demo), and shows the catalog at work through both paths: the
# SQL API and the plain SQL a JDBC-catalog client sends.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

PORT=${SKADE_DEMO_PORT:-5455}
DATA=${SKADE_DEMO_DATA:-/tmp/skade-demo}

install_build_deps
build_and_install
log "starting a throwaway PostgreSQL on port $PORT (data in $DATA)"
start_server "$DATA" "$PORT"

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

cat <<TXT

skade is running.  Connect with:
    psql -h 127.0.0.1 -p $PORT -U postgres
JDBC clients (Java JdbcCatalog, Spark, Trino):
    uri = jdbc:postgresql://127.0.0.1:$PORT/postgres?user=postgres   catalog name = skade
pyiceberg SqlCatalog:
    uri = postgresql+psycopg2://postgres@127.0.0.1:$PORT/postgres     catalog name = skade
Stop it with:
    runuser -u postgres -- $PGBIN/pg_ctl -D $DATA stop
TXT
