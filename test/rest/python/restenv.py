"""The REST server of the suite (test/rest/run.sh started it), from the environment, and
plain-HTTP helpers for the protocol checks.

SKADE_REST_URI: http://127.0.0.1:PORT (skade.rest_port); SKADE_REST_CATALOG: the prefix (a
JDBC catalog name, announced by GET /v1/config?warehouse=<catalog>);
SKADE_REST_WRITER_TOKEN / SKADE_REST_READER_TOKEN: Bearer tokens of the roles
SKADE_REST_WRITER_ROLE (member of skade_writer) / SKADE_REST_READER_ROLE (skade_reader);
SKADE_REST_PG_DSN: libpq DSN of the superuser; SKADE_REST_DATA / SKADE_REST_PGBIN: the data
directory and the server's binaries.
"""

from __future__ import annotations

import json
import os
import socket
import time
from urllib.parse import quote

import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from pyiceberg.catalog.rest import RestCatalog


def env(key: str) -> str:
    v = os.environ.get(key)
    if not v:
        raise RuntimeError(f"{key} is not set: run the suite through test/rest/run.sh")
    return v


URI = env("SKADE_REST_URI")
CATALOG = env("SKADE_REST_CATALOG")
WRITER_TOKEN = env("SKADE_REST_WRITER_TOKEN")
READER_TOKEN = env("SKADE_REST_READER_TOKEN")
WRITER_ROLE = env("SKADE_REST_WRITER_ROLE")
READER_ROLE = env("SKADE_REST_READER_ROLE")
PG_DSN = env("SKADE_REST_PG_DSN")
HOST, PORT = URI.removeprefix("http://").rsplit(":", 1)
PORT = int(PORT)


def make_catalog(token: str = WRITER_TOKEN, name: str = "rest", **props: str) -> RestCatalog:
    """pyiceberg's RestCatalog on skade, the catalog chosen by warehouse (-> prefix).

    The server closes a keep-alive connection idle for skade.rest_idle_timeout (2 s in this
    suite); a client that reuses it at that very moment gets "Remote end closed connection
    without response" (RFC 9112 9.3.1: the client may retry an idempotent request). Java's
    HTTP client retries such a request on a fresh connection, pyiceberg's session does not:
    here it does, for GET and HEAD only (no commit is ever sent twice)."""
    cat = RestCatalog(name, uri=URI, token=token, warehouse=CATALOG, **props)
    retry = Retry(total=2, connect=2, read=2, status=0, redirect=0,
                  allowed_methods=frozenset({"GET", "HEAD"}), raise_on_status=False)
    cat._session.mount("http://", HTTPAdapter(max_retries=retry))
    return cat


# ------------------------------------------------------------ plain HTTP

def ns_path(*levels: str) -> str:
    """A namespace's path segment: levels percent-encoded, joined by 0x1F (%1F)."""
    return "%1F".join(quote(level, safe="") for level in levels)


def url(path: str) -> str:
    """URI + /v1/<prefix>/<path> (path already encoded)."""
    return f"{URI}/v1/{quote(CATALOG, safe='')}/{path}"


def table_url(ns: tuple[str, ...] | str, name: str) -> str:
    levels = (ns,) if isinstance(ns, str) else ns
    return url(f"namespaces/{ns_path(*levels)}/tables/{quote(name, safe='')}")


def auth(token: str | None = WRITER_TOKEN) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


def call(method: str, target: str, token: str | None = WRITER_TOKEN, body=None,
         headers: dict | None = None, raw: bytes | None = None) -> requests.Response:
    """One request on a new connection (target: a full URL)."""
    h = {**auth(token), **(headers or {})}
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    if data is not None:
        h.setdefault("Content-Type", "application/json")
    return requests.request(method, target, headers=h, data=data, timeout=30)


BAD_REQUEST = ("BadRequestException", "IllegalArgumentException")


def assert_error(resp: requests.Response, status: int, type_: str | tuple | None = None) -> dict:
    """The answer is Iceberg's error model with this status (and type, or one of the types;
    400: BadRequestException or IllegalArgumentException, as Java's ErrorHandlers take both)."""
    assert resp.status_code == status, f"{resp.status_code} {resp.text[:500]}"
    body = resp.json()
    assert set(body) == {"error"}, body
    err = body["error"]
    assert {"message", "type", "code"} <= set(err), body
    assert err["code"] == status, body
    assert isinstance(err["message"], str) and err["message"], body
    assert isinstance(err["type"], str) and err["type"], body
    if type_ == "BadRequestException":
        type_ = BAD_REQUEST
    if type_ is not None:
        assert err["type"] in ((type_,) if isinstance(type_, str) else type_), body
    return err


def raw_request(data: bytes, timeout: float = 10) -> bytes:
    """Send data on a fresh TCP connection, read until the server closes or times out."""
    with socket.create_connection((HOST, PORT), timeout=timeout) as s:
        s.sendall(data)
        out = b""
        try:
            while chunk := s.recv(65536):
                out += chunk
        except socket.timeout:
            pass
        return out


# ------------------------------------------------------------ the server's settings


def sql(conn, q, args=None):
    """Run q on conn (autocommit); its rows, or None for a statement without any."""
    with conn.cursor() as cur:
        cur.execute(q, args)
        return cur.fetchall() if cur.description else None


def alter_system(conn, **settings):
    """ALTER SYSTEM SET (None: RESET) each skade.NAME=value, then reload."""
    for k, v in settings.items():
        if v is None:
            sql(conn, f"ALTER SYSTEM RESET skade.{k}")
        else:
            sql(conn, f"ALTER SYSTEM SET skade.{k} = %s", (v,))
    sql(conn, "SELECT pg_reload_conf()")


def wait_for(check, timeout=10.0):
    """check() becomes true within timeout seconds (a reload reaches every REST process in
    its own time); a connection or TLS error meanwhile counts as not yet."""
    end = time.monotonic() + timeout
    while True:
        try:
            if check():
                return True
        except (OSError, requests.RequestException):
            pass
        if time.monotonic() > end:
            return False
        time.sleep(0.2)

