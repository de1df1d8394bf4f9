"""Spark 3.5 over skade's REST catalog on https with an OAuth2 client credential:
Iceberg's RESTCatalog inside Spark fetches its token from the test's OpenID provider
(credential + oauth2-server-uri), refreshes it as it nears expiry, and trusts the REST port
through javax.net.ssl.trustStore. A table is made, written before and after the token's
lifetime, read back and dropped; skade's commit log names the credential's role.

Run by test/rest/python/secure_phase.py (through test/rest/run.sh), which holds the server
on TLS and sets SKADE_REST_SECURE_URI, SKADE_REST_CREDENTIAL, SKADE_REST_OAUTH2_URI,
SKADE_REST_TRUSTSTORE, SKADE_REST_SECURE_ROLE and SKADE_REST_TOKEN_LIFETIME.
"""

from __future__ import annotations

import glob
import os
import time
from pathlib import Path

import psycopg2
import pytest
from pyspark.sql import SparkSession

NS = "spark_secure"
T = f"sec.{NS}.t"
CATALOG = os.environ["SKADE_REST_CATALOG"]
ROLE = os.environ["SKADE_REST_SECURE_ROLE"]
LOG4J = Path(__file__).resolve().parents[2] / "interop" / "spark" / "log4j2.properties"


@pytest.fixture(scope="module")
def spark():
    jars = sorted(glob.glob(os.path.join(os.environ["SKADE_SPARK_JARS"], "*.jar")))
    scratch = os.environ["SKADE_SPARK_SCRATCH"]
    trust = os.environ["SKADE_REST_TRUSTSTORE"]
    c = "spark.sql.catalog.sec"
    session = (
        SparkSession.builder.master("local[2]").appName("skade-rest-spark-secure")
        .config("spark.jars", ",".join(jars))
        .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
        .config(c, "org.apache.iceberg.spark.SparkCatalog")
        .config(f"{c}.type", "rest")
        .config(f"{c}.uri", os.environ["SKADE_REST_SECURE_URI"])
        .config(f"{c}.credential", os.environ["SKADE_REST_CREDENTIAL"])
        .config(f"{c}.oauth2-server-uri", os.environ["SKADE_REST_OAUTH2_URI"])
        .config(f"{c}.scope", "catalog")
        .config(f"{c}.warehouse", CATALOG)
        .config(f"{c}.cache-enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.local.dir", scratch)
        .config("spark.sql.warehouse.dir", os.path.join(scratch, "spark-warehouse"))
        .config("spark.driver.extraJavaOptions",
                f"-Djava.io.tmpdir={scratch} -Dderby.system.home={scratch} -Dlog4j2.configurationFile={LOG4J}"
                f" -Djavax.net.ssl.trustStore={trust} -Djavax.net.ssl.trustStorePassword=changeit"
                " -Djavax.net.ssl.trustStoreType=PKCS12")
        .config("spark.hadoop.fs.permissions.umask-mode", "000")
        .getOrCreate()
    )
    yield session
    session.stop()


def log_since(conn, seq):
    with conn.cursor() as cur:
        cur.execute("SELECT seq, op, source, committed_by FROM skade.commit_log"
                    " WHERE catalog_name = %s AND table_namespace = %s AND seq > %s ORDER BY seq",
                    (CATALOG, NS, seq))
        return cur.fetchall()


def test_spark_over_https_with_a_refreshed_credential(spark):
    conn = psycopg2.connect(os.environ["SKADE_REST_PG_DSN"])
    conn.autocommit = True
    with conn.cursor() as cur:
        cur.execute("SELECT coalesce(max(seq), 0) FROM skade.commit_log")
        (mark,) = cur.fetchone()
    spark.sql(f"DROP TABLE IF EXISTS {T}")
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS sec.{NS}")
    spark.sql(f"CREATE TABLE {T} (id bigint, v string) USING iceberg")
    spark.sql(f"INSERT INTO {T} VALUES (1, 'before')")
    time.sleep(int(os.environ["SKADE_REST_TOKEN_LIFETIME"]) + 2)
    spark.sql(f"INSERT INTO {T} VALUES (2, 'after')")
    assert [tuple(r) for r in spark.sql(f"SELECT id, v FROM {T} ORDER BY id").collect()] == \
        [(1, "before"), (2, "after")]
    rows = log_since(conn, mark)
    assert [r[1] for r in rows] == ["create", "commit", "commit"], rows
    assert all(r[2] == "api" and r[3] == ROLE for r in rows), rows
    spark.sql(f"DROP TABLE {T}")
    spark.sql(f"DROP NAMESPACE sec.{NS}")
    conn.close()
