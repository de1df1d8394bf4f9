"""skade.rewrite_manifests() on a table pyiceberg wrote: pyiceberg reads the
same rows from fewer manifests, time travel to the snapshot before the
rewrite still works, and pyiceberg keeps appending on top of it."""

import pyarrow as pa
import pytest

from javafixture import all_rows, register_java_events
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import LongType, NestedField, StringType

pytestmark = pytest.mark.usefixtures("fresh_skade")

NAMESPACES = ("rwm",)

SCHEMA = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "cat", StringType(), required=False))
SPEC = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="cat"))
ARROW = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("cat", pa.string())])


def rows(table, **scan) -> list[tuple]:
    return sorted((r["id"], r["cat"]) for r in table.scan(**scan).to_arrow().to_pylist())


def test_rewrite_manifests_is_read_by_pyiceberg(catalog, skade):
    catalog.create_namespace("rwm")
    t = catalog.create_table("rwm.events", SCHEMA, partition_spec=SPEC)
    for i in range(6):
        t.append(pa.Table.from_pylist([{"id": i, "cat": "abc"[i % 3]}, {"id": 100 + i, "cat": None}], schema=ARROW))
    t = catalog.load_table("rwm.events")
    before_snapshot = t.current_snapshot().snapshot_id
    before_rows = rows(t)
    before_manifests = t.current_snapshot().manifests(t.io)
    assert len(before_manifests) == 6

    (loc, snap, replaced, created, kept, entries) = skade.query(
        "SELECT * FROM skade.rewrite_manifests('rwm', 'events', catalog => 'py_cat')")[0]
    assert (replaced, created, kept) == (6, 1, 0)
    assert entries == sum(m.added_files_count for m in before_manifests)

    t = catalog.load_table("rwm.events")
    assert t.metadata_location == loc
    cur = t.current_snapshot()
    assert cur.snapshot_id == snap and cur.parent_snapshot_id == before_snapshot
    assert cur.summary.operation.value == "replace"
    manifests = cur.manifests(t.io)
    assert len(manifests) == 1
    assert manifests[0].existing_files_count == entries and manifests[0].added_files_count == 0
    # the rows, a filtered scan (pruned by the new partition summaries), time travel
    assert rows(t) == before_rows
    assert rows(t, row_filter="cat = 'b'") == [r for r in before_rows if r[1] == "b"]
    assert rows(t, row_filter="cat IS NULL") == [r for r in before_rows if r[1] is None]
    assert rows(t, snapshot_id=before_snapshot) == before_rows
    # the files pyiceberg plans carry the sequence numbers they had
    old = {f.file.file_path: (f.file.record_count) for f in t.scan(snapshot_id=before_snapshot).plan_files()}
    new = {f.file.file_path: (f.file.record_count) for f in t.scan().plan_files()}
    assert old == new
    entries_now = {e.data_file.file_path: (e.status.value, e.snapshot_id, e.sequence_number, e.file_sequence_number)
                   for e in manifests[0].fetch_manifest_entry(t.io, discard_deleted=False)}
    for m in before_manifests:
        for e in m.fetch_manifest_entry(t.io):
            assert entries_now[e.data_file.file_path] == (0, e.snapshot_id, e.sequence_number, e.file_sequence_number)

    # pyiceberg appends on top of the replace snapshot; a second rewrite merges again
    t.append(pa.Table.from_pylist([{"id": 50, "cat": "a"}], schema=ARROW))
    t = catalog.load_table("rwm.events")
    assert rows(t) == sorted(before_rows + [(50, "a")])
    assert skade.query("SELECT manifests_created FROM skade.rewrite_manifests('rwm', 'events', catalog => 'py_cat')")[0][0] == 1
    t = catalog.load_table("rwm.events")
    assert len(t.current_snapshot().manifests(t.io)) == 1
    assert rows(t) == sorted(before_rows + [(50, "a")])
    # nothing left to merge: no commit
    assert skade.query("SELECT manifests_created FROM skade.rewrite_manifests('rwm', 'events', catalog => 'py_cat')")[0][0] == 0
    assert catalog.load_table("rwm.events").metadata_location == t.metadata_location


def test_rewrite_manifests_of_a_java_table_is_read_by_pyiceberg(catalog, skade, warehouse, tmp_path):
    """The Java-written fixture (test/data/clients/java, three appends), copied into the
    warehouse and registered: after the rewrite pyiceberg reads the same rows."""
    register_java_events(skade, catalog, warehouse, "rwm")
    t = catalog.load_table("rwm.java_events")
    before = t.current_snapshot().snapshot_id
    before_rows = all_rows(t)
    assert len(t.current_snapshot().manifests(t.io)) == 3

    replaced, created = skade.query(
        "SELECT manifests_replaced, manifests_created FROM skade.rewrite_manifests('rwm', 'java_events', catalog => 'py_cat')")[0]
    assert (replaced, created) == (3, 1)
    t = catalog.load_table("rwm.java_events")
    assert len(t.current_snapshot().manifests(t.io)) == 1
    assert t.current_snapshot().summary.operation.value == "replace"
    assert all_rows(t) == before_rows
    assert all_rows(t, snapshot_id=before) == before_rows
    assert len(before_rows) == 8


def test_rewrite_manifests_of_a_v1_table_is_read_by_pyiceberg(catalog, skade):
    """Format v1: the v1 manifest and manifest-list layouts (no sequence numbers)."""
    catalog.create_namespace_if_not_exists("rwm")
    t = catalog.create_table("rwm.v1", SCHEMA, partition_spec=SPEC, properties={"format-version": "1"})
    for i in range(4):
        t.append(pa.Table.from_pylist([{"id": i, "cat": "ab"[i % 2]}], schema=ARROW))
    t = catalog.load_table("rwm.v1")
    assert t.format_version == 1
    before = t.current_snapshot().snapshot_id
    before_rows = rows(t)
    (replaced, created) = skade.query(
        "SELECT manifests_replaced, manifests_created FROM skade.rewrite_manifests('rwm', 'v1', catalog => 'py_cat')")[0]
    assert (replaced, created) == (4, 1)
    t = catalog.load_table("rwm.v1")
    assert t.format_version == 1
    manifests = t.current_snapshot().manifests(t.io)
    assert len(manifests) == 1 and manifests[0].existing_files_count == 4
    assert rows(t) == before_rows
    assert rows(t, row_filter="cat = 'a'") == [r for r in before_rows if r[1] == "a"]
    assert rows(t, snapshot_id=before) == before_rows
    t.append(pa.Table.from_pylist([{"id": 9, "cat": "a"}], schema=ARROW))
    assert rows(catalog.load_table("rwm.v1")) == sorted(before_rows + [(9, "a")])
