"""The L0.5 manifest cache filled past its size and hammered concurrently.

A pyiceberg table whose decoded manifests are well over skade.manifest_cache_size
(the interop server runs with '1MB', test/interop/run.sh): skade.files() and
skade.plan_files() must keep returning pyiceberg's files while manifests are
evicted and read again, while several backends plan at once (current and older
snapshots) and while another one empties the caches now and then.  The cache
never holds more than its capacity, and the server stays up.

The table gets enough appends for about twice the capacity (24 for the
smallest cache, 1MB); a larger cache than MAX_CAPACITY would take too long to
overflow, so the tests skip there.
"""

import json
import math
import random
import threading
import time

import psycopg2
import pyarrow as pa
import pytest
from pyiceberg import expressions as E
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import LongType, NestedField, StringType

from pgenv import PY_CAT, make_catalog, pg_params
from skadecheck import Skade

pytestmark = pytest.mark.usefixtures("fresh_skade")

NAMESPACES = ("mcache",)
NS, NAME = "mcache", "wide"

MAX_CAPACITY = 4 * 1024 * 1024  # above this the table would take too long to write
PARTS = 50                      # identity partitions: one data file per part per append
MIN_APPENDS = 24                # one manifest of PARTS files each (pyiceberg's fast append)
FILE_BYTES = 1600               # about what L0.5 keeps per data file of this table
ROWS = 2                        # rows per data file
WORKERS = 5
HAMMER_SECONDS = 6.0

SCHEMA = Schema(NestedField(1, "id", LongType(), required=True),
                NestedField(2, "part", LongType(), required=True),
                NestedField(3, "label", StringType(), required=False))
SPEC = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(),
                                    name="part"))
ARROW = pa.schema([pa.field("id", pa.int64(), nullable=False),
                   pa.field("part", pa.int64(), nullable=False),
                   pa.field("label", pa.string())])


def rows_of(a: int) -> pa.Table:
    """Append a: ids a*10000 + part*100 + j, labels 'aAA-pPP-j'."""
    return pa.Table.from_pylist(
        [{"id": a * 10000 + p * 100 + j, "part": p, "label": f"a{a:02d}-p{p:02d}-{j}"}
         for p in range(PARTS) for j in range(ROWS)], schema=ARROW)


# filters as skade's JSON and as pyiceberg expressions
FILTERS = {
    "true": (True, E.AlwaysTrue()),
    "part=0": ({"type": "eq", "term": "part", "value": 0}, E.EqualTo("part", 0)),
    "part=17": ({"type": "eq", "term": "part", "value": 17}, E.EqualTo("part", 17)),
    "part=49": ({"type": "eq", "term": "part", "value": 49}, E.EqualTo("part", 49)),
    "part=99": ({"type": "eq", "term": "part", "value": 99}, E.EqualTo("part", 99)),
    "id<52500": ({"type": "lt", "term": "id", "value": 52500}, E.LessThan("id", 52500)),
    "id<130000": ({"type": "lt", "term": "id", "value": 130000}, E.LessThan("id", 130000)),
    "part in (3,4) and id>=90000": (
        {"type": "and", "left": {"type": "in", "term": "part", "values": [3, 4]},
         "right": {"type": "gt-eq", "term": "id", "value": 90000}},
        E.And(E.In("part", {3, 4}), E.GreaterThanOrEqual("id", 90000))),
    "label starts a07": ({"type": "starts-with", "term": "label", "value": "a07"},
                         E.StartsWith("label", "a07")),
}


def stats(skade: Skade) -> dict:
    (row,) = skade.query(
        "SELECT manifest_hits, manifest_misses, manifest_coalesced_waits, manifest_evictions,"
        "       manifest_entries, manifest_bytes, manifest_capacity FROM skade.cache_stats()")
    return dict(zip(("hits", "misses", "coalesced", "evictions", "entries", "bytes", "capacity"),
                    row))


def within_capacity(skade: Skade, where: str) -> dict:
    st = stats(skade)
    assert st["bytes"] <= st["capacity"], f"{where}: manifest cache over capacity: {st}"
    return st


def files(skade: Skade, sid=None) -> list[tuple]:
    """Every row of skade.files() (in its order; the jsonb columns as text)."""
    return skade.query(
        "SELECT content, file_path, file_format, partition_spec_id, partition::text, record_count,"
        "       file_size_in_bytes, columns::text, status, snapshot_id, sequence_number,"
        "       file_sequence_number, manifest"
        "  FROM skade.files(%s, %s, %s, %s)", (NS, NAME, sid, PY_CAT))


def plan(skade: Skade, f, sid=None) -> frozenset:
    return frozenset(p for (p,) in skade.query(
        "SELECT file_path FROM skade.plan_files(%s, %s, %s, %s, %s)",
        (NS, NAME, json.dumps(f), sid, PY_CAT)))


