"""Mixed writers on one hot table, all at once: pyiceberg appends through REST (two
clients), pyiceberg SqlCatalog appends (JDBC's protocol: UPDATE iceberg_tables ... WHERE
metadata_location = <base>) and skade.commit_table with a metadata file of the writer's own
(a property set), each without client retries. Afterwards:

- the table's commit log is linear (each row's previous_metadata_location is the row
  before's metadata_location);
- no lost update: every commit a client believes succeeded is in the log, the log holds no
  other, the table holds every row of every successful append and every property of every
  successful commit_table;
- every loser got 409 CommitFailedException (REST), a row count of 0 (SqlCatalog:
  CommitFailedException) or SQLSTATE 40001 (commit_table), and nothing else went wrong.
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

import psycopg2
import pyarrow as pa
import pytest

from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

import restenv
from skadecheck import local_path

pytestmark = pytest.mark.usefixtures("fresh_namespaces")

NAMESPACES = ("mixed",)
IDENT = ("mixed", "hot")
SECONDS = float(os.environ.get("SKADE_REST_MIXED_SECONDS", "20"))
MAX_COMMITS = 200
NO_RETRY = {"commit.retry.num-retries": "0"}

SCHEMA = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "who", StringType(), required=False))
ARROW = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("who", pa.string())])


class Tally:
    def __init__(self):
        self.lock = threading.Lock()
        self.wins: list[tuple[str, str, tuple]] = []  # (writer, metadata location, what it added)
        self.losses = Counter()
        self.errors: list[str] = []
        self.stop = threading.Event()
        self.deadline = time.monotonic() + SECONDS

    def done(self, writer: str) -> bool:
        """Time is up or enough commits made -- but each writer goes on (up to three times as
        long) until it has won once, so that every path is exercised under contention."""
        if self.stop.is_set():
            return True
        now = time.monotonic()
        if now > self.deadline + 2 * SECONDS:
            return True
        if now <= self.deadline and len(self.wins) < MAX_COMMITS:
            return False
        with self.lock:
            return any(w == writer for w, _, _ in self.wins)

    def pause(self, low: float, high: float) -> None:
        time.sleep(random.uniform(low, high))

    def win(self, writer, location, added):
        with self.lock:
            self.wins.append((writer, location, added))

    def lose(self, kind):
        with self.lock:
            self.losses[kind] += 1

    def error(self, writer, e):
        with self.lock:
            self.errors.append(f"{writer}: {type(e).__name__}: {e}")
        self.stop.set()


def rest_writer(tally: Tally, n: int):
    cat = restenv.make_catalog()
    i = 0
    while not tally.done(f"rest{n}"):
        tally.pause(0, 0.05)
        i += 1
        rid = 1_000_000 * (n + 1) + i
        try:
            t = cat.load_table(IDENT)
            t.append(pa.Table.from_pylist([{"id": rid, "who": f"rest{n}"}], schema=ARROW))
        except CommitFailedException as e:
            assert "409" in str(e) or "CommitFailed" in str(e), e
            tally.lose("rest 409")
            continue
        except Exception as e:  # noqa: BLE001
            tally.error(f"rest{n}", e)
            return
        tally.win(f"rest{n}", t.metadata_location, ("row", rid))


def sql_writer(tally: Tally):
    """pyiceberg's SqlCatalog as the writer role: JDBC's compare-and-swap UPDATE."""
    uri = (f"postgresql+psycopg2://{restenv.WRITER_ROLE}@{os.environ['PGHOST']}:{os.environ['PGPORT']}"
           f"/{os.environ['PGDATABASE']}")
    cat = SqlCatalog(restenv.CATALOG, uri=uri, warehouse=Path(os.environ["SKADE_WAREHOUSE"]).as_uri())
    i = 0
    try:
        while not tally.done("sql"):
            tally.pause(0, 0.05)
            i += 1
            rid = 9_000_000 + i
            try:
                t = cat.load_table(IDENT)
                t.append(pa.Table.from_pylist([{"id": rid, "who": "sql"}], schema=ARROW))
            except CommitFailedException:
                tally.lose("jdbc row count 0")
                continue
            except Exception as e:  # noqa: BLE001
                tally.error("sql", e)
                return
            tally.win("sql", t.metadata_location, ("row", rid))
    finally:
        cat.engine.dispose()


def commit_table_writer(tally: Tally):
    """Reads the current metadata, writes a successor with one property more, and swaps it in
    with skade.commit_table as the writer role."""
    conn = psycopg2.connect(restenv.PG_DSN.replace("user=postgres", f"user={restenv.WRITER_ROLE}"))
    conn.autocommit = True
    i = 0
    try:
        while not tally.done("commit_table"):
            # (its commits are cheap: paced, or it would take every turn)
            tally.pause(0.05, 0.2)
            i += 1
            with conn.cursor() as cur:
                cur.execute("SELECT metadata_location, metadata::text FROM skade.load_table(%s, %s, catalog => %s)",
                            ("mixed", "hot", restenv.CATALOG))
                base, text = cur.fetchone()
                meta = json.loads(text)
                now = int(time.time() * 1000)
                meta["metadata-log"] = meta.get("metadata-log", []) + [
                    {"metadata-file": base, "timestamp-ms": meta["last-updated-ms"]}]
                meta["last-updated-ms"] = max(now, meta["last-updated-ms"] + 1)
                meta["properties"] = {**meta.get("properties", {}), f"sql.{i}": "set"}
                version = int(Path(base).name.split("-", 1)[0]) + 1
                new = f"{meta['location']}/metadata/{version:05d}-{uuid.uuid4()}.metadata.json"
                local_path(new).write_text(json.dumps(meta))
                try:
                    cur.execute("SELECT skade.commit_table(%s, %s, %s, %s, %s)",
                                ("mixed", "hot", base, new, restenv.CATALOG))
                except psycopg2.Error as e:
                    if e.pgcode == "40001":
                        tally.lose("commit_table 40001")
                        continue
                    tally.error("commit_table", e)
                    return
                except Exception as e:  # noqa: BLE001
                    tally.error("commit_table", e)
                    return
            tally.win("commit_table", new, ("property", f"sql.{i}"))
    finally:
        conn.close()


def test_mixed_writers_on_one_hot_table(pg, skade):
    cat = restenv.make_catalog()
    cat.create_namespace("mixed")
    t = cat.create_table(IDENT, SCHEMA, properties=NO_RETRY)
    skade.created(t)
    created_at = skade.mark

    tally = Tally()
    threads = [threading.Thread(target=rest_writer, args=(tally, n)) for n in range(2)]
    threads += [threading.Thread(target=sql_writer, args=(tally,)),
                threading.Thread(target=commit_table_writer, args=(tally,))]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=SECONDS + 120)
        assert not th.is_alive(), "a writer hangs"
    print(f"wins by writer: {Counter(w for w, _, _ in tally.wins)}; losses: {dict(tally.losses)}")
    assert tally.errors == [], tally.errors
    assert {w for w, _, _ in tally.wins} >= {"rest0", "rest1", "sql", "commit_table"}, \
        f"every kind of writer should win at least once: {Counter(w for w, _, _ in tally.wins)}"

    with pg.cursor() as cur:
        cur.execute("SELECT op, source, committed_by, metadata_location, previous_metadata_location"
                    " FROM skade.commit_log WHERE catalog_name = %s AND table_namespace = 'mixed'"
                    " AND table_name = 'hot' AND seq > %s ORDER BY seq", (restenv.CATALOG, created_at))
        log = cur.fetchall()
    # linear
    prev = t.metadata_location
    for op, source, who, loc, previous in log:
        assert op == "commit"
        assert previous == prev, f"the log forks: {previous} after {prev}"
        prev = loc
    # exactly the clients' successes, each by its path
    by_location = {loc: (source, who) for _, source, who, loc, _ in log}
    assert len(by_location) == len(log)
    assert sorted(by_location) == sorted(loc for _, loc, _ in tally.wins), "log vs. the clients' successes"
    for writer, loc, _ in tally.wins:
        source, who = by_location[loc]
        assert who == restenv.WRITER_ROLE, (writer, who)
        assert source == {"sql": "sql"}.get(writer, "api"), (writer, source)
    # nothing lost: the current table holds every row and property any winner added
    final = cat.load_table(IDENT)
    assert final.metadata_location == prev
    rows = sorted(final.scan().to_arrow()["id"].to_pylist())
    want_rows = sorted(v for _, _, (kind, v) in tally.wins if kind == "row")
    assert rows == want_rows
    props = final.properties
    missing = [v for _, _, (kind, v) in tally.wins if kind == "property" and props.get(v) != "set"]
    assert missing == []
    skade.mark = skade.max_seq()
    skade.agrees(final)
