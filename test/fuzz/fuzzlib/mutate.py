"""Mutators: bytes, JSON documents (structure-aware) and gzip.

Every mutator takes a random.Random and returns the new value plus the name
of what it did (the names go into findings and the report, and let the
driver turn down operators that keep finding the same crash).

JSON documents are plain Python values plus two markers the serializer
understands: Raw (bytes written verbatim: numbers such as 1e400, invalid
UTF-8, lone surrogates, deep nesting) and Obj (an object as a list of
pairs, so that keys can repeat).
"""

from __future__ import annotations

import gzip
import json
import random
import re
import zlib

# ------------------------------------------------------------ JSON values


class Raw:
    """bytes emitted verbatim into the JSON text"""
    __slots__ = ("b",)

    def __init__(self, b: bytes):
        self.b = b


class Obj:
    """a JSON object with ordered, possibly repeated keys"""
    __slots__ = ("pairs",)

    def __init__(self, pairs):
        self.pairs = pairs


def dumps(v) -> bytes:
    """JSON text of v; the stdlib encoder does the work, Raw and Obj values
    go through a placeholder that is swapped for their bytes afterwards"""
    special = []

    def default(x):
        if isinstance(x, (Raw, Obj)):
            special.append(x)
            return f"\x00@{len(special) - 1}@\x00"
        return str(x)

    text = json.dumps(v, ensure_ascii=False, default=default, check_circular=False)
    out = text.encode("utf-8", "surrogatepass")
    if not special:
        return out
    raws = [x.b if isinstance(x, Raw) else _dump_obj(x) for x in special]
    return _PLACEHOLDER.sub(lambda m: raws[int(m.group(1))], out)


_PLACEHOLDER = re.compile(rb'"\\u0000@(\d+)@\\u0000"')


def _dump_obj(x) -> bytes:
    out = bytearray()
    _dump(x, out, 0)
    return bytes(out)


def _dump(v, out: bytearray, depth: int) -> None:
    if depth > 400:            # our own recursion; deep nesting is made with Raw
        out += b"null"
    elif isinstance(v, Raw):
        out += v.b
    elif v is None:
        out += b"null"
    elif v is True:
        out += b"true"
    elif v is False:
        out += b"false"
    elif isinstance(v, int):
        out += str(v).encode()
    elif isinstance(v, float):
        out += (repr(v) if v == v and abs(v) != float("inf") else "1e999").encode()
    elif isinstance(v, str):
        out += json.dumps(v, ensure_ascii=False).encode("utf-8", "surrogatepass")
    elif isinstance(v, (dict, Obj)):
        pairs = v.items() if isinstance(v, dict) else v.pairs
        out += b"{"
        for i, (k, x) in enumerate(pairs):
            if i:
                out += b","
            _dump(k if isinstance(k, (str, Raw)) else str(k), out, depth + 1)
            out += b":"
            _dump(x, out, depth + 1)
        out += b"}"
    elif isinstance(v, list):
        out += b"["
        for i, x in enumerate(v):
            if i:
                out += b","
            _dump(x, out, depth + 1)
        out += b"]"
    else:
        out += json.dumps(str(v)).encode()


# ------------------------------------------------------- interesting values

INTS = [0, 1, -1, 2, 7, 127, 128, 255, 256, 32767, 65535, 2**31 - 1, 2**31, -2**31, -2**31 - 1,
        2**32, 2**53, 2**53 + 1, 2**63 - 1, 2**63, -2**63, -2**63 - 1, 2**64, 10**30, -10**30]
RAW_NUMBERS = [b"1e400", b"-1e400", b"1e-400", b"-0", b"-0.0", b"0.0", b"1.5", b"1E2", b"1e+2",
               b"123456789012345678901234567890", b"0.1e-2147483648", b"1e2147483648",
               b"9223372036854775807.5", b"-9223372036854775809", b"18446744073709551616",
               b"3.4028235e39", b"4.9e-325", b"1" * 400]
