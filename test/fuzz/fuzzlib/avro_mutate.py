"""Mutations of Avro container files (manifest lists and manifests).

Three layers, each reaching a different part of the reader:
  - records: decoded with the writer schema, one value/record/schema edit,
    re-encoded with the same header and codec (reaches skade's checks of
    Iceberg fields: paths, lengths, bounds, partition values, content);
  - container: header map (writer schema: recursive, deep, not a record;
    codec names; Iceberg's schema/partition-spec/format-version keys) and
    blocks (record counts, byte sizes, sync markers, deflate bombs, snappy
    length preambles, split/duplicated blocks, another codec);
  - bytes: the generic byte mutator on the whole file or on one block's
    decompressed bytes (recompressed, so flips reach the decoder).
"""

from __future__ import annotations

import copy
import json
import random
import zlib

from . import avro
from .mutate import INTS, STRINGS, interesting, mutate_bytes, mutate_json

# ------------------------------------------------------------ writer schemas

RECURSIVE_SCHEMAS = [
    {"type": "record", "name": "r", "fields": [{"name": "a", "type": "r"}]},
    {"type": "record", "name": "R", "fields": [{"name": "next", "type": ["null", "R"]}]},
    {"type": "record", "name": "R", "fields": [{"name": "kids", "type": {"type": "array", "items": "R"}}]},
    {"type": "record", "name": "A", "fields": [{"name": "b", "type": {"type": "record", "name": "B",
                                                                     "fields": [{"name": "a", "type": "A"}]}}]},
    {"type": "record", "name": "R", "fields": [{"name": "m", "type": {"type": "map", "values": "R"}}]},
]
OTHER_SCHEMAS = [
    "string", "long", "null", "bytes", {"type": "array", "items": "string"},
    {"type": "map", "values": "bytes"}, {"type": "enum", "name": "e", "symbols": []},
    {"type": "enum", "name": "e", "symbols": ["A", "A"]}, {"type": "fixed", "name": "f", "size": -1},
    {"type": "fixed", "name": "f", "size": 2**40}, ["null", "string"], [],
    {"type": "record", "name": "r", "fields": []},
    {"type": "record", "name": "r", "fields": [{"name": "a", "type": "nosuchtype"}]},
    {"type": "record", "name": "r", "fields": [{"name": "a", "type": "int"}, {"name": "a", "type": "long"}]},
    {"type": "record", "name": "", "fields": [{"name": "", "type": "int"}]},
    {"type": "record", "name": "r", "fields": [{"name": "a", "type": ["int", "int"]}]},
    {"type": "record", "name": "r", "fields": [{"name": "a", "type": ["null", ["null"]]}]},
    {"type": "record", "name": "r", "fields": [{"name": "a", "type": {"type": "bytes", "logicalType": "decimal",
                                                                     "precision": -1, "scale": 99}}]},
    {"type": "record", "name": "r", "fields": "notalist"},
    {"type": "record", "fields": [{"name": "a", "type": "int"}]},
]


def deep_schema(rnd: random.Random) -> bytes:
    n = rnd.choice([100, 1000, 5000, 50000])
    kind = rnd.randrange(3)
    if kind == 0:       # records nested in records
        s = "".join(f'{{"type":"record","name":"r{i}","fields":[{{"name":"f","type":' for i in range(n))
        return (s + '"long"' + "}]}" * n).encode()
    if kind == 1:       # arrays of arrays
        return ('{"type":"array","items":' * n + '"long"' + "}" * n).encode()
    return ("[" * n + '"null"' + "]" * n).encode()   # unions of unions


def wide_schema(rnd: random.Random) -> bytes:
    n = rnd.choice([1000, 20000])
    fields = ",".join(f'{{"name":"f{i}","type":"long"}}' for i in range(n))
    return f'{{"type":"record","name":"r","fields":[{fields}]}}'.encode()


# ------------------------------------------------------ values by Avro type

