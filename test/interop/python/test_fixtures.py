"""The committed pyiceberg fixtures (test/data/clients/python) registered in skade
and read back by pyiceberg: snapshots and rows as recorded in fixtures.json.
Read-only: nothing is committed to the fixture tables."""

import json
import os
from pathlib import Path

import pytest

pytestmark = pytest.mark.usefixtures("fresh_skade")

NAMESPACES = ()  # the fixture tables live in the repository, never under the warehouse

# run.sh points this at a copy the server can read; the checkout by default
FIXTURES = Path(
    os.environ.get("SKADE_PY_FIXTURES")
    or Path(__file__).resolve().parents[2] / "data" / "clients" / "python"
)


@pytest.fixture(scope="module")
def index():
    index = json.loads((FIXTURES / "fixtures.json").read_text())
    root = Path(index["fixture_root"].removeprefix("file://"))
    target = FIXTURES / "warehouse"
    # README.md, "Without rewriting": a link from the recorded root to this checkout
    if root.is_symlink() and root.resolve() != target.resolve():
        root.unlink()  # a link left by a run in another checkout
    if not root.exists() and not root.is_symlink():
        root.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, root)
    if root.resolve() != target.resolve():
        pytest.skip(f"{root} exists and is not a link to {target}")
    return index


def rows(table, **scan):
    out = []
    for r in sorted(table.scan(**scan).to_arrow().to_pylist(), key=lambda r: r["id"]):
        out.append({k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in r.items()})
    return out


def test_fixture_tables_registered_in_skade_read_by_pyiceberg(index, catalog, skade):
    catalog.create_namespace("fx")
    for info in index["tables"]:
        name = info["table"].split(".")[-1]
        # through skade's API, with the plain metadata file
        skade.query("SELECT skade.register_table('fx', %s, %s, 'py_cat')",
                    (name, info["current_metadata_location"]))
        skade.expect_log(("register", "fx", name, info["current_metadata_location"]))
        # through pyiceberg's register_table (a plain INSERT), with the gzip copy
        gz = catalog.register_table(f"fx.{name}_gz", info["gzip_metadata_location"])
        skade.expect_log(("create", "fx", f"{name}_gz", info["gzip_metadata_location"]))
        skade.agrees(gz)

        t = catalog.load_table(f"fx.{name}")
        skade.agrees(t)
        assert str(t.metadata.table_uuid) == info["table_uuid"]
        assert t.current_snapshot().snapshot_id == info["current_snapshot_id"]
        assert [s.snapshot_id for s in t.snapshots()] == [s["snapshot_id"] for s in info["snapshots"]]
        assert rows(t) == info["current_rows"]
        assert rows(gz) == info["current_rows"]
        for snap in info["snapshots"]:
            assert rows(t, snapshot_id=snap["snapshot_id"]) == snap["rows"]
            assert rows(gz, snapshot_id=snap["snapshot_id"]) == snap["rows"]


def test_skade_files_agree_with_pyiceberg_plans(index, catalog, skade):
    """skade.files() of every snapshot lists exactly the data files pyiceberg
    plans for it, with the same record counts, and every row the snapshot
    holds lies inside the id bounds of some listed file."""
    catalog.create_namespace("fxf")
    for info in index["tables"]:
        name = info["table"].split(".")[-1]
        skade.query("SELECT skade.register_table('fxf', %s, %s, 'py_cat')",
                    (name, info["current_metadata_location"]))
        t = catalog.load_table(f"fxf.{name}")
        for snap in info["snapshots"]:
            sid = snap["snapshot_id"]
            got = skade.query(
                "SELECT file_path, content, record_count, columns, partition "
                "FROM skade.files('fxf', %s, %s, 'py_cat')", (name, sid))
            data = {path: (count, cols, part) for path, content, count, cols, part in got
                    if content == "data"}
            deletes = [path for path, content, *_ in got if content != "data"]
            assert len(data) + len(deletes) == len(got), "a file listed twice"
            planned = {task.file.file_path: task.file for task in t.scan(snapshot_id=sid).plan_files()}
            assert set(data) == set(planned), f"{name}@{sid}"
            for path, (count, cols, part) in data.items():
                assert count == planned[path].record_count
            if not deletes:
                assert sum(count for count, _, _ in data.values()) == len(snap["rows"])
            for row in snap["rows"]:
                assert any(cols["id"]["lower"] <= row["id"] <= cols["id"]["upper"]
                           for _, cols, _ in data.values()), f"row {row} of {name}@{sid} in no file"
