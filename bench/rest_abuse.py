#!/usr/bin/env python3
"""bench/rest_abuse.sh's client side: a normal client's latency on skade's REST port while
other clients abuse it. Standard library only.

    python3 rest_abuse.py CONFIG.json

CONFIG (written by rest_abuse.sh): rest (http://127.0.0.1:PORT), prefix, ns, table (the normal
client's file:// table), hot (the table (c) commits to), s3table (the s3:// table (d) loads),
reader / writer tokens, psql (argv prefix of a superuser psql), proxy_ctl (the fault proxy's
control URL), requests, timeout, budget, slow, commits, hung, lock_sleep, recover, conditions
("a b c d").

For each condition the normal client sends `requests` sequential GET /v1/config on a fresh
keep-alive connection, then as many loadTable of `table` on another fresh one, each request
with a client timeout of `timeout` seconds. A request that fails (timeout, transport error,
any status but 200) counts as failed AT the timeout (or its elapsed time if longer): a stalled
server shows as a huge p99, not as fewer samples. A measurement stops sending after `budget`
seconds; the requests it did not send count as failed too ("unsent"), so the run ends by itself.

  (a) alone
  (b) `slow` connections (2 x skade.rest_max_connections) each send the headers of
      POST .../tables/{table}/metrics with Content-Length: 100000 and no credentials, then one
      body byte every 2-4 s; one the server closes is opened again (at most every 0.5 s)
  (c) a psql session holds BEGIN; SELECT ... FOR UPDATE on iceberg_tables' row of `hot`;
      pg_sleep(lock_sleep), and `commits` clients each POST a set-properties commit to `hot`
      with the writer's token (sent again whenever one is answered) while it is held
  (d) the fault proxy hangs every S3 request for a metadata file, and `hung` clients each load
      `s3table` (sent again whenever one is answered)
After each abuse the abusers stop (the lock holder is terminated, the proxy passes again) and
the server is given up to `recover` seconds to answer GET /v1/config within 1 s three times in a
row before the next condition; the time it took is printed.
"""
from __future__ import annotations

import http.client
import json
import math
import multiprocessing
import random
import select
import socket
import subprocess
import sys
import threading
import time
import urllib.request

CFG = json.load(open(sys.argv[1]))
HOST, PORT = CFG["rest"].split("//", 1)[1].rsplit(":", 1)
PORT = int(PORT)
PREFIX, NS = CFG["prefix"], CFG["ns"]
TIMEOUT = float(CFG["timeout"])
CONFIG_PATH = f"/v1/config?warehouse={PREFIX}"
LOAD_PATH = f"/v1/{PREFIX}/namespaces/{NS}/tables/{CFG['table']}"
HOT_PATH = f"/v1/{PREFIX}/namespaces/{NS}/tables/{CFG['hot']}"
S3_PATH = f"/v1/{PREFIX}/namespaces/{NS}/tables/{CFG['s3table']}"
METRICS_PATH = f"/v1/{PREFIX}/namespaces/{NS}/tables/{CFG['table']}/metrics"
COMMIT_BODY = b'{"requirements":[],"updates":[{"action":"set-properties","updates":{"k":"v"}}]}'


