"""Spark 3.5 (PySpark) with Iceberg 1.12.0's SparkCatalog of type rest on skade's REST port.

The catalog "rest" is Iceberg's stock RESTCatalog inside Spark: uri = SKADE_REST_URI, the
writer's Bearer token, warehouse = SKADE_REST_CATALOG (the JDBC catalog name skade serves
under that prefix), the table cache off (another writer's commits are seen at once).  A whole
life of a partitioned table in Spark SQL -- CREATE NAMESPACE, CREATE TABLE ... PARTITIONED BY,
INSERT, UPDATE, DELETE, MERGE, ALTER TABLE ADD COLUMN, time travel (VERSION AS OF), an
Iceberg view (CREATE VIEW through the REST view routes) read back, DROP -- with the row
counts Spark reads and, after each statement, skade's side through its SQL (as the
superuser): the commit-log rows the statement made (op, source 'api', committed_by the
token's role, the snapshot), skade.snapshots() against Spark's snapshots metadata table, and
the pointer row in iceberg_tables.

test/rest/run.sh (mode spark or all) starts the server and sets the environment; Spark runs
as root with umask 000 (the server, as postgres, writes metadata into the table directories
Spark writes data files into).
"""

from __future__ import annotations

import glob
import os
from pathlib import Path

import psycopg2
import pytest
from pyspark.sql import SparkSession

NS = "spark_rest"
T = f"rest.{NS}.orders"
V = f"rest.{NS}.per_cat"
CATALOG = os.environ["SKADE_REST_CATALOG"]
ROLE = os.environ["SKADE_REST_WRITER_ROLE"]
LOG4J = Path(__file__).resolve().parents[2] / "interop" / "spark" / "log4j2.properties"


@pytest.fixture(scope="module")
def spark():
    jars = sorted(glob.glob(os.path.join(os.environ["SKADE_SPARK_JARS"], "*.jar")))
    assert any("iceberg-spark-runtime" in j for j in jars), jars
    scratch = os.environ["SKADE_SPARK_SCRATCH"]
    c = "spark.sql.catalog.rest"
    session = (
        SparkSession.builder.master("local[2]").appName("skade-rest-spark")
        .config("spark.jars", ",".join(jars))
        .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
        .config(c, "org.apache.iceberg.spark.SparkCatalog")
        .config(f"{c}.type", "rest")
        .config(f"{c}.uri", os.environ["SKADE_REST_URI"])
        .config(f"{c}.token", os.environ["SKADE_REST_WRITER_TOKEN"])
        .config(f"{c}.rest.auth.type", "oauth2")
        .config(f"{c}.warehouse", CATALOG)
        .config(f"{c}.cache-enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.local.dir", scratch)
        .config("spark.sql.warehouse.dir", os.path.join(scratch, "spark-warehouse"))
        .config("spark.driver.extraJavaOptions",
                f"-Djava.io.tmpdir={scratch} -Dderby.system.home={scratch} -Dlog4j2.configurationFile={LOG4J}")
        .config("spark.hadoop.fs.permissions.umask-mode", "000")
        .getOrCreate()
    )
    yield session
    session.stop()


class Skade:
    """skade's side, as the superuser: commit log, snapshots(), pointer rows."""

    def __init__(self):
        self.conn = psycopg2.connect(os.environ["SKADE_REST_PG_DSN"])
        self.conn.autocommit = True
        self.mark = self.one("SELECT coalesce(max(seq), 0) FROM skade.commit_log")

    def query(self, sql, params=()):
        with self.conn.cursor() as cur:
            cur.execute(sql, params)
            return cur.fetchall()

    def one(self, sql, params=()):
        (row,) = self.query(sql, params)
        return row[0]

    def log(self, *expected, source="api"):
        """The commit-log rows since the last call: (op, name) in order, each made through
        the REST API (source, unless None) as the token's role; returns their snapshot ids."""
        rows = self.query(
            "SELECT seq, op, table_name, source, committed_by, snapshot_id FROM skade.commit_log"
            " WHERE catalog_name = %s AND seq > %s ORDER BY seq", (CATALOG, self.mark))
        assert [(r[1], r[2]) for r in rows] == list(expected), rows
        assert all(r[4] == ROLE for r in rows), rows
        if source is not None:
            assert all(r[3] == source for r in rows), rows
        if rows:
            self.mark = rows[-1][0]
        return [r[5] for r in rows]

    def snapshots(self, name):
        return [r[0] for r in self.query(
            "SELECT snapshot_id FROM skade.snapshots(%s, %s, %s) ORDER BY sequence_number", (NS, name, CATALOG))]

    def pointer(self, name):
        rows = self.query("SELECT metadata_location, iceberg_type FROM public.iceberg_tables"
                          " WHERE catalog_name = %s AND table_namespace = %s AND table_name = %s",
                          (CATALOG, NS, name))
        return rows[0] if rows else None


