#!/usr/bin/env python3
"""Issue 14 benchmark B3 (bench/rest_plan.sh): planTableScan with a selective filter, skade's
REST port (POST .../plan, planned by skade.plan_table_scan() in the server) vs client-side
planning by pyiceberg 0.12 (RestCatalog on Iceberg's REST fixture, over the same PostgreSQL
and the same iceberg_tables rows: table.scan(row_filter=...).plan_files()), in one run.

    python plan.py tables WAREHOUSE OUT.jsonl NAME:MANIFESTSxPER [...]
        writes each table under WAREHOUSE/NAME (bench/s3.py's plan_table: MANIFESTS fast
        appends of PER data files each, real Avro manifests written by pyiceberg's writers,
        identity partition part = file index in its manifest, 10 rows per file, bounds on
        every column; no Parquet file); one JSON line per table into OUT.jsonl, and
        "NAME<TAB>METADATA-LOCATION" on stdout
    python plan.py measure CONFIG.json
        the measurements; prints the result tables; exits 1 if the planners disagree
    python plan.py py-cold CONFIG.json TABLE FILTER OUT.json
        (internal) one cold pyiceberg plan in this fresh process: timed from an initialized
        RestCatalog (GET /v1/config done, modules imported) through load_table and
        plan_files(); writes the timings, the planned paths and the files it opened to OUT

Every request to skade sends Accept-Encoding: gzip (as pyiceberg's and Java's HTTP clients
do); latencies run from sending the request to the last byte of the answer.
"""
import gzip
import http.client
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROWS = 10  # rows per data file (bench/s3.py's plan_table)


# ------------------------------------------------------------------ filters

