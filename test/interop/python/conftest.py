"""Shared fixtures for skade's pyiceberg interop suite.

Connection: PGHOST, PGPORT, PGUSER, PGDATABASE (PGPASSWORD is honoured by
libpq).  Warehouse: SKADE_WAREHOUSE, a local directory (required for the
mixed phase, a temporary directory otherwise).

Phase `main` (tests not marked `mixed`) resets the catalog once per test
module by recreating the extension; phase `mixed` never resets anything.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import psycopg2
import pytest

from pyiceberg.catalog.sql import SqlCatalog

from pgenv import PY_CAT, make_catalog, pg_params, warehouse_dir
from skadecheck import Skade


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
