"""Tables Spark wrote (several INSERTs, one table partitioned by identity and
days), then skade.expire_snapshots(retain_last => 2) and
skade.rewrite_manifests(): Spark reads the same rows as before, time travel
to the retained snapshots reads what it read before, the expired snapshots
are gone from Spark's metadata tables and time travel to them fails, the
rewritten manifests (written by the server) plan the same files and prune by
partition correctly, and Spark commits on top afterwards, its own
expire_snapshots procedure included.  Format versions 1, 2 and 3.  And a merge-on-read table,
whose position deletes Spark still applies afterwards."""

from datetime import datetime, timezone

import pytest

from sparkenv import CAT, SparkTable, check_unreferenced, rows

BATCHES = [  # five INSERTs: five snapshots, five manifests
    [(1, "a", "2024-03-01 08:00:00", 1.5), (2, "b", "2024-03-01 09:00:00", 2.5)],
    [(3, "a", "2024-03-02 08:00:00", 3.5)],
    [(4, "c", "2024-03-02 10:00:00", None), (5, "b", "2024-03-03 11:00:00", 5.5)],
    [(6, "a", "2024-03-03 12:00:00", 6.5)],
    [(7, "c", "2024-03-04 13:00:00", 7.5), (8, "a", "2024-03-04 14:00:00", 8.5)],
]


def values(batch) -> str:
    return ", ".join(f"({i}, '{c}', TIMESTAMP '{ts}', {'NULL' if a is None else a})" for i, c, ts, a in batch)


def write_table(spark, ns: str, name: str, fv: int, partitioned: bool) -> SparkTable:
    parts = "PARTITIONED BY (category, days(ts))" if partitioned else ""
    spark.sql(f"CREATE TABLE {CAT}.{ns}.{name} (id bigint, category string, ts timestamp, amount double)"
              f" USING iceberg {parts} TBLPROPERTIES ('format-version' = '{fv}')")
    for batch in BATCHES:
        spark.sql(f"INSERT INTO {CAT}.{ns}.{name} VALUES {values(batch)}")
    return SparkTable(spark, ns, name)


@pytest.mark.parametrize("fv, partitioned", [(1, False), (1, True), (2, False), (2, True), (3, True)],
                         ids=["v1-flat", "v1-partitioned", "v2-flat", "v2-partitioned", "v3-partitioned"])
def test_expire_and_rewrite_on_spark_tables(spark, skade, fv, partitioned):
    ns = f"maint_v{fv}"
    name = "parted" if partitioned else "flat"
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {CAT}.{ns}")
    t = write_table(spark, ns, name, fv, partitioned)

    snaps = t.snapshots()
    assert len(snaps) == 5
    ids = [s["snapshot_id"] for s in snaps]
    at = t.history_by_snapshot()
    current = t.rows()
    assert len(current) == 8 and at[ids[-1]] == current
    files = t.data_files()
    partitions = t.partitions()
    by_b = t.rows("WHERE category = 'b'")
    by_day = t.rows("WHERE ts >= TIMESTAMP '2024-03-03 00:00:00' AND ts < TIMESTAMP '2024-03-04 00:00:00'")
    assert [r[0] for r in by_b] == [2, 5] and [r[0] for r in by_day] == [5, 6]

    # expire: the three oldest go; appends leave every manifest and data file
    # live, so only their manifest lists are no longer referenced
    referenced = t.referenced_files()
    gone = skade.expire(ns, name, retain_last=2)
    assert sorted(gone) == sorted((s["manifest_list"], "manifest-list") for s in snaps[:3])
    check_unreferenced(t, referenced, gone)
    assert t.snapshot_ids() == ids[3:]
    assert t.current_snapshot_id() == ids[-1]
    assert set(t.history_ids()) <= set(ids[3:])
    assert t.rows() == current
    for sid in ids[3:]:
        assert t.rows_at(sid) == at[sid]
    for sid in ids[:3]:
        with pytest.raises(Exception, match=str(sid)):
            t.rows_at(sid)
    assert t.data_files() == files and t.partitions() == partitions

    # rewrite: the five small manifests become one, in a "replace" snapshot
    # (v3: the files keep their row ids, the new manifest gets a fresh range)
    assert len(t.manifests()) == 5
    row_ids = rows(spark, f"SELECT id, _row_id FROM {CAT}.{ns}.{name}") if fv == 3 else None
    r = skade.rewrite_manifests(ns, name)
    assert (r["manifests_replaced"], r["manifests_created"], r["manifests_kept"]) == (5, 1, 0)
    assert r["entries_rewritten"] == len(files)
    assert r["metadata_location"] == skade.metadata_location(ns, name)
    snaps_after = t.snapshots()
    assert [s["snapshot_id"] for s in snaps_after] == ids[3:] + [r["snapshot_id"]]
    assert snaps_after[-1]["operation"] == "replace" and snaps_after[-1]["parent_id"] == ids[-1]
    (m,) = t.manifests()
    assert m["added_snapshot_id"] == r["snapshot_id"]
    assert m["added_data_files_count"] == 0 and m["existing_data_files_count"] == len(files)
    assert t.current_snapshot_id() == r["snapshot_id"]
    for sid in ids[3:]:
        assert t.rows_at(sid) == at[sid]
    assert t.rows_at(r["snapshot_id"]) == current
    if fv == 3:
        # row lineage: every row keeps its _row_id through the rewrite
        assert rows(spark, f"SELECT id, _row_id FROM {CAT}.{ns}.{name}") == row_ids
        assert all(rid is not None for _, rid in row_ids)

    # what Spark plans from the server's files: the same rows, files and
    # partitions; filters prune by the rewritten manifest's partition
    # summaries and file partitions without losing a row
    assert t.rows() == current
    assert t.data_files() == files == skade.files(ns, name)
    assert t.partitions() == partitions
    assert t.rows("WHERE category = 'b'") == by_b
    assert t.rows("WHERE ts >= TIMESTAMP '2024-03-03 00:00:00' AND ts < TIMESTAMP '2024-03-04 00:00:00'") == by_day

    # Spark commits on top: an append, a row-level delete, and its own
    # expire_snapshots (which reads every manifest skade wrote to find the
    # files it may delete)
    spark.sql(f"INSERT INTO {CAT}.{ns}.{name} VALUES {values([(9, 'b', '2024-03-05 08:00:00', 9.5)])}")
    spark.sql(f"DELETE FROM {CAT}.{ns}.{name} WHERE id = 1")
    expected = [r for r in current if r[0] != 1] + [(9, "b", "2024-03-05T08:00:00", 9.5)]
    assert t.rows() == expected
    now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")
    spark.sql(f"CALL {CAT}.system.expire_snapshots(table => '{ns}.{name}', older_than => TIMESTAMP '{now}',"
              " retain_last => 1)")
    assert len(t.snapshot_ids()) == 1
    assert t.rows() == expected
    assert t.data_files() == skade.files(ns, name)


