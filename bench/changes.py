"""Latency from a commit to a consumer having the change (bench/changes.sh).

One writer commits a change every 20 ms (skade.register_table, autocommit) and notes the
wall-clock time its COMMIT returned, by seq.  Two consumers run beside it, each on its own
connection: "listen" waits on LISTEN skade_changes (select() on the socket) and, when woken,
reads skade.changes() from its position; "poll" runs the plain SELECT of the log every
POLL_MS ms.  Each notes when it received each seq; the latency is that time minus the commit's.
Prints p50 and p99 (ms) of each and their ratio."""
import select
import sys
import threading
import time

import psycopg2
import psycopg2.extensions

dsn, secs, poll_ms = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
committed = {}
got = {"listen": {}, "poll": {}}
stop = threading.Event()


def connect():
    c = psycopg2.connect(dsn)
    c.set_isolation_level(psycopg2.extensions.ISOLATION_LEVEL_AUTOCOMMIT)
    return c


def start_position(cur):
    cur.execute("SELECT coalesce(max(seq), 0) FROM skade.commit_log")
    return cur.fetchone()[0]


def writer():
    c = connect()
    cur = c.cursor()
    i = 0
    while not stop.is_set():
        i += 1
        cur.execute("SELECT skade.register_table('b', %s, 'file:///bench/w.metadata.json')", ("w%d" % i,))
        t = time.time()
        cur.execute("SELECT max(seq) FROM skade.commit_log WHERE catalog_name = 'skade' AND table_namespace = 'b'"
                    " AND table_name = %s", ("w%d" % i,))
        committed[cur.fetchone()[0]] = t
        time.sleep(0.02)


def listen(pos):
    c = connect()
    cur = c.cursor()
    cur.execute("LISTEN skade_changes")
    while not stop.is_set():
        if select.select([c], [], [], 0.5) == ([], [], []):
            continue
        c.poll()
        c.notifies.clear()
        cur.execute("SELECT seq FROM skade.changes(%s, 1000)", (pos,))
        now = time.time()
        for (seq,) in cur.fetchall():
            got["listen"][seq] = now
            pos = seq


def poll(pos):
    c = connect()
    cur = c.cursor()
    while not stop.is_set():
        cur.execute("SELECT seq FROM skade.commit_log WHERE seq > %s ORDER BY seq LIMIT 1000", (pos,))
        now = time.time()
        for (seq,) in cur.fetchall():
            got["poll"][seq] = now
            pos = seq
        time.sleep(poll_ms / 1000.0)


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100.0 * (len(values) - 1))))]


c0 = connect()
pos = start_position(c0.cursor())
threads = [threading.Thread(target=f, args=a) for f, a in ((writer, ()), (listen, (pos,)), (poll, (pos,)))]
for t in threads:
    t.start()
time.sleep(secs)
stop.set()
for t in threads:
    t.join()
res = {}
for name in ("listen", "poll"):
    lat = [(got[name][s] - committed[s]) * 1000.0 for s in committed if s in got[name]]
    missing = sum(1 for s in committed if s not in got[name])
    res[name] = (pct(lat, 50), pct(lat, 99))
    label = "LISTEN + changes()" if name == "listen" else "plain poll every %d ms" % poll_ms
    print("%-26s %d changes, p50 %.1f ms, p99 %.1f ms (%d not yet received at the end)"
          % (label, len(lat), res[name][0], res[name][1], missing))
print("latency poll/listen: p50 %.1fx, p99 %.1fx"
      % (res["poll"][0] / max(res["listen"][0], 0.001), res["poll"][1] / max(res["listen"][1], 0.001)))
