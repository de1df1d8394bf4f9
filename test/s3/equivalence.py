"""skade on s3:// answers as on file:// (run by test/s3/equivalence.sh).

Usage: equivalence.py PORT STAGE MOTO_LOG BUCKET

STAGE/fixtures.json (test/s3/fixtures_s3.py) names every fixture table and
its two copies: file://LOCAL/... and s3://BUCKET/eqxxx/... (the same
length), and the extra copy s3://BUCKET/w1/... that the writer tests change.

  1. Every fixture table is registered twice (namespace f: the file copy,
     namespace s: the s3 copy) and every read function -- load_table and
     table_metadata (all, refs), snapshots, refs, history, manifests, files
     and plan_files (every snapshot; the current one with filters built
     from its own column bounds), load_table_at (every snapshot),
     load_table_as_of (every history entry, and before the first) and
     resolve_many -- must answer the same (rows in the same order, or the
     same SQLSTATE, message and detail) once the two roots are swapped; the
     s3 copy is asked twice (cold, then from the caches).  manifest length
     is compared as "equals the size of the object or file at path" (the
     compressed sizes of the copies differ).  The good tables must not fail.
  2. L0 and the manifest cache: once read, a table's metadata and manifests
     are not requested again (no GET in moto's log).
  3. The metadata writer on S3: create_table at an s3:// location,
     update_table (an append, property changes), rewrite_manifests and
     expire_snapshots(delete_files => true) on the extra copy; every object
     written is in the bucket with the content skade answers with, every
     object expired is gone after the commit (and kept after an abort); a
     transaction that writes and aborts leaves no object behind (or the
     sweep finds and removes it).

Prints "ok - ..." / "not ok - ..." lines; exits 1 on any failure.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path

import boto3
import botocore
import psycopg2
import psycopg2.extras

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuzz"))
from fuzzlib import avro  # noqa: E402

PORT, STAGE, MOTO_LOG, BUCKET = int(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4]
IDX = json.loads((STAGE / "fixtures.json").read_text())
LOCAL, S3 = IDX["local"], IDX["s3"]
W1 = IDX["extra"]["w1"]
GOOD = {"avro/v1", "avro/v2_deflate", "avro/v2_null", "avro/v2_snappy", "avro/v3",
        "avro/exotic_types", "java/fixtures/events", "java/fixtures/events_gz",
        "py/fixtures/events", "py/fixtures/simple"}

fails = 0


def check(ok: bool, what: str, detail: str = "") -> bool:
    global fails
    if ok:
        print(f"ok - {what}")
    else:
        fails += 1
        print(f"not ok - {what}" + (f"\n    {detail[:3000]}" if detail else ""))
    return ok


def connect():
    c = psycopg2.connect(host="127.0.0.1", port=PORT, user="postgres", dbname="postgres")
    c.autocommit = True
    return c


conn = connect()
s3 = boto3.client("s3", endpoint_url=os.environ["S3_ENDPOINT"],
                  region_name=os.environ.get("AWS_REGION", "us-east-1"))


def run(sql: str, params=(), c=None):
    """("ok", [row tuples as text]) or ("err", sqlstate, message, detail)"""
    cur = (c or conn).cursor()
    try:
        cur.execute(sql, params)
        rows = cur.fetchall() if cur.description else []
        return ("ok", [tuple(None if v is None else str(v) for v in r) for r in rows])
    except psycopg2.Error as e:
        d = e.diag
        return ("err", e.pgcode, d.message_primary, d.message_detail)
    finally:
        cur.close()


def one(sql: str, params=(), c=None):
    r = run(sql, params, c)
    if r[0] != "ok":
        raise RuntimeError(f"{sql}: {r}")
    return r[1][0][0] if r[1] and len(r[1][0]) == 1 else (r[1][0] if r[1] else None)


def norm(v):
    if isinstance(v, str):
        v = v.replace(LOCAL, "<root>").replace(S3, "<root>")
        return re.sub(r'"[fs]\.', '"<ns>.', v)
    if isinstance(v, (list, tuple)):
        return type(v)(norm(x) for x in v)
    return v


def object_size(uri: str):
    """the size of the file or object at a recorded location, None if absent"""
    if uri.startswith("file://"):
        p = uri[len("file://"):]
        return os.path.getsize(p) if os.path.exists(p) else None
    if uri.startswith("s3://"):
        b, _, k = uri[5:].partition("/")
        try:
            return s3.head_object(Bucket=b, Key=k)["ContentLength"]
        except botocore.exceptions.ClientError:
            return None
    return None


def exists(uri: str) -> bool:
    return object_size(uri) is not None


def get_object(uri: str) -> bytes:
    b, _, k = uri[5:].partition("/")
    return s3.get_object(Bucket=b, Key=k)["Body"].read()


def tname(t) -> str:
    return t["dir"].replace("/", "_")


# ------------------------------------------------------------ 1. reads

def queries(t: str, snaps, history, filters):
    q = []

    def add(label, sql, params=(), length_col=None):
        q.append((label, sql, params, length_col))
    add("load_table all", "SELECT * FROM skade.load_table(%(ns)s, %(t)s, 'all')")
    add("load_table refs", "SELECT * FROM skade.load_table(%(ns)s, %(t)s, 'refs')")
    add("table_metadata all", "SELECT skade.table_metadata(%(ns)s, %(t)s, 'all')")
    add("table_metadata refs", "SELECT skade.table_metadata(%(ns)s, %(t)s, 'refs')")
    add("snapshots", "SELECT * FROM skade.snapshots(%(ns)s, %(t)s)")
    add("refs", "SELECT * FROM skade.refs(%(ns)s, %(t)s)")
    add("history", "SELECT * FROM skade.history(%(ns)s, %(t)s)")
    add("manifests", "SELECT * FROM skade.manifests(%(ns)s, %(t)s)", length_col=1)
    add("files", "SELECT * FROM skade.files(%(ns)s, %(t)s)")
    add("plan_files true", "SELECT * FROM skade.plan_files(%(ns)s, %(t)s)")
    add("manifests of no snapshot", "SELECT * FROM skade.manifests(%(ns)s, %(t)s, 1)")
    for sid in snaps:
        add(f"manifests {sid}", "SELECT * FROM skade.manifests(%(ns)s, %(t)s, %(sid)s)",
            {"sid": sid}, length_col=1)
        add(f"files {sid}", "SELECT * FROM skade.files(%(ns)s, %(t)s, %(sid)s)", {"sid": sid})
        add(f"plan_files {sid}", "SELECT * FROM skade.plan_files(%(ns)s, %(t)s, 'true', %(sid)s)",
            {"sid": sid})
        add(f"load_table_at {sid}", "SELECT * FROM skade.load_table_at(%(ns)s, %(t)s, %(sid)s)",
            {"sid": sid})
        add(f"load_table_at {sid} refs",
            "SELECT * FROM skade.load_table_at(%(ns)s, %(t)s, %(sid)s, 'refs')", {"sid": sid})
    for ts in history:
        add(f"load_table_as_of {ts}",
            "SELECT * FROM skade.load_table_as_of(%(ns)s, %(t)s, %(ts)s::timestamptz)", {"ts": ts})
        add(f"load_table_as_of {ts} + 1 ms",
            "SELECT * FROM skade.load_table_as_of(%(ns)s, %(t)s, %(ts)s::timestamptz + '1 ms')",
            {"ts": ts})
    add("load_table_as_of before the first",
        "SELECT * FROM skade.load_table_as_of(%(ns)s, %(t)s, '2000-01-01')")
    for f in filters:
        add(f"plan_files {f}", "SELECT * FROM skade.plan_files(%(ns)s, %(t)s, %(f)s::jsonb)",
            {"f": f})
    return q


def filters_for(t: str):
    """filters from the current snapshot's own column bounds (file copy)"""
    r = run("SELECT columns::text FROM skade.files('f', %s)", (t,))
    out = ['{"type": "false"}', '{"type": "not", "child": {"type": "true"}}']
    if r[0] != "ok":
        return out
    seen = {}
    for (cols,) in r[1]:
        for name, st in json.loads(cols or "{}").items():
            if "." in name or name in seen or st.get("lower") is None:
                continue
            seen[name] = st["lower"]
    for name, v in list(seen.items())[:4]:
        val = json.dumps(v)
        out += [f'{{"type": "eq", "term": "{name}", "value": {val}}}',
                f'{{"type": "lt", "term": "{name}", "value": {val}}}',
                f'{{"type": "gt-eq", "term": "{name}", "value": {val}}}',
                f'{{"type": "not-eq", "term": "{name}", "value": {val}}}',
                f'{{"type": "is-null", "term": "{name}"}}',
                f'{{"type": "not-null", "term": "{name}"}}']
    if len(seen) >= 2:
        (a, va), (b, vb) = list(seen.items())[:2]
        out.append(f'{{"type": "or", "left": {{"type": "eq", "term": "{a}", "value": {json.dumps(va)}}},'
                   f' "right": {{"type": "lt", "term": "{b}", "value": {json.dumps(vb)}}}}}')
        out.append(f'{{"type": "and", "left": {{"type": "gt-eq", "term": "{a}", "value": {json.dumps(va)}}},'
                   f' "right": {{"type": "not-null", "term": "{b}"}}}}')
    return out


