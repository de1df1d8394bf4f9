"""skade against versitygw (test/s3/versitygw.sh starts both; run in the pyiceberg 0.12
virtualenv of test/interop/python).

versitygw verifies every request's SigV4 signature as AWS does, so each check below is
also a check of skade's signer (src/util/sigv4.c) on the requests it makes: PUT with
If-None-Match, GET, HEAD, list, and keys that must be escaped.

  1. skade.create_table() on s3://BUCKET/wh/sk/events: the metadata object exists and
     load_table()/table_metadata() give its bytes exactly (boto3 GET).
  2. skade.update_table() set-properties: 00001-, byte for byte, pyiceberg sees it.
  3. pyiceberg appends to skade's table (SqlCatalog, pyarrow's S3 FileIO), then
     skade.update_table() again on top: the snapshot kept, rows and files agree.
  4. a table pyiceberg wrote (partitioned; appends, a delete, an overwrite): at every
     snapshot skade.files() lists pyiceberg's files and row counts, plan_files() with a
     filter pyiceberg's plan; skade.snapshots() is pyiceberg's history.
  5. create-only writes: skade.write_table_metadata() to a new name succeeds, to an
     existing name is 58P02 and leaves the object untouched.
  6. a wrong secret (skade.s3_credentials_file): a write and a read are 42501 with
     SignatureDoesNotMatch in the DETAIL, nothing is written; the right key works again.
  7. keys with spaces, UTF-8 and + = % ~ ( ): a table skade creates there, updates,
     pyiceberg appends to, skade lists; every key is the literal string (boto3 LIST).
  8. keys with the other printable ASCII specials (! " # $ & ' * , : ; < > ? @ [ \\ ] ^ ` { | })
     and a literal %2F: a table skade creates and updates there (skade and boto3 only).

Environment: S3_ENDPOINT, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION (the root
key), VGW_BUCKET, VGW_WRONG_CREDENTIALS (a credentials file with a wrong secret),
VGW_BOTO_PY (a Python with boto3), PGHOST/PGPORT/PGUSER/PGDATABASE. Prints "ok - ..." or
"FAIL - ..." per check and appends the same lines to VGW_RESULTS.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import traceback
import uuid
from pathlib import Path

import psycopg2
import pyarrow as pa
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import LongType, NestedField, StringType
from sqlalchemy.engine import URL

HERE = Path(__file__).resolve().parent
BUCKET = os.environ["VGW_BUCKET"]
WH = f"s3://{BUCKET}/wh"
CAT = "vgw"
ODD = "sp ace+p=q%41~t(1) é日本"   # a key segment: literal, never decoded
ASCII = "!\"#$&'*,:;<>?@[\\]^`{|} %2F"   # every other printable ASCII special; %2F is not a '/'

SCHEMA_JSON = {"type": "struct", "schema-id": 0, "identifier-field-ids": [1], "fields": [
    {"id": 1, "name": "id", "required": True, "type": "long"},
    {"id": 2, "name": "cat", "required": False, "type": "string"}]}
SPEC_JSON = {"fields": [{"source-id": 2, "transform": "identity", "name": "cat"}]}
ORDER_JSON = {"order-id": 0, "fields": []}
SCHEMA = Schema(NestedField(1, "id", LongType(), required=True),
                NestedField(2, "cat", StringType(), required=False))
SPEC = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="cat"))
ARROW = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("cat", pa.string())])

results: list[tuple[bool, str]] = []


def check(name: str, fn) -> None:
    try:
        fn()
        results.append((True, name))
        line = f"ok - {name}"
    except Exception as e:  # noqa: BLE001 - every failure is reported, the run goes on
        results.append((False, name))
        detail = "".join(traceback.format_exception_only(type(e), e)).strip()
        line = f"FAIL - {name}: {detail}"
        traceback.print_exc()
    print(line, flush=True)
    with open(os.environ["VGW_RESULTS"], "a") as f:
        f.write(line.splitlines()[0] + "\n")


# ------------------------------------------------------------------ clients

def connect(**settings: str):
    conn = psycopg2.connect(host=os.environ.get("PGHOST", "127.0.0.1"), port=int(os.environ["PGPORT"]),
                            user=os.environ.get("PGUSER", "postgres"),
                            dbname=os.environ.get("PGDATABASE", "postgres"))
    conn.autocommit = True
    with conn.cursor() as cur:
        for k, v in settings.items():
            cur.execute("SELECT set_config(%s, %s, false)", (k, v))
    return conn


PG = None


def q(sql: str, params=(), conn=None):
    with (conn or PG).cursor() as cur:
        cur.execute(sql, params)
        return cur.fetchall() if cur.description else None


def expect_error(sql: str, params, sqlstate: str, conn=None):
    try:
        q(sql, params, conn)
    except psycopg2.Error as e:
        assert e.pgcode == sqlstate, f"SQLSTATE {e.pgcode}, not {sqlstate}: {e.pgerror}"
        return e
    raise AssertionError(f"no error (expected {sqlstate}): {sql} {params}")


def boto(*args: str, stdin: bytes | None = None) -> bytes:
    r = subprocess.run([os.environ["VGW_BOTO_PY"], str(HERE / "versitygw_boto.py"), *args],
                       input=stdin, capture_output=True)
    if r.returncode != 0:
        raise AssertionError(f"boto3 {args[0]}: {r.stderr.decode(errors='replace').strip()}")
    return r.stdout


def split(location: str) -> tuple[str, str]:
    assert location.startswith("s3://"), location
    bucket, _, key = location[5:].partition("/")
    return bucket, key


def get(location: str) -> bytes:
    raw = boto("get", *split(location))
    return gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw


def keys(prefix_location: str) -> list[str]:
    bucket, key = split(prefix_location)
    return boto("list", bucket, key).decode().splitlines()


def exists(location: str) -> bool:
    return split(location)[1] in keys(location)


def catalog() -> SqlCatalog:
    uri = URL.create("postgresql+psycopg2", username=os.environ.get("PGUSER", "postgres"),
                     host=os.environ.get("PGHOST", "127.0.0.1"), port=int(os.environ["PGPORT"]),
                     database=os.environ.get("PGDATABASE", "postgres")).render_as_string()
    return SqlCatalog(CAT, uri=uri, warehouse=WH, **{
        "py-io-impl": "pyiceberg.io.pyarrow.PyArrowFileIO",
        "s3.endpoint": os.environ["S3_ENDPOINT"],
        "s3.access-key-id": os.environ["AWS_ACCESS_KEY_ID"],
        "s3.secret-access-key": os.environ["AWS_SECRET_ACCESS_KEY"],
        "s3.region": os.environ.get("AWS_REGION", "us-east-1"),
        "s3.path-style-access": "true",
    })


def batch(ids, cat: str) -> pa.Table:
    return pa.Table.from_pylist([{"id": i, "cat": cat} for i in ids], schema=ARROW)


# ------------------------------------------------------------------ skade's side

def create(ns: str, name: str, location: str) -> str:
    return q("SELECT skade.create_table(%s, %s, %s::jsonb, %s::jsonb, %s::jsonb, '{\"owner\": \"skade\"}',"
             " %s, 2, %s)", (ns, name, json.dumps(SCHEMA_JSON), json.dumps(SPEC_JSON),
                             json.dumps(ORDER_JSON), location, CAT))[0][0]


def update(ns: str, name: str, reqs: list, ups: list) -> str:
    return q("SELECT skade.update_table(%s, %s, %s::jsonb, %s::jsonb, %s)",
             (ns, name, json.dumps(reqs), json.dumps(ups), CAT))[0][0]


def loaded(ns: str, name: str) -> tuple[str, str | None]:
    return tuple(q("SELECT metadata_location, previous_metadata_location FROM skade.load_table(%s, %s, catalog => %s)",
                   (ns, name, CAT))[0])


def same_bytes(ns: str, name: str, location: str) -> None:
    """load_table() and table_metadata() give the object's text byte for byte."""
    (via_load, via_fn, loc), = q(
        "SELECT l.metadata::text, skade.table_metadata(%s, %s, catalog => %s)::text, l.metadata_location"
        "  FROM skade.load_table(%s, %s, catalog => %s) l", (ns, name, CAT) * 2)
    assert loc == location, f"load_table: {loc}, expected {location}"
    obj = get(location)
    for label, text in (("load_table", via_load), ("table_metadata", via_fn)):
        got = text.encode()
        if got != obj:
            i = next((i for i, (a, b) in enumerate(zip(got, obj)) if a != b), min(len(got), len(obj)))
            raise AssertionError(f"{label}({ns}.{name}) vs GET {location}: lengths {len(got)}/{len(obj)},"
                                 f" first difference at byte {i}: {got[i - 40:i + 40]!r} / {obj[i - 40:i + 40]!r}")


