"""Tables with decimal, uuid, binary and fixed columns for the plan_files()
cases of test/regress/sql/manifests.sql: every bound, partition value and partition
summary is written byte by byte here (the encoders of hostile.py, no Avro
library), the same bytes on every run.  No data file exists: plan_files()
reads only manifests.

    python3 typed_bounds.py OUTDIR

writes OUTDIR/<table>/metadata/{v1.metadata.json, list.avro, m*.avro}:

  typed        unpartitioned; files f1..f7 with bounds as Java writes them
               (decimals in the shortest two's complement, one sign-extended
               to 16 bytes; binary bounds truncated to 16 bytes, the upper
               one rounded up; uuids on both sides of the high bit; an
               all-null file, a file without statistics, single-value files)
  typed_part   partitioned by truncate[500](price), bucket[4](u),
               truncate[2](b), identity(fx) and identity(big); files p1..p3
               without column statistics, in two manifests with partition
               summaries
  typed_summary  one manifest, missing on disk, whose summaries say what
               its files hold: a plan that reads it fails, one its
               summaries rule out does not read it
  typed_bad    a decimal bound of 17 bytes and a uuid bound of 15
"""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hostile import SNAPSHOT_ID, block, header, zbytes, zlong, zstr  # noqa: E402

SCHEMA_FIELDS = [
    {"id": 1, "name": "id", "required": False, "type": "long"},
    {"id": 2, "name": "price", "required": False, "type": "decimal(9,2)"},
    {"id": 3, "name": "big", "required": False, "type": "decimal(38,10)"},
    {"id": 4, "name": "u", "required": False, "type": "uuid"},
    {"id": 5, "name": "b", "required": False, "type": "binary"},
    {"id": 6, "name": "fx", "required": False, "type": "fixed[4]"},
]

PART_SPEC = [
    {"source-id": 2, "field-id": 1000, "name": "price_trunc", "transform": "truncate[500]"},
    {"source-id": 4, "field-id": 1001, "name": "u_bucket", "transform": "bucket[4]"},
    {"source-id": 5, "field-id": 1002, "name": "b_trunc", "transform": "truncate[2]"},
    {"source-id": 6, "field-id": 1003, "name": "fx", "transform": "identity"},
    {"source-id": 3, "field-id": 1004, "name": "big", "transform": "identity"},
]

# Avro types of the partition fields above (Iceberg's: decimal as fixed)
PART_AVRO = [
    {"name": "price_trunc", "type": ["null", {"type": "fixed", "name": "fixed_9_2", "size": 4,
                                              "logicalType": "decimal", "precision": 9,
                                              "scale": 2}], "field-id": 1000},
    {"name": "u_bucket", "type": ["null", "int"], "field-id": 1001},
    {"name": "b_trunc", "type": ["null", "bytes"], "field-id": 1002},
    {"name": "fx", "type": ["null", {"type": "fixed", "name": "fixed_4", "size": 4}],
     "field-id": 1003},
    {"name": "big", "type": ["null", {"type": "fixed", "name": "fixed_38_10", "size": 16,
                                      "logicalType": "decimal", "precision": 38, "scale": 10}],
     "field-id": 1004},
]

KV_LONG = {"type": "record", "name": "k_long", "fields": [
    {"name": "key", "type": "int"}, {"name": "value", "type": "long"}]}
KV_BYTES = {"type": "record", "name": "k_bytes", "fields": [
    {"name": "key", "type": "int"}, {"name": "value", "type": "bytes"}]}

LIST_SCHEMA = {
    "type": "record", "name": "manifest_file", "fields": [
        {"name": "manifest_path", "type": "string"},
        {"name": "manifest_length", "type": "long"},
        {"name": "partition_spec_id", "type": "int"},
        {"name": "content", "type": "int"},
        {"name": "sequence_number", "type": "long"},
        {"name": "min_sequence_number", "type": "long"},
        {"name": "added_snapshot_id", "type": "long"},
        {"name": "partitions", "type": ["null", {"type": "array", "items": {
            "type": "record", "name": "field_summary", "fields": [
                {"name": "contains_null", "type": "boolean"},
                {"name": "contains_nan", "type": ["null", "boolean"]},
                {"name": "lower_bound", "type": ["null", "bytes"]},
                {"name": "upper_bound", "type": ["null", "bytes"]}]}}]},
    ]}


