"""A partitioned table's life through pyiceberg, with skade cross checks after
every client write: create, appends, read, delete, overwrite, time travel,
schema evolution, rename, drop."""

from datetime import datetime

import pyarrow as pa
import pytest

from pyiceberg.exceptions import NoSuchTableError, TableAlreadyExistsError
from pyiceberg.expressions import EqualTo
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import DayTransform, IdentityTransform
from pyiceberg.types import DoubleType, LongType, NestedField, StringType, TimestampType

pytestmark = pytest.mark.usefixtures("fresh_skade")

NAMESPACES = ("life", "moves", "archive")

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "category", StringType(), required=False),
    NestedField(3, "ts", TimestampType(), required=False),
    NestedField(4, "amount", DoubleType(), required=False),
)
SPEC = PartitionSpec(
    PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="category"),
    PartitionField(source_id=3, field_id=1001, transform=DayTransform(), name="ts_day"),
)
ARROW = pa.schema([
    pa.field("id", pa.int64(), nullable=False),
    pa.field("category", pa.string()),
    pa.field("ts", pa.timestamp("us")),
    pa.field("amount", pa.float64()),
])
COLS = ["id", "category", "ts", "amount"]


def row(i: int, category: str | None = None, amount: float | None = None) -> dict:
    return {
        "id": i,
        "category": category or "abc"[i % 3],
        "ts": datetime(2024, 1, 1 + i % 4, 12, i % 60),
        "amount": amount if amount is not None else i * 1.5,
    }


def arrow(rows: list[dict], schema: pa.Schema = ARROW) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=schema)


def content(tbl: pa.Table, cols=COLS) -> list[dict]:
    return sorted(tbl.select(cols).to_pylist(), key=lambda r: r["id"])


def expected(rows: list[dict], cols=COLS) -> list[dict]:
    return sorted(({c: r.get(c) for c in cols} for r in rows), key=lambda r: r["id"])


def test_partitioned_table_writes_reads_and_time_travel(catalog, catalogs, skade):
    other_client = catalogs("py_cat")  # a second, independent client of the same catalog
    catalog.create_namespace("life")

    t = catalog.create_table("life.events", SCHEMA, partition_spec=SPEC)
    skade.created(t)
    assert t.spec().fields == SPEC.fields
    assert t.current_snapshot() is None
    assert t.scan().to_arrow().num_rows == 0

    def check(table):
        # another client sees exactly what this one committed
        assert other_client.load_table("life.events").metadata_location == table.metadata_location
        assert catalog.load_table("life.events").metadata_location == table.metadata_location
        skade.agrees(table)

    history: list[tuple[int, list[dict]]] = []  # (snapshot id, contents at that snapshot)
    data: list[dict] = []

    # three appends, three commits
    for batch in ([row(i) for i in range(1, 7)], [row(i) for i in range(7, 10)], [row(i) for i in range(10, 16)]):
        t.append(arrow(batch))
        skade.committed(t)
        check(t)
        data += batch
        history.append((t.current_snapshot().snapshot_id, list(data)))
        assert content(t.scan().to_arrow()) == expected(data)

    assert len(t.snapshots()) == 3
    # partitioning is real: a partition filter reads that partition only
    files = t.inspect.files().to_pylist()
    assert {f["partition"]["category"] for f in files} == {"a", "b", "c"}
    assert content(t.scan(row_filter=EqualTo("category", "b")).to_arrow()) == expected(
        [r for r in data if r["category"] == "b"])

    # a delete
    t.delete(delete_filter=EqualTo("category", "c"))
    skade.committed(t)
    check(t)
    data = [r for r in data if r["category"] != "c"]
    history.append((t.current_snapshot().snapshot_id, list(data)))
    assert content(t.scan().to_arrow()) == expected(data)

    # a partial overwrite: category 'a' replaced, one commit
    new_a = [row(i, "a", amount=100.0 + i) for i in (100, 101)]
    n_snapshots = len(t.snapshots())
    t.overwrite(arrow(new_a), overwrite_filter=EqualTo("category", "a"))
    skade.committed(t)
    check(t)
    data = [r for r in data if r["category"] != "a"] + new_a
    history.append((t.current_snapshot().snapshot_id, list(data)))
    assert content(t.scan().to_arrow()) == expected(data)
    assert len(t.snapshots()) > n_snapshots

    # a full overwrite: everything replaced, one commit, two snapshots (delete + append)
    replacement = [row(i, "z", amount=-1.0) for i in (500, 501, 502)]
    n_snapshots = len(t.snapshots())
    t.overwrite(arrow(replacement))
    skade.committed(t)
    check(t)
    assert content(t.scan().to_arrow()) == expected(replacement)
    assert len(t.snapshots()) == n_snapshots + 2
    deleted_state = t.current_snapshot().parent_snapshot_id
    assert t.scan(snapshot_id=deleted_state).to_arrow().num_rows == 0
    history.append((t.current_snapshot().snapshot_id, list(replacement)))

    # time travel: every earlier snapshot still reads its exact contents
    fresh = other_client.load_table("life.events")
    for snapshot_id, rows in history:
        assert content(fresh.scan(snapshot_id=snapshot_id).to_arrow()) == expected(rows), snapshot_id

    # a tag and a branch (with retention settings) on older snapshots, one commit:
    # skade.refs() and load_table(snapshots => 'refs') then see more than main
    (t.manage_snapshots()
     .create_tag(history[0][0], "first", max_ref_age_ms=86_400_000)
     .create_branch(history[1][0], "audit", max_ref_age_ms=7_200_000,
                    max_snapshot_age_ms=3_600_000, min_snapshots_to_keep=2)
     .commit())
    skade.committed(t)
    check(t)
    assert {n: r.snapshot_id for n, r in t.metadata.refs.items()} == {
        "main": history[-1][0], "first": history[0][0], "audit": history[1][0]}

    # schema evolution: add a column, append rows using it, read old and new rows
    with t.update_schema() as update:
        update.add_column("note", StringType(), doc="added by pyiceberg")
    skade.committed(t)
    check(t)
    assert [f.name for f in t.schema().fields] == COLS + ["note"]

    arrow_v2 = ARROW.append(pa.field("note", pa.string()))
    new_rows = [dict(row(i, "n"), note=f"note {i}") for i in (600, 601)]
    t.append(arrow(new_rows, arrow_v2))
    skade.committed(t)
    check(t)
    all_rows = [dict(r, note=None) for r in replacement] + new_rows
    reread = other_client.load_table("life.events")
    assert [f.name for f in reread.schema().fields] == COLS + ["note"]
    assert content(reread.scan().to_arrow(), COLS + ["note"]) == expected(all_rows, COLS + ["note"])
    # old snapshots still read under time travel after the schema change
    for snapshot_id, rows in history:
        assert content(reread.scan(snapshot_id=snapshot_id).to_arrow()) == expected(rows)

    # the per-table history in skade: one create and one row per commit, in order
    log = skade.table_log("life", "events")
    assert [op for op, _, _ in log] == ["create"] + ["commit"] * 9
    for (_, loc, prev), (_, before, _) in zip(log[1:], log[:-1]):
        assert prev == before  # each commit chains on the previous location
    assert log[-1][1] == t.metadata_location
    # pyiceberg's own metadata log agrees with skade's chain
    assert [e.metadata_file for e in reread.metadata.metadata_log] == [loc for _, loc, _ in log[:-1]]


