"""skade.plan_files() against brute force and pyiceberg's planner, over random
filters on the committed pyiceberg fixtures (test/data/clients/python): a file
holding a matching row is never missing from skade's plan."""

import json
import os
import random
from datetime import datetime
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from pyiceberg import expressions as E

from test_fixtures import index  # noqa: F401  (the registered fixture tree)

pytestmark = pytest.mark.usefixtures("fresh_skade")

NAMESPACES = ("fxt",)

CMP = ["eq", "not-eq", "lt", "lt-eq", "gt", "gt-eq"]
INVERSE = {"eq": "not-eq", "not-eq": "eq", "lt": "gt-eq", "gt-eq": "lt", "lt-eq": "gt",
           "gt": "lt-eq", "in": "not-in", "not-in": "in", "is-null": "not-null",
           "not-null": "is-null", "starts-with": "not-starts-with",
           "not-starts-with": "starts-with"}
PYICE = {"eq": E.EqualTo, "not-eq": E.NotEqualTo, "lt": E.LessThan, "lt-eq": E.LessThanOrEqual,
         "gt": E.GreaterThan, "gt-eq": E.GreaterThanOrEqual, "in": E.In, "not-in": E.NotIn,
         "starts-with": E.StartsWith, "not-starts-with": E.NotStartsWith}
VALUES = {"id": list(range(0, 12)), "category": ["", "a", "b", "c", "d", "ab"],
          "amount": [0.0, 2.5, 5.0, 6.0, 7.5, 10.0, 12.5], "name": ["p1", "p2", "p9", "q"],
          # day(ts) partitions: both ends of a day, inside and outside the data
          "ts": ["2024-03-01T00:00:00", "2024-03-01T08:01:00", "2024-03-01T23:59:59.999999",
                 "2024-03-02T00:00:00", "2024-03-02T08:03:00", "2024-02-29T12:00:00",
                 "2024-03-03T00:00:00"]}
TEXT = ("category", "name")


def leaf(rng, columns):
    col = rng.choice(columns)
    kind = rng.random()
    if kind < 0.1:
        return {"type": rng.choice(["is-null", "not-null"]), "term": col}
    if kind < 0.25:
        return {"type": rng.choice(["in", "not-in"]), "term": col,
                "values": rng.sample(VALUES[col], 2)}
    if kind < 0.35 and col in TEXT:
        return {"type": rng.choice(["starts-with", "not-starts-with"]), "term": col,
                "value": rng.choice(VALUES[col])[:1]}
    return {"type": rng.choice(CMP), "term": col, "value": rng.choice(VALUES[col])}


def random_filter(rng, columns, depth=0):
    r = rng.random()
    if depth >= 2 or r < 0.4:
        return leaf(rng, columns)
    if r < 0.55:
        return {"type": "not", "child": random_filter(rng, columns, depth + 1)}
    return {"type": rng.choice(["and", "or"]), "left": random_filter(rng, columns, depth + 1),
            "right": random_filter(rng, columns, depth + 1)}


def literal(term, x):
    return datetime.fromisoformat(x) if term == "ts" else x


def matches(f, row, negated=False):
    """Iceberg's semantics: not is pushed down; a null matches is-null, not-eq,
    not-in and not-starts-with (as Java's and pyiceberg's evaluators have it)
    and no other predicate."""
    t = f["type"]
    if t == "not":
        return matches(f["child"], row, not negated)
    if t in ("and", "or"):
        l, r = matches(f["left"], row, negated), matches(f["right"], row, negated)
        return (l and r) if (t == "and") != negated else (l or r)
    if negated:
        t = INVERSE[t]
    v = row.get(f["term"])
    if t == "is-null":
        return v is None
    if t == "not-null":
        return v is not None
    if v is None:
        return t in ("not-eq", "not-in", "not-starts-with")
    if t in ("in", "not-in"):
        return (v in [literal(f["term"], x) for x in f["values"]]) == (t == "in")
    if t in ("starts-with", "not-starts-with"):
        return v.startswith(f["value"]) == (t == "starts-with")
    x = literal(f["term"], f["value"])
    return {"eq": v == x, "not-eq": v != x, "lt": v < x, "lt-eq": v <= x, "gt": v > x,
            "gt-eq": v >= x}[t]


