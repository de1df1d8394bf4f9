"""Server-side rebase of compatible appends (issue 30, commit_rebase.c): pyiceberg clients
that append from a stale view of a table with skade.rebase-appends=true are rebased onto the
head instead of answered 409; every other stale commit still fails as before.

Each case checks what a reader sees afterwards: every acknowledged append's rows exactly once,
a linear history (each snapshot's parent the one before, sequence numbers 1, 2, ...), time
travel to each snapshot reading what was committed up to it, summary totals that add up, and
the manifests of every snapshot readable through skade's own functions.
"""

from __future__ import annotations

import json
import threading
from collections import Counter

import pyarrow as pa
import pytest

from pyiceberg.exceptions import CommitFailedException
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

import restenv

pytestmark = pytest.mark.usefixtures("fresh_namespaces")

NAMESPACES = ("rebase",)
NS = "rebase"
SCHEMA = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "who", StringType(), required=False))
ARROW = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("who", pa.string())])
# pyiceberg retries a 409 itself (re-reads the table, rewrites its manifest list): never here,
# so every success is the server's
NO_RETRY = {"commit.retry.num-retries": "0"}
ON = {"skade.rebase-appends": "true", **NO_RETRY}


def rows(ids, who: str) -> pa.Table:
    ids = list(ids)
    return pa.Table.from_pylist([{"id": i, "who": who} for i in ids], schema=ARROW)


@pytest.fixture(scope="module")
def cat():
    c = restenv.make_catalog()
    c.create_namespace(NS)
    return c


def history(table):
    """The main branch's snapshots, oldest first, by parent links from the current one."""
    by_id = {s.snapshot_id: s for s in table.metadata.snapshots}
    chain = []
    s = table.current_snapshot()
    while s is not None:
        chain.append(s)
        s = by_id.get(s.parent_snapshot_id) if s.parent_snapshot_id is not None else None
    return list(reversed(chain))


def ids_at(table, snapshot_id=None) -> list[int]:
    scan = table.scan(snapshot_id=snapshot_id) if snapshot_id else table.scan()
    return sorted(scan.to_arrow()["id"].to_pylist())


def check_linear(table, committed: dict[int, list[int]]):
    """History linear, sequence numbers 1..n, each snapshot reads the rows committed up to it,
    totals add up; committed: snapshot id -> ids it appended."""
    chain = history(table)
    assert [s.sequence_number for s in chain] == list(range(1, len(chain) + 1))
    assert {s.snapshot_id for s in chain} == set(committed)
    seen: list[int] = []
    for s in chain:
        seen += committed[s.snapshot_id]
        assert ids_at(table, s.snapshot_id) == sorted(seen), s.snapshot_id
        assert int(s.summary["total-records"]) == len(seen)
        assert int(s.summary["total-data-files"]) == chain.index(s) + 1
    assert len(seen) == len(set(seen)), "a row appended twice"


def metric(name: str) -> int:
    """A counter of GET /metrics (answered to loopback clients)."""
    import requests
    text = requests.get(f"{restenv.URI}/metrics", timeout=10).text
    return int(next(line.split()[1] for line in text.splitlines() if line.startswith(name + " ")))


def rebased_total() -> int:
    return metric("skade_commits_rebased_total")


def appended_by(table) -> dict[int, list[int]]:
    """snapshot id -> the ids it added, from the table's data: under group commit a client's
    answer is the table as its group left it, whose current snapshot may be a later member's."""
    out, before = {}, set()
    for s in history(table):
        now = set(ids_at(table, s.snapshot_id))
        out[s.snapshot_id] = sorted(now - before)
        before = now
    return out