def _named(schema, names):
    """index every named type (records, enums, fixed) by name"""
    if isinstance(schema, dict):
        if schema.get("type") in ("record", "enum", "fixed") and "name" in schema:
            names[schema["name"]] = schema
        for f in schema.get("fields", []) if isinstance(schema.get("fields"), list) else []:
            _named(f.get("type"), names)
        for k in ("items", "values"):
            if k in schema:
                _named(schema[k], names)
    elif isinstance(schema, list):
        for s in schema:
            _named(s, names)
    return names


def new_value(schema, old, rnd: random.Random, names: dict):
    """an edge value that fastavro can still encode with schema"""
    if isinstance(schema, str) and schema in names:
        schema = names[schema]
    if isinstance(schema, list):                           # union
        if "null" in schema and rnd.random() < 0.3:
            return None
        branch = rnd.choice([s for s in schema if s != "null"] or ["null"])
        return new_value(branch, old, rnd, names)
    t = schema.get("type") if isinstance(schema, dict) else schema
    if isinstance(t, (dict, list)):
        return new_value(t, old, rnd, names)
    if t == "null":
        return None
    if t == "boolean":
        return not old if isinstance(old, bool) else rnd.random() < 0.5
    if t == "int":
        return rnd.choice([0, -1, 1, 2**31 - 1, -2**31, 3, 7, 1000, 19783, -19783,
                           rnd.randrange(-2**31, 2**31)])
    if t == "long":
        return rnd.choice([v for v in INTS if -2**63 <= v < 2**63] + [rnd.randrange(-2**63, 2**63)])
    if t in ("float", "double"):
        return rnd.choice([float("nan"), float("inf"), float("-inf"), -0.0, 0.0, 1e308, -1e-308, 3.4e38])
    if t == "bytes":
        n = rnd.choice([0, 1, 2, 3, 4, 5, 7, 8, 9, 12, 16, 17, 32, 100, 100000])
        return bytes(rnd.choice([0, 0xFF, 0x80, 0x7F, rnd.randrange(256)]) for _ in range(n))
    if t == "string":
        return rnd.choice(STRINGS + ["x" * rnd.choice([256, 1001, 5000, 70000])])
    if t == "fixed":
        return bytes(rnd.randrange(256) for _ in range(schema.get("size", 0)))
    if t == "enum":
        return rnd.choice(schema.get("symbols") or [old])
    if t == "array":
        if isinstance(old, list) and old and rnd.random() < 0.6:
            return old * rnd.choice([0, 2, 100, 3000]) if rnd.random() < 0.5 else old[1:]
        return []
    if t == "map":
        return {} if rnd.random() < 0.5 else {s: new_value(schema["values"], None, rnd, names)
                                              for s in rnd.sample(STRINGS, 3)}
    if t == "record":
        return old
    return old


def _leaves(value, schema, names, out, depth=0):
    """(container, key, schema) for every value in a decoded record"""
    if depth > 30 or len(out) > 3000:
        return
    if isinstance(schema, str) and schema in names:
        schema = names[schema]
    if isinstance(schema, list):
        if value is None:
            return
        branches = [s for s in schema if s != "null"]
        if len(branches) == 1:
            _leaves(value, branches[0], names, out, depth + 1)
        return
    t = schema.get("type") if isinstance(schema, dict) else schema
    if isinstance(t, (dict, list)):
        _leaves(value, t, names, out, depth + 1)
    elif t == "record" and isinstance(value, dict):
        for f in schema["fields"]:
            if f["name"] in value:
                out.append((value, f["name"], f["type"]))
                _leaves(value[f["name"]], f["type"], names, out, depth + 1)
    elif t == "array" and isinstance(value, list):
        for i, v in enumerate(value[:50]):
            out.append((value, i, schema["items"]))
            _leaves(v, schema["items"], names, out, depth + 1)


# ---------------------------------------------------------- record edits

