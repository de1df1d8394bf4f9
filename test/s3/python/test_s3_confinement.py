"""The client boundary: what skade may request from S3 is confined by the superuser's
settings, whatever clients write into the catalog.

- a table a client wrote into a bucket outside skade.allowed_roots: every read function
  is refused (42501) and not one request reaches the S3 server;
- metadata inside the allowed bucket whose manifest list lies outside it: refused where
  the manifest list would be read, again without a request;
- a namespace whose s3.endpoint property names an endpoint not in
  skade.s3_allowed_endpoints: refused (42501), the endpoint never contacted; one that is
  allowed is used (the requests go through it) by every reader, and an object written
  there that its transaction left behind is asked about and swept there too;
- an s3a:// location is read as s3://."""

import json

import psycopg2
import pyarrow as pa
import pytest
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

import s3env
from pgenv import pg_params

pytestmark = pytest.mark.usefixtures("fresh_skade")

NAMESPACES = ("fence", "ep_bad", "ep_relay", "ep_reuse", "ep_sweep", "s3a")

SCHEMA = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "v", StringType(), required=False))
ARROW = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("v", pa.string())])

READERS = [
    "SELECT * FROM skade.load_table(%(ns)s, %(name)s, catalog => 'py_cat')",
    "SELECT skade.table_metadata(%(ns)s, %(name)s, catalog => 'py_cat')",
    "SELECT * FROM skade.snapshots(%(ns)s, %(name)s, 'py_cat')",
    "SELECT * FROM skade.refs(%(ns)s, %(name)s, 'py_cat')",
    "SELECT * FROM skade.history(%(ns)s, %(name)s, 'py_cat')",
    "SELECT * FROM skade.manifests(%(ns)s, %(name)s, catalog => 'py_cat')",
    "SELECT * FROM skade.files(%(ns)s, %(name)s, catalog => 'py_cat')",
    "SELECT * FROM skade.plan_files(%(ns)s, %(name)s, '{\"type\": \"eq\", \"term\": \"id\", \"value\": 1}', catalog => 'py_cat')",
    "SELECT * FROM skade.load_table_as_of(%(ns)s, %(name)s, now(), catalog => 'py_cat')",
    "SELECT * FROM skade.rewrite_manifests(%(ns)s, %(name)s, catalog => 'py_cat')",
    "SELECT * FROM skade.expire_snapshots(%(ns)s, %(name)s, older_than => now(), catalog => 'py_cat')",
]


def refused(skade, sql, **args):
    with pytest.raises(psycopg2.Error) as err:
        skade.query(sql, args)
    return err.value


def written_table(catalog, ident):
    t = catalog.create_table(ident, SCHEMA)
    t.append(pa.Table.from_pylist([{"id": 1, "v": "a"}, {"id": 2, "v": "b"}], schema=ARROW))
    t.append(pa.Table.from_pylist([{"id": 3, "v": "c"}], schema=ARROW))
    return t


def test_a_bucket_outside_allowed_roots_is_never_requested(catalogs, skade):
    outside = catalogs(warehouse=f"s3://{s3env.OUTSIDE}/wh")
    outside.create_namespace("fence")
    t = written_table(outside, "fence.t")
    assert t.metadata_location.startswith(f"s3://{s3env.OUTSIDE}/")
    assert len(t.scan().to_arrow()) == 3  # the client itself reads it
    for sql in READERS:
        with s3env.no_request():
            e = refused(skade, sql, ns="fence", name="t")
        assert e.pgcode == "42501", f"{sql}: {e.pgcode} {e}"
    # an s3a:// spelling of the same object is the same bucket
    skade.query("SELECT skade.register_table('fence', 't_s3a', %s, 'py_cat')",
                (t.metadata_location.replace("s3://", "s3a://", 1),))
    with s3env.no_request():
        e = refused(skade, READERS[1], ns="fence", name="t_s3a")
    assert e.pgcode == "42501"


def test_a_manifest_list_outside_allowed_roots_is_never_requested(catalogs, catalog, skade):
    """Metadata in the allowed bucket naming a manifest list in the other bucket (as a
    hostile or broken client could write): the metadata is read, the list is not."""
    outside = catalogs(warehouse=f"s3://{s3env.OUTSIDE}/wh")
    outside.create_namespace_if_not_exists("fence")
    src = written_table(outside, "fence.src")
    with src.io.new_input(src.metadata_location).open() as f:
        meta = json.loads(f.read())
    meta["location"] = f"{s3env.WAREHOUSE}/fence/mixed"
    location = f"{s3env.WAREHOUSE}/fence/mixed/metadata/00000-0d7b8c1e-5b8a-4a4e-9a43-0c1f4d9e2a11.metadata.json"
    with src.io.new_output(location).create() as f:
        f.write(json.dumps(meta).encode())
    skade.query("SELECT skade.register_table('fence', 'mixed', %s, 'py_cat')", (location,))
    # the metadata itself is inside: read
    sids = [r[0] for r in skade.query("SELECT snapshot_id FROM skade.snapshots('fence', 'mixed', 'py_cat')")]
    assert sids == [s["snapshot-id"] for s in meta["snapshots"]]
    for sql in READERS[5:8]:
        with s3env.no_request():
            e = refused(skade, sql, ns="fence", name="mixed")
        assert e.pgcode == "42501", f"{sql}: {e.pgcode} {e}"


def test_a_namespace_endpoint_not_allowed_is_never_contacted(catalog, skade):
    bad = s3env.Relay(s3env.free_port(), forward=False)
    try:
        catalog.create_namespace("ep_bad", {"s3.endpoint": bad.endpoint})
        written_table(catalog, "ep_bad.t")  # pyiceberg ignores namespace properties
        for sql in READERS:
            with s3env.no_request():
                e = refused(skade, sql, ns="ep_bad", name="t")
            assert e.pgcode == "42501", f"{sql}: {e.pgcode} {e}"
        assert bad.connections == 0
    finally:
        bad.close()