STRINGS = ["", " ", "a", "0", "-1", "null", "true", "NaN", "Infinity", "-Infinity", "-0.0",
           "2024-03-01", "2024-02-30", "2024-03-01T08:00:00", "2024-03-01T08:00:00+00:00",
           "2024-03-01T08:00:00.123456789", "0001-01-01", "294276-12-31", "-4713-11-24",
           "00:00:00", "24:00:00", "file:///etc/passwd", "/etc/passwd", "s3://bucket/x",
           "../../../../etc/passwd", "file://localhost/tmp", "file:", "\u0000", "a\u0000b",
           "\u00e9", "\u540d\u524d", "\U0001F642", "\u202e", "\ufeff", "\uffff", "\U0010FFFF",
           "\u0301", "%s%s%n", "'; SELECT 1; --", "\\", "\"", "\n", "\t", "\x01\x1f\x7f",
           "deadbeef", "\\x00", "decimal(38, 10)", "decimal(0,0)", "fixed[16]",
           "list", "map", "struct", "bucket[0]", "truncate[-1]", "identity", "void",
           "long", "int", "string", "timestamp", "timestamptz", "timestamp_ns", "uuid",
           "binary", "boolean", "float", "double", "date", "time", "geometry", "variant", "unknown"]
RAW_STRINGS = [b'"\\ud800"', b'"\\udfff\\ud800"', b'"\xff\xfe"', b'"\xc0\xaf"', b'"\xed\xa0\x80"',
               b'"\xf4\x90\x80\x80"', b'"\x01\x02"', b'"\\u0000\\u0000"', b'"abc', b'"\\x"',
               b'"\\u12"', b'"\xe2\x82"']


def long_string(rnd: random.Random) -> str:
    n = rnd.choice([255, 256, 1000, 1001, 4096, 65536, 1 << 20])
    return rnd.choice(["a", "\u00e9", "\U0001F642", "\\", "/"]) * n


def deep_nesting(rnd: random.Random) -> Raw:
    n = rnd.choice([64, 1000, 2047, 2049, 10000, 100000])
    if rnd.random() < 0.5:
        return Raw(b"[" * n + b"1" + b"]" * n)
    return Raw(b'{"a":' * n + b"1" + b"}" * n)


def interesting(rnd: random.Random):
    """a JSON value of a random kind, biased to edges"""
    k = rnd.randrange(12)
    if k < 3:
        return rnd.choice(INTS)
    if k == 3:
        return Raw(rnd.choice(RAW_NUMBERS))
    if k < 6:
        return rnd.choice(STRINGS)
    if k == 6:
        return Raw(rnd.choice(RAW_STRINGS))
    if k == 7:
        return long_string(rnd)
    if k == 8:
        return rnd.choice([None, True, False, [], {}, [None], {"": None}])
    if k == 9:
        return deep_nesting(rnd) if rnd.random() < 0.3 else [rnd.choice(INTS)] * rnd.choice([1, 2, 100, 10000])
    if k == 10:
        return rnd.uniform(-1e300, 1e300)
    return rnd.randrange(-2**63, 2**63)


# --------------------------------------------------------- JSON mutations

def approx_size(v, limit: int = 8 << 20) -> int:
    """about how many bytes v serialises to; stops counting past limit"""
    total, stack = 0, [v]
    while stack and total <= limit:
        x = stack.pop()
        if isinstance(x, str):
            total += len(x) + 2
        elif isinstance(x, Raw):
            total += len(x.b)
        elif isinstance(x, dict):
            total += 2 + 4 * len(x)
            stack.extend(x.keys())
            stack.extend(x.values())
        elif isinstance(x, list):
            total += 2 + len(x)
            stack.extend(x)
        elif isinstance(x, Obj):
            stack.extend(v for p in x.pairs for v in p)
        else:
            total += 8
    return total


def _nodes(doc, path=(), out=None, limit=5000):
    """every (path, value) in doc, depth first (paths are keys/indexes)"""
    if out is None:
        out = []
    if len(out) >= limit:
        return out
    out.append((path, doc))
    if isinstance(doc, dict):
        for k, v in doc.items():
            _nodes(v, path + (k,), out, limit)
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:200]):
            _nodes(v, path + (i,), out, limit)
    return out


def _set(doc, path, value):
    if not path:
        return value
    parent = doc
    for p in path[:-1]:
        parent = parent[p]
    parent[path[-1]] = value
    return doc


def _containers(nodes, kind):
    return [(p, v) for p, v in nodes if isinstance(v, kind)]


