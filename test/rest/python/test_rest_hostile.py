"""Hostile and careless requests: an Idempotency-Key never answers a request it was not
first used for (another body, a role that lost its grants, a look-alike role name, a key too
long), names that are not one path component never become paths, and every client mistake
(nesting bombs, missing metadata files, names too long) is a 4xx whose message names no
server path."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from psycopg2 import sql

import restenv
from restenv import BAD_REQUEST, assert_error, call, ns_path, table_url, url

pytestmark = pytest.mark.usefixtures("fresh_namespaces")

NAMESPACES = ("hostile", "hostile_ns2", "hostile_v", "hostile_vx")

SCHEMA_JSON = {"type": "struct", "schema-id": 0,
               "fields": [{"id": 1, "name": "id", "type": "long", "required": True}]}


def pg_query(pg, query, params=()):
    with pg.cursor() as cur:
        cur.execute(query, params)
        return cur.fetchall() if cur.description else None


def role_token(pg, role: str, grant: str | None = "skade_writer") -> str:
    """A token of role (made if missing), granted grant."""
    with pg.cursor() as cur:
        cur.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,))
        if cur.fetchone() is None:
            cur.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
        if grant:
            cur.execute(sql.SQL("GRANT {} TO {}").format(sql.Identifier(grant), sql.Identifier(role)))
        cur.execute("SELECT skade.rest_create_token(%s, '1 hour')", (role,))
        return cur.fetchone()[0]


def new_key(tag: str = "") -> str:
    return f"0190a0b0-0000-7000-8000-{time.time_ns() % 10**12:012d}{tag}"


@pytest.fixture(scope="module")
def hostile_table(pg):
    """hostile.t, made through plain REST."""
    r = call("POST", url("namespaces"), body={"namespace": ["hostile"]})
    assert r.status_code == 200, r.text
    r = call("POST", url(f"namespaces/{ns_path('hostile')}/tables"), body={"name": "t", "schema": SCHEMA_JSON})
    assert r.status_code == 200, r.text
    return table_url("hostile", "t")


def location_of(pg, ns: str, name: str) -> str:
    return pg_query(pg, "SELECT metadata_location FROM public.iceberg_tables WHERE catalog_name = %s"
                    " AND table_namespace = %s AND table_name = %s", (restenv.CATALOG, ns, name))[0][0]


def set_properties(updates: dict) -> dict:
    return {"requirements": [], "updates": [{"action": "set-properties", "updates": updates}]}


# ------------------------------------------------------------ Idempotency-Key

def test_key_with_another_body_is_422_and_changes_nothing(hostile_table, pg):
    key = new_key("b")
    first = call("POST", hostile_table, body=set_properties({"a": "1"}), headers={"Idempotency-Key": key})
    assert first.status_code == 200, first.text
    before = location_of(pg, "hostile", "t")
    seq = pg_query(pg, "SELECT max(seq) FROM skade.commit_log")[0][0]
    r = call("POST", hostile_table, body=set_properties({"b": "2"}), headers={"Idempotency-Key": key})
    assert_error(r, 422, "UnprocessableEntityException")
    # B was not applied: the same metadata file, no commit, no property b
    assert location_of(pg, "hostile", "t") == before
    assert pg_query(pg, "SELECT count(*) FROM skade.commit_log WHERE seq > %s", (seq,))[0][0] == 0
    props = pg_query(pg, "SELECT (metadata::jsonb)->'properties' FROM skade.load_table(%s, %s, catalog => %s)",
                     ("hostile", "t", restenv.CATALOG))[0][0]
    assert props.get("a") == "1" and "b" not in props
    # the same request again is still the first answer
    again = call("POST", hostile_table, body=set_properties({"a": "1"}), headers={"Idempotency-Key": key})
    assert again.status_code == 200 and again.json() == first.json()


def test_replay_needs_the_privilege_still(hostile_table, pg):
    role = "rest_hostile_wr2"
    token = role_token(pg, role)
    key = new_key("r")
    body = set_properties({"wr2": "1"})
    first = call("POST", hostile_table, token=token, body=body, headers={"Idempotency-Key": key})
    assert first.status_code == 200, first.text
    pg_query(pg, sql.SQL("REVOKE skade_writer FROM {}").format(sql.Identifier(role)))
    try:
        # a plain load is refused; so is the replay of the stored answer
        assert_error(call("GET", hostile_table, token=token), 403, "ForbiddenException")
        r = call("POST", hostile_table, token=token, body=body, headers={"Idempotency-Key": key})
        assert_error(r, 403, "ForbiddenException")
        assert "metadata" not in r.json()
    finally:
        pg_query(pg, sql.SQL("GRANT skade_writer TO {}").format(sql.Identifier(role)))
    # granted again, the replay answers
    r = call("POST", hostile_table, token=token, body=body, headers={"Idempotency-Key": key})
    assert r.status_code == 200 and r.json() == first.json()


def test_look_alike_roles_do_not_share_keys(pg):
    """role "victim:x" with key K and role "victim" with key "x:K" were one stored key."""
    key = new_key("v")
    t1 = role_token(pg, "rest_victim:x")
    t2 = role_token(pg, "rest_victim")
    r1 = call("POST", url("namespaces"), token=t1, body={"namespace": ["hostile_vx"]}, headers={"Idempotency-Key": key})
    assert r1.status_code == 200, r1.text
    r2 = call("POST", url("namespaces"), token=t2, body={"namespace": ["hostile_v"]},
              headers={"Idempotency-Key": "x:" + key})
    assert r2.status_code == 200, r2.text
    assert r2.json()["namespace"] == ["hostile_v"]
    assert pg_query(pg, "SELECT skade.namespace_exists('hostile_v', %s)", (restenv.CATALOG,))[0][0]
    assert pg_query(pg, "SELECT skade.namespace_exists('hostile_vx', %s)", (restenv.CATALOG,))[0][0]
    rows = pg_query(pg, "SELECT r.rolname, i.key FROM skade.rest_idempotency i JOIN pg_roles r ON r.oid = i.role_oid"
                    " WHERE i.key IN (%s, %s) ORDER BY 1", (key, "x:" + key))
    assert rows == [("rest_victim", "x:" + key), ("rest_victim:x", key)]


def test_key_length(hostile_table, pg):
    seq = pg_query(pg, "SELECT max(seq) FROM skade.commit_log")[0][0]
    for key in ("k" * 256, ""):
        r = call("POST", hostile_table, body=set_properties({"long": "1"}), headers={"Idempotency-Key": key})
        assert_error(r, 400, "BadRequestException")
    assert pg_query(pg, "SELECT count(*) FROM skade.commit_log WHERE seq > %s", (seq,))[0][0] == 0
    r = call("POST", hostile_table, body=set_properties({"long": "1"}), headers={"Idempotency-Key": "k" * 255})
    assert r.status_code == 200, r.text


def test_expired_answers_are_swept(hostile_table, pg):
    old = new_key("o")
    assert call("POST", hostile_table, body=set_properties({"old": "1"}),
                headers={"Idempotency-Key": old}).status_code == 200
    pg_query(pg, "UPDATE skade.rest_idempotency SET created_at = now() - interval '31 minutes' WHERE key = %s", (old,))
    # an expired answer is not replayed ...
    seq = pg_query(pg, "SELECT max(seq) FROM skade.commit_log")[0][0]
    assert call("POST", hostile_table, body=set_properties({"old": "2"}),
                headers={"Idempotency-Key": old}).status_code == 200
    assert pg_query(pg, "SELECT count(*) FROM skade.commit_log WHERE seq > %s", (seq,))[0][0] == 1
    # ... and the next keyed change sweeps every expired one
    pg_query(pg, "UPDATE skade.rest_idempotency SET created_at = now() - interval '31 minutes'")
    fresh = new_key("f")
    assert call("POST", hostile_table, body=set_properties({"fresh": "1"}),
                headers={"Idempotency-Key": fresh}).status_code == 200
    assert pg_query(pg, "SELECT key FROM skade.rest_idempotency") == [(fresh,)]


# ------------------------------------------------------------ names that would be paths

BAD_NAMES = {"dot": ".", "dotdot": "..", "slash": "a/b", "up_and_over": "../hostile_ns2/evil",
             "control": "a\x01b", "tab": "a\tb"}

VIEW_VERSION = {"version-id": 1, "timestamp-ms": 1700000000000, "schema-id": 0, "summary": {},
                "default-namespace": ["hostile"],
                "representations": [{"type": "sql", "sql": "SELECT 1 AS id", "dialect": "spark"}]}


def warehouse() -> Path:
    return Path(os.environ["SKADE_WAREHOUSE"])


def tree() -> set[str]:
    return {str(p) for p in warehouse().rglob("*")}


@pytest.mark.parametrize("label", BAD_NAMES)
def test_a_name_that_is_no_path_component_is_400(label, hostile_table, pg):
    """A table's, view's or namespace level's name that would become more (or less) than one
    directory of its default location is refused, and nothing is written anywhere."""
    name = BAD_NAMES[label]
    r = call("POST", url("namespaces"), body={"namespace": ["hostile_ns2"]})
    assert r.status_code in (200, 409), r.text
    before = tree()
    tables = url(f"namespaces/{ns_path('hostile')}/tables")
    assert_error(call("POST", tables, body={"name": name, "schema": SCHEMA_JSON}), 400, "BadRequestException")
    assert_error(call("POST", tables, body={"name": name, "schema": SCHEMA_JSON, "stage-create": True}),
                 400, "BadRequestException")
    assert_error(call("POST", url(f"namespaces/{ns_path('hostile')}/views"),
                      body={"name": name, "schema": SCHEMA_JSON, "view-version": VIEW_VERSION, "properties": {}}),
                 400, "BadRequestException")
    assert_error(call("POST", url("namespaces"), body={"namespace": ["hostile", name]}), 400, "BadRequestException")
    # the namespace was not made: nothing is under a path naming it (%2F in the segment)
    r = call("POST", url(f"namespaces/{ns_path('hostile', name)}/tables"), body={"name": "x", "schema": SCHEMA_JSON})
    assert r.status_code in (400, 404), r.text
    assert tree() == before
    assert not (warehouse() / "metadata").exists()
    assert not (warehouse() / "hostile_ns2" / "evil").exists()
    assert pg_query(pg, "SELECT count(*) FROM public.iceberg_tables WHERE catalog_name = %s AND table_name = %s",
                    (restenv.CATALOG, name))[0][0] == 0


def test_slash_name_with_an_explicit_location(hostile_table, pg):
    """With a location of its own a name is no path: "a/b" is a table name like any other."""
    loc = f"file://{warehouse()}/hostile/explicit-ab"
    r = call("POST", url(f"namespaces/{ns_path('hostile')}/tables"),
             body={"name": "a/b", "schema": SCHEMA_JSON, "location": loc})
    assert r.status_code == 200, r.text
    assert r.json()["metadata"]["location"] == loc
    assert call("GET", table_url("hostile", "a/b")).status_code == 200
    assert call("DELETE", table_url("hostile", "a/b")).status_code == 204


def test_a_name_of_10000_characters_is_400_without_server_paths(hostile_table):
    tables = url(f"namespaces/{ns_path('hostile')}/tables")
    for body in ({"name": "n" * 10000, "schema": SCHEMA_JSON},
                 {"name": "n" * 10000, "schema": SCHEMA_JSON, "location": f"file://{warehouse()}/hostile/long"}):
        before = tree()
        r = call("POST", tables, body=body)
        err = assert_error(r, 400, "BadRequestException")
        assert str(warehouse()) not in err["message"] and "/tmp" not in err["message"], err
        assert "n" * 300 not in err["message"]
        # no file (the explicit location's directories may stay, empty, as after any failed create)
        assert {p for p in tree() - before if not Path(p).is_dir()} == set()
        if "location" not in body:
            assert tree() == before


# ------------------------------------------------------------ client mistakes are 4xx

POST_ROUTES = ["namespaces", "namespaces/hostile/properties", "namespaces/hostile/tables",
               "namespaces/hostile/tables/t", "namespaces/hostile/register", "namespaces/hostile/tables/t/metrics",
               "tables/rename", "transactions/commit", "namespaces/hostile/views", "namespaces/hostile/views/v",
               "views/rename", "namespaces/hostile/register-view", "namespaces/hostile/tables/t/plan",
               "namespaces/hostile/tables/t/tasks"]


@pytest.mark.parametrize("route", POST_ROUTES)
def test_nesting_bombs_are_400(route, hostile_table):
    for bomb in (b"[" * 100000, b'{"a":' * 50000, b"[" * 513 + b"]" * 513):
        r = call("POST", url(route), raw=bomb)
        assert_error(r, 400, "BadRequestException")
    # deep, but within the bound and inside strings: the parser judges it (not a nesting error)
    r = call("POST", url(route), raw=json.dumps({"x": "[" * 100000}).encode())
    assert r.status_code < 500, r.text


def test_a_body_that_is_not_utf8_is_400(hostile_table):
    r = call("POST", url("namespaces"), raw=b'{"namespace": ["hostile_\xff"]}')
    assert_error(r, 400, "BadRequestException")
    r = call("POST", url("namespaces"), raw=b'{"namespace": ["hostile_\x00"]}')
    assert_error(r, 400, "BadRequestException")


def test_register_a_missing_metadata_file_is_404_without_its_path(hostile_table):
    missing = f"file://{warehouse()}/hostile/gone/metadata/00001-0f0e0d0c-0b0a-0908-0706-050403020100.metadata.json"
    r = call("POST", url(f"namespaces/{ns_path('hostile')}/register"),
             body={"name": "gone", "metadata-location": missing})
    err = assert_error(r, 404, "NotFoundException")
    assert str(warehouse()) not in err["message"] and "gone" not in err["message"], err
    assert call("HEAD", table_url("hostile", "gone")).status_code == 404
