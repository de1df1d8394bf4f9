"""pyiceberg's RestCatalog on skade's REST port: a table's whole life (namespaces nested and
with properties, listing with paging, create, append, overwrite, delete, schema and
partition evolution, time travel, rename, drop), each commit cross-checked through skade's
SQL functions: load_table's metadata is the REST answer's byte for byte, snapshots/refs/
history agree, files() and plan_files() give pyiceberg's plan, and the commit log has one
row per commit with source 'api', committed by the token's role."""

from __future__ import annotations

import json
from datetime import datetime

import pyarrow as pa
import pytest

from pyiceberg.exceptions import (CommitFailedException, ForbiddenError, NamespaceAlreadyExistsError,
                                  NamespaceNotEmptyError, NoSuchNamespaceError, NoSuchTableError,
                                  TableAlreadyExistsError)
from pyiceberg.expressions import EqualTo, GreaterThanOrEqual
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import BucketTransform, IdentityTransform
from pyiceberg.types import DoubleType, LongType, NestedField, StringType

import restenv
from skadecheck import local_path, read_metadata_file, split_ident

pytestmark = pytest.mark.usefixtures("fresh_namespaces")

NAMESPACES = ("life", "life_moved", "paging")

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "category", StringType(), required=False),
    NestedField(3, "amount", DoubleType(), required=False),
)
SPEC = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="category"))
ARROW = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("category", pa.string()),
                   pa.field("amount", pa.float64())])


def rows(*ids: int, category: str | None = None) -> pa.Table:
    return pa.Table.from_pylist([{"id": i, "category": category or "abc"[i % 3], "amount": i * 1.5}
                                 for i in ids], schema=ARROW)


def evolved(table, *ids: int) -> pa.Table:
    """Rows in the table's current schema (after evolution: id, category, value, note)."""
    return pa.Table.from_pylist([{"id": i, "category": "c", "value": 1.0, "note": None} for i in ids],
                                schema=table.schema().as_arrow())


def ids_of(scan) -> list[int]:
    return sorted(scan.to_arrow()["id"].to_pylist())


# ------------------------------------------------------------ cross-checks

def rest_body_agrees(table) -> None:
    """GET loadTable answers the client's metadata location, with the metadata file's text
    in it verbatim (skade splices the cached text), and ETag on the answer."""
    ns, name = split_ident(table.name())
    r = restenv.call("GET", restenv.table_url(tuple(ns.split(".")), name))
    assert r.status_code == 200, r.text
    assert r.headers.get("ETag", "").startswith('"')
    body = r.json()
    assert body["metadata-location"] == table.metadata_location
    on_disk = read_metadata_file(local_path(table.metadata_location))
    assert on_disk in r.content, "the metadata file's text is not in the REST answer verbatim"
    assert body["metadata"] == json.loads(on_disk)


def plans_agree(pg, table) -> None:
    """skade.files() and skade.plan_files() (no filter, and one that selects) give the data
    files pyiceberg plans, for every snapshot of the table."""
    ns, name = split_ident(table.name())
    with pg.cursor() as cur:
        for snap in table.metadata.snapshots:
            sid = snap.snapshot_id
            cur.execute("SELECT file_path, record_count FROM skade.files(%s, %s, %s, %s) WHERE content = 'data'",
                        (ns, name, sid, restenv.CATALOG))
            got = sorted(cur.fetchall())
            want = sorted((t.file.file_path, t.file.record_count) for t in table.scan(snapshot_id=sid).plan_files())
            assert got == want, f"files() at {sid}"
            cur.execute("SELECT file_path FROM skade.plan_files(%s, %s, 'true', %s, %s) WHERE content = 'data'",
                        (ns, name, sid, restenv.CATALOG))
            assert sorted(r[0] for r in cur.fetchall()) == [p for p, _ in want], f"plan_files() at {sid}"
            # a selective filter: skade may keep more files than pyiceberg, never fewer
            cur.execute("SELECT file_path FROM skade.plan_files(%s, %s, %s, %s, %s) WHERE content = 'data'",
                        (ns, name, json.dumps({"type": "gt-eq", "term": "id", "value": 10}), sid, restenv.CATALOG))
            kept = {r[0] for r in cur.fetchall()}
            needed = {t.file.file_path for t in table.scan(snapshot_id=sid, row_filter=GreaterThanOrEqual("id", 10)).plan_files()
                      if t.file.record_count > 0}
            assert needed <= kept, f"plan_files(id >= 10) at {sid} misses {needed - kept}"


