"""A table skade.create_table() made (skade wrote its first metadata file) is
a table pyiceberg loads and commits to as its own: fresh column ids, the
partition spec and sort order, the properties, then appends and scans."""

import json

import pyarrow as pa
import pytest

pytestmark = pytest.mark.usefixtures("fresh_skade")

NAMESPACES = ("made",)

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
