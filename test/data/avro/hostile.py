"""Hostile Avro inputs for test/regress/sql/avro_hostile.sql: manifest lists and
manifests that crashed a backend, blew up its memory or produced garbage
rows before skade validated Avro files itself, plus their
neighbours.  Every file is written byte by byte here (no Avro library), the
same bytes on every run:

    python3 hostile.py OUTDIR
    python3 hostile.py OUTDIR --big N     (only OUTDIR/big: N data files)
    python3 hostile.py OUTDIR --many N M  (only OUTDIR/many, many_bad: N manifests of M files)

writes OUTDIR/<case>/metadata/{v1.metadata.json, list.avro[, m0.avro]} for
each case below; the metadata's only snapshot points at list.avro, whose
manifests (if any) point at m0.avro (for "split": OUTDIR/split_manifests/
m0.avro, a good table whose manifest lies in another directory).  Paths
inside are absolute (OUTDIR).
"""

import json
import struct
import sys
import zlib
from pathlib import Path

SYNC = bytes(range(16))
SNAPSHOT_ID = 4242

LIST_SCHEMA = {
    "type": "record", "name": "manifest_file", "fields": [
        {"name": "manifest_path", "type": "string"},
        {"name": "manifest_length", "type": "long"},
        {"name": "partition_spec_id", "type": "int"},
        {"name": "content", "type": "int"},
        {"name": "sequence_number", "type": "long"},
        {"name": "min_sequence_number", "type": "long"},
        {"name": "added_snapshot_id", "type": "long"},
    ]}

MANIFEST_SCHEMA = {
    "type": "record", "name": "manifest_entry", "fields": [
        {"name": "status", "type": "int"},
        {"name": "snapshot_id", "type": ["null", "long"]},
        {"name": "data_file", "type": {
            "type": "record", "name": "r2", "fields": [
                {"name": "content", "type": "int"},
                {"name": "file_path", "type": "string"},
                {"name": "file_format", "type": "string"},
                {"name": "partition", "type": {"type": "record", "name": "r102", "fields": []}},
                {"name": "record_count", "type": "long"},
                {"name": "file_size_in_bytes", "type": "long"},
            ]}},
    ]}


# ------------------------------------------------------------------ encoding

def zlong(n: int) -> bytes:
    """An Avro long: zig-zag varint."""
    u = (n << 1) ^ (n >> 63)
    u &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = u & 0x7F
        u >>= 7
        if u:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def zbytes(b: bytes) -> bytes:
    return zlong(len(b)) + b


def zstr(s: str) -> bytes:
    return zbytes(s.encode())


def header(schema, codec: str = "null", extra=None) -> bytes:
    text = schema if isinstance(schema, (bytes, str)) else json.dumps(schema)
    if isinstance(text, str):
        text = text.encode()
    meta = [(b"avro.schema", text), (b"avro.codec", codec.encode())]
    meta += [(k.encode(), v.encode()) for k, v in (extra or {}).items()]
    out = b"Obj\x01" + zlong(len(meta))
    for k, v in meta:
        out += zbytes(k) + zbytes(v)
    return out + zlong(0) + SYNC


def block(count: int, data: bytes, sync: bytes = SYNC) -> bytes:
    return zlong(count) + zlong(len(data)) + data + sync


def list_record(path: str, length: int) -> bytes:
    return (zstr(path) + zlong(length) + zlong(0) + zlong(0) + zlong(1) + zlong(1)
            + zlong(SNAPSHOT_ID))


def manifest_record(path: str) -> bytes:
    # status ADDED, snapshot_id null, data_file{content 0, path, PARQUET, partition{}, 1 row, 100 bytes}
    return zlong(1) + zlong(0) + zlong(0) + zstr(path) + zstr("PARQUET") + zlong(1) + zlong(100)


def deflate_raw(data: bytes) -> bytes:
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush()


