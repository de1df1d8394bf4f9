"""Connection settings for the suite, from the environment (also used by helper processes)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from sqlalchemy.engine import URL

from pyiceberg.catalog.sql import SqlCatalog

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