def skade_files(ns: str, name: str, sid: int, flt=None) -> dict[str, int]:
    if flt is None:
        rows = q("SELECT file_path, record_count FROM skade.files(%s, %s, %s, %s)", (ns, name, sid, CAT))
    else:
        rows = q("SELECT file_path, record_count FROM skade.plan_files(%s, %s, %s::jsonb, %s, %s)",
                 (ns, name, json.dumps(flt), sid, CAT))
    return dict(rows)


def their_files(t, sid: int, row_filter=None) -> dict[str, int]:
    scan = t.scan(snapshot_id=sid) if row_filter is None else t.scan(snapshot_id=sid, row_filter=row_filter)
    tasks = list(scan.plan_files())
    assert all(not task.delete_files for task in tasks)
    return {task.file.file_path: task.file.record_count for task in tasks}


def files_agree(t, ns: str, name: str) -> int:
    """At every snapshot of t: skade.files() is pyiceberg's plan, the row counts are the
    rows pyiceberg reads; plan_files(cat = 'a') is pyiceberg's plan of cat = 'a'."""
    n = 0
    for snap in t.snapshots():
        sid = snap.snapshot_id
        ours, theirs = skade_files(ns, name, sid), their_files(t, sid)
        assert ours == theirs, f"files() at {sid}: {sorted(ours.items())} vs pyiceberg {sorted(theirs.items())}"
        assert sum(ours.values()) == t.scan(snapshot_id=sid).to_arrow().num_rows, f"rows at {sid}"
        flt = {"type": "eq", "term": "cat", "value": "a"}
        ours = skade_files(ns, name, sid, flt)
        theirs = their_files(t, sid, "cat = 'a'")
        assert ours == theirs, f"plan_files(cat = 'a') at {sid}: {sorted(ours)} vs {sorted(theirs)}"
        n += 1
    return n