def snappy_zeros(n: int) -> bytes:
    """A valid snappy stream of n zero bytes (one literal, then copies of 64 at offset 1)."""
    out = bytearray()
    u = n
    while True:  # the uncompressed length, as a varint
        b = u & 0x7F
        u >>= 7
        out.append(b | (0x80 if u else 0))
        if not u:
            break
    out += bytes([0 << 2, 0])  # literal of 1 byte: 0x00
    left = n - 1
    while left > 0:
        k = min(64, left)
        if k < 4:  # copies of 1..3 bytes: literals instead
            out += bytes([(k - 1) << 2]) + bytes(k)
        else:
            out += bytes([((k - 1) << 2) | 2]) + struct.pack("<H", 1)
        left -= k
    return bytes(out)


# ------------------------------------------------------------------ cases

def write_table(root: Path, case: str, list_bytes: bytes, manifest: bytes = None,
                column_type="long", properties=None) -> None:
    d = root / case / "metadata"
    d.mkdir(parents=True, exist_ok=True)
    (d / "list.avro").write_bytes(list_bytes)
    if manifest is not None:
        (d / "m0.avro").write_bytes(manifest)
    meta = {
        "format-version": 2, "table-uuid": "00000000-0000-4000-8000-%012d" % len(case),
        "location": str(root / case), "last-sequence-number": 1, "last-updated-ms": 1700000000000,
        "last-column-id": 1, "current-schema-id": 0,
        "schemas": [{"type": "struct", "schema-id": 0,
                     "fields": [{"id": 1, "name": "id", "required": False, "type": column_type}]}],
        "default-spec-id": 0, "partition-specs": [{"spec-id": 0, "fields": []}],
        "last-partition-id": 999, "default-sort-order-id": 0,
        "sort-orders": [{"order-id": 0, "fields": []}], "properties": properties or {},
        "current-snapshot-id": SNAPSHOT_ID,
        "snapshots": [{"snapshot-id": SNAPSHOT_ID, "sequence-number": 1,
                       "timestamp-ms": 1700000000000, "manifest-list": str(d / "list.avro"),
                       "summary": {"operation": "append"}, "schema-id": 0}],
        "snapshot-log": [{"snapshot-id": SNAPSHOT_ID, "timestamp-ms": 1700000000000}],
        "metadata-log": [],
    }
    (d / "v1.metadata.json").write_text(json.dumps(meta, separators=(",", ":")))


def good_manifest(root: Path, case: str) -> bytes:
    return header(MANIFEST_SCHEMA) + block(1, manifest_record(str(root / case / "data" / "f.parquet")))


def list_of(root: Path, case: str, manifest: bytes, codec: str = "null") -> bytes:
    rec = list_record(str(root / case / "metadata" / "m0.avro"), len(manifest))
    return header(LIST_SCHEMA, codec) + block(1, rec)