def manifest_schema(partition_fields):
    return {
        "type": "record", "name": "manifest_entry", "fields": [
            {"name": "status", "type": "int"},
            {"name": "snapshot_id", "type": ["null", "long"]},
            {"name": "data_file", "type": {
                "type": "record", "name": "r2", "fields": [
                    {"name": "content", "type": "int"},
                    {"name": "file_path", "type": "string"},
                    {"name": "file_format", "type": "string"},
                    {"name": "partition", "type": {"type": "record", "name": "r102",
                                                   "fields": partition_fields}},
                    {"name": "record_count", "type": "long"},
                    {"name": "file_size_in_bytes", "type": "long"},
                    {"name": "value_counts", "type": ["null", {"type": "array",
                                                               "items": KV_LONG}]},
                    {"name": "null_value_counts", "type": ["null", {"type": "array",
                                                                    "items": "k_long"}]},
                    {"name": "lower_bounds", "type": ["null", {"type": "array",
                                                              "items": KV_BYTES}]},
                    {"name": "upper_bounds", "type": ["null", {"type": "array",
                                                              "items": "k_bytes"}]},
                ]}},
        ]}


# ------------------------------------------------------------------ values

def dec(unscaled: int, width: int = 0) -> bytes:
    """A decimal's unscaled value: the shortest big-endian two's complement
    (Java's BigInteger.toByteArray()), or sign-extended to width bytes."""
    n = 1
    while not -(1 << (8 * n - 1)) <= unscaled < (1 << (8 * n - 1)):
        n += 1
    return unscaled.to_bytes(max(n, width), "big", signed=True)


def uuid(text: str) -> bytes:
    return bytes.fromhex(text.replace("-", ""))


def murmur3_32(data: bytes) -> int:
    """MurmurHash3 x86_32, seed 0: Iceberg's bucket hash."""
    c1, c2, h, mask = 0xCC9E2D51, 0x1B873593, 0, 0xFFFFFFFF

    def rotl(x, r):
        return ((x << r) | (x >> (32 - r))) & mask

    n4 = len(data) // 4 * 4
    for i in range(0, n4, 4):
        k = int.from_bytes(data[i:i + 4], "little")
        k = rotl((k * c1) & mask, 15) * c2 & mask
        h = (rotl(h ^ k, 13) * 5 + 0xE6546B64) & mask
    k = int.from_bytes(data[n4:], "little") if len(data) > n4 else 0
    if len(data) > n4:
        h ^= rotl((k * c1) & mask, 15) * c2 & mask
    h ^= len(data)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & mask
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & mask
    return h ^ (h >> 16)


def bucket(data: bytes, n: int) -> int:
    return (murmur3_32(data) & 0x7FFFFFFF) % n


def opt(b: bytes) -> bytes:
    """A union ["null", bytes|fixed] value (fixed: bytes without a length)."""
    return zlong(1) + b


# ------------------------------------------------------------------ encoding

def kv_array(pairs, enc) -> bytes:
    """A nullable array of {key, value} records (null when pairs is None)."""
    if pairs is None:
        return zlong(0)
    if not pairs:
        return zlong(1) + zlong(0)
    out = zlong(1) + zlong(len(pairs))
    for k, v in pairs:
        out += zlong(k) + enc(v)
    return out + zlong(0)


def data_file(path: str, partition: bytes, stats) -> bytes:
    """A manifest entry (ADDED, snapshot id inherited) for a data file; stats:
    {field id: (value count, null count, lower or None, upper or None)}."""
    vc = [(k, s[0]) for k, s in stats.items()]
    nc = [(k, s[1]) for k, s in stats.items()]
    lo = [(k, s[2]) for k, s in stats.items() if s[2] is not None]
    hi = [(k, s[3]) for k, s in stats.items() if s[3] is not None]
    return (zlong(1) + zlong(0)  # status ADDED, snapshot_id null
            + zlong(0) + zstr(path) + zstr("PARQUET") + partition + zlong(3) + zlong(100)
            + kv_array(vc or None, zlong) + kv_array(nc or None, zlong)
            + kv_array(lo or None, zbytes) + kv_array(hi or None, zbytes))


def list_entry(path: str, length: int, summaries) -> bytes:
    out = zstr(path) + zlong(length) + zlong(0) + zlong(0) + zlong(1) + zlong(1) + zlong(SNAPSHOT_ID)
    if summaries is None:
        return out + zlong(0)
    out += zlong(1) + zlong(len(summaries))
    for contains_null, lo, hi in summaries:
        out += (b"\x01" if contains_null else b"\x00") + zlong(0)
        out += zlong(0) if lo is None else zlong(1) + zbytes(lo)
        out += zlong(0) if hi is None else zlong(1) + zbytes(hi)
    return out + zlong(0)


