"""skade.swap_table(ns, live, temp) on tables Spark wrote: Spark reads temp's
rows, schema and snapshots under live, temp no longer exists (its name is free
again), and Spark commits to live afterwards."""

import pytest
from pyspark.errors import AnalysisException

from sparkenv import CAT, SparkTable

NS = "swap"


def test_swap_table_spark_reads_temp_under_live(spark, skade):
    spark.sql(f"CREATE NAMESPACE {CAT}.{NS}")
    spark.sql(f"CREATE TABLE {CAT}.{NS}.live (id bigint, v string) USING iceberg")
    spark.sql(f"INSERT INTO {CAT}.{NS}.live VALUES (1, 'old'), (2, 'old')")
    spark.sql(f"INSERT INTO {CAT}.{NS}.live VALUES (3, 'old')")
    # the rebuilt table: another schema and partitioning, its own history
    spark.sql(f"CREATE TABLE {CAT}.{NS}.temp (id bigint, v string, extra int) USING iceberg PARTITIONED BY (v)")
    spark.sql(f"INSERT INTO {CAT}.{NS}.temp VALUES (10, 'new', 1), (11, 'new', 2)")
    spark.sql(f"INSERT INTO {CAT}.{NS}.temp VALUES (12, 'newer', 3)")
    live, temp = SparkTable(spark, NS, "live"), SparkTable(spark, NS, "temp")
    temp_rows = temp.rows()
    temp_snaps = temp.snapshot_ids()
    temp_at = temp.history_by_snapshot()
    temp_files = temp.data_files()
    temp_loc = skade.metadata_location(NS, "temp")

    assert skade.one("SELECT skade.swap_table(%s, 'live', 'temp', catalog => %s)", (NS, CAT)) == temp_loc

    assert skade.metadata_location(NS, "live") == temp_loc
    assert live.rows() == temp_rows == [(10, "new", 1), (11, "new", 2), (12, "newer", 3)]
    assert spark.table(live.ident).columns == ["id", "v", "extra"]
    assert live.snapshot_ids() == temp_snaps
    for sid in temp_snaps:
        assert live.rows_at(sid) == temp_at[sid]
    assert live.data_files() == temp_files
    assert live.rows("WHERE v = 'newer'") == [(12, "newer", 3)]
    assert [r.tableName for r in spark.sql(f"SHOW TABLES IN {CAT}.{NS}").collect()] == ["live"]
    with pytest.raises(AnalysisException, match="TABLE_OR_VIEW_NOT_FOUND"):
        spark.sql(f"SELECT * FROM {temp.ident}").collect()

    # Spark commits to the swapped table and reuses the name temp
    spark.sql(f"INSERT INTO {live.ident} VALUES (13, 'new', 4)")
    spark.sql(f"DELETE FROM {live.ident} WHERE id = 10")
    assert [r[0] for r in live.rows()] == [11, 12, 13]
    assert live.snapshot_ids()[:len(temp_snaps)] == temp_snaps
    spark.sql(f"CREATE TABLE {temp.ident} (id bigint) USING iceberg")
    spark.sql(f"INSERT INTO {temp.ident} VALUES (99)")
    assert temp.rows() == [(99,)]
    assert [r[0] for r in live.rows()] == [11, 12, 13]
