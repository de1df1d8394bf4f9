"""Spark 3.5 with Iceberg 1.12.0's REST catalog and S3FileIO, holding no S3 key: it writes
and reads an s3:// table through vended credentials, and reads it again through remote
signing (test/delegation/run.sh, spark phase).  The session's only storage settings are the
FileIO class and the delegation header; endpoint, region and keys come from skade."""
import glob
import os
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

LOG4J = Path(__file__).resolve().parents[1] / "interop" / "spark" / "log4j2.properties"


@pytest.fixture(scope="module")
def spark():
    jars = sorted(glob.glob(os.path.join(os.environ["SKADE_SPARK_JARS"], "*.jar")))
    jars.append(os.environ["SKADE_AWS_BUNDLE"])
    scratch = os.environ["SKADE_SPARK_SCRATCH"]
    b = (SparkSession.builder.master("local[2]").appName("skade-delegation")
         .config("spark.jars", ",".join(jars))
         .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
         .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
         .config("spark.sql.shuffle.partitions", "2").config("spark.local.dir", scratch)
         .config("spark.sql.warehouse.dir", os.path.join(scratch, "spark-warehouse"))
         .config("spark.driver.extraJavaOptions",
                 f"-Djava.io.tmpdir={scratch} -Dderby.system.home={scratch} -Dlog4j2.configurationFile={LOG4J}"
                 " -Daws.ec2MetadataDisabled=true"))
    for name, mode in (("vended", "vended-credentials"), ("signed", "remote-signing")):
        c = f"spark.sql.catalog.{name}"
        b = (b.config(c, "org.apache.iceberg.spark.SparkCatalog").config(f"{c}.type", "rest")
             .config(f"{c}.uri", os.environ["SKADE_DELEG_URI"])
             .config(f"{c}.token", os.environ["SKADE_DELEG_WRITER_TOKEN"])
             .config(f"{c}.rest.auth.type", "oauth2")
             .config(f"{c}.warehouse", os.environ["SKADE_DELEG_CATALOG"])
             .config(f"{c}.cache-enabled", "false")
             .config(f"{c}.io-impl", "org.apache.iceberg.aws.s3.S3FileIO")
             .config(f"{c}.header.X-Iceberg-Access-Delegation", mode))
    session = b.getOrCreate()
    yield session
    session.stop()


def test_spark_writes_and_reads_an_s3_table_without_keys(spark):
    spark.sql("CREATE NAMESPACE vended.sns")
    spark.sql("CREATE TABLE vended.sns.t (id bigint, s string) USING iceberg PARTITIONED BY (s)")
    spark.sql("INSERT INTO vended.sns.t VALUES (1, 'a'), (2, 'b'), (3, 'a')")
    spark.sql("DELETE FROM vended.sns.t WHERE id = 2")
    loc = spark.sql("DESCRIBE TABLE EXTENDED vended.sns.t").where("col_name = 'Location'").collect()[0][1]
    assert loc.startswith("s3://lake/wh/"), loc
    assert sorted(r.id for r in spark.sql("SELECT id FROM vended.sns.t").collect()) == [1, 3]
    files = spark.sql("SELECT file_path FROM vended.sns.t.files").collect()
    assert files and all(f.file_path.startswith(loc + "/") for f in files)
    # the same table through remote signing: read, then write
    assert sorted(r.id for r in spark.sql("SELECT id FROM signed.sns.t").collect()) == [1, 3]
    spark.sql("INSERT INTO signed.sns.t VALUES (4, 'c')")
    assert sorted(r.id for r in spark.sql("SELECT id FROM vended.sns.t").collect()) == [1, 3, 4]