def write_table(root: Path, name: str, manifests, spec) -> None:
    """manifests: [(file name, entries bytes, count, summaries, written?)]."""
    d = root / name / "metadata"
    d.mkdir(parents=True, exist_ok=True)
    schema = manifest_schema(PART_AVRO if spec else [])
    entries = b""
    for fname, recs, count, summaries, written in manifests:
        m = header(schema, "null", {
            "schema": json.dumps({"type": "struct", "schema-id": 0, "fields": SCHEMA_FIELDS}),
            "partition-spec": json.dumps(spec), "partition-spec-id": "0",
            "format-version": "2", "content": "data"}) + block(count, recs)
        if written:
            (d / fname).write_bytes(m)
        entries += list_entry(str(d / fname), len(m), summaries)
    (d / "list.avro").write_bytes(header(LIST_SCHEMA) + block(len(manifests), entries))
    meta = {
        "format-version": 2, "table-uuid": "00000000-0000-4000-8000-0000000000%02d" % len(name),
        "location": str(root / name), "last-sequence-number": 1,
        "last-updated-ms": 1700000000000, "last-column-id": 6, "current-schema-id": 0,
        "schemas": [{"type": "struct", "schema-id": 0, "fields": SCHEMA_FIELDS}],
        "default-spec-id": 0, "partition-specs": [{"spec-id": 0, "fields": spec}],
        "last-partition-id": 1004 if spec else 999, "default-sort-order-id": 0,
        "sort-orders": [{"order-id": 0, "fields": []}], "properties": {},
        "current-snapshot-id": SNAPSHOT_ID,
        "snapshots": [{"snapshot-id": SNAPSHOT_ID, "sequence-number": 1,
                       "timestamp-ms": 1700000000000, "manifest-list": str(d / "list.avro"),
                       "summary": {"operation": "append"}, "schema-id": 0}],
        "snapshot-log": [{"snapshot-id": SNAPSHOT_ID, "timestamp-ms": 1700000000000}],
        "metadata-log": [],
    }
    (d / "v1.metadata.json").write_text(json.dumps(meta, separators=(",", ":")))


# ------------------------------------------------------------------ tables

U_LOW = "0fffffff-ffff-ffff-ffff-ffffffffffff"
U_MAX = "ffffffff-ffff-ffff-ffff-ffffffffffff"
BIG_MAX = 10 ** 38 - 1  # decimal(38,10): unscaled values up to 38 digits

# f1..f7 of "typed": per column (value count, null count, lower, upper)
TYPED = {
    "f1": {2: (3, 0, dec(-1250), dec(-1)),  # price -12.50 .. -0.01
           3: (3, 0, dec(-BIG_MAX), dec(-10 ** 10)),  # big, most negative .. -1
           4: (3, 0, uuid("00000000-0000-0000-0000-000000000000"), uuid(U_LOW)),
           5: (3, 0, b"\x00", b"\x0a\x0b"),
           6: (3, 0, bytes.fromhex("00000001"), bytes.fromhex("0000ffff"))},
    "f2": {2: (3, 0, dec(0), dec(1234)),  # 0.00 .. 12.34
           3: (3, 0, dec(0), dec(123456789012345678901234567890)),
           4: (3, 0, uuid("10000000-0000-0000-0000-000000000000"),
               uuid("90000000-0000-0000-0000-000000000000")),  # across the high bit
           # values of 20 bytes starting with 16 "a": truncated as Java does
           5: (3, 0, b"a" * 16, b"a" * 15 + b"b"),
           6: (3, 0, bytes.fromhex("7fffffff"), bytes.fromhex("80000000"))},
    "f3": {2: (3, 0, dec(1235), dec(4500)),  # 12.35 .. 45.00
           3: (3, 0, dec(10 ** 37), dec(BIG_MAX)),
           4: (3, 0, uuid("80000000-0000-0000-0000-000000000001"),
               uuid("8fffffff-ffff-ffff-ffff-ffffffffffff")),
           5: (3, 0, b"\x80\x00", b"\xff\xff\xff"),
           6: (3, 0, bytes.fromhex("ffffff00"), bytes.fromhex("ffffffff"))},
    "f4": {2: (3, 0, dec(4501, 16), dec(9999999)),  # 45.01 (16 bytes) .. 99999.99
           4: (3, 0, uuid("f0000000-0000-0000-0000-000000000000"), uuid(U_MAX)),
           5: (3, 0, b"ab", b"ab")},  # one value, "ab"
    "f5": {2: (3, 3, None, None), 3: (3, 3, None, None), 4: (3, 3, None, None),
           5: (3, 3, None, None), 6: (3, 3, None, None)},  # all null
    "f6": {},  # no statistics
    "f7": {2: (3, 0, dec(1234), dec(1234)),  # 12.34 in every row
           4: (3, 0, uuid("c0ffee00-0000-4000-8000-000000000000"),
               uuid("c0ffee00-0000-4000-8000-000000000000")),
           5: (3, 0, b"", b"\x00")},  # the empty value and 00
}