def answer(ns: str, t: str, sql: str, params: dict, length_col):
    r = run(sql, dict(params, ns=ns, t=t))
    if r[0] == "ok" and length_col is not None:
        rows = []
        for row in r[1]:
            row = list(row)
            size = object_size(row[0])
            row[length_col] = "length=size" if size is not None and str(size) == row[length_col] \
                else f"length {row[length_col]} but size {size}"
            rows.append(tuple(row))
        r = ("ok", rows)
    return norm(r)


def reads():
    for t in IDX["tables"]:
        name = tname(t)
        one("SELECT skade.register_table('f', %s, %s)", (name, f"{LOCAL}/{t['dir']}/{t['metadata']}"))
        one("SELECT skade.register_table('s', %s, %s)", (name, f"{S3}/{t['dir']}/{t['metadata']}"))
    total = 0
    for t in IDX["tables"]:
        name = tname(t)
        snaps = run("SELECT snapshot_id FROM skade.snapshots('f', %s) ORDER BY 1", (name,))
        snaps = [s for (s,) in snaps[1]] if snaps[0] == "ok" else []
        hist = run("SELECT made_current_at FROM skade.history('f', %s) ORDER BY 1", (name,))
        hist = [h for (h,) in hist[1]] if hist[0] == "ok" else []
        differ = {False: [], True: []}
        failed = []
        qs = queries(name, snaps, hist, filters_for(name))
        for label, sql, params, lcol in qs:
            want = answer("f", name, sql, params, lcol)
            tt = label.startswith("load_table_a")
            for attempt in ("cold", "warm"):
                got = answer("s", name, sql, params, lcol)
                if got != want:
                    differ[tt].append(f"{label} ({attempt}):\n      file: {str(want)[:400]}\n      s3:   {str(got)[:400]}")
            if t["dir"] in GOOD and want[0] == "err" and "no snapshot" not in label \
                    and "before the first" not in label and not want[1] == "42P01":
                failed.append(f"{label}: {want}")
        total += len(qs)
        ntt = sum(1 for q in qs if q[0].startswith("load_table_a"))
        check(not differ[False], f"{t['dir']}: {len(qs) - ntt} read calls answer the same on s3:// as on file://",
              "\n    ".join(differ[False][:4]))
        check(not differ[True], f"{t['dir']}: {ntt} time travel calls answer the same on s3:// as on file://",
              "\n    ".join(differ[True][:1])[:700])
        if t["dir"] in GOOD:
            check(not failed, f"{t['dir']}: no read call fails", "\n    ".join(failed[:5]))
    # the commit log knows the current snapshot of every S3 copy (read at commit), so
    # resolve_many knows their snapshots (one row per id: both copies share the ids)
    r1 = run("SELECT count(*) FROM skade.commit_log WHERE table_namespace = 's'"
             " AND metadata_location IS NOT NULL AND snapshot_id IS NULL"
             " AND strpos(metadata_location, '/bad') = 0 AND strpos(metadata_location, '/corrupt') = 0"
             " AND strpos(metadata_location, '/short') = 0 AND strpos(metadata_location, '/zstd') = 0")
    check(r1 == ("ok", [("0",)]),
          "the commit log resolved the snapshot of every readable S3 copy at commit", str(r1))
    r2 = run("SELECT count(*) FILTER (WHERE r.namespace IS NULL) FROM skade.resolve_many("
             "ARRAY(SELECT snapshot_id FROM skade.snapshots('s', 'py_fixtures_events'))) r")
    check(r2 == ("ok", [("0",)]), "resolve_many knows every snapshot of the S3 copy", str(r2))
    print(f"# {total} read calls per copy")


