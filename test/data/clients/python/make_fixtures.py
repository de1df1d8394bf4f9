"""Write small Iceberg tables with the stock pyiceberg client and copy their
files into this directory (see README.md).  Run through regenerate.sh.

The tables are written at FIXTURE_ROOT (default /tmp/skade-fixture-py), so
every path inside the metadata, manifest lists and manifests starts with
file://FIXTURE_ROOT.  The catalog used while writing is a throwaway SqlCatalog
over SQLite named "py_cat"; no catalog state is part of the fixtures.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import sys
import tempfile
from datetime import datetime
from pathlib import Path

import pyarrow as pa

import pyiceberg
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.expressions import EqualTo
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table import StaticTable
from pyiceberg.transforms import DayTransform, IdentityTransform
from pyiceberg.types import DoubleType, LongType, NestedField, StringType, TimestampType

OUT = Path(__file__).resolve().parent
ROOT = Path(os.environ.get("FIXTURE_ROOT", "/tmp/skade-fixture-py")).resolve()
NAMESPACE = "fixtures"

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


def rows(ids, category=None, amount=None):
    return pa.Table.from_pylist([{
        "id": i,
        "category": category or ("a" if i % 2 else "b"),
        "ts": datetime(2024, 3, 1 + i % 2, 8, i % 60),
        "amount": amount if amount is not None else i * 2.5,
    } for i in ids], schema=ARROW)


def jsonable(table: pa.Table) -> list[dict]:
    out = []
    for r in sorted(table.to_pylist(), key=lambda r: r["id"]):
        out.append({k: (v.isoformat() if isinstance(v, datetime) else v) for k, v in r.items()})
    return out


def write_events(catalog: SqlCatalog) -> list[dict]:
    """fixtures.events: partitioned by category and day(ts); append, append,
    partial overwrite (delete + append in one commit), delete, schema change."""
    t = catalog.create_table(f"{NAMESPACE}.events", SCHEMA, partition_spec=SPEC)
    steps = [{"operation": "create", "metadata_location": t.metadata_location, "snapshot_id": None}]

    def step(op):
        steps.append({"operation": op, "metadata_location": t.metadata_location,
                      "snapshot_id": t.current_snapshot().snapshot_id if t.current_snapshot() else None})

    t.append(rows(range(1, 5)))
    step("append")
    t.append(rows(range(5, 7)))
    step("append")
    t.overwrite(rows([101, 103], category="a", amount=0.5), overwrite_filter=EqualTo("category", "a"))
    step("overwrite category=a")
    t.delete(delete_filter=EqualTo("id", 2))
    step("delete id=2")
    with t.update_schema() as u:
        u.add_column("note", StringType())
    step("add column note")
    return steps


def write_unpartitioned(catalog: SqlCatalog) -> list[dict]:
    """fixtures.simple: unpartitioned, two appends (the smallest useful table)."""
    arrow = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string())])
    t = catalog.create_table(f"{NAMESPACE}.simple",
                             Schema(NestedField(1, "id", LongType(), required=True),
                                    NestedField(2, "name", StringType(), required=False)))
    steps = [{"operation": "create", "metadata_location": t.metadata_location, "snapshot_id": None}]
    for lo, hi in ((1, 4), (4, 6)):
        t.append(pa.Table.from_pylist([{"id": i, "name": f"p{i}"} for i in range(lo, hi)], schema=arrow))
        steps.append({"operation": "append", "metadata_location": t.metadata_location,
                      "snapshot_id": t.current_snapshot().snapshot_id})
    return steps


def describe(catalog: SqlCatalog, name: str, steps: list[dict]) -> dict:
    t = catalog.load_table(f"{NAMESPACE}.{name}")
    snapshots = []
    for s in t.snapshots():
        snapshots.append({
            "snapshot_id": s.snapshot_id,
            "parent_snapshot_id": s.parent_snapshot_id,
            "operation": s.summary.operation.value if s.summary else None,
            "manifest_list": s.manifest_list,
            "rows": jsonable(t.scan(snapshot_id=s.snapshot_id).to_arrow()),
        })
    return {
        "table": f"{NAMESPACE}.{name}",
        "location": t.location(),
        "table_uuid": str(t.metadata.table_uuid),
        "format_version": t.metadata.format_version,
        "current_metadata_location": t.metadata_location,
        "current_snapshot_id": t.current_snapshot().snapshot_id,
        "commits": steps,
        "snapshots": snapshots,
        "current_rows": jsonable(t.scan().to_arrow()),
    }


def gzip_copy(metadata_location: str) -> str:
    """A gzip-compressed copy of a metadata file (pyiceberg 0.12 reads but
    cannot write compressed metadata).  Named *.gz.metadata.json, which both
    pyiceberg and Java recognise."""
    src = Path(metadata_location.removeprefix("file://"))
    dst = src.with_name(src.name.removesuffix(".metadata.json") + ".gz.metadata.json")
    with open(src, "rb") as f, gzip.open(dst, "wb") as g:
        g.write(f.read())
    # check that the client reads it like the original
    a = StaticTable.from_metadata(metadata_location)
    b = StaticTable.from_metadata(dst.as_uri())
    assert a.metadata == b.metadata
    assert jsonable(a.scan().to_arrow()) == jsonable(b.scan().to_arrow())
    return dst.as_uri()


def main() -> int:
    if ROOT.exists():
        shutil.rmtree(ROOT)
    ROOT.mkdir(parents=True)
    with tempfile.TemporaryDirectory() as tmp:
        catalog = SqlCatalog("py_cat", uri=f"sqlite:///{tmp}/catalog.db", warehouse=ROOT.as_uri())
        catalog.create_namespace(NAMESPACE)
        index = {
            "generator": "test/data/clients/python/make_fixtures.py",
            "pyiceberg": pyiceberg.__version__,
            "pyarrow": pa.__version__,
            "fixture_root": ROOT.as_uri(),
            "tables": [],
        }
        for name, writer in (("events", write_events), ("simple", write_unpartitioned)):
            steps = writer(catalog)
            info = describe(catalog, name, steps)
            info["gzip_metadata_location"] = gzip_copy(info["current_metadata_location"])
            index["tables"].append(info)
        catalog.close()

    # replace the previously generated copy
    target = OUT / "warehouse"
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(ROOT, target)
    (OUT / "fixtures.json").write_text(json.dumps(index, indent=2) + "\n")
    shutil.rmtree(ROOT)  # the copy here is the fixture; see README.md for using it in place

    size = sum(p.stat().st_size for p in target.rglob("*") if p.is_file())
    print(f"wrote {sum(1 for p in target.rglob('*') if p.is_file())} files, {size} bytes, "
          f"under {target} (paths inside point at {ROOT.as_uri()})")
    if size > 200 * 1024:
        print("fixtures are larger than 200 KB", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
