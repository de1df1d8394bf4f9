"""Avro object container files (Iceberg manifest lists and manifests), taken
apart and put back together byte for byte.

A container is: magic "Obj\\x01", a header map (key -> bytes: avro.schema,
avro.codec and Iceberg's schema, partition-spec, format-version, ...), a
16-byte sync marker, then blocks of (record count, byte size, data, sync).
Container keeps the header entries in order and every block's raw fields, so
that a file can be written back exactly, or with one part changed: the
records (decoded/encoded with fastavro against the file's own writer schema),
a header value, a block's count, size, data or sync marker.
"""

from __future__ import annotations

import io
import json
import struct
import zlib

import cramjam
import fastavro

MAGIC = b"Obj\x01"


# ------------------------------------------------------------ zigzag longs

def read_long(b: bytes, pos: int) -> tuple[int, int]:
    shift = u = 0
    while True:
        if pos >= len(b) or shift > 70:
            raise ValueError("truncated or overlong varint")
        c = b[pos]
        pos += 1
        u |= (c & 0x7F) << shift
        if not c & 0x80:
            return (u >> 1) ^ -(u & 1), pos
        shift += 7


def write_long(n: int) -> bytes:
    """zigzag varint; values outside int64 are written anyway (more bytes)"""
    u = (n << 1) ^ (n >> 63) if -(1 << 63) <= n < (1 << 63) else (abs(n) << 1)
    out = bytearray()
    while u & ~0x7F:
        out.append((u & 0x7F) | 0x80)
        u >>= 7
    out.append(u)
    return bytes(out)


def varint(n: int) -> bytes:
    """unsigned LEB128 (snappy's length preamble)"""
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _check_schema(s, enclosing: list, depth: int) -> None:
    if depth > 64:
        raise ValueError("writer schema too deep")
    if isinstance(s, str):
        if s in enclosing:
            raise ValueError("recursive writer schema")
    elif isinstance(s, list):
        for x in s:
            _check_schema(x, enclosing, depth + 1)
    elif isinstance(s, dict):
        name = s.get("name") if s.get("type") in ("record", "error") else None
        inner = enclosing + [name] if isinstance(name, str) else enclosing
        fields = s.get("fields")
        for f in fields if isinstance(fields, list) else []:
            _check_schema(f.get("type") if isinstance(f, dict) else f, inner, depth + 1)
        for k in ("items", "values", "type"):
            if k in s and not isinstance(s[k], str) or (k != "type" and k in s):
                _check_schema(s[k], inner, depth + 1)
    else:
        raise ValueError("not a schema")


# ------------------------------------------------------------------ codecs

def compress(codec: str, raw: bytes) -> bytes:
    if codec == "null":
        return raw
    if codec == "deflate":
        c = zlib.compressobj(6, zlib.DEFLATED, -15)
        return c.compress(raw) + c.flush()
    if codec == "snappy":   # raw snappy + big-endian CRC-32 of the uncompressed bytes
        return bytes(cramjam.snappy.compress_raw(raw)) + struct.pack(">I", zlib.crc32(raw))
    if codec == "zstandard":
        return bytes(cramjam.zstd.compress(raw))
    raise ValueError(f"unknown codec {codec!r}")


def decompress(codec: str, data: bytes, limit: int = 256 << 20) -> bytes:
    if codec == "null":
        return data
    if codec == "deflate":
        d = zlib.decompressobj(-15)
        out = d.decompress(data, limit)
        if d.unconsumed_tail:
            raise ValueError("deflate block inflates beyond the limit")
        return out
    if codec == "snappy":
        n = shift = 0
        for i, x in enumerate(data[:5]):       # the declared length, checked first
            n |= (x & 0x7F) << shift
            shift += 7
            if not x & 0x80:
                break
        if n > limit:
            raise ValueError("snappy block declares more than the limit")
        raw = bytes(cramjam.snappy.decompress_raw(data[:-4]))
        if struct.unpack(">I", data[-4:])[0] != zlib.crc32(raw):
            raise ValueError("snappy block CRC mismatch")
        return raw
    if codec == "zstandard":
        if len(data) * 1000 > limit:          # no streaming limit here: only small frames
            raise ValueError("zstandard block too large to inflate safely")
        return bytes(cramjam.zstd.decompress(data))
    raise ValueError(f"unknown codec {codec!r}")


# --------------------------------------------------------------- container

class Block:
    __slots__ = ("count", "size", "data", "sync")

    def __init__(self, count: int, size: int, data: bytes, sync: bytes):
        self.count, self.size, self.data, self.sync = count, size, data, sync

    def copy(self) -> "Block":
        return Block(self.count, self.size, self.data, self.sync)