def filters(files, manifests):
    """name -> (label, REST expression JSON, pyiceberg expression), for a table of files data
    files in manifests manifests (file k of manifest m holds ids (m*per+k)*10 .. +9)."""
    from pyiceberg import expressions as E
    per = files // manifests
    cut = 100 * ROWS  # the ids of the first 100 files
    return {
        "part": (f"part = 7 (identity partition: 1 file per manifest, {manifests} files)",
                 {"type": "eq", "term": "part", "value": 7}, E.EqualTo("part", 7)),
        "idrange": (f"id < {cut} (column bounds: the first 100 files)",
                    {"type": "lt", "term": "id", "value": cut}, E.LessThan("id", cut)),
        "id1pct": (f"id < {files * ROWS // 100} (column bounds: 1% of the files, {files // 100})",
                   {"type": "lt", "term": "id", "value": files * ROWS // 100},
                   E.LessThan("id", files * ROWS // 100)),
        "idpoint": (f"id = {(files // 2) * ROWS + 3} (column bounds: 1 file)",
                    {"type": "eq", "term": "id", "value": (files // 2) * ROWS + 3},
                    E.EqualTo("id", (files // 2) * ROWS + 3)),
        "partid": (f"part = 7 and id < {cut} (both)",
                   {"type": "and", "left": {"type": "eq", "term": "part", "value": 7},
                    "right": {"type": "lt", "term": "id", "value": cut}},
                   E.And(E.EqualTo("part", 7), E.LessThan("id", cut))),
    } if per > 7 else {}


# ------------------------------------------------------------------- tables

def make_tables(warehouse, out_path, specs):
    sys.path.insert(0, os.path.dirname(HERE))
    import contextlib
    import io

    from s3 import plan_table  # bench/s3.py
    for i, spec in enumerate(specs):
        name, shape = spec.split(":")
        manifests, per = (int(x) for x in shape.split("x"))
        out = io.StringIO()
        t = time.perf_counter()
        with contextlib.redirect_stdout(out):
            plan_table(os.path.join(warehouse, name), f"file://{warehouse}/{name}", manifests, per,
                       table_uuid=0x5ade0000 + i, sid_base=(i + 1) * 10000000)
        info = json.loads(out.getvalue())
        secs = time.perf_counter() - t
        with open(out_path, "a") as f:
            print(json.dumps({"name": name, "metadata": info["metadata"], "manifests": manifests,
                              "files": manifests * per}), file=f)
        print(f"  {name}: {manifests * per:,} data files in {manifests} manifests, written in {secs:.1f} s",
              file=sys.stderr)
        print(f"{name}\t{info['metadata']}")


# ------------------------------------------------------------------ helpers

def pct(xs, p):
    """the p-th percentile (nearest rank) of xs"""
    xs = sorted(xs)
    if not xs:
        return None
    i = min(len(xs), max(1, int(p / 100 * len(xs) + 0.5)))
    return xs[i - 1]


def local_path(uri):
    for pre in ("file://", "file:"):
        if uri.startswith(pre):
            return uri[len(pre):]
    return uri


def rest_catalog(uri, **props):
    from pyiceberg.catalog.rest import RestCatalog
    return RestCatalog("bench", uri=uri, **props)


def fixture_catalog(cfg):
    # the fixture needs no credentials (pyiceberg then sends "Bearer None", which it ignores)
    return rest_catalog(f"http://127.0.0.1:{cfg['fixture_port']}")


def record_opens(table):
    """wrap the table's FileIO: every location pyiceberg opens to read is appended to the list"""
    opened = []
    io = table.io
    orig = io.new_input

    def new_input(location):
        opened.append(location)
        return orig(location)
    io.new_input = new_input
    return opened


def opened_bytes(opened):
    uniq = sorted(set(opened))
    return len(opened), len(uniq), sum(os.path.getsize(local_path(u)) for u in uniq)


class Http:
    """one keep-alive HTTP connection; request() reconnects once if the server closed it"""

    def __init__(self, port, headers):
        self.port, self.headers, self.conn = port, headers, None

    def request(self, method, path, body=None, extra=None):
        h = dict(self.headers, **(extra or {}))
        for attempt in (0, 1):
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=600)
            try:
                t = time.perf_counter()
                self.conn.request(method, path, body=body, headers=h)
                r = self.conn.getresponse()
                raw = r.read()
                ms = (time.perf_counter() - t) * 1000
                return r.status, dict(r.getheaders()), raw, ms
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                self.conn.close()
                self.conn = None
                if attempt:
                    raise

    @staticmethod
    def text(headers, raw):
        if headers.get("Content-Encoding", headers.get("content-encoding")) == "gzip":
            raw = gzip.decompress(raw)
        return raw.decode()


# ------------------------------------------------------------------ py-cold

def py_cold(cfg_path, table, fname, out_path):
    """one cold client-side plan, in this fresh process"""
    cfg = json.load(open(cfg_path))
    t = next(x for x in cfg["tables"] if x["name"] == table)
    label, _, expr = filters(t["files"], t["manifests"])[fname]
    cat = fixture_catalog(cfg)
    t0 = time.perf_counter()
    tab = cat.load_table(("b", table))
    t1 = time.perf_counter()
    opened = record_opens(tab)
    paths = [task.file.file_path for task in tab.scan(row_filter=expr).plan_files()]
    t2 = time.perf_counter()
    n_open, n_files, nbytes = opened_bytes(opened)
    json.dump({"load_ms": (t1 - t0) * 1000, "plan_ms": (t2 - t1) * 1000, "total_ms": (t2 - t0) * 1000,
               "paths": sorted(paths), "opens": n_open, "opened_files": n_files, "opened_bytes": nbytes},
              open(out_path, "w"))


# ------------------------------------------------------------------ measure

class Bench:
    def __init__(self, cfg_path):
        import psycopg2
        self.cfg_path = cfg_path
        self.cfg = json.load(open(cfg_path))
        self.sql = psycopg2.connect(host="127.0.0.1", port=self.cfg["pg_port"], user="postgres",
                                    dbname="postgres")
        self.sql.autocommit = True
        self.skade = Http(self.cfg["rest_port"], {"Authorization": "Bearer " + self.cfg["token"],
                                                  "Accept-Encoding": "gzip",
                                                  "Content-Type": "application/json"})
        self.failures = []
        self.summary = []

    def q(self, sql):
        with self.sql.cursor() as c:
            c.execute(sql)
            return c.fetchone() if c.description else None

    # ---- skade
    def plan_path(self, table):
        return f"/v1/{self.cfg['warehouse']}/namespaces/b/tables/{table}/plan"

    def skade_plan(self, table, jf, extra=None):
        body = json.dumps({"filter": jf})
        st, hd, raw, ms = self.skade.request("POST", self.plan_path(table), body, extra)
        if st != 200:
            raise SystemExit(f"skade POST {self.plan_path(table)} {body}: status {st}: {raw[:500]!r}")
        return ms, hd, raw

    def skade_cold(self, table, jf, runs):
        """cache_reset(), then one plan (the worker's session itself is warm: it has planned
        before); checks the plan missed L0.5 for every manifest"""
        out, misses = [], []
        for _ in range(runs):
            self.q("SELECT skade.cache_reset()")
            ms, _, _ = self.skade_plan(table, jf)
            out.append(ms)
            misses.append(self.q("SELECT manifest_misses FROM skade.cache_stats()")[0])
        return out, min(misses)

    def skade_warm(self, table, jf, runs):
        self.skade_plan(table, jf)
        out = [self.skade_plan(table, jf)[0] for _ in range(runs)]
        st = self.q("SELECT manifest_hits, manifest_misses, manifest_evictions, manifest_entries, "
                    "manifest_bytes FROM skade.cache_stats()")
        return out, st

    def skade_sql(self, table, jf, runs):
        """where skade's time goes, warm, in a SQL session (no HTTP): plan_files() alone (rows
        counted in the server), and plan_table_scan() (plan_files + the answer's JSON)"""
        out = {}
        for key, sql in (("plan_files", "SELECT count(*) FROM skade.plan_files('b', %s, %s::jsonb)"),
                         ("plan_table_scan", "SELECT length(skade.plan_table_scan('b', %s, %s::jsonb)::text)")):
            arg = json.dumps(jf if key == "plan_files" else {"filter": jf})
            ms = []
            with self.sql.cursor() as c:
                for i in range(runs + 1):
                    t = time.perf_counter()
                    c.execute(sql, (table, arg))
                    c.fetchone()
                    if i:
                        ms.append((time.perf_counter() - t) * 1000)
            out[key] = pct(ms, 50)
        return out

    def skade_answer(self, table, jf):
        """paths planned, and the answer's size gzip (as sent to a client that accepts it) and not"""
        _, hd, raw = self.skade_plan(table, jf)
        doc = json.loads(Http.text(hd, raw))
        if doc.get("status") != "completed":
            raise SystemExit(f"skade's plan is not completed: {str(doc)[:300]}")
        if doc.get("delete-files"):
            self.failures.append(f"{table}: skade answered {len(doc['delete-files'])} delete files (none exist)")
        paths = sorted(t["data-file"]["file-path"] for t in doc["file-scan-tasks"])
        _, hd2, raw2 = self.skade_plan(table, jf, {"Accept-Encoding": "identity"})
        return paths, len(raw), hd.get("Content-Encoding") == "gzip", len(raw2)

    # ---- pyiceberg
    def py_cold(self, table, fname, runs):
        out = []
        res = os.path.join(self.cfg["work"], "py-cold.json")
        for _ in range(runs):
            subprocess.run([sys.executable, __file__, "py-cold", self.cfg_path, table, fname, res], check=True)
            out.append(json.load(open(res)))
        return out

    def py_warm(self, table, expr, runs):
        tab = fixture_catalog(self.cfg).load_table(("b", table))
        list(tab.scan(row_filter=expr).plan_files())
        out = []
        for _ in range(runs):
            t = time.perf_counter()
            list(tab.scan(row_filter=expr).plan_files())
            out.append((time.perf_counter() - t) * 1000)
        return out

    def py_server_side(self, table, expr, runs):
        """pyiceberg 0.12 planning through skade (scan-planning-mode=server), warm: what a client
        sees end to end (its HTTP, pydantic parse of the answer, FileScanTask objects)"""
        try:
            cat = rest_catalog(f"http://127.0.0.1:{self.cfg['rest_port']}", token=self.cfg["token"],
                               warehouse=self.cfg["warehouse"], **{"scan-planning-mode": "server"})
            tab = cat.load_table(("b", table))
            n = len(list(tab.scan(row_filter=expr).plan_files()))
            out = []
            for _ in range(runs):
                t = time.perf_counter()
                list(tab.scan(row_filter=expr).plan_files())
                out.append((time.perf_counter() - t) * 1000)
            return out, n, None
        except Exception as e:  # informational row only
            return None, None, f"{type(e).__name__}: {str(e)[:200]}"

    def fixture_load_bytes(self, table):
        """the fixture's loadTable answer, gzip (what pyiceberg's requests asks for) and not"""
        fx = Http(self.cfg["fixture_port"], {})
        sizes = {}
        for enc in ("gzip", "identity"):
            st, _, raw, _ = fx.request("GET", f"/v1/namespaces/b/tables/{table}", extra={"Accept-Encoding": enc})
            if st != 200:
                raise SystemExit(f"fixture loadTable {table}: status {st}: {raw[:300]!r}")
            sizes[enc] = len(raw)
        return sizes

    # ---- one case
    def case(self, t, fname):
        runs = self.cfg["runs_big" if t["files"] >= 50000 else "runs"]
        label, jf, expr = filters(t["files"], t["manifests"])[fname]
        name = t["name"]
        print(f"\n  . {name}, {label}: measuring", file=sys.stderr, flush=True)

        sk_paths, sk_gz, gz_on, sk_id = self.skade_answer(name, jf)
        sk_cold, misses = self.skade_cold(name, jf, runs["skade_cold"])
        if misses < t["manifests"]:
            self.failures.append(f"{name}, {label}: a cold plan missed L0.5 only {misses} times "
                                 f"({t['manifests']} manifests): not cold")
        sk_warm, cache = self.skade_warm(name, jf, runs["skade_warm"])
        in_sql = self.skade_sql(name, jf, max(3, runs["skade_warm"] // 10))
        print(f"    skade cold p50 {pct(sk_cold, 50):.1f} ms, warm p50 {pct(sk_warm, 50):.2f} ms",
              file=sys.stderr, flush=True)
        pc = self.py_cold(name, fname, runs["py_cold"])
        py_cold_ms = [r["total_ms"] for r in pc]
        py_warm = self.py_warm(name, expr, runs["py_warm"])
        print(f"    pyiceberg cold p50 {pct(py_cold_ms, 50):.0f} ms, warm p50 {pct(py_warm, 50):.0f} ms",
              file=sys.stderr, flush=True)
        srv, srv_n, srv_err = self.py_server_side(name, expr, runs["py_warm"])
        fx = self.fixture_load_bytes(name)

        # the two planners must plan the same data files
        py_paths = pc[0]["paths"]
        agree = py_paths == sk_paths and all(r["paths"] == py_paths for r in pc)
        if not agree:
            only_sk = sorted(set(sk_paths) - set(py_paths))
            only_py = sorted(set(py_paths) - set(sk_paths))
            self.failures.append(f"{name}, {label}: PLANS DIFFER: skade {len(sk_paths)} files, pyiceberg "
                                 f"{len(py_paths)}; only skade: {only_sk[:3]}; only pyiceberg: {only_py[:3]}")
        if srv_n is not None and srv_n != len(sk_paths):
            self.failures.append(f"{name}, {label}: pyiceberg through skade's plan endpoint got {srv_n} "
                                 f"tasks, skade's answer has {len(sk_paths)}")

        p = pc[0]
        title = (f"B3 planTableScan, {name}: {t['files']:,} data files in {t['manifests']} manifests "
                 f"({t['manifests']} snapshots); filter {label}")
        print(f"\n{title}")
        print(f"| {'metric':<40} | {'skade':>10} | {'pyiceberg':>10} | {'ratio':>7} | target")
        print(f"|{'-' * 42}|{'-' * 12}|{'-' * 12}|{'-' * 9}|{'-' * 26}")

        def row(metric, s, b, target="", fmt="{:.1f}"):
            r = f"{b / s:.1f}x" if s and b else "-"
            if target and s and b:
                target += "  -> " + ("met" if b / s >= 20 else "NOT met")
            fs = fmt.format(s) if s is not None else "-"
            fb = fmt.format(b) if b is not None else "-"
            print(f"| {metric:<40} | {fs:>10} | {fb:>10} | {r:>7} | {target}")
        f2 = "{:.2f}"
        row(f"warm p50 (ms; skade n={len(sk_warm)}, py n={len(py_warm)})", pct(sk_warm, 50), pct(py_warm, 50),
            ">= 20x", f2)
        row("warm p99 (ms)", pct(sk_warm, 99), pct(py_warm, 99), "", f2)
        row(f"cold p50 (ms; skade n={len(sk_cold)}, py n={len(pc)})", pct(sk_cold, 50), pct(py_cold_ms, 50))
        row("cold p99 (ms)", pct(sk_cold, 99), pct(py_cold_ms, 99))
        print(f"|   skade warm in SQL (no HTTP): plan_files() {in_sql['plan_files']:.2f} ms (count(*) of its rows), "
              f"plan_table_scan() {in_sql['plan_table_scan']:.2f} ms (the same + the answer's JSON) (p50s)")
        print(f"|   pyiceberg cold = load_table {pct([r['load_ms'] for r in pc], 50):.1f} ms + plan_files "
              f"{pct([r['plan_ms'] for r in pc], 50):.1f} ms (p50s)")
        if srv:
            row("pyiceberg via skade's /plan, warm p50", pct(srv, 50), pct(py_warm, 50), "", f2)
        else:
            print(f"| {'pyiceberg via skade /plan':<40} | {'n/a':>10} | {'':>10} | {'':>7} | {srv_err}")
        verdict = "same set" if agree else "DIFFER"
        print(f"| {'data files planned':<40} | {len(sk_paths):>10} | {len(py_paths):>10} | {'':>7} | {verdict}")
        skade_bytes = f"{sk_gz:,}" + (" gz" if gz_on else "")
        py_bytes = fx["gzip"] + p["opened_bytes"]
        print(f"| {'bytes over the wire / read':<40} | {skade_bytes:>10} | {py_bytes:>10,} | "
              f"{py_bytes / sk_gz:>6.0f}x |")
        print(f"|   skade answer without gzip: {sk_id:,} B; pyiceberg: fixture loadTable {fx['gzip']:,} B gzip "
              f"({fx['identity']:,} B plain) + {p['opened_files']} files opened ({p['opens']} opens): "
              f"{p['opened_bytes']:,} B")
        hits, miss, ev, ent, mb = cache
        print(f"|   skade cold: {misses} L0.5 misses per plan ({t['manifests']} manifests); warm: L0.5 holds "
              f"{ent} entries, {mb / 1048576:.1f} MiB, {ev} evictions")
        self.summary.append((name, t["files"], label, pct(sk_warm, 50), pct(py_warm, 50), pct(sk_cold, 50),
                             pct(py_cold_ms, 50), len(sk_paths), agree, sk_gz, py_bytes))

    def run(self):
        # the worker's session warm (PostgreSQL's catalog caches, plan_table_scan compiled)
        t0 = self.cfg["tables"][0]
        self.skade_plan(t0["name"], filters(t0["files"], t0["manifests"])[self.cfg["filters"][0]][1])
        for t in self.cfg["tables"]:
            fl = filters(t["files"], t["manifests"])
            for fname in self.cfg["filters"]:
                if fname not in fl:
                    raise SystemExit(f"unknown filter {fname}: one of {' '.join(fl)}")
                self.case(t, fname)
        print("\nSummary (p50 ms; ratio = pyiceberg / skade; bytes = skade's answer / what pyiceberg reads)")
        print(f"| {'table':<8} | {'files':>7} | {'filter':<12} | {'skade warm':>10} | {'py warm':>9} | "
              f"{'warm x':>7} | {'skade cold':>10} | {'py cold':>9} | {'cold x':>7} | {'planned':>7} | "
              f"{'bytes s/py':>18}")
        for name, files, label, sw, pw, sc, pcm, n, agree, sb, pb in self.summary:
            print(f"| {name:<8} | {files:>7,} | {label.split(' (')[0][:12]:<12} | {sw:>10.2f} | {pw:>9.1f} | "
                  f"{pw / sw:>6.1f}x | {sc:>10.1f} | {pcm:>9.1f} | {pcm / sc:>6.1f}x | "
                  f"{n:>5} {'ok' if agree else '!!'} | {sb:>7,}/{pb:<10,}")
        warm_ok = all(pw / sw >= 20 for _, _, _, sw, pw, *_ in self.summary)
        print(f"\nwarm target (skade >= 20x faster than pyiceberg's client-side plan): "
              f"{'met in every case' if warm_ok else 'NOT met in every case'}")
        if self.failures:
            print("\nFAILURES:")
            for f in self.failures:
                print("  " + f)
            return 1
        print("plans: skade and pyiceberg planned the same data files in every case")
        return 0


def main():
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "tables":
        make_tables(os.path.abspath(sys.argv[2]), sys.argv[3], sys.argv[4:])
    elif cmd == "measure":
        sys.exit(Bench(sys.argv[2]).run())
    elif cmd == "py-cold":
        py_cold(*sys.argv[2:6])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
