"""Avro fixtures for skade's manifest reader (see README.md): Iceberg tables
in format v1 and v2 written by pyiceberg 0.12.0, v2 with manifest lists and
manifests in the Avro codecs null, deflate, snappy and zstandard, and bad
inputs derived from the v2 (deflate) table.  The v3 table is written by Java
(V3Fixture.java); regenerate.sh runs both and copies the result here.

    make_fixtures.py write    pyiceberg tables + derived bad tables
    make_fixtures.py index    tables.tsv (after the Java table is written too)

Every table is written at FIXTURE_ROOT/<table> (default
/tmp/skade-fixtures/avro), so the absolute paths inside point there.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import struct
import sys
import tempfile
import zlib
from datetime import datetime
from pathlib import Path

ROOT = Path(os.environ.get("FIXTURE_ROOT", "/tmp/skade-fixtures/avro")).resolve()
NAMESPACE = "avro"

# one row: id, category, ts, amount.  Partitioned by identity(category) and
# day(ts), so each append writes one Parquet file per (category, day).
APPENDS = [
    [(1, "a", datetime(2024, 3, 1, 8, 0), 10.0),      # (a, 03-01): ids 1-2
     (2, "a", datetime(2024, 3, 1, 9, 30), 20.5),
     (3, "b", datetime(2024, 3, 1, 10, 0), 30.0),     # (b, 03-01): id 3
     (4, "b", datetime(2024, 3, 2, 11, 0), 40.25)],   # (b, 03-02): id 4
    [(5, "a", datetime(2024, 3, 2, 12, 0), 50.0),     # (a, 03-02): ids 5-6
     (6, "a", datetime(2024, 3, 2, 13, 0), 60.0)],
    [(7, "c", datetime(2024, 3, 3, 14, 0), 70.0),     # (c, 03-03): ids 7-8, one null amount
     (8, "c", datetime(2024, 3, 3, 15, 0), None),
     (9, None, datetime(2024, 3, 3, 16, 0), 90.0)],   # (null, 03-03): id 9
]

# pyiceberg tables: name -> (format version, write.avro.compression-codec)
CLIENT_TABLES = {
    "v1": ("1", "gzip"),
    "v2_null": ("2", "null"),
    "v2_deflate": ("2", "gzip"),
    "v2_snappy": ("2", "snappy"),
    "zstd": ("2", "zstd"),
}


# ------------------------------------------------------------------ pyiceberg

def write_client_tables() -> None:
    import pyarrow as pa
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import DayTransform, IdentityTransform
    from pyiceberg.types import DoubleType, LongType, NestedField, StringType, TimestampType

    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "category", StringType(), required=False),
        NestedField(3, "ts", TimestampType(), required=False),
        NestedField(4, "amount", DoubleType(), required=False),
    )
    spec = PartitionSpec(
        PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="category"),
        PartitionField(source_id=3, field_id=1001, transform=DayTransform(), name="ts_day"),
    )
    arrow = pa.schema([
        pa.field("id", pa.int64(), nullable=False),
        pa.field("category", pa.string()),
        pa.field("ts", pa.timestamp("us")),
        pa.field("amount", pa.float64()),
    ])
    with tempfile.TemporaryDirectory() as tmp:
        catalog = SqlCatalog("avro_fixtures", uri=f"sqlite:///{tmp}/catalog.db", warehouse=ROOT.as_uri())
        catalog.create_namespace(NAMESPACE)
        for name, (version, codec) in CLIENT_TABLES.items():
            t = catalog.create_table(
                f"{NAMESPACE}.{name}", schema, partition_spec=spec,
                location=(ROOT / name).as_uri(),
                properties={"format-version": version, "write.avro.compression-codec": codec})
            for rows in APPENDS:
                t.append(pa.Table.from_pylist(
                    [dict(zip(("id", "category", "ts", "amount"), r)) for r in rows], schema=arrow))
            n = len(t.scan().to_arrow())
            assert n == sum(len(a) for a in APPENDS), (name, n)
            print(f"{name}: format v{t.metadata.format_version}, codec {codec}, "
                  f"{len(t.snapshots())} snapshots, {n} rows")
        catalog.close()


# ----------------------------------------------------- Avro container files
#
# A minimal container reader/writer: the header map is kept byte for byte
# (every key: avro.schema, schema, partition-spec, format-version, ...), only
# avro.codec changes when a file is re-encoded with another codec.  Records
# are decoded and encoded with fastavro against the file's own avro.schema.

def _read_long(b: bytes, pos: int) -> tuple[int, int]:
    shift = u = 0
    while True:
        c = b[pos]
        pos += 1
        u |= (c & 0x7F) << shift
        if not c & 0x80:
            return (u >> 1) ^ -(u & 1), pos
        shift += 7


def _long(n: int) -> bytes:
    u = (n << 1) ^ (n >> 63)
    out = bytearray()
    while u & ~0x7F:
        out.append((u & 0x7F) | 0x80)
        u >>= 7
    out.append(u)
    return bytes(out)


class Container:
    def __init__(self, path: Path, header_only: bool = False):
        b = path.read_bytes()
        assert b[:4] == b"Obj\x01", path
        pos = 4
        self.meta: list[tuple[str, bytes]] = []
        while True:
            count, pos = _read_long(b, pos)
            if count == 0:
                break
            if count < 0:
                count = -count
                _, pos = _read_long(b, pos)
            for _ in range(count):
                kl, pos = _read_long(b, pos)
                k = b[pos:pos + kl].decode()
                pos += kl
                vl, pos = _read_long(b, pos)
                self.meta.append((k, b[pos:pos + vl]))
                pos += vl
        self.sync = b[pos:pos + 16]
        pos += 16
        self.header_len = pos
        self.blocks: list[tuple[int, int, int]] = []   # (count, data offset, data length)
        while pos < len(b) and not header_only:
            count, pos = _read_long(b, pos)
            size, pos = _read_long(b, pos)
            self.blocks.append((count, pos, size))
            pos += size
            assert b[pos:pos + 16] == self.sync, path
            pos += 16
        self.bytes = b

    def get(self, key: str) -> str:
        return dict(self.meta)[key].decode()

    @property
    def codec(self) -> str:
        return dict(self.meta).get("avro.codec", b"null").decode()

    def schema(self):
        import fastavro
        return fastavro.parse_schema(json.loads(self.get("avro.schema")))

    def raw_blocks(self) -> list[bytes]:
        return [decompress(self.codec, self.bytes[o:o + n]) for _, o, n in self.blocks]

    def records(self) -> list[dict]:
        import fastavro
        schema = self.schema()
        out = []
        for (count, _, _), raw in zip(self.blocks, self.raw_blocks()):
            buf = io.BytesIO(raw)
            out += [fastavro.schemaless_reader(buf, schema, None) for _ in range(count)]
            assert buf.tell() == len(raw)
        return out


def compress(codec: str, raw: bytes) -> bytes:
    if codec == "null":
        return raw
    if codec == "deflate":
        c = zlib.compressobj(9, zlib.DEFLATED, -15)
        return c.compress(raw) + c.flush()
    if codec == "snappy":
        import snappy
        return snappy.compress(raw) + struct.pack(">I", zlib.crc32(raw))
    if codec == "zstandard":
        import zstandard
        return zstandard.ZstdCompressor().compress(raw)
    raise ValueError(codec)


def decompress(codec: str, data: bytes) -> bytes:
    if codec == "null":
        return data
    if codec == "deflate":
        return zlib.decompress(data, -15)
    if codec == "snappy":
        import snappy
        raw = snappy.decompress(data[:-4])
        assert struct.unpack(">I", data[-4:])[0] == zlib.crc32(raw)
        return raw
    if codec == "zstandard":
        import zstandard
        return zstandard.ZstdDecompressor().decompressobj().decompress(data)
    raise ValueError(codec)


def write_container(path: Path, c: Container, records: list[dict], codec: str | None = None,
                    meta: dict[str, str] | None = None) -> int:
    """records into one block, with c's header (avro.codec -> codec; keys in
    meta replaced); returns the file size."""
    import fastavro
    codec = codec or c.codec
    schema = c.schema()
    raw = io.BytesIO()
    for r in records:
        fastavro.schemaless_writer(raw, schema, r)
    header = bytearray(b"Obj\x01")
    entries = []
    for k, v in c.meta:
        if k == "avro.codec":
            v = codec.encode()
        elif meta and k in meta:
            v = meta[k].encode()
        entries.append((k, v))
    header += _long(len(entries))
    for k, v in entries:
        header += _long(len(k.encode())) + k.encode() + _long(len(v)) + v
    header += _long(0) + c.sync
    data = compress(codec, raw.getvalue())
    body = _long(len(records)) + _long(len(data)) + data + c.sync
    path.write_bytes(bytes(header) + body)
    return path.stat().st_size


def check_roundtrip(path: Path) -> None:
    """Our encoder reproduces the client's record bytes exactly."""
    import fastavro
    c = Container(path)
    schema = c.schema()
    for (count, _, _), raw in zip(c.blocks, c.raw_blocks()):
        buf = io.BytesIO(raw)
        recs = [fastavro.schemaless_reader(buf, schema, None) for _ in range(count)]
        out = io.BytesIO()
        for r in recs:
            fastavro.schemaless_writer(out, schema, r)
        assert out.getvalue() == raw, f"{path}: records do not re-encode to the same bytes"


