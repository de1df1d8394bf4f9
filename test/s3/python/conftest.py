"""Fixtures of the S3 suite: those of the pyiceberg interop suite (test/interop/python,
reused: the connection, the catalog reset, skade's cross-checks), with the client's
warehouse on the local S3 server instead of a directory.

Each module resets skade (as the interop suite's main phase does) and removes what an
earlier run left under s3://BUCKET/wh/<namespace> for the namespaces it declares in
NAMESPACES.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

INTEROP = Path(__file__).resolve().parents[2] / "interop" / "python"
sys.path.insert(0, str(INTEROP))

_spec = importlib.util.spec_from_file_location("interop_conftest", INTEROP / "conftest.py")
_interop = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_interop)

from pgenv import PY_CAT  # noqa: E402
import s3env  # noqa: E402

pg = _interop.pg
skade = _interop.skade


@pytest.fixture(scope="module")
def fresh_skade(pg, request):
    _interop.reset_catalog(pg)
    for ns in getattr(request.module, "NAMESPACES", ()):
        s3env.remove_prefix(f"{s3env.WAREHOUSE}/{ns}")
    yield


@pytest.fixture
def catalogs():
    """Factory for SqlCatalog instances whose FileIO is pyarrow's S3; closed after the test."""
    made = []

    def factory(name: str = PY_CAT, warehouse: str = s3env.WAREHOUSE, **props: str):
        cat = s3env.make_catalog(name, warehouse, **props)
        made.append(cat)
        return cat

    yield factory
    for cat in made:
        cat.close()


@pytest.fixture
def catalog(catalogs):
    return catalogs(PY_CAT)
