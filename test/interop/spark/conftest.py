"""Shared fixtures of skade's Spark interop suite (run.sh prepares the environment).

Spark 3.5 with Iceberg's SparkCatalog named "spark_cat" over the stock
JdbcCatalog (type=jdbc, schema version V1) on the server in PGHOST/PGPORT/
PGUSER/PGDATABASE; new tables go under SKADE_WAREHOUSE.  One Spark session
(local[2]) for the whole run.  The catalog's table cache is off
(cache-enabled=false), as for any Spark that shares its tables with other
writers: with it on, Spark keeps a loaded table for 30 s and does not see
another writer's commits meanwhile.

Every run has its own server and warehouse (run.sh); each test module uses
namespaces of its own.
"""

from __future__ import annotations

import glob
import os
from pathlib import Path

import psycopg2
import pytest
from pyspark.sql import SparkSession

from sparkenv import CAT, Skade, pg_params

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="session")
def warehouse() -> Path:
    return Path(os.environ["SKADE_WAREHOUSE"]).resolve()


@pytest.fixture(scope="session")
def spark(warehouse):
    p = pg_params()
    jars = sorted(glob.glob(os.path.join(os.environ["SKADE_SPARK_JARS"], "*.jar")))
    assert any("iceberg-spark-runtime" in j for j in jars) and any("postgresql" in j for j in jars), jars
    scratch = os.environ.get("SKADE_SPARK_SCRATCH") or str(warehouse.parent)
    java_opts = (f"-Djava.io.tmpdir={scratch} -Dderby.system.home={scratch}"
                 f" -Dlog4j2.configurationFile={HERE / 'log4j2.properties'}")
    c = f"spark.sql.catalog.{CAT}"
    session = (
        SparkSession.builder.master("local[2]").appName("skade-spark-interop")
        .config("spark.jars", ",".join(jars))
        .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
        .config(c, "org.apache.iceberg.spark.SparkCatalog")
        .config(f"{c}.type", "jdbc")
        .config(f"{c}.uri", f"jdbc:postgresql://{p['host']}:{p['port']}/{p['dbname']}")
        .config(f"{c}.jdbc.user", p["user"])
        .config(f"{c}.jdbc.schema-version", "V1")
        .config(f"{c}.warehouse", warehouse.as_uri())
        .config(f"{c}.cache-enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.local.dir", scratch)
        .config("spark.sql.warehouse.dir", os.path.join(scratch, "spark-warehouse"))
        .config("spark.driver.extraJavaOptions", java_opts)
        # Spark's files and directories: the server (another user) writes
        # metadata and manifests beside them
        .config("spark.hadoop.fs.permissions.umask-mode", "000")
        .getOrCreate()
    )
    yield session
    session.stop()


@pytest.fixture(scope="session")
def skade() -> Skade:
    conn = psycopg2.connect(**pg_params())
    conn.autocommit = True
    yield Skade(conn)
    conn.close()
