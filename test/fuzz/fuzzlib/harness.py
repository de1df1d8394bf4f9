"""The harness: runs one SQL call of a target against the throwaway server
and checks what happened.

Checks, after every call (each is a "finding" kind):
  crash     the connection died, or the server log says a process was
            terminated by a signal / the postmaster reinitialised; then we
            wait for recovery and reconnect every session
  hang      SQLSTATE 57014 (statement_timeout), or a backend that ignores
            the timeout (the watchdog cancels, terminates, then kills it)
  internal  any SQLSTATE of class XX (each distinct function, SQLSTATE and
            message template is reported once)
  memory    the backend's peak RSS (VmHWM) grew more than --mem-limit-mb
            above its baseline during a call, SQLSTATE 53200, or its RssAnon
            grew more than --leak-limit-mb over one connection window
  state     a call that failed changed the catalog: the fingerprint of
            iceberg_tables, iceberg_namespace_properties, commit_log and
            snapshot_map differs, or the L1 pointer mirror answers
            differently from the heap
Each finding is saved, with its input files, under <out>/findings/<n>-<kind>/
(case.json, repro.sql, files/), unless that signature was saved often enough.
"""

from __future__ import annotations

import collections
import json
import os
import re
import shutil
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import psycopg2
import psycopg2.extensions

# results stay text: json/jsonb (and their arrays) are not parsed client-side
_JSONTEXT = psycopg2.extensions.new_type((114, 3802), "JSONTEXT", lambda v, cur: v)
psycopg2.extensions.register_type(_JSONTEXT)
psycopg2.extensions.register_type(psycopg2.extensions.new_array_type((199, 3807), "JSONTEXT[]", _JSONTEXT))
# ... and so do dates and times (skade may return years Python cannot hold)
_TIMETEXT = psycopg2.extensions.new_type((1082, 1083, 1114, 1184, 1266, 1186), "TIMETEXT", lambda v, cur: v)
psycopg2.extensions.register_type(_TIMETEXT)

CRASH_LOG = re.compile(r"terminated by signal|was terminated by exception|PANIC:|TRAP:|"
                       r"terminating any other active server processes|"
                       r"all server processes terminated; reinitializing")
CONNECTION_LOST = {"57P01", "57P02", "57P03", "08000", "08003", "08006"}
# the functions that read metadata or Avro files: skade answers a malformed
# file with 22SK1 and keeps class XX for its own faults, so any XX is a
# finding.  --allow-xx001 accepts XX001 from these functions (builds before
# 22SK1, where XX001 was the documented answer to a corrupt file)
FILE_READERS = {"load_table", "table_metadata", "snapshots", "refs", "history", "load_table_as_of",
                "load_table_at", "manifests", "files", "plan_files"}


@dataclass
class Case:
    """what one execution did: enough to replay it"""
    target: str
    files: list = field(default_factory=list)     # absolute paths it needs
    setup: list = field(default_factory=list)     # SQL run before (errors ignored):
                                                  # text, or (query, params) inlined when saved
    ops: list = field(default_factory=list)       # mutation operators applied
    sql: str = ""
    role: str = "skade_fuzz"                      # who runs it


@dataclass
class Stats:
    execs: int = 0
    seconds: float = 0.0
    states: collections.Counter = field(default_factory=collections.Counter)
    drifts: list = field(default_factory=list)    # kB/call per connection window
    findings: collections.Counter = field(default_factory=collections.Counter)


def template(msg: str) -> str:
    """an error message without its variable parts (quoted names, numbers)"""
    msg = msg.splitlines()[0] if msg else ""
    msg = re.sub(r'"[^"]*"', '"…"', msg)
    return re.sub(r"\d+", "N", msg)[:200]


def read_status(pid: int) -> dict:
    """VmHWM, VmRSS, RssAnon of a process, in kB"""
    out = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in ("VmHWM", "VmRSS", "RssAnon"):
                    out[k] = int(v.split()[0])
    except OSError:
        pass
    return out


class Session:
    """one connection of the fuzz role, per target"""

    def __init__(self, h: "Harness", role: str):
        self.conn = h.connect(role)
        self.conn.autocommit = True
        with self.conn.cursor() as cur:
            cur.execute("SELECT pg_backend_pid()")
            self.pid = cur.fetchone()[0]
        st = read_status(self.pid)
        self.hwm0 = st.get("VmHWM", 0)
        self.calls = 0
        self.rss_warm = None

    def close(self):
        try:
            self.conn.close()
        except Exception:
            pass


