"""Privileges per namespace and table through a JDBC-catalog client's own statements:
pyiceberg's SqlCatalog connected as members of skade_user sees and
changes only what skade.grant() allows them, by the row-level security of iceberg_tables and
iceberg_namespace_properties -- the same rule the SQL API and REST apply."""

from __future__ import annotations

import pytest
from pyiceberg.exceptions import NoSuchNamespaceError, NoSuchTableError
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField
from sqlalchemy.engine import make_url

from pgenv import PY_CAT, make_catalog, sqlalchemy_uri, warehouse_dir
from pyiceberg.catalog.sql import SqlCatalog

NAMESPACES = ("jpA", "jpB")
SCHEMA = Schema(NestedField(1, "id", LongType(), required=True))
ROLES = ("jp_reader", "jp_writer")

pytestmark = pytest.mark.usefixtures("fresh_skade")


def sql(pg, q, args=None):
    with pg.cursor() as cur:
        cur.execute(q, args)
        return cur.fetchall() if cur.description else None


def as_role(role: str) -> SqlCatalog:
    uri = make_url(sqlalchemy_uri()).set(username=role, password=None)
    return SqlCatalog(PY_CAT, uri=uri.render_as_string(hide_password=False),
                      warehouse=warehouse_dir().as_uri())


@pytest.fixture(scope="module")
def world(pg):
    owner = make_catalog()
    for ns in NAMESPACES:
        owner.create_namespace(ns)
    for ident in (("jpA", "t1"), ("jpA", "t2"), ("jpB", "t3")):
        owner.create_table(ident, SCHEMA)
    for role in ROLES:
        sql(pg, f"DROP ROLE IF EXISTS {role}")
        sql(pg, f"CREATE ROLE {role} LOGIN IN ROLE skade_user")
    sql(pg, "SELECT skade.grant('read', 'jp_reader', 'jpA', catalog => %s)", (PY_CAT,))
    sql(pg, "SELECT skade.grant('write', 'jp_writer', 'jpA', catalog => %s)", (PY_CAT,))
    cats = {role: as_role(role) for role in ROLES}
    yield cats
    for cat in cats.values():
        cat.close()
    owner.close()
    sql(pg, "DELETE FROM skade.grants")
    for role in ROLES:
        sql(pg, f"DROP ROLE IF EXISTS {role}")


def test_reader_sees_only_its_namespace(world):
    r = world["jp_reader"]
    assert sorted(n for n in r.list_namespaces() if n[0] in NAMESPACES) == [("jpA",)]
    assert sorted(r.list_tables("jpA")) == [("jpA", "t1"), ("jpA", "t2")]
    assert r.load_table(("jpA", "t1")).schema().find_field("id")
    with pytest.raises(NoSuchTableError):
        r.load_table(("jpB", "t3"))
    with pytest.raises(NoSuchNamespaceError):
        r.list_tables("jpB")
    assert not r.table_exists(("jpB", "t3"))


def test_reader_cannot_change_what_it_reads(world, pg):
    r = world["jp_reader"]
    t = r.load_table(("jpA", "t1"))
    with pytest.raises(Exception, match="permission denied"):
        with t.transaction() as tx:
            tx.set_properties(k="v")
    with pytest.raises(Exception, match="permission denied"):
        r.drop_table(("jpA", "t2"))
    with pytest.raises(Exception, match="permission denied"):
        r.create_namespace("jpA.sub")
    # nothing changed
    assert sql(pg, "SELECT count(*) FROM iceberg_tables WHERE catalog_name = %s"
                   " AND table_namespace = 'jpA'", (PY_CAT,)) == [(2,)]
    assert "k" not in make_catalog().load_table(("jpA", "t1")).properties


def test_writer_changes_its_namespace_only(world, pg):
    w = world["jp_writer"]
    t = w.load_table(("jpA", "t1"))
    with t.transaction() as tx:
        tx.set_properties(k="v")
    assert make_catalog().load_table(("jpA", "t1")).properties["k"] == "v"
    w.create_table(("jpA", "t9"), SCHEMA)
    w.rename_table(("jpA", "t9"), ("jpA", "t9r"))
    w.drop_table(("jpA", "t9r"))
    with pytest.raises(NoSuchNamespaceError):
        w.create_table(("jpB", "t9"), SCHEMA)
    with pytest.raises(NoSuchTableError):
        w.drop_table(("jpB", "t3"))
    assert make_catalog().table_exists(("jpB", "t3"))
    got = sql(pg, "SELECT op, table_name, source, committed_by FROM skade.commit_log"
                  " WHERE catalog_name = %s AND committed_by = 'jp_writer' ORDER BY seq", (PY_CAT,))
    assert [g[0] for g in got] == ["commit", "create", "rename", "drop"], got
    assert {g[2] for g in got} == {"sql"} and {g[3] for g in got} == {"jp_writer"}, got
