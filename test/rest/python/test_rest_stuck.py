"""The REST server holds when requests get stuck or clients are hostile: slow bodies, a held
row lock, a hung S3 endpoint, a full pool; every wait is bounded and answered with the status
Iceberg's clients read right (409: nothing was committed, refresh and retry; 503 with
Retry-After: try later); paths that decode to something other than they say are 400; settings
take effect on reload; GET /metrics is Prometheus text.

Each test here failed on the server of one process per worker that ran requests itself (one
stuck request stalled the worker, and with it every connection it held).

No timing assertions: the bounds below are generous ("answered at all, not after the stuck
request"), far above what the server takes.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import psycopg2
import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

import restenv
from restenv import assert_error, call

pytestmark = pytest.mark.usefixtures("fresh_namespaces")

NAMESPACES = ("stuck",)
CONFIG = f"{restenv.URI}/v1/config?warehouse={restenv.CATALOG}"
HOT = restenv.table_url("stuck", "hot")
COLD = restenv.table_url("stuck", "cold")
SET_K = {"requirements": [], "updates": [{"action": "set-properties", "updates": {"k": "v"}}]}


def pg_exec(pg, sql, params=()):
    with pg.cursor() as cur:
        cur.execute(sql, params)
        return cur.fetchall() if cur.description else None


def reload_with(pg, **settings):
    """ALTER SYSTEM SET skade.<name> = value (None: RESET) and reload; the listener and the
    executors read it on their next wake-up."""
    old = pg.autocommit
    pg.autocommit = True
    try:
        for name, value in settings.items():
            if value is None:
                pg_exec(pg, f"ALTER SYSTEM RESET skade.{name}")
            else:
                pg_exec(pg, f"ALTER SYSTEM SET skade.{name} = %s", (str(value),))
        pg_exec(pg, "SELECT pg_reload_conf()")
    finally:
        pg.autocommit = old
    time.sleep(1.0)


@pytest.fixture(scope="module", autouse=True)
def tables(fresh_namespaces):
    call("POST", restenv.url("namespaces"), body={"namespace": ["stuck"]})
    schema = {"type": "struct", "schema-id": 0,
              "fields": [{"id": 1, "name": "id", "type": "long", "required": True}]}
    for name in ("hot", "cold"):
        r = call("POST", restenv.url("namespaces/stuck/tables"), body={"name": name, "schema": schema})
        assert r.status_code == 200, r.text


@pytest.fixture
def row_lock():
    """A JDBC-style writer's transaction holding the hot table's row lock (FOR UPDATE)."""
    conn = psycopg2.connect(restenv.PG_DSN)
    cur = conn.cursor()
    cur.execute("SELECT 1 FROM public.iceberg_tables WHERE catalog_name = %s"
                " AND table_namespace = 'stuck' AND table_name = 'hot' FOR UPDATE", (restenv.CATALOG,))
    assert cur.fetchall() == [(1,)]
    yield conn
    conn.rollback()
    conn.close()


def hot_properties(pg) -> dict:
    r = call("GET", HOT)
    assert r.status_code == 200, r.text
    return r.json()["metadata"].get("properties", {})


def commits_in_background(n: int, body=SET_K, url=HOT):
    """n commits at once, each on its own connection: (futures, executor)."""
    ex = ThreadPoolExecutor(n)
    futures = [ex.submit(lambda: requests.post(url, headers=restenv.auth(), data=json.dumps(body),
                                               timeout=60)) for _ in range(n)]
    return futures, ex


def served_quickly(url=CONFIG, n=5, timeout=5.0) -> int:
    """How many of n requests (each on a new connection) were answered 200 within timeout."""
    ok = 0
    for _ in range(n):
        try:
            if requests.get(url, headers=restenv.auth(), timeout=timeout).status_code == 200:
                ok += 1
        except requests.RequestException:
            pass
    return ok


# ------------------------------------------------------------ slow clients

def test_slow_bodies_never_take_the_server_down(pg):
    """2 x skade.rest_max_connections clients, unauthenticated, each sending a body one byte a
    second and reconnecting whenever the server cuts it: a normal client is still served, and
    the slow ones are cut (the minimum body rate, or the room they took given to others)."""
    limit = int(pg_exec(pg, "SELECT current_setting('skade.rest_max_connections')")[0][0])
    header = (b"POST /v1/" + restenv.CATALOG.encode() + b"/namespaces/stuck/tables/hot/metrics HTTP/1.1\r\n"
              b"Host: x\r\nContent-Length: 100000\r\n\r\n")
    stop = threading.Event()
    reconnects = [0]

    def slow_client():
        while not stop.is_set():
            try:
                with socket.create_connection((restenv.HOST, restenv.PORT), timeout=2) as s:
                    s.sendall(header)
                    while not stop.is_set():
                        s.sendall(b" ")
                        stop.wait(1.0)
            except OSError:
                reconnects[0] += 1
                stop.wait(0.05)

    threads = [threading.Thread(target=slow_client, daemon=True) for _ in range(2 * limit)]
    for t in threads:
        t.start()
    try:
        time.sleep(3)
        assert served_quickly(n=10, timeout=10) == 10
        assert served_quickly(COLD, n=5, timeout=10) == 5
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=10)
    assert reconnects[0] > 0, "no slow connection was ever cut"


def test_a_body_past_the_body_timeout_is_cut(pg):
    """A body that keeps the minimum rate but never ends is cut at skade.rest_body_timeout."""
    reload_with(pg, rest_body_timeout="2s", rest_min_body_rate=1)
    try:
        with socket.create_connection((restenv.HOST, restenv.PORT), timeout=1) as s:
            s.sendall(b"POST /v1/config HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n")
            deadline = time.monotonic() + 15
            closed = False
            while time.monotonic() < deadline and not closed:
                try:
                    s.sendall(b"xx")
                    if s.recv(1) == b"":
                        closed = True
                except socket.timeout:
                    pass
                except OSError:
                    closed = True
            assert closed, "a never-ending body was kept for 15 s with skade.rest_body_timeout = 2s"
    finally:
        reload_with(pg, rest_body_timeout=None, rest_min_body_rate=None)


def test_max_connections_is_read_on_reload(pg):
    """skade.rest_max_connections lowered on reload: idle connections past it are cut to make
    room, and new clients are served."""
    reload_with(pg, rest_max_connections=2)
    socks = []
    try:
        for _ in range(5):
            socks.append(socket.create_connection((restenv.HOST, restenv.PORT), timeout=2))
            time.sleep(0.2)
        time.sleep(0.5)
        open_ = 0
        for s in socks:
            s.settimeout(0.3)
            try:
                if s.recv(1) != b"":
                    open_ += 1
            except socket.timeout:
                open_ += 1
            except OSError:
                pass
        assert open_ <= 2, f"{open_} idle connections kept with skade.rest_max_connections = 2"
        assert served_quickly(n=3) == 3
    finally:
        for s in socks:
            s.close()
        reload_with(pg, rest_max_connections=None)


# ------------------------------------------------------------ stuck requests

def test_commits_blocked_on_a_row_lock_block_nothing_else(pg, row_lock):
    """More commits blocked on one row lock than skade.rest_workers: unrelated requests and
    loads of the locked table itself are answered; each blocked commit ends after
    skade.rest_lock_timeout with 409 CommitFailedException and changed nothing."""
    workers = int(pg_exec(pg, "SELECT current_setting('skade.rest_workers')")[0][0])
    futures, ex = commits_in_background(2 * workers)
    try:
        time.sleep(1)
        assert served_quickly(n=5) == 5
        assert served_quickly(COLD, n=3) == 3
        assert served_quickly(HOT, n=3) == 3
        answers = [f.result(timeout=60) for f in futures]
    finally:
        ex.shutdown(wait=True)
    for r in answers:
        assert_error(r, 409, "CommitFailedException")
    row_lock.rollback()
    assert "k" not in hot_properties(pg)


def test_full_queue_is_503_at_once(pg, row_lock):
    """With the queue full, a request that cannot run now is 503 with Retry-After at once."""
    cap = max(1, int(pg_exec(pg, "SELECT current_setting('skade.rest_max_workers')")[0][0]) // 2)
    reload_with(pg, rest_max_queue=0)
    futures, ex = commits_in_background(cap)
    try:
        time.sleep(1)
        t = time.monotonic()
        r = requests.post(HOT, headers=restenv.auth(), data=json.dumps(SET_K), timeout=30)
        waited = time.monotonic() - t
        assert_error(r, 503, "ServiceUnavailableException")
        assert r.headers.get("Retry-After", "").isdigit(), r.headers
        assert waited < 4, f"the 503 took {waited:.1f} s: it waited for the row lock"
        row_lock.rollback()
        for f in futures:
            assert f.result(timeout=60).status_code == 200
    finally:
        ex.shutdown(wait=True)
        reload_with(pg, rest_max_queue=None)


def test_commit_waiting_in_the_queue_is_409(pg, row_lock):
    """Commits beyond the table's share of the executors wait in the queue; one that waits
    skade.rest_queue_timeout is 409 (nothing committed), not 5xx."""
    cap = max(1, int(pg_exec(pg, "SELECT current_setting('skade.rest_max_workers')")[0][0]) // 2)
    reload_with(pg, rest_queue_timeout="1s", rest_lock_timeout="20s")
    futures, ex = commits_in_background(cap + 2)
    try:
        time.sleep(4)
        done = [f.result(timeout=1) for f in futures if f.done()]
        assert len(done) >= 2, "no queued commit was answered after the queue timeout"
        for r in done:
            assert_error(r, 409, "CommitFailedException")
        row_lock.rollback()
        for f in futures:
            assert f.result(timeout=60).status_code in (200, 409)
    finally:
        ex.shutdown(wait=True)
        reload_with(pg, rest_queue_timeout=None, rest_lock_timeout=None)


def test_statement_timeout_is_503_and_commits_nothing(pg, row_lock):
    """A commit that runs past skade.rest_statement_timeout (here: waiting for a row lock held
    longer than that) is rolled back and answered 503 with Retry-After."""
    reload_with(pg, rest_statement_timeout="1s", rest_lock_timeout="30s")
    try:
        body = {"requirements": [], "updates": [{"action": "set-properties", "updates": {"st": "x"}}]}
        r = requests.post(HOT, headers=restenv.auth(), data=json.dumps(body), timeout=30)
        assert_error(r, 503, "ServiceUnavailableException")
        assert r.headers.get("Retry-After", "").isdigit(), r.headers
        row_lock.rollback()
        assert "st" not in hot_properties(pg)
    finally:
        reload_with(pg, rest_statement_timeout=None, rest_lock_timeout=None)


@pytest.fixture
def hung_s3():
    """An S3 endpoint (skade.s3_endpoint of this suite) that accepts and never answers."""
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", int(restenv.env("SKADE_REST_HUNG_S3_PORT"))))
    srv.listen(64)
    held = []
    stop = threading.Event()

    def accept():
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(srv.accept()[0])
            except OSError:
                pass
    t = threading.Thread(target=accept, daemon=True)
    t.start()
    yield
    stop.set()
    t.join()
    for c in held:
        c.close()
    srv.close()


def test_hung_storage_blocks_nothing_else_and_is_503(pg, hung_s3):
    """Registering tables whose metadata is on a hung S3 endpoint, as many at once as there
    are executors: they run on at most half of them (the rest wait in the queue), so other
    requests are answered while they hang (not only once skade.rest_queue_timeout, 2 s, or
    skade.rest_statement_timeout, 5 s here, has freed an executor: with every executor taken,
    the first GET below would wait 2 s in the queue and be answered 503). Each ends with 503
    and Retry-After (not 500) and registers nothing."""
    reload_with(pg, rest_statement_timeout="5s")
    body = {"name": "on_hung_s3", "metadata-location": "s3://hung/t/metadata/00000-x.metadata.json"}
    workers = int(pg_exec(pg, "SELECT current_setting('skade.rest_max_workers')")[0][0])
    ex = ThreadPoolExecutor(workers)
    try:
        futures = [ex.submit(lambda: requests.post(restenv.url("namespaces/stuck/register"),
                                                   headers=restenv.auth(), data=json.dumps(body),
                                                   timeout=60)) for _ in range(workers)]
        time.sleep(1)
        assert served_quickly(n=5) == 5
        assert served_quickly(COLD, n=3) == 3
        for f in futures:
            r = f.result(timeout=60)
            err = assert_error(r, 503, "ServiceUnavailableException")
            assert r.headers.get("Retry-After", "").isdigit(), r.headers
            assert "hung" not in err["message"] or "s3://" not in err["message"], err
    finally:
        ex.shutdown(wait=True)
        reload_with(pg, rest_statement_timeout=None)
    assert call("HEAD", restenv.table_url("stuck", "on_hung_s3")).status_code == 404


# ------------------------------------------------------------ names

@pytest.mark.parametrize("method,path", [
    ("GET", "namespaces/stuck/tables/cold%00evil"),
    ("GET", "namespaces/stuck%00zzz/tables/cold"),
    ("GET", "namespaces/stuck/tables/cold?snapshots=all%00x"),
    ("GET", "namespaces/stuck/tables/cold%FF%FE"),
    ("DELETE", "namespaces/%C3%28"),
    ("GET", "namespaces/%C3%28"),
])
def test_paths_that_decode_to_nul_or_non_utf8_are_400(method, path):
    r = call(method, restenv.url(path))
    err = assert_error(r, 400, "BadRequestException")
    json.dumps(err)     # (valid JSON text: parsed above)


# ------------------------------------------------------------ metrics

def test_metrics_are_prometheus_text(pg):
    assert call("GET", CONFIG).status_code == 200
    assert call("GET", restenv.table_url("stuck", "absent")).status_code == 404
    r = requests.get(f"{restenv.URI}/metrics", timeout=10)
    assert r.status_code == 200
    assert r.headers["Content-Type"].startswith("text/plain")
    families = {f.name: f for f in text_string_to_metric_families(r.text)}
    for name in ("skade_rest_requests", "skade_rest_request_duration_seconds", "skade_rest_in_flight",
                 "skade_rest_queued", "skade_rest_executors", "skade_rest_refused",
                 "skade_rest_queue_timeouts", "skade_rest_idempotent_replays",
                 "skade_rest_connections_cut", "skade_cache_hits", "skade_cache_misses",
                 "skade_s3_requests", "skade_s3_retries", "skade_commits"):
        assert name in families, (name, sorted(families))
    reqs = {(s.labels["method"], s.labels["route"], s.labels["status"]): s.value
            for s in families["skade_rest_requests"].samples}
    assert reqs.get(("GET", "config", "200"), 0) >= 1, reqs
    assert reqs.get(("GET", "{p}/namespaces/{ns}/tables/{t}", "404"), 0) >= 1, reqs
    # earlier tests of this module answered 409 and 503
    assert any(k[2] == "409" for k in reqs) and any(k[2] == "503" for k in reqs), reqs
    buckets = [s for s in families["skade_rest_request_duration_seconds"].samples
               if s.name.endswith("_bucket") and s.labels["route"] == "config"]
    values = [s.value for s in buckets]
    assert values == sorted(values) and values[-1] >= 1, buckets
    workers = int(pg_exec(pg, "SELECT current_setting('skade.rest_workers')")[0][0])
    assert families["skade_rest_executors"].samples[0].value >= workers
    caches = {s.labels["cache"] for s in families["skade_cache_hits"].samples}
    assert caches == {"l0_metadata", "l05_manifests"}, caches


def test_metrics_off_loopback_need_pg_monitor(pg):
    """With skade.rest_metrics_loopback off (a proxy on this host forwards other clients),
    /metrics needs credentials of a role with pg_monitor's privileges: none 401, the writer
    403, a monitoring role 200 with the figures."""
    old = pg.autocommit
    pg.autocommit = True
    try:
        pg_exec(pg, "DROP ROLE IF EXISTS stuck_monitor")
        pg_exec(pg, "CREATE ROLE stuck_monitor LOGIN IN ROLE pg_monitor")
        token = pg_exec(pg, "SELECT skade.rest_create_token('stuck_monitor', '1 hour', 'test')")[0][0]
    finally:
        pg.autocommit = old
    reload_with(pg, rest_metrics_loopback="off")
    try:
        assert_error(requests.get(f"{restenv.URI}/metrics", timeout=10), 401, "NotAuthorizedException")
        assert_error(requests.get(f"{restenv.URI}/metrics", headers=restenv.auth(), timeout=10),
                     403, "ForbiddenException")
        r = requests.get(f"{restenv.URI}/metrics", headers=restenv.auth(token), timeout=10)
        assert r.status_code == 200, r.text
        assert "skade_rest_requests" in {f.name for f in text_string_to_metric_families(r.text)}
    finally:
        reload_with(pg, rest_metrics_loopback=None)


# ------------------------------------------------------------ client mistakes the fuzzer found

def test_plan_mistakes_are_4xx():
    """Planning at a snapshot the table does not have is 400 (was 500), and planning a table
    whose manifest list is missing 404 NotFoundException with no server path (was 500)."""
    r = call("POST", COLD + "/plan", body={"snapshot-id": 1})
    assert_error(r, 400, "BadRequestException")
    schema = {"type": "struct", "schema-id": 0,
              "fields": [{"id": 1, "name": "id", "type": "long", "required": True}]}
    assert call("POST", restenv.url("namespaces/stuck/tables"),
                body={"name": "nolist", "schema": schema}).status_code == 200
    wh = restenv.env("SKADE_WAREHOUSE")
    snap = {"snapshot-id": 77, "timestamp-ms": 1700000000000, "sequence-number": 1, "schema-id": 0,
            "manifest-list": f"file://{wh}/stuck/nolist/metadata/snap-77-missing.avro",
            "summary": {"operation": "append"}}
    r = call("POST", restenv.table_url("stuck", "nolist"), body={"requirements": [], "updates": [
        {"action": "add-snapshot", "snapshot": snap},
        {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": 77}]})
    assert r.status_code == 200, r.text
    r = call("POST", restenv.table_url("stuck", "nolist") + "/plan", body={})
    err = assert_error(r, 404)
    assert wh not in err["message"], err


def test_transfer_encoding_not_chunked_is_400():
    """A Transfer-Encoding whose last coding is not chunked leaves the body's length unknown
    (RFC 9112 6.3): 400 at once, not a connection held until the client closes it."""
    req = (b"POST /v1/" + restenv.CATALOG.encode() + b"/namespaces HTTP/1.1\r\nHost: x\r\n"
           b"Authorization: Bearer " + restenv.WRITER_TOKEN.encode() + b"\r\n"
           b"Transfer-Encoding: gzip\r\n\r\n" + b"{\"namespace\":[\"te\"]}")
    out = restenv.raw_request(req, timeout=10)
    assert out.startswith(b"HTTP/1.1 400"), out[:200]
    assert call("HEAD", restenv.url("namespaces/te")).status_code == 404


def test_a_body_that_stalls_is_cut_after_the_idle_timeout():
    """A body that came fast (well above the minimum rate) and then stopped is cut once no
    byte came for skade.rest_idle_timeout (2 s here), not only at skade.rest_body_timeout."""
    with socket.create_connection((restenv.HOST, restenv.PORT), timeout=1) as s:
        s.sendall(b"POST /v1/config HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n" + b" " * 200000)
        deadline = time.monotonic() + 15
        closed = False
        while time.monotonic() < deadline and not closed:
            try:
                closed = s.recv(65536) == b""
            except socket.timeout:
                pass
            except OSError:
                closed = True
        assert closed, "a stalled body was kept for 15 s"
