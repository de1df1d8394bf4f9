"""A table skade.create_table() made (skade wrote its first metadata file) is
a table pyiceberg loads and commits to as its own: fresh column ids, the
partition spec and sort order, the properties, then appends and scans."""

import json

import pyarrow as pa
import pytest

pytestmark = pytest.mark.usefixtures("fresh_skade")

NAMESPACES = ("made", "made2")

# a REST CreateTableRequest's schema, spec and order (the client's ids)
SCHEMA = {"type": "struct", "schema-id": 3, "identifier-field-ids": [7], "fields": [
    {"id": 7, "name": "id", "required": True, "type": "long"},
    {"id": 8, "name": "category", "required": False, "type": "string"},
    {"id": 9, "name": "tags", "required": False,
     "type": {"type": "list", "element-id": 20, "element-required": False, "element": "string"}},
]}
SPEC = {"fields": [{"source-id": 8, "transform": "identity", "name": "category"}]}
ORDER = {"fields": [{"source-id": 7, "transform": "identity", "direction": "asc",
                     "null-order": "nulls-first"}]}


def test_pyiceberg_uses_a_table_skade_created(catalog, skade, warehouse):
    catalog.create_namespace("made")
    location = f"file://{warehouse}/made/events"
    (meta,), = skade.query(
        "SELECT skade.create_table('made', 'events', %s::jsonb, %s::jsonb, %s::jsonb,"
        " '{\"owner\": \"py\"}', %s, 2, 'py_cat')",
        (json.dumps(SCHEMA), json.dumps(SPEC), json.dumps(ORDER), location))
    assert meta.startswith(location + "/metadata/00000-") and meta.endswith(".metadata.json")

    t = catalog.load_table("made.events")
    skade.created(t)
    assert t.metadata_location == meta
    assert t.format_version == 2
    assert [(f.field_id, f.name) for f in t.schema().fields] == [(1, "id"), (2, "category"), (3, "tags")]
    assert t.schema().find_field("tags").field_type.element_id == 4
    assert list(t.schema().identifier_field_ids) == [1]
    assert [(f.field_id, f.source_id, f.name) for f in t.spec().fields] == [(1000, 2, "category")]
    assert t.sort_order().order_id == 1 and t.sort_order().fields[0].source_id == 1
    assert t.properties.get("owner") == "py" and "format-version" not in t.properties
    assert t.location() == location

    rows = pa.Table.from_pylist(
        [{"id": 1, "category": "a", "tags": ["x"]}, {"id": 2, "category": "b", "tags": []}],
        schema=t.schema().as_arrow())
    t.append(rows)
    skade.committed(t, previous=meta)
    again = catalog.load_table("made.events")
    assert sorted(r["id"] for r in again.scan().to_arrow().to_pylist()) == [1, 2]
    assert {p["category"] for (p,) in skade.query(
        "SELECT partition FROM skade.files('made', 'events', catalog => 'py_cat')")} == {"a", "b"}


def test_update_table_commits_pyiceberg_reads(catalog, skade):
    """skade.update_table() rolls main back and evolves the schema of a table
    pyiceberg wrote; pyiceberg reads the result and commits on top of it."""
    catalog.create_namespace("made2")
    arrow = pa.schema([pa.field("id", pa.int64(), nullable=False)])
    t = catalog.create_table("made2.t", arrow)
    skade.created(t)
    t.append(pa.Table.from_pylist([{"id": 1}], schema=arrow))
    skade.committed(t)
    first = t.current_snapshot().snapshot_id
    t.append(pa.Table.from_pylist([{"id": 2}], schema=arrow))
    skade.committed(t)
    second = t.current_snapshot().snapshot_id
    before = t.metadata_location

    reqs = [{"type": "assert-table-uuid", "uuid": str(t.metadata.table_uuid)},
            {"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": second},
            {"type": "assert-current-schema-id", "current-schema-id": t.schema().schema_id}]
    schema = {"type": "struct", "fields": [
        {"id": 1, "name": "id", "required": True, "type": "long"},
        {"id": 2, "name": "note", "required": False, "type": "string"}]}
    ups = [{"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": first, "type": "branch"},
           {"action": "add-schema", "schema": schema},
           {"action": "set-current-schema", "schema-id": -1},
           {"action": "set-properties", "updates": {"owner": "skade"}}]
    (after,), = skade.query("SELECT skade.update_table('made2', 't', %s::jsonb, %s::jsonb, 'py_cat')",
                            (json.dumps(reqs), json.dumps(ups)))
    assert after != before and "/metadata/00003-" in after
    skade.expect_log(("commit", "made2", "t", after, before))
    skade.known[("made2", "t")] = after

    again = catalog.load_table("made2.t")
    assert again.metadata_location == after
    assert again.current_snapshot().snapshot_id == first
    assert [f.name for f in again.schema().fields] == ["id", "note"]
    assert again.properties["owner"] == "skade"
    assert sorted(r["id"] for r in again.scan().to_arrow().to_pylist()) == [1]
    assert [e.metadata_file for e in again.metadata.metadata_log][-1] == before

    # the same requirements now fail: the commit was applied
    with pytest.raises(Exception) as failed:
        skade.query("SELECT skade.update_table('made2', 't', %s::jsonb, '[]', 'py_cat')", (json.dumps(reqs),))
    assert "Requirement failed: branch main has changed" in str(failed.value)

    # pyiceberg commits on top, with the new column
    again.append(pa.Table.from_pylist([{"id": 3, "note": "n"}], schema=again.schema().as_arrow()))
    skade.committed(again, previous=after)
    rows = catalog.load_table("made2.t").scan().to_arrow().to_pylist()
    assert sorted((r["id"], r["note"]) for r in rows) == [(1, None), (3, "n")]