def test_stale_append_is_rebased(cat, pg):
    before = rebased_total()
    t = cat.create_table((NS, "two"), SCHEMA, properties=ON)
    a = cat.load_table((NS, "two"))
    b = cat.load_table((NS, "two"))
    a.append(rows(range(0, 3), "a"))
    b.append(rows(range(3, 5), "b"))  # b saw the empty table: rebased onto a's snapshot
    sa, sb = a.current_snapshot(), b.current_snapshot()
    assert sb.parent_snapshot_id == sa.snapshot_id
    assert sb.sequence_number == sa.sequence_number + 1
    t = cat.load_table((NS, "two"))
    check_linear(t, {sa.snapshot_id: [0, 1, 2], sb.snapshot_id: [3, 4]})
    # the client's answer is the committed metadata: its next append builds on it, no rebase
    b.append(rows(range(5, 6), "b"))
    assert b.current_snapshot().parent_snapshot_id == sb.snapshot_id
    assert rebased_total() == before + 1
    # skade reads the rebased manifest list as every reader does
    with pg.cursor() as cur:
        cur.execute("SELECT count(*), sum(record_count) FROM skade.files(%s, %s, %s, %s) WHERE content = 'data'",
                    (NS, "two", sb.snapshot_id, restenv.CATALOG))
        assert cur.fetchone() == (2, 5)
        cur.execute("SELECT manifest_list FROM skade.snapshots(%s, %s, %s) WHERE snapshot_id = %s",
                    (NS, "two", restenv.CATALOG, sb.snapshot_id))
        assert "-rebased-" in cur.fetchone()[0]


def test_stale_onto_a_moved_head(cat):
    cat.create_table((NS, "moved"), SCHEMA, properties=ON)
    base = cat.load_table((NS, "moved"))
    base.append(rows([0], "base"))
    stale = [cat.load_table((NS, "moved")) for _ in range(3)]
    committed = {base.current_snapshot().snapshot_id: [0]}
    for k, t in enumerate(stale):  # each saw the same head; each is rebased onto the one before
        t.append(rows([10 + k, 20 + k], f"s{k}"))
        committed[t.current_snapshot().snapshot_id] = [10 + k, 20 + k]
    check_linear(cat.load_table((NS, "moved")), committed)


def test_strict_without_the_property(cat):
    cat.create_table((NS, "strict"), SCHEMA, properties=NO_RETRY)
    a = cat.load_table((NS, "strict"))
    b = cat.load_table((NS, "strict"))
    a.append(rows([1], "a"))
    with pytest.raises(CommitFailedException, match="has changed|created concurrently"):
        b.append(rows([2], "b"))
    assert ids_at(cat.load_table((NS, "strict"))) == [1]


def test_property_false_is_strict(cat):
    cat.create_table((NS, "off"), SCHEMA, properties={"skade.rebase-appends": "false", **NO_RETRY})
    a = cat.load_table((NS, "off"))
    b = cat.load_table((NS, "off"))
    a.append(rows([1], "a"))
    with pytest.raises(CommitFailedException):
        b.append(rows([2], "b"))


def test_stale_overwrite_and_delete_still_fail(cat):
    cat.create_table((NS, "ow"), SCHEMA, properties=ON)
    t0 = cat.load_table((NS, "ow"))
    t0.append(rows(range(4), "x"))
    a = cat.load_table((NS, "ow"))
    b = cat.load_table((NS, "ow"))
    c = cat.load_table((NS, "ow"))
    a.append(rows([9], "a"))
    with pytest.raises(CommitFailedException):
        b.overwrite(rows([7], "b"))  # replaces files: not an append
    with pytest.raises(CommitFailedException):
        c.delete("id = 1")
    assert ids_at(cat.load_table((NS, "ow"))) == [0, 1, 2, 3, 9]


def test_stale_schema_change_still_fails(cat):
    cat.create_table((NS, "schema"), SCHEMA, properties=ON)
    a = cat.load_table((NS, "schema"))
    b = cat.load_table((NS, "schema"))
    a.append(rows([1], "a"))
    # b changes the schema and appends in one commit from its stale view: more than an
    # append, so 409 as without rebase, and nothing of it lands
    with pytest.raises(CommitFailedException):
        with b.transaction() as tx:
            with tx.update_schema() as us:
                us.add_column("extra", StringType())
            tx.append(rows([2], "b"))
    assert ids_at(cat.load_table((NS, "schema"))) == [1]