def auth(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


def say(msg: str) -> None:
    print(msg, flush=True)


# --------------------------------------------------------------------------- the normal client

def measure(path: str, n: int, budget: float) -> dict:
    """n sequential GETs of path on one fresh keep-alive connection (reopened after a failure)."""
    conn = http.client.HTTPConnection(HOST, PORT, timeout=TIMEOUT)
    lat, kinds, connects, last_sock = [], {}, 0, None
    t_end = time.monotonic() + budget
    for i in range(n):
        if time.monotonic() > t_end:
            unsent = n - i
            lat.extend([TIMEOUT * 1000.0] * unsent)
            kinds["unsent (budget over)"] = unsent
            break
        t0 = time.perf_counter()
        kind = None
        try:
            conn.request("GET", path, headers=auth(CFG["reader"]))
            if conn.sock is not last_sock:
                connects += 1
                last_sock = conn.sock
            r = conn.getresponse()
            r.read()
            if r.status != 200:
                kind = f"HTTP {r.status}"
        except (socket.timeout, TimeoutError):
            kind = "timeout"
        except (OSError, http.client.HTTPException) as e:
            kind = type(e).__name__
        ms = (time.perf_counter() - t0) * 1000.0
        if kind is not None:
            kinds[kind] = kinds.get(kind, 0) + 1
            ms = max(ms, TIMEOUT * 1000.0)
            conn.close()
            last_sock = None
        lat.append(ms)
    conn.close()
    return {"lat": lat, "failed": sum(kinds.values()), "kinds": kinds, "connects": connects}


def pct(xs: list[float], p: float) -> float:
    s = sorted(xs)
    return s[max(0, math.ceil(p * len(s)) - 1)]


def quick_config_ok() -> bool:
    try:
        c = http.client.HTTPConnection(HOST, PORT, timeout=1.0)
        c.request("GET", CONFIG_PATH, headers=auth(CFG["reader"]))
        r = c.getresponse()
        r.read()
        c.close()
        return r.status == 200
    except (OSError, http.client.HTTPException):
        return False


def recover(limit: float) -> str:
    """Seconds until GET /v1/config answers within 1 s three times in a row."""
    t0 = time.monotonic()
    ok = 0
    while time.monotonic() - t0 < limit:
        if quick_config_ok():
            ok += 1
            if ok >= 3:
                return f"{time.monotonic() - t0:.1f} s"
        else:
            ok = 0
            time.sleep(0.2)
    return f"NOT within {limit:.0f} s (the next conditions' figures include what is left)"


def measure_apart(path: str, n: int, budget: float) -> dict:
    """measure() in a process of its own: the abusers' threads live in this one, and their
    share of its interpreter lock must not count as the server's latency."""
    with multiprocessing.get_context("fork").Pool(1) as pool:
        return pool.apply(measure, (path, n, budget))


# --------------------------------------------------------------------------- abusers

class Abuser:
    """Threads that keep some pressure on the server until stop(); bounded by `deadline`."""

    def __init__(self, name: str, deadline: float):
        self.name, self.deadline = name, time.monotonic() + deadline
        self.stopping = threading.Event()
        self.threads: list[threading.Thread] = []
        self.socks: list[socket.socket] = []
        self.lock = threading.Lock()
        self.counts: dict[str, int] = {}

    def count(self, key: str, k: int = 1) -> None:
        with self.lock:
            self.counts[key] = self.counts.get(key, 0) + k

    def running(self) -> bool:
        return not self.stopping.is_set() and time.monotonic() < self.deadline

    def spawn(self, fn, *args) -> None:
        t = threading.Thread(target=fn, args=args, daemon=True)
        t.start()
        self.threads.append(t)

    def stop(self) -> None:
        """No request is sent again from now (those in flight may still be answered)."""
        self.stopping.set()

    def finish(self, grace: float = 10.0) -> None:
        """Wait up to grace seconds for the requests in flight, then cut them."""
        t_end = time.monotonic() + grace
        for t in self.threads:
            t.join(max(0.0, t_end - time.monotonic()))
        with self.lock:
            socks = list(self.socks)
        if socks:
            self.count("cut at the end (still unanswered)", len(socks))
        for s in socks:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        for t in self.threads:
            t.join(5)

    def request_loop(self, method: str, path: str, headers: dict, body: bytes | None, timeout: float) -> None:
        """Send the request again whenever it is answered (or fails), until stopped."""
        while self.running():
            conn = http.client.HTTPConnection(HOST, PORT, timeout=timeout)
            sock = None
            try:
                conn.connect()
                sock = conn.sock
                with self.lock:
                    self.socks.append(sock)
                self.count("sent")
                conn.request(method, path, body=body, headers=headers)
                r = conn.getresponse()
                r.read()
                self.count(f"answered {r.status}")
            except (OSError, http.client.HTTPException) as e:
                self.count(f"failed ({type(e).__name__})" if not self.stopping.is_set()
                           else f"failed after the abuse ended ({type(e).__name__})")
            finally:
                with self.lock:
                    if sock in self.socks:
                        self.socks.remove(sock)
                conn.close()
            if self.running():
                time.sleep(0.2)     # an answer that comes at once must not make a busy loop


def slow_bodies(n: int, deadline: float) -> Abuser:
    """(b): n connections trickling a metrics body one byte every 2-4 s."""
    a = Abuser("slow bodies", deadline)
    head = (f"POST {METRICS_PATH} HTTP/1.1\r\nHost: {HOST}:{PORT}\r\nContent-Type: application/json\r\n"
            f"Content-Length: 100000\r\n\r\n").encode()
    a.open_now = 0

    def loop():
        slots = [{"s": None, "next": 0.0, "retry": 0.0} for _ in range(n)]

        def drop(sl, why):
            a.count(why)
            try:
                sl["s"].close()
            except OSError:
                pass
            sl["s"], sl["retry"] = None, time.monotonic() + 0.5

        while a.running():
            now = time.monotonic()
            for sl in slots:
                if sl["s"] is None and now >= sl["retry"]:
                    try:
                        s = socket.create_connection((HOST, PORT), timeout=2)
                        s.sendall(head + b"{")
                        s.setblocking(False)
                        sl["s"], sl["next"] = s, now + random.uniform(2, 4)
                        a.count("opened")
                    except OSError:
                        a.count("open failed")
                        sl["retry"] = now + 0.5
                elif sl["s"] is not None and now >= sl["next"]:
                    try:
                        sl["s"].send(b" ")
                        a.count("body bytes sent")
                        sl["next"] = now + random.uniform(2, 4)
                    except OSError:
                        drop(sl, "closed by the server")
            live = [sl for sl in slots if sl["s"] is not None]
            a.open_now = len(live)
            try:
                readable, _, _ = select.select([sl["s"] for sl in live], [], [], 0.2)
            except (OSError, ValueError):
                readable = []
            for sl in live:
                if sl["s"] in readable:
                    try:
                        data = sl["s"].recv(4096)
                    except OSError:
                        data = b""
                    if data:
                        line = data.split(b"\r\n", 1)[0].decode(errors="replace")
                        drop(sl, f"answered ({line[:30]})")
                    else:
                        drop(sl, "closed by the server")
        for sl in slots:
            if sl["s"] is not None:
                sl["s"].close()

    a.spawn(loop)
    return a


def blocked_commits(n: int, deadline: float) -> Abuser:
    a = Abuser("blocked commits", deadline)
    h = dict(auth(CFG["writer"]), **{"Content-Type": "application/json"})
    for _ in range(n):
        a.spawn(a.request_loop, "POST", HOT_PATH, h, COMMIT_BODY, deadline)
    return a


def hung_loads(n: int, deadline: float) -> Abuser:
    a = Abuser("hung S3 loads", deadline)
    for _ in range(n):
        a.spawn(a.request_loop, "GET", S3_PATH, auth(CFG["reader"]), None, deadline)
    return a


# --------------------------------------------------------------------------- helpers: SQL, proxy

def psql(sql: str, timeout: float = 30) -> str:
    try:
        return subprocess.run(CFG["psql"] + ["-Atq", "-c", sql], capture_output=True, text=True,
                              timeout=timeout).stdout.strip()
    except subprocess.TimeoutExpired:
        return "?"


def proxy(path: str) -> dict:
    with urllib.request.urlopen(CFG["proxy_ctl"] + path, timeout=5) as r:
        return json.loads(r.read())


def wait_for(pred, limit: float) -> bool:
    t_end = time.monotonic() + limit
    while time.monotonic() < t_end:
        if pred():
            return True
        time.sleep(0.2)
    return pred()


def lock_waiters() -> int:
    v = psql("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'")
    return int(v) if v.isdigit() else -1


# --------------------------------------------------------------------------- the conditions

def run_condition(key: str) -> dict:
    n, budget = int(CFG["requests"]), float(CFG["budget"])
    hold = 2 * budget + 30          # abusers outlive the two measurements, never the run
    notes = []
    abuser = None
    holder = None
    if key == "b":
        abuser = slow_bodies(int(CFG["slow"]), hold)
        time.sleep(3)               # all opened; those the server refused reopened once or more
        notes.append(f"{abuser.open_now} of {CFG['slow']} slow connections open when the measurement started")
    elif key == "c":
        app = "skade_rest_abuse_lock"
        sql = (f"SET application_name = '{app}'; BEGIN; "
               f"SELECT 1 FROM public.iceberg_tables WHERE table_name = '{CFG['hot']}' FOR UPDATE; "
               f"SELECT pg_sleep({int(CFG['lock_sleep'])}); COMMIT;")
        holder = subprocess.Popen(CFG["psql"] + ["-Atq", "-c", sql], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        if not wait_for(lambda: psql(f"SELECT count(*) FROM pg_stat_activity WHERE application_name = '{app}' "
                                     "AND wait_event = 'PgSleep'") == "1", 10):
            notes.append("the lock holder did not start sleeping within 10 s")
        abuser = blocked_commits(int(CFG["commits"]), hold)
        wait_for(lambda: lock_waiters() >= 1, 10)
        time.sleep(1)
        notes.append(f"{CFG['commits']} commits sent; {lock_waiters()} backends waiting on a lock when the "
                     "measurement started")
    elif key == "d":
        psql("SELECT skade.cache_reset()")
        proxy("/reset")
        proxy("/set?mode=hang&match=.metadata.json")
        abuser = hung_loads(int(CFG["hung"]), hold)

        def hung():
            return sum(1 for line, mode in proxy("/stats")["requests"] if mode == "hang")
        wait_for(lambda: hung() >= 1, 10)
        time.sleep(1)
        notes.append(f"{CFG['hung']} clients loading {CFG['s3table']}; {hung()} S3 requests hung at the proxy "
                     "when the measurement started")
    t0 = time.monotonic()
    cfg = measure_apart(CONFIG_PATH, n, budget)
    load = measure_apart(LOAD_PATH, n, budget)
    took = time.monotonic() - t0
    if key == "b":
        notes.append(f"{abuser.open_now} slow connections open when it ended")
    if key == "c":
        notes.append(f"{lock_waiters()} backends waiting on a lock when it ended")
    if key == "d":
        notes.append(f"{sum(1 for _, m in proxy('/stats')['requests'] if m == 'hang')} S3 requests hung in all")
    # the abuse ends: nothing is sent again, the lock is released / the proxy passes, the
    # requests in flight get 10 s to be answered (their statuses are counted), then are cut
    if abuser is not None:
        abuser.stop()
    if key == "c":
        psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'skade_rest_abuse_lock'")
        try:
            holder.wait(10)
        except subprocess.TimeoutExpired:
            holder.kill()
            holder.wait()
    if key == "d":
        proxy("/set?mode=pass")
    if abuser is not None:
        abuser.finish(10.0)
        c = dict(sorted(abuser.counts.items()))
        notes.append(f"{abuser.name}: " + (", ".join(f"{k} {v}" for k, v in c.items()) or "nothing counted"))
    rec = recover(float(CFG["recover"])) if key != "a" else ""
    return {"key": key, "cfg": cfg, "load": load, "notes": notes, "took": took, "recover": rec}


NAMES = {
    "a": "(a) alone",
    "b": "(b) slow bodies",
    "c": "(c) blocked commits",
    "d": "(d) S3 hung",
}


def fmt(x: float) -> str:
    return f"{x:,.2f}" if x < 100 else f"{x:,.0f}"


def main() -> int:
    conds = CFG["conditions"].split()
    say(f"normal client: {CFG['requests']} sequential GET /v1/config, then {CFG['requests']} loadTable of "
        f"{NS}.{CFG['table']} (file://), each on a fresh keep-alive connection; timeout {TIMEOUT:g} s "
        f"(a failed request counts as {TIMEOUT * 1000:,.0f} ms); at most {CFG['budget']} s per measurement")
    warm = [measure(p, 20, 30.0)["failed"] for p in (CONFIG_PATH, LOAD_PATH)]
    say(f"warm-up: 20 config + 20 loadTable (not counted), {sum(warm)} failed")
    res = {}
    for k in conds:
        say(f"\n-- {NAMES[k]}")
        r = run_condition(k)
        res[k] = r
        for m in ("cfg", "load"):
            x = r[m]
            kinds = ", ".join(f"{a} {b}" for a, b in x["kinds"].items()) or "none"
            say(f"   {'config' if m == 'cfg' else 'loadTable'}: p50 {fmt(pct(x['lat'], 0.5))} ms, "
                f"p99 {fmt(pct(x['lat'], 0.99))} ms, max {fmt(max(x['lat']))} ms, connections opened "
                f"{x['connects']}; failed {x['failed']} of {len(x['lat'])} ({kinds})")
        for note in r["notes"]:
            say(f"   {note}")
        say(f"   measured in {r['took']:.1f} s" + (f"; the server recovered in {r['recover']}" if r["recover"] else ""))

    base = res.get("a")
    say("")
    say("| condition             | config p50 | config p99 | load p50 | load p99 | failures | config p99/(a) | load p99/(a) |")
    say("|-----------------------|-----------:|-----------:|---------:|---------:|---------:|---------------:|-------------:|")
    verdicts = []
    for k in conds:
        r = res[k]
        c50, c99 = pct(r["cfg"]["lat"], 0.5), pct(r["cfg"]["lat"], 0.99)
        l50, l99 = pct(r["load"]["lat"], 0.5), pct(r["load"]["lat"], 0.99)
        nf = r["cfg"]["failed"] + r["load"]["failed"]
        tot = len(r["cfg"]["lat"]) + len(r["load"]["lat"])
        if base:
            rc = c99 / pct(base["cfg"]["lat"], 0.99)
            rl = l99 / pct(base["load"]["lat"], 0.99)
            rcs, rls = f"{rc:,.1f}x", f"{rl:,.1f}x"
        else:
            rc = rl = None
            rcs = rls = "-"
        say(f"| {NAMES[k]:21} | {fmt(c50):>10} | {fmt(c99):>10} | {fmt(l50):>8} | {fmt(l99):>8} | "
            f"{f'{nf}/{tot}':>8} | {rcs:>14} | {rls:>12} |")
        if k != "a":
            if rc is None:
                v = "not judged (no (a) in this run)"
            else:
                v = "met" if rc <= 3 and rl <= 3 and c99 < 100 and l99 < 100 else "missed"
            verdicts.append((k, v, c99, rcs, l99, rls, nf, tot))
    say("(ms; a failed request counts at the timeout; ratios are p99 over (a)'s p99 in this run)")
    say("")
    for k, v, c99, rcs, l99, rls, nf, tot in verdicts:
        say(f"target: p99 under abuse within 3x of (a) and below 100 ms in (b)-(d): {NAMES[k]}: {v} "
            f"(config p99 {fmt(c99)} ms = {rcs}, loadTable p99 {fmt(l99)} ms = {rls}; failures {nf}/{tot})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