def pyiceberg_expr(f):
    t = f["type"]
    if t == "not":
        return E.Not(pyiceberg_expr(f["child"]))
    if t in ("and", "or"):
        return (E.And if t == "and" else E.Or)(pyiceberg_expr(f["left"]), pyiceberg_expr(f["right"]))
    if t == "is-null":
        return E.IsNull(f["term"])
    if t == "not-null":
        return E.NotNull(f["term"])
    if t in ("in", "not-in"):
        return PYICE[t](f["term"], set(f["values"]))
    return PYICE[t](f["term"], f["value"])


def file_rows(path):
    return pq.read_table(path.removeprefix("file://")).to_pylist()


def test_plan_files_never_misses_a_file(index, catalog, skade):  # noqa: F811
    rng = random.Random(int(os.environ.get("SKADE_PLAN_SEED", "20261129")))
    catalog.create_namespace("fxp")
    checked = pruned = agree = 0
    for info in index["tables"]:
        name = info["table"].split(".")[-1]
        skade.query("SELECT skade.register_table('fxp', %s, %s, 'py_cat')",
                    (name, info["current_metadata_location"]))
        table = catalog.load_table(f"fxp.{name}")
        columns = [c for c in ("id", "category", "amount", "name", "ts")
                   if c in table.schema().column_names]
        for snap in info["snapshots"]:
            sid = snap["snapshot_id"]
            every = {p for (p,) in skade.query(
                "SELECT file_path FROM skade.files('fxp', %s, %s, 'py_cat') WHERE content = 'data'",
                (name, sid))}
            rows = {p: file_rows(p) for p in every}
            for _ in range(40):
                f = random_filter(rng, columns)
                plan = {p for (p,) in skade.query(
                    "SELECT file_path FROM skade.plan_files('fxp', %s, %s, %s, 'py_cat') "
                    "WHERE content = 'data'", (name, json.dumps(f), sid))}
                truth = {p for p, rs in rows.items() if any(matches(f, r) for r in rs)}
                assert plan <= every, f"{name}@{sid} {f}: files not in the snapshot"
                assert truth <= plan, f"{name}@{sid} {f}: missing {sorted(truth - plan)}"
                theirs = {t.file.file_path for t in
                          table.scan(row_filter=pyiceberg_expr(f), snapshot_id=sid).plan_files()}
                assert truth <= theirs  # the brute force itself agrees with pyiceberg
                checked += 1
                pruned += len(every) - len(plan)
                agree += plan == theirs
    # the property holds trivially for a planner that keeps everything
    assert pruned > 0, "plan_files never pruned a file"
    print(f"{checked} filters: {pruned} files pruned, plan identical to pyiceberg's for {agree}")


# ---------------------------------------------------------------- decimal, uuid, binary, fixed

TYPED_ROWS = [  # per append (one file each): price decimal(9,2), u, b, fx fixed[4]
    [("-12.50", "00000000-0000-4000-8000-000000000001", b"\x01", b"\x00\x00\x00\x01"),
     ("-0.01", "0fffffff-ffff-4fff-bfff-ffffffffffff", b"\x0a\x0b", b"\x00\x00\xff\xff")],
    [("0.00", "10000000-0000-4000-8000-000000000000", b"a" * 20, b"\x7f\xff\xff\xff"),
     ("12.34", "90000000-0000-4000-8000-000000000000", b"a" * 16 + b"bcde", b"\x80\x00\x00\x00")],
    [("12.35", "80000000-0000-4000-8000-000000000001", b"\x80\x00", b"\xff\xff\xff\x00"),
     ("45.00", "8fffffff-ffff-4fff-bfff-ffffffffffff", b"\xff\xff\xff", b"\xff\xff\xff\xff")],
    [(None, None, None, None), (None, None, None, None)],
    [("12.34", "c0ffee00-0000-4000-8000-000000000000", b"", b"\x80\x00\x00\x00"),
     ("12.34", "c0ffee00-0000-4000-8000-000000000000", b"ab", b"\x80\x00\x00\x00")],
    [("99999.99", "ffffffff-ffff-4fff-bfff-ffffffffffff", b"ab", b"\x00\x01\x02\x03"),
     ("45.01", None, b"abc", None)],
]


