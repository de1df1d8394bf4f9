"""Mixed-client protocol with the Java suite (run by `run.sh mixed` only).

Catalog name `interop`, warehouse SKADE_WAREHOUSE shared with Java.  Before
this phase the Java suite has created namespace `mixed` and table
`mixed.from_java` (id long required, name string) holding ids 1..10 named
"j<id>", written in two appends.  This phase reads it, appends (11, "p11"),
and creates `mixed.from_python` (ids 1..5 named "p<id>") for Java to read.
Nothing here resets the database.
"""

import pyarrow as pa
import pytest

from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

from skadecheck import Skade

pytestmark = pytest.mark.mixed

CATALOG = "interop"
SCHEMA = Schema(NestedField(1, "id", LongType(), required=True),
                NestedField(2, "name", StringType(), required=False))
ARROW = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string())])


@pytest.fixture
def interop(catalogs):
    return catalogs(CATALOG)


@pytest.fixture
def iskade(pg):
    return Skade(pg, CATALOG)


def rows(table):
    return sorted((r["id"], r["name"]) for r in table.scan().to_arrow().to_pylist())


def test_read_table_written_by_java(interop, iskade):
    t = interop.load_table("mixed.from_java")
    assert rows(t) == [(i, f"j{i}") for i in range(1, 11)]
    assert len(t.snapshots()) == 2
    assert [f.name for f in t.schema().fields] == ["id", "name"]
    assert t.schema().find_field("id").required
    iskade.agrees(t)
    log = iskade.table_log("mixed", "from_java")
    assert [op for op, _, _ in log] == ["create", "commit", "commit"], \
        "Java's create and two appends should be one log row each"
    assert log[-1][1] == t.metadata_location


def test_python_appends_to_java_table(interop, iskade):
    t = interop.load_table("mixed.from_java")
    iskade.agrees(t)
    n_snapshots = len(t.snapshots())
    t.append(pa.Table.from_pylist([{"id": 11, "name": "p11"}], schema=ARROW))
    iskade.committed(t)
    assert iskade.table_log("mixed", "from_java")[-1][0] == "commit"
    reread = interop.load_table("mixed.from_java")
    assert rows(reread) == [(i, f"j{i}") for i in range(1, 11)] + [(11, "p11")]
    assert len(reread.snapshots()) == n_snapshots + 1


def test_python_creates_table_for_java(interop, iskade):
    if interop.table_exists("mixed.from_python"):  # left by an earlier run of this phase
        interop.drop_table("mixed.from_python")
        iskade.mark = iskade.max_seq()
    t = interop.create_table("mixed.from_python", SCHEMA)
    iskade.created(t)
    t.append(pa.Table.from_pylist([{"id": i, "name": f"p{i}"} for i in range(1, 6)], schema=ARROW))
    iskade.committed(t)
    assert rows(interop.load_table("mixed.from_python")) == [(i, f"p{i}") for i in range(1, 6)]
    assert [op for op, _, _ in iskade.table_log("mixed", "from_python")][-2:] == ["create", "commit"]