# ------------------------------------------------------------ 2. caching

def gets_since(mark: int, needle: str) -> list:
    time.sleep(0.3)     # moto logs after it answers
    lines = MOTO_LOG.read_text(errors="replace").splitlines()[mark:]
    return [ln for ln in lines if '"GET /' in ln and needle in ln]


def log_mark() -> int:
    time.sleep(0.3)
    return len(MOTO_LOG.read_text(errors="replace").splitlines())


def caching():
    # a copy nothing has read yet: the w1 copy of avro/v2_snappy
    t = next(x for x in IDX["tables"] if x["dir"] == "avro/v2_snappy")
    loc = f"{W1}/{t['dir']}/{t['metadata']}"
    key = loc[len(f"s3://{BUCKET}/"):]
    m = log_mark()
    one("SELECT skade.register_table('c', 'snappy', %s)", (loc,))
    c1 = connect()
    one("SELECT metadata_location FROM skade.load_table('c', 'snappy')", c=c1)
    check(len(gets_since(m, key)) == 1,
          "registering (the commit log reads it) and the first load_table GET the metadata file once",
          str(gets_since(m, key)))
    c1.close()
    m = log_mark()
    c2 = connect()
    a = one("SELECT md5(metadata::text) FROM skade.load_table('c', 'snappy')", c=c2)
    one("SELECT count(*) FROM skade.snapshots('c', 'snappy')", c=c2)
    one("SELECT skade.table_metadata('c', 'snappy', 'refs') IS NOT NULL", c=c2)
    check(gets_since(m, "/w1/") == [], "a second load (another backend) makes no GET (L0)",
          str(gets_since(m, "/w1/")))
    m = log_mark()
    n1 = one("SELECT count(*) FROM skade.plan_files('c', 'snappy')", c=c2)
    first = gets_since(m, "/w1/")
    check(len(first) >= 2, f"the first plan_files GETs the manifest list and manifests ({len(first)} GETs)")
    m = log_mark()
    c3 = connect()
    n2 = one("SELECT count(*) FROM skade.plan_files('c', 'snappy')", c=c3)
    one("SELECT count(*) FROM skade.files('c', 'snappy')", c=c3)
    one("SELECT count(*) FROM skade.manifests('c', 'snappy')", c=c3)
    again = gets_since(m, "/w1/")
    lists = [g for g in again if "/snap-" in g]
    check(n1 == n2 and not [g for g in again if g not in lists],
          "a second plan_files/files/manifests (another backend) GETs no manifest (L0.5)", str(again))
    check(not lists, "nor the manifest list", f"{len(lists)} GETs of the manifest list")
    b = one("SELECT md5(metadata::text) FROM skade.load_table('c', 'snappy')", c=c3)
    check(a == b, "the cached metadata is the same")
    c2.close()
    c3.close()