def test_merge_on_read_deletes_survive_maintenance(spark, skade):
    """Format 2 with merge-on-read: Spark's DELETE and UPDATE write position
    delete files (delete manifests).  After skade's expire and rewrite, Spark
    still applies them: the same rows now and at the retained snapshots; the
    delete manifests are kept as they are, the data manifests merged."""
    ns, name = "maint_mor", "events"
    spark.sql(f"CREATE NAMESPACE {CAT}.{ns}")
    spark.sql(f"CREATE TABLE {CAT}.{ns}.{name} (id bigint, category string, ts timestamp, amount double)"
              " USING iceberg PARTITIONED BY (category) TBLPROPERTIES ('format-version' = '2',"
              " 'write.delete.mode' = 'merge-on-read', 'write.update.mode' = 'merge-on-read')")
    for batch in BATCHES[:4]:
        spark.sql(f"INSERT INTO {CAT}.{ns}.{name} VALUES {values(batch)}")
    t = SparkTable(spark, ns, name)
    spark.sql(f"DELETE FROM {t.ident} WHERE id IN (2, 3)")
    spark.sql(f"UPDATE {t.ident} SET amount = -1 WHERE id = 6")
    spark.sql(f"INSERT INTO {t.ident} VALUES {values(BATCHES[4])}")
    deletes = {r.file_path for r in spark.sql(f"SELECT file_path FROM {t.ident}.delete_files").collect()}
    assert deletes, "merge-on-read wrote no delete file"
    ids = t.snapshot_ids()
    at = t.history_by_snapshot()
    current = t.rows()
    assert [r[0] for r in current] == [1, 4, 5, 6, 7, 8] and current[3][3] == -1

    referenced = t.referenced_files()
    gone = skade.expire(ns, name, retain_last=2)
    check_unreferenced(t, referenced, gone)
    assert t.snapshot_ids() == ids[-2:]
    assert t.rows() == current
    for sid in ids[-2:]:
        assert t.rows_at(sid) == at[sid]

    data_manifests = [m for m in t.manifests() if m["content"] == 0]
    delete_manifests = sorted(m["path"] for m in t.manifests() if m["content"] == 1)
    assert len(data_manifests) >= 2 and delete_manifests
    r = skade.rewrite_manifests(ns, name)
    assert r["manifests_replaced"] == len(data_manifests) and r["manifests_created"] == 1
    assert r["manifests_kept"] == len(delete_manifests)
    assert sorted(m["path"] for m in t.manifests() if m["content"] == 1) == delete_manifests
    assert t.rows() == current
    assert t.rows("WHERE category = 'b'") == [r for r in current if r[1] == "b"]
    for sid in ids[-2:]:
        assert t.rows_at(sid) == at[sid]
    assert {r.file_path for r in spark.sql(f"SELECT file_path FROM {t.ident}.delete_files").collect()} == deletes

    spark.sql(f"DELETE FROM {t.ident} WHERE id = 7")
    assert [r[0] for r in t.rows()] == [1, 4, 5, 6, 8]