def rec_value(c: avro.Container, recs: list, rnd: random.Random) -> str:
    """one value of one record set to an edge value of its type"""
    schema = c.schema_json()
    names = _named(schema, {})
    rec = rnd.choice(recs)
    leaves = []
    _leaves(rec, schema, names, leaves)
    if not leaves:
        return "rec_none"
    container, key, sch = rnd.choice(leaves)
    container[key] = new_value(sch, container[key], rnd, names)
    return f"rec_value[{key}]"


def rec_struct(c: avro.Container, recs: list, rnd: random.Random, pool: list) -> str:
    """records dropped, duplicated, shuffled or taken from another file with
    the same writer schema (e.g. another table's manifests)"""
    op = rnd.randrange(6)
    if op == 0:
        recs.clear()
        return "rec_none_left"
    if op == 1 and recs:
        recs.extend([copy.deepcopy(rnd.choice(recs))] * rnd.choice([1, 10, 1000, 20000]))
        return "rec_duplicate"
    if op == 2 and recs:
        del recs[rnd.randrange(len(recs))]
        return "rec_delete"
    if op == 3:
        rnd.shuffle(recs)
        return "rec_shuffle"
    same = [s for s in pool if s.records and s.container.get("avro.schema") == c.get("avro.schema")]
    if same:
        other = rnd.choice(same)
        recs.extend(copy.deepcopy(rnd.sample(other.records, min(len(other.records), rnd.randint(1, 3)))))
        return "rec_splice"
    return "rec_noop"


def _fields(schema, names, path, out, depth=0):
    """(field dict, path of field names) for every record field"""
    if depth > 30:
        return
    if isinstance(schema, str) and schema in names:
        return                      # a reference: already visited where defined
    if isinstance(schema, list):
        for s in schema:
            _fields(s, names, path, out, depth + 1)
        return
    if not isinstance(schema, dict):
        return
    t = schema.get("type")
    if isinstance(t, (dict, list)):
        _fields(t, names, path, out, depth + 1)
    elif t == "record":
        for f in schema.get("fields", []):
            out.append((schema, f, path + [f["name"]]))
            _fields(f["type"], names, path + [f["name"]], out, depth + 1)
    elif t == "array":
        _fields(schema["items"], names, path, out, depth + 1)
    elif t == "map":
        _fields(schema["values"], names, path, out, depth + 1)


def _visit(value, path, fn):
    """fn(record dict, field name) wherever path leads (arrays traversed)"""
    if value is None:
        return
    if isinstance(value, list):
        for v in value:
            _visit(v, path, fn)
    elif isinstance(value, dict):
        if len(path) == 1:
            if path[0] in value:
                fn(value, path[0])
        elif path[0] in value:
            _visit(value[path[0]], path[1:], fn)