U_A = "6ba7b810-9dad-11d1-80b4-00c04fd430c8"
U_B = "f79c3e09-677c-4bbd-a479-3f349cb785e7"


def part_tuple(price, ub, b, fx, big) -> bytes:
    out = b""
    out += zlong(0) if price is None else opt(dec(price, 4))
    out += zlong(0) if ub is None else zlong(1) + zlong(ub)
    out += zlong(0) if b is None else opt(zbytes(b))
    out += zlong(0) if fx is None else opt(fx)
    out += zlong(0) if big is None else opt(dec(big, 16))
    return out


def tables(root: Path) -> None:
    recs = b"".join(data_file(str(root / "typed" / "data" / (f + ".parquet")), b"", s)
                    for f, s in TYPED.items())
    write_table(root, "typed", [("m0.avro", recs, len(TYPED), None, True)], [])

    # typed_part: partition values only; p1 and p2 in m0, p3 in m1
    ua, ub = bucket(uuid(U_A), 4), bucket(uuid(U_B), 4)
    assert ua != ub, "the two uuids must fall in different buckets"
    p = [  # truncate[500](price), bucket[4](u), truncate[2](b), fx, big (unscaled)
        ("p1", (1000, ua, b"ab", bytes.fromhex("00000001"), 15 * 10 ** 9)),  # 10.00, 1.5
        ("p2", (-500, ub, b"\xff\xff", bytes.fromhex("80000000"), -2 * 10 ** 10)),  # -5.00, -2
        ("p3", (None, None, b"a", None, None)),  # a value of b shorter than 2
    ]
    files = {f: data_file(str(root / "typed_part" / "data" / (f + ".parquet")),
                          part_tuple(*v), {}) for f, v in p}
    m0_summary = [(False, dec(-500), dec(1000)),
                  (False, min(ua, ub).to_bytes(4, "little"), max(ua, ub).to_bytes(4, "little")),
                  (False, b"ab", b"\xff\xff"),
                  (False, bytes.fromhex("00000001"), bytes.fromhex("80000000")),
                  (False, dec(-2 * 10 ** 10), dec(15 * 10 ** 9))]
    m1_summary = [(True, None, None), (True, None, None), (False, b"a", b"a"),
                  (True, None, None), (True, None, None)]
    write_table(root, "typed_part", [
        ("m0.avro", files["p1"] + files["p2"], 2, m0_summary, True),
        ("m1.avro", files["p3"], 1, m1_summary, True)], PART_SPEC)

    # typed_summary: the manifest is not there; its summaries say its files
    # have price in [100.00, 104.99], u in bucket ua, b starting with "zz",
    # fx = 0000abcd, big = 7 (and no nulls)
    summary = [(False, dec(10000), dec(10000)), (False, ua.to_bytes(4, "little"),
                                                 ua.to_bytes(4, "little")),
               (False, b"zz", b"zz"), (False, bytes.fromhex("0000abcd"), bytes.fromhex("0000abcd")),
               (False, dec(7 * 10 ** 10), dec(7 * 10 ** 10))]
    write_table(root, "typed_summary", [("gone.avro", b"", 0, summary, False)], PART_SPEC)

    # typed_bad: a decimal bound of 17 bytes, a uuid bound of 15
    bad = data_file(str(root / "typed_bad" / "data" / "f.parquet"), b"", {
        2: (3, 0, b"\x00" * 17, dec(100)), 4: (3, 0, b"\x00" * 15, uuid(U_MAX))})
    write_table(root, "typed_bad", [("m0.avro", bad, 1, None, True)], [])


if __name__ == "__main__":
    tables(Path(sys.argv[1]).resolve())
