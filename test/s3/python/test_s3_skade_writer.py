"""skade's metadata writer on S3: skade.create_table() and skade.update_table() write
metadata objects, skade.rewrite_manifests() writes a manifest, a manifest list and
metadata, skade.expire_snapshots(delete_files => true) removes objects at commit; pyiceberg
(pyarrow's S3 FileIO) reads each result and commits on top of it. Writes outside
skade.write_roots are refused without a request."""

import json

import psycopg2
import pyarrow as pa
import pytest
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import LongType, NestedField, StringType

import s3env
from pgenv import pg_params

pytestmark = pytest.mark.usefixtures("fresh_skade")

NAMESPACES = ("made", "upd", "rwm", "exp")

SCHEMA_JSON = {"type": "struct", "schema-id": 0, "identifier-field-ids": [1], "fields": [
    {"id": 1, "name": "id", "required": True, "type": "long"},
    {"id": 2, "name": "cat", "required": False, "type": "string"}]}
SPEC_JSON = {"fields": [{"source-id": 2, "transform": "identity", "name": "cat"}]}
ORDER_JSON = {"order-id": 0, "fields": []}
SCHEMA = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "cat", StringType(), required=False))
SPEC = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="cat"))
ARROW = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("cat", pa.string())])


def batch(ids, cat) -> pa.Table:
    return pa.Table.from_pylist([{"id": i, "cat": cat} for i in ids], schema=ARROW)


def rows(table, **scan) -> list[tuple]:
    return sorted((r["id"], r["cat"]) for r in table.scan(**scan).to_arrow().to_pylist())


def create(skade, ns, name, location):
    return skade.query(
        "SELECT skade.create_table(%s, %s, %s::jsonb, %s::jsonb, %s::jsonb, '{\"owner\": \"skade\"}',"
        " %s, 2, 'py_cat')", (ns, name, json.dumps(SCHEMA_JSON), json.dumps(SPEC_JSON),
                              json.dumps(ORDER_JSON), location))[0][0]


def test_create_table_on_s3_is_used_by_pyiceberg(catalog, skade):
    catalog.create_namespace("made")
    location = f"{s3env.WAREHOUSE}/made/events"
    meta = create(skade, "made", "events", location)
    assert meta.startswith(location + "/metadata/00000-") and meta.endswith(".metadata.json")
    assert s3env.exists(meta)
    t = catalog.load_table("made.events")
    skade.created(t)
    assert t.metadata_location == meta and t.location() == location
    assert t.properties.get("owner") == "skade"
    assert [f.name for f in t.spec().fields] == ["cat"]
    t.append(batch([1, 2], "a"))
    skade.committed(t, previous=meta)
    t.append(batch([3], "b"))
    skade.committed(t)
    assert rows(catalog.load_table("made.events")) == [(1, "a"), (2, "a"), (3, "b")]
    assert {p["cat"] for (p,) in skade.query(
        "SELECT partition FROM skade.files('made', 'events', catalog => 'py_cat')")} == {"a", "b"}


def test_writes_outside_write_roots_are_refused_without_a_request(catalog, skade):
    """s3://BUCKET is readable, only s3://BUCKET/wh is writable; the other bucket neither."""
    catalog.create_namespace_if_not_exists("made")
    for location in (f"s3://{s3env.BUCKET}/elsewhere/t", f"s3://{s3env.OUTSIDE}/wh/made/t"):
        with s3env.no_request():
            with pytest.raises(psycopg2.Error) as err:
                create(skade, "made", "t", location)
        assert err.value.pgcode == "42501", f"{location}: {err.value.pgcode} {err.value}"
    assert not catalog.table_exists("made.t")


def test_update_table_on_s3_is_read_by_pyiceberg(catalog, skade):
    catalog.create_namespace("upd")
    t = catalog.create_table("upd.t", SCHEMA)
    skade.created(t)
    t.append(batch([1], "a"))
    skade.committed(t)
    first = t.current_snapshot().snapshot_id
    t.append(batch([2], "a"))
    skade.committed(t)
    before = t.metadata_location
    reqs = [{"type": "assert-table-uuid", "uuid": str(t.metadata.table_uuid)},
            {"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": t.current_snapshot().snapshot_id}]
    schema = {"type": "struct", "fields": SCHEMA_JSON["fields"] + [
        {"id": 3, "name": "note", "required": False, "type": "string"}]}
    ups = [{"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": first, "type": "branch"},
           {"action": "add-schema", "schema": schema}, {"action": "set-current-schema", "schema-id": -1},
           {"action": "set-properties", "updates": {"owner": "skade"}}]
    (after,), = skade.query("SELECT skade.update_table('upd', 't', %s::jsonb, %s::jsonb, 'py_cat')",
                            (json.dumps(reqs), json.dumps(ups)))
    assert after.startswith(f"{s3env.WAREHOUSE}/upd/t/metadata/00003-") and s3env.exists(after)
    skade.expect_log(("commit", "upd", "t", after, before))
    again = catalog.load_table("upd.t")
    skade.agrees(again)
    assert again.current_snapshot().snapshot_id == first
    assert [f.name for f in again.schema().fields] == ["id", "cat", "note"]
    assert again.properties["owner"] == "skade"
    assert rows(again) == [(1, "a")]
    again.append(pa.Table.from_pylist([{"id": 3, "cat": "b", "note": "n"}], schema=again.schema().as_arrow()))
    skade.committed(again, previous=after)
    assert rows(catalog.load_table("upd.t")) == [(1, "a"), (3, "b")]


