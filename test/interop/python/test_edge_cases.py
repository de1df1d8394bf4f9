"""Bad input and edge cases: another catalog name, a missing namespace,
old-style (V0) rows, a client crash between writing metadata and committing."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pytest

from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.exceptions import NoSuchNamespaceError, NoSuchTableError

from skadecheck import Skade

pytestmark = pytest.mark.usefixtures("fresh_skade")

NAMESPACES = ("edge", "legacy", "crash", "scratch")
HERE = Path(__file__).resolve().parent

ARROW = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("v", pa.string())])


def batch(*ids: int) -> pa.Table:
    return pa.Table.from_pylist([{"id": i, "v": f"v{i}"} for i in ids], schema=ARROW)


def ids(table) -> list[int]:
    return sorted(r["id"] for r in table.scan().to_arrow().to_pylist())


def metadata_files(warehouse: Path, ns: str, name: str) -> set[str]:
    return {p.name for p in (warehouse / ns / name / "metadata").glob("*.metadata.json")}


# ---------------------------------------------------------------- other catalog name

def test_other_catalog_name_sees_nothing_of_py_cat(catalog, catalogs, skade, pg, warehouse):
    catalog.create_namespace("edge", {"owner": "py"})
    t = catalog.create_table("edge.mine", ARROW)
    skade.created(t)
    t.append(batch(1))
    skade.committed(t)

    other = catalogs("other_cat")
    other_skade = Skade(pg, "other_cat")
    assert other.list_namespaces() == []
    assert not other.namespace_exists("edge")
    with pytest.raises(NoSuchNamespaceError):
        other.list_tables("edge")
    with pytest.raises(NoSuchNamespaceError):
        other.load_namespace_properties("edge")
    with pytest.raises(NoSuchTableError):
        other.load_table("edge.mine")
    assert not other.table_exists("edge.mine")
    with pytest.raises(NoSuchTableError):
        other.drop_table("edge.mine")
    assert skade.query("SELECT count(*) FROM skade.list_namespaces(NULL, 'other_cat')") == [(0,)]
    other_skade.load_fails("edge", "mine")

    # other_cat may use the same names for its own, separate objects
    other.create_namespace("edge")
    theirs = other.create_table("edge.mine", ARROW, location=(warehouse / "edge" / "mine_of_other_cat").as_uri())
    other_skade.created(theirs)
    theirs.append(batch(7, 8))
    other_skade.committed(theirs)
    assert ids(other.load_table("edge.mine")) == [7, 8]
    assert ids(catalog.load_table("edge.mine")) == [1]
    assert catalog.load_namespace_properties("edge") == {"owner": "py"}
    skade.expect_no_log()  # nothing was logged under py_cat
    skade.agrees(catalog.load_table("edge.mine"))
    other.drop_table("edge.mine")
    other_skade.dropped("edge.mine")
    assert ids(catalog.load_table("edge.mine")) == [1]


# ---------------------------------------------------------------- missing namespace

def _attempts(cat: SqlCatalog):
    """Operations that need a namespace which does not exist; the outcome of each."""
    outcomes = {}
    for label, op in [
        ("create_table", lambda: cat.create_table("nowhere.t", ARROW)),
        ("create_table_nested", lambda: cat.create_table("edge.nowhere.t", ARROW)),
        ("list_tables", lambda: cat.list_tables("nowhere")),
        ("drop_namespace", lambda: cat.drop_namespace("nowhere")),
        ("rename_into", lambda: cat.rename_table("edge.exists", "nowhere.t")),
    ]:
        try:
            op()
            outcomes[label] = "ok"
        except Exception as e:  # compared below, type and message
            outcomes[label] = (type(e).__name__, str(e))
    return outcomes


def test_missing_namespace_behaves_as_plain_sqlcatalog(catalog, skade, warehouse, tmp_path):
    if not catalog.namespace_exists("edge"):
        catalog.create_namespace("edge")
    t = catalog.create_table("edge.exists", ARROW)
    skade.created(t)

    # the same client against a plain SqlCatalog (SQLite) as the reference behaviour
    plain = SqlCatalog("py_cat", uri=f"sqlite:///{tmp_path}/plain.db", warehouse=(tmp_path / "wh").as_uri())
    try:
        plain.create_namespace("edge")
        plain.create_table("edge.exists", ARROW)
        reference = _attempts(plain)
    finally:
        plain.close()

    before = skade.catalog_rows()
    outcome = _attempts(catalog)
    assert outcome == reference
    assert outcome["create_table"][0] == "NoSuchNamespaceError"
    assert outcome["rename_into"][0] == "NoSuchNamespaceError"
    assert skade.catalog_rows() == before
    skade.expect_no_log()
    assert not (warehouse / "nowhere").exists()
    assert catalog.load_table("edge.exists").metadata_location == t.metadata_location


# ---------------------------------------------------------------- old-style V0 rows

def test_old_style_rows_without_iceberg_type(catalog, catalogs, skade, pg):
    """Rows written by a V0 client (no iceberg_type column in its INSERT) and
    rows with an explicit NULL type are tables for pyiceberg and skade."""
    # an "old client" wrote two tables' files with another catalog name; we keep the files
    scratch = catalogs("scratch_cat")
    scratch.create_namespace("scratch")
    locations = {}
    for name, first in (("t_default", 1), ("t_null", 10)):
        src = scratch.create_table(f"scratch.{name}", ARROW)
        src.append(batch(first, first + 1))
        locations[name] = src.metadata_location
        scratch.drop_table(f"scratch.{name}")

    with pg.cursor() as cur:
        # V0 INSERT: the column is not named, so its default applies
        cur.execute("INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name,"
                    " metadata_location, previous_metadata_location)"
                    " VALUES ('py_cat', 'legacy', 't_default', %s, NULL)", (locations["t_default"],))
        cur.execute("INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name,"
                    " metadata_location, previous_metadata_location, iceberg_type)"
                    " VALUES ('py_cat', 'legacy', 't_null', %s, NULL, NULL)", (locations["t_null"],))
    skade.expect_log(("create", "legacy", "t_default", locations["t_default"]),
                     ("create", "legacy", "t_null", locations["t_null"]))
    types = dict(skade.query("SELECT table_name, iceberg_type FROM iceberg_tables"
                             " WHERE catalog_name = 'py_cat' AND table_namespace = 'legacy'"))
    assert types == {"t_default": "TABLE", "t_null": None}
    logged_types = skade.query("SELECT DISTINCT iceberg_type FROM skade.commit_log"
                               " WHERE catalog_name = 'py_cat' AND table_namespace = 'legacy'")
    assert logged_types == [("TABLE",)]  # NULL means TABLE

    # a table row alone makes its namespace exist
    assert ("legacy",) in catalog.list_namespaces()
    assert sorted(catalog.list_tables("legacy")) == [("legacy", "t_default"), ("legacy", "t_null")]
    assert sorted(r[0] for r in skade.query("SELECT skade.list_tables('legacy', 'py_cat')")) == [
        "t_default", "t_null"]

    for name, first in (("t_default", 1), ("t_null", 10)):
        t = catalog.load_table(f"legacy.{name}")
        assert t.metadata_location == locations[name]
        assert ids(t) == [first, first + 1]
        skade.agrees(t)
        t.append(batch(first + 2))
        skade.committed(t)
        assert ids(catalog.load_table(f"legacy.{name}")) == [first, first + 1, first + 2]

    # pyiceberg's commit leaves the type as it was
    types = dict(skade.query("SELECT table_name, iceberg_type FROM iceberg_tables"
                             " WHERE catalog_name = 'py_cat' AND table_namespace = 'legacy'"))
    assert types == {"t_default": "TABLE", "t_null": None}

    # rename and drop work on the NULL-typed row
    renamed = catalog.rename_table("legacy.t_null", "legacy.t_null_renamed")
    skade.renamed("legacy.t_null", renamed)
    assert ids(renamed) == [10, 11, 12]
    catalog.drop_table("legacy.t_null_renamed")
    skade.dropped("legacy.t_null_renamed")
    assert catalog.list_tables("legacy") == [("legacy", "t_default")]


# ---------------------------------------------------------------- client crash

@pytest.fixture
def crash_table(catalog, skade):
    if not catalog.namespace_exists("crash"):
        catalog.create_namespace("crash")

    def make(name):
        t = catalog.create_table(f"crash.{name}", ARROW, properties={"commit.retry.num-retries": "0"})
        skade.created(t)
        t.append(batch(1, 2))
        skade.committed(t)
        return t
    return make


def test_crash_after_writing_metadata_before_commit(catalog, crash_table, skade, warehouse, monkeypatch):
    t = crash_table("before_update")
    before_rows = skade.catalog_rows()
    files_before = metadata_files(warehouse, "crash", "before_update")
    real_write = catalog._write_metadata

    def write_then_crash(metadata, io, metadata_path):
        real_write(metadata, io, metadata_path)
        raise SystemError("client crashed after writing " + metadata_path)

    monkeypatch.setattr(catalog, "_write_metadata", write_then_crash)
    with pytest.raises(SystemError):
        t.append(batch(3))
    monkeypatch.undo()

    # the metadata file was written ...
    orphans = metadata_files(warehouse, "crash", "before_update") - files_before
    assert len(orphans) == 1
    # ... but the catalog did not move
    assert skade.catalog_rows() == before_rows
    skade.expect_no_log()
    skade.agrees(catalog.load_table("crash.before_update"))
    assert catalog.load_table("crash.before_update").metadata_location == t.metadata_location
    assert ids(catalog.load_table("crash.before_update")) == [1, 2]

    # the client recovers by reloading
    t = catalog.load_table("crash.before_update")
    t.append(batch(3))
    skade.committed(t)
    assert ids(t) == [1, 2, 3]


def test_process_dies_inside_the_commit_transaction(catalog, crash_table, skade, warehouse, pg):
    """A real crash: the client process exits after its UPDATE (and skade's
    trigger) ran inside the transaction, before COMMIT.  Postgres rolls the
    transaction back, log row included."""
    t = crash_table("mid_tx")
    before_rows = skade.catalog_rows()
    env = dict(os.environ, SKADE_WAREHOUSE=str(warehouse))
    proc = subprocess.run([sys.executable, str(HERE / "crash_client.py"), "crash.mid_tx",
                           json.dumps({"id": 3, "v": "v3"})],
                          cwd=HERE, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 17, proc.stdout + proc.stderr
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    # inside its transaction the client had swapped the pointer and skade had logged it
    new_location = seen["in_tx_location"]
    assert new_location != t.metadata_location
    assert seen["in_tx_log"] == ["commit", new_location]
    assert Path(new_location.removeprefix("file://")).exists()

    # after the crash (the server notices the dropped connection) nothing of it remains
    deadline = time.monotonic() + 10
    while skade.query("SELECT count(*) FROM pg_stat_activity"
                      " WHERE datname = current_database() AND state LIKE 'idle in transaction%%'")[0][0]:
        assert time.monotonic() < deadline, "the crashed client's transaction is still open"
        time.sleep(0.05)
    assert skade.catalog_rows() == before_rows
    skade.expect_no_log()
    assert skade.load_table("crash", "mid_tx")[0] == t.metadata_location
    reloaded = catalog.load_table("crash.mid_tx")
    assert reloaded.metadata_location == t.metadata_location
    assert ids(reloaded) == [1, 2]

    reloaded.append(batch(3))
    skade.committed(reloaded)
    assert ids(catalog.load_table("crash.mid_tx")) == [1, 2, 3]
