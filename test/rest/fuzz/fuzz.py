#!/usr/bin/env python3
"""skade's REST HTTP/JSON fuzzer (see README.md).  Python stdlib only.

Seeds a small catalog through REST, builds a corpus of exact requests for every
route of src/rest/rest_routes.c, mutates them (raw HTTP, JSON bodies, paths, headers)
and sends them from several threads over keep-alive connections; reports
crashes, 5xx answers, hangs, bad answers and state changed by failed requests.
"""
import argparse
import base64
import copy
import gzip
import hashlib
import json
import os
import random
import re
import socket
import struct
import sys

# JSON numbers of any length are JSON (the server echoes what it stored): parse them
if hasattr(sys, "set_int_max_str_digits"):
    sys.set_int_max_str_digits(0)
import threading
import time
import zlib
from collections import Counter, deque

HOST = "127.0.0.1"

# ------------------------------------------------------------------ PG wire
class PG:
    """A minimal PostgreSQL client (trust auth, simple query protocol)."""

    def __init__(self, port, user="postgres", db="postgres"):
        self.port, self.user, self.db = port, user, db
        self.sock = None
        self.lock = threading.Lock()

    def _connect(self):
        s = socket.create_connection((HOST, self.port), timeout=30)
        params = b"user\0" + self.user.encode() + b"\0database\0" + self.db.encode() + b"\0" \
            + b"application_name\0rest-fuzz\0\0"
        s.sendall(struct.pack("!ii", 8 + len(params), 196608) + params)
        self.sock, self.buf = s, b""
        while True:
            t, body = self._msg()
            if t == b"R" and struct.unpack("!i", body[:4])[0] != 0:
                raise RuntimeError("pg: authentication required")
            if t == b"E":
                raise RuntimeError("pg: " + body.decode(errors="replace"))
            if t == b"Z":
                return

    def _recv(self, n):
        while len(self.buf) < n:
            c = self.sock.recv(65536)
            if not c:
                raise ConnectionError("pg: connection closed")
            self.buf += c
        d, self.buf = self.buf[:n], self.buf[n:]
        return d

    def _msg(self):
        h = self._recv(5)
        return h[:1], self._recv(struct.unpack("!i", h[1:])[0] - 4)

    def query(self, sql):
        """Rows (lists of str|None) of sql; raises on an error."""
        with self.lock:
            for attempt in (0, 1):
                try:
                    if self.sock is None:
                        self._connect()
                    q = sql.encode() + b"\0"
                    self.sock.sendall(b"Q" + struct.pack("!i", len(q) + 4) + q)
                    rows, err = [], None
                    while True:
                        t, body = self._msg()
                        if t == b"D":
                            n = struct.unpack("!h", body[:2])[0]
                            p, row = 2, []
                            for _ in range(n):
                                ln = struct.unpack("!i", body[p:p + 4])[0]
                                p += 4
                                if ln < 0:
                                    row.append(None)
                                else:
                                    # (invalid UTF-8 in a UTF8 database: kept as surrogates, a finding)
                                    row.append(body[p:p + ln].decode("utf-8", "surrogateescape"))
                                    p += ln
                            rows.append(row)
                        elif t == b"E":
                            err = body.decode(errors="replace")
                        elif t == b"Z":
                            break
                    if err:
                        raise RuntimeError("pg: " + err)
                    return rows
                except (OSError, ConnectionError):
                    self.close()
                    if attempt:
                        raise
                    time.sleep(0.5)

    def close(self):
        if self.sock:
            try:
                self.sock.close()
            except OSError:
                pass
        self.sock = None


def state_sql(cond):
    """The catalog state of the catalogs cond (a condition on catalog_name) as one text."""
    return """SELECT
 (SELECT count(*) || ':' || coalesce(md5(string_agg(catalog_name || '|' || table_namespace || '|' || table_name
   || '|' || coalesce(metadata_location, '') || '|' || coalesce(iceberg_type, ''), ',' ORDER BY catalog_name,
   table_namespace, table_name)), '') FROM public.iceberg_tables WHERE %(c)s)
 || '/' || (SELECT count(*) || ':' || coalesce(md5(string_agg(catalog_name || '|' || namespace || '|' || property_key
   || '|' || coalesce(property_value, ''), ',' ORDER BY catalog_name, namespace, property_key)), '')
   FROM public.iceberg_namespace_properties WHERE %(c)s)
 || '/' || (SELECT coalesce(max(seq), 0) FROM skade.commit_log WHERE %(c)s)""" % {"c": cond}


def detail_sql(cond):
    return ("SELECT 'table ' || catalog_name || ' ' || table_namespace || '.' || table_name || ' ' || "
            "coalesce(iceberg_type, '') || ' ' || coalesce(metadata_location, '') FROM public.iceberg_tables "
            "WHERE %(c)s UNION ALL SELECT 'property ' || catalog_name || ' ' || namespace || ' ' || property_key "
            "|| '=' || coalesce(property_value, '') FROM public.iceberg_namespace_properties WHERE %(c)s "
            "UNION ALL (SELECT 'log ' || seq || ' ' || op || ' ' || table_namespace || '.' || table_name "
            "FROM skade.commit_log WHERE %(c)s ORDER BY seq DESC LIMIT 3)") % {"c": cond}


class Lane:
    """A catalog of its own: its corpus, write lock and state (checked or not)."""

    def __init__(self, name, catalog, cond, check):
        self.name, self.catalog, self.cond, self.check = name, catalog, cond, check
        self.rw = RWLock()
        self.state = self.seed_state = None
        self.detail = []
        self.bad_utf8 = False
        self.reseeded = 0
        self.corpus = self.seed_requests = None



# ------------------------------------------------------------- HTTP client
class Closed(Exception):
    pass


class Hang(Exception):
    pass


class Resp:
    __slots__ = ("status", "reason", "headers", "body", "raw")

    def header(self, name):
        name = name.lower()
        for k, v in self.headers:
            if k.lower() == name:
                return v
        return None


def read_response(sock, state, deadline, head):
    """One response from sock (state: {'buf': bytes}); Closed or Hang otherwise."""
    buf = state["buf"]

    def more():
        nonlocal buf
        left = deadline - time.monotonic()
        if left <= 0:
            raise Hang()
        sock.settimeout(left)
        try:
            c = sock.recv(262144)
        except socket.timeout:
            raise Hang()
        except OSError:
            raise Closed(buf)
        if not c:
            raise Closed(buf)
        buf += c

    while b"\r\n\r\n" not in buf:
        more()
    end = buf.index(b"\r\n\r\n")
    lines = buf[:end].split(b"\r\n")
    r = Resp()
    parts = lines[0].split(b" ", 2)
    try:
        r.status = int(parts[1])
    except (IndexError, ValueError):
        r.status = -1
    r.reason = parts[2].decode("latin-1") if len(parts) > 2 else ""
    r.headers = []
    for ln in lines[1:]:
        k, _, v = ln.partition(b":")
        r.headers.append((k.decode("latin-1").strip(), v.decode("latin-1").strip()))
    rest = buf[end + 4:]
    head_bytes = buf[:end + 4]
    buf = rest
    te = (r.header("Transfer-Encoding") or "").lower()
    cl = r.header("Content-Length")
    if head or r.status in (204, 304) or 100 <= r.status < 200:
        body = b""
    elif "chunked" in te:
        body = b""
        while True:
            while b"\r\n" not in buf:
                more()
            i = buf.index(b"\r\n")
            size = int(buf[:i].split(b";")[0] or b"0", 16)
            while len(buf) < i + 2 + size + 2:
                more()
            body += buf[i + 2:i + 2 + size]
            buf = buf[i + 2 + size + 2:]
            if size == 0:
                break
    elif cl is not None:
        n = int(cl)
        while len(buf) < n:
            more()
        body, buf = buf[:n], buf[n:]
    else:       # until close
        try:
            while True:
                more()
        except Closed:
            pass
        body, buf = buf, b""
    state["buf"] = buf
    r.body = body
    r.raw = head_bytes + body
    return r


class Conn:
    """A keep-alive connection to the REST port."""

    def __init__(self, port):
        self.port = port
        self.sock = None
        self.state = {"buf": b""}
        self.used = 0

    def open(self):
        self.close()
        self.sock = socket.create_connection((HOST, self.port), timeout=10)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.state = {"buf": b""}
        self.used = 0

    def close(self):
        if self.sock:
            try:
                self.sock.close()
            except OSError:
                pass
        self.sock = None

    def exchange(self, data, heads, timeout, keep=True):
        """Send data, read len(heads) responses (heads: one bool per request: HEAD?).
        Returns (responses, outcome) with outcome 'ok', 'closed' or 'hang'."""
        for attempt in (0, 1):
            fresh = self.sock is None or not keep
            if fresh:
                self.open()
            try:
                self.sock.sendall(data)
            except OSError:
                if not fresh and attempt == 0:
                    self.close()
                    continue
                return [], "closed"
            self.used += 1
            out = []
            deadline = time.monotonic() + timeout
            try:
                for h in heads:
                    r = read_response(self.sock, self.state, deadline, h)
                    while 100 <= r.status < 200:        # 100 Continue: the answer follows
                        r = read_response(self.sock, self.state, deadline, h)
                    out.append(r)
            except Closed as e:
                self.close()
                if not out and not fresh and attempt == 0 and not e.args[0]:
                    continue    # the server closed the idle connection first: resend
                return out, "closed"
            except Hang:
                self.close()
                return out, "hang"
            except (ValueError, IndexError):
                self.close()
                return out, "garbled"
            if not keep or any((r.header("Connection") or "").lower() == "close" for r in out):
                self.close()
            return out, "ok"
        return [], "closed"


# ---------------------------------------------------------------- JSON text
class Raw:
    """JSON text emitted as it is (bytes)."""
    __slots__ = ("b",)

    def __init__(self, b):
        self.b = b if isinstance(b, bytes) else b.encode()


class Dup:
    """A JSON object as a list of pairs (duplicate keys allowed)."""
    __slots__ = ("pairs",)

    def __init__(self, pairs):
        self.pairs = pairs