class Watchdog(threading.Thread):
    """cancels, then terminates, then kills a backend that runs past its
    deadline (statement_timeout should have stopped it long before)"""

    def __init__(self, h: "Harness"):
        super().__init__(daemon=True)
        self.h = h
        self.lock = threading.Lock()
        self.pid = None
        self.deadline = 0.0
        self.level = 0          # 0 nothing, 1 cancelled, 2 terminated, 3 killed

    def arm(self, pid: int, seconds: float):
        with self.lock:
            self.pid, self.deadline, self.level = pid, time.monotonic() + seconds, 0

    def disarm(self) -> int:
        with self.lock:
            self.pid = None
            return self.level

    def run(self):
        conn = None
        while True:
            time.sleep(0.5)
            with self.lock:
                pid, late = self.pid, time.monotonic() - self.deadline
                level = self.level
            if pid is None or late < 0:
                continue
            want = 1 if late < 10 else 2 if late < 20 else 3
            if want <= level:
                continue
            try:
                if want == 3:
                    os.kill(pid, signal.SIGKILL)
                else:
                    if conn is None or conn.closed:
                        conn = self.h.connect("postgres")
                        conn.autocommit = True
                    with conn.cursor() as cur:
                        fn = "pg_cancel_backend" if want == 1 else "pg_terminate_backend"
                        cur.execute(f"SELECT {fn}(%s)", (pid,))
            except Exception:
                conn = None
            with self.lock:
                if self.pid == pid:
                    self.level = want


