"""The REST protocol as plain HTTP sees it: Iceberg's error model and its statuses
(401/403/404/405/409/400/413), loadTable's ETag and If-None-Match (304, loose comparison),
snapshots=refs, names that need percent-encoding, multi-level namespaces (0x1F)."""

from __future__ import annotations

import gzip
import json
import os
import time
from urllib.parse import quote

import pyarrow as pa
import pytest
import requests

from pyiceberg.expressions import GreaterThanOrEqual
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField

import restenv
from restenv import assert_error, call, ns_path, table_url, url

pytestmark = pytest.mark.usefixtures("fresh_namespaces")

NAMESPACES = ("proto",)

SCHEMA = Schema(NestedField(1, "id", LongType(), required=True))
ARROW = pa.schema([pa.field("id", pa.int64(), nullable=False)])

TABLE_SCHEMA_JSON = {"type": "struct", "schema-id": 0,
                     "fields": [{"id": 1, "name": "id", "type": "long", "required": True}]}


@pytest.fixture(scope="module")
def proto_table(pg):
    """proto.t with three snapshots (appends through pyiceberg)."""
    cat = restenv.make_catalog()
    if not cat.namespace_exists("proto"):
        cat.create_namespace("proto")
    t = cat.create_table(("proto", "t"), SCHEMA)
    for i in range(3):
        t.append(pa.Table.from_pylist([{"id": i}], schema=ARROW))
    return t


# ------------------------------------------------------------ authentication

def test_401_without_invalid_and_expired_credentials(pg, proto_table):
    target = table_url("proto", "t")
    assert_error(call("GET", target, token=None), 401, "NotAuthorizedException")
    assert_error(call("GET", target, token="skade_not-a-token"), 401, "NotAuthorizedException")
    assert_error(call("GET", target, token=None, headers={"Authorization": "Digest abc"}), 401)
    assert_error(call("GET", target, token=None, headers={"Authorization": "Bearer "}), 401)
    # Basic role:token works, with the token's own role only
    import base64

    def basic(user, token):
        return {"Authorization": "Basic " + base64.b64encode(f"{user}:{token}".encode()).decode()}
    assert call("GET", target, token=None, headers=basic(restenv.WRITER_ROLE, restenv.WRITER_TOKEN)).status_code == 200
    assert_error(call("GET", target, token=None, headers=basic(restenv.READER_ROLE, restenv.WRITER_TOKEN)), 401)

    # an expired token, and a revoked one
    with pg.cursor() as cur:
        cur.execute("SELECT skade.rest_create_token(%s, '1 hour')", (restenv.WRITER_ROLE,))
        token, = cur.fetchone()
        assert call("GET", target, token=token).status_code == 200
        cur.execute("UPDATE skade.rest_tokens SET expires_at = now() - interval '1s'"
                    " WHERE token_hash = sha256(convert_to(%s, 'UTF8'))", (token,))
        assert cur.rowcount == 1
        assert_error(call("GET", target, token=token), 401, "NotAuthorizedException")
        cur.execute("SELECT skade.rest_create_token(%s)", (restenv.WRITER_ROLE,))
        token, = cur.fetchone()
        assert call("GET", target, token=token).status_code == 200
        cur.execute("SELECT skade.rest_revoke_token(split_part(%s, '_', 2)::bigint)", (token,))
        assert cur.fetchone() == (True,)
        assert_error(call("GET", target, token=token), 401)
    # no credentials on config either
    assert_error(call("GET", f"{restenv.URI}/v1/config?warehouse={restenv.CATALOG}", token=None), 401)


def test_403_reader_writes(proto_table, pg):
    reader = restenv.READER_TOKEN
    before = pg_rows(pg)
    assert call("GET", table_url("proto", "t"), token=reader).status_code == 200
    assert_error(call("POST", url("namespaces"), token=reader, body={"namespace": ["proto_r"]}), 403, "ForbiddenException")
    assert_error(call("POST", url(f"namespaces/{ns_path('proto')}/tables"), token=reader,
                      body={"name": "r", "schema": TABLE_SCHEMA_JSON}), 403, "ForbiddenException")
    assert_error(call("POST", table_url("proto", "t"), token=reader,
                      body={"requirements": [], "updates": [{"action": "set-properties", "updates": {"a": "b"}}]}),
                 403, "ForbiddenException")
    assert_error(call("DELETE", table_url("proto", "t"), token=reader), 403, "ForbiddenException")
    assert_error(call("POST", url(f"namespaces/{ns_path('proto')}/properties"), token=reader,
                      body={"updates": {"a": "b"}}), 403, "ForbiddenException")
    assert pg_rows(pg) == before


