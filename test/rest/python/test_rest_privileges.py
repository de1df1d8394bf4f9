"""Privileges per namespace and table over REST: the same grants as in
SQL (skade.grant), the same answers. A member of skade_user lists only what it may see;
a table or namespace it may not see is absent (404, the same answer as for one that does
not exist, so it cannot be probed); a change of something it may see but not write is 403
ForbiddenException; a grant or revoke made in SQL holds at the REST executors' next request.
pyiceberg's RestCatalog is driven as the restricted roles.
"""

from __future__ import annotations

import psycopg2
import pytest
from pyiceberg.exceptions import ForbiddenError, NoSuchNamespaceError, NoSuchTableError
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField

import restenv
from conftest import clear_namespaces
from restenv import assert_error, call, ns_path, sql, table_url, url, wait_for

NAMESPACES = ("privA", "privB")
SCHEMA = Schema(NestedField(1, "id", LongType(), required=True))
ROLES = ("rp_reader", "rp_tbl_writer", "rp_none")


@pytest.fixture(scope="module")
def pg():
    conn = psycopg2.connect(restenv.PG_DSN)
    conn.autocommit = True
    yield conn
    conn.close()


@pytest.fixture(scope="module")
def world(pg):
    """privA.{t1,t2}, privB.t3 (made over REST by the writer); three restricted roles."""
    clear_namespaces(pg, restenv.CATALOG, NAMESPACES)
    writer = restenv.make_catalog()
    writer.create_namespace("privA")
    writer.create_namespace("privB")
    for ident in (("privA", "t1"), ("privA", "t2"), ("privB", "t3")):
        writer.create_table(ident, SCHEMA)
    tokens = {}
    for role in ROLES:
        sql(pg, f"DROP ROLE IF EXISTS {role}")
        sql(pg, f"CREATE ROLE {role} LOGIN IN ROLE skade_user")
        tokens[role] = sql(pg, "SELECT skade.rest_create_token(%s, '1 hour', 'privileges')", (role,))[0][0]
    cat = restenv.CATALOG
    sql(pg, "SELECT skade.grant('read', 'rp_reader', 'privA', catalog => %s)", (cat,))
    sql(pg, "SELECT skade.grant('write', 'rp_tbl_writer', 'privA', 't1', %s)", (cat,))
    yield tokens
    sql(pg, "DELETE FROM skade.grants WHERE grantee::oid IN"
            " (SELECT oid FROM pg_roles WHERE rolname = ANY(%s))", (list(ROLES),))
    sql(pg, "DELETE FROM skade.rest_tokens WHERE role_name = ANY(%s)", (list(ROLES),))
    for role in ROLES:
        sql(pg, f"DROP ROLE IF EXISTS {role}")
    clear_namespaces(pg, restenv.CATALOG, NAMESPACES)


def ours(names):
    return sorted(n for n in names if n in NAMESPACES)


def listed(token):
    r = call("GET", url("namespaces"), token=token)
    assert r.status_code == 200, r.text
    return ours(level[0] for level in r.json()["namespaces"])


def tables(token, ns):
    r = call("GET", url(f"namespaces/{ns_path(ns)}/tables"), token=token)
    return r.status_code, sorted(t["name"] for t in r.json().get("identifiers", [])) if r.ok else r.json()


def load(token, ns, name):
    return call("GET", table_url(ns, name), token=token)


def set_property(token, ns, name):
    return call("POST", table_url(ns, name), token=token, body={
        "requirements": [], "updates": [{"action": "set-properties", "updates": {"k": "v"}}]})


def test_listings_show_only_what_the_role_may_see(world):
    assert listed(restenv.WRITER_TOKEN) == ["privA", "privB"]
    assert listed(world["rp_reader"]) == ["privA"]
    assert listed(world["rp_tbl_writer"]) == ["privA"]
    assert listed(world["rp_none"]) == []
    assert tables(world["rp_reader"], "privA") == (200, ["t1", "t2"])
    assert tables(world["rp_tbl_writer"], "privA") == (200, ["t1"])
    status, err = tables(world["rp_reader"], "privB")
    assert status == 404 and err["error"]["type"] == "NoSuchNamespaceException", err


