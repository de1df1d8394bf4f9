"""S3 faults under skade (run by test/faults/s3.sh).

Usage: faults_s3.py PG_PORT CONTROL_URL STAGE BASE

skade's S3 endpoint is test/s3/fault_proxy.py (its control server at
CONTROL_URL) in front of moto.  STAGE/fixtures.json (test/s3/fixtures_s3.py)
names py/fixtures/events: a local copy (the reference) and copies
s3://skade-f/in/rN/... that nothing has read yet, one per scenario, so every
scenario reads uncached objects.  The server allows s3://skade-f/in (write:
s3://skade-f/in/w), connect timeout 1 s, request timeout 3 s, 2 retries.

For each fault: load_table on an uncached metadata file, then plan_files on
uncached manifests, must either succeed after retries (transient 5xx, 503,
a truncated or altered body once) or fail with the SQLSTATE the contract
gives (403 -> 42501, 404 -> 58P01, throttling (503 SlowDown) -> 53000; an
outage -- other 5xx, refused connections, timeouts, a connection dropped
mid-body -> 08006; bodies that disagree with their length or ETag -> 58030)
with the S3 error code in DETAIL; once the fault clears, both answer
exactly as the local copy (nothing was cached wrongly).  A hung transfer
yields to statement_timeout and pg_cancel_backend (57014; the backend
lives on, its next read works, and cut requests leave no socket or wait set
open).  Writes (update_table, create_table) under PUT faults either
commit after retries (also when the answer to a PUT that worked is lost) or
fail with the pointer unchanged.  Locations outside skade.allowed_roots are
42501 with no request made, and a wrong key is 42501 SignatureDoesNotMatch.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import urllib.request
from pathlib import Path

import psycopg2

PORT, CTL, STAGE, BASE = int(sys.argv[1]), sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4])
PROXY_HOST = ""     # host:port skade asks (skade.s3_endpoint's, path style), set in main()
IDX = json.loads((STAGE / "fixtures.json").read_text())
LOCAL = IDX["local"]
T = next(t for t in IDX["tables"] if t["dir"] == "py/fixtures/events")
PREFIXES = sorted(IDX["extra"].values())      # s3://skade-f/in/rN
fails = 0


def check(ok: bool, what: str, detail: str = "") -> bool:
    global fails
    print(("ok - " if ok else "not ok - ") + what + ("" if ok or not detail else f"\n    {detail[:1500]}"))
    fails += 0 if ok else 1
    return ok


def ctl(path: str):
    with urllib.request.urlopen(CTL + path, timeout=10) as r:
        return json.loads(r.read())


def fault(mode: str, match: str = "", count: int = -1, delay: float = 0):
    ctl(f"/set?mode={mode}&match={urllib.request.quote(match)}&count={count}&delay={delay}")
    ctl("/reset")


def requests(match: str = "") -> list:
    return [r for r in ctl("/stats")["requests"] if match in r[0]]


def connect():
    c = psycopg2.connect(host="127.0.0.1", port=PORT, user="postgres", dbname="postgres")
    c.autocommit = True
    return c


conn = connect()


def run(sql: str, params=(), c=None):
    """("ok", rows) or ("err", sqlstate, message, detail)"""
    cur = (c or conn).cursor()
    try:
        cur.execute(sql, params)
        return ("ok", [tuple(None if v is None else str(v) for v in r) for r in cur.fetchall()]
                if cur.description else [])
    except psycopg2.Error as e:
        return ("err", e.pgcode, e.diag.message_primary, e.diag.message_detail or "")
    finally:
        cur.close()


def one(sql: str, params=(), c=None):
    r = run(sql, params, c)
    if r[0] != "ok":
        raise RuntimeError(f"{sql}: {r}")
    return r[1][0][0] if r[1] else None


def norm(rows, root):
    return [tuple(v.replace(root, "<root>") if isinstance(v, str) else v for v in r) for r in rows]


LOAD = "SELECT metadata_location, metadata::text FROM skade.load_table('f', %s)"
PLAN = "SELECT * FROM skade.plan_files('f', %s)"


def reference():
    one("SELECT skade.register_table('ref', 'events', %s)", (f"{LOCAL}/{T['dir']}/{T['metadata']}",))
    return (norm(run(LOAD.replace("'f'", "'ref'"), ("events",))[1], LOCAL),
            norm(run(PLAN.replace("'f'", "'ref'"), ("events",))[1], LOCAL))


REF_LOAD = REF_PLAN = None
_next = iter(range(len(PREFIXES)))


def fresh() -> tuple[str, str]:
    """a table over a copy nothing has read: (its name, its root).  The commit-log
    trigger reads new S3 metadata at commit; registering with the copy outside the
    roots for that transaction keeps it unread, for the read path to meet the fault."""
    i = next(_next)
    root = PREFIXES[i]
    name = f"t{i}"
    one("BEGIN; SET LOCAL skade.allowed_roots = '/nonexistent';"
        " SELECT skade.register_table('f', %s, %s); COMMIT; SELECT 1",
        (name, f"{root}/{T['dir']}/{T['metadata']}"))
    return name, root


def expect(r, want, what: str, code: str = ""):
    """r answers as wanted: "ok", or an error with SQLSTATE want and code in DETAIL"""
    if want == "ok":
        return check(r[0] == "ok", what, str(r))
    return check(r[0] == "err" and r[1] == want and code in (r[3] or ""),
                 f"{what}: {want}" + (f" with {code} in DETAIL" if code else ""), str(r))


def true_content(name: str, root: str, what: str):
    fault("pass")
    got_l = norm(run(LOAD, (name,))[1], root)
    got_p = norm(run(PLAN, (name,))[1], root)
    check(got_l == REF_LOAD and got_p == REF_PLAN, f"{what}: after the fault, load_table and plan_files "
          "answer as the local copy (nothing cached wrongly)",
          f"load same: {got_l == REF_LOAD}, plan same: {got_p == REF_PLAN} ({len(got_p)} vs {len(REF_PLAN)} rows)")


# (label, mode, count, delay, expected for load_table, for plan_files, S3 code in DETAIL,
#  the attempts the proxy must see for the faulted object, or None)
READ_FAULTS = [
    ("503 SlowDown twice, then pass", "503", 2, 0, "ok", "ok", "", 3),
    ("500 once, then pass", "500", 1, 0, "ok", "ok", "", 2),
    ("a truncated body once, then pass", "truncate", 1, 0, "ok", "ok", "", 2),
    ("a wrong ETag once, then pass", "badetag", 1, 0, "ok", "ok", "", 2),
    ("a slow answer (0.5 s)", "delay", -1, 0.5, "ok", "ok", "", None),
    ("503 SlowDown always", "503", -1, 0, "53000", "53000", "SlowDown", 3),
    ("500 always", "500", -1, 0, "08006", "08006", "InternalError", 3),
    ("403", "403", -1, 0, "42501", "42501", "AccessDenied", 1),
    ("404", "404", -1, 0, "58P01", "58P01", "NoSuchKey", 1),
    ("a truncated body always (the connection closed mid-body)", "truncate", -1, 0, "08006", "08006", "", 3),
    ("a short body (length and ETag disagree)", "shortbody", -1, 0, "58030", "58030", "", 3),
    ("a wrong ETag always", "badetag", -1, 0, "58030", "58030", "", 3),
    ("an answer slower than skade.s3_request_timeout", "delay", -1, 4, "08006", "08006", "", 3),
    ("the server down (connections refused)", "refuse", -1, 0, "08006", "08006", "", None),
]


def read_faults():
    for label, mode, count, delay, want_l, want_p, code, attempts in READ_FAULTS:
        name, root = fresh()
        key = root[len("s3://skade-f"):] + "/" + T["dir"] + "/" + T["metadata"]
        fault(mode, ".metadata.json", count, delay)
        r = run(LOAD, (name,))
        expect(r, want_l, f"{label}: load_table", code)
        if want_l == "08006":
            check(PROXY_HOST in (r[2] or "") and "aws_secret" not in str(r).lower(),
                  f"{label}: the message names the host asked ({PROXY_HOST})", str(r))
        if attempts:
            n = len(requests(key))
            check(n == attempts, f"{label}: {attempts} request(s) for the metadata file", f"{n}")
        fault("pass")
        run(LOAD, (name,))
        fault(mode, ".avro", count, delay)
        r = run(PLAN, (name,))
        expect(r, want_p, f"{label}: plan_files", code)
        true_content(name, root, label)
    # a short body without ETag: nothing tells the transfer it is short;
    # the readers' own checks must (the JSON parser, manifest_length)
    name, root = fresh()
    fault("shortbody_noetag", ".metadata.json")
    r = run(LOAD, (name,))
    check(r[0] == "err", "a short body without ETag: load_table fails (the JSON does not parse)", str(r))
    fault("pass")
    run(LOAD, (name,))
    fault("shortbody_noetag", "-m")      # manifests, not the list
    r = run(PLAN, (name,))
    check(r[0] == "err" and r[1] == "22SK1", "a short manifest without ETag: plan_files fails "
          "with 22SK1 (manifest_length)", str(r))
    true_content(name, root, "a short body without ETag")


def hangs():
    # statement_timeout: the hung GET yields (57014, not the 3 s request timeout
    # made longer here), the backend lives on
    name, root = fresh()
    c = connect()
    run("SET skade.s3_request_timeout = '60s'", c=c)
    run("SET statement_timeout = '1s'", c=c)
    fault("hang", ".metadata.json")
    r = run(LOAD, (name,), c=c)
    expect(r, "57014", "a hung GET: statement_timeout cancels load_table")
    fault("pass")
    run("SET statement_timeout = 0", c=c)
    check(run("SELECT 1", c=c) == ("ok", [("1",)]), "the backend lives on")
    # pg_cancel_backend from another session, once the request hangs
    fault("hang", ".avro")
    run(LOAD, (name,), c=c)
    pid = one("SELECT pg_backend_pid()", c=c)
    box = {}
    th = threading.Thread(target=lambda: box.update(r=run(PLAN, (name,), c=c)))
    th.start()
    for _ in range(100):
        if requests(".avro"):
            break
        time.sleep(0.1)
    time.sleep(0.2)
    one("SELECT pg_cancel_backend(%s)", (pid,))
    th.join(30)
    check(not th.is_alive(), "a hung plan_files returns after pg_cancel_backend")
    expect(box.get("r", ("none",)), "57014", "a hung GET: pg_cancel_backend cancels plan_files")
    check(run("SELECT 1", c=c) == ("ok", [("1",)]), "the backend lives on")
    true_content(name, root, "a hung transfer")
    c.close()
    hung_then_healthy()


def fds(pid: str) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def hung_then_healthy():
    """statement_timeout = 500ms cuts a GET to a hung endpoint (57014, not the
    60 s request timeout: the wait loop yields to the timeout's latch and
    checks for interrupts), and the same session's next read, once the
    endpoint is healthy, asks it and answers right.  Cut again and again,
    the backend's descriptors do not grow: every cut request's curl handle
    (its socket) and wait set were freed."""
    c = connect()
    pid = one("SELECT pg_backend_pid()", c=c)
    run("SET skade.s3_request_timeout = '60s'", c=c)
    run("SET statement_timeout = '500ms'", c=c)
    x, x_root = fresh()
    x_key = x_root[len("s3://skade-f"):] + "/" + T["dir"] + "/" + T["metadata"]
    fault("hang", x_key)
    t0 = time.monotonic()
    r = run(LOAD, (x,), c=c)
    print(f"# cut after {(time.monotonic() - t0) * 1000:.0f} ms (statement_timeout 500 ms)")
    expect(r, "57014", "statement_timeout = 500ms, a hung GET: load_table")
    check(len(requests(x_key)) == 1, "the hung GET was asked", str(requests()))
    fault("pass")
    r = run(LOAD, (x,), c=c)
    check(r[0] == "ok" and norm(r[1], x_root) == REF_LOAD and len(requests(x_key)) == 1,
          "the next read in the same session asks the healthy endpoint and answers right", str(r)[:300])
    before = fds(pid)
    y, y_root = fresh()
    y_key = y_root[len("s3://skade-f"):] + "/" + T["dir"] + "/" + T["metadata"]
    fault("hang", y_key)
    cut = [run(LOAD, (y,), c=c) for _ in range(5)]
    check(all(r[0] == "err" and r[1] == "57014" for r in cut) and len(requests(y_key)) == 5,
          "five more hung GETs: each cut by statement_timeout (57014)", str(cut)[:300])
    fault("pass")
    r = run(LOAD, (y,), c=c)
    check(r[0] == "ok" and norm(r[1], y_root) == REF_LOAD, "and the next read works again", str(r)[:300])
    after = fds(pid)
    check(after <= before, f"the backend's open descriptors did not grow ({before} -> {after})")
    run("SET statement_timeout = 0", c=c)
    c.close()


def pointer(ns: str, t: str) -> str:
    return one("SELECT metadata_location FROM skade.load_table(%s, %s, 'none')", (ns, t))


SETPROP = """SELECT skade.update_table('wf', 't', '[]',
             '[{"action": "set-properties", "updates": {"k": "%s"}}]')"""


def write_faults():
    one("""SELECT skade.create_namespace('wf', '{"location": "s3://skade-f/in/w/wf"}')""")
    schema = '{"fields": [{"id": 1, "name": "id", "required": true, "type": "long"}]}'
    fault("503", "PUT", 2)
    r = run("SELECT skade.create_table('wf', 't', %s)", (schema,))
    expect(r, "ok", "create_table through 503 SlowDown twice")
    check(len(requests("PUT")) == 3, "retried: 3 PUTs", str(requests("PUT")))
    for i, (label, mode, count, want, code) in enumerate([
            ("500 once", "500", 1, "ok", ""),
            ("a PUT whose answer is lost (the object exists on retry: 412, ours)", "lost", 1, "ok", ""),
            ("403", "403", -1, "42501", "AccessDenied"),
            ("500 always", "500", -1, "08006", "InternalError"),
            ("503 SlowDown always", "503", -1, "53000", "SlowDown"),
            ("the server down", "refuse", -1, "08006", "")]):
        before = pointer("wf", "t")
        fault(mode, "PUT", count)
        r = run(SETPROP % i)
        expect(r, want, f"update_table, {label}", code)
        if mode == "lost":
            seen = [r[0].split()[0] for r in requests("/wf/t/metadata/")]
            check(seen == ["PUT", "PUT", "GET"], f"update_table, {label}: PUT, PUT (412), GET to compare",
                  str(requests()))
        fault("pass")
        after = pointer("wf", "t")
        if want == "ok":
            check(after != before and run("SELECT skade.table_metadata('wf', 't')::jsonb->'properties'->>'k'")
                  == ("ok", [(str(i),)]), f"update_table, {label}: committed")
        else:
            check(after == before, f"update_table, {label}: the pointer is unchanged")
    # a hung PUT: statement_timeout
    c = connect()
    before = pointer("wf", "t")
    run("SET skade.s3_request_timeout = '60s'", c=c)
    run("SET statement_timeout = '1s'", c=c)
    fault("hang", "PUT")
    r = run(SETPROP % "hung", c=c)
    expect(r, "57014", "a hung PUT: statement_timeout cancels update_table")
    fault("pass")
    check(pointer("wf", "t") == before, "the pointer is unchanged")
    run("SET statement_timeout = 0", c=c)
    check(run("SELECT 1", c=c) == ("ok", [("1",)]), "the backend lives on")
    c.close()
    fault("503", "PUT")
    r = run("SELECT skade.create_table('wf', 'u', %s)", (schema,))
    expect(r, "53000", "create_table under 503 SlowDown always", "SlowDown")
    fault("pass")
    check(one("SELECT skade.table_exists('wf', 'u')") == "False", "and no table was made")
    r = run(SETPROP % "after")
    expect(r, "ok", "with the faults gone, update_table commits")


def confinement():
    fault("pass")
    for loc in ("s3://skade-other/t/metadata/00000-x.metadata.json",
                "s3://skade-f/out/t/metadata/00000-x.metadata.json"):
        name = "o" + str(abs(hash(loc)) % 1000)
        run("SELECT skade.register_table('f', %s, %s)", (name, loc))
        ctl("/reset")
        r = run(LOAD, (name,))
        expect(r, "42501", f"{loc.split('/t/')[0]} (outside skade.allowed_roots): load_table")
        check(requests() == [], "and no request reached the S3 server", str(requests()))
    # SigV4: a wrong secret in the credentials file
    good = (BASE / "pg" / "s3_credentials").read_text()
    bad = BASE / "pg" / "s3_credentials_bad"
    lines = [ln if not ln.startswith("aws_secret_access_key") else "aws_secret_access_key = " + "x" * 40
             for ln in good.splitlines()]
    bad.write_text("\n".join(lines) + "\n")
    import pwd
    pw = pwd.getpwnam("postgres")
    os.chown(bad, pw.pw_uid, pw.pw_gid)
    os.chmod(bad, 0o600)
    name, root = fresh()
    c = connect()
    run("SET skade.s3_credentials_file = %s", (str(bad),), c=c)
    r = run(LOAD, (name,), c=c)
    expect(r, "42501", "a wrong secret key: load_table", "SignatureDoesNotMatch")
    c.close()
    true_content(name, root, "a wrong secret key")


def reuse():
    """One backend keeps its connections (curl's pool lives for the backend): loading
    several uncached tables one after another through the keep-alive proxy opens one
    connection, not one per request; another backend opens its own."""
    fault("pass")
    c = connect()
    before = ctl("/stats")["connections"]
    n_before = len(requests())
    for _ in range(3):
        name, root = fresh()
        run(LOAD, (name,), c=c)
    conns = ctl("/stats")["connections"] - before
    reqs = len(requests()) - n_before
    check(reqs == 3 and conns == 1, f"3 loads in one backend: {reqs} requests over {conns} connection(s)")
    c.close()
    c2 = connect()
    name, root = fresh()
    run(LOAD, (name,), c=c2)
    check(ctl("/stats")["connections"] - before == 2, "another backend opens its own connection")
    c2.close()


def main():
    global REF_LOAD, REF_PLAN, PROXY_HOST
    PROXY_HOST = one("SELECT current_setting('skade.s3_endpoint')").split("://", 1)[1].rstrip("/")
    for ns in ("f", "ref"):
        one("SELECT skade.create_namespace(%s)", (ns,))
    REF_LOAD, REF_PLAN = reference()
    check(len(REF_PLAN) > 0, f"the reference plans {len(REF_PLAN)} files")
    for s in sys.argv[5:] or ["reuse", "read_faults", "hangs", "write_faults", "confinement"]:
        print(f"# {s}")
        globals()[s]()
    fault("pass")
    print(f"faults/s3: {fails} failed")
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
