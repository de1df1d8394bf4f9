"""Tables skade.create_table() made (the server wrote the first metadata
file) are tables Spark describes, writes and reads as its own: the fresh
column ids, the partition spec, the sort order and the properties, then
INSERTs, a row-level DELETE and time travel.  Format versions 1, 2 and 3."""

import json
from decimal import Decimal

import pytest

from sparkenv import CAT, SparkTable

# a REST CreateTableRequest's schema, spec and order (the client's ids)
SCHEMA = {"type": "struct", "schema-id": 3, "identifier-field-ids": [7], "fields": [
    {"id": 7, "name": "id", "required": True, "type": "long"},
    {"id": 8, "name": "category", "required": False, "type": "string"},
    {"id": 9, "name": "tags", "required": False,
     "type": {"type": "list", "element-id": 20, "element-required": False, "element": "string"}},
    {"id": 10, "name": "ts", "required": False, "type": "timestamptz"},
    {"id": 11, "name": "price", "required": False, "type": "decimal(9,2)"},
]}
SPEC = {"fields": [{"source-id": 8, "transform": "identity", "name": "category"},
                   {"source-id": 7, "transform": "bucket[4]", "name": "id_bucket"}]}
ORDER = {"fields": [{"source-id": 7, "transform": "identity", "direction": "asc",
                     "null-order": "nulls-first"}]}


@pytest.mark.parametrize("fv", [1, 2, 3])
def test_spark_writes_and_reads_a_table_skade_created(spark, skade, warehouse, fv):
    ns = f"made_v{fv}"
    skade.create_namespace(ns)
    location = f"{warehouse}/{ns}/events"
    meta = skade.one(
        "SELECT skade.create_table(%s, 'events', %s::jsonb, %s::jsonb, %s::jsonb,"
        " '{\"team\": \"skade\"}', %s, %s, %s)",
        (ns, json.dumps(SCHEMA), json.dumps(SPEC), json.dumps(ORDER), location, fv, CAT))
    assert meta.startswith(location + "/metadata/00000-")
    t = SparkTable(spark, ns, "events")

    # what Spark sees before any write: schema, spec, order, properties
    assert [r.tableName for r in spark.sql(f"SHOW TABLES IN {CAT}.{ns}").collect()] == ["events"]
    assert [(f.name, f.dataType.simpleString(), f.nullable) for f in spark.table(t.ident).schema.fields] == [
        ("id", "bigint", False), ("category", "string", True), ("tags", "array<string>", True),
        ("ts", "timestamp", True), ("price", "decimal(9,2)", True)]
    props = {r.key: r.value for r in spark.sql(f"SHOW TBLPROPERTIES {t.ident}").collect()}
    assert props["team"] == "skade" and props["format-version"] == str(fv)
    assert props["sort-order"] == "id ASC NULLS FIRST"
    assert props["identifier-fields"] == "[id]"
    described = {r.col_name: r.data_type for r in spark.sql(f"DESCRIBE TABLE EXTENDED {t.ident}").collect()}
    assert described["Part 0"] == "category" and described["Part 1"] == "bucket(4, id)"
    assert t.rows() == [] and t.snapshot_ids() == []

    spark.sql(f"INSERT INTO {t.ident} VALUES"
              " (1, 'a', array('x'), TIMESTAMP '2024-03-01 08:00:00', 1.25),"
              " (2, 'b', array(), NULL, NULL),"
              " (3, 'a', NULL, TIMESTAMP '2024-03-02 09:30:00', 100.00)")
    first = t.current_snapshot_id()
    spark.sql(f"INSERT INTO {t.ident} VALUES (4, 'c', array('y', 'z'), TIMESTAMP '2024-03-03 10:00:00', 7.5)")
    assert [r[0] for r in t.rows()] == [1, 2, 3, 4]
    assert t.rows("WHERE category = 'a'") == [
        (1, "a", ["x"], "2024-03-01T08:00:00", Decimal("1.25")),
        (3, "a", None, "2024-03-02T09:30:00", Decimal("100"))]
    assert [r[0] for r in t.rows("WHERE id = 4")] == [4]
    # Spark's own partitions and skade's view of the same files agree
    assert {r.partition.category for r in spark.sql(f"SELECT partition FROM {t.ident}.partitions").collect()} == {
        "a", "b", "c"}
    assert {p["category"] for (p,) in skade.query(
        "SELECT partition FROM skade.files(%s, 'events', catalog => %s)", (ns, CAT))} == {"a", "b", "c"}
    assert t.data_files() == skade.files(ns, "events")

    spark.sql(f"DELETE FROM {t.ident} WHERE id = 2")
    assert [r[0] for r in t.rows()] == [1, 3, 4]
    assert [r[0] for r in t.rows_at(first)] == [1, 2, 3]
    assert skade.one("SELECT count(*) FROM skade.snapshots(%s, 'events', %s)", (ns, CAT)) == 3