# ------------------------------------------------------- derived bad tables

BASE = "v2_deflate"


def current_metadata(table_dir: Path) -> Path:
    files = sorted(table_dir.glob("metadata/*.metadata.json"))
    files = [f for f in files if re.match(r"^(\d{5})-", f.name)] or \
        sorted(table_dir.glob("metadata/v*.metadata.json"), key=lambda f: int(re.sub(r"\D", "", f.name)))
    return files[-1]


def derive(name: str, mutate, manifest_codec: str | None = None, schema_edit=None,
           after=None) -> None:
    """A copy of BASE's metadata (manifest lists rewritten to the new paths and
    manifest lengths; data files stay BASE's) as table `name`, whose manifest
    of the first append is re-written with mutate(records) applied to its
    records (and codec manifest_codec, and schema_edit(schema dict) applied to
    its "schema" header and to the table's schemas).  after(manifest path)
    then damages the written manifest at byte level if given."""
    src, dst = ROOT / BASE, ROOT / name
    src_uri, dst_uri = src.as_uri(), dst.as_uri()
    (dst / "metadata").mkdir(parents=True)
    meta_path = current_metadata(src)
    md = json.loads(meta_path.read_text())
    first = min(md["snapshots"], key=lambda s: s["sequence-number"])
    target_list = Container(Path(first["manifest-list"].removeprefix("file://")))
    target = target_list.records()[0]["manifest_path"]        # the first append's manifest
    lengths = {}
    for f in sorted((src / "metadata").glob("*-m*.avro")):
        out = dst / "metadata" / f.name
        if f.as_uri() == target:
            c = Container(f)
            meta = None
            if schema_edit:
                s = json.loads(c.get("schema"))
                schema_edit(s)
                meta = {"schema": json.dumps(s, separators=(",", ":"))}
            lengths[out.as_uri()] = write_container(out, c, mutate(c.records()), manifest_codec, meta)
        else:
            shutil.copyfile(f, out)
            lengths[out.as_uri()] = out.stat().st_size
    for f in sorted((src / "metadata").glob("snap-*.avro")):
        c = Container(f)
        recs = c.records()
        for r in recs:
            r["manifest_path"] = r["manifest_path"].replace(src_uri + "/", dst_uri + "/")
            r["manifest_length"] = lengths[r["manifest_path"]]
        write_container(dst / "metadata" / f.name, c, recs)
    text = meta_path.read_text().replace(src_uri + "/", dst_uri + "/")
    md = json.loads(text)
    md["location"] = dst_uri
    md["metadata-log"] = []
    if schema_edit:
        for s in md["schemas"]:
            schema_edit(s)
        md["last-column-id"] = max(f["id"] for s in md["schemas"] for f in s["fields"])
    (dst / "metadata" / meta_path.name).write_text(json.dumps(md, indent=2))
    print(f"{name}: derived from {BASE}")
    if after:
        after(Path(target.replace(src_uri + "/", dst_uri + "/").removeprefix("file://")))