def schema_edit(c: avro.Container, recs: list, rnd: random.Random) -> tuple[dict, str]:
    """one field of the writer schema changed, and the records with it, so
    the file stays decodable: the change reaches skade's field lookups"""
    schema = c.schema_json()
    names = _named(schema, {})
    fields = []
    _fields(schema, names, [], fields)
    if not fields:
        return schema, "schema_none"
    rec_schema, f, path = rnd.choice(fields)
    op = rnd.randrange(6)
    t = f["type"]
    if op == 0:                                     # drop the field
        rec_schema["fields"] = [x for x in rec_schema["fields"] if x is not f]
        for r in recs:
            _visit(r, path, lambda d, k: d.pop(k, None))
        return schema, f"schema_drop[{f['name']}]"
    if op == 1:                                     # rename it
        new = rnd.choice([f["name"] + "_x", f["name"].upper(), "manifest_path", "file_path", "status",
                          "partition", "data_file", "content", "record_count"])
        if any(x["name"] == new for x in rec_schema["fields"]):
            return schema, "schema_noop"
        f["name"] = new
        for r in recs:
            _visit(r, path, lambda d, k: d.__setitem__(new, d.pop(k)))
        return schema, f"schema_rename[{path[-1]}->{new}]"
    if op == 2 and t == "int":                      # widen int -> long
        f["type"] = "long"
        return schema, f"schema_int_to_long[{f['name']}]"
    if op == 3 and t == "long":                     # narrow long -> int (values clamped)
        f["type"] = "int"
        for r in recs:
            _visit(r, path, lambda d, k: d.__setitem__(k, max(-2**31, min(2**31 - 1, d[k]))
                                                     if isinstance(d[k], int) else d[k]))
        return schema, f"schema_long_to_int[{f['name']}]"
    if op == 4:                                     # made nullable, some values null
        if not (isinstance(t, list) and "null" in t):
            f["type"] = ["null", t]
        for r in recs:
            _visit(r, path, lambda d, k: d.__setitem__(k, None) if rnd.random() < 0.5 else None)
        return schema, f"schema_nullable[{f['name']}]"
    if op == 5 and t in ("string", "bytes", "int", "long", "boolean", "double", "float"):
        new_t = rnd.choice([x for x in ("string", "bytes", "long", "double", "boolean") if x != t])
        conv = {"string": str, "bytes": lambda v: str(v).encode(), "long": lambda v: len(str(v)),
                "double": lambda v: float(len(str(v))), "boolean": bool}[new_t]
        f["type"] = new_t
        for r in recs:
            _visit(r, path, lambda d, k: d.__setitem__(k, conv(d[k])))
        return schema, f"schema_retype[{f['name']}:{t}->{new_t}]"
    return schema, "schema_noop"


# ------------------------------------------------------ container edits

_BOMBS: dict = {}


def deflate_bomb(mb: int) -> bytes:
    if mb not in _BOMBS:
        c = zlib.compressobj(9, zlib.DEFLATED, -15)
        chunk = bytes(1 << 20)
        _BOMBS[mb] = b"".join(c.compress(chunk) for _ in range(mb)) + c.flush()
    return _BOMBS[mb]


def header_edit(c: avro.Container, rnd: random.Random) -> str:
    op = rnd.randrange(10)
    if op == 0:
        c.set("avro.schema", json.dumps(rnd.choice(RECURSIVE_SCHEMAS)).encode())
        return "hdr_schema_recursive"
    if op == 1:
        c.set("avro.schema", deep_schema(rnd) if rnd.random() < 0.7 else wide_schema(rnd))
        return "hdr_schema_deep"
    if op == 2:
        c.set("avro.schema", json.dumps(rnd.choice(OTHER_SCHEMAS)).encode()
              if rnd.random() < 0.8 else rnd.choice([b"", b"{", b"null", b"\xff", b"[]" * 1000]))
        return "hdr_schema_other"
    if op == 3:
        try:
            doc, what = mutate_json(c.schema_json(), rnd)
        except Exception:
            return "hdr_noop"
        from .mutate import dumps
        c.set("avro.schema", dumps(doc))
        return "hdr_schema_" + what
    if op == 4:
        c.set("avro.codec", rnd.choice([b"zstandard", b"bzip2", b"xz", b"snappy", b"deflate", b"null",
                                        b"", b"DEFLATE", b"null\x00x", b"deflate" * 100, b"\xff"]))
        return "hdr_codec"
    if op == 5:
        key = rnd.choice(["schema", "partition-spec", "partition-spec-id", "format-version", "content",
                          "iceberg.schema", "snapshot-id", "parent-snapshot-id", "sequence-number"])
        old = c.get(key)
        try:
            doc, what = mutate_json(json.loads(old), rnd) if old else (interesting(rnd), "new")
            from .mutate import dumps
            val = dumps(doc)
        except Exception:
            val, what = str(rnd.choice(STRINGS + [str(v) for v in INTS])).encode(), "str"
        c.set(key, val)
        return f"hdr_iceberg[{key}:{what}]"
    if op == 6 and c.meta:
        del c.meta[rnd.randrange(len(c.meta))]
        return "hdr_drop_key"
    if op == 7 and c.meta:
        k, _ = rnd.choice(c.meta)
        c.meta.append((k, rnd.choice([b"", b"x", b"{}", b"2"])))
        return "hdr_dup_key"
    if op == 8:
        c.sync = bytes(rnd.randrange(256) for _ in range(16))
        return "hdr_sync"
    c.meta.append((rnd.choice([b"", b"\x00", b"k" * 10000]), b"v" * rnd.choice([0, 1, 1 << 20])))
    return "hdr_extra_key"