def check(skade, pg, table, kind: str = "commit", previous: str | None = None) -> None:
    if kind == "create":
        skade.created(table)
    else:
        skade.committed(table, previous)
    rest_body_agrees(table)
    plans_agree(pg, table)


# ------------------------------------------------------------ namespaces

def test_namespaces_nested_properties_and_paging(catalog, catalogs, skade):
    catalog.create_namespace("life", {"owner": "rest", "purpose": "lifecycle"})
    catalog.create_namespace(("life", "inner"), {"depth": "2"})
    catalog.create_namespace(("life", "inner", "deepest"))
    with pytest.raises(NamespaceAlreadyExistsError):
        catalog.create_namespace("life")

    assert ("life",) in catalog.list_namespaces()
    assert catalog.list_namespaces("life") == [("life", "inner")]
    assert catalog.list_namespaces(("life", "inner")) == [("life", "inner", "deepest")]
    props = catalog.load_namespace_properties("life")
    assert {k: props[k] for k in ("owner", "purpose")} == {"owner": "rest", "purpose": "lifecycle"}
    assert catalog.load_namespace_properties(("life", "inner"))["depth"] == "2"
    # skade sees the same namespaces and properties
    assert skade.query("SELECT skade.namespace_exists('life.inner.deepest', %s)", (restenv.CATALOG,))[0][0]
    assert skade.query("SELECT skade.namespace_properties('life', %s) ->> 'owner'", (restenv.CATALOG,))[0][0] == "rest"

    summary = catalog.update_namespace_properties("life", removals={"purpose", "nothere"}, updates={"owner": "ops", "x": "1"})
    assert sorted(summary.updated) == ["owner", "x"]
    assert summary.removed == ["purpose"]
    assert summary.missing == ["nothere"]
    props = catalog.load_namespace_properties("life")
    assert props["owner"] == "ops" and props["x"] == "1" and "purpose" not in props
    assert catalog.namespace_exists(("life", "inner"))
    assert not catalog.namespace_exists(("life", "nope"))
    with pytest.raises(NoSuchNamespaceError):
        catalog.load_namespace_properties(("life", "nope"))

    # paging: pageSize 2 over 5 namespaces and 5 tables, the client follows next-page-token
    for i in range(5):
        catalog.create_namespace(("paging", f"n{i}"))
        catalog.create_table(("paging", "n0", f"t{i}"), SCHEMA)
    paged = catalogs(**{"rest-page-size": "2"})
    assert paged.list_namespaces("paging") == [("paging", f"n{i}") for i in range(5)]
    assert sorted(paged.list_tables(("paging", "n0"))) == [("paging", "n0", f"t{i}") for i in range(5)]
    # one page by hand: a token, and the last page none
    r = restenv.call("GET", restenv.url(f"namespaces?parent=paging&pageSize=2"))
    assert r.status_code == 200, r.text
    page = r.json()
    assert page["namespaces"] == [["paging", "n0"], ["paging", "n1"]] and page["next-page-token"]
    r = restenv.call("GET", restenv.url(f"namespaces?parent=paging&pageSize=3&pageToken={page['next-page-token']}"))
    assert r.json()["namespaces"] == [["paging", "n2"], ["paging", "n3"], ["paging", "n4"]]
    assert r.json().get("next-page-token") is None

    # drop: not while it holds a namespace or a table
    with pytest.raises(NamespaceNotEmptyError):
        catalog.drop_namespace(("life", "inner"))
    assert catalog.namespace_exists(("life", "inner", "deepest"))
    with pytest.raises(NamespaceNotEmptyError):
        catalog.drop_namespace(("paging", "n0"))
    for i in range(5):
        catalog.drop_table(("paging", "n0", f"t{i}"))
    catalog.drop_namespace(("paging", "n0"))
    assert not catalog.namespace_exists(("paging", "n0"))
    with pytest.raises(NoSuchNamespaceError):
        catalog.drop_namespace(("paging", "n0"))