def cases(root: Path) -> None:
    # the 114-byte crasher: a self-recursive record (stack overflow in libavro)
    write_table(root, "recursive_schema",
                header('{"type":"record","name":"r","fields":[{"name":"a","type":"r"}]}'))
    # a recursive union lets data nest without bound: 10,000 levels here
    rec_union = {"type": "record", "name": "R", "fields": [
        {"name": "manifest_path", "type": "string"}, {"name": "next", "type": ["null", "R"]}]}
    nested = b"".join(zstr("x") + zlong(1) for _ in range(10000)) + zstr("x") + zlong(0)
    write_table(root, "recursive_union", header(rec_union) + block(1, nested))
    # non-recursive but 100 records deep
    deep = {"type": "string"}
    for i in range(100):
        deep = {"type": "record", "name": "d%d" % i, "fields": [{"name": "f", "type": deep}]}
    deep_list = {"type": "record", "name": "manifest_file", "fields": [
        {"name": "manifest_path", "type": "string"}, {"name": "deep", "type": deep}]}
    write_table(root, "deep_schema", header(deep_list))
    # an array of nulls: any element count takes no bytes
    nulls = {"type": "record", "name": "manifest_file", "fields": [
        {"name": "manifest_path", "type": "string"},
        {"name": "n", "type": {"type": "array", "items": "null"}}]}
    write_table(root, "array_of_nulls", header(nulls) + block(1, zstr("x") + zlong(1 << 40) + zlong(0)))
    # a reference to a type never defined
    write_table(root, "undefined_type", header(
        '{"type":"record","name":"manifest_file","fields":[{"name":"manifest_path","type":"nope"}]}'))
    # deflate bomb: one record, then 16 MB of zeros, in one 16 kB block
    bomb = list_record(str(root / "deflate_bomb/metadata/m0.avro"), 1) + bytes(16 << 20)
    write_table(root, "deflate_bomb", header(LIST_SCHEMA, "deflate") + block(1, deflate_raw(bomb)))
    # a million records of zeros (1 MB): each decodes (an empty manifest_path,
    # zero counts), and manifests() formed all their rows at once (1.4 GB)
    write_table(root, "zero_records", header(LIST_SCHEMA, "deflate")
                + block(1 << 20, deflate_raw(bytes(7 << 20))))
    # 7 million nulls in one record's array of ["null", "long"]: 7 MB to
    # decode, but each element takes libavro-c dozens of bytes in memory
    many = {"type": "record", "name": "manifest_file", "fields": [
        {"name": "manifest_path", "type": "string"},
        {"name": "n", "type": {"type": "array", "items": ["null", "long"]}}]}
    write_table(root, "value_bomb", header(many, "deflate") + block(
        1, deflate_raw(zstr("x") + zlong(7 << 20) + bytes(7 << 20) + zlong(0))))
    # snappy bomb: a valid stream of 4 MB of zeros (declared up front)
    stream = snappy_zeros(4 << 20)
    crc = struct.pack(">I", zlib.crc32(bytes(4 << 20)) & 0xFFFFFFFF)
    write_table(root, "snappy_bomb", header(LIST_SCHEMA, "snappy") + block(1, stream + crc))
    # record-count bomb: a manifest that claims 2^20 records in one record's bytes
    m = good_manifest(root, "count_bomb")
    rec = manifest_record(str(root / "count_bomb" / "data" / "f.parquet"))
    m = header(MANIFEST_SCHEMA) + block(1 << 20, rec)
    write_table(root, "count_bomb", list_of(root, "count_bomb", m), m)
    # a record that ends early: 2 records claimed, 1 present
    m = header(MANIFEST_SCHEMA) + block(2, rec)
    write_table(root, "short_block", list_of(root, "short_block", m), m)
    # a block with more bytes than its records use
    m = header(MANIFEST_SCHEMA) + block(1, manifest_record(str(root / "long_block/data/f.parquet")) + b"\x00" * 8)
    write_table(root, "long_block", list_of(root, "long_block", m), m)
    # a string that claims 2^40 bytes
    huge = header(LIST_SCHEMA) + block(1, zlong(1 << 40) + b"abc")
    write_table(root, "huge_string", huge)
    # a block whose size is negative, and one without its sync marker
    write_table(root, "negative_size", header(LIST_SCHEMA) + zlong(1) + zlong(-5) + SYNC)
    rec = list_record(str(root / "no_sync/metadata/m0.avro"), 1)
    write_table(root, "no_sync", header(LIST_SCHEMA) + block(1, rec, sync=bytes(16)))
    # a manifest list whose schema is not one
    not_list = {"type": "record", "name": "x", "fields": [{"name": "path", "type": "string"}]}
    write_table(root, "not_a_list", header(not_list) + block(1, zstr("p")))
    # a manifest whose data_file has no file_path
    no_path = json.loads(json.dumps(MANIFEST_SCHEMA))
    no_path["fields"][2]["type"]["fields"][1]["name"] = "path"
    m = header(no_path) + block(1, manifest_record("x"))
    write_table(root, "not_a_manifest", list_of(root, "not_a_manifest", m), m)
    # a good table whose manifest lives in another directory than its list
    # (for the confinement test: a cached manifest outside the roots)
    m = header(MANIFEST_SCHEMA) + block(1, manifest_record(str(root / "split" / "data" / "f.parquet")))
    (root / "split_manifests").mkdir(parents=True, exist_ok=True)
    (root / "split_manifests" / "m0.avro").write_bytes(m)
    rec = list_record(str(root / "split_manifests" / "m0.avro"), len(m))
    write_table(root, "split", header(LIST_SCHEMA) + block(1, rec))
    # a string column whose lower bound is not UTF-8 (its upper one holds a NUL: hex)
    with_bounds = json.loads(json.dumps(MANIFEST_SCHEMA))
    kv = {"type": "record", "name": "k1_v2", "fields": [
        {"name": "key", "type": "int"}, {"name": "value", "type": "bytes"}]}
    with_bounds["fields"][2]["type"]["fields"] += [
        {"name": "lower_bounds", "type": ["null", {"type": "array", "items": kv}]},
        {"name": "upper_bounds", "type": ["null", {"type": "array", "items": "k1_v2"}]}]
    rec = (manifest_record(str(root / "bad_bound_utf8" / "data" / "f.parquet"))
           + zlong(1) + zlong(1) + zlong(1) + zbytes(b"\xff\xfe") + zlong(0)
           + zlong(1) + zlong(1) + zlong(1) + zbytes(b"a\x00b") + zlong(0))
    m = header(with_bounds) + block(1, rec)
    write_table(root, "bad_bound_utf8", list_of(root, "bad_bound_utf8", m), m, column_type="string")
    # a string column whose bounds are "a" and "a\0b": the NUL one as hex
    # (it was cut at the NUL, "a")
    rec = (manifest_record(str(root / "nul_bound" / "data" / "f.parquet"))
           + zlong(1) + zlong(1) + zlong(1) + zbytes(b"a") + zlong(0)
           + zlong(1) + zlong(1) + zlong(1) + zbytes(b"a\x00b") + zlong(0))
    m = header(with_bounds) + block(1, rec)
    write_table(root, "nul_bound", list_of(root, "nul_bound", m), m, column_type="string")
    # metadata: a current schema of structs nested 100 deep (the names of
    # its columns grew with the square of the depth), and a file of 450,000
    # tiny values (jansson needs 20 times its size to parse it)
    deep_type = "long"
    for i in range(100):
        deep_type = {"type": "struct", "fields": [{"id": 100 + i, "name": "s%d" % i,
                                                   "required": False, "type": deep_type}]}
    write_table(root, "deep_struct", header(LIST_SCHEMA), column_type=deep_type)
    write_table(root, "parse_budget", header(LIST_SCHEMA),
                properties={"many": [0] * 450000})
    # a manifest path that is not UTF-8, one with a NUL byte
    for case, bad in (("bad_utf8", b"/tmp/\xff\xfe.avro"), ("nul_path", b"/tmp/a\x00b.avro")):
        rec = zbytes(bad) + zlong(1) + zlong(0) + zlong(0) + zlong(1) + zlong(1) + zlong(SNAPSHOT_ID)
        write_table(root, case, header(LIST_SCHEMA) + block(1, rec))


