"""The REST server under abuse: slow senders (slowloris) are cut off after
skade.rest_idle_timeout (2 s in this suite), more connections than
skade.rest_max_connections are refused or wait and the server goes on serving, a worker
killed with pg_terminate_backend is back within seconds, pg_stat_activity shows the
workers and what they serve.

(No timing assertions: the waits below are generous upper bounds for "the server did it at
all", far above the 2 s idle timeout.)
"""

from __future__ import annotations

import os
import signal
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

import restenv
from restenv import call

pytestmark = pytest.mark.usefixtures("fresh_namespaces")

NAMESPACES = ()
CONFIG = f"{restenv.URI}/v1/config?warehouse={restenv.CATALOG}"
REQUEST_START = b"GET /v1/config HTTP/1.1\r\nHost: x\r\n"


def pg_query(pg, sql, params=()):
    with pg.cursor() as cur:
        cur.execute(sql, params)
        return cur.fetchall()


def closed_by_server(s: socket.socket, within: float) -> bool:
    """Does the server close s (EOF or reset) within `within` seconds, answering nothing
    but possibly an error status?"""
    s.settimeout(0.25)
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            data = s.recv(65536)
        except socket.timeout:
            continue
        except OSError:
            return True
        if data == b"":
            return True
        # (an answer such as 408 before the close is fine; keep reading to the close)
    return False


def serving() -> bool:
    try:
        return call("GET", CONFIG).status_code == 200
    except requests.RequestException:
        return False


def wait_until(pred, within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.2)
    return pred()


def rest_workers(pg) -> list[tuple]:
    return pg_query(pg, "SELECT pid, application_name, state, query FROM pg_stat_activity"
                        " WHERE backend_type = 'skade rest worker' ORDER BY pid")


# ------------------------------------------------------------ slow senders

def test_idle_connection_closed_after_idle_timeout():
    with socket.create_connection((restenv.HOST, restenv.PORT)) as s:
        assert closed_by_server(s, within=15)
    # half a request, then nothing
    with socket.create_connection((restenv.HOST, restenv.PORT)) as s:
        s.sendall(REQUEST_START)
        assert closed_by_server(s, within=15)
    # a keep-alive connection after its answer
    with socket.create_connection((restenv.HOST, restenv.PORT)) as s:
        s.sendall(REQUEST_START + b"Authorization: Bearer " + restenv.WRITER_TOKEN.encode() + b"\r\n\r\n")
        s.settimeout(5)
        assert s.recv(65536).startswith(b"HTTP/1.1 200")
        assert closed_by_server(s, within=15)


def test_slowloris_headers_trickled_are_cut_off():
    """Headers sent a byte a second (each gap below the 2 s idle timeout) forever: the server
    closes the connection, it does not wait for them indefinitely."""
    with socket.create_connection((restenv.HOST, restenv.PORT)) as s:
        s.sendall(REQUEST_START)
        s.settimeout(0.2)
        deadline = time.monotonic() + 12
        closed = False
        while time.monotonic() < deadline and not closed:
            try:
                s.sendall(b"X")
            except OSError:
                closed = True
                break
            t = time.monotonic()
            while time.monotonic() - t < 1.0:
                try:
                    if s.recv(65536) == b"":
                        closed = True
                        break
                except socket.timeout:
                    pass
                except OSError:
                    closed = True
                    break
        assert closed, "a connection trickling its headers was kept open for 12 s"


def test_slow_senders_do_not_stop_others():
    """While many connections idle on half a request, others are served (one worker serves
    many connections; the slow ones do not hold a worker)."""
    slow = []
    try:
        for _ in range(8):
            s = socket.create_connection((restenv.HOST, restenv.PORT))
            s.sendall(REQUEST_START)
            slow.append(s)
        for _ in range(10):
            assert call("GET", CONFIG).status_code == 200
    finally:
        for s in slow:
            s.close()


# ------------------------------------------------------------ many connections

def test_more_connections_than_the_limit(pg):
    limit, workers = (int(pg_query(pg, f"SELECT current_setting('skade.{n}')")[0][0])
                      for n in ("rest_max_connections", "rest_workers"))
    flood = []
    try:
        # twice what all workers together hold
        for _ in range(2 * limit * workers):
            try:
                flood.append(socket.create_connection((restenv.HOST, restenv.PORT), timeout=5))
            except OSError:
                break
        # a request now: answered, refused or reset -- never a hang, never a 5xx
        try:
            r = requests.get(CONFIG, headers=restenv.auth(), timeout=15)
            assert r.status_code == 200
        except (requests.ConnectionError, requests.Timeout):
            pass
    finally:
        for s in flood:
            s.close()
    # once the flood is gone the server serves again
    assert wait_until(serving, within=20)