def test_403_role_without_grants_loads_nothing(proto_table, pg):
    """A token of a role skade granted nothing: no load (plain, gzip, 304) and no existence."""
    with pg.cursor() as cur:
        cur.execute("DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'rest_nogrant')"
                    " THEN CREATE ROLE rest_nogrant LOGIN; END IF; END $$")
    token = pg_query(pg, "SELECT skade.rest_create_token('rest_nogrant', '1 hour')")[0][0]
    target = table_url("proto", "t")
    etag = call("GET", target).headers["ETag"]
    for headers in ({}, {"Accept-Encoding": "gzip"}, {"If-None-Match": etag}):
        r = call("GET", target, token=token, headers=headers)
        assert_error(r, 403, "ForbiddenException")
        assert "metadata" not in r.text
    assert call("GET", target + "?snapshots=refs", token=token).status_code == 403


# ------------------------------------------------------------ 404 / 405 / 409 / 400 / 413

def test_404_missing_namespace_table_and_route(proto_table):
    assert_error(call("GET", url(f"namespaces/{ns_path('nope')}")), 404, "NoSuchNamespaceException")
    assert call("HEAD", url(f"namespaces/{ns_path('nope')}")).status_code == 404
    assert_error(call("GET", url(f"namespaces/{ns_path('nope')}/tables")), 404, "NoSuchNamespaceException")
    assert_error(call("DELETE", url(f"namespaces/{ns_path('nope')}")), 404, "NoSuchNamespaceException")
    assert_error(call("POST", url(f"namespaces/{ns_path('nope')}/tables"),
                      body={"name": "x", "schema": TABLE_SCHEMA_JSON}), 404, "NoSuchNamespaceException")
    assert_error(call("GET", table_url("proto", "nope")), 404, "NoSuchTableException")
    assert call("HEAD", table_url("proto", "nope")).status_code == 404
    assert_error(call("GET", table_url("nope", "t")), 404)
    assert_error(call("POST", table_url("proto", "nope"), body={"requirements": [], "updates": []}),
                 404, "NoSuchTableException")
    assert_error(call("DELETE", table_url("proto", "nope")), 404, "NoSuchTableException")
    # a metrics report is accepted as Iceberg's reference server does, even for a table that
    # does not exist (yet): clients report on staged tables before they commit
    assert call("POST", table_url("proto", "nope") + "/metrics", body={"report-type": "scan-report"}).status_code == 204
    assert_error(call("POST", url("tables/rename"),
                      body={"source": {"namespace": ["proto"], "name": "nope"},
                            "destination": {"namespace": ["proto"], "name": "nope2"}}), 404, "NoSuchTableException")
    # unknown routes (authenticated or not)
    for target in (f"{restenv.URI}/v1/{restenv.CATALOG}/nothing", f"{restenv.URI}/v2/config",
                   f"{restenv.URI}/", f"{restenv.URI}/v1/{restenv.CATALOG}/namespaces/proto/tables/t/x/y"):
        assert_error(call("GET", target), 404)


def test_metrics_report_accepted(proto_table):
    report = {"report-type": "commit-report", "table-name": "proto.t", "snapshot-id": 1, "sequence-number": 1,
              "operation": "append", "metrics": {}}
    r = call("POST", table_url("proto", "t") + "/metrics", body=report)
    assert r.status_code == 204 and r.content == b""
    assert call("POST", table_url("proto", "t") + "/metrics", token=restenv.READER_TOKEN, body=report).status_code == 204
    assert_error(call("POST", table_url("proto", "t") + "/metrics", raw=b"{"), 400)


def test_405_wrong_method(proto_table):
    assert_error(call("PUT", table_url("proto", "t"), body={}), 405)
    assert_error(call("PATCH", url("namespaces"), body={}), 405)
    assert_error(call("DELETE", f"{restenv.URI}/v1/config"), 405)
    assert_error(call("GET", url("tables/rename")), 405)


