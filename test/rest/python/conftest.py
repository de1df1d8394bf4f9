"""Fixtures of the REST suite: the pyiceberg interop suite's (test/interop/python, reused:
the superuser connection, skade's cross-checks), with pyiceberg's RestCatalog on skade's
REST port instead of SqlCatalog.

The catalog is never reset (the tokens live in the extension): each module works in
namespaces of its own, removed at its start (REST drops, then the files).
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

import pytest

INTEROP = Path(__file__).resolve().parents[2] / "interop" / "python"
sys.path.insert(0, str(INTEROP))

_spec = importlib.util.spec_from_file_location("interop_conftest", INTEROP / "conftest.py")
_interop = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_interop)

import restenv  # noqa: E402
from pgenv import warehouse_dir  # noqa: E402
from skadecheck import Skade  # noqa: E402

pg = _interop.pg


class RestSkade(Skade):
    """skade's view of the REST catalog: every commit-log row the client's calls appended
    came through the SQL API (source 'api') as the token's role."""

    role = restenv.WRITER_ROLE

    def expect_log(self, *rows) -> None:
        mark = self.mark
        super().expect_log(*rows)
        got = self.query(
            "SELECT seq, source, committed_by FROM skade.commit_log"
            " WHERE catalog_name = %s AND seq > %s AND seq <= %s ORDER BY seq",
            (self.catalog, mark, self.mark))
        assert [r[1:] for r in got] == [("api", self.role)] * len(got), got


def clear_namespaces(pg, catalog: str, prefixes) -> None:
    """Forget every table and namespace whose name starts with one of prefixes (SQL, as the
    superuser), and the warehouse's directories of them."""
    with pg.cursor() as cur:
        for p in prefixes:
            cur.execute("DELETE FROM public.iceberg_tables WHERE catalog_name = %s"
                        " AND (table_namespace = %s OR table_namespace LIKE %s)", (catalog, p, p + ".%"))
            cur.execute("DELETE FROM public.iceberg_namespace_properties WHERE catalog_name = %s"
                        " AND (namespace = %s OR namespace LIKE %s)", (catalog, p, p + ".%"))
            shutil.rmtree(warehouse_dir() / p, ignore_errors=True)


@pytest.fixture(scope="module")
def fresh_namespaces(pg, request):
    clear_namespaces(pg, restenv.CATALOG, getattr(request.module, "NAMESPACES", ()))
    yield


@pytest.fixture
def catalogs():
    made = []

    def factory(token: str = restenv.WRITER_TOKEN, **props: str):
        cat = restenv.make_catalog(token, **props)
        made.append(cat)
        return cat

    yield factory
    for cat in made:
        close = getattr(cat, "close", None)
        if close:
            close()


@pytest.fixture
def catalog(catalogs):
    return catalogs()


@pytest.fixture
def skade(pg) -> RestSkade:
    """skade's view of the REST catalog, with the commit-log position taken now."""
    return RestSkade(pg, restenv.CATALOG)