class Harness:
    def __init__(self, args, root: Path, scratch: Path):
        self.args = args
        self.root = root
        self.scratch = scratch
        self.out = Path(args.out)
        (self.out / "findings").mkdir(parents=True, exist_ok=True)
        self.fuzz_user = "skade_fuzz"
        self.log_path = Path(args.log)
        self.log_pos = self.log_path.stat().st_size if self.log_path.exists() else 0
        self.stats: dict[str, Stats] = collections.defaultdict(Stats)
        self.sessions: dict[str, Session] = {}
        self.fp = None                     # catalog fingerprint, None = unknown
        self.findings = collections.Counter()          # kind -> count
        self.saved = 0
        self.saved_sigs = collections.Counter()
        self.seen_internal = set()
        self.corrupt_templates = collections.Counter()  # expected XX001 messages
        self.op_crashes = collections.Counter()       # operator family -> crashes
        self.list_lines = []               # one line per finding, for the report
        self.harness_errors = 0
        self.admin = None
        self.start_time = None
        self.watchdog = Watchdog(self)
        self.watchdog.start()
        self.admin_conn()
        self.start_time = self.postmaster_start()

    # ---------------------------------------------------------- connections
    def connect(self, user: str):
        return psycopg2.connect(host="127.0.0.1", port=self.args.port, user=user,
                                dbname="postgres", connect_timeout=10,
                                application_name="skade-fuzz")

    def admin_conn(self):
        if self.admin is None or self.admin.closed:
            self.admin = self.connect("postgres")
            self.admin.autocommit = True
        return self.admin

    def sql(self, query: str, params=None, fetch=True):
        """a bookkeeping statement as the superuser (not an execution)"""
        for attempt in range(2):
            try:
                with self.admin_conn().cursor() as cur:
                    cur.execute(query, params)
                    return cur.fetchall() if fetch and cur.description else None
            except (psycopg2.OperationalError, psycopg2.InterfaceError):
                self.admin = None
                if attempt:
                    raise
                self.wait_for_server()

    def literal(self, query: str, params) -> str:
        """query with params inlined as SQL literals (what repro.sql shows)"""
        with self.admin_conn().cursor() as cur:
            return cur.mogrify(query, params).decode()

    def postmaster_start(self):
        return self.sql("SELECT pg_postmaster_start_time()")[0][0]

    def session(self, target: str, role: str | None = None) -> Session:
        s = self.sessions.get(target)
        if s is not None and (s.conn.closed or s.calls >= self.args.reconnect_every):
            self.end_window(target, s)
            s = None
        if s is None:
            try:
                s = Session(self, role or self.fuzz_user)
            except psycopg2.OperationalError:
                self.wait_for_server()
                s = Session(self, role or self.fuzz_user)
            self.sessions[target] = s
        return s

    def drop_session(self, target: str):
        s = self.sessions.pop(target, None)
        if s:
            s.close()

    def end_window(self, target: str, s: Session):
        """RSS drift of a connection window (kB per call after warm-up)"""
        st = read_status(s.pid)
        warm = self.args.warmup_calls
        if s.rss_warm is not None and s.calls > warm and "RssAnon" in st:
            grew = st["RssAnon"] - s.rss_warm
            self.stats[target].drifts.append(grew / (s.calls - warm))
            if grew > self.args.leak_limit_mb * 1024:
                self.finding("memory", target, "leak", Case(target, sql="(connection window)"),
                             None, f"RssAnon grew {grew} kB over {s.calls - warm} calls", sig="leak")
        self.drop_session(target)

    def wait_for_server(self, seconds: float = 120):
        """until the server accepts connections again (after a crash)"""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            try:
                self.admin = None
                self.admin_conn()
                return True
            except psycopg2.OperationalError:
                time.sleep(0.5)
        raise RuntimeError("the server did not come back")

    def reset_all(self):
        for t in list(self.sessions):
            self.drop_session(t)
        self.admin = None
        self.fp = None

    # ------------------------------------------------------------ the log
    def scan_log(self) -> str:
        """new server log lines that show a crash (empty if none)"""
        try:
            size = self.log_path.stat().st_size
        except OSError:
            return ""
        if size <= self.log_pos:
            self.log_pos = min(self.log_pos, size)
            return ""
        with open(self.log_path, "rb") as f:
            f.seek(self.log_pos)
            text = f.read(size - self.log_pos).decode("utf-8", "replace")
        self.log_pos = size
        hits = [l for l in text.splitlines() if CRASH_LOG.search(l)]
        return "\n".join(hits)

    # ------------------------------------------------------- fingerprints
    def fingerprint(self) -> str:
        return self.sql("SELECT fuzz.fingerprint()")[0][0]

    def mirror_mismatches(self) -> str:
        return self.sql("SELECT fuzz.mirror_mismatches()")[0][0] or ""

    # ----------------------------------------------------------- the call
    def run(self, target: str, func: str, query: str, params=None, case: Case | None = None,
            writes: bool = False, role: str | None = None):
        """one execution; returns (rows or None, sqlstate or None).  role: a
        target that runs as another role keeps it for its whole session"""
        case = case or Case(target)
        st = self.stats[target]
        s = self.session(target, role)
        if self.fp is None:
            self.fp = self.fingerprint()
        try:
            case.sql = self.literal(query, params) if params is not None else query
        except (ValueError, psycopg2.Error):            # e.g. a NUL in a string
            st.states["(client)"] += 1
            return None, "client"
        if len(case.sql) > self.args.max_sql_mb << 20:   # our mutators overdid it
            st.states["(too big)"] += 1
            return None, "client"
        st.execs += 1
        s.calls += 1
        t0 = time.monotonic()
        self.watchdog.arm(s.pid, self.args.statement_timeout + 15)
        rows, err, bad_text = None, None, None
        try:
            with s.conn.cursor() as cur:
                cur.execute(case.sql)
                rows = cur.fetchall() if cur.description else []
        except psycopg2.Error as e:
            err = e
        except UnicodeDecodeError as e:      # the server sent text that is not UTF-8
            bad_text = str(e)
        finally:
            killed = self.watchdog.disarm()
        st.seconds += time.monotonic() - t0
        code = getattr(err, "pgcode", None) if err is not None else None
        lost = bool(s.conn.closed) or code in CONNECTION_LOST or (
            code is None and isinstance(err, (psycopg2.OperationalError, psycopg2.InterfaceError)))
        crash_lines = self.scan_log()
        msg = (getattr(err, "pgerror", None) or str(err) or "").strip() if err is not None else ""
        st.states[code or ("lost" if lost else "bad-utf8" if bad_text else
                           "(client)" if err is not None else "ok")] += 1

        if lost or crash_lines:
            self.after_lost(target, func, case, msg, crash_lines, killed, lost)
            return None, code or "lost"
        if bad_text:
            self.finding("internal", target, func, case, None,
                         f"a result holds text that is not valid UTF-8 (the database encoding): {bad_text}",
                         sig=("utf8", func))
        if killed:
            self.finding("hang", target, func, case, code, f"ignored statement_timeout; {msg}")
        elif code == "57014":
            self.finding("hang", target, func, case, code, msg)
        elif code == "XX001" and func in FILE_READERS and self.args.allow_xx001:
            self.corrupt_templates[(func, template(msg))] += 1
        elif code and code.startswith("XX"):
            key = (func, code, template(msg))
            if key not in self.seen_internal:
                self.seen_internal.add(key)
                self.finding("internal", target, func, case, code, msg, sig=key)
            else:
                self.findings["internal"] += 1
                self.stats[target].findings["internal"] += 1
        elif code == "53200":
            self.finding("memory", target, func, case, code, msg)
        self.check_memory(target, func, case, s)
        if err is not None:
            self.check_state(target, func, case, code, msg, writes)
        elif writes:
            self.fp = None
            if self.stats[target].execs % 50 == 0:
                self.check_mirror(target, func, case)
        return rows, code

    def after_lost(self, target, func, case, msg, crash_lines, killed, lost):
        """the connection died or the log shows a crash: record, recover"""
        time.sleep(0.3)
        self.wait_for_server()
        time.sleep(0.2)
        crash_lines = (crash_lines + "\n" + self.scan_log()).strip()
        if killed:
            self.finding("hang", target, func, case, None,
                         f"backend ignored statement_timeout and was {['', 'cancelled', 'terminated', 'killed'][killed]}; {msg}")
        else:
            for op in case.ops:
                self.op_crashes[op_family(op)] += 1
            where = "" if lost else " (in another process; this call survived)"
            self.finding("crash", target, func, case, None,
                         f"{msg or 'connection lost'}{where}\n--- server log:\n{crash_lines}")
        self.reset_all()
        self.fp = self.fingerprint()

    def check_memory(self, target, func, case, s: Session):
        st = read_status(s.pid)
        if not st:
            return
        if s.calls == self.args.warmup_calls:
            s.rss_warm = st.get("RssAnon")
        grew = st.get("VmHWM", 0) - s.hwm0
        if grew > self.args.mem_limit_mb * 1024:
            for op in case.ops:
                self.op_crashes[op_family(op)] += 1
            self.finding("memory", target, func, case, None,
                         f"backend peak RSS (VmHWM) grew by {grew // 1024} MB during this call "
                         f"(now {st.get('VmHWM', 0) // 1024} MB, RssAnon {st.get('RssAnon', 0) // 1024} MB)")
            self.drop_session(target)          # a new backend: a fresh peak

    def check_state(self, target, func, case, code, msg, writes):
        """a failed call must leave the catalog as it was"""
        fp = self.fingerprint()
        if fp != self.fp:
            self.finding("state", target, func, case, code,
                         f"catalog fingerprint changed by a failed call ({code}: {msg})\n"
                         f"before {self.fp}\nafter  {fp}")
            self.fp = fp
        if writes:
            self.check_mirror(target, func, case)

    def check_mirror(self, target, func, case):
        bad = self.mirror_mismatches()
        if bad:
            self.finding("state", target, func, case, None,
                         f"L1 pointer mirror differs from the heap: {bad}", sig=("mirror", func))

    # ------------------------------------------------------------ findings
    def finding(self, kind, target, func, case: Case, code, msg, sig=None):
        self.findings[kind] += 1
        self.stats[target].findings[kind] += 1
        sig = sig or (kind, target, func, tuple(op_family(o) for o in case.ops[:2]))
        self.saved_sigs[sig] += 1
        first = msg.splitlines()[0] if msg else ""
        if self.saved_sigs[sig] > self.args.save_per_signature or self.saved >= self.args.max_saved:
            return
        self.saved += 1
        d = self.out / "findings" / f"{self.saved:04d}-{kind}"
        try:
            case.setup = [x if isinstance(x, str) else self.literal(*x) for x in case.setup]
        except (ValueError, psycopg2.Error):
            case.setup = [x for x in case.setup if isinstance(x, str)]
        save_case(d, case, self.root, kind=kind, func=func, sqlstate=code, message=msg,
                  seed=self.args.seed)
        line = f"FINDING {kind} [{target}/{func}] {code or ''} {first[:160]} -> {d}"
        self.list_lines.append(line)
        print(line, flush=True)