def snapshots_agree(t, ns: str, name: str) -> None:
    rows = q("SELECT snapshot_id, parent_id, operation, manifest_list, is_current"
             "  FROM skade.snapshots(%s, %s, %s) ORDER BY sequence_number", (ns, name, CAT))
    want = [(s.snapshot_id, s.parent_snapshot_id, s.summary.operation.value, s.manifest_list,
             s.snapshot_id == t.current_snapshot().snapshot_id) for s in t.snapshots()]
    assert [tuple(r) for r in rows] == want, f"snapshots(): {rows} vs pyiceberg {want}"


# ------------------------------------------------------------------ the checks

state: dict = {}


def c_create_table():
    q("SELECT skade.create_namespace('sk', '{}', %s)", (CAT,))
    location = f"{WH}/sk/events"
    meta = create("sk", "events", location)
    assert meta.startswith(location + "/metadata/00000-") and meta.endswith(".metadata.json"), meta
    assert exists(meta), f"{meta} is not listed"
    same_bytes("sk", "events", meta)
    state["meta0"] = meta


def c_update_properties():
    (uid,), = q("SELECT (skade.table_metadata('sk', 'events', catalog => %s)->>'table-uuid')", (CAT,))
    after = update("sk", "events", [{"type": "assert-table-uuid", "uuid": uid}],
                   [{"action": "set-properties", "updates": {"stage": "one", "note": "a b+c=d%20~"}}])
    assert after.startswith(f"{WH}/sk/events/metadata/00001-"), after
    assert loaded("sk", "events") == (after, state["meta0"])
    same_bytes("sk", "events", after)
    t = catalog().load_table("sk.events")
    assert t.metadata_location == after
    assert t.properties.get("stage") == "one" and t.properties.get("note") == "a b+c=d%20~", t.properties