# ------------------------------------------------------------ a table's life

def test_table_lifecycle(catalog, catalogs, skade, pg):
    other = catalogs()  # an independent client
    if not catalog.namespace_exists("life"):
        catalog.create_namespace("life")
    ident = ("life", "events")
    t = catalog.create_table(ident, SCHEMA, partition_spec=SPEC, properties={"commit.retry.num-retries": "0"})
    check(skade, pg, t, "create")
    assert t.current_snapshot() is None
    with pytest.raises(TableAlreadyExistsError):
        catalog.create_table(ident, SCHEMA)
    assert catalog.table_exists(ident) and ident in catalog.list_tables("life")

    history = []  # (snapshot id, ids at that snapshot)

    # appends
    t.append(rows(1, 2, 3))
    check(skade, pg, t)
    history.append((t.current_snapshot().snapshot_id, [1, 2, 3]))
    t.append(rows(4, 5, 6, 10, 11))
    check(skade, pg, t)
    history.append((t.current_snapshot().snapshot_id, [1, 2, 3, 4, 5, 6, 10, 11]))
    assert other.load_table(ident).metadata_location == t.metadata_location

    # overwrite (a filter: category a is replaced)
    t.overwrite(rows(100, 103, category="a"), overwrite_filter=EqualTo("category", "a"))
    check(skade, pg, t)
    want = sorted([i for i in history[-1][1] if "abc"[i % 3] != "a"] + [100, 103])
    assert ids_of(t.scan()) == want
    history.append((t.current_snapshot().snapshot_id, want))

    # delete
    t.delete(EqualTo("category", "b"))
    check(skade, pg, t)
    want = [i for i in want if not ("abc"[i % 3] == "b" and i < 100)]
    assert ids_of(t.scan()) == want
    history.append((t.current_snapshot().snapshot_id, want))

    # schema evolution: a column added, one renamed; old rows read as null
    with t.update_schema() as u:
        u.add_column("note", StringType())
        u.rename_column("amount", "value")
    check(skade, pg, t)
    assert [f.name for f in t.schema().fields] == ["id", "category", "value", "note"]
    assert len(t.schemas()) == 2
    t.append(pa.Table.from_pylist([{"id": 200, "category": "c", "value": 1.0, "note": "new"}],
                                  schema=t.schema().as_arrow()))
    check(skade, pg, t)
    want = sorted(want + [200])
    history.append((t.current_snapshot().snapshot_id, want))
    notes = {r["id"]: r["note"] for r in t.scan(selected_fields=("id", "note")).to_arrow().to_pylist()}
    assert notes[200] == "new" and all(v is None for k, v in notes.items() if k != 200)

    # partition evolution: bucket[4](id) added
    with t.update_spec() as u:
        u.add_field("id", BucketTransform(4), "id_bucket")
    check(skade, pg, t)
    assert len(t.specs()) == 2 and t.spec().spec_id == 1
    t.append(pa.Table.from_pylist([{"id": i, "category": "a", "value": 2.0, "note": None} for i in (300, 301, 302)],
                                  schema=t.schema().as_arrow()))
    check(skade, pg, t)
    want = sorted(want + [300, 301, 302])
    history.append((t.current_snapshot().snapshot_id, want))
    specs = {r[0] for r in pg_query(pg, "SELECT DISTINCT partition_spec_id FROM skade.files('life', 'events', NULL, %s)",
                                    (restenv.CATALOG,))}
    assert specs == {0, 1}

    # properties through a transaction
    with t.transaction() as tx:
        tx.set_properties(owner="rest-suite")
    check(skade, pg, t)
    assert catalog.load_table(ident).properties["owner"] == "rest-suite"

    # time travel: every snapshot reads as it was, and skade agrees on each one's files
    for sid, at in history:
        assert ids_of(t.scan(snapshot_id=sid)) == at, f"snapshot {sid}"
        n, = pg_query(pg, "SELECT sum(record_count) FROM skade.files('life', 'events', %s, %s)",
                      (sid, restenv.CATALOG))[0]
        # (deletes rewrite whole files here: no delete files, so the counts are the rows)
        assert n == len(at)
    skade.agrees(catalog.load_table(ident))

    # a stale handle loses with 409 (CommitFailedException), nothing logged
    stale = other.load_table(ident)
    t.append(evolved(t, 400))
    check(skade, pg, t)
    with pytest.raises(CommitFailedException):
        stale.append(evolved(t, 401))
    skade.expect_no_log()

    # the reader's token loads, but cannot commit (403)
    reader = catalogs(restenv.READER_TOKEN)
    rt = reader.load_table(ident)
    assert rt.metadata_location == t.metadata_location
    with pytest.raises(ForbiddenError):
        rt.append(evolved(rt, 500))
    with pytest.raises(ForbiddenError):
        reader.create_namespace("life_reader_ns")
    skade.expect_no_log()

    # rename into another namespace, then drop
    catalog.create_namespace("life_moved")
    catalog.rename_table(ident, ("life_moved", "events2"))
    moved = catalog.load_table(("life_moved", "events2"))
    skade.renamed(ident, moved)
    assert ids_of(moved.scan()) == sorted(want + [400])
    with pytest.raises(NoSuchTableError):
        catalog.load_table(ident)
    rest_body_agrees(moved)

    catalog.drop_table(("life_moved", "events2"))
    skade.dropped(("life_moved", "events2"))
    with pytest.raises(NoSuchTableError):
        catalog.load_table(("life_moved", "events2"))
    with pytest.raises(NoSuchTableError):
        catalog.drop_table(("life_moved", "events2"))
    catalog.drop_namespace("life_moved")


