"""skade.expire_snapshots(delete_files => true) and skade.swap_table() on tables
pyiceberg (and Java) wrote: pyiceberg reads the same rows afterwards, time
travel to every retained snapshot gives what it gave before, the files skade
reported are gone only once the transaction commits, and every file a
retained snapshot needs is still there."""

import os

import psycopg2
import pyarrow as pa
import pytest

from javafixture import all_rows, register_java_events
from pgenv import pg_params
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import LongType, NestedField, StringType

pytestmark = pytest.mark.usefixtures("fresh_skade")

NAMESPACES = ("mnt",)

SCHEMA = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "cat", StringType(), required=False))
SPEC = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="cat"))
ARROW = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("cat", pa.string())])


def rows(table, **scan) -> list[tuple]:
    return sorted((r["id"], r["cat"]) for r in table.scan(**scan).to_arrow().to_pylist())


def batch(ids, cat) -> pa.Table:
    return pa.Table.from_pylist([{"id": i, "cat": cat} for i in ids], schema=ARROW)


def local(path: str) -> str:
    return path[len("file:"):] if path.startswith("file:") else path


def referenced(table, snapshot) -> set[str]:
    """Every file a snapshot needs: its manifest list, manifests and live files."""
    files = {local(snapshot.manifest_list)}
    for m in snapshot.manifests(table.io):
        files.add(local(m.manifest_path))
    for task in table.scan(snapshot_id=snapshot.snapshot_id).plan_files():
        files.add(local(task.file.file_path))
    return files


def expire(skade, ns, name, retain_last):
    return skade.query(
        "SELECT file_path, kind FROM skade.expire_snapshots(%s, %s, older_than => now(), retain_last => %s,"
        " delete_files => true, catalog => 'py_cat')", (ns, name, retain_last))


def history_table(catalog):
    """A partitioned table with appends, an overwrite (the earlier files become
    unreachable once their snapshots expire) and an append on top."""
    catalog.create_namespace_if_not_exists("mnt")
    t = catalog.create_table("mnt.events", SCHEMA, partition_spec=SPEC)
    for i in range(4):
        t.append(batch(range(10 * i, 10 * i + 3), "abc"[i % 3]))
    t.overwrite(batch(range(100, 104), "a"))
    t.append(batch(range(200, 202), "b"))
    return catalog.load_table("mnt.events")


def test_expire_rolled_back_deletes_nothing(catalog, skade):
    t = history_table(catalog)
    every = set().union(*(referenced(t, s) for s in t.snapshots()))
    conn = psycopg2.connect(**pg_params())
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT file_path FROM skade.expire_snapshots('mnt', 'events', older_than => now(),"
                        " retain_last => 1, delete_files => true, catalog => 'py_cat')")
            reported = [r[0] for r in cur.fetchall()]
        assert reported, "something expires"
        assert all(os.path.exists(local(f)) for f in reported), "nothing is removed before the commit"
        conn.rollback()
    finally:
        conn.close()
    assert all(os.path.exists(f) for f in every), "a rolled-back expire removed a file"
    t2 = catalog.load_table("mnt.events")
    assert t2.metadata_location == t.metadata_location
    assert len(t2.snapshots()) == len(t.snapshots())


def test_expire_snapshots_deletes_at_commit_and_pyiceberg_reads_the_same(catalog, skade):
    catalog.drop_table("mnt.events")
    t = history_table(catalog)
    before = {s.snapshot_id: rows(t, snapshot_id=s.snapshot_id) for s in t.snapshots()}
    current_rows = rows(t)
    snaps = [s.snapshot_id for s in t.snapshots()]
    assert len(snaps) == 7  # pyiceberg overwrites as a delete and an append

    reported = expire(skade, "mnt", "events", 2)
    kinds = {k for _, k in reported}
    assert "manifest-list" in kinds and "data" in kinds, kinds

    t = catalog.load_table("mnt.events")
    retained = [s.snapshot_id for s in t.snapshots()]
    assert retained == snaps[-2:]
    assert rows(t) == current_rows
    for sid in retained:
        assert rows(t, snapshot_id=sid) == before[sid]
    needed = set().union(*(referenced(t, s) for s in t.snapshots()))
    assert all(os.path.exists(f) for f in needed), "a file a retained snapshot needs was removed"
    gone = [local(f) for f, _ in reported]
    assert not needed & set(gone), "skade reported a file a retained snapshot needs"
    assert not any(os.path.exists(f) for f in gone), "a reported file is still there after the commit"

    # pyiceberg appends on top; nothing more to expire with retain_last 3
    t.append(batch([300], "c"))
    t = catalog.load_table("mnt.events")
    assert rows(t) == sorted(current_rows + [(300, "c")])
    assert expire(skade, "mnt", "events", 3) == []


def test_swap_table_pyiceberg(catalog, skade):
    catalog.create_namespace_if_not_exists("mnt")
    live = catalog.create_table("mnt.live", SCHEMA)
    live.append(batch(range(3), "old"))
    temp = catalog.create_table("mnt.live_rebuilt", SCHEMA, partition_spec=SPEC)
    temp.append(batch(range(3), "new"))
    temp.append(batch(range(3, 5), "new"))
    temp = catalog.load_table("mnt.live_rebuilt")
    temp_rows = rows(temp)

    loc = skade.query("SELECT skade.swap_table('mnt', 'live', 'live_rebuilt', catalog => 'py_cat')")[0][0]
    assert loc == temp.metadata_location
    assert not catalog.table_exists("mnt.live_rebuilt")
    live = catalog.load_table("mnt.live")
    assert live.metadata_location == loc
    assert rows(live) == temp_rows
    assert live.spec().fields[0].name == "cat"
    # pyiceberg keeps committing to it; the commit log of live starts at the swap
    live.append(batch([9], "new"))
    assert rows(catalog.load_table("mnt.live")) == sorted(temp_rows + [(9, "new")])
    ops = [r[0] for r in skade.query(
        "SELECT op FROM skade.commit_log WHERE catalog_name = 'py_cat' AND table_namespace = 'mnt'"
        " AND table_name = 'live' ORDER BY seq")]
    assert ops == ["commit", "commit"], ops


def test_expire_of_a_java_table_is_read_by_pyiceberg(catalog, skade, warehouse):
    """The Java-written fixture (test/data/clients/java, three appends), copied into the
    warehouse and registered: after expiring all but the current snapshot with
    delete_files, pyiceberg reads the same rows and the old manifest lists are gone."""
    register_java_events(skade, catalog, warehouse, "mnt")
    t = catalog.load_table("mnt.java_events")
    before_rows = all_rows(t)
    assert len(t.snapshots()) == 3

    reported = skade.query("SELECT file_path, kind FROM skade.expire_snapshots('mnt', 'java_events', older_than => now(),"
                           " delete_files => true, catalog => 'py_cat')")
    assert sorted(k for _, k in reported) == ["manifest-list", "manifest-list"]
    t = catalog.load_table("mnt.java_events")
    assert len(t.snapshots()) == 1
    assert all_rows(t) == before_rows and len(before_rows) == 8
    assert not any(os.path.exists(local(f)) for f, _ in reported)