def c_append_then_update():
    cat = catalog()
    t = cat.load_table("sk.events")
    t.append(batch([1, 2], "a"))
    t.append(batch([3], "b"))
    t = cat.load_table("sk.events")
    assert loaded("sk", "events")[0] == t.metadata_location
    same_bytes("sk", "events", t.metadata_location)
    head = t.current_snapshot().snapshot_id
    after = update("sk", "events",
                   [{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": head}],
                   [{"action": "set-properties", "updates": {"stage": "two"}}])
    assert after.startswith(f"{WH}/sk/events/metadata/00004-"), after
    same_bytes("sk", "events", after)
    t = cat.load_table("sk.events")
    assert t.metadata_location == after and t.properties["stage"] == "two"
    assert t.current_snapshot().snapshot_id == head
    assert sorted(r["id"] for r in t.scan().to_arrow().to_pylist()) == [1, 2, 3]
    assert files_agree(t, "sk", "events") == 2
    snapshots_agree(t, "sk", "events")
    t.append(batch([4], "c"))  # pyiceberg commits on top of skade's metadata
    t = cat.load_table("sk.events")
    assert t.scan().to_arrow().num_rows == 4
    same_bytes("sk", "events", t.metadata_location)


def c_pyiceberg_table():
    cat = catalog()
    cat.create_namespace("py")
    t = cat.create_table("py.events", SCHEMA, partition_spec=SPEC)
    for i, c in enumerate("abcab"):
        t.append(batch(range(10 * i, 10 * i + 1 + i), c))
    t.delete("cat = 'b'")
    t.overwrite(batch([100, 101], "a"), overwrite_filter="cat = 'a'")
    t.append(batch([200], "c"))
    t = cat.load_table("py.events")
    assert len(t.snapshots()) >= 8, len(t.snapshots())
    same_bytes("py", "events", t.metadata_location)
    n = files_agree(t, "py", "events")
    snapshots_agree(t, "py", "events")
    (count,), = q("SELECT count(*) FROM skade.files('py', 'events', catalog => %s)", (CAT,))
    assert count == len(list(t.scan().plan_files())), count
    state["py_snapshots"] = n


def c_create_only():
    (meta,), = q("SELECT skade.table_metadata('sk', 'events', catalog => %s)::text", (CAT,))
    fresh = f"{WH}/sk/events/metadata/00098-{uuid.uuid4()}.metadata.json"
    (wrote,), = q("SELECT skade.write_table_metadata(%s, %s::jsonb, 'sk', %s)", (fresh, meta, CAT))
    assert wrote == fresh, wrote
    first = get(fresh)
    assert json.loads(first) == json.loads(meta)
    for target in (fresh, state["meta0"]):
        before = get(target)
        e = expect_error("SELECT skade.write_table_metadata(%s, %s::jsonb, 'sk', %s)",
                         (target, meta, CAT), "58P02")
        assert "PreconditionFailed" in (e.diag.message_detail or ""), e.diag.message_detail
        assert get(target) == before, f"{target} changed"
    # the pointer is where it was, and reads as before
    same_bytes("sk", "events", loaded("sk", "events")[0])


def c_wrong_secret():
    wrong = connect(**{"skade.s3_credentials_file": os.environ["VGW_WRONG_CREDENTIALS"]})
    try:
        target = f"{WH}/sk/events/metadata/00097-{uuid.uuid4()}.metadata.json"
        (meta,), = q("SELECT skade.table_metadata('sk', 'events', catalog => %s)::text", (CAT,))
        e = expect_error("SELECT skade.write_table_metadata(%s, %s::jsonb, 'sk', %s)",
                         (target, meta, CAT), "42501", wrong)
        print(f"  wrong secret, write: {e.pgerror.strip()}")
        assert "SignatureDoesNotMatch" in (e.diag.message_detail or ""), f"write: DETAIL {e.diag.message_detail}"
        assert not exists(target), f"{target} was written"
        # a read of an object this server never read: a copy boto3 puts
        copy = f"{WH}/sk/events/metadata/00099-{uuid.uuid4()}.metadata.json"
        boto("put", *split(copy), stdin=get(loaded("sk", "events")[0]))
        # (register_table() only records the pointer; the commit-log trigger's attempt to
        # read the object at commit warns when it cannot)
        q("SELECT skade.register_table('sk', 'copy', %s, %s)", (copy, CAT), wrong)
        e = expect_error("SELECT metadata_location FROM skade.load_table('sk', 'copy', catalog => %s)",
                         (CAT,), "42501", wrong)
        assert "SignatureDoesNotMatch" in (e.diag.message_detail or ""), f"read: DETAIL {e.diag.message_detail}"
        print(f"  wrong secret, read: {e.pgerror.strip()}")
        # the right key, in the same session: works
        q("RESET skade.s3_credentials_file", conn=wrong)
        assert q("SELECT metadata_location FROM skade.load_table('sk', 'copy', catalog => %s)",
                 (CAT,), wrong) == [(copy,)]
        same_bytes("sk", "copy", copy)
    finally:
        wrong.close()


def c_odd_keys():
    q("SELECT skade.create_namespace('odd', '{}', %s)", (CAT,))
    location = f"{WH}/odd/{ODD}/t"
    meta = create("odd", "t", location)
    assert meta.startswith(location + "/metadata/00000-"), meta
    listed = keys(f"{WH}/odd/")
    assert split(meta)[1] in listed, f"{meta} not among {listed}"
    same_bytes("odd", "t", meta)
    (uid,), = q("SELECT (skade.table_metadata('odd', 't', catalog => %s)->>'table-uuid')", (CAT,))
    after = update("odd", "t", [{"type": "assert-table-uuid", "uuid": uid}],
                   [{"action": "set-properties", "updates": {"k é+=%~": "v 日本+=%41~"}}])
    same_bytes("odd", "t", after)
    cat = catalog()
    t = cat.load_table("odd.t")
    assert t.properties["k é+=%~"] == "v 日本+=%41~" and t.location() == location
    t.append(batch([1, 2], "a b+c=d%41~é"))
    t.append(batch([3], "a"))
    t = cat.load_table("odd.t")
    same_bytes("odd", "t", t.metadata_location)
    assert files_agree(t, "odd", "t") == 2
    snapshots_agree(t, "odd", "t")
    # every object the table has is under the literal prefix (nothing decoded or doubled)
    listed = keys(f"{WH}/odd/")
    prefix = split(location)[1] + "/"
    assert listed and all(k.startswith(prefix) for k in listed), listed
    assert {split(p)[1] for p in skade_files("odd", "t", t.current_snapshot().snapshot_id)} <= set(listed)
    # a table pyiceberg creates under such a name, read by skade
    t2 = cat.create_table("odd.t2", SCHEMA, partition_spec=SPEC, location=f"{WH}/odd/{ODD}/t2 +%~")
    t2.append(batch([7], "x y"))
    t2 = cat.load_table("odd.t2")
    same_bytes("odd", "t2", t2.metadata_location)
    assert files_agree(t2, "odd", "t2") == 1


def c_ascii_keys():
    q("SELECT skade.create_namespace('asc', '{}', %s)", (CAT,))
    location = f"{WH}/asc/{ASCII}/t"
    meta = create("asc", "t", location)
    assert keys(f"{WH}/asc/") == [split(meta)[1]], keys(f"{WH}/asc/")
    same_bytes("asc", "t", meta)
    (uid,), = q("SELECT (skade.table_metadata('asc', 't', catalog => %s)->>'table-uuid')", (CAT,))
    after = update("asc", "t", [{"type": "assert-table-uuid", "uuid": uid}],
                   [{"action": "set-properties", "updates": {"k": ASCII}}])
    assert after.startswith(location + "/metadata/00001-"), after
    assert sorted(keys(f"{WH}/asc/")) == sorted([split(meta)[1], split(after)[1]]), keys(f"{WH}/asc/")
    same_bytes("asc", "t", after)


def main() -> int:
    global PG
    PG = connect()
    q("SET client_encoding = 'UTF8'")
    for name, fn in (("create_table on s3 (metadata byte for byte)", c_create_table),
                     ("update_table set-properties", c_update_properties),
                     ("pyiceberg appends to skade's table, update_table on top", c_append_then_update),
                     ("pyiceberg's table: files/plan_files/snapshots agree", c_pyiceberg_table),
                     ("create-only writes (existing name: 58P02, untouched)", c_create_only),
                     ("wrong secret: 42501 SignatureDoesNotMatch (write, read)", c_wrong_secret),
                     ("keys with spaces, UTF-8, + = % ~ ( )", c_odd_keys),
                     ("keys with every other printable ASCII special", c_ascii_keys)):
        check(name, fn)
    PG.close()
    failed = sum(1 for ok, _ in results if not ok)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