def test_register_and_multi_table_transaction(catalog, skade, pg):
    if not catalog.namespace_exists("life"):
        catalog.create_namespace("life")
    a = catalog.create_table(("life", "ta"), SCHEMA)
    skade.created(a)
    a.append(rows(1))
    skade.committed(a)
    # register a second name for a's metadata
    b = catalog.register_table(("life", "tb"), a.metadata_location)
    assert b.metadata_location == a.metadata_location
    got = skade.new_log_rows()
    assert [(r[0], r[2], r[3]) for r in got] == [("register", "tb", a.metadata_location)]
    skade.expect_log(*[tuple(r) for r in got])
    skade.known[("life", "tb")] = b.metadata_location
    skade.agrees(b)

    # POST /transactions/commit: both tables or neither
    base_a, base_b = a.metadata_location, b.metadata_location

    def change(table, key, value, snapshot_id):
        ns, name = split_ident(table.name())
        return {"identifier": {"namespace": ns.split("."), "name": name},
                "requirements": [{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": snapshot_id}],
                "updates": [{"action": "set-properties", "updates": {key: value}}]}

    sid = a.current_snapshot().snapshot_id
    r = restenv.call("POST", restenv.url("transactions/commit"),
                     body={"table-changes": [change(a, "k", "a", sid), change(b, "k", "b", sid)]})
    assert r.status_code == 204, r.text
    a, b = catalog.load_table(("life", "ta")), catalog.load_table(("life", "tb"))
    assert a.properties["k"] == "a" and b.properties["k"] == "b"
    skade.expect_log(("commit", "life", "ta", a.metadata_location, base_a),
                     ("commit", "life", "tb", b.metadata_location, base_b))
    # one stale requirement: neither commits (409), nothing logged
    r = restenv.call("POST", restenv.url("transactions/commit"),
                     body={"table-changes": [change(a, "k", "a2", sid), change(b, "k", "b2", sid + 1)]})
    restenv.assert_error(r, 409, "CommitFailedException")
    skade.expect_no_log()
    assert catalog.load_table(("life", "ta")).properties["k"] == "a"
    # a missing table in the transaction: 404, nothing logged
    r = restenv.call("POST", restenv.url("transactions/commit"),
                     body={"table-changes": [change(a, "k", "a3", sid),
                                             {**change(b, "k", "b3", sid), "identifier": {"namespace": ["life"], "name": "nope"}}]})
    restenv.assert_error(r, 404, "NoSuchTableException")
    skade.expect_no_log()


def pg_query(pg, sql, params=()):
    with pg.cursor() as cur:
        cur.execute(sql, params)
        return cur.fetchall()