def emit(v, out):
    if isinstance(v, Raw):
        out.append(v.b)
    elif isinstance(v, Dup):
        out.append(b"{")
        for i, (k, x) in enumerate(v.pairs):
            if i:
                out.append(b",")
            emit(k, out)
            out.append(b":")
            emit(x, out)
        out.append(b"}")
    elif isinstance(v, dict):
        emit(Dup(list(v.items())), out)
    elif isinstance(v, list):
        out.append(b"[")
        for i, x in enumerate(v):
            if i:
                out.append(b",")
            emit(x, out)
        out.append(b"]")
    else:
        out.append(json.dumps(v).encode())


def dumps(v):
    out = []
    emit(v, out)
    return b"".join(out)


# --------------------------------------------------------------- the corpus
def q(s):
    """Percent-encode a path segment (as clients do: everything but unreserved)."""
    out = []
    for b in s.encode("utf-8", "surrogatepass") if isinstance(s, str) else s:
        c = chr(b)
        out.append(c if c.isalnum() and b < 128 or c in "-._~" else "%%%02X" % b)
    return "".join(out)


def ns_seg(levels):
    return "%1F".join(q(x) for x in levels)


SCHEMA = {"type": "struct", "schema-id": 0, "fields": [
    {"id": 1, "name": "id", "required": True, "type": "long"},
    {"id": 2, "name": "data", "required": False, "type": "string"},
    {"id": 3, "name": "ts", "required": False, "type": "timestamptz"},
    {"id": 4, "name": "amount", "required": False, "type": "decimal(10, 2)"},
    {"id": 5, "name": "tags", "required": False, "type": {"type": "list", "element-id": 6, "element": "string",
                                                             "element-required": False}},
    {"id": 7, "name": "attrs", "required": False, "type": {"type": "map", "key-id": 8, "key": "string",
                                                              "value-id": 9, "value": "int", "value-required": False}},
    {"id": 10, "name": "loc", "required": False, "type": {"type": "struct", "fields": [
        {"id": 11, "name": "lat", "required": False, "type": "double"},
        {"id": 12, "name": "lon", "required": False, "type": "double"}]}}]}
SCHEMA2 = {"type": "struct", "schema-id": 1, "identifier-field-ids": [1], "fields": [
    {"id": 1, "name": "id", "required": True, "type": "long"},
    {"id": 2, "name": "data", "required": False, "type": "string"},
    {"id": 13, "name": "extra", "required": False, "type": "boolean", "doc": "added"}]}
SPEC = {"spec-id": 0, "fields": [
    {"source-id": 1, "field-id": 1000, "name": "id_bucket", "transform": "bucket[16]"},
    {"source-id": 3, "field-id": 1001, "name": "ts_day", "transform": "day"}]}
ORDER = {"order-id": 1, "fields": [{"source-id": 1, "transform": "identity", "direction": "asc",
                                    "null-order": "nulls-first"}]}
VIEW_SCHEMA = {"type": "struct", "schema-id": 0, "fields": [
    {"id": 1, "name": "id", "required": False, "type": "long"}]}


def view_version(ns, vid=1):
    return {"version-id": vid, "timestamp-ms": 1700000000000, "schema-id": 0,
            "summary": {"engine-name": "spark", "engine-version": "3.5.0"},
            "representations": [{"type": "sql", "sql": "SELECT id FROM t1", "dialect": "spark"}],
            "default-namespace": ns}


FILTERS = [
    True, {"type": "eq", "term": "id", "value": 1},
    {"type": "and", "left": {"type": "gt", "term": "id", "value": 0},
     "right": {"type": "not", "child": {"type": "is-null", "term": "data"}}},
    {"type": "or", "left": {"type": "in", "term": "id", "values": [1, 2, 3]},
     "right": {"type": "starts-with", "term": "data", "value": "ab"}},
    {"type": "lt-eq", "term": {"type": "transform", "transform": "bucket[16]", "term": "id"}, "value": 3},
    {"type": "not-nan", "term": "loc.lat"}, {"type": "true"}, {"type": "false"},
]


class Case:
    """One request: method, path (encoded), query, headers (without Host), body."""
    __slots__ = ("route", "method", "segs", "ns_i", "name_i", "query", "headers", "body", "change")

    def __init__(self, route, method, segs, body=None, query=None, ns_i=None, name_i=None, headers=None,
                 change=None):
        self.route, self.method, self.segs = route, method, segs
        self.body, self.query = body, query or []
        self.ns_i, self.name_i = ns_i, name_i
        self.headers = headers or []
        self.change = (method not in ("GET", "HEAD") and route not in
                       ("report_metrics", "plan_scan", "fetch_tasks", "cancel_plan")) if change is None else change

    def clone(self):
        c = copy.copy(self)
        c.segs = list(self.segs)
        c.query = list(self.query)
        c.headers = list(self.headers)
        c.body = copy.deepcopy(self.body)
        return c