def test_a_forbidden_table_is_absent(world):
    """Loading, HEAD and committing a table the role may not see answer exactly as for a
    table (and a namespace) that does not exist."""
    reader = world["rp_reader"]
    cases = {
        "forbidden namespace": ("privB", "t3", "nosuchns", "t3"),
        "forbidden table": ("privA", "t2", "privA", "nosuchtable"),
    }
    for what, (ns, name, absent_ns, absent_name) in cases.items():
        token = world["rp_tbl_writer"] if what == "forbidden table" else reader
        for request in (load, set_property):
            forbidden = request(token, ns, name)
            absent = request(token, absent_ns, absent_name)
            f = assert_error(forbidden, 404, "NoSuchTableException")
            a = assert_error(absent, 404, "NoSuchTableException")
            assert f["message"].replace(ns, "X").replace(name, "Y") == \
                a["message"].replace(absent_ns, "X").replace(absent_name, "Y"), (what, f, a)
        assert call("HEAD", table_url(ns, name), token=token).status_code == 404
        assert call("HEAD", table_url(absent_ns, absent_name), token=token).status_code == 404
    # and a namespace: HEAD and properties
    assert call("HEAD", url(f"namespaces/{ns_path('privB')}"), token=reader).status_code == 404
    assert_error(call("GET", url(f"namespaces/{ns_path('privB')}"), token=reader), 404,
                 "NoSuchNamespaceException")


def test_read_but_not_write_is_forbidden(world):
    reader = world["rp_reader"]
    assert load(reader, "privA", "t1").status_code == 200
    assert_error(set_property(reader, "privA", "t1"), 403, "ForbiddenException")
    assert_error(call("DELETE", table_url("privA", "t1"), token=reader), 403, "ForbiddenException")
    assert_error(call("POST", url(f"namespaces/{ns_path('privA')}/tables"), token=reader,
                      body={"name": "t9", "schema": SCHEMA.model_dump(by_alias=True)}),
                 403, "ForbiddenException")
    assert_error(call("POST", url("namespaces"), token=reader, body={"namespace": ["privA", "x"]}),
                 403, "ForbiddenException")
    assert_error(call("POST", url("tables/rename"), token=reader, body={
        "source": {"namespace": ["privA"], "name": "t1"},
        "destination": {"namespace": ["privA"], "name": "t1x"}}), 403, "ForbiddenException")
    # the table is as it was
    assert "k" not in load(restenv.WRITER_TOKEN, "privA", "t1").json()["metadata"].get("properties", {})


def test_table_writer_commits_its_table_only(world, pg):
    w = world["rp_tbl_writer"]
    assert set_property(w, "privA", "t1").status_code == 200
    assert load(restenv.WRITER_TOKEN, "privA", "t1").json()["metadata"]["properties"]["k"] == "v"
    got = sql(pg, "SELECT committed_by FROM skade.commit_log WHERE catalog_name = %s"
                  " AND table_namespace = 'privA' AND table_name = 't1' ORDER BY seq DESC LIMIT 1",
              (restenv.CATALOG,))
    assert got == [("rp_tbl_writer",)], got
    # a new table in the namespace needs write on the namespace (or a grant on that name)
    assert_error(call("POST", url(f"namespaces/{ns_path('privA')}/tables"), token=w,
                      body={"name": "t9", "schema": SCHEMA.model_dump(by_alias=True)}),
                 403, "ForbiddenException")


def test_pyiceberg_as_restricted_roles(world, catalogs):
    reader = catalogs(world["rp_reader"])
    assert sorted(reader.list_tables("privA")) == [("privA", "t1"), ("privA", "t2")]
    assert reader.load_table(("privA", "t1")).schema().find_field("id")
    with pytest.raises(NoSuchTableError):
        reader.load_table(("privB", "t3"))
    with pytest.raises(NoSuchNamespaceError):
        reader.list_tables("privB")
    with pytest.raises(ForbiddenError):
        reader.drop_table(("privA", "t2"))
    t = catalogs(world["rp_tbl_writer"]).load_table(("privA", "t1"))
    with t.transaction() as tx:
        tx.set_properties(owner="rp_tbl_writer")
    assert reader.load_table(("privA", "t1")).properties["owner"] == "rp_tbl_writer"


def test_grants_hold_at_once_on_every_executor(world, pg):
    """A grant made in SQL is seen by the REST executors' next request (the relcache
    invalidation of skade.grants), and so is a revoke."""
    none = world["rp_none"]
    assert listed(none) == []
    sql(pg, "SELECT skade.grant('read', 'rp_none', 'privB', 't3', %s)", (restenv.CATALOG,))
    # every executor: a few requests, each on a new connection
    for _ in range(6):
        assert load(none, "privB", "t3").status_code == 200
    assert listed(none) == ["privB"]
    sql(pg, "SELECT skade.revoke('read', 'rp_none', 'privB', 't3', %s)", (restenv.CATALOG,))
    for _ in range(6):
        assert load(none, "privB", "t3").status_code == 404
    wait_for(lambda: listed(none) == [])
