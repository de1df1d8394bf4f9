"""POST /v1/{prefix}/events, the events proposal (apache/iceberg#12584) served from
skade.changes(): the config advertises it; a table's lifecycle through pyiceberg's RestCatalog
(create, appends, rename, drop) and a JDBC client's own DML come back as events in order, with
the proposal's fields (event-id, request-id, request-event-count, timestamp-ms, actor,
operation); the continuation token pages through them and resumes; the filters keep what they
name; a reader sees what it may read; bad requests are 400 in Iceberg's error model."""

from __future__ import annotations

import pyarrow as pa
import pytest

from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField

import restenv
from restenv import assert_error, call, url

pytestmark = pytest.mark.usefixtures("fresh_namespaces")

NAMESPACES = ("evt",)

SCHEMA = Schema(NestedField(1, "id", LongType(), required=True))
ARROW = pa.schema([pa.field("id", pa.int64(), nullable=False)])


def events(body, token=restenv.WRITER_TOKEN):
    r = call("POST", url("events"), token=token, body=body)
    assert r.status_code == 200, r.text
    got = r.json()
    assert set(got) == {"continuation-token", "events"}, got
    assert isinstance(got["continuation-token"], str)
    return got


def all_events(body, token=restenv.WRITER_TOKEN, page=2):
    """Every event after the body's position, two changes read at a time, following the tokens
    until one no longer moves (a page the filters empty still moves it)."""
    out = []
    body = dict(body, **{"page-size": page})
    while True:
        got = events(body, token)
        out += got["events"]
        if got["continuation-token"] == body.get("continuation-token"):
            return out, got["continuation-token"]
        body["continuation-token"] = got["continuation-token"]


def test_the_config_advertises_events():
    r = call("GET", f"{restenv.URI}/v1/config?warehouse={restenv.CATALOG}")
    assert "POST /v1/{prefix}/events" in r.json()["endpoints"]


def test_a_lifecycle_comes_back_in_order(pg, catalog):
    start = events({"page-size": 1})  # a token to resume from: the oldest change
    with pg.cursor() as cur:
        cur.execute("SELECT coalesce(max(seq), 0) FROM skade.commit_log")
        mark = cur.fetchone()[0]
    token = f"s1.{mark}"
    catalog.create_namespace("evt")
    t = catalog.create_table(("evt", "t"), SCHEMA)
    t.append(pa.Table.from_pylist([{"id": 1}], schema=ARROW))
    t.append(pa.Table.from_pylist([{"id": 2}], schema=ARROW))
    uuid = str(t.metadata.table_uuid)
    snaps = [s.snapshot_id for s in t.refresh().metadata.snapshots]
    catalog.rename_table(("evt", "t"), ("evt", "t2"))
    catalog.drop_table(("evt", "t2"))
    # a JDBC client's own INSERT (a create skade could not read: no uuid)
    with pg.cursor() as cur:
        cur.execute("INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, metadata_location,"
                    " iceberg_type) VALUES (%s, 'evt', 'j', 'file:///nowhere/j.metadata.json', 'TABLE')",
                    (restenv.CATALOG,))
    pg.commit()

    got, end = all_events({"continuation-token": token})
    ops = [e["operation"]["operation-type"] for e in got]
    assert ops == ["x-skade-table-create", "x-skade-table-commit", "x-skade-table-commit",
                   "rename-table", "drop-table", "x-skade-table-create"], ops
    for e in got:
        assert {"event-id", "request-id", "request-event-count", "timestamp-ms", "actor", "operation"} <= set(e)
        assert e["actor"]["id"] in (restenv.WRITER_ROLE, "postgres"), e
        assert e["request-event-count"] == 1, e
    ids = [int(e["event-id"]) for e in got]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    create, c1, c2, rename, drop, jdbc = got
    assert create["operation"]["identifier"] == {"namespace": ["evt"], "name": "t"}
    assert create["operation"]["table-uuid"] == uuid
    assert c1["operation"]["snapshot-ids-added"] == [snaps[0]]
    assert c2["operation"]["snapshot-ids-added"] == [snaps[1]]
    assert c2["operation"]["previous-metadata-location"] == c1["operation"]["metadata-location"]
    assert rename["operation"] == {"operation-type": "rename-table", "table-uuid": uuid,
                                   "source": {"namespace": ["evt"], "name": "t"},
                                   "destination": {"namespace": ["evt"], "name": "t2"}}
    assert drop["operation"] == {"operation-type": "drop-table", "table-uuid": uuid,
                                 "identifier": {"namespace": ["evt"], "name": "t2"}}
    assert "table-uuid" not in jdbc["operation"]
    # resumed from the end: nothing new; the token stays usable
    assert events({"continuation-token": end})["events"] == []
    assert start["continuation-token"].startswith("s1.")


def test_filters(pg):
    with pg.cursor() as cur:
        cur.execute("SELECT min(seq) FROM skade.commit_log WHERE table_namespace = 'evt' AND table_name = 't'")
        first = cur.fetchone()[0]  # the create
    base = {"continuation-token": f"s1.{first - 1}"}
    got, _ = all_events(dict(base, **{"operation-types": ["drop-table", "rename-table"]}))
    assert [e["operation"]["operation-type"] for e in got] == ["rename-table", "drop-table"]
    got, _ = all_events(dict(base, **{"catalog-objects-by-name": [["evt", "t2"]]}))
    assert [e["operation"]["operation-type"] for e in got] == ["rename-table", "drop-table"]
    got, _ = all_events(dict(base, **{"catalog-objects-by-name": [["ev"]]}))
    assert got == []  # a prefix of levels, not of characters
    got, _ = all_events(dict(base, **{"object-types": ["view"]}))
    assert got == []
    uuid = events(dict(base, **{"page-size": 1}))["events"][0]["operation"]["table-uuid"]
    got, _ = all_events(dict(base, **{"catalog-objects-by-uuid": [uuid]}))
    assert len(got) == 5


def test_a_reader_sees_what_it_may_read():
    got = events({"page-size": 1000}, token=restenv.READER_TOKEN)
    assert got["events"], got  # skade_reader reads the whole catalog


@pytest.mark.parametrize("body", [
    {"continuation-token": "42"},
    {"continuation-token": 42},
    {"page-size": 0},
    {"page-size": "ten"},
    {"since-timestamp-ms": "yesterday"},
    {"operation-types": "drop-table"},
    {"catalog-objects-by-name": ["evt"]},
    {"custom-filters": {"x": "y"}},
    {"unknown": 1},
    [],
])
def test_bad_requests_are_400(body):
    assert_error(call("POST", url("events"), body=body), 400, "BadRequestException")


def test_401_without_a_token():
    assert_error(call("POST", url("events"), token=None, body={}), 401, "NotAuthorizedException")


def test_since_timestamp_starts_there():
    got = events({"since-timestamp-ms": 4102444800000})  # 2100: nothing after
    assert got["events"] == []
