#!/usr/bin/env python3
"""pyiceberg 0.12 RestCatalog smoke test against any REST catalog (first: the Iceberg REST fixture).

    smoke_fixture.py --uri http://127.0.0.1:PORT/ [--warehouse W] [--token T]
                     [--prefix NAME] [--namespace NS] [--prop K=V ...] [--show-requests]

Lifecycle: create a namespace and a table, append twice, load the table through a new
RestCatalog, scan it, check rows and snapshots, list, drop table (purge) and namespace.
Exit status 0 when every step held; the last line is "smoke: N passed, N failed".

Between pyiceberg and the server sits a small recording proxy in this process, so the run
also documents what pyiceberg sends: each request line, the Authorization header, the
X-Iceberg-* headers and the query of GET /v1/config.  With --prefix NAME the proxy plays a
server that answers GET /v1/config with overrides {"prefix": NAME} and serves every route
only under /v1/NAME/... (it strips the prefix before forwarding, and answers 404 in the REST
error model for an unprefixed route): a run that passes shows that pyiceberg takes the
prefix from /v1/config, as skade's server will want it (prefix = catalog name).

Which RestCatalog properties matter (pyiceberg 0.12.0, pyiceberg/catalog/rest/__init__.py):
  uri        the base URI; "v1/..." is appended (a trailing slash or not)
  warehouse  sent as ?warehouse=W on GET /v1/config, nowhere else
  token      sent as "Authorization: Bearer T" on every request, /v1/config included;
             WITHOUT a token (and no "auth") pyiceberg sends "Authorization: Bearer None"
  header.X   an extra request header X on every request -- but not Authorization: the
             default (legacy OAuth2) auth hook runs last and overwrites it with "Bearer <token>"
             ("Bearer None" without a token)
  auth       {"type": "basic", "basic": {"username": U, "password": P}}: "Basic ..." instead;
             {"type": "noop"}: no Authorization header at all
  prefix     normally from /v1/config overrides; then /v1/{prefix}/... on every route
  namespace-separator  from /v1/config overrides (URL-encoded, e.g. "%2E"); default \\x1f
Drop with purge is DELETE ...?purgeRequested=True (Python's spelling: compare case-blind).
The server's /v1/config "endpoints" list is enforced: a route missing from it raises
NotImplementedError in the client before any request.
"""

from __future__ import annotations

import argparse
import http.client
import http.server
import json
import sys
import threading
import time
import traceback
import urllib.parse
import uuid

import pyarrow as pa
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType


# ---------------------------------------------------------------------------------------
# the recording (and optionally prefixing) proxy
# ---------------------------------------------------------------------------------------
class Proxy:
    """A threaded HTTP proxy to one upstream REST server; records what the client sends."""

    def __init__(self, upstream: str, prefix: str | None):
        u = urllib.parse.urlsplit(upstream)
        self.host, self.port = u.hostname, u.port or 80
        self.base = u.path.rstrip("/")  # a server under a sub-path
        self.prefix = prefix
        self.log: list[dict] = []
        self.lock = threading.Lock()
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def _any(self):
                proxy.handle(self)

            do_GET = do_POST = do_HEAD = do_DELETE = do_PUT = _any

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def uri(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/"

    def close(self):
        self.server.shutdown()
        self.server.server_close()

    def _reply(self, h, status: int, body: bytes, headers: dict[str, str]):
        h.send_response(status)
        for k, v in headers.items():
            h.send_header(k, v)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        if h.command != "HEAD":
            h.wfile.write(body)

    def handle(self, h):
        length = int(h.headers.get("Content-Length") or 0)
        body = h.rfile.read(length) if length else b""
        split = urllib.parse.urlsplit(h.path)
        path, query = split.path, split.query
        entry = {
            "method": h.command,
            "path": path,
            "query": query,
            "authorization": h.headers.get("Authorization"),
            "headers": {k: v for k, v in h.headers.items() if k.lower().startswith("x-")},
            "accept-encoding": h.headers.get("Accept-Encoding"),
        }
        with self.lock:
            self.log.append(entry)

        # the prefix: only /v1/config (and the token endpoint) live outside it
        if self.prefix is not None and path.startswith("/v1/") and path not in ("/v1/config", "/v1/oauth/tokens"):
            want = f"/v1/{self.prefix}/"
            if not path.startswith(want):
                err = {"error": {"message": f"no such route without the prefix: {path}",
                                 "type": "NoSuchRouteException", "code": 404}}
                entry["status"] = 404
                return self._reply(h, 404, json.dumps(err).encode(), {"Content-Type": "application/json"})
            path = "/v1/" + path[len(want):]

        fwd_headers = {k: v for k, v in h.headers.items()
                       if k.lower() not in ("host", "content-length", "connection", "accept-encoding")}
        conn = http.client.HTTPConnection(self.host, self.port, timeout=120)
        try:
            target = self.base + path + (("?" + query) if query else "")
            conn.request(h.command, target, body=body if body else None, headers=fwd_headers)
            resp = conn.getresponse()
            data = resp.read()
            status = resp.status
            rheaders = {k: v for k, v in resp.getheaders()
                        if k.lower() not in ("content-length", "transfer-encoding", "connection",
                                             "content-encoding")}
        finally:
            conn.close()
        entry["status"] = status

        if self.prefix is not None and path == "/v1/config" and status == 200:
            cfg = json.loads(data)
            cfg.setdefault("overrides", {})["prefix"] = self.prefix
            entry["config"] = cfg
            data = json.dumps(cfg).encode()
        elif path == "/v1/config" and status == 200:
            entry["config"] = json.loads(data)
        self._reply(h, status, data, rheaders)


# ---------------------------------------------------------------------------------------
# the lifecycle
# ---------------------------------------------------------------------------------------
SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "name", StringType(), required=False),
)