def test_concurrent_appenders_never_fail(cat):
    cat.create_table((NS, "hot"), SCHEMA, properties=ON)
    writers, per = 8, 6
    lock = threading.Lock()
    acked: list[list[int]] = []
    failures = Counter()

    def run(w: int):
        c = restenv.make_catalog()
        t = c.load_table((NS, "hot"))
        for k in range(per):
            ids = [w * 1000 + k]
            try:
                t.append(rows(ids, f"w{w}"))
            except CommitFailedException as e:
                with lock:
                    failures[str(e)[:80]] += 1
                t = c.load_table((NS, "hot"))
                continue
            with lock:
                acked.append(ids)

    threads = [threading.Thread(target=run, args=(w,)) for w in range(writers)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not failures, failures
    assert len(acked) == writers * per
    t = cat.load_table((NS, "hot"))
    committed = appended_by(t)
    assert sorted(committed.values()) == sorted(acked)
    check_linear(t, committed)
    # the writers did collide (else this shows nothing): some snapshots were rebased
    assert any("-rebased-" in s.manifest_list for s in t.metadata.snapshots)


# ------------------------------------------------------------ group commit (commit_group.c)

@pytest.fixture(scope="module")
def roomy(pg):
    """Room for the groups: the REST pool runs the commits of one table on at most half of
    skade.rest_max_workers executors (the others queue in the listener), so a group holds at
    most that many; and a longer lock wait for the held row lock."""
    import time
    restenv.alter_system(pg, rest_max_workers="8", rest_lock_timeout="30s")
    time.sleep(1.5)  # the reload reaches the listener and the executors in their own time
    yield
    restenv.alter_system(pg, rest_max_workers=None, rest_lock_timeout=None)


def held_back_appends(cat, pg, name, writers, change=None, grouped=True):
    """writers stale appends to table name, posted while another session holds the table's row
    lock, which it releases once the first to arrive waits for the lock and the others wait
    for that one: they commit as one group.  change(k, body) may alter writer k's commit.
    Returns (ids acknowledged per writer or the exception raised, commit-log rows made)."""
    import psycopg2
    cat.create_table((NS, name), SCHEMA, properties=ON)
    cat.load_table((NS, name)).append(rows([0], "base"))
    tables = [restenv.make_catalog().load_table((NS, name)) for _ in range(writers)]
    ready = threading.Barrier(writers + 1)
    go = threading.Event()
    outcome: dict[int, object] = {}

    def hold_post(k, t):
        post = t.catalog._session.post

        def wrapped(url, *args, data=None, **kw):
            if data is not None and f"/tables/{name}" in url:
                t.catalog._session.post = post
                if change is not None:
                    data = json.dumps(change(k, json.loads(data))).encode()
                ready.wait(30)
                go.wait(30)
            return post(url, *args, data=data, **kw)
        t.catalog._session.post = wrapped

    def run(k, t):
        hold_post(k, t)
        try:
            t.append(rows([100 + k], f"g{k}"))
            outcome[k] = [100 + k]
        except Exception as e:  # noqa: BLE001 (the test reads it)
            outcome[k] = e

    threads = [threading.Thread(target=run, args=(k, t)) for k, t in enumerate(tables)]
    for th in threads:
        th.start()
    ready.wait(60)  # every commit built, none sent
    seq = restenv.sql(pg, "SELECT coalesce(max(seq), 0) FROM skade.commit_log")[0][0]
    holder = psycopg2.connect(restenv.PG_DSN)
    try:
        with holder.cursor() as cur:
            cur.execute("SELECT 1 FROM public.iceberg_tables WHERE catalog_name = %s"
                        " AND table_namespace = %s AND table_name = %s FOR UPDATE", (restenv.CATALOG, NS, name))
        go.set()

        seen = []

        def queued():
            waits = restenv.sql(pg, "SELECT wait_event_type FROM pg_stat_activity WHERE state = 'active'"
                                " AND query LIKE %s", (f"POST %/tables/{name}",))
            kinds = Counter(w for (w,) in waits)
            seen[:] = [kinds]
            if not grouped:  # each waits for the row lock itself
                return kinds["Lock"] == writers
            return kinds["Lock"] == 1 and kinds["Extension"] == writers - 1
        assert restenv.wait_for(queued, timeout=15), f"the commits did not queue: {seen}"
    finally:
        holder.rollback()
        holder.close()
    for th in threads:
        th.join()
    made = restenv.sql(pg, "SELECT count(*) FROM skade.commit_log WHERE seq > %s AND table_name = %s", (seq, name))[0][0]
    return outcome, made, tables


def test_waiting_appends_commit_as_one_group(cat, pg, roomy):
    """Three stale appends queued behind a held row lock: the first leads, takes the other two
    once it has the lock, and writes one metadata file for the three (one pointer move, one
    commit-log row); each client has its own snapshot, answered with the table as the group
    left it; history is linear and every row is there once."""
    groups, grouped = metric("skade_commit_groups_total"), metric("skade_commits_grouped_total")
    outcome, made, tables = held_back_appends(cat, pg, "group", 3)
    assert all(isinstance(v, list) for v in outcome.values()), outcome
    assert made == 1
    assert metric("skade_commit_groups_total") == groups + 1
    assert metric("skade_commits_grouped_total") == grouped + 2
    t = cat.load_table((NS, "group"))
    committed = appended_by(t)
    assert sorted(committed.values()) == [[0], [100], [101], [102]]
    check_linear(t, committed)
    # every client was answered with the group's one file
    assert {x.metadata_location for x in tables} == {t.metadata_location}


def test_a_bad_member_fails_only_itself(cat, pg, roomy):
    """One member of a group asserts a table uuid that is not the table's: it alone fails
    with 409, the others commit in the same group."""
    def bad_uuid(k, body):
        if k == 1:
            # first, so that it is the first failure whether the member leads or follows
            body["requirements"].insert(0, {"type": "assert-table-uuid",
                                            "uuid": "00000000-0000-0000-0000-000000000000"})
        return body
    grouped = metric("skade_commits_grouped_total")
    outcome, made, _ = held_back_appends(cat, pg, "badmember", 3, bad_uuid)
    assert isinstance(outcome[1], CommitFailedException) and "UUID does not match" in str(outcome[1])
    assert isinstance(outcome[0], list) and isinstance(outcome[2], list), outcome
    assert made == 1
    t = cat.load_table((NS, "badmember"))
    committed = appended_by(t)
    assert sorted(committed.values()) == [[0], [100], [102]]
    check_linear(t, committed)
    assert metric("skade_commits_grouped_total") == grouped + 1


def test_group_commit_off_commits_one_by_one(cat, pg, roomy):
    """skade.group_commit = off: the same queue commits each append on its own (three
    commit-log rows), still rebased, none failing."""
    restenv.alter_system(pg, group_commit="off")
    try:
        assert restenv.wait_for(lambda: restenv.sql(pg, "SHOW skade.group_commit")[0][0] == "off")
        import time
        time.sleep(1.5)  # the reload reaches the REST workers in their own time
        groups = metric("skade_commit_groups_total")
        outcome, made, _ = held_back_appends(cat, pg, "ungrouped", 3, grouped=False)
    finally:
        restenv.alter_system(pg, group_commit=None)
    assert all(isinstance(v, list) for v in outcome.values()), outcome
    assert made == 3
    assert metric("skade_commit_groups_total") == groups
    check_linear(cat.load_table((NS, "ungrouped")), appended_by(cat.load_table((NS, "ungrouped"))))


# ------------------------------------------------------------ what is not a compatible append

def intercept(cat, change):
    """The next commit cat sends goes out as change(body) makes it (a dict in, a dict out)."""
    post = cat._session.post

    def wrapped(url, *args, data=None, **kw):
        if data is not None and "/tables/" in url:
            body = change(json.loads(data))
            data = json.dumps(body).encode()
            cat._session.post = post
        return post(url, *args, data=data, **kw)

    cat._session.post = wrapped


def stale_pair(cat, name):
    """A rebasing table with one row, and a second catalog's stale view of it after another
    append: (table for a fresh look, the stale catalog, its stale table)."""
    cat.create_table((NS, name), SCHEMA, properties=ON)
    cat.load_table((NS, name)).append(rows([0], "base"))
    stale_cat = restenv.make_catalog()
    stale = stale_cat.load_table((NS, name))
    cat.load_table((NS, name)).append(rows([1], "winner"))
    return stale_cat, stale


def snapshot_of(body):
    return next(u for u in body["updates"] if u["action"] == "add-snapshot")["snapshot"]


def unchanged(cat, name, ids=(0, 1)):
    t = cat.load_table((NS, name))
    assert ids_at(t) == list(ids)
    assert len(history(t)) == len(ids)


def stale_append_is_409(cat, name, change):
    """The stale catalog's append, sent as change(body) makes it, fails with the stale branch's
    409 (not rebased), and the table is as the winner left it."""
    stale_cat, stale = stale_pair(cat, name)
    intercept(stale_cat, lambda body: change(stale, body))
    with pytest.raises(CommitFailedException, match="has changed"):
        stale.append(rows([2], "stale"))
    unchanged(cat, name)


def replace_list(stale, s, manifests, suffix):
    """s (an add-snapshot's snapshot) names a new list of manifests, written beside its own."""
    from pyiceberg.manifest import write_manifest_list
    path = s["manifest-list"].replace(".avro", suffix)
    with write_manifest_list(2, stale.io.new_output(path), s["snapshot-id"], s.get("parent-snapshot-id"),
                             s["sequence-number"], "deflate") as w:
        w.add_manifests(manifests)
    s["manifest-list"] = path


def test_not_an_append_is_409(cat):
    def overwrite(stale, body):
        snapshot_of(body)["summary"]["operation"] = "overwrite"
        return body
    stale_append_is_409(cat, "op", overwrite)


def test_more_than_an_append_is_409(cat):
    def plus_property(stale, body):
        body["updates"].append({"action": "set-properties", "updates": {"x": "y"}})
        return body
    stale_append_is_409(cat, "more", plus_property)
    assert "x" not in cat.load_table((NS, "more")).properties


def test_replaced_manifests_are_409(cat):
    """A list without its parent's manifests (the client dropped or replaced them) is no
    fast append: rebasing it would lose the parent's rows."""
    from pyiceberg.manifest import read_manifest_list

    def drop_parents(stale, body):
        s = snapshot_of(body)
        mine = [m for m in read_manifest_list(stale.io.new_input(s["manifest-list"]))
                if m.added_snapshot_id == s["snapshot-id"]]
        replace_list(stale, s, mine, "-only-mine.avro")
        return body
    stale_append_is_409(cat, "replaced", drop_parents)


def test_explicit_sequence_numbers_are_409(cat):
    """Files whose data sequence number is written out (not inherited) would keep the stale
    number after a rebase -- and fall under deletes committed meanwhile: 409."""
    from pyiceberg.manifest import ManifestEntry, ManifestEntryStatus, read_manifest_list, write_manifest

    def explicit(stale, body):
        s = snapshot_of(body)
        io = stale.io
        listed = list(read_manifest_list(io.new_input(s["manifest-list"])))
        out = []
        for m in listed:
            if m.added_snapshot_id != s["snapshot-id"]:
                out.append(m)
                continue
            path = m.manifest_path.replace(".avro", "-explicit.avro")
            with write_manifest(2, stale.spec(), stale.schema(), io.new_output(path), s["snapshot-id"],
                                "deflate") as w:
                for e in m.fetch_manifest_entry(io):
                    w.add_entry(ManifestEntry.from_args(
                        status=ManifestEntryStatus.ADDED, snapshot_id=s["snapshot-id"],
                        sequence_number=s["sequence-number"], file_sequence_number=s["sequence-number"],
                        data_file=e.data_file))
            out.insert(0, w.to_manifest_file())
        replace_list(stale, s, out, "-explicit.avro")
        return body
    stale_append_is_409(cat, "explicit", explicit)


def test_missing_manifest_list_is_409(cat):
    """A stale append naming a list that is not there is not rebased: 409 as without rebase
    (not a 404 that a client would read as a missing table), nothing committed."""
    def missing(stale, body):
        snapshot_of(body)["manifest-list"] += ".gone"
        return body
    stale_append_is_409(cat, "missing", missing)


def test_a_second_stale_requirement_is_409(cat):
    """Only the branch may be stale: a stale assert-current-schema-id as well is a 409 (the
    branch's, the first in the engine's order), as without rebase."""
    stale_cat, stale = stale_pair(cat, "two_stale")
    with cat.load_table((NS, "two_stale")).update_schema() as us:
        us.add_column("extra", StringType())

    def assert_schema(body):
        body["requirements"].append({"type": "assert-current-schema-id", "current-schema-id": 0})
        return body
    intercept(stale_cat, assert_schema)
    with pytest.raises(CommitFailedException, match="has changed"):
        stale.append(rows([2], "stale"))
    unchanged(cat, "two_stale")
