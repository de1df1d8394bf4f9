"""A commit made through skade's SQL API (skade.commit_table) is seen by pyiceberg."""

import psycopg2
import pyarrow as pa
import pytest

from pyiceberg.exceptions import CommitFailedException

pytestmark = pytest.mark.usefixtures("fresh_skade")

NAMESPACES = ("api",)

ARROW = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("v", pa.string())])


def batch(*ids: int) -> pa.Table:
    return pa.Table.from_pylist([{"id": i, "v": f"v{i}"} for i in ids], schema=ARROW)


def ids(table) -> list[int]:
    return sorted(r["id"] for r in table.scan().to_arrow().to_pylist())


def test_rollback_through_commit_table_is_seen_by_pyiceberg(catalog, skade):
    catalog.create_namespace("api")
    t = catalog.create_table("api.rb", ARROW, properties={"commit.retry.num-retries": "0"})
    skade.created(t)
    t.append(batch(1, 2))
    skade.committed(t)
    good_location, good_snapshot = t.metadata_location, t.current_snapshot().snapshot_id
    t.append(batch(3))
    skade.committed(t)
    bad_location, bad_snapshot = t.metadata_location, t.current_snapshot().snapshot_id
    stale = catalog.load_table("api.rb")

    # roll back: point the table at its previous metadata file
    seq = skade.query("SELECT skade.commit_table('api', 'rb', %s, %s, 'py_cat')",
                      (bad_location, good_location))[0][0]
    assert seq == skade.max_seq()
    skade.expect_log(("commit", "api", "rb", good_location, bad_location))
    assert skade.query("SELECT source FROM skade.commit_log WHERE seq = %s", (seq,)) == [("api",)]

    reloaded = catalog.load_table("api.rb")
    assert reloaded.metadata_location == good_location
    assert reloaded.current_snapshot().snapshot_id == good_snapshot
    assert ids(reloaded) == [1, 2]

    # a handle loaded before the rollback cannot commit on its stale base
    with pytest.raises(CommitFailedException):
        stale.append(batch(4))
    skade.expect_no_log()

    # after reloading it commits on top of the rolled-back state
    reloaded.append(batch(4))
    skade.committed(reloaded, previous=good_location)
    assert reloaded.current_snapshot().parent_snapshot_id == good_snapshot
    assert ids(catalog.load_table("api.rb")) == [1, 2, 4]
    assert bad_snapshot not in [s.snapshot_id for s in reloaded.snapshots()]


def test_commit_table_with_wrong_expected_location_changes_nothing(catalog, skade):
    if not catalog.namespace_exists("api"):
        catalog.create_namespace("api")
    t = catalog.create_table("api.cas", ARROW)
    skade.created(t)
    first = t.metadata_location
    t.append(batch(1))
    skade.committed(t)
    before = skade.catalog_rows()
    with pytest.raises(psycopg2.Error) as err:
        skade.query("SELECT skade.commit_table('api', 'cas', %s, %s, 'py_cat')", (first, first))
    assert err.value.pgcode == "40001"  # serialization_failure: reload and retry
    assert skade.catalog_rows() == before
    skade.expect_no_log()
    assert catalog.load_table("api.cas").metadata_location == t.metadata_location