def build_corpus(prefix, seeds):
    """A request of every route of src/rest/rest_routes.c's routes[] (several for most)."""
    P = q(prefix)
    C = []

    def add(route, method, rest, body=None, query=None, ns_i=None, name_i=None, **kw):
        segs = ["v1", P] + rest
        C.append(Case(route, method, segs, body, query,
                      None if ns_i is None else ns_i + 2, None if name_i is None else name_i + 2, **kw))

    ns, sub = seeds["ns"], seeds["sub"]
    N, S = ns_seg(ns), ns_seg(sub)
    C.append(Case("config", "GET", ["v1", "config"], query=[("warehouse", prefix)]))
    C.append(Case("config", "GET", ["v1", "config"]))
    add("list_namespaces", "GET", ["namespaces"])
    add("list_namespaces", "GET", ["namespaces"], query=[("parent", "%1F".join(ns)), ("pageSize", "1")])
    add("list_namespaces", "GET", ["namespaces"], query=[("pageToken", ns[0]), ("pageSize", "10")])
    add("create_namespace", "POST", ["namespaces"], {"namespace": ns + ["made"], "properties": {"owner": "fuzz"}})
    add("create_namespace", "POST", ["namespaces"], {"namespace": ["fzn"]})
    add("load_namespace", "GET", ["namespaces", N], ns_i=1)
    add("load_namespace", "GET", ["namespaces", S], ns_i=1)
    add("namespace_exists", "HEAD", ["namespaces", N], ns_i=1)
    add("drop_namespace", "DELETE", ["namespaces", ns_seg(["fzempty"])], ns_i=1)
    add("update_properties", "POST", ["namespaces", N, "properties"],
        {"removals": ["gone"], "updates": {"owner": "fuzz", "location": seeds["wh"] + "/fz"}}, ns_i=1)
    add("update_properties", "POST", ["namespaces", S, "properties"], {"updates": {"k": "v"}}, ns_i=1)
    add("list_tables", "GET", ["namespaces", N, "tables"], ns_i=1)
    add("list_tables", "GET", ["namespaces", N, "tables"], query=[("pageSize", "1"), ("pageToken", "t1")], ns_i=1)
    add("create_table", "POST", ["namespaces", N, "tables"],
        {"name": "made", "schema": SCHEMA, "partition-spec": SPEC, "write-order": ORDER,
         "properties": {"format-version": "2", "write.format.default": "parquet"}}, ns_i=1)
    add("create_table", "POST", ["namespaces", N, "tables"],
        {"name": "staged", "schema": SCHEMA2, "stage-create": True, "location": seeds["wh"] + "/fz/staged"}, ns_i=1)
    add("create_table", "POST", ["namespaces", S, "tables"], {"name": "plain", "schema": SCHEMA2}, ns_i=1)
    for t in ("t1", "t2"):
        add("load_table", "GET", ["namespaces", N, "tables", t], ns_i=1, name_i=3)
        add("load_table", "GET", ["namespaces", N, "tables", t], query=[("snapshots", "refs")], ns_i=1, name_i=3,
            headers=[("Accept-Encoding", "gzip")])
        add("table_exists", "HEAD", ["namespaces", N, "tables", t], ns_i=1, name_i=3)
    add("load_table", "GET", ["namespaces", N, "tables", "t1"], ns_i=1, name_i=3,
        headers=[("If-None-Match", seeds.get("etag", '"x"'))])
    u1 = seeds["uuid"]["t1"]
    add("commit_table", "POST", ["namespaces", N, "tables", "t1"],
        {"identifier": {"namespace": ns, "name": "t1"},
         "requirements": [{"type": "assert-table-uuid", "uuid": u1},
                          {"type": "assert-current-schema-id", "current-schema-id": 0}],
         "updates": [{"action": "set-properties", "updates": {"fuzz.k": "v"}},
                     {"action": "remove-properties", "removals": ["fuzz.gone"]}]}, ns_i=1, name_i=3)
    add("commit_table", "POST", ["namespaces", N, "tables", "t2"],
        {"requirements": [{"type": "assert-table-uuid", "uuid": seeds["uuid"]["t2"]},
                          {"type": "assert-last-assigned-field-id", "last-assigned-field-id": 13},
                          {"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": None},
                          {"type": "assert-default-spec-id", "default-spec-id": 0},
                          {"type": "assert-default-sort-order-id", "default-sort-order-id": 0},
                          {"type": "assert-last-assigned-partition-id", "last-assigned-partition-id": 999}],
         "updates": [{"action": "add-schema", "schema": dict(SCHEMA2, **{"schema-id": 2}), "last-column-id": 13},
                     {"action": "set-current-schema", "schema-id": -1},
                     {"action": "add-spec", "spec": {"spec-id": 1, "fields": [
                         {"source-id": 1, "field-id": 1000, "name": "id_trunc", "transform": "truncate[4]"}]}},
                     {"action": "set-default-spec", "spec-id": -1},
                     {"action": "add-sort-order", "sort-order": ORDER},
                     {"action": "set-default-sort-order", "sort-order-id": -1},
                     {"action": "set-location", "location": seeds["wh"] + "/fz/t2"},
                     {"action": "upgrade-format-version", "format-version": 2}]}, ns_i=1, name_i=3)
    add("commit_table", "POST", ["namespaces", N, "tables", "t3"],
        {"requirements": [{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": None}],
         "updates": [{"action": "add-snapshot", "snapshot": {
             "snapshot-id": 4242, "sequence-number": 1, "timestamp-ms": 1700000000000,
             "manifest-list": seeds["wh"] + "/fz/t3/metadata/snap-4242.avro",
             "summary": {"operation": "append", "added-data-files": "1"}, "schema-id": 0}},
             {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": 4242},
             {"action": "remove-snapshots", "snapshot-ids": [1]},
             {"action": "remove-snapshot-ref", "ref-name": "tag1"},
             {"action": "set-statistics", "snapshot-id": 4242, "statistics": {
                 "snapshot-id": 4242, "statistics-path": "/x.puffin", "file-size-in-bytes": 1,
                 "file-footer-size-in-bytes": 1, "blob-metadata": []}},
             {"action": "remove-statistics", "snapshot-id": 4242},
             {"action": "assign-uuid", "uuid": u1}]}, ns_i=1, name_i=3)
    add("commit_table", "POST", ["namespaces", N, "tables", "newt"],
        {"requirements": [{"type": "assert-create"}],
         "updates": [{"action": "assign-uuid", "uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1"},
                     {"action": "upgrade-format-version", "format-version": 2},
                     {"action": "add-schema", "schema": SCHEMA2, "last-column-id": 13},
                     {"action": "set-current-schema", "schema-id": -1},
                     {"action": "add-spec", "spec": {"spec-id": 0, "fields": []}},
                     {"action": "set-default-spec", "spec-id": -1},
                     {"action": "add-sort-order", "sort-order": {"order-id": 0, "fields": []}},
                     {"action": "set-default-sort-order", "sort-order-id": -1},
                     {"action": "set-location", "location": seeds["wh"] + "/fz/newt"},
                     {"action": "set-properties", "updates": {}}]}, ns_i=1, name_i=3)
    add("drop_table", "DELETE", ["namespaces", N, "tables", "made"], ns_i=1, name_i=3)
    add("drop_table", "DELETE", ["namespaces", N, "tables", "made"], query=[("purgeRequested", "true")],
        ns_i=1, name_i=3)
    add("register_table", "POST", ["namespaces", N, "register"],
        {"name": "reg", "metadata-location": seeds["loc"]["t1"]}, ns_i=1)
    add("register_table", "POST", ["namespaces", N, "register"],
        {"name": "reg2", "metadata-location": seeds["loc"]["t2"], "overwrite": False}, ns_i=1)
    add("report_metrics", "POST", ["namespaces", N, "tables", "t1", "metrics"],
        {"report-type": "scan-report", "table-name": ".".join(ns) + ".t1", "snapshot-id": 1,
         "filter": True, "schema-id": 0, "projected-field-ids": [1, 2], "projected-field-names": ["id", "data"],
         "metrics": {"total-planning-duration": {"count": 1, "time-unit": "nanoseconds", "total-duration": 5},
                     "result-data-files": {"unit": "count", "value": 0}}}, ns_i=1, name_i=3)
    add("report_metrics", "POST", ["namespaces", N, "tables", "t1", "metrics"],
        {"report-type": "commit-report", "table-name": "t1", "snapshot-id": 1, "sequence-number": 1,
         "operation": "append", "metrics": {}}, ns_i=1, name_i=3)
    add("rename_table", "POST", ["tables", "rename"],
        {"source": {"namespace": ns, "name": "t3"}, "destination": {"namespace": sub, "name": "t3b"}})
    add("rename_table", "POST", ["tables", "rename"],
        {"source": {"namespace": ns, "name": "t1"}, "destination": {"namespace": ns, "name": "v1"}})
    add("commit_transaction", "POST", ["transactions", "commit"],
        {"table-changes": [
            {"identifier": {"namespace": ns, "name": "t1"},
             "requirements": [{"type": "assert-table-uuid", "uuid": u1}],
             "updates": [{"action": "set-properties", "updates": {"txn": "1"}}]},
            {"identifier": {"namespace": ns, "name": "t2"}, "requirements": [],
             "updates": [{"action": "set-properties", "updates": {"txn": "1"}}]}]})
    add("list_views", "GET", ["namespaces", N, "views"], ns_i=1)
    add("list_views", "GET", ["namespaces", N, "views"], query=[("pageSize", "1")], ns_i=1)
    add("create_view", "POST", ["namespaces", N, "views"],
        {"name": "vmade", "schema": VIEW_SCHEMA, "view-version": view_version(ns),
         "properties": {"comment": "fuzz"}}, ns_i=1)
    add("create_view", "POST", ["namespaces", N, "views"],
        {"name": "vloc", "location": seeds["wh"] + "/fz/vloc", "schema": VIEW_SCHEMA,
         "view-version": view_version(ns), "properties": {}}, ns_i=1)
    add("load_view", "GET", ["namespaces", N, "views", "v1"], ns_i=1, name_i=3)
    add("view_exists", "HEAD", ["namespaces", N, "views", "v1"], ns_i=1, name_i=3)
    add("replace_view", "POST", ["namespaces", N, "views", "v1"],
        {"identifier": {"namespace": ns, "name": "v1"},
         "requirements": [{"type": "assert-view-uuid", "uuid": seeds["uuid"]["v1"]}],
         "updates": [{"action": "set-properties", "updates": {"k": "v"}},
                     {"action": "remove-properties", "removals": ["gone"]},
                     {"action": "add-schema", "schema": dict(VIEW_SCHEMA, **{"schema-id": 1}), "last-column-id": 1},
                     {"action": "add-view-version", "view-version": dict(view_version(ns, 2), **{"schema-id": -1})},
                     {"action": "set-current-view-version", "view-version-id": -1},
                     {"action": "set-location", "location": seeds["wh"] + "/fz/v1"}]}, ns_i=1, name_i=3)
    add("drop_view", "DELETE", ["namespaces", N, "views", "vmade"], ns_i=1, name_i=3)
    add("rename_view", "POST", ["views", "rename"],
        {"source": {"namespace": ns, "name": "v2"}, "destination": {"namespace": sub, "name": "v2b"}})
    add("register_view", "POST", ["namespaces", N, "register-view"],
        {"name": "vreg", "metadata-location": seeds["loc"]["v1"]}, ns_i=1)
    for f in FILTERS[:4]:
        add("plan_scan", "POST", ["namespaces", N, "tables", "t1", "plan"],
            {"filter": f, "select": ["id", "data"], "case-sensitive": True, "use-snapshot-schema": False}, ns_i=1,
            name_i=3)
    add("plan_scan", "POST", ["namespaces", N, "tables", "t2", "plan"],
        {"snapshot-id": 1, "stats-fields": ["id"], "min-rows-requested": 10}, ns_i=1, name_i=3)
    add("plan_scan", "POST", ["namespaces", N, "tables", "t1", "plan"],
        {"start-snapshot-id": 1, "end-snapshot-id": 2}, ns_i=1, name_i=3)
    add("fetch_plan", "GET", ["namespaces", N, "tables", "t1", "plan", "plan-1"], ns_i=1, name_i=3)
    add("cancel_plan", "DELETE", ["namespaces", N, "tables", "t1", "plan", "plan-1"], ns_i=1, name_i=3)
    add("fetch_tasks", "POST", ["namespaces", N, "tables", "t1", "tasks"], {"plan-task": "task-1"},
        ns_i=1, name_i=3)
    return C


# ------------------------------------------------------------------ mutation
ODD_NAMES = [
    "", ".", "..", "...", "a.b", "%00", "a%00b", "%00%00", "%FF", "a%FFb", "%C0%AE", "%C0%AF", "%C0%80",
    "%E0%80%AF", "%F0%80%80%AF", "%ED%A0%80", "%F4%90%80%80", "%2F", "a%2Fb", "%2E%2E", "%2e", "%1F", "a%1Fb",
    "%1F%1F", "%1Fa", "a%1F", "%", "%G1", "%2", "%%", "%25", "%25%30%30", "+", "%20", "a%20b", "%09", "%0D%0A",
    "%27%20OR%201%3D1--", "%5C", "%22", "%7B%7D", "_%25", "%E2%80%AE", "%F0%9F%98%80", "%C3%A9t%C3%A9",
    "x" * 255, "x" * 256, "x" * 10000, "%C3%A9" * 128, "%C3%A9" * 300, "a" * 1000, "t1", "v1", "t2",
    "fz", "fzsub", "made", "%D8%00", "%7F", "%01", "%1B%5B31m", "null", "undefined", "-1", "0",
]
BIG_NUMS = [b"1e400", b"-1e400", b"123456789012345678901234567890123", b"9223372036854775808",
            b"-9223372036854775809", b"18446744073709551616", b"1E-400", b"0.0000000000000000000000001",
            b"2147483648", b"-2147483649", b"1" + b"0" * 5000, b"-0", b"0e0", b"1.5", b"NaN", b"Infinity",
            b"00012", b"0x10", b"+1", b".5", b"1."]
ODD_STRINGS = [
    b'""', b'"\\u0000"', b'"a\\u0000b"', b'"\\ud800"', b'"\\udfff\\ud800"', b'"\xff\xfe"', b'"\xc0\xae"',
    b'"\xed\xa0\x80"', b'"\xf4\x90\x80\x80"', b'"\x00"', b'"\\x41"', b'"\\"', b'"\x1f"', b'"a.b"', b'"..'
    b'/..' b'/etc/passwd"', b'"file:///etc/passwd"', b'"s3://bucket/x"', b'"/dev/zero"', b'"%00"',
    b'"\\u001f"', b'"' + b"x" * 70000 + b'"', b'"' + b"\xc3\xa9" * 200 + b'"', b'"\xe2\x80\xae"',
    b'"\'; DROP TABLE x; --"', b'"\\\\"', b'"\\/"', b'"\\uFFFF"', b'"\\uFEFF"',
]


def deep(rng, limit):
    n = rng.choice([100, 1000, 5000, 20000, 100000, rng.randint(1, limit)])
    n = min(n, limit)
    kind = rng.randrange(4)
    if kind == 0:
        return Raw(b"[" * n + b"]" * n)
    if kind == 1:
        return Raw(b'{"a":' * n + b"1" + b"}" * n)
    if kind == 2:
        return Raw(b"[" * n)           # unbalanced
    return Raw(b'{"type":"not","child":' * n + b"true" + b"}" * n)


class Mutator:
    def __init__(self, rng, pool, corpus, max_depth):
        self.rng, self.pool, self.corpus, self.max_depth = rng, pool, corpus, max_depth

    def value(self):
        r, k = self.rng, self.rng.randrange(14)
        if k == 0:
            return r.choice([None, True, False, 0, -1, 1, "", [], {}, "null", "true", "0"])
        if k == 1:
            return Raw(r.choice(BIG_NUMS))
        if k == 2:
            return Raw(r.choice(ODD_STRINGS))
        if k == 3:
            return deep(r, self.max_depth)
        if k == 4:
            return "x" * r.choice([256, 1001, 4096, 65536])
        if k == 5:
            return [self.value() for _ in range(r.randrange(4))]
        if k == 6:
            return {r.choice(["type", "action", "name", "namespace", "x", ""]): self.value()}
        if k == 7:
            return [0] * r.choice([1000, 50000])
        if k == 8:
            return {str(i): i for i in range(r.choice([100, 5000]))}
        return copy.deepcopy(r.choice(self.pool))

    def json(self, body):
        """1-3 structural mutations of body (or a raw body)."""
        r = self.rng
        if r.random() < 0.12:
            text = dumps(body)
            k = r.randrange(9)
            if k == 0:
                return text[:r.randrange(len(text) + 1)]
            if k == 1:
                return text + r.choice([b"x", b"}", b",", b"\x00", b" " * 1000, b"{}"])
            if k == 2:
                return r.choice([b"", b"null", b"[]", b"{}", b"1", b'"s"', b"true", b"\xef\xbb\xbf{}", b" ",
                                 b"{,}", b"[,]", b"{\"a\"}", b"{\"a\":}", b"\xff", b"{'a':1}"])
            if k == 3:
                return deep(r, self.max_depth).b
            if k == 4:
                i = r.randrange(len(text) + 1)
                return text[:i] + bytes([r.randrange(256)]) + text[i:]
            if k == 5 and text:
                i = r.randrange(len(text))
                return text[:i] + bytes([r.randrange(256)]) + text[i + 1:]
            if k == 6:
                return b"\xef\xbb\xbf" + text
            if k == 7:
                return text.replace(b'"', b"'", r.randrange(1, 4))
            return text * 2
        body = copy.deepcopy(body)
        for _ in range(r.randint(1, 3)):
            body = self.one(body)
        return dumps(body)

    def nodes(self, v, path, out):
        out.append(path)
        if isinstance(v, dict):
            for k in v:
                self.nodes(v[k], path + (k,), out)
        elif isinstance(v, list):
            for i, x in enumerate(v):
                self.nodes(x, path + (i,), out)

    def one(self, body):
        r = self.rng
        paths = []
        self.nodes(body, (), paths)
        p = r.choice(paths)
        if not p:
            return self.value() if r.random() < 0.3 else body
        parent = body
        for k in p[:-1]:
            parent = parent[k]
        key = p[-1]
        if not isinstance(parent, (dict, list)):
            return body
        k = r.randrange(8)
        if k <= 2:
            parent[key] = self.value()
        elif k == 3:
            del parent[key]
        elif k == 4 and isinstance(parent, dict):
            # a duplicate key: rewrite the parent as pairs (in its own parent)
            pairs = list(parent.items()) + [(key, self.value())]
            r.shuffle(pairs)
            self.replace(body, p[:-1], Dup(pairs))
            if not p[:-1]:
                return Dup(pairs)
        elif k == 5 and isinstance(parent, dict):
            parent[r.choice(["x", "", "extra-" + str(r.randrange(9)), "\u0000", "type", "action"])] = self.value()
        elif k == 6 and isinstance(parent, list):
            parent.append(copy.deepcopy(parent[key]) if r.random() < 0.5 else self.value())
            if r.random() < 0.1:
                parent.extend([copy.deepcopy(parent[key])] * r.choice([10, 1000]))
        else:
            # a value of another request at this place
            parent[key] = copy.deepcopy(r.choice(self.pool))
        return body

    def replace(self, body, path, new):
        if not path:
            return
        parent = body
        for k in path[:-1]:
            parent = parent[k]
        if isinstance(parent, (dict, list)):
            parent[path[-1]] = new


def pool_of(corpus):
    pool = []

    def walk(v):
        pool.append(v)
        if isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    for c in corpus:
        if c.body is not None:
            walk(c.body)
    return [copy.deepcopy(v) for v in pool]


# ------------------------------------------------------------------- a test
class Test:
    """The bytes sent and what to expect of them."""
    __slots__ = ("data", "heads", "case", "raw", "note", "keep", "change", "slow", "early_close", "lane")

    def __init__(self, data, heads, case, raw=False, note="", keep=True, change=None, slow=False):
        self.data, self.heads, self.case, self.raw, self.note = data, heads, case, raw, note
        self.keep, self.slow, self.early_close = keep, slow, False
        self.lane = "slow" if slow else "main"
        self.change = case.change if change is None else change


class Gen:
    def __init__(self, rng, corpus, pool, tokens, port, max_depth, cut_corpus=None):
        self.rng, self.corpus, self.tokens, self.port = rng, corpus, tokens, port
        self.cut_corpus = cut_corpus
        self.mut = Mutator(rng, pool, corpus, max_depth)

    def host(self):
        return "%s:%d" % (HOST, self.port)

    def target(self, c):
        t = "/" + "/".join(c.segs)
        if c.query:
            t += "?" + "&".join("%s=%s" % (q(k), q(v)) if v is not None else q(k) for k, v in c.query)
        return t

    def render(self, c, body, auth=True, extra=(), version="HTTP/1.1", host=True, cl=True, method=None):
        lines = ["%s %s %s" % (method or c.method, self.target(c), version)]
        if host:
            lines.append("Host: " + self.host())
        if auth:
            lines.append("Authorization: Bearer " + self.tokens["writer"])
        for k, v in list(c.headers) + list(extra):
            lines.append("%s: %s" % (k, v))
        if body is not None:
            lines.append("Content-Type: application/json")
            if cl:
                lines.append("Content-Length: %d" % len(body))
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace")
        return head + (body or b"")

    def body_of(self, c):
        return dumps(c.body) if c.body is not None else None

    def next(self, slow=False):
        r = self.rng
        c = r.choice(self.corpus).clone()
        if slow:
            # the requests that may keep a connection waiting (the server's idle timeout)
            if r.random() < 0.5:
                t = self.raw(c, r.choice([4, 5, 5, 10]))
                t.slow, t.lane = True, "slow"
                return t
            return self.slow(c)
        x = r.random()
        if x < 0.05:
            return Test(self.render(c, self.body_of(c)), [c.method == "HEAD"], c, note="corpus")
        if x < 0.40 and c.body is not None:
            return Test(self.render(c, self.mut.json(c.body)), [c.method == "HEAD"], c, note="json")
        if x < 0.40:
            x = 0.41
        if x < 0.60:
            return self.path(c)
        if x < 0.72:
            return self.headers(c)
        return self.raw(c)

    # ---- paths
    def path(self, c):
        r = self.rng
        k = r.randrange(10)
        note = "path"
        if k <= 4 and (c.ns_i or c.name_i):
            idx = r.choice([i for i in (c.ns_i, c.name_i) if i])
            name = r.choice(ODD_NAMES)
            if r.random() < 0.3:
                name = "%1F".join(r.choice(ODD_NAMES) for _ in range(r.randint(1, 4)))
            c.segs[idx] = name
            note = "path:name"
        elif k == 5:
            c.query.append((r.choice(["pageSize", "pageToken", "parent", "snapshots", "warehouse",
                                      "purgeRequested", "x", ""]),
                            r.choice(["-1", "0", "99999999999", "abc", "", "1e3", "%00", "\x00", "all",
                                      "refs", "none", "true", "TRUE", "x" * 5000, "1\x1f2", "fz.t1", None])))
            note = "path:query"
        elif k == 6:
            i = r.randrange(len(c.segs) + 1)
            c.segs.insert(i, r.choice(["", ".", "..", "v1", "%2E%2E", "x"]))
            note = "path:segment"
        elif k == 7 and len(c.segs) > 1:
            del c.segs[r.randrange(len(c.segs))]
            note = "path:segment"
        elif k == 8:
            c.segs[1] = r.choice(ODD_NAMES + ["rest_cat", "", "other"])
            note = "path:prefix"
        else:
            c.segs.append(r.choice(["", "x", "..", "tables", "plan", "%00"]))
            note = "path:segment"
        body = self.body_of(c) if r.random() < 0.8 else (self.mut.json(c.body) if c.body is not None else None)
        return Test(self.render(c, body), [c.method == "HEAD"], c, note=note,
                    change=c.change or c.method not in ("GET", "HEAD"))

    # ---- headers (well-formed HTTP)
    def headers(self, c):
        r = self.rng
        body = self.body_of(c)
        k = r.randrange(9)
        extra, auth, note = [], True, "header"
        if k == 0:
            auth = False
            note = "header:noauth"
        elif k == 1:
            auth = False
            extra.append(("Authorization", r.choice([
                "Bearer " + self.tokens["reader"], "Bearer ", "Bearer x", "bearer " + self.tokens["writer"],
                "Basic " + base64.b64encode(b"rest_writer:" + self.tokens["writer"].encode()).decode(),
                "Basic " + base64.b64encode(b"rest_reader:" + self.tokens["writer"].encode()).decode(),
                "Basic " + base64.b64encode(b":" + self.tokens["writer"].encode()).decode(),
                "Basic " + base64.b64encode(b"nocolon").decode(), "Basic ====", "Basic !!!", "Basic ",
                "Basic " + "A" * 20001, "Bearer " + "A" * 20000, "Negotiate x", "", "Bearer \x01",
                "Bearer " + self.tokens["writer"] + " ", "Bearer  " + self.tokens["writer"]])))
            note = "header:auth"
        elif k == 2:
            extra.append(("If-None-Match", r.choice(['"x"', "*", "W/", '"', "", ",", ",,,,", 'W/"' + "a" * 40,
                                                      '"' + "0" * 32 + '"', "-", '"-gzip', "x" * 8000,
                                                      " , W/\"\" ,"])))
            note = "header:etag"
        elif k == 3:
            extra.append(("Idempotency-Key", r.choice(["k1", "k2", "", "x" * 5000, "\x01", "same",
                                                        "%00", "0193e2a9-1f6c-7000-8000-000000000001"])))
            note = "header:idempotency"
        elif k == 4:
            extra.append(("Accept-Encoding", r.choice(["gzip", "gzip;q=0", "gzip;q=", "gzip;q=abc", "gzip ;",
                                                        "deflate, gzip;q=0.5", "*", "gzip;q=1e400", "gzip" * 1000,
                                                        "identity;q=0", "br"])))
            note = "header:encoding"
        elif k == 5:
            extra.append(("Content-Type", r.choice(["text/plain", "", "application/x-www-form-urlencoded",
                                                     "multipart/form-data; boundary=x", "application/json; charset=latin1"])))
            note = "header:ctype"
        elif k == 6:
            # duplicates of the headers the server reads
            name = r.choice(["Authorization", "If-None-Match", "Idempotency-Key", "Accept-Encoding"])
            extra.append((name, "Bearer x" if name == "Authorization" else "x"))
            note = "header:duplicate"
        elif k == 7:
            extra.append(("X-" + "a" * r.choice([10, 1000]), "b" * r.choice([10, 8000, 30000])))
            note = "header:huge"
        else:
            extra.extend(("X-Many-%d" % i, "v") for i in range(r.choice([50, 500, 3000])))
            note = "header:many"
        return Test(self.render(c, body, auth=auth, extra=extra), [c.method == "HEAD"], c, note=note,
                    raw=note in ("header:huge", "header:many"))

    # ---- raw HTTP
    def raw(self, c, k=None):
        r = self.rng
        body = self.body_of(c) if r.random() < 0.7 or c.body is None else self.mut.json(c.body)
        if k is None:   # (4, 5, 10: the slow lane's)
            k = r.choice([0, 1, 2, 3, 6, 7, 8, 9] * 2 + [11])
        change = True
        if k == 0:      # the method
            m = r.choice(["get", "PUT", "PATCH", "OPTIONS", "TRACE", "CONNECT", "POSTX", "", "G\x00T",
                          "\xff", "X" * 5000, "GET GET", "PRI", "HEAD", "DELETE", "POST"])
            data = self.render(c, body, method=m)
            return Test(data, [m == "HEAD"], c, raw=True, note="raw:method", keep=False, change=True)
        if k == 1:      # the version
            v = r.choice(["HTTP/1.0", "HTTP/2.0", "HTTP/0.9", "HTTP/1.2", "HTTP/9.9", "http/1.1", "HTTP/1.1x",
                          "HTTP/", "", "HTTP/1.1 extra", "HTTP/01.1", "HTTP/1.10", "ICE/1.0"])
            return Test(self.render(c, body, version=v), [c.method == "HEAD"], c, raw=True, note="raw:version",
                        keep=False)
        if k == 2:      # the target
            t = r.choice(["*", "", "v1/config", "http://%s/v1/config" % self.host(), "//v1/config",
                          "/v1/../v1/config", "/v1/./config", "/v1/config/", "/v1/config?", "/v1/config#x",
                          "/v1/config?warehouse", "/v1/config?warehouse=%00", "/v1/config?warehouse=%FF",
                          "/v1/config?=&&=", "/v1/config?warehouse=" + "x" * 20000,
                          "/" + "a/" * 5000, "/v1/" + "%00" * 1000, "/\x00", "/v1/config\x7f", "/ /",
                          "/v1/" + "x" * r.choice([1000, 8000, 40000, 100000]), "/v1//namespaces",
                          "/v1/" + c.segs[1] + "//tables/rename", "/%76%31/config", "/V1/config",
                          "/v1/%2e%2e/v1/config", "/v1/config;x", "/v1/config%3Fwarehouse=x"])
            head = "%s %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n\r\n" % (
                c.method, t, self.host(), self.tokens["writer"])
            return Test(head.encode("latin-1"), [c.method == "HEAD"], c, raw=True, note="raw:target", keep=False)
        if k == 3:      # no or odd Host
            h = r.choice([None, "", "x" * 9000, "a b", "\x00", "127.0.0.1:0"])
            extra = [] if h is None else [("Host", h)]
            return Test(self.render(c, body, host=False, extra=extra), [c.method == "HEAD"], c, raw=True,
                        note="raw:host", keep=False)
        if k == 4:      # Content-Length
            b = body if body is not None else b"{}"
            n = len(b)
            cl = r.choice(["-1", "-0", "0", "+%d" % n, " %d" % n, "%d " % n, "0x10", "1e3", "abc", "",
                           "99999999999999999999999", "18446744073709551615", "18446744073709551616",
                           "9223372036854775807", str(n) + ", " + str(n), "%d" % (n - 1 if n else 0),
                           "%d\x00" % n])
            extra = [("Content-Length", cl)]
            if r.random() < 0.2:
                extra.append(("Content-Length", str(n + 1)))
            data = self.render(c, None, extra=extra) + b
            return Test(data, [c.method == "HEAD"], c, raw=True, note="raw:content-length", keep=False)
        if k == 5:      # chunked
            b = body if body is not None else b"{}"
            parts = []
            i = 0
            while i < len(b):
                j = min(len(b), i + r.choice([1, 7, 100, 4096]))
                parts.append(b"%x\r\n%s\r\n" % (j - i, b[i:j]))
                i = j
            if len(parts) > 200:
                parts = [b"%x\r\n%s\r\n" % (len(b), b)]
            bad = r.randrange(12)
            if bad == 0 and parts:
                parts[0] = b"zz\r\n" + parts[0].split(b"\r\n", 1)[1]
            elif bad == 1:
                parts.insert(0, b"-1\r\n")
            elif bad == 2:
                parts.insert(0, b"ffffffffffffffffffff\r\nx\r\n")
            elif bad == 3:
                parts.insert(0, b"7fffffffffffffff\r\nx\r\n")
            elif bad == 4:
                parts.insert(0, b"1;ext=\"x\"\r\nx\r\n")
            elif bad == 5 and parts:
                parts[-1] = parts[-1][:-2] + b"XX"
            elif bad == 6:
                parts.insert(0, b"0000000000000000000000001\r\n{\r\n")
            elif bad == 7:
                parts.insert(0, b" 1 \r\n{\r\n")
            elif bad == 8:
                parts.insert(0, b"1\n{\n")
            te = r.choice(["chunked", "chunked", "Chunked", "chunked, chunked", "gzip, chunked", "identity",
                           "chunked ", "xchunked", "gzip"])
            extra = [("Transfer-Encoding", te)]
            if r.random() < 0.25:       # both CL and TE
                extra.append(("Content-Length", str(r.choice([0, 1, len(b)]))))
            tail = b"0\r\n\r\n" if r.random() < 0.9 else b"0\r\nX-Trailer: y\r\n\r\n"
            data = self.render(c, None, extra=extra) + b"".join(parts) + tail
            return Test(data, [c.method == "HEAD"], c, raw=True, note="raw:chunked:%d" % bad, keep=False)
        if k == 6:      # pipelined requests
            n = r.randint(2, 6)
            cs = [c] + [r.choice(self.corpus).clone() for _ in range(n - 1)]
            data = b"".join(self.render(x, self.body_of(x) if r.random() < 0.7 or x.body is None
                                        else self.mut.json(x.body)) for x in cs)
            return Test(data, [x.method == "HEAD" for x in cs], c, raw=True, note="raw:pipelined",
                        change=any(x.change for x in cs))
        if k == 7:      # a body longer than Content-Length: the rest is the next request
            b = body if body is not None else b""
            junk = r.choice([b"GARBAGE", b"\r\n", b"\x00" * 10, b"GET /v1/config HTTP/1.1\r\n\r\n",
                             b"x" * 70000, b"GET /v1/config HTTP/1.1\r\nHost: x\r\n\r\n"])
            data = self.render(c, b) + junk
            return Test(data, [c.method == "HEAD"], c, raw=True, note="raw:extended", keep=False)
        if k == 8:      # odd header syntax
            x = r.choice([b"NoColon\r\n", b": empty-name\r\n", b" folded: x\r\n", b"A:\x00b\r\n",
                          b"A: b\rc\r\n", b"\x80\xff: y\r\n", b"Authorization:Bearer%s\r\n", b"A\tB: c\r\n",
                          b"X: " + b"y" * 70000 + b"\r\n", b"\n", b"X: a\nY: b\r\n"])
            if b"%s" in x:
                x = x % self.tokens["writer"].encode()
            data = self.render(c, body)
            i = data.index(b"\r\n") + 2
            data = data[:i] + x + data[i:]
            return Test(data, [c.method == "HEAD"], c, raw=True, note="raw:header-syntax", keep=False)
        if k == 9:      # bare LF line endings / junk before the request
            data = self.render(c, body)
            if r.random() < 0.5:
                data = data.replace(b"\r\n", b"\n")
            else:
                data = r.choice([b"\r\n", b"\r\n\r\n", b"\x16\x03\x01\x02\x00\x01", b"\x00"]) + data
            return Test(data, [c.method == "HEAD"], c, raw=True, note="raw:framing", keep=False)
        if k == 10:     # Expect
            data = self.render(c, body, extra=[("Expect", r.choice(["100-continue", "x", "100-Continue"]))])
            return Test(data, [c.method == "HEAD"], c, raw=True, note="raw:expect", keep=False)
        # a body too large (over skade.rest_max_body)
        b = b'{"name":"' + b"x" * (1024 * 1024 + r.choice([1, 100000])) + b'"}'
        return Test(self.render(c, b, method=r.choice(["POST", c.method])), [False], c, raw=True,
                    note="raw:too-large", keep=False)

    # ---- the slow lane: requests the server must time out or see cut
    def slow(self, c):
        r = self.rng
        body = self.body_of(c) or b'{"a":1}'
        k = r.randrange(5)
        if k == 0:      # Content-Length larger than the body sent
            data = self.render(c, None, extra=[("Content-Length", str(len(body) + r.choice([1, 1000, 10 ** 9])))]) \
                + body
            t = Test(data, [c.method == "HEAD"], c, raw=True, note="slow:short-body", keep=False, slow=True)
        elif k == 1:    # headers never finished
            data = self.render(c, body)
            data = data[:r.randrange(1, data.index(b"\r\n\r\n") + 2)]
            t = Test(data, [c.method == "HEAD"], c, raw=True, note="slow:short-headers", keep=False, slow=True)
        elif k == 2:    # chunked, no last chunk
            data = self.render(c, None, extra=[("Transfer-Encoding", "chunked")]) + b"%x\r\n%s\r\n" % (len(body), body)
            t = Test(data, [c.method == "HEAD"], c, raw=True, note="slow:chunked-open", keep=False, slow=True)
        else:           # early close: after part or all of the request (a catalog never checked)
            c = r.choice(self.cut_corpus).clone()
            data = self.render(c, self.mut.json(c.body) if c.body is not None and r.random() < 0.5 else body)
            cut = r.choice([len(data), r.randrange(1, len(data) + 1)])
            t = Test(data[:cut], [c.method == "HEAD"], c, raw=True, note="slow:early-close", keep=False,
                     slow=True)
            t.early_close = True
            t.lane = "cut"
        return t


# ----------------------------------------------------------------- findings
def normalize(msg):
    msg = re.sub(r'".*"', '"…"', msg, flags=re.S)       # (quoted parts may hold quotes)
    msg = re.sub(r"\d+", "N", msg)
    return msg[:160]


class Known:
    """Known finding classes: lines 'name<TAB or spaces>regex' (matched against a signature)."""

    def __init__(self, path):
        self.rules = []
        if path:
            for ln in open(path, encoding="utf-8"):
                ln = ln.rstrip("\n")
                if not ln.strip() or ln.lstrip().startswith("#"):
                    continue
                name, _, rx = ln.strip().partition(" ")
                self.rules.append((name, re.compile(rx.strip())))

    def match(self, sig):
        for name, rx in self.rules:
            if rx.search(sig):
                return name
        return None


class Report:
    def __init__(self, out, known, per_sig=3):
        self.out = out
        self.dir = os.path.join(out, "findings")
        os.makedirs(self.dir, exist_ok=True)
        self.known = known
        self.per_sig = per_sig
        self.lock = threading.Lock()
        self.n = 0
        self.kinds = Counter()          # unknown findings by kind
        self.known_hits = Counter()     # known class -> count
        self.sigs = Counter()
        self.statuses = Counter()
        self.notes = Counter()
        self.execs = 0
        self.first = {}                 # signature -> finding dir
        self.tokens = {}

    def finding(self, kind, sig, test, resps=(), extra=None):
        full = "%s %s" % (kind, sig)
        with self.lock:
            name = self.known.match(full)
            if name:
                self.known_hits[name] += 1
                kind_dir = "known-" + name
            else:
                self.kinds[kind] += 1
                kind_dir = kind
            self.sigs[full] += 1
            if self.sigs[full] > self.per_sig:
                return None
            self.n += 1
            d = os.path.join(self.dir, "%04d-%s" % (self.n, kind_dir))
            os.makedirs(d)
            first = full not in self.first
            self.first.setdefault(full, d)
        with open(os.path.join(d, "request.bin"), "wb") as f:
            f.write(test.data if test else b"")
        if resps:
            with open(os.path.join(d, "response.bin"), "wb") as f:
                f.write(b"".join(r.raw for r in resps))
        info = {"kind": kind, "signature": sig, "known": name, "tokens": self.tokens, "route": test.case.route if test else None,
                "note": test.note if test else None, "change": test.change if test else None,
                "early_close": test.early_close if test else None}
        if extra:
            info.update(extra)
        with open(os.path.join(d, "info.json"), "w") as f:
            json.dump(info, f, indent=1, default=str)
        if first:
            tag = "known:" + name if name else "FINDING"
            print("rest-fuzz: %s %s %s -> %s" % (tag, kind, sig[:200], d), flush=True)
        return d


# --------------------------------------------------------------- the fuzzer
class Fuzzer:
    def __init__(self, a):
        self.a = a
        self.pg = PG(a.pg_port)
        self.state_pg = PG(a.pg_port)
        self.tokens = {"writer": a.writer_token, "reader": a.reader_token}
        self.report = Report(a.out, Known(a.known))
        self.report.tokens = self.tokens
        self.stop = threading.Event()
        self.rw = RWLock()
        self.state = None
        self.inflight = {}
        self.recent = deque(maxlen=200)
        self.log_pos = 0
        self.worker_pids = None
        self.crashes = 0
        self.hangs = 0
        self.fivexx = 0
        self.state_changes = 0
        self.bad_bodies = 0
        self.outcomes = Counter()
        self.time_by_note = Counter()
        self.errors = Counter()
        self.prefix = None

    # ---- setup
    def call(self, method, path, body=None, token=None, query=""):
        conn = Conn(self.a.rest_port)
        data = ("%s %s%s HTTP/1.1\r\nHost: %s:%d\r\nAuthorization: Bearer %s\r\n" % (
            method, path, query, HOST, self.a.rest_port, token or self.tokens["writer"])).encode()
        b = dumps(body) if body is not None else None
        if b is not None:
            data += b"Content-Type: application/json\r\nContent-Length: %d\r\n" % len(b)
        data += b"\r\n" + (b or b"")
        rs, outcome = conn.exchange(data, [method == "HEAD"], 30, keep=False)
        conn.close()
        if not rs:
            raise RuntimeError("no answer to %s %s (%s)" % (method, path, outcome))
        r = rs[0]
        try:
            j = json.loads(r.body) if r.body else None
        except ValueError:
            j = None
        return r.status, j, r

    def wait_rest(self, seconds=60):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            try:
                socket.create_connection((HOST, self.a.rest_port), timeout=1).close()
                return True
            except OSError:
                time.sleep(0.2)
        return False


    def seed_catalog(self, prefix):
        """Namespaces, tables (real schemas), views and commits in catalog prefix; its corpus."""
        wh = self.a.warehouse + ("" if prefix == self.prefix else "/" + prefix)
        ns, sub = ["fz"], ["fz", "fzsub"]
        seeds = {"ns": ns, "sub": sub, "wh": wh, "uuid": {}, "loc": {}}
        seed_requests = []
        P = "/v1/" + q(prefix)
        N, S = ns_seg(ns), ns_seg(sub)
        reqs = [("POST", P + "/namespaces", {"namespace": ns, "properties": {"location": wh + "/fz", "owner": "fuzz"}}),
                ("POST", P + "/namespaces", {"namespace": sub, "properties": {}}),
                ("POST", P + "/namespaces", {"namespace": ["fzempty"]}),
                ("POST", P + "/namespaces/" + N + "/tables",
                 {"name": "t1", "schema": SCHEMA, "partition-spec": SPEC, "write-order": ORDER,
                  "properties": {"format-version": "2"}}),
                ("POST", P + "/namespaces/" + N + "/tables", {"name": "t2", "schema": SCHEMA2}),
                ("POST", P + "/namespaces/" + N + "/tables", {"name": "t3", "schema": SCHEMA2}),
                ("POST", P + "/namespaces/" + S + "/tables", {"name": "s1", "schema": SCHEMA2}),
                ("POST", P + "/namespaces/" + N + "/views",
                 {"name": "v1", "schema": VIEW_SCHEMA, "view-version": view_version(ns), "properties": {}}),
                ("POST", P + "/namespaces/" + N + "/views",
                 {"name": "v2", "schema": VIEW_SCHEMA, "view-version": view_version(ns), "properties": {}})]
        for m, p, b in reqs:
            seed_requests.append((m, p, b))
            st, j, _ = self.call(m, p, b)
            if st not in (200, 409):
                raise RuntimeError("seed %s %s: %s %s" % (m, p, st, j))
        for t in ("t1", "t2"):
            st, j, r = self.call("GET", P + "/namespaces/" + N + "/tables/" + t)
            seeds["uuid"][t] = j["metadata"]["table-uuid"]
            seeds["loc"][t] = j["metadata-location"]
            if t == "t1":
                seeds["etag"] = r.header("ETag") or '"x"'
        # a commit or two
        for i in range(2):
            st, j, _ = self.call("POST", P + "/namespaces/" + N + "/tables/t1", {
                "requirements": [{"type": "assert-table-uuid", "uuid": seeds["uuid"]["t1"]}],
                "updates": [{"action": "set-properties", "updates": {"seed.commit": str(i)}}]})
            if st != 200:
                raise RuntimeError("seed commit: %s %s" % (st, j))
        st, j, _ = self.call("POST", P + "/namespaces/" + N + "/tables/t2", {
            "requirements": [], "updates": [{"action": "add-schema", "schema": dict(SCHEMA2, **{"schema-id": 1}),
                                             "last-column-id": 13},
                                            {"action": "set-current-schema", "schema-id": -1}]})
        if st != 200:
            raise RuntimeError("seed schema commit: %s %s" % (st, j))
        st, j, _ = self.call("GET", P + "/namespaces/" + N + "/views/v1")
        seeds["uuid"]["v1"] = j["metadata"]["view-uuid"]
        seeds["loc"]["v1"] = j["metadata-location"]
        return seeds, seed_requests, build_corpus(prefix, seeds)

    def seed(self):
        if not self.wait_rest():
            raise RuntimeError("the REST port does not answer")
        st, j, _ = self.call("GET", "/v1/config")
        if st != 200:
            raise RuntimeError("GET /v1/config: %s %s" % (st, j))
        self.prefix = j["overrides"]["prefix"]
        # three catalogs: the main lane's (well-formed and quick raw requests), the slow lane's (requests
        # the server must time out) and the cut one's (requests cut early: their changes may land after
        # the close, so its state is never checked)
        self.lanes = {"main": Lane("main", self.prefix, "catalog_name NOT IN ('fuzz_slow', 'fuzz_cut')", True),
                      "slow": Lane("slow", "fuzz_slow", "catalog_name = 'fuzz_slow'", True),
                      "cut": Lane("cut", "fuzz_cut", "false", False)}
        for lane in self.lanes.values():
            self.seeds, lane.seed_requests, lane.corpus = self.seed_catalog(lane.catalog)
            if lane.check:
                lane.state = lane.seed_state = self.read_state(lane)
                lane.detail = self.read_detail(lane)
        self.corpus = self.lanes["main"].corpus
        self.pool = pool_of(self.corpus)
        self.worker_pids = self.rest_pids()
        self.log_pos = os.path.getsize(self.a.log) if os.path.exists(self.a.log) else 0
        print("rest-fuzz: prefix %r, %d corpus requests over %d routes, REST workers %s" % (
            self.prefix, len(self.corpus), len({c.route for c in self.corpus}), sorted(self.worker_pids)),
            flush=True)

    def reseed(self, lane):
        """Recreate the seed objects a successful change dropped or moved (under the write lock)."""
        for m, p, b in lane.seed_requests:
            try:
                self.call(m, p, b)
            except RuntimeError:
                pass
        lane.state = self.read_state(lane)
        lane.detail = self.read_detail(lane)

    def read_state(self, lane):
        return self.state_pg.query(state_sql(lane.cond))[0][0]

    def read_detail(self, lane):
        return sorted(r[0] or "" for r in self.state_pg.query(detail_sql(lane.cond)))

    def rest_pids(self):
        """The REST listener's pid: it lives as long as the server (executors come and go with
        the load; one that crashed shows in the log, as does a restarted cluster)."""
        rows = self.pg.query("SELECT pid FROM pg_stat_activity WHERE backend_type = 'skade rest listener'")
        return {r[0] for r in rows}

    # ---- checks
    def check_answer(self, t, r, i):
        """Problems of one answer (a list of (kind, signature))."""
        out = []
        c = t.case if i == 0 else None
        head = (t.heads[i] if i < len(t.heads) else False) or (i == 0 and t.data[:5] == b"HEAD ")
        body = r.body
        if (r.header("Content-Encoding") or "").lower() == "gzip" and body:
            try:
                body = gzip.decompress(body)
            except (OSError, EOFError, zlib.error):
                out.append(("bad-body", "%d gzip body does not decompress" % r.status))
                return out
        mhd = body.lstrip().lower().startswith(b"<html") or (t.raw and body.startswith(b"HTTP/1."))
        if t.raw and body.startswith(b"HTTP/1."):
            out.append(("bad-body", "%d libmicrohttpd sent its header block twice" % r.status))
        if t.raw and (r.status == 505 and "version" in t.note or r.status == 501 and (
                "chunked" in t.note or "method" in t.note)):
            return out      # HTTP version / transfer coding not supported: as it should
        if mhd and t.raw:
            if r.status >= 500:
                out.append(("5xx", "%d libmicrohttpd %s" % (r.status, r.reason)))
            return out
        ejson = None
        if body:
            try:
                ejson = json.loads(body)
            except RecursionError:      # (deeper than Python's parser goes: still JSON)
                if r.status >= 400:
                    out.append(("bad-body", "%d error body nested too deep (%s)" % (
                        r.status, c.route if c else "pipelined")))
                return out
            except ValueError:
                try:
                    body.decode("utf-8")
                    why = "non-JSON body"
                except UnicodeDecodeError:
                    why = "body not valid UTF-8"
                out.append(("bad-body", "%dxx %s" % (r.status // 100, why) if why != "non-JSON body" else
                            "%d %s (%s)" % (r.status, why, c.route if c else "pipelined")))
        if r.status >= 400:
            if head and not body:
                pass
            elif not (isinstance(ejson, dict) and isinstance(ejson.get("error"), dict)
                      and isinstance(ejson["error"].get("message"), str)
                      and isinstance(ejson["error"].get("type"), str)
                      and ejson["error"].get("code") == r.status):
                if not any(k == "bad-body" for k, _ in out):
                    out.append(("bad-body", "%d not an Iceberg error model (%s) %s" % (
                        r.status, c.route if c else "pipelined", normalize(body[:60].decode("latin-1")))))
        if r.status >= 500 or r.status < 100:
            msg = ejson["error"].get("message", "") if isinstance(ejson, dict) and isinstance(
                ejson.get("error"), dict) else body[:80].decode("latin-1")
            typ = ejson["error"].get("type", "") if isinstance(ejson, dict) and isinstance(
                ejson.get("error"), dict) else ""
            route = c.route if c else "pipelined"
            out.append(("5xx", "%d %s %s: %s" % (r.status, route, typ, normalize(msg))))
        # %00 in a name segment must not reach a catalog object
        if c and r.status < 400 and c.ns_i is not None and i == 0 and not t.raw and c.route not in (
                "report_metrics", "cancel_plan", "fetch_plan", "fetch_tasks"):
            segs = [c.segs[j] for j in (c.ns_i, c.name_i) if j is not None and j < len(c.segs)]
            if any("%00" in s.upper() for s in segs):
                out.append(("nul-accepted", "%d %s %%00 in a name accepted" % (r.status, c.route)))
        return out

    # ---- a thread
    def worker(self, tid, slow):
        rng = random.Random("%s/%d/%s" % (self.a.seed, tid, slow))
        gen = Gen(rng, self.lanes["slow" if slow else "main"].corpus, self.pool, self.tokens, self.a.rest_port,
                  self.a.max_depth, self.lanes["cut"].corpus)
        conn = Conn(self.a.rest_port)
        while not self.stop.is_set():
            with self.report.lock:
                if self.a.executions and self.report.execs >= self.a.executions:
                    self.stop.set()
                    break
                self.report.execs += 1
            t = gen.next(slow=slow)
            try:
                self.run_one(t, conn, tid)
            except Exception as e:      # the fuzzer's own trouble: said once a kind, the thread goes on
                import traceback
                key = "%s: %s" % (type(e).__name__, str(e)[:80])
                with self.report.lock:
                    self.errors[key] += 1
                    first = self.errors[key] == 1
                if first:
                    print("rest-fuzz: driver error (%s, request %s %s)" % (key, t.case.route, t.note), flush=True)
                    traceback.print_exc()
                conn.close()
                time.sleep(0.5)
                lane = self.lanes[t.lane]       # (what it changed is no finding of the next request)
                if lane.check:
                    with lane.rw.write():
                        lane.state, lane.detail = self.read_state(lane), self.read_detail(lane)
        conn.close()

    def run_one(self, t, conn, tid):
        t0 = time.monotonic()
        lane = self.lanes[t.lane]
        lock = lane.rw.none if not lane.check else lane.rw.write if t.change else lane.rw.read
        with lock():
            t0 = time.monotonic()
            self.inflight[tid] = t
            self.recent.append(t)
            if t.early_close:
                try:
                    s = socket.create_connection((HOST, self.a.rest_port), timeout=5)
                    s.sendall(t.data)
                    s.close()
                except OSError:
                    pass
                rs, outcome = [], "early-close"
                time.sleep(0.01)
            else:
                rs, outcome = conn.exchange(t.data, t.heads, self.a.timeout, keep=t.keep and not t.raw)
            self.inflight.pop(tid, None)
            with self.report.lock:
                self.outcomes[outcome] += 1
                self.time_by_note[t.note] += time.monotonic() - t0
                self.report.notes[t.note.split(":")[0] + ":" + (t.note.split(":") + [""])[1]] += 1
                for r in rs:
                    self.report.statuses[r.status] += 1
            problems = []
            for i, r in enumerate(rs):
                problems.extend(self.check_answer(t, r, i))
            if outcome == "hang":
                problems.append(("hang", "%s %s no answer in %ss" % (t.case.route, t.note, self.a.timeout)))
            elif outcome in ("closed", "garbled") and not t.raw and not rs:
                problems.append(("no-answer", "%s %s connection %s without an answer" % (
                    t.case.route, t.note, outcome)))
            if lane.check and outcome == "hang":
                time.sleep(3)       # (a late change is the hang's; the next check starts from here)
                lane.state, lane.detail = self.read_state(lane), self.read_detail(lane)
            elif t.change and lane.check:
                if outcome == "garbled":
                    time.sleep(0.5)     # requests of ours may still be served
                t1 = time.monotonic()
                self.check_state(lane, t, rs, outcome, problems)
                with self.report.lock:
                    self.time_by_note["(state check)"] += time.monotonic() - t1
        for p in problems:
            kind, sig = p[0], p[1]
            with self.report.lock:
                if kind == "hang":
                    self.hangs += 1
                elif kind == "5xx":
                    self.fivexx += 1
                elif kind == "state-change":
                    self.state_changes += 1
                elif kind == "bad-body":
                    self.bad_bodies += 1
            extra = {"outcome": outcome, "statuses": [r.status for r in rs]}
            if len(p) > 2:
                extra.update(p[2])
            self.report.finding(kind, sig, t, rs, extra)

    def check_state(self, lane, t, rs, outcome, problems):
        try:
            now = self.read_state(lane)
        except Exception as e:      # the server is down: the monitor reports it
            problems.append(("state-unknown", "%s: %s" % (t.case.route, str(e)[:100])))
            return
        if now == lane.state:
            return
        ok = any(200 <= r.status < 300 for r in rs)
        if not ok:
            detail = self.read_detail(lane)
            before, after = set(lane.detail), set(detail)
            sts = ",".join(str(r.status) for r in rs) or outcome
            problems.append(("state-change", "%s answered %s but changed the catalog" % (t.case.route, sts),
                             {"rows removed since the last baseline": sorted(before - after),
                              "rows added since the last baseline": sorted(after - before)}))
            lane.detail = detail
        lane.state = now
        # the seeds back, names checked and the baseline of the rows refreshed: at most every 2 s
        # (a catalog grown by the run makes these the costly part)
        if time.monotonic() - lane.reseeded >= 2:
            lane.reseeded = time.monotonic()
            self.reseed(lane)
            bad = [x for x in lane.detail if any(0xDC80 <= ord(ch) <= 0xDCFF for ch in x)]
            if bad and not lane.bad_utf8:
                lane.bad_utf8 = True
                problems.append(("bad-utf8-stored", "a name or property stored that is not valid UTF-8 "
                                 "(by this or an earlier request)",
                                 {"rows": [b.encode("utf-8", "surrogateescape").decode("latin-1") for b in bad[:5]]}))

    # ---- the monitor: server log and REST worker processes
    CRASH = re.compile(r"terminated by signal|server process .* was terminated|was terminated by exception|"
                       r"terminating any other active server processes|all server processes terminated|"
                       r"skade rest (worker|listener).* exited with exit code [^01]|TRAP:|PANIC:|out of memory|"
                       r"stack depth limit exceeded")
    LOG500 = re.compile(r"LOG:\s+skade REST (\S+) (\S+): (.*)")

    def scan_log(self):
        try:
            with open(self.a.log, "rb") as f:
                f.seek(self.log_pos)
                data = f.read()
        except OSError:
            return [], []
        cut = data.rfind(b"\n") + 1
        self.log_pos += cut
        lines = data[:cut].decode("utf-8", "replace").splitlines()
        crash = [ln for ln in lines if self.CRASH.search(ln) and "LOG:  skade REST" not in ln]
        return crash, lines

    def monitor(self):
        while not self.stop.wait(1.0):
            self.check_crash()

    def check_crash(self):
        crash, lines = self.scan_log()
        pids = None
        try:
            pids = self.rest_pids()
        except Exception:
            pass
        changed = pids is not None and self.worker_pids is not None and pids != self.worker_pids \
            and len(self.worker_pids) > 0
        if not crash and not changed:
            return
        fatal = [ln for ln in crash if not re.search(r"stack depth limit exceeded|out of memory", ln)]
        if not fatal and not changed:
            return
        with self.report.lock:
            self.crashes += 1
        suspects = list(self.inflight.values()) or list(self.recent)[-5:]
        sig = normalize(" | ".join(re.sub(r"^.*?(LOG|FATAL|PANIC|ERROR|TRAP):\s*", "", ln) for ln in fatal[:2])
                        or "REST workers changed %s -> %s" % (sorted(self.worker_pids), sorted(pids or [])))
        d = self.report.finding("crash", sig, suspects[0] if suspects else None, (),
                                {"log": fatal[:20], "pids_before": sorted(self.worker_pids or []),
                                 "pids_after": sorted(pids or [])})
        if d:
            with open(os.path.join(d, "recent-requests.bin"), "wb") as f:
                for t in list(self.recent)[-50:]:
                    f.write(b"=== %s %s\n" % (t.case.route.encode(), t.note.encode()))
                    f.write(t.data + b"\n")
        self.wait_rest()
        time.sleep(1)
        try:
            self.worker_pids = self.rest_pids()
        except Exception:
            pass

    def collect_500_log(self):
        pass

    # ---- main
    def run(self):
        self.seed()
        threads = []
        n_slow = 1 if self.a.threads >= 3 else 0
        for i in range(self.a.threads):
            th = threading.Thread(target=self.worker, args=(i, i < n_slow), daemon=True)
            th.start()
            threads.append(th)
        mon = threading.Thread(target=self.monitor, daemon=True)
        mon.start()
        start = time.monotonic()
        last = start
        last_n = 0
        try:
            while not self.stop.is_set():
                time.sleep(0.5)
                now = time.monotonic()
                if self.a.seconds and now - start >= self.a.seconds:
                    self.stop.set()
                if now - last >= self.a.progress:
                    n = self.report.execs
                    print("rest-fuzz: %ds %d executions (%.0f/s) 5xx=%d hangs=%d crashes=%d state=%d" % (
                        now - start, n, (n - last_n) / (now - last), self.fivexx, self.hangs, self.crashes,
                        self.state_changes), flush=True)
                    last, last_n = now, n
        except KeyboardInterrupt:
            self.stop.set()
        for th in threads:
            th.join(self.a.timeout + 15)
        mon.join(5)
        time.sleep(1)
        self.check_crash()
        return self.finish(time.monotonic() - start)

    def finish(self, elapsed):
        r = self.report
        n = r.execs
        print("rest-fuzz: %d executions in %.0fs (%.0f/s)" % (n, elapsed, n / max(elapsed, 0.001)))
        print("rest-fuzz: statuses " + " ".join("%s=%d" % (k, v) for k, v in sorted(r.statuses.items())))
        print("rest-fuzz: outcomes " + " ".join("%s=%d" % kv for kv in sorted(self.outcomes.items())))
        print("rest-fuzz: seconds by generator " + " ".join("%s=%.1f" % kv for kv in self.time_by_note.most_common(12)))
        print("rest-fuzz: generators " + " ".join("%s=%d" % kv for kv in sorted(r.notes.items())))
        if r.known_hits:
            print("rest-fuzz: known classes (not failures) " +
                  " ".join("%s=%d" % kv for kv in sorted(r.known_hits.items())))
        print("rest-fuzz: finding signatures:")
        for sig, cnt in sorted(r.sigs.items(), key=lambda kv: -kv[1]):
            name = r.known.match(sig)
            print("  %6d %s%s  (%s)" % (cnt, "[known %s] " % name if name else "", sig[:220], r.first.get(sig)))
        failed = sum(r.kinds.values())
        print("rest-fuzz: executions=%d crashes=%d 5xx=%d hangs=%d state_changes=%d bad_bodies=%d known=%d" % (
            n, self.crashes, self.fivexx, self.hangs, self.state_changes, self.bad_bodies,
            sum(r.known_hits.values())))
        print("rest-fuzz: findings in %s" % r.dir)
        print("rest-fuzz: %d passed, %d failed" % (n - min(n, failed), failed))
        return 1 if failed else 0

    def replay(self, dirs):
        failed = 0
        for d in dirs:
            data = open(os.path.join(d, "request.bin"), "rb").read()
            try:
                old = json.load(open(os.path.join(d, "info.json"))).get("tokens", {})
            except (OSError, ValueError):
                old = {}
            for k, v in old.items():     # the tokens of this server
                data = data.replace(v.encode(), self.tokens[k].encode())
            conn = Conn(self.a.rest_port)
            n = max(1, data.count(b" HTTP/1"))
            rs, outcome = conn.exchange(data, [data.startswith(b"HEAD")] + [False] * (n - 1), self.a.timeout,
                                        keep=False)
            sts = [r.status for r in rs]
            bad = outcome == "hang" or any(s >= 500 for s in sts)
            failed += bad
            print("rest-fuzz: replay %s: %s %s%s" % (d, outcome, sts, "  <- still failing" if bad else ""))
            for r in rs[:1]:
                print("   ", r.body[:300])
        time.sleep(1.5)
        crash, _ = self.scan_log()
        if crash:
            print("rest-fuzz: the server log shows:\n  " + "\n  ".join(crash[:10]))
            failed += 1
        print("rest-fuzz: %d passed, %d failed" % (len(dirs) - min(failed, len(dirs)), failed))
        return 1 if failed else 0


class RWLock:
    """Readers share; a writer (a change request and its state check) is alone."""

    def __init__(self):
        self.c = threading.Condition()
        self.readers = 0
        self.writer = False

    class _Ctx:
        def __init__(self, enter, leave):
            self.enter, self.leave = enter, leave

        def __enter__(self):
            self.enter()

        def __exit__(self, *a):
            self.leave()

    def read(self):
        return self._Ctx(self._r_in, self._r_out)

    def none(self):
        return self._Ctx(lambda: None, lambda: None)

    def write(self):
        return self._Ctx(self._w_in, self._w_out)

    def _r_in(self):
        with self.c:
            while self.writer:
                self.c.wait()
            self.readers += 1

    def _r_out(self):
        with self.c:
            self.readers -= 1
            self.c.notify_all()

    def _w_in(self):
        with self.c:
            while self.writer or self.readers:
                self.c.wait()
            self.writer = True

    def _w_out(self):
        with self.c:
            self.writer = False
            self.c.notify_all()


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rest-port", type=int, required=True)
    ap.add_argument("--pg-port", type=int, required=True)
    ap.add_argument("--log", required=True, help="the server log")
    ap.add_argument("--out", required=True)
    ap.add_argument("--warehouse", required=True)
    ap.add_argument("--writer-token", required=True)
    ap.add_argument("--reader-token", required=True)
    ap.add_argument("--seconds", type=float, default=90, help="0: no time limit (Ctrl-C or --executions)")
    ap.add_argument("--executions", type=int, default=0, help="stop after N requests (0: no limit)")
    ap.add_argument("--seed", default="1")
    ap.add_argument("--threads", type=int, default=6, help="concurrent connections (one is the slow lane)")
    ap.add_argument("--timeout", type=float, default=10, help="an answer later than this is a hang")
    ap.add_argument("--max-depth", type=int, default=100000, help="deepest JSON nesting sent")
    ap.add_argument("--known", help="a file of known finding classes (README.md)")
    ap.add_argument("--progress", type=float, default=15)
    ap.add_argument("--replay", nargs="*", help="only resend these finding directories")
    ap.add_argument("--serve", type=float, default=0, help="no fuzzing: seed, print how to reach the server, wait")
    a = ap.parse_args()
    if a.seconds == 0 and a.executions == 0:
        a.seconds = 0
    f = Fuzzer(a)
    if a.serve:
        f.seed()
        print("rest-fuzz: serving for %.0fs: REST http://%s:%d (prefix %s), SQL port %d\n"
              "  export T=%s   # writer token; reader: %s" % (a.serve, HOST, a.rest_port, f.prefix, a.pg_port,
                                                            a.writer_token, a.reader_token), flush=True)
        try:
            time.sleep(a.serve)
        except KeyboardInterrupt:
            pass
        sys.exit(0)
    if a.replay:
        f.seed()
        sys.exit(f.replay(a.replay))
    sys.exit(f.run())


if __name__ == "__main__":
    main()