@pytest.fixture(scope="module")
def wide(fresh_skade, pg):
    """The table (enough appends of PARTS files to overflow the cache), its
    snapshots oldest first, and what pyiceberg plans for every filter at a few
    of them (the current snapshot is None)."""
    skade = Skade(pg, PY_CAT)
    capacity = stats(skade)["capacity"]
    if capacity > MAX_CAPACITY:
        pytest.skip(f"manifest_capacity is {capacity} bytes (> {MAX_CAPACITY}): overflowing the "
                    "L0.5 cache would take too long; run the server with "
                    "skade.manifest_cache_size = '1MB' (as test/interop/run.sh does)")
    # enough manifests for about twice the capacity (24 for the smallest cache, 1MB)
    appends = max(MIN_APPENDS, math.ceil(1.8 * capacity / (PARTS * FILE_BYTES)))
    cat = make_catalog(PY_CAT)
    try:
        t0 = time.monotonic()
        cat.create_namespace(NS)
        table = cat.create_table(f"{NS}.{NAME}", SCHEMA, partition_spec=SPEC)
        snapshots = []
        for a in range(appends):
            table.append(rows_of(a))
            snapshots.append(table.current_snapshot().snapshot_id)
        skade.agrees(table)
        manifests = table.current_snapshot().manifests(table.io)
        assert len(manifests) == appends
        assert all(m.added_files_count + m.existing_files_count == PARTS for m in manifests)
        written = time.monotonic() - t0

        # time travel targets: a few older snapshots and the current one (None)
        at = [snapshots[0], snapshots[appends // 4], snapshots[appends // 2],
              snapshots[3 * appends // 4], None]
        expected = {}
        for sid in at:
            for key, (_f, expr) in FILTERS.items():
                expected[(sid, key)] = frozenset(
                    t.file.file_path for t in table.scan(row_filter=expr, snapshot_id=sid).plan_files())
        n_at = {sid: (appends if sid is None else snapshots.index(sid) + 1) for sid in at}
        # sanity of pyiceberg's own plans over this data
        for sid in at:
            assert len(expected[(sid, "true")]) == PARTS * n_at[sid]
            assert len(expected[(sid, "part=17")]) == n_at[sid]
            assert expected[(sid, "part=99")] == frozenset()
        print(f"\nwrote {appends} appends x {PARTS} files in {written:.1f}s, "
              f"planned {len(expected)} (snapshot, filter) pairs with pyiceberg in "
              f"{time.monotonic() - t0 - written:.1f}s")
        yield {"table": table, "snapshots": snapshots, "at": at, "expected": expected,
               "appends": appends}
    finally:
        cat.close()


def test_manifests_evicted_and_read_again(wide, skade):
    table, n = wide["table"], wide["appends"]

    # the whole table's decoded manifests are well over the cache: one of them alone
    skade.query("SELECT skade.cache_reset()")
    first = files(skade, wide["snapshots"][0])
    one = within_capacity(skade, "after the first snapshot")
    assert len(first) == PARTS and one["entries"] == 1 and one["misses"] == 1
    per_manifest = one["bytes"]
    assert per_manifest * n > 1.5 * one["capacity"], \
        f"{n} manifests of ~{per_manifest} bytes do not overflow {one['capacity']}"

    skade.query("SELECT skade.cache_reset()")
    st0 = within_capacity(skade, "after reset")
    assert (st0["hits"], st0["misses"], st0["evictions"]) == (0, 0, 0)
    assert st0["entries"] == 0 and st0["bytes"] == 0

    # pass 1, cold: every manifest misses, and some are evicted to make room
    passes = [files(skade)]
    st = within_capacity(skade, "after pass 1")
    assert st["misses"] == n and st["hits"] == 0, st
    assert st["evictions"] > 0, f"nothing evicted with {n} manifests: {st}"
    assert st["entries"] < n
    prev = st

    # skade's files are pyiceberg's
    rows = passes[0]
    assert len(rows) == n * PARTS
    theirs = table.inspect.files()
    assert sorted(r[1] for r in rows) == sorted(theirs["file_path"].to_pylist())
    assert {r[1]: r[5] for r in rows} == dict(zip(theirs["file_path"].to_pylist(),
                                                  theirs["record_count"].to_pylist()))
    assert {r[0] for r in rows} == {"data"}
    assert frozenset(r[1] for r in rows) == wide["expected"][(None, "true")]

    # passes 2 and 3: identical, every manifest looked up once, evicted ones read again
    for i in (2, 3):
        passes.append(files(skade))
        st = within_capacity(skade, f"after pass {i}")
        assert passes[-1] == passes[0], f"pass {i} of skade.files() differs from pass 1"
        assert (st["hits"] + st["misses"]) - (prev["hits"] + prev["misses"]) == n, (prev, st)
        assert st["misses"] > prev["misses"], f"pass {i} read no evicted manifest again: {st}"
        assert st["evictions"] > prev["evictions"]
        prev = st

    # plan_files over the whole snapshot: data manifests only, one lookup each
    for i in (1, 2):
        got = plan(skade, True)
        st = within_capacity(skade, f"after plan_files pass {i}")
        assert got == wide["expected"][(None, "true")]
        assert (st["hits"] + st["misses"]) - (prev["hits"] + prev["misses"]) == n, (prev, st)
        prev = st

    print(f"{n} manifests of {PARTS} files, ~{per_manifest} decoded bytes each "
          f"(~{per_manifest // PARTS} per file, ~{per_manifest * n} in all) over a cache of "
          f"{st['capacity']}: {st['hits']} hits, {st['misses']} misses, "
          f"{st['evictions']} evictions, {st['entries']} entries / {st['bytes']} bytes kept")


def test_concurrent_plans_with_resets(wide, skade):
    expected, at = wide["expected"], wide["at"]

    # skade agrees with pyiceberg on every (snapshot, filter) first, cold and warm
    skade.query("SELECT skade.cache_reset()")
    for (sid, key), want in expected.items():
        assert plan(skade, FILTERS[key][0], sid) == want, f"plan_files at {sid}, {key}"
    every = {sid: frozenset(r[1] for r in files(skade, sid)) for sid in at}
    for sid in at:
        assert every[sid] == expected[(sid, "true")]
    within_capacity(skade, "after the cross-check")

    started = skade.query("SELECT pg_postmaster_start_time()")[0][0]
    stop = threading.Event()
    errors: list[str] = []
    counts = [0] * WORKERS
    resets = [0]
    totals = dict.fromkeys(("hits", "misses", "coalesced", "evictions"), 0)
    pairs = sorted(expected, key=lambda k: (k[0] is None, k[0] or 0, k[1]))

    def worker(w: int) -> None:
        rng = random.Random(7000 + w)
        conn = None
        try:
            conn = psycopg2.connect(**pg_params())
            conn.autocommit = True
            me = Skade(conn, PY_CAT)
            while not stop.is_set():
                sid, key = rng.choice(pairs)
                if rng.random() < 0.15:
                    got, want, what = frozenset(r[1] for r in files(me, sid)), every[sid], "files"
                else:
                    got, want, what = plan(me, FILTERS[key][0], sid), expected[(sid, key)], key
                if got != want:
                    errors.append(f"worker {w}: {what} at snapshot {sid}: {len(got)} files, "
                                  f"want {len(want)}; missing {sorted(want - got)[:3]}, "
                                  f"extra {sorted(got - want)[:3]}")
                counts[w] += 1
        except Exception as e:  # noqa: BLE001  (reported below)
            errors.append(f"worker {w}: {type(e).__name__}: {e}")
        finally:
            if conn is not None:
                conn.close()

    def resetter() -> None:
        rng = random.Random(99)
        conn = None
        try:
            conn = psycopg2.connect(**pg_params())
            conn.autocommit = True
            me = Skade(conn, PY_CAT)
            while not stop.wait(rng.uniform(0.05, 0.3)):
                st = stats(me)
                if st["bytes"] > st["capacity"]:
                    errors.append(f"manifest cache over capacity: {st}")
                for k in totals:  # the counters restart at every reset
                    totals[k] += st[k]
                me.query("SELECT skade.cache_reset()")
                resets[0] += 1
        except Exception as e:  # noqa: BLE001
            errors.append(f"resetter: {type(e).__name__}: {e}")
        finally:
            if conn is not None:
                conn.close()

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(WORKERS)]
    threads.append(threading.Thread(target=resetter))
    t0 = time.monotonic()
    for t in threads:
        t.start()
    time.sleep(HAMMER_SECONDS)
    stop.set()
    for t in threads:
        t.join(timeout=60)
    elapsed = time.monotonic() - t0
    assert not any(t.is_alive() for t in threads), "a client thread hangs"
    assert not errors, f"{len(errors)} errors, first ones:\n" + "\n".join(errors[:10])
    assert all(c > 0 for c in counts), f"a worker ran no query: {counts}"
    assert resets[0] > 0

    # the server is up and was never restarted (no backend crashed), the cache within bounds
    conn = psycopg2.connect(**pg_params())
    try:
        conn.autocommit = True
        after = Skade(conn, PY_CAT)
        assert after.query("SELECT pg_postmaster_start_time()")[0][0] == started
        st = within_capacity(after, "after the hammer")
        for k in totals:
            totals[k] += st[k]
        assert plan(after, True) == expected[(None, "true")]
    finally:
        conn.close()
    # (counted between resets, so approximately)
    assert totals["evictions"] > 0, f"nothing was evicted under load: {totals}"
    print(f"{WORKERS} workers ran {sum(counts)} queries {counts} in {elapsed:.1f}s with "
          f"{resets[0]} cache resets: about {totals['hits']} hits, {totals['misses']} misses, "
          f"{totals['coalesced']} coalesced waits, {totals['evictions']} evictions; at the end "
          f"{st['entries']} entries / {st['bytes']} of {st['capacity']} bytes")