@pytest.fixture(scope="module")
def skade():
    s = Skade()
    yield s
    s.conn.close()


def count(spark, sql):
    return spark.sql(sql).collect()[0][0]


def spark_snapshots(spark):
    return [r.snapshot_id for r in spark.sql(
        f"SELECT snapshot_id FROM {T}.snapshots ORDER BY committed_at, snapshot_id").collect()]


def current(spark):
    (r,) = spark.sql(f"SELECT snapshot_id FROM {T}.refs WHERE name = 'main'").collect()
    return r.snapshot_id


def agree(spark, skade):
    """skade's snapshots() lists Spark's snapshots, in order."""
    assert skade.snapshots("orders") == spark_snapshots(spark)


def test_lifecycle(spark, skade):
    spark.sql(f"DROP TABLE IF EXISTS {T} PURGE")
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS rest.{NS} WITH DBPROPERTIES ('purpose' = 'spark')")
    assert NS in [r[0] for r in spark.sql("SHOW NAMESPACES IN rest").collect()]
    assert skade.one("SELECT property_value FROM public.iceberg_namespace_properties"
                     " WHERE catalog_name = %s AND namespace = %s AND property_key = 'purpose'",
                     (CATALOG, NS)) == "spark"
    skade.mark = skade.one("SELECT coalesce(max(seq), 0) FROM skade.commit_log")

    spark.sql(f"CREATE TABLE {T} (id bigint, cat string, amount double) USING iceberg"
              " PARTITIONED BY (cat) TBLPROPERTIES ('format-version' = '2')")
    skade.log(("create", "orders"))
    assert skade.pointer("orders")[1] in (None, "TABLE")
    assert count(spark, f"SELECT count(*) FROM {T}") == 0

    spark.sql(f"INSERT INTO {T} VALUES (1, 'a', 10.0), (2, 'b', 20.0), (3, 'a', 30.0)")
    (s1,) = skade.log(("commit", "orders"))
    assert s1 == current(spark)
    agree(spark, skade)
    assert count(spark, f"SELECT count(*) FROM {T}") == 3

    spark.sql(f"UPDATE {T} SET amount = amount + 1 WHERE id = 1")
    (s2,) = skade.log(("commit", "orders"))
    assert s2 == current(spark)
    assert spark.sql(f"SELECT amount FROM {T} WHERE id = 1").collect()[0][0] == 11.0

    spark.sql(f"DELETE FROM {T} WHERE id = 2")
    skade.log(("commit", "orders"))
    assert count(spark, f"SELECT count(*) FROM {T}") == 2

    spark.sql(f"MERGE INTO {T} t USING (SELECT 3L AS id, 'a' AS cat, 33.0D AS amount"
              " UNION ALL SELECT 4L, 'c', 40.0D) s ON t.id = s.id"
              " WHEN MATCHED THEN UPDATE SET t.amount = s.amount WHEN NOT MATCHED THEN INSERT *")
    skade.log(("commit", "orders"))
    assert sorted(tuple(r) for r in spark.sql(f"SELECT id, amount FROM {T}").collect()) == \
        [(1, 11.0), (3, 33.0), (4, 40.0)]
    agree(spark, skade)

    spark.sql(f"ALTER TABLE {T} ADD COLUMN note string")
    skade.log(("commit", "orders"))
    spark.sql(f"INSERT INTO {T} VALUES (5, 'b', 50.0, 'late')")
    skade.log(("commit", "orders"))
    assert count(spark, f"SELECT count(*) FROM {T}") == 4
    assert count(spark, f"SELECT count(*) FROM {T} WHERE note = 'late'") == 1
    agree(spark, skade)

    # time travel: the first INSERT's snapshot reads the first rows, in the old schema
    old = spark.sql(f"SELECT * FROM {T} VERSION AS OF {s1}")
    assert old.columns == ["id", "cat", "amount"]
    assert sorted(tuple(r) for r in old.collect()) == [(1, "a", 10.0), (2, "b", 20.0), (3, "a", 30.0)]
    assert count(spark, f"SELECT count(*) FROM {T} VERSION AS OF {s2}") == 3
    assert s1 in skade.snapshots("orders") and s2 in skade.snapshots("orders")

    # an Iceberg view through the REST view routes
    spark.sql(f"CREATE VIEW {V} AS SELECT cat, count(*) AS n FROM {T} GROUP BY cat")
    skade.log(("create", "per_cat"))
    assert skade.pointer("per_cat")[1] == "VIEW"
    assert sorted(tuple(r) for r in spark.sql(f"SELECT * FROM {V}").collect()) == [("a", 2), ("b", 1), ("c", 1)]
    assert "per_cat" in [r.viewName for r in spark.sql(f"SHOW VIEWS IN rest.{NS}").collect()]

    spark.sql(f"DROP VIEW {V}")
    skade.log(("drop", "per_cat"))
    spark.sql(f"DROP TABLE {T} PURGE")
    skade.log(("drop", "orders"))
    assert skade.pointer("orders") is None and skade.pointer("per_cat") is None
    spark.sql(f"DROP NAMESPACE rest.{NS}")
    assert NS not in [r[0] for r in spark.sql("SHOW NAMESPACES IN rest").collect()]