def typed_value(rng, col, rows, canonical):
    """A literal near the data: as JSON for skade, and as pyiceberg's value (None when
    pyiceberg cannot take it: a decimal of another scale)."""
    from decimal import Decimal
    import uuid as uuidlib
    seen = [r[col] for r in rows if r[col] is not None]
    if col == "price":
        d = rng.choice(seen + [Decimal("0.00"), Decimal("-99999.99"), Decimal("7.50")])
        d += rng.choice([Decimal("0"), Decimal("0.01"), Decimal("-0.01")])
        if not canonical and rng.random() < 0.4:
            text = str(d) + rng.choice(["5", "1", "0"])  # 12.345: no value equals it
            return text, None
        return str(d), d
    if col == "u":
        u = rng.choice(seen + [uuidlib.UUID(int=0), uuidlib.UUID(int=(1 << 128) - 1),
                               uuidlib.UUID(int=1 << 127)])
        u = uuidlib.UUID(int=(u.int + rng.choice([0, 0, 1, -1])) % (1 << 128))
        return str(u), u
    b = rng.choice(seen + [b"", b"\x00", b"a", b"ab", b"\x80", b"\xff", b"a" * 17]
                   if col == "b" else seen + [b"\x00" * 4, b"\xff" * 4, b"\x80\x00\x00\x01"])
    if col == "b" and rng.random() < 0.3:
        b = b[:-1] if b and rng.random() < 0.5 else b + b"\x00"
    return b.hex(), b


def typed_leaf(rng, rows, canonical):
    col = rng.choice(["price", "u", "b", "fx"])
    op = rng.choice(["eq", "not-eq", "lt", "lt-eq", "gt", "gt-eq", "in", "not-in", "is-null",
                     "not-null", "eq", "in"])
    if op in ("is-null", "not-null"):
        return {"type": op, "term": col}, (E.IsNull if op == "is-null" else E.NotNull)(col)
    if op in ("in", "not-in"):
        vals = [typed_value(rng, col, rows, canonical) for _ in range(rng.randint(1, 3))]
        py = None if any(v is None for _, v in vals) else PYICE[op](col, {v for _, v in vals})
        return {"type": op, "term": col, "values": [j for j, _ in vals]}, py
    j, v = typed_value(rng, col, rows, canonical)
    return {"type": op, "term": col, "value": j}, None if v is None else PYICE[op](col, v)


def typed_filter(rng, rows, canonical, depth=0):
    r = rng.random()
    if depth >= 2 or r < 0.45:
        return typed_leaf(rng, rows, canonical)
    if r < 0.6:
        f, p = typed_filter(rng, rows, canonical, depth + 1)
        return {"type": "not", "child": f}, None if p is None else E.Not(p)
    (lf, lp), (rf, rp) = (typed_filter(rng, rows, canonical, depth + 1),
                          typed_filter(rng, rows, canonical, depth + 1))
    kind = rng.choice(["and", "or"])
    py = None if lp is None or rp is None else (E.And if kind == "and" else E.Or)(lp, rp)
    return {"type": kind, "left": lf, "right": rf}, py