class Container:
    """A parsed container file.  Raises ValueError if it is not one."""

    def __init__(self, b: bytes):
        if b[:4] != MAGIC:
            raise ValueError("not an Avro container")
        pos = 4
        self.meta: list[tuple[bytes, bytes]] = []
        while True:
            count, pos = read_long(b, pos)
            if count == 0:
                break
            if count < 0:
                count = -count
                _, pos = read_long(b, pos)
            if count > 10000:
                raise ValueError("header map too large")
            for _ in range(count):
                kl, pos = read_long(b, pos)
                k = b[pos:pos + kl]
                pos += kl
                vl, pos = read_long(b, pos)
                self.meta.append((k, b[pos:pos + vl]))
                pos += vl
        self.sync = b[pos:pos + 16]
        pos += 16
        if len(self.sync) != 16:
            raise ValueError("truncated header")
        self.blocks: list[Block] = []
        self.trailer = b""
        while pos < len(b):
            start = pos
            try:
                count, pos = read_long(b, pos)
                size, pos = read_long(b, pos)
            except ValueError:
                self.trailer = b[start:]
                break
            if size < 0 or pos + size + 16 > len(b):
                self.trailer = b[start:]
                break
            self.blocks.append(Block(count, size, b[pos:pos + size], b[pos + size:pos + size + 16]))
            pos += size + 16

    # header ------------------------------------------------------------
    def get(self, key: str, default: bytes | None = None) -> bytes | None:
        for k, v in self.meta:
            if k == key.encode():
                return v
        return default

    def set(self, key: str, value: bytes) -> None:
        for i, (k, _) in enumerate(self.meta):
            if k == key.encode():
                self.meta[i] = (k, value)
                return
        self.meta.append((key.encode(), value))

    @property
    def codec(self) -> str:
        return (self.get("avro.codec") or b"null").decode("utf-8", "replace")

    def schema_json(self):
        return json.loads(self.get("avro.schema"))

    def checked_schema(self):
        """the writer schema, if fastavro can take it: not recursive, not
        too deep (fastavro itself may crash on those)"""
        schema = self.schema_json()
        _check_schema(schema, [], 0)
        return schema

    # records -----------------------------------------------------------
    def records(self) -> list:
        """every record, decoded with the writer schema; ValueError if corrupt"""
        if self.trailer or any(b.sync != self.sync for b in self.blocks):
            raise ValueError("truncated container or bad sync marker")
        schema = fastavro.parse_schema(self.checked_schema())
        out = []
        for blk in self.blocks:
            raw = decompress(self.codec, blk.data)
            if blk.count < 0 or blk.count > len(raw) or len(out) + blk.count > 20000:
                raise ValueError("block claims more records than it can hold")
            buf = io.BytesIO(raw)
            for _ in range(blk.count):
                out.append(fastavro.schemaless_reader(buf, schema, None))
            if buf.tell() != len(raw):
                raise ValueError("block has trailing bytes")
        return out

    def set_records(self, records: list, schema=None, codec: str | None = None,
                    per_block: int | None = None) -> None:
        """replace the blocks by the records (one block, or per_block records
        per block), encoded with schema (default: the writer schema)"""
        codec = codec or self.codec
        parsed = fastavro.parse_schema(schema if schema is not None else self.schema_json())
        chunks = [records] if not per_block else \
            [records[i:i + per_block] for i in range(0, len(records), per_block)] or [[]]
        self.blocks = []
        for chunk in chunks:
            raw = io.BytesIO()
            for r in chunk:
                fastavro.schemaless_writer(raw, parsed, r)
            data = compress(codec, raw.getvalue())
            self.blocks.append(Block(len(chunk), len(data), data, self.sync))

    # bytes -------------------------------------------------------------
    def header_bytes(self) -> bytes:
        out = bytearray(MAGIC)
        if self.meta:
            out += write_long(len(self.meta))
            for k, v in self.meta:
                out += write_long(len(k)) + k + write_long(len(v)) + v
        out += write_long(0) + self.sync
        return bytes(out)

    def to_bytes(self) -> bytes:
        out = bytearray(self.header_bytes())
        for blk in self.blocks:
            out += write_long(blk.count) + write_long(blk.size) + blk.data + blk.sync
        return bytes(out) + self.trailer


def rehome(b: bytes, old: bytes, new: bytes) -> bytes:
    """b with every occurrence of old replaced by new (same length), looking
    inside compressed Avro blocks and gzip members where it can"""
    assert len(old) == len(new)
    if old not in b and not b.startswith((MAGIC, b"\x1f\x8b")):
        return b
    if b.startswith(MAGIC):
        try:
            c = Container(b)
        except (ValueError, IndexError):
            return b.replace(old, new)
        c.meta = [(k, v.replace(old, new)) for k, v in c.meta]
        for blk in c.blocks:
            try:
                raw = decompress(c.codec, blk.data, limit=1 << 30)
            except Exception:
                blk.data = blk.data.replace(old, new)
                continue
            if old in raw:
                data = compress(c.codec, raw.replace(old, new))
                blk.size += len(data) - len(blk.data)
                blk.data = data
        c.trailer = c.trailer.replace(old, new)
        return c.to_bytes()
    if b.startswith(b"\x1f\x8b"):
        import gzip
        try:
            raw = gzip.decompress(b)
        except Exception:
            return b.replace(old, new)
        return gzip.compress(raw.replace(old, new), mtime=0) if old in raw else b
    return b.replace(old, new)


def rehome_list(b: bytes, old: bytes, new: bytes, deltas: dict) -> bytes | None:
    """a manifest list re-homed by its records: paths replaced and each
    manifest_length moved by how much re-homing changed that manifest's
    size (deltas: new local path -> bytes); None if it does not decode"""
    try:
        c = Container(b)
        recs = c.records()
    except Exception:
        return None
    if not recs or not isinstance(recs[0], dict) or "manifest_path" not in recs[0]:
        return None
    o, n = old.decode(), new.decode()
    for r in recs:
        if isinstance(r.get("manifest_path"), str):
            r["manifest_path"] = r["manifest_path"].replace(o, n)
            for path, delta in deltas.items():
                if r["manifest_path"].endswith(path) and isinstance(r.get("manifest_length"), int):
                    r["manifest_length"] += delta
    c.meta = [(k, v.replace(old, new)) for k, v in c.meta]
    per_block = None if len(c.blocks) <= 1 else max(1, c.blocks[0].count)
    c.set_records(recs, per_block=per_block)
    return c.to_bytes()