def test_view_commit_log_source(spark, skade):
    """CREATE VIEW / CREATE OR REPLACE VIEW / DROP VIEW through the REST view routes: each
    commit-log row has source 'api', as for tables."""
    ns = f"{NS}_v"
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS rest.{ns}")
    skade.mark = skade.one("SELECT coalesce(max(seq), 0) FROM skade.commit_log")
    spark.sql(f"CREATE VIEW rest.{ns}.v AS SELECT 1 AS one")
    spark.sql(f"CREATE OR REPLACE VIEW rest.{ns}.v AS SELECT 2 AS two")
    assert spark.sql(f"SELECT * FROM rest.{ns}.v").collect()[0][0] == 2
    spark.sql(f"DROP VIEW rest.{ns}.v")
    spark.sql(f"DROP NAMESPACE rest.{ns}")
    skade.log(("create", "v"), ("commit", "v"), ("drop", "v"))


def test_concurrent_appends_rebased(spark, skade):
    """Spark INSERTs from 4 threads into a table with skade.rebase-appends=true and the
    client's retries off: none fails (a commit that another lands just before it is rebased by
    the server, issue 30), every row is there once, history is linear, and skade's view of
    the files agrees with Spark's."""
    import threading

    H = f"rest.{NS}.hot"
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS rest.{NS}")
    spark.sql(f"DROP TABLE IF EXISTS {H} PURGE")
    spark.sql(f"CREATE TABLE {H} (id bigint, who string) USING iceberg TBLPROPERTIES ("
              "'format-version' = '2', 'skade.rebase-appends' = 'true', 'commit.retry.num-retries' = '0')")
    writers, per = 4, 4
    errors = []

    def run(w):
        for k in range(per):
            try:
                spark.sql(f"INSERT INTO {H} VALUES ({w * 100 + k}, 'w{w}')")
            except Exception as e:  # noqa: BLE001 -- the test counts every failure
                errors.append(f"{w}/{k}: {str(e)[:300]}")

    threads = [threading.Thread(target=run, args=(w,)) for w in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert count(spark, f"SELECT count(*) FROM {H}") == writers * per
    assert count(spark, f"SELECT count(DISTINCT id) FROM {H}") == writers * per
    snaps = spark.sql(f"SELECT snapshot_id, parent_id, manifest_list FROM {H}.snapshots").collect()
    assert len(snaps) == writers * per
    parents = {s.snapshot_id: s.parent_id for s in snaps}
    cur, chain = current_of(spark, H), 0
    while cur is not None:
        chain += 1
        cur = parents[cur]
    assert chain == writers * per
    rebased = sum("-rebased-" in s.manifest_list for s in snaps)
    print(f"spark: {writers * per} appends from {writers} threads, {rebased} rebased by the server")
    files = skade.one("SELECT count(*) FROM skade.files(%s, 'hot', NULL, %s) WHERE content = 'data'", (NS, CATALOG))
    assert files == count(spark, f"SELECT count(*) FROM {H}.files")
    spark.sql(f"DROP TABLE {H} PURGE")
    skade.mark = skade.one("SELECT coalesce(max(seq), 0) FROM skade.commit_log")


def current_of(spark, table):
    (r,) = spark.sql(f"SELECT snapshot_id FROM {table}.refs WHERE name = 'main'").collect()
    return r.snapshot_id