def test_rename_and_drop(catalog, skade):
    catalog.create_namespace("moves", {})
    catalog.create_namespace("archive")
    t = catalog.create_table("moves.to_move", SCHEMA, partition_spec=SPEC)
    skade.created(t)
    t.append(arrow([row(1), row(2)]))
    skade.committed(t)

    with pytest.raises(TableAlreadyExistsError):
        catalog.create_table("moves.to_move", SCHEMA)
    skade.expect_no_log()

    moved = catalog.rename_table("moves.to_move", "moves.moved")
    skade.renamed("moves.to_move", moved)
    assert content(moved.scan().to_arrow()) == expected([row(1), row(2)])
    with pytest.raises(NoSuchTableError):
        catalog.load_table("moves.to_move")
    skade.load_fails("moves", "to_move")

    # rename across namespaces
    moved2 = catalog.rename_table("moves.moved", "archive.moved")
    skade.renamed("moves.moved", moved2)
    assert catalog.list_tables("moves") == []
    assert catalog.list_tables("archive") == [("archive", "moved")]
    assert [r[0] for r in skade.query("SELECT skade.list_tables('archive', 'py_cat')")] == ["moved"]

    # a commit after the rename lands on the new name
    moved2.append(arrow([row(3)]))
    skade.committed(moved2)

    # a rename onto an existing table fails and changes nothing
    other = catalog.create_table("moves.other", SCHEMA)
    skade.created(other)
    with pytest.raises(TableAlreadyExistsError):
        catalog.rename_table("archive.moved", "moves.other")
    skade.expect_no_log()
    assert catalog.load_table("archive.moved").metadata_location == moved2.metadata_location

    catalog.drop_table("archive.moved")
    skade.dropped("archive.moved")
    with pytest.raises(NoSuchTableError):
        catalog.load_table("archive.moved")
    with pytest.raises(NoSuchTableError):
        catalog.drop_table("archive.moved")
    skade.expect_no_log()
    assert catalog.list_tables("archive") == []

    catalog.drop_table("moves.other")
    skade.dropped("moves.other")