# ------------------------------------------------------------ 3. writes

SCHEMA = ('{"fields": [{"id": 1, "name": "id", "required": true, "type": "long"},'
          ' {"id": 2, "name": "name", "required": false, "type": "string"}]}')


def metadata_matches(location: str, ns: str, t: str) -> bool:
    body = get_object(location)
    want = json.loads(one("SELECT skade.table_metadata(%s, %s)::text", (ns, t)))
    return json.loads(body) == want


def writes():
    one("SELECT skade.create_namespace('wr', %s)", (json.dumps({"location": f"{W1}/wr"}),))
    loc = one("SELECT skade.create_table('wr', 'made', %s, location => %s)",
              (SCHEMA, f"{W1}/wr/made"))
    check(loc is not None and loc.startswith(f"{W1}/wr/made/metadata/") and exists(loc),
          "create_table writes its metadata file to the bucket", str(loc))
    check(metadata_matches(loc, "wr", "made"), "the object holds the metadata skade answers with")
    r = run("SELECT skade.create_table('wr', 'ns_default', %s)", (SCHEMA,))
    ok = r[0] == "ok" and r[1][0][0].startswith(f"{W1}/wr/ns_default/metadata/") and exists(r[1][0][0])
    check(ok, "create_table under a namespace with an s3:// location", str(r))

    # property changes
    new = one("""SELECT skade.update_table('wr', 'made', '[]',
                 '[{"action": "set-properties", "updates": {"owner": "ana", "k": "v"}}]')""")
    check(new != loc and exists(new) and metadata_matches(new, "wr", "made")
          and json.loads(get_object(new))["properties"].get("owner") == "ana",
          "update_table (set-properties) writes the next metadata file with the change")
    check(exists(loc), "the previous metadata file is kept")

    # an append on the extra copy of py/fixtures/simple: a new snapshot over
    # its parent's manifest list
    t = next(x for x in IDX["tables"] if x["dir"] == "py/fixtures/simple")
    one("SELECT skade.register_table('w', 'simple', %s)", (f"{W1}/{t['dir']}/{t['metadata']}",))
    md = json.loads(one("SELECT skade.table_metadata('w', 'simple')::text"))
    cur = next(s for s in md["snapshots"] if s["snapshot-id"] == md["current-snapshot-id"])
    before = run("SELECT * FROM skade.files('w', 'simple')")
    upd = [{"action": "add-snapshot", "snapshot": {
        "snapshot-id": 4242, "parent-snapshot-id": cur["snapshot-id"],
        "sequence-number": md["last-sequence-number"] + 1, "timestamp-ms": int(time.time() * 1000),
        "manifest-list": cur["manifest-list"], "summary": {"operation": "append"},
        "schema-id": md["current-schema-id"]}},
        {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 4242, "type": "branch"}]
    req = [{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": cur["snapshot-id"]}]
    new = one("SELECT skade.update_table('w', 'simple', %s, %s)", (json.dumps(req), json.dumps(upd)))
    check(exists(new) and metadata_matches(new, "w", "simple"),
          "update_table (an append) writes the next metadata file to the bucket")
    after = run("SELECT * FROM skade.files('w', 'simple', 4242)")
    check(one("SELECT snapshot_id FROM skade.snapshots('w', 'simple') WHERE is_current") == "4242"
          and [r[:9] for r in after[1]] == [r[:9] for r in before[1]],
          "the appended snapshot is current and reads its manifests from the bucket")

    # rewrite_manifests on the extra copy of py/fixtures/events
    t = next(x for x in IDX["tables"] if x["dir"] == "py/fixtures/events")
    one("SELECT skade.register_table('w', 'events', %s)", (f"{W1}/{t['dir']}/{t['metadata']}",))
    plan_before = sorted(r[1] for r in run("SELECT * FROM skade.plan_files('w', 'events')")[1])
    rw = run("SELECT * FROM skade.rewrite_manifests('w', 'events')")
    ok = rw[0] == "ok" and rw[1] and int(rw[1][0][2]) >= 2
    check(ok, "rewrite_manifests on s3:// commits", str(rw))
    if ok:
        ml = run("SELECT path, length, added_files_count, existing_files_count FROM skade.manifests('w', 'events')")[1]
        new_manifests = [r for r in ml if r[0].startswith(f"{W1}/py/fixtures/events/metadata/")]
        good = bool(ml)
        for path, length, added, existing in ml:
            body = get_object(path)
            if len(body) != int(length):
                good = False
            else:
                recs = avro.Container(body).records()
                good &= len(recs) >= int(existing) + int(added)
        check(good, f"its {len(ml)} manifests are in the bucket with their recorded lengths and entries")
        check(exists(rw[1][0][0]) and metadata_matches(rw[1][0][0], "w", "events"),
              "and so is its metadata file")
        plan_after = sorted(r[1] for r in run("SELECT * FROM skade.plan_files('w', 'events')")[1])
        check(plan_after == plan_before, "the plan is the same after the rewrite")

    aborted_writes()
    expire(len(before[1]))


def rollback(c) -> str:
    """roll back; the error the rollback raised, if any"""
    try:
        c.rollback()
        return ""
    except psycopg2.Error as e:
        return f"{e.pgcode}: {e.diag.message_primary}"


def alive_connection():
    """a connection, waiting for the server to come back from a crash"""
    global conn
    for _ in range(60):
        try:
            conn = connect()
            return conn
        except psycopg2.OperationalError:
            time.sleep(0.5)
    raise RuntimeError("the server did not come back")


def aborted_writes():
    c = connect()
    c.autocommit = False
    cur_ = c.cursor()
    cur_.execute("""SELECT skade.update_table('wr', 'made', '[]',
                    '[{"action": "set-properties", "updates": {"aborted": "yes"}}]')""")
    written = cur_.fetchone()[0]
    was = exists(written)
    err1 = rollback(c)
    cur_ = c.cursor()
    cur_.execute("SELECT skade.create_table('wr', 'aborted', %s, location => %s)",
                 (SCHEMA, f"{W1}/wr/aborted"))
    written2 = cur_.fetchone()[0]
    err2 = rollback(c)
    c.close()
    check(was, "the aborted transaction's metadata file was written before the abort")
    check(not err1 and not err2, "ROLLBACK of a transaction that wrote to S3 succeeds", f"{err1} / {err2}")
    gone = not exists(written) and not exists(written2)
    check(gone, "the abort removed the objects it wrote",
          f"{written}: {exists(written)}, {written2}: {exists(written2)}")
    wf = run("SELECT location, state, present FROM skade.written_files() WHERE location = ANY(%s)",
             ([written, written2],))
    check(wf[0] == "ok" and len(wf[1]) == 2 and all(s == "aborted" for _, s, p in wf[1]),
          "written_files() lists them aborted", str(wf))
    if not gone:
        orphans = [r[0] for r in run("SELECT location FROM skade.orphan_files()")[1]]
        check(written in orphans and written2 in orphans, "orphan_files() lists them", str(orphans))
        sw = run("SELECT * FROM skade.sweep_orphan_files()")
        check(not exists(written) and not exists(written2), "the sweep removes them", str(sw))
    else:
        # (written_files() takes an object for present without asking S3, so
        # orphan_files() lists them until a sweep, whose DELETE finds nothing)
        sw = run("SELECT * FROM skade.sweep_orphan_files()")
        orphans = run("SELECT location FROM skade.orphan_files()")
        check(orphans == ("ok", []), "no orphan files after a sweep", f"{orphans} (sweep: {sw})")
    check(one("SELECT skade.table_exists('wr', 'aborted')") == "False", "no table was made")


def expire(live_files: int):
    """expire_snapshots(delete_files) on the extra copy of py/fixtures/simple,
    first in a transaction that aborts (nothing deleted), then committed"""
    c = connect()
    c.autocommit = False
    cur_ = c.cursor()
    cur_.execute("SELECT file_path, kind FROM skade.expire_snapshots('w', 'simple', now() + interval '1 day',"
                 " retain_last => 1, delete_files => true)")
    expired = cur_.fetchall()
    err = rollback(c)
    c.close()
    check(not err, "ROLLBACK of expire_snapshots(delete_files) succeeds", err)
    present = [p for p, _ in expired if exists(p)]
    check(expired and len(present) == len(expired),
          f"an aborted expire_snapshots(delete_files) deletes none of its {len(expired)} files",
          str([p for p, _ in expired if not exists(p)]))
    r = run("SELECT file_path, kind FROM skade.expire_snapshots('w', 'simple', now() + interval '1 day',"
            " retain_last => 1, delete_files => true)", c=alive_connection())
    expired = r[1] if r[0] == "ok" else []
    kinds = sorted({k for _, k in expired})
    check(r[0] == "ok" and expired, f"expire_snapshots(delete_files) on s3:// commits ({kinds})", str(r))
    if r[0] != "ok":
        # the commit may have happened: what it returns when asked again
        expired = [(p, k) for p, k in (present and [(p, "?") for p in present])]
    left = [p for p, _ in expired if exists(p)]
    check(not left, f"the {len(expired)} expired files are deleted from the bucket", str(left))
    check(one("SELECT count(*) FROM skade.plan_files('w', 'simple')", c=alive_connection()) ==
          str(live_files), "the table still plans its live files")


def main():
    for ns in ("f", "s", "c", "w"):
        one("SELECT skade.create_namespace(%s)", (ns,))
    sections = sys.argv[5:] or ["reads", "caching", "writes"]
    for s in sections:
        print(f"# {s}")
        globals()[s]()
    print(f"equivalence: {fails} failed")
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