def test_an_allowed_namespace_endpoint_is_used(catalog, skade):
    """skade.s3_allowed_endpoints lists http://127.0.0.1:SKADE_S3_ALT_PORT (test/s3/run.sh):
    a relay to the S3 server there; a namespace naming it is read through it."""
    relay = s3env.Relay(int(s3env.env("SKADE_S3_ALT_PORT")))
    try:
        catalog.create_namespace("ep_relay", {"s3.endpoint": relay.endpoint, "s3.region": s3env.REGION,
                                              "s3.path-style-access": "true"})
        t = written_table(catalog, "ep_relay.t")
        before = relay.connections
        skade.agrees(t)
        n, = skade.query("SELECT sum(record_count) FROM skade.files('ep_relay', 't', catalog => 'py_cat')")[0]
        assert n == 3
        assert relay.connections > before, "the namespace's endpoint was not used"
        # every reader, from cold caches, reads through it (the route is each call's own)
        for sql in READERS:
            skade.query("SELECT skade.cache_reset()")
            before = relay.connections
            skade.query(sql, {"ns": "ep_relay", "name": "t"})
            assert relay.connections > before, f"{sql}: the namespace's endpoint was not used"
    finally:
        relay.close()


def test_an_orphan_written_through_a_namespace_endpoint_is_swept_there(catalog, skade):
    """An object a rolled-back transaction wrote through a namespace's endpoint, which
    was gone when the abort would remove it, stays in the journal of written files with
    that route: skade.written_files() asks that endpoint whether it is there, and
    skade.sweep_orphan_files() removes it there (not at skade.s3_endpoint)."""
    port = int(s3env.env("SKADE_S3_ALT_PORT"))
    relay = s3env.Relay(port)
    catalog.create_namespace("ep_sweep", {"s3.endpoint": relay.endpoint, "s3.region": s3env.REGION,
                                          "s3.path-style-access": "true"})
    conn = psycopg2.connect(**pg_params())
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT skade.create_table('ep_sweep', 't', %s::jsonb, location => %s,"
                        " catalog => 'py_cat')",
                        (json.dumps({"type": "struct", "schema-id": 0, "fields": [
                            {"id": 1, "name": "id", "required": True, "type": "long"}]}),
                         f"{s3env.WAREHOUSE}/ep_sweep/t"))
            meta, = cur.fetchone()
            assert relay.connections > 0 and s3env.exists(meta)
            relay.cut()  # the abort's removal finds the endpoint gone: the object stays
            conn.rollback()
    finally:
        conn.close()
    assert s3env.exists(meta), "the abort removed the object although its endpoint was gone"
    relay = s3env.Relay(port)
    try:
        state = skade.query("SELECT state, present FROM skade.written_files() WHERE location = %s", (meta,))
        assert state == [("aborted", True)], state
        assert relay.connections > 0, "the journal's object was asked about elsewhere"
        before = relay.connections
        skade.query("SELECT skade.sweep_orphan_files()")
        assert relay.connections > before, "the orphan was removed elsewhere"
        assert not s3env.exists(meta), "the orphan is still there"
    finally:
        relay.close()


def test_s3a_locations_are_read_as_s3(catalog, skade):
    catalog.create_namespace("s3a")
    t = written_table(catalog, "s3a.t")
    s3a = t.metadata_location.replace("s3://", "s3a://", 1)
    skade.query("SELECT skade.register_table('s3a', 't_s3a', %s, 'py_cat')", (s3a,))
    text, = skade.query("SELECT skade.table_metadata('s3a', 't_s3a', catalog => 'py_cat')::text")[0]
    with t.io.new_input(t.metadata_location).open() as f:
        assert text.encode() == f.read()
    n, = skade.query("SELECT sum(record_count) FROM skade.files('s3a', 't_s3a', catalog => 'py_cat')")[0]
    assert n == 3


def test_a_plan_fetches_its_manifests_at_once(catalog, skade):
    """Through a relay that counts connections: files() over 8 uncached manifests opens
    several connections at once (moto closes each connection after its answer, so this
    counts the requests in flight together; connection reuse is tested against a
    keep-alive server in test/faults/s3.sh)."""
    relay = s3env.Relay(int(s3env.env("SKADE_S3_ALT_PORT")))
    try:
        catalog.create_namespace("ep_reuse", {"s3.endpoint": relay.endpoint, "s3.region": s3env.REGION,
                                              "s3.path-style-access": "true"})
        peaks = {}
        for name, concurrency in (("a", 16), ("b", 1)):
            t = catalog.create_table(f"ep_reuse.{name}", SCHEMA)
            for i in range(8):  # one manifest per append
                t.append(pa.Table.from_pylist([{"id": i, "v": str(i)}], schema=ARROW))
            before = relay.connections
            relay.peak = relay.open
            n, = skade.query(f"SET skade.s3_max_concurrency = {concurrency};"
                             f" SELECT count(*) FROM skade.files('ep_reuse', '{name}', catalog => 'py_cat')")[0]
            assert n == 8
            assert relay.connections - before >= 9  # the manifest list, then 8 manifests
            peaks[concurrency] = relay.peak
        skade.query("RESET skade.s3_max_concurrency; SELECT 1")
        assert peaks[1] <= 3, f"one at a time asked, {peaks[1]} at once"  # (a close may lag)
        # (under load the relay sees fewer at once: at least 4, and 2 more than one at a time)
        assert peaks[16] >= 4 and peaks[16] >= peaks[1] + 2, f"the manifests were fetched one after another ({peaks})"
    finally:
        relay.close()