def test_many_clients_at_once():
    """64 clients, 10 requests each, at once: each answer is 200; a refused connection
    (over the cap) is retried by the client; the server goes on serving."""
    target = restenv.table_url("proto_many", "t")
    call("POST", restenv.url("namespaces"), body={"namespace": ["proto_many"]})
    call("POST", restenv.url("namespaces/proto_many/tables"),
         body={"name": "t", "schema": {"type": "struct", "schema-id": 0,
                                       "fields": [{"id": 1, "name": "id", "type": "long", "required": True}]}})
    statuses: list[int] = []
    refused = 0
    lock = threading.Lock()

    def client(_):
        nonlocal refused
        with requests.Session() as sess:
            for _ in range(10):
                for attempt in range(20):
                    try:
                        r = sess.get(target, headers=restenv.auth(), timeout=30)
                        break
                    except requests.ConnectionError:
                        with lock:
                            refused += 1
                        time.sleep(0.1)
                else:
                    raise AssertionError("never served")
                with lock:
                    statuses.append(r.status_code)

    with ThreadPoolExecutor(64) as ex:
        list(ex.map(client, range(64)))
    assert statuses == [200] * 640, {s: statuses.count(s) for s in set(statuses)}
    assert serving()
    call("DELETE", target)
    call("DELETE", restenv.url("namespaces/proto_many"))


# ------------------------------------------------------------ workers

def pool_bounds(pg) -> tuple[int, int]:
    return tuple(int(pg_query(pg, f"SELECT current_setting('skade.{n}')")[0][0])
                 for n in ("rest_workers", "rest_max_workers"))


def test_pg_stat_activity_shows_the_workers(pg):
    """The executors (at least skade.rest_workers, more on demand up to
    skade.rest_max_workers) and the one listener are in pg_stat_activity."""
    low, high = pool_bounds(pg)
    rows = rest_workers(pg)
    assert low <= len(rows) <= high, rows
    assert len(pg_query(pg, "SELECT 1 FROM pg_stat_activity WHERE backend_type = 'skade rest listener'")) == 1
    assert all(r[1] == "skade rest" for r in rows), rows
    # the request a worker served last (or serves now) is its query
    marker = f"robustness-marker-{time.time_ns()}"
    call("GET", restenv.url(f"namespaces/{marker}"))
    assert any(marker in (r[3] or "") for r in rest_workers(pg)), rest_workers(pg)


def test_request_for_an_executor_that_just_ended_runs_elsewhere(pg):
    """A request handed to an idle executor that ended before the listener noticed never
    reached it: it runs on another executor (once one is there), it is not answered 503.
    Made certain by stopping the listener (SIGSTOP) while every executor is terminated and
    the request arrives on a keep-alive connection the listener already reads."""
    listener = pg_query(pg, "SELECT pid FROM pg_stat_activity WHERE backend_type = 'skade rest listener'")[0][0]
    session = requests.Session()
    assert session.get(CONFIG, headers=restenv.auth(), timeout=10).status_code == 200
    victims = [r[0] for r in rest_workers(pg)]
    answer = {}
    os.kill(listener, signal.SIGSTOP)
    try:
        for v in victims:
            pg_query(pg, "SELECT pg_terminate_backend(%s)", (v,))
        assert wait_until(lambda: not set(victims) & {r[0] for r in rest_workers(pg)}, within=10)
        t = threading.Thread(target=lambda: answer.update(
            r=session.get(CONFIG, headers=restenv.auth(), timeout=30)))
        t.start()
        time.sleep(0.3)         # (the request waits in the connection's socket)
    finally:
        os.kill(listener, signal.SIGCONT)
    t.join(40)
    assert answer["r"].status_code == 200, (answer["r"].status_code, answer["r"].text)
    assert wait_until(lambda: len(rest_workers(pg)) >= pool_bounds(pg)[0], within=10)


def test_terminated_worker_is_restarted(pg):
    """An executor ended by pg_terminate_backend is replaced (the pool keeps
    skade.rest_workers), and the listener, ended the same way, is started again."""
    before = rest_workers(pg)
    victim = before[0][0]
    assert pg_query(pg, "SELECT pg_terminate_backend(%s)", (victim,))[0][0]

    low, _ = pool_bounds(pg)

    def back():
        rows = rest_workers(pg)
        return len(rows) >= low and victim not in [r[0] for r in rows]
    assert wait_until(back, within=10), f"workers before {before}, now {rest_workers(pg)}"
    assert all(serving() for _ in range(20))
    listener = pg_query(pg, "SELECT pid FROM pg_stat_activity WHERE backend_type = 'skade rest listener'")[0][0]
    assert pg_query(pg, "SELECT pg_terminate_backend(%s)", (listener,))[0][0]
    assert wait_until(serving, within=20)
    assert all(serving() for _ in range(5))

