"""Shared fixtures for skade's pyiceberg interop suite.

Connection: PGHOST, PGPORT, PGUSER, PGDATABASE (PGPASSWORD is honoured by
libpq).  Warehouse: SKADE_WAREHOUSE, a local directory (required for the
mixed phase, a temporary directory otherwise).

Phase `main` (tests not marked `mixed`) resets the catalog once per test
module by recreating the extension; phase `mixed` never resets anything.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import psycopg2
import pytest
from sqlalchemy.engine import URL

from pyiceberg.catalog.sql import SqlCatalog

from skadecheck import Skade

PY_CAT = "py_cat"


def pg_params() -> dict:
    return {
        "host": os.environ.get("PGHOST", "127.0.0.1"),
        "port": int(os.environ.get("PGPORT", "5432")),
        "user": os.environ.get("PGUSER", "postgres"),
        "dbname": os.environ.get("PGDATABASE", "postgres"),
    }


def sqlalchemy_uri() -> str:
    p = pg_params()
    password = os.environ.get("PGPASSWORD")
    if p["host"].startswith("/"):
        # unix socket directory: libpq takes it as the host query parameter
        url = URL.create("postgresql+psycopg2", username=p["user"], password=password,
                         database=p["dbname"], query={"host": p["host"], "port": str(p["port"])})
    else:
        url = URL.create("postgresql+psycopg2", username=p["user"], password=password,
                         host=p["host"], port=p["port"], database=p["dbname"])
    return url.render_as_string(hide_password=False)


_tmp_warehouse: str | None = None


def warehouse_dir() -> Path:
    global _tmp_warehouse
    wh = os.environ.get("SKADE_WAREHOUSE")
    if not wh:
        if _tmp_warehouse is None:
            _tmp_warehouse = tempfile.mkdtemp(prefix="skade_py_wh_")
        wh = _tmp_warehouse
    path = Path(wh).resolve()
    path.mkdir(parents=True, exist_ok=True)
    return path


def make_catalog(name: str = PY_CAT, **props: str) -> SqlCatalog:
    return SqlCatalog(name, uri=sqlalchemy_uri(), warehouse=warehouse_dir().as_uri(), **props)


@pytest.fixture(scope="session")
def warehouse() -> Path:
    return warehouse_dir()


@pytest.fixture(scope="session")
def pg():
    """An autocommit psycopg2 connection to the same database the client uses."""
    conn = psycopg2.connect(**pg_params())
    conn.autocommit = True
    yield conn
    conn.close()


def reset_catalog(pg) -> None:
    """Fresh skade: drop the extension and the catalog tables, install again."""
    with pg.cursor() as cur:
        cur.execute("DROP EXTENSION IF EXISTS skade CASCADE")
        cur.execute("DROP TABLE IF EXISTS public.iceberg_tables, public.iceberg_namespace_properties")
        cur.execute("CREATE EXTENSION skade")


@pytest.fixture(scope="module")
def fresh_skade(pg, warehouse, request):
    """Main phase only: a freshly installed skade, and no leftover files for the
    namespaces the module declares in NAMESPACES."""
    if request.node.get_closest_marker("mixed") is not None:
        raise RuntimeError("the mixed phase must never reset the catalog")
    reset_catalog(pg)
    for ns in getattr(request.module, "NAMESPACES", ()):
        shutil.rmtree(warehouse / ns, ignore_errors=True)
    yield


@pytest.fixture
def catalogs():
    """Factory for SqlCatalog instances (each with its own connection pool);
    all are closed after the test."""
    made: list[SqlCatalog] = []

    def factory(name: str = PY_CAT, **props: str) -> SqlCatalog:
        cat = make_catalog(name, **props)
        made.append(cat)
        return cat

    yield factory
    for cat in made:
        cat.close()


@pytest.fixture
def catalog(catalogs) -> SqlCatalog:
    return catalogs(PY_CAT)


@pytest.fixture
def skade(pg) -> Skade:
    """skade's view of catalog py_cat, with the commit-log position taken now."""
    return Skade(pg, PY_CAT)