def big(root: Path, n: int) -> None:
    """A good table whose one manifest lists n data files (for t/009)."""
    recs = b"".join(manifest_record(str(root / "big" / "data" / ("f%07d.parquet" % i)))
                    for i in range(n))
    m = header(MANIFEST_SCHEMA) + block(n, recs)
    write_table(root, "big", list_of(root, "big", m), m)


def many(root: Path, n: int, per: int) -> None:
    """Good tables of n deflate manifests of per data files each (for t/016):
    "many", and "many_bad", the same but for its third manifest from the end,
    whose block's record count does not fit its size."""
    for case in ("many", "many_bad"):
        d = root / case / "metadata"
        d.mkdir(parents=True, exist_ok=True)
        recs = []
        for k in range(n):
            body = b"".join(manifest_record(str(root / case / "data" / ("m%03d-f%05d.parquet" % (k, i))))
                            for i in range(per))
            count = per * 1000 if case == "many_bad" and k == n - 3 else per
            m = header(MANIFEST_SCHEMA, "deflate") + block(count, deflate_raw(body))
            (d / ("m%03d.avro" % k)).write_bytes(m)
            recs.append(list_record(str(d / ("m%03d.avro" % k)), len(m)))
        write_table(root, case, header(LIST_SCHEMA) + block(n, b"".join(recs)))


if __name__ == "__main__":
    if len(sys.argv) > 3 and sys.argv[2] == "--big":
        big(Path(sys.argv[1]).resolve(), int(sys.argv[3]))
    elif len(sys.argv) > 4 and sys.argv[2] == "--many":
        many(Path(sys.argv[1]).resolve(), int(sys.argv[3]), int(sys.argv[4]))
    else:
        cases(Path(sys.argv[1]).resolve())