def first_entry(edit):
    def mutate(records):
        edit(records[0]["data_file"])
        return records
    return mutate


def bad_bound(df):
    # id is a long: 8 bytes.  3 bytes is corrupt.
    df["lower_bounds"] = [kv if kv["key"] != 1 else {"key": 1, "value": b"\x01\x00\x00"}
                          for kv in df["lower_bounds"]]


def bad_content(df):
    df["content"] = 7


GEO_LO = struct.pack("<dd", 10.5, 59.25)      # geometry bound: x, y (Iceberg v3 single-value form)
GEO_HI = struct.pack("<dd", 11.75, 60.5)
VARIANT_LO = bytes.fromhex("01000000")          # some bytes: skade cannot know what they mean


def exotic_schema(s):
    s["fields"] += [
        {"id": 5, "name": "geo", "required": False, "type": "geometry"},
        {"id": 6, "name": "doc", "required": False, "type": "variant"},
    ]


def exotic_stats(df):
    for key, lo, hi in ((5, GEO_LO, GEO_HI), (6, VARIANT_LO, VARIANT_LO)):
        df["value_counts"].append({"key": key, "value": df["record_count"]})
        df["null_value_counts"].append({"key": key, "value": 0})
        df["lower_bounds"].append({"key": key, "value": lo})
        df["upper_bounds"].append({"key": key, "value": hi})