def arrow_rows(ids: list[int]) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "name": pa.array([f"n{i}" for i in ids], pa.string())})


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--uri", required=True)
    ap.add_argument("--warehouse")
    ap.add_argument("--token")
    ap.add_argument("--prefix", help="serve through a proxy that advertises this prefix in /v1/config")
    ap.add_argument("--namespace", default=f"smoke_{uuid.uuid4().hex[:8]}")
    ap.add_argument("--prop", action="append", default=[], metavar="K=V",
                    help="another RestCatalog property (a V starting with { is JSON), repeatable")
    ap.add_argument("--show-requests", action="store_true", help="print every request pyiceberg sent")
    args = ap.parse_args()

    proxy = Proxy(args.uri, args.prefix)
    props = {"uri": proxy.uri}
    if args.warehouse:
        props["warehouse"] = args.warehouse
    if args.token:
        props["token"] = args.token
    for kv in args.prop:
        k, _, v = kv.partition("=")
        props[k] = json.loads(v) if v.startswith("{") else v

    passed = failed = 0

    def step(name, fn):
        nonlocal passed, failed
        t0 = time.monotonic()
        try:
            fn()
            passed += 1
            print(f"ok   {name} ({(time.monotonic() - t0) * 1000:.0f} ms)")
            return True
        except Exception:
            failed += 1
            print(f"FAIL {name}")
            traceback.print_exc()
            return False

    ns = (args.namespace,)
    ident = (args.namespace, "events")
    state: dict = {}

    def connect():
        state["cat"] = RestCatalog("smoke", **props)
        p = state["cat"].properties
        print(f"     prefix={p.get('prefix')!r} namespace-separator={p.get('namespace-separator')!r}")

    def create_namespace():
        state["cat"].create_namespace(ns, {"owner": "smoke"})
        assert ns in state["cat"].list_namespaces(), state["cat"].list_namespaces()
        assert state["cat"].load_namespace_properties(ns).get("owner") == "smoke"

    def create_table():
        t = state["cat"].create_table(ident, SCHEMA, properties={"smoke": "yes"})
        assert t.properties.get("smoke") == "yes"
        state["table"] = t

    def append_twice():
        t = state["table"]
        t.append(arrow_rows([1, 2, 3]))
        t.append(arrow_rows([4, 5]))
        assert len(t.snapshots()) == 2, t.snapshots()

    def load_and_scan():
        cat2 = RestCatalog("smoke2", **props)  # a new client: nothing cached
        t = cat2.load_table(ident)
        assert len(t.snapshots()) == 2
        rows = t.scan().to_arrow()
        assert sorted(rows.column("id").to_pylist()) == [1, 2, 3, 4, 5], rows
        first = t.snapshots()[0].snapshot_id
        old = t.scan(snapshot_id=first).to_arrow()
        assert sorted(old.column("id").to_pylist()) == [1, 2, 3], old

    def list_and_exists():
        cat = state["cat"]
        assert ident in cat.list_tables(ns), cat.list_tables(ns)
        assert cat.table_exists(ident)
        assert not cat.table_exists((args.namespace, "missing"))

    def drop_all():
        cat = state["cat"]
        cat.purge_table(ident)
        assert not cat.table_exists(ident)
        cat.drop_namespace(ns)
        assert ns not in cat.list_namespaces()

    ok = step("connect (GET /v1/config)", connect)
    if ok and step("create namespace", create_namespace):
        if step("create table", create_table):
            step("append twice", append_twice)
            step("load + scan (new client; time travel)", load_and_scan)
            step("list tables, table exists", list_and_exists)
        step("purge table, drop namespace", drop_all)

    proxy.close()

    # what pyiceberg sent
    cfg = next((e for e in proxy.log if e["path"] == "/v1/config"), None)
    if cfg:
        print(f"GET /v1/config query: {cfg['query']!r}; config: {json.dumps(cfg.get('config', {}).get('overrides'))} (overrides)")
    auths = sorted({str(e["authorization"]) for e in proxy.log})
    print(f"Authorization headers sent: {auths}")
    xh = sorted({f"{k}: {v}" for e in proxy.log for k, v in e["headers"].items()})
    print(f"X- headers sent: {xh}")
    routes: dict[str, int] = {}
    for e in proxy.log:
        key = f"{e['method']} {e['path']} -> {e.get('status')}"
        routes[key] = routes.get(key, 0) + 1
    if args.show_requests:
        for e in proxy.log:
            q = ("?" + e["query"]) if e["query"] else ""
            print(f"  {e['method']} {e['path']}{q} -> {e.get('status')}")
    else:
        print(f"{len(proxy.log)} requests, {len(routes)} distinct (--show-requests lists them)")
    print(f"smoke: {passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