def block_edit(c: avro.Container, recs: list | None, rnd: random.Random) -> str:
    if not c.blocks:
        c.blocks.append(avro.Block(0, 0, b"", c.sync))
    blk = rnd.choice(c.blocks)
    op = rnd.randrange(11)
    if op == 0:
        blk.count = rnd.choice([0, -1, 1, blk.count + 1, max(0, blk.count - 1), 2**20, 2**31 - 1,
                                2**31, 2**62, -2**63])
        return f"blk_count[{blk.count}]"
    if op == 1:
        blk.size = rnd.choice([0, -1, blk.size + 1, max(0, blk.size - 1), 2**31, 2**40, -2**63])
        return f"blk_size[{blk.size}]"
    if op == 2:
        blk.sync = bytes(16) if rnd.random() < 0.5 else blk.sync[:15] + bytes([blk.sync[15] ^ 1])
        return "blk_sync"
    if op == 3:                                   # deflate bomb: MBs of zeros in one block
        mb = rnd.choice([16, 100, 300])
        c.set("avro.codec", b"deflate")
        blk.data = deflate_bomb(mb)
        blk.size = len(blk.data)
        blk.count = rnd.choice([blk.count, 1, 2**20])
        return f"blk_deflate_bomb[{mb}MB,count={blk.count}]"
    if op == 4:                                   # snappy: the declared length lies
        try:
            raw = avro.decompress(c.codec, blk.data)
        except Exception:
            raw = b"\x00" * 64
        comp = bytes(avro.cramjam.snappy.compress_raw(raw))
        _, pos = _uvarint(comp)
        declared = rnd.choice([0, 1, len(raw) - 1, len(raw) + 1, 2**31, 2**32 - 1, 2**28])
        crc = zlib.crc32(raw) if rnd.random() < 0.7 else 0
        c.set("avro.codec", b"snappy")
        blk.data = avro.varint(declared) + comp[pos:] + crc.to_bytes(4, "big")
        blk.size = len(blk.data)
        return f"blk_snappy_len[{declared}]"
    if op == 5:                                   # flip bytes before compression
        try:
            raw = avro.decompress(c.codec, blk.data)
            new, what = mutate_bytes(raw, rnd)
            blk.data = avro.compress(c.codec, new)
        except Exception:
            return "blk_noop"
        blk.size = len(blk.data)
        return "blk_raw_" + what
    if op == 6:                                   # one block per record, or a block repeated
        if recs is not None and rnd.random() < 0.5:
            c.set_records(recs, per_block=1)
            return "blk_per_record"
        c.blocks.extend([blk.copy() for _ in range(rnd.choice([1, 100, 5000]))])
        return "blk_repeat"
    if op == 7:
        c.blocks.append(avro.Block(0, 0, b"", c.sync))
        return "blk_empty"
    if op == 8:
        c.trailer = rnd.choice([b"\x00", b"\x02", b"\x02\x02x", bytes(17), b"\xff" * 10])
        return "blk_trailer"
    if op == 9 and recs is not None:              # a valid file in another codec
        codec = rnd.choice(["null", "deflate", "snappy", "zstandard"])
        c.set("avro.codec", codec.encode())
        c.set_records(recs, codec=codec)
        return f"blk_codec[{codec}]"
    c.blocks = []
    return "blk_none"