def flip_block(codec_check):
    """XOR 8 bytes in the middle of the manifest's (single) data block, at
    the first offset where decoding then fails (same file length)."""
    def damage(path: Path):
        c = Container(path)
        _, off, n = c.blocks[0]
        b = bytearray(c.bytes)
        for start in range(off + n // 2, off + n - 8):
            trial = bytearray(b)
            for i in range(start, start + 8):
                trial[i] ^= 0xFF
            try:
                codec_check(bytes(trial[off:off + n]))
            except Exception:
                path.write_bytes(bytes(trial))
                print(f"  {path.name}: bytes {start - off}..{start - off + 7} of its "
                      f"{n}-byte block flipped")
                return
        raise AssertionError("no corrupting flip found")
    return damage


def flip_at(where, n, what):
    """XOR n bytes of the manifest's (single) data block from offset
    where(block bytes) on (same file length)."""
    def damage(path: Path):
        c = Container(path)
        _, off, size = c.blocks[0]
        start = off + where(c.bytes[off:off + size])
        b = bytearray(c.bytes)
        for i in range(start, start + n):
            b[i] ^= 0xFF
        path.write_bytes(bytes(b))
        print(f"  {path.name}: bytes {start - off}..{start - off + n - 1} of its "
              f"{size}-byte block flipped ({what})")
    return damage


def truncate(nbytes):
    def damage(path: Path):
        b = path.read_bytes()
        path.write_bytes(b[:-nbytes])
        print(f"  {path.name}: cut from {len(b)} to {len(b) - nbytes} bytes")
    return damage


def write_bad_tables() -> None:
    keep = lambda records: records
    derive("bad_bound_length", first_entry(bad_bound))
    derive("bad_content", first_entry(bad_content))
    derive("bad_zstd_manifest", keep, manifest_codec="zstandard")
    derive("exotic_types", first_entry(exotic_stats), schema_edit=exotic_schema)
    derive("corrupt_deflate", keep, after=flip_block(lambda d: zlib.decompress(d, -15)))
    # snappy carries a CRC-32 of each block (its last 4 bytes): the block
    # decompresses, but the CRC does not match
    derive("corrupt_snappy", keep, manifest_codec="snappy",
           after=flip_at(lambda d: len(d) - 4, 4, "the CRC-32"))
    # no codec: flipped bytes reach the record decoder as they are; here the
    # 2-byte length of the first data file's path (129) and the path's first
    # 6 bytes: the length reads as -63
    derive("corrupt_null", keep, manifest_codec="null",
           after=flip_at(lambda d: d.index(b"file://") - 2, 8, "the first file_path's length"))
    derive("short_manifest", keep, after=truncate(10))


# ---------------------------------------------------------------------- main

def check_all() -> None:
    for f in sorted(ROOT.rglob("*.avro")):
        if f.parent.parent.name.startswith(("corrupt_", "short_")):
            continue
        check_roundtrip(f)


def index() -> None:
    lines = ["table\tmetadata_location\tformat_version\tmanifest_codec"]
    for d in sorted(p for p in ROOT.iterdir() if p.is_dir()):
        m = current_metadata(d)
        md = json.loads(m.read_text())
        snap = next(s for s in md["snapshots"] if s["snapshot-id"] == md["current-snapshot-id"])
        lst = Container(Path(snap["manifest-list"].removeprefix("file://")))
        man = lst.records()[-1]["manifest_path"]
        codec = Container(Path(man.removeprefix("file://")), header_only=True).codec
        lines.append(f"{d.name}\t{m}\t{md['format-version']}\t{codec}")
    (ROOT / "tables.tsv").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def main() -> int:
    what = sys.argv[1] if len(sys.argv) > 1 else "write"
    if what == "write":
        if ROOT.exists():
            shutil.rmtree(ROOT)
        ROOT.mkdir(parents=True)
        write_client_tables()
        for f in sorted(ROOT.rglob("*.avro")):
            check_roundtrip(f)
        write_bad_tables()
    elif what == "index":
        check_all()
        index()
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