def op_family(op: str) -> str:
    return re.split(r"[\[(]", op, 1)[0]


def save_case(d: Path, case: Case, root: Path, **info) -> None:
    """case.json, repro.sql and the files a case needs, under d"""
    d.mkdir(parents=True, exist_ok=True)
    rels = []
    for f in dict.fromkeys(case.files):
        for scheme in ("file://localhost/", "file:///", "file:/"):
            if f.startswith(scheme):
                f = "/" + f[len(scheme):]
                break
        p = Path(f)
        try:
            rel = p.relative_to(root)
        except ValueError:
            continue
        if p.is_file():
            (d / "files" / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(p, d / "files" / rel)
            rels.append(str(rel))
    meta = dict(info, target=case.target, role=case.role, root=str(root), files=rels, setup=case.setup,
                sql=case.sql, ops=case.ops)
    (d / "case.json").write_text(json.dumps(meta, indent=1, ensure_ascii=False))
    lines = [f"-- skade fuzz finding: {info.get('kind')} in {case.target}/{info.get('func')}"
             f" {info.get('sqlstate') or ''}",
             f"-- mutations: {', '.join(case.ops) or '-'}",
             f"-- the files under files/ were at {root}/ (paths inside them too);",
             "-- replay with: test/fuzz/run.sh --replay <this directory>",
             "-- (or copy files/ back to that root, with skade.allowed_roots covering it)",
             f"-- as role {case.role} (SET ROLE or connect as it)",
             "\\set ON_ERROR_STOP 0"]
    lines += [s.rstrip(";") + ";" for s in case.setup]
    lines.append(case.sql.rstrip(";") + ";")
    (d / "repro.sql").write_text("\n".join(lines) + "\n", errors="surrogateescape")
    (d / "message.txt").write_text(str(info.get("message") or ""))