def _uvarint(b: bytes) -> tuple[int, int]:
    n = shift = pos = 0
    while pos < len(b):
        x = b[pos]
        pos += 1
        n |= (x & 0x7F) << shift
        if not x & 0x80:
            break
        shift += 7
    return n, pos


def header_map_bytes(c: avro.Container, rnd: random.Random) -> tuple[bytes, str]:
    """the header map itself encoded oddly (the rest of the file as is)"""
    body = c.to_bytes()[len(c.header_bytes()):]
    entries = b"".join(avro.write_long(len(k)) + k + avro.write_long(len(v)) + v for k, v in c.meta)
    op = rnd.randrange(4)
    if op == 0:    # negative count with a byte size (legal Avro, rarely written)
        head = avro.write_long(-len(c.meta)) + avro.write_long(len(entries)) + entries
        what = "hdrmap_negative_count"
    elif op == 1:
        head = avro.write_long(rnd.choice([2**31, 2**62, len(c.meta) + 1])) + entries
        what = "hdrmap_count"
    elif op == 2:
        head = avro.write_long(1) + avro.write_long(rnd.choice([2**40, -5, 2**31 - 1])) + b"avro.schema"
        what = "hdrmap_key_length"
    else:
        head = avro.write_long(1) + avro.write_long(11) + b"avro.schema" + \
            avro.write_long(rnd.choice([2**40, -5, 2**31 - 1]))
        what = "hdrmap_value_length"
    return avro.MAGIC + head + avro.write_long(0) + c.sync + body, what


# ------------------------------------------------------------------ entry

def mutate(seed, rnd: random.Random, pool: list, odd_paths: list) -> tuple[bytes, list]:
    """a mutated copy of seed (an AvroSeed); returns (bytes, op names)"""
    ops = []
    if seed.container is None or rnd.random() < 0.12:
        other = rnd.choice(pool).data if pool and rnd.random() < 0.2 else None
        b, what = mutate_bytes(seed.data, rnd, other)
        return b, [what]
    c = copy.deepcopy(seed.container)
    recs = copy.deepcopy(seed.records) if seed.records is not None else None
    layer = rnd.random()
    try:
        if recs is not None and layer < 0.45:
            if "manifest_path" in (recs[0] if recs else {}) and rnd.random() < 0.3:
                ops.append(list_path(recs, rnd, odd_paths))
            elif rnd.random() < 0.25:
                schema, what = schema_edit(c, recs, rnd)
                c.set("avro.schema", json.dumps(schema).encode())
                ops.append(what)
            elif rnd.random() < 0.3:
                ops.append(rec_struct(c, recs, rnd, pool))
            else:
                for _ in range(rnd.choice([1, 1, 2, 3])):
                    ops.append(rec_value(c, recs, rnd) if recs else "rec_empty")
            c.set_records(recs, schema=c.schema_json())
        elif layer < 0.75:
            ops.append(block_edit(c, recs, rnd))
        elif layer < 0.95:
            ops.append(header_edit(c, rnd))
        else:
            b, what = header_map_bytes(c, rnd)
            return b, [what]
    except Exception as e:
        # fastavro could not take the edit (an encoding error, a schema whose
        # defaults no longer fit, ...): fall back to bytes
        b, what = mutate_bytes(seed.data, rnd)
        return b, [f"encode_failed({type(e).__name__})", what]
    b = c.to_bytes()
    if rnd.random() < 0.05:
        b, what = mutate_bytes(b, rnd)
        ops.append(what)
    return b, ops


def list_path(recs: list, rnd: random.Random, odd_paths: list) -> str:
    """a manifest list entry pointing somewhere odd, or with an odd length"""
    r = rnd.choice(recs)
    if rnd.random() < 0.6:
        r["manifest_path"] = rnd.choice(odd_paths)
        return "list_odd_path"
    r["manifest_length"] = rnd.choice([0, -1, 1, r["manifest_length"] + 1, r["manifest_length"] - 1,
                                       2**31, 2**63 - 1, -2**63])
    return "list_odd_length"
