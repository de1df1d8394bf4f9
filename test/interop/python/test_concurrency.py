"""Two clients committing against the same base: the loser gets
CommitFailedException, and succeeds after reloading.

pyiceberg 0.12.0 retries failed snapshot commits by itself (table property
commit.retry.num-retries, default 4).  The tests pin it to 0 where the
failure itself is under test, and check the automatic retry separately.
"""

import logging
import threading
from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa
import pytest

from pyiceberg.exceptions import CommitFailedException

pytestmark = pytest.mark.usefixtures("fresh_skade")

NAMESPACES = ("conc",)

ARROW = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("who", pa.string())])
NO_RETRY = {"commit.retry.num-retries": "0"}


def batch(who: str, *ids: int) -> pa.Table:
    return pa.Table.from_pylist([{"id": i, "who": who} for i in ids], schema=ARROW)


def ids(table) -> list[tuple[int, str]]:
    return sorted((r["id"], r["who"]) for r in table.scan().to_arrow().to_pylist())


@pytest.fixture
def two_clients(catalogs):
    a, b = catalogs("py_cat"), catalogs("py_cat")
    if not a.namespace_exists("conc"):
        a.create_namespace("conc")
    return a, b


def test_stale_handle_loses_and_wins_after_reload(two_clients, skade):
    a, b = two_clients
    t = a.create_table("conc.stale", ARROW, properties=NO_RETRY)
    skade.created(t)
    t.append(batch("base", 1))
    skade.committed(t)

    h1 = a.load_table("conc.stale")
    h2 = b.load_table("conc.stale")
    assert h1.metadata_location == h2.metadata_location

    h1.append(batch("h1", 2))
    skade.committed(h1)

    base = h2.metadata_location
    with pytest.raises(CommitFailedException):
        h2.append(batch("h2", 3))
    skade.expect_no_log()
    assert skade.load_table("conc", "stale")[0] == h1.metadata_location
    assert h2.metadata_location == base  # the loser's handle is untouched

    h2 = b.load_table("conc.stale")
    h2.append(batch("h2", 3))
    skade.committed(h2, previous=h1.metadata_location)
    assert ids(a.load_table("conc.stale")) == [(1, "base"), (2, "h1"), (3, "h2")]


def test_lost_compare_and_swap_in_postgres(two_clients, skade, monkeypatch):
    """The race pyiceberg cannot see: the winner commits after the loser has
    checked its requirements and written its metadata file, so the loser's
    UPDATE ... WHERE metadata_location = <base> matches no row in skade."""
    a, b = two_clients
    t = a.create_table("conc.race", ARROW, properties=NO_RETRY)
    skade.created(t)

    winner = a.load_table("conc.race")
    loser = b.load_table("conc.race")
    base = loser.metadata_location
    written = []
    real_write = b._write_metadata

    def write_then_let_the_winner_commit(metadata, io, metadata_path):
        real_write(metadata, io, metadata_path)
        written.append(metadata_path)
        if len(written) == 1:
            winner.append(batch("winner", 1))

    monkeypatch.setattr(b, "_write_metadata", write_then_let_the_winner_commit)
    with pytest.raises(CommitFailedException, match="updated by another process"):
        loser.append(batch("loser", 2))
    monkeypatch.undo()

    # only the winner's commit is in skade; the loser's metadata file exists but is not current
    assert len(written) == 1
    skade.committed(winner, previous=base)
    assert written[0] != winner.metadata_location
    assert skade.load_table("conc", "race") == (winner.metadata_location, base)

    loser = b.load_table("conc.race")
    loser.append(batch("loser", 2))
    skade.committed(loser, previous=winner.metadata_location)
    assert ids(loser) == [(1, "winner"), (2, "loser")]


def test_default_automatic_retry(two_clients, skade, caplog):
    """With pyiceberg's default retry settings the stale append is retried on a
    refreshed base by the client itself: both appends land, one log row each."""
    a, b = two_clients
    t = a.create_table("conc.retry", ARROW)
    skade.created(t)
    assert "commit.retry.num-retries" not in t.properties

    h1 = a.load_table("conc.retry")
    h2 = b.load_table("conc.retry")
    h1.append(batch("h1", 1))
    skade.committed(h1)
    with caplog.at_level(logging.WARNING, logger="pyiceberg"):
        h2.append(batch("h2", 2))  # stale base: fails once inside pyiceberg, then retried
    retries = [r for r in caplog.records if "retrying" in r.getMessage()]
    assert len(retries) == 1, [r.getMessage() for r in caplog.records]
    skade.committed(h2, previous=h1.metadata_location)
    final = a.load_table("conc.retry")
    assert ids(final) == [(1, "h1"), (2, "h2")]
    assert len(final.snapshots()) == 2
    assert final.current_snapshot().parent_snapshot_id == h1.current_snapshot().snapshot_id


def test_concurrent_property_updates_on_stale_handles(two_clients, skade):
    """Metadata-only commits (no snapshot) are rebased by pyiceberg on the
    current metadata, so a stale handle's property change does not lose the
    other client's change."""
    a, b = two_clients
    t = a.create_table("conc.props", ARROW, properties=NO_RETRY)
    skade.created(t)
    h1, h2 = a.load_table("conc.props"), b.load_table("conc.props")
    with h1.transaction() as tx:
        tx.set_properties(owner="h1")
    skade.committed(h1)
    with h2.transaction() as tx:
        tx.set_properties(reviewer="h2")
    skade.committed(h2, previous=h1.metadata_location)
    props = a.load_table("conc.props").properties
    assert props["owner"] == "h1" and props["reviewer"] == "h2"


def test_parallel_appends_from_many_clients(catalogs, skade):
    """Four clients append at the same time (threads, own connections). Every
    append lands exactly once, and skade logs one chained row per commit."""
    clients = [catalogs("py_cat") for _ in range(4)]
    if not clients[0].namespace_exists("conc"):
        clients[0].create_namespace("conc")
    t = clients[0].create_table("conc.parallel", ARROW, properties={
        "commit.retry.num-retries": "20", "commit.retry.min-wait-ms": "10", "commit.retry.max-wait-ms": "200"})
    skade.created(t)
    handles = [c.load_table("conc.parallel") for c in clients]
    barrier = threading.Barrier(len(handles))

    def append(n):
        barrier.wait(timeout=30)
        handles[n].append(batch(f"c{n}", n))

    with ThreadPoolExecutor(len(handles)) as pool:
        for f in [pool.submit(append, n) for n in range(len(handles))]:
            f.result(timeout=120)

    final = clients[0].load_table("conc.parallel")
    assert ids(final) == [(n, f"c{n}") for n in range(len(handles))]
    assert len(final.snapshots()) == len(handles)
    log = skade.new_log_rows()
    assert [r[0] for r in log] == ["commit"] * len(handles)
    previous = t.metadata_location
    for op, ns, name, loc, prev, _, _ in log:
        assert (ns, name, prev) == ("conc", "parallel", previous)  # a single chain, no lost update
        previous = loc
    assert previous == final.metadata_location
    assert skade.load_table("conc", "parallel") == (final.metadata_location, log[-2][3])