def mutate_json(doc, rnd: random.Random, hints: dict | None = None):
    """one structure-aware mutation of doc (mutated in place where it can);
    returns (new doc, op name).  hints: Iceberg-aware mutations (see
    iceberg_mutation) are tried with some probability."""
    if isinstance(doc, dict) and rnd.random() < 0.3:
        r = iceberg_mutation(doc, rnd)
        if r:
            return doc, r
    nodes = _nodes(doc)
    op = rnd.choice(["value", "value", "number", "delete", "dup_key", "rename_key", "add_key",
                     "array", "deep", "long_string", "swap"])
    if op == "number":
        nums = [(p, v) for p, v in nodes if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if nums:
            p, _ = rnd.choice(nums)
            new = rnd.choice(INTS) if rnd.random() < 0.7 else Raw(rnd.choice(RAW_NUMBERS))
            return _set(doc, p, new), "json_number"
        op = "value"
    if op in ("delete", "dup_key", "rename_key", "add_key"):
        objs = _containers(nodes, dict)
        if objs:
            p, o = rnd.choice(objs)
            keys = list(o.keys())
            if op == "delete" and keys:
                del o[rnd.choice(keys)]
                return doc, "json_delete_key"
            if op == "dup_key" and keys:
                k = rnd.choice(keys)
                pairs = list(o.items()) + [(k, interesting(rnd))]
                rnd.shuffle(pairs)
                return _set(doc, p, Obj(pairs)), "json_dup_key"
            if op == "rename_key" and keys:
                k = rnd.choice(keys)
                nk = rnd.choice([k.upper(), k + "\u0000", k[:-1], "", " " + k, k + "x",
                                 rnd.choice(STRINGS)])
                o[nk] = o.pop(k)
                return doc, "json_rename_key"
            o[rnd.choice(STRINGS + ["snapshots", "refs", "schemas", "type", "term", "value"])] = interesting(rnd)
            return doc, "json_add_key"
        op = "value"
    if op == "array":
        arrs = _containers(nodes, list)
        if arrs:
            p, a = rnd.choice(arrs)
            how = rnd.randrange(5)
            if how == 0:
                a.clear()
            elif how == 1 and a:
                a.append(rnd.choice(a))
            elif how == 2 and a and len(a) < 100:
                a[:] = a * rnd.choice([2, 50, 1000])
            elif how == 3:
                rnd.shuffle(a)
            elif a:
                del a[rnd.randrange(len(a))]
            return doc, f"json_array{how}"
        op = "value"
    if op == "swap" and len(nodes) > 2:
        (p1, v1), (p2, v2) = rnd.sample(nodes[1:], 2)
        if p1[:len(p2)] != p2 and p2[:len(p1)] != p1:
            import copy
            return _set(doc, p1, copy.deepcopy(v2)), "json_swap"
    p, _ = rnd.choice(nodes)
    if op == "deep":
        return _set(doc, p, deep_nesting(rnd)), "json_deep"
    if op == "long_string":
        return _set(doc, p, long_string(rnd)), "json_long_string"
    return _set(doc, p, interesting(rnd)), "json_value"


def iceberg_mutation(md: dict, rnd: random.Random):
    """mutations that keep the metadata well-formed JSON but bend the Iceberg
    model: dangling or cyclic snapshot references, duplicate ids, huge
    snapshot lists, refs that point nowhere, unsorted logs"""
    snaps = md.get("snapshots") if isinstance(md.get("snapshots"), list) else None
    ids = [s.get("snapshot-id") for s in snaps or [] if isinstance(s, dict)]
    op = rnd.randrange(10)
    if op == 0 and snaps and len(snaps) >= 1:          # parent cycle
        a = rnd.choice(snaps)
        b = rnd.choice(snaps)
        if isinstance(a, dict) and isinstance(b, dict):
            a["parent-snapshot-id"] = b.get("snapshot-id")
            b["parent-snapshot-id"] = a.get("snapshot-id")
            return "ice_parent_cycle"
    if op == 1:
        md["current-snapshot-id"] = rnd.choice([-1, 0, 1, 2**63 - 1, -2**63, None] + ids)
        return "ice_current_snapshot"
    if op == 2 and snaps:                             # many snapshots
        n = rnd.choice([100, 2000, 10000])
        base = snaps[0]
        if isinstance(base, dict):
            import copy
            for i in range(n):
                s = copy.copy(base)
                s["snapshot-id"] = rnd.randrange(1, 2**62)
                s["parent-snapshot-id"] = snaps[-1].get("snapshot-id") if isinstance(snaps[-1], dict) else None
                s["timestamp-ms"] = rnd.randrange(0, 2**41)
                snaps.append(s)
            return "ice_many_snapshots"
    if op == 3 and snaps:                             # duplicate ids
        import copy
        snaps.append(copy.deepcopy(rnd.choice(snaps)))
        return "ice_dup_snapshot"
    if op == 4:
        refs = md.setdefault("refs", {}) if isinstance(md.get("refs", {}), dict) else None
        if refs is not None:
            name = rnd.choice(["main", "b", "", "\u00e9", "x" * 300])
            refs[name] = rnd.choice([
                {"snapshot-id": rnd.choice(ids + [12345, -1, 2**63 - 1]), "type": rnd.choice(["branch", "tag", "x", ""])},
                {"snapshot-id": rnd.choice(ids or [1]), "type": "tag", "max-ref-age-ms": rnd.choice(INTS)},
                {"snapshot-id": rnd.choice(ids or [1]), "type": "branch", "min-snapshots-to-keep": rnd.choice(INTS),
                 "max-snapshot-age-ms": rnd.choice(INTS)},
                {"type": "branch"}, "main", None, [], {"snapshot-id": "1", "type": "branch"}])
            return "ice_refs"
    if op == 5 and isinstance(md.get("snapshot-log"), list):
        log = md["snapshot-log"]
        log.append({"timestamp-ms": rnd.choice(INTS), "snapshot-id": rnd.choice(ids + [7, -1])})
        rnd.shuffle(log)
        return "ice_snapshot_log"
    if op == 6:
        md["format-version"] = rnd.choice([0, 1, 2, 3, 4, -1, "2", 2.0, None, 2**63])
        return "ice_format_version"
    if op == 7 and isinstance(md.get("metadata-log"), list):
        md["metadata-log"] += [{"timestamp-ms": rnd.choice(INTS), "metadata-file": rnd.choice(STRINGS)}] * rnd.choice([1, 1000])
        return "ice_metadata_log"
    if op == 8 and snaps:
        s = rnd.choice(snaps)
        if isinstance(s, dict):
            s[rnd.choice(["timestamp-ms", "sequence-number", "schema-id", "snapshot-id",
                          "parent-snapshot-id", "first-row-id", "added-rows"])] = rnd.choice(INTS + [None, "1"])
            return "ice_snapshot_field"
    if op == 9:
        key = rnd.choice(["schemas", "partition-specs", "sort-orders", "properties", "statistics",
                          "partition-statistics", "current-schema-id", "default-spec-id",
                          "last-sequence-number", "last-updated-ms", "table-uuid", "location",
                          "next-row-id", "encryption-keys"])
        md[key] = interesting(rnd)
        return "ice_field"
    return None


# --------------------------------------------------------- byte mutations

INTERESTING_BYTES = [0x00, 0x01, 0x7F, 0x80, 0xFF, 0xFE, 0x22, 0x5C, 0x7B, 0x5B, 0x2C, 0x3A, 0x30, 0x0A]
INTERESTING_CHUNKS = [b"\\u0000", b"\xc0\x80", b"1e999", b"-", b"[" * 1000, b"\xff" * 8, b"\x00" * 8,
                      b"\x80" * 10, b"\x01", b'"', b"}", b"]", b"\x7f\xff\xff\xff", b"\xfe\xff\xff\xff\x0f"]


def mutate_bytes(b: bytes, rnd: random.Random, other: bytes | None = None,
                 rounds: int | None = None) -> tuple[bytes, str]:
    """1..4 byte-level edits (bit flips, interesting bytes, chunk insert,
    delete, duplicate, truncation, splice with other)"""
    b = bytearray(b)
    ops = []
    for _ in range(rounds or rnd.choice([1, 1, 1, 2, 3, 4])):
        op = rnd.randrange(9 if other else 8)
        n = len(b)
        if op == 0 and n:
            for _ in range(rnd.randint(1, 8)):
                i = rnd.randrange(n)
                b[i] ^= 1 << rnd.randrange(8)
            ops.append("bitflip")
        elif op == 1 and n:
            b[rnd.randrange(n)] = rnd.choice(INTERESTING_BYTES)
            ops.append("byte_set")
        elif op == 2:
            i = rnd.randrange(n + 1)
            chunk = rnd.choice(INTERESTING_CHUNKS) if rnd.random() < 0.5 else \
                bytes(rnd.randrange(256) for _ in range(rnd.randint(1, 32)))
            b[i:i] = chunk
            ops.append("insert")
        elif op == 3 and n > 1:
            i = rnd.randrange(n)
            b[i:i + rnd.randint(1, max(1, min(64, n - i)))] = b""
            ops.append("delete")
        elif op == 4 and n > 1:
            i = rnd.randrange(n)
            j = min(n, i + rnd.randint(1, 256))
            k = rnd.randrange(n)
            b[k:k] = b[i:j] * rnd.choice([1, 1, 2, 16])
            ops.append("duplicate")
        elif op == 5 and n > 1:
            del b[rnd.randrange(n):]
            ops.append("truncate")
        elif op == 6 and n >= 4:            # a 32-bit little/big-endian edge value
            i = rnd.randrange(n - 3)
            b[i:i + 4] = rnd.choice([b"\xff\xff\xff\x7f", b"\x00\x00\x00\x80", b"\xff\xff\xff\xff",
                                     b"\x00\x00\x00\x00", b"\x7f\xff\xff\xff"])
            ops.append("word_set")
        elif op == 7 and n:                  # arithmetic on a byte
            i = rnd.randrange(n)
            b[i] = (b[i] + rnd.choice([-2, -1, 1, 2, 16, -16])) & 0xFF
            ops.append("arith")
        elif other:
            i = rnd.randrange(len(b) + 1)
            j = rnd.randrange(len(other) + 1)
            b = bytearray(bytes(b[:i]) + other[j:])
            ops.append("splice")
    return bytes(b), "bytes_" + "+".join(ops or ["none"])


# ----------------------------------------------------------------- gzip

def gzip_bytes(raw: bytes, rnd: random.Random) -> tuple[bytes, str]:
    """raw as gzip, well-formed or damaged"""
    level = rnd.choice([1, 6, 9])
    g = bytearray(gzip.compress(raw, compresslevel=level, mtime=0))
    op = rnd.randrange(12)
    if op < 5:
        return bytes(g), "gzip"
    if op == 5:                                   # flags that promise fields not there
        g[3] = rnd.choice([0x04, 0x08, 0x10, 0x02, 0xE0, 0xFF])
        return bytes(g), "gzip_flags"
    if op == 6:                                   # CRC-32 or ISIZE wrong
        i = len(g) - rnd.choice([8, 4])
        g[i:i + 4] = rnd.choice([b"\x00\x00\x00\x00", b"\xff\xff\xff\xff", b"\x01\x00\x00\x00"])
        return bytes(g), "gzip_trailer"
    if op == 7:
        return bytes(g[:rnd.randrange(2, len(g))]), "gzip_truncated"
    if op == 8:                                   # two members
        return bytes(g) + gzip.compress(raw[: len(raw) // 2], mtime=0), "gzip_two_members"
    if op == 9:
        return bytes(g) + b"\x00garbage", "gzip_trailing_garbage"
    if op == 10:                                  # method byte / magic
        g[2] = rnd.choice([0, 7, 9, 0xFF])
        return bytes(g), "gzip_method"
    return mutate_bytes(bytes(g), rnd)[0], "gzip_bytes"


def gzip_bomb(rnd: random.Random) -> tuple[bytes, str]:
    """a small file inflating to tens of MB (JSON-ish or zeros)"""
    mb = rnd.choice([8, 15, 17, 63, 65, 200])
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    head = rnd.choice([b"", b"{\"a\":\"", b"[" * 2000, b" "])
    out = c.compress(head)
    chunk = rnd.choice([b"\x00", b" ", b"a", b"["]) * (1 << 20)
    for _ in range(mb):
        out += c.compress(chunk)
    out += c.flush()
    return out, f"gzip_bomb_{mb}mb"