def typed_matches(f, row, negated=False):
    """matches() for these types: decimals by value, uuids and bytes unsigned (as the spec)."""
    from decimal import Decimal
    import uuid as uuidlib

    def lit(term, x):
        if term == "price":
            return Decimal(x)
        if term == "u":
            return uuidlib.UUID(x)
        return bytes.fromhex(x)
    t = f["type"]
    if t == "not":
        return typed_matches(f["child"], row, not negated)
    if t in ("and", "or"):
        l, r = typed_matches(f["left"], row, negated), typed_matches(f["right"], row, negated)
        return (l and r) if (t == "and") != negated else (l or r)
    if negated:
        t = INVERSE[t]
    v = row[f["term"]]
    if t in ("is-null", "not-null"):
        return (v is None) == (t == "is-null")
    if v is None:
        return t in ("not-eq", "not-in")
    if t in ("in", "not-in"):
        return any(v == lit(f["term"], x) for x in f["values"]) == (t == "in")
    x = lit(f["term"], f["value"])
    return {"eq": v == x, "not-eq": v != x, "lt": v < x, "lt-eq": v <= x, "gt": v > x,
            "gt-eq": v >= x}[t]


def test_plan_files_typed_no_more_than_pyiceberg(catalog, skade):  # noqa: F811
    """decimal, uuid, binary and fixed columns written by pyiceberg: skade keeps every file
    with a matching row and, where pyiceberg takes the filter, no file pyiceberg prunes."""
    import uuid as uuidlib
    from decimal import Decimal

    import pyarrow as pa
    from pyiceberg.schema import Schema
    from pyiceberg.types import (BinaryType, DecimalType, FixedType, LongType, NestedField,
                                 UUIDType)

    catalog.create_namespace("fxt")
    table = catalog.create_table("fxt.typed", Schema(
        NestedField(1, "id", LongType(), required=False),
        NestedField(2, "price", DecimalType(9, 2), required=False),
        NestedField(3, "u", UUIDType(), required=False),
        NestedField(4, "b", BinaryType(), required=False),
        NestedField(5, "fx", FixedType(4), required=False)))
    arrow = table.schema().as_arrow()
    n = 0
    for commit in TYPED_ROWS:
        rows = []
        for price, u, b, fx in commit:
            n += 1
            rows.append({"id": n, "price": None if price is None else Decimal(price),
                         "u": None if u is None else uuidlib.UUID(u).bytes, "b": b, "fx": fx})
        table.append(pa.Table.from_pylist(rows, schema=arrow))
    table = catalog.load_table("fxt.typed")
    every = {p for (p,) in skade.query(
        "SELECT file_path FROM skade.files('fxt', 'typed', NULL, 'py_cat') WHERE content = 'data'")}
    assert len(every) == len(TYPED_ROWS)

    def norm(r):
        u = r["u"]
        if u is not None and not isinstance(u, uuidlib.UUID):
            u = uuidlib.UUID(bytes=bytes(u))
        return dict(r, u=u)
    rows = {p: [norm(r) for r in file_rows(p)] for p in every}
    # in the order of the rows written, whatever the files are called
    rows = dict(sorted(rows.items(), key=lambda kv: min(r["id"] for r in kv[1])))
    all_rows = [r for rs in rows.values() for r in rs]
    rng = random.Random(int(os.environ.get("SKADE_PLAN_SEED", "20261129")) + 1)
    checked = compared = pruned = agree = 0
    for i in range(300):
        f, py = typed_filter(rng, all_rows, canonical=i % 2 == 0)
        plan = {p for (p,) in skade.query(
            "SELECT file_path FROM skade.plan_files('fxt', 'typed', %s, NULL, 'py_cat') "
            "WHERE content = 'data'", (json.dumps(f),))}
        truth = {p for p, rs in rows.items() if any(typed_matches(f, r) for r in rs)}
        assert plan <= every, f"{f}: files not in the snapshot"
        assert truth <= plan, f"{f}: missing {sorted(truth - plan)}"
        checked += 1
        pruned += len(every) - len(plan)
        if py is not None:
            theirs = {t.file.file_path for t in table.scan(row_filter=py).plan_files()}
            assert truth <= theirs, f"{f}: pyiceberg drops {sorted(truth - theirs)}"
            assert plan <= theirs, \
                f"{f}: skade keeps files pyiceberg prunes: {sorted(plan - theirs)}"
            compared += 1
            agree += plan == theirs
    assert pruned > 0 and compared > 100
    print(f"typed: {checked} filters, {pruned} files pruned; {compared} compared with pyiceberg,"
          f" plan identical for {agree}")