def test_rewrite_manifests_on_s3_is_read_by_pyiceberg(catalog, skade):
    catalog.create_namespace("rwm")
    t = catalog.create_table("rwm.events", SCHEMA, partition_spec=SPEC)
    for i in range(5):
        t.append(batch([i, 100 + i], "abc"[i % 3]))
    t = catalog.load_table("rwm.events")
    before_snapshot, before_rows = t.current_snapshot().snapshot_id, rows(t)
    assert len(t.current_snapshot().manifests(t.io)) == 5
    (loc, snap, replaced, created, kept, entries), = skade.query(
        "SELECT * FROM skade.rewrite_manifests('rwm', 'events', catalog => 'py_cat')")
    assert (replaced, created, kept, entries) == (5, 1, 0, 5)
    assert loc.startswith(f"{s3env.WAREHOUSE}/rwm/events/metadata/")
    t = catalog.load_table("rwm.events")
    assert t.metadata_location == loc and t.current_snapshot().snapshot_id == snap
    manifests = t.current_snapshot().manifests(t.io)
    assert len(manifests) == 1 and manifests[0].manifest_path.startswith(f"{s3env.WAREHOUSE}/rwm/events/metadata/")
    skade.agrees(t)
    assert rows(t) == before_rows
    assert rows(t, row_filter="cat = 'b'") == [r for r in before_rows if r[1] == "b"]
    assert rows(t, snapshot_id=before_snapshot) == before_rows
    t.append(batch([50], "a"))
    assert rows(catalog.load_table("rwm.events")) == sorted(before_rows + [(50, "a")])


def referenced(table, snapshot) -> set[str]:
    files = {snapshot.manifest_list}
    for m in snapshot.manifests(table.io):
        files.add(m.manifest_path)
    for task in table.scan(snapshot_id=snapshot.snapshot_id).plan_files():
        files.add(task.file.file_path)
    return files


def expiring_table(catalog, name):
    catalog.create_namespace_if_not_exists("exp")
    t = catalog.create_table(f"exp.{name}", SCHEMA, partition_spec=SPEC)
    for i in range(3):
        t.append(batch(range(10 * i, 10 * i + 3), "abc"[i]))
    t.overwrite(batch(range(100, 104), "a"))
    t.append(batch([200], "b"))
    return catalog.load_table(f"exp.{name}")


def test_expire_snapshots_on_s3_rolled_back_removes_nothing(catalog, skade):
    t = expiring_table(catalog, "rolled_back")
    every = set().union(*(referenced(t, s) for s in t.snapshots()))
    conn = psycopg2.connect(**pg_params())
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT file_path FROM skade.expire_snapshots('exp', 'rolled_back', older_than => now(),"
                        " retain_last => 1, delete_files => true, catalog => 'py_cat')")
            reported = [r[0] for r in cur.fetchall()]
        assert reported and all(s3env.exists(f) for f in reported), "nothing is removed before the commit"
        conn.rollback()
    finally:
        conn.close()
    assert all(s3env.exists(f) for f in every), "a rolled-back expire removed an object"
    assert catalog.load_table("exp.rolled_back").metadata_location == t.metadata_location


def test_expire_snapshots_on_s3_deletes_at_commit(catalog, skade):
    t = expiring_table(catalog, "events")
    current = rows(t)
    reported = skade.query("SELECT file_path, kind FROM skade.expire_snapshots('exp', 'events',"
                           " older_than => now(), retain_last => 2, delete_files => true, catalog => 'py_cat')")
    kinds = {k for _, k in reported}
    assert "manifest-list" in kinds and "data" in kinds, kinds
    t = catalog.load_table("exp.events")
    assert len(t.snapshots()) == 2
    assert rows(t) == current
    needed = set().union(*(referenced(t, s) for s in t.snapshots()))
    assert all(s3env.exists(f) for f in needed), "an object a retained snapshot needs was removed"
    gone = {f for f, _ in reported}
    assert not needed & gone
    assert not any(s3env.exists(f) for f in gone), "a reported object is still there after the commit"
    skade.agrees(t)