def test_409_exists_not_empty_and_conflict(proto_table, pg):
    assert_error(call("POST", url("namespaces"), body={"namespace": ["proto"]}), 409, "AlreadyExistsException")
    assert_error(call("POST", url(f"namespaces/{ns_path('proto')}/tables"),
                      body={"name": "t", "schema": TABLE_SCHEMA_JSON}), 409, "AlreadyExistsException")
    assert_error(call("DELETE", url(f"namespaces/{ns_path('proto')}")), 409, "NamespaceNotEmptyException")
    # a rename onto an existing table
    r = call("POST", url(f"namespaces/{ns_path('proto')}/tables"), body={"name": "t2", "schema": TABLE_SCHEMA_JSON})
    assert r.status_code == 200, r.text
    assert_error(call("POST", url("tables/rename"),
                      body={"source": {"namespace": ["proto"], "name": "t2"},
                            "destination": {"namespace": ["proto"], "name": "t"}}), 409, "AlreadyExistsException")
    assert call("DELETE", table_url("proto", "t2")).status_code == 204

    # a stale assert-ref-snapshot-id: 409 CommitFailedException, nothing changed
    meta = call("GET", table_url("proto", "t")).json()
    current = meta["metadata"]["current-snapshot-id"]
    parent = next(s["parent-snapshot-id"] for s in meta["metadata"]["snapshots"] if s["snapshot-id"] == current)
    before = pg_rows(pg)
    stale = {"requirements": [{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": parent}],
             "updates": [{"action": "set-properties", "updates": {"stale": "yes"}}]}
    assert_error(call("POST", table_url("proto", "t"), body=stale), 409, "CommitFailedException")
    assert_error(call("POST", table_url("proto", "t"),
                      body={"requirements": [{"type": "assert-table-uuid", "uuid": "00000000-0000-0000-0000-000000000000"}],
                            "updates": [{"action": "set-properties", "updates": {"stale": "yes"}}]}),
                 409, "CommitFailedException")
    assert pg_rows(pg) == before
    # the same with the current id commits
    fresh = {**stale, "requirements": [{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": current}]}
    r = call("POST", table_url("proto", "t"), body=fresh)
    assert r.status_code == 200, r.text
    assert r.json()["metadata"]["properties"]["stale"] == "yes"


def test_400_malformed_json_and_bad_requests(proto_table, pg):
    before = pg_rows(pg)
    for raw in (b"{", b"not json", b'{"namespace": ["a"]', b"\xff\xfe", b""):
        assert_error(call("POST", url("namespaces"), raw=raw), 400, "BadRequestException")
        assert_error(call("POST", table_url("proto", "t"), raw=raw), 400, "BadRequestException")
    # JSON of the wrong shape
    for body in ({"namespace": "proto_x"}, {"namespace": []}, {"namespace": [""]}, {"namespace": ["a.b"]},
                 {"namespace": [1]}, {}):
        assert_error(call("POST", url("namespaces"), body=body), 400, "BadRequestException")
    assert_error(call("POST", table_url("proto", "t"), body={"requirements": {}, "updates": "x"}), 400)
    assert_error(call("POST", table_url("proto", "t"),
                      body={"requirements": [], "updates": [{"action": "no-such-action"}]}), 400)
    assert_error(call("GET", table_url("proto", "t") + "?snapshots=some"), 400, "BadRequestException")
    assert_error(call("GET", url("namespaces?pageSize=abc")), 400)
    assert pg_rows(pg) == before


def test_413_body_over_max_body(proto_table, pg):
    limit = int(pg_query(pg, "SELECT setting FROM pg_settings WHERE name = 'skade.rest_max_body'")[0][0])
    # (unknown members are ignored: the body's size is what is under test)
    big = {"namespace": ["proto_big"], "pad": "x" * (limit + 10)}
    assert_error(call("POST", url("namespaces"), body=big), 413)
    assert not pg_query(pg, "SELECT skade.namespace_exists('proto_big', %s)", (restenv.CATALOG,))[0][0]
    # just under the limit is served
    ok = {"namespace": ["proto_big"], "pad": "x" * (limit - 200)}
    r = call("POST", url("namespaces"), body=ok)
    assert r.status_code == 200, r.text[:300]
    assert call("DELETE", url(f"namespaces/{ns_path('proto_big')}")).status_code == 204
    # and the server goes on serving
    assert call("GET", table_url("proto", "t")).status_code == 200


# ------------------------------------------------------------ ETag / 304 / refs

def test_etag_and_if_none_match(proto_table):
    target = table_url("proto", "t")
    r = call("GET", target)
    assert r.status_code == 200
    etag = r.headers["ETag"]
    assert etag.startswith('"') and etag.endswith('"') and len(etag) > 2
    assert call("GET", target).headers["ETag"] == etag  # stable
    for header in (etag, f"W/{etag}", etag[:-1] + '-gzip"', f'W/{etag[:-1]}-gzip"', f'"other", {etag}', "*"):
        r = call("GET", target, headers={"If-None-Match": header})
        if header == "*":
            # (a table that exists matches *: 304 is right; skade may also answer 200)
            assert r.status_code in (200, 304)
            continue
        assert r.status_code == 304, f"If-None-Match: {header} -> {r.status_code}"
        assert r.content == b""
        assert r.headers.get("ETag") == etag
    # another ETag, or the ETag of the other mode: 200 with the body
    r = call("GET", target, headers={"If-None-Match": '"0123456789abcdef0123456789abcdef"'})
    assert r.status_code == 200 and r.json()["metadata"]
    refs = call("GET", target + "?snapshots=refs")
    assert refs.headers["ETag"] != etag
    r = call("GET", target, headers={"If-None-Match": refs.headers["ETag"]})
    assert r.status_code == 200
    r = call("GET", target + "?snapshots=refs", headers={"If-None-Match": refs.headers["ETag"]})
    assert r.status_code == 304 and r.content == b""
    # a commit changes the ETag: the old one no longer matches
    t = restenv.make_catalog().load_table(("proto", "t"))
    t.append(pa.Table.from_pylist([{"id": 99}], schema=ARROW))
    r = call("GET", target, headers={"If-None-Match": etag})
    assert r.status_code == 200 and r.headers["ETag"] != etag
    # 304 needs read access all the same
    assert_error(call("GET", target, token=None, headers={"If-None-Match": r.headers["ETag"]}), 401)
    assert_error(call("GET", table_url("proto", "nope"), headers={"If-None-Match": etag}), 404)


def test_snapshots_refs_is_smaller(proto_table):
    target = table_url("proto", "t")
    full = call("GET", target)
    refs = call("GET", target + "?snapshots=refs")
    assert full.status_code == refs.status_code == 200
    assert len(refs.content) < len(full.content)
    fm, rm = full.json()["metadata"], refs.json()["metadata"]
    assert len(fm["snapshots"]) >= 3
    assert [s["snapshot-id"] for s in rm["snapshots"]] == [fm["current-snapshot-id"]]
    assert full.json()["metadata-location"] == refs.json()["metadata-location"]
    assert call("GET", target + "?snapshots=all").content == full.content


# ------------------------------------------------------------ names

NAMES = ["with/slash", "with space", "plus+sign", "per%cent", "ünïcødé-名前", "a%2Fb", "semi;colon", "q?mark#hash"]


@pytest.mark.parametrize("name", NAMES)
def test_names_round_trip(name, pg):
    """A namespace level and a table named alike: created through REST, found by skade's SQL
    under the same name, listed, loaded, renamed and dropped through percent-encoded paths."""
    levels = ("proto", name)
    # a name with "/" is no path component: it needs locations of its own (a default
    # location would put it in another directory; test_rest_hostile checks the 400)
    located = "/" in name
    props = {"n": name}
    if located:
        props["location"] = f"file://{os.environ['SKADE_WAREHOUSE']}/proto/slashed-ns"
    r = call("POST", url("namespaces"), body={"namespace": list(levels), "properties": props})
    assert r.status_code == 200, r.text
    assert r.json()["namespace"] == list(levels)
    dotted = "proto." + name
    assert pg_query(pg, "SELECT skade.namespace_exists(%s, %s)", (dotted, restenv.CATALOG))[0][0]
    r = call("GET", url(f"namespaces/{ns_path(*levels)}"))
    assert r.status_code == 200 and r.json()["namespace"] == list(levels) and r.json()["properties"]["n"] == name
    assert call("HEAD", url(f"namespaces/{ns_path(*levels)}")).status_code == 204
    assert list(levels) in call("GET", url(f"namespaces?parent={ns_path('proto')}")).json()["namespaces"]

    create = {"name": name, "schema": TABLE_SCHEMA_JSON}
    if located:
        create["location"] = f"file://{os.environ['SKADE_WAREHOUSE']}/proto/slashed-ns/slashed-table"
    r = call("POST", url(f"namespaces/{ns_path(*levels)}/tables"), body=create)
    assert r.status_code == 200, r.text
    assert pg_query(pg, "SELECT skade.table_exists(%s, %s, %s)", (dotted, name, restenv.CATALOG))[0][0]
    r = call("GET", table_url(levels, name))
    assert r.status_code == 200, r.text
    loc = r.json()["metadata-location"]
    assert pg_query(pg, "SELECT metadata_location FROM skade.load_table(%s, %s, catalog => %s)",
                    (dotted, name, restenv.CATALOG))[0][0] == loc
    ids = call("GET", url(f"namespaces/{ns_path(*levels)}/tables")).json()["identifiers"]
    assert ids == [{"namespace": list(levels), "name": name}]
    # the table through pyiceberg too
    t = restenv.make_catalog().load_table(levels + (name,))
    assert t.metadata_location == loc
    # a commit through pyiceberg (data files under directories named alike), seen by skade;
    # not with "?" or "#": the location file:///.../q?mark#hash/... is a path to skade and a
    # URI to pyiceberg (urlparse: query and fragment), so the two name different files
    if "?" not in name and "#" not in name:
        t.append(pa.Table.from_pylist([{"id": 7}], schema=ARROW))
        assert pg_query(pg, "SELECT metadata_location FROM skade.load_table(%s, %s, catalog => %s)",
                        (dotted, name, restenv.CATALOG))[0][0] == t.metadata_location
        assert call("GET", table_url(levels, name)).json()["metadata-location"] == t.metadata_location
        assert pg_query(pg, "SELECT count(*), sum(record_count) FROM skade.files(%s, %s, NULL, %s)",
                        (dotted, name, restenv.CATALOG)) == [(1, 1)]
        assert t.scan().to_arrow()["id"].to_pylist() == [7]

    r = call("POST", url("tables/rename"), body={"source": {"namespace": list(levels), "name": name},
                                                 "destination": {"namespace": list(levels), "name": name + "2"}})
    assert r.status_code == 204, r.text
    assert call("HEAD", table_url(levels, name + "2")).status_code == 204
    assert call("HEAD", table_url(levels, name)).status_code == 404
    assert call("DELETE", table_url(levels, name + "2")).status_code == 204
    assert call("DELETE", url(f"namespaces/{ns_path(*levels)}")).status_code == 204
    assert not pg_query(pg, "SELECT skade.namespace_exists(%s, %s)", (dotted, restenv.CATALOG))[0][0]


def test_plus_decodes_as_space_and_prefix_encoding(pg):
    """Java's RESTUtil form-encodes (space as '+'): a raw '+' in a path is a space."""
    r = call("POST", url("namespaces"), body={"namespace": ["proto", "sp ace"]})
    assert r.status_code == 200, r.text
    assert call("HEAD", url("namespaces/proto%1Fsp+ace")).status_code == 204
    assert call("HEAD", url("namespaces/proto%1Fsp%20ace")).status_code == 204
    assert call("DELETE", url("namespaces/proto%1Fsp+ace")).status_code == 204


def test_multi_level_namespaces(pg):
    levels = ("proto", "l2", "l3", "l4")
    for i in range(2, len(levels) + 1):
        r = call("POST", url("namespaces"), body={"namespace": list(levels[:i])})
        assert r.status_code == 200, r.text
    assert pg_query(pg, "SELECT skade.namespace_exists('proto.l2.l3.l4', %s)", (restenv.CATALOG,))[0][0]
    # listing one level at a time, the parent 0x1F-separated (raw, or %1F as clients send it)
    assert call("GET", url("namespaces?parent=proto%1Fl2")).json()["namespaces"] == [["proto", "l2", "l3"]]
    assert call("GET", url("namespaces?parent=proto%1Fl2%1Fl3")).json()["namespaces"] == [["proto", "l2", "l3", "l4"]]
    r = call("POST", url(f"namespaces/{ns_path(*levels)}/tables"), body={"name": "deep", "schema": TABLE_SCHEMA_JSON})
    assert r.status_code == 200, r.text
    assert call("GET", url("namespaces/proto%1Fl2%1Fl3%1Fl4/tables/deep")).status_code == 200
    assert call("GET", url("namespaces/proto%1fl2%1fl3%1fl4/tables/deep")).status_code == 200
    t = restenv.make_catalog().load_table(levels + ("deep",))
    assert t.name() == levels + ("deep",)
    assert call("DELETE", url(f"namespaces/{ns_path(*levels)}/tables/deep")).status_code == 204
    for i in range(len(levels), 1, -1):
        assert call("DELETE", url(f"namespaces/{ns_path(*levels[:i])}")).status_code == 204


def test_dot_in_a_path_segment_is_not_a_separator(pg):
    """The path's separator is 0x1F: "proto.l2" names one level holding a dot, which skade
    cannot store (create answers 400), so it does not exist -- not the namespace proto.l2
    (["proto", "l2"])."""
    for levels in (["proto"], ["proto", "l2"]):
        r = call("POST", url("namespaces"), body={"namespace": levels})
        assert r.status_code in (200, 409), r.text
    assert_error(call("POST", url("namespaces"), body={"namespace": ["proto.l2"]}), 400)
    assert call("HEAD", url("namespaces/proto.l2")).status_code in (400, 404)
    assert call("GET", url("namespaces/proto.l2")).status_code in (400, 404)


def test_unknown_catalog_is_404_not_500():
    """A prefix no namespace or table uses yet (a fresh catalog, or a misspelled warehouse):
    a missing namespace or table is 404, the listing empty -- not 500 (skade raises 3D000
    "catalog does not exist" there)."""
    fresh = f"{restenv.URI}/v1/never_used_catalog"
    r = call("GET", f"{fresh}/namespaces")
    assert r.status_code == 200 and r.json()["namespaces"] == []
    assert call("HEAD", f"{fresh}/namespaces/nope").status_code == 404
    assert call("HEAD", f"{fresh}/namespaces/nope/tables/t").status_code == 404
    assert_error(call("GET", f"{fresh}/namespaces/nope"), 404, "NoSuchNamespaceException")
    assert_error(call("GET", f"{fresh}/namespaces/nope/tables"), 404, "NoSuchNamespaceException")
    assert_error(call("GET", f"{fresh}/namespaces/nope/tables/t"), 404)
    assert_error(call("DELETE", f"{fresh}/namespaces/nope"), 404, "NoSuchNamespaceException")


def test_config(pg):
    r = call("GET", f"{restenv.URI}/v1/config?warehouse={quote(restenv.CATALOG)}")
    assert r.status_code == 200
    body = r.json()
    assert body["overrides"]["prefix"] == restenv.CATALOG
    assert isinstance(body["defaults"], dict)
    eps = set(body["endpoints"])
    for ep in ("GET /v1/{prefix}/namespaces", "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}",
               "POST /v1/{prefix}/transactions/commit", "POST /v1/{prefix}/tables/rename"):
        assert ep in eps
    # without a warehouse: the default catalog (skade.catalog)
    r = call("GET", f"{restenv.URI}/v1/config")
    assert r.json()["overrides"]["prefix"] == pg_query(pg, "SELECT current_setting('skade.catalog')")[0][0]


def pg_query(pg, sql, params=()):
    with pg.cursor() as cur:
        cur.execute(sql, params)
        return cur.fetchall()


def pg_rows(pg):
    """Everything the REST catalog's catalog tables hold, and the commit log's length."""
    return (pg_query(pg, "SELECT * FROM public.iceberg_tables WHERE catalog_name = %s ORDER BY 1, 2, 3",
                     (restenv.CATALOG,)),
            pg_query(pg, "SELECT * FROM public.iceberg_namespace_properties WHERE catalog_name = %s ORDER BY 1, 2, 3",
                     (restenv.CATALOG,)),
            pg_query(pg, "SELECT max(seq) FROM skade.commit_log"))


# ------------------------------------------------------------ Idempotency-Key, gzip

def test_idempotency_key_replays(proto_table, pg):
    target = table_url("proto", "t")
    key = f"0190a0b0-0000-7000-8000-{time.time_ns() % 10**12:012d}"
    body = {"requirements": [], "updates": [{"action": "set-properties", "updates": {"idem": key}}]}
    seq = pg_query(pg, "SELECT max(seq) FROM skade.commit_log")[0][0]
    first = call("POST", target, body=body, headers={"Idempotency-Key": key})
    assert first.status_code == 200, first.text
    assert pg_query(pg, "SELECT count(*) FROM skade.commit_log WHERE seq > %s", (seq,))[0][0] == 1
    again = call("POST", target, body=body, headers={"Idempotency-Key": key})
    assert again.status_code == 200 and again.json() == first.json()
    assert pg_query(pg, "SELECT count(*) FROM skade.commit_log WHERE seq > %s", (seq,))[0][0] == 1
    # without the key the same change is a new commit
    assert call("POST", target, body=body).status_code == 200
    assert pg_query(pg, "SELECT count(*) FROM skade.commit_log WHERE seq > %s", (seq,))[0][0] == 2
    # an error is not stored: the retry runs again (and succeeds once the conflict is gone)
    stale_key = key[:-1] + "x"
    current = call("GET", target).json()["metadata"]["current-snapshot-id"]
    stale = {"requirements": [{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": 1}],
             "updates": [{"action": "set-properties", "updates": {"idem2": "1"}}]}
    assert_error(call("POST", target, body=stale, headers={"Idempotency-Key": stale_key}), 409)
    fixed = {**stale, "requirements": [{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": current}]}
    r = call("POST", target, body=fixed, headers={"Idempotency-Key": stale_key})
    assert r.status_code == 200 and r.json()["metadata"]["properties"]["idem2"] == "1"
    # a create namespace replayed: the first answer, not 409
    nkey = key[:-1] + "n"
    first = call("POST", url("namespaces"), body={"namespace": ["proto_idem"]}, headers={"Idempotency-Key": nkey})
    assert first.status_code == 200, first.text
    again = call("POST", url("namespaces"), body={"namespace": ["proto_idem"]}, headers={"Idempotency-Key": nkey})
    assert again.status_code == 200 and again.json() == first.json()
    assert call("DELETE", url("namespaces/proto_idem")).status_code == 204


def test_gzip_when_accepted(proto_table):
    target = table_url("proto", "t")
    # metadata over 8 kB: many properties
    r = call("POST", target, body={"requirements": [], "updates": [
        {"action": "set-properties", "updates": {f"pad.{i}": "p" * 100 for i in range(100)}}]})
    assert r.status_code == 200, r.text
    plain = call("GET", target, headers={"Accept-Encoding": "identity"})
    assert plain.status_code == 200 and "Content-Encoding" not in plain.headers
    assert len(plain.content) > 8192
    zipped = requests.get(target, headers={**restenv.auth(), "Accept-Encoding": "gzip"}, stream=True, timeout=30)
    raw = zipped.raw.read(decode_content=False)
    assert zipped.status_code == 200 and zipped.headers.get("Content-Encoding") == "gzip"
    assert gzip.decompress(raw) == plain.content and len(raw) < len(plain.content)
    # the ETag matches whichever form the client kept (a proxy may add -gzip)
    etag = zipped.headers["ETag"]
    for header in (etag, etag[:-1] + '-gzip"', plain.headers["ETag"]):
        r = call("GET", target, headers={"If-None-Match": header, "Accept-Encoding": "gzip"})
        assert r.status_code == 304 and r.content == b""
    r = call("GET", target, headers={"Accept-Encoding": "gzip;q=0"})
    assert r.status_code == 200 and "Content-Encoding" not in r.headers
    r = call("GET", target, headers={"Accept-Encoding": "deflate, gzip;q=0.5"})
    assert r.status_code == 200 and r.headers.get("Content-Encoding") == "gzip"

    def gz(params=None):
        r = requests.get(target, params=params, headers={**restenv.auth(), "Accept-Encoding": "gzip"},
                         stream=True, timeout=30)
        assert r.status_code == 200 and r.headers.get("Content-Encoding") == "gzip"
        return r.raw.read(decode_content=False)

    # the compressed answer is kept per metadata file and mode: the same bytes again, the
    # refs answer its own, and a commit's new metadata never answered from the old one
    assert gz() == raw
    refs_plain = call("GET", target + "?snapshots=refs", headers={"Accept-Encoding": "identity"})
    assert gzip.decompress(gz({"snapshots": "refs"})) == refs_plain.content
    r = call("POST", target, body={"requirements": [], "updates": [
        {"action": "set-properties", "updates": {"pad.after": "changed"}}]})
    assert r.status_code == 200, r.text
    after = gzip.decompress(gz())
    assert after != plain.content and json.loads(after)["metadata"]["properties"]["pad.after"] == "changed"
    assert after == call("GET", target, headers={"Accept-Encoding": "identity"}).content


def test_idempotency_key_scoped_to_route_and_role(pg):
    key = f"0190a0b0-0000-7000-8000-{time.time_ns() % 10**12:012d}"
    assert call("POST", url("namespaces"), body={"namespace": ["proto_scope"]},
                headers={"Idempotency-Key": key}).status_code == 200
    try:
        # the reader, same key: its own request is judged (403), not the writer's answer replayed
        r = call("POST", url("namespaces"), token=restenv.READER_TOKEN, body={"namespace": ["proto_scope2"]},
                 headers={"Idempotency-Key": key})
        assert r.status_code == 403, r.text
        # another route, same key: the drop happens
        r = call("DELETE", url("namespaces/proto_scope"), headers={"Idempotency-Key": key})
        assert r.status_code in (204, 422), r.text
        assert call("HEAD", url("namespaces/proto_scope")).status_code == (404 if r.status_code == 204 else 204)
    finally:
        call("DELETE", url("namespaces/proto_scope"))


# ------------------------------------------------------------ server-side scan planning

def test_plan_table_scan_matches_the_client_plan(proto_table):
    """POST .../plan answers completed with the data files pyiceberg plans itself for the same
    filter, each with its statistics as {keys, values} maps by field id; no filter: every file."""
    target = table_url("proto", "t") + "/plan"
    table = restenv.make_catalog().load_table(("proto", "t"))
    r = call("POST", target, body={"filter": {"type": "gt-eq", "term": "id", "value": 1}})
    assert r.status_code == 200, r.text
    plan = r.json()
    assert plan["status"] == "completed" and plan["delete-files"] == [] and plan["plan-id"]
    got = {t["data-file"]["file-path"]: t["data-file"] for t in plan["file-scan-tasks"]}
    want = {t.file.file_path: t.file for t in table.scan(row_filter=GreaterThanOrEqual("id", 1)).plan_files()}
    assert set(got) == set(want) and got, (sorted(got), sorted(want))
    every_file = [t.file.file_path for t in table.scan().plan_files()]
    assert len(got) < len(every_file), "the filter prunes (a file holds id 0 alone)"
    for path, f in got.items():
        w = want[path]
        assert (f["content"], f["file-format"], f["spec-id"], f["partition"]) == ("data", "parquet", 0, [])
        assert f["record-count"] == w.record_count and f["file-size-in-bytes"] == w.file_size_in_bytes
        for key, stat in (("value-counts", w.value_counts), ("null-value-counts", w.null_value_counts),
                          ("column-sizes", w.column_sizes)):
            assert f[key]["keys"] == sorted(f[key]["keys"]), key
            assert dict(zip(f[key]["keys"], f[key]["values"])) == dict(stat), key
        assert f["lower-bounds"]["keys"] == sorted(w.lower_bounds) == f["upper-bounds"]["keys"]
        rows = table.scan(row_filter=GreaterThanOrEqual("id", 1)).to_arrow()
        assert f["lower-bounds"]["values"][0] == f["upper-bounds"]["values"][0] in rows["id"].to_pylist()
    everything = call("POST", target, body={})
    assert everything.status_code == 200
    assert sorted(t["data-file"]["file-path"] for t in everything.json()["file-scan-tasks"]) == sorted(every_file)
    assert_error(call("POST", target, body={"filter": {"type": "no-such-op", "term": "id"}}), 400)
    assert_error(call("POST", target, body={"snapshot-id": "x"}), 400)
