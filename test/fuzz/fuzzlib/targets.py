"""The fuzz targets.  Each step() makes fresh input and runs one or a few
SQL calls through Harness.run (each call is one execution of the target).

  metadata  mutated metadata JSON (plain and gzip) behind a table pointer,
            then the functions that read it
  avro      mutated manifest lists and manifests behind valid metadata,
            then manifests() / files() / plan_files()
  filter    plan_files() on good tables with generated/mutated filters
  commit    commit_transaction() change arrays, commit_table() odd arguments,
            snapshot lookups
  names     namespace and table names and properties through every
            namespace/table function
"""

from __future__ import annotations

import collections
import copy
import json
import os
import random
from pathlib import Path

from . import avro, avro_mutate
from .harness import Case, Harness, op_family
from .mutate import (INTS, RAW_NUMBERS, Raw, approx_size, deep_nesting, dumps, gzip_bomb,
                     gzip_bytes, interesting, mutate_bytes, mutate_json)

CATALOG = "skade"


def jtext(doc) -> str:
    """JSON text as a str for a jsonb parameter (invalid UTF-8 replaced:
    the server would refuse it before skade sees it)"""
    return dumps(doc).decode("utf-8", "replace")


def maybe_null(rnd: random.Random, v, p: float = 0.02):
    return None if rnd.random() < p else v


class Target:
    name = "?"

    def __init__(self, h: Harness, seeds, rnd: random.Random):
        self.h, self.seeds, self.rnd = h, seeds, rnd
        self.work = h.root / "work" / self.name
        self.work.mkdir(parents=True, exist_ok=True)
        self.counter = 0
        self.written = collections.deque()

    def new_path(self, suffix: str) -> Path:
        """a fresh file name: caches are keyed by location, files immutable"""
        self.counter += 1
        return self.work / f"{self.counter:08d}{suffix}"

    def write(self, path: Path, data: bytes) -> str:
        path.write_bytes(data)
        self.written.append(path)
        while len(self.written) > 400:        # keep the scratch root small
            try:
                self.written.popleft().unlink()
            except OSError:
                pass
        return str(path)

    def suppressed(self, ops) -> bool:
        """operators that already crashed the server 3 times are tried 1 in 10"""
        return any(self.h.op_crashes[op_family(o)] >= 3 for o in ops) and self.rnd.random() < 0.9

    def setup(self):
        pass

    def step(self):
        raise NotImplementedError


# ------------------------------------------------------------- table pools

class Pool:
    """a few tables whose pointer the target moves with every input; every
    `cycle` commits a table is dropped and registered again, so that its
    commit-log and snapshot-map rows do not pile up"""

    def __init__(self, h: Harness, ns: str, names, start_loc: str, cycle: int = 300):
        self.h, self.ns, self.start, self.cycle = h, ns, start_loc, cycle
        self.cur = {}
        self.commits = collections.Counter()
        h.sql("SELECT skade.create_namespace(%s)", (ns,))
        for n in names:
            self.reset(n)

    def reset(self, name: str):
        self.h.sql("""SELECT skade.drop_table(%s, %s) FROM public.iceberg_tables
                      WHERE catalog_name = %s AND table_namespace = %s AND table_name = %s""",
                   (self.ns, name, CATALOG, self.ns, name))
        self.h.sql("SELECT skade.register_table(%s, %s, %s)", (self.ns, name, self.start))
        self.cur[name] = self.start
        self.commits[name] = 0
        self.h.fp = None

    def point(self, target: Target, name: str, loc: str, case: Case, how: str):
        """make table name point at loc: skade.commit_table or a client's
        compare-and-swap UPDATE; returns True if it moved.  The commit reads
        the previous metadata too, so its case starts from there; the reads
        that follow get case, set up to start from loc"""
        h, ns, prev = self.h, self.ns, self.cur[name]
        start = [("SELECT skade.create_namespace(%s)", (ns,)), ("SELECT skade.drop_table(%s, %s)", (ns, name))]
        ccase = Case(case.target, files=case.files + [prev], ops=case.ops,
                     setup=start + [("SELECT skade.register_table(%s, %s, %s)", (ns, name, prev))])
        case.setup = start + [("SELECT skade.register_table(%s, %s, %s)", (ns, name, loc))]
        if how == "update":
            rows, code = h.run(target.name, "client_update",
                               """UPDATE public.iceberg_tables SET metadata_location = %s,
                                  previous_metadata_location = %s
                                  WHERE catalog_name = %s AND table_namespace = %s
                                  AND table_name = %s AND metadata_location = %s""",
                               (loc, prev, CATALOG, ns, name, prev), ccase, writes=True)
        else:
            rows, code = h.run(target.name, "commit_table", "SELECT skade.commit_table(%s, %s, %s, %s)",
                               (ns, name, prev, loc), ccase, writes=True)
        if code is None:
            self.cur[name] = loc
            self.commits[name] += 1
            if self.commits[name] >= self.cycle:
                self.reset(name)
                self.cur[name] = self.start
            return True
        if code in ("lost", "40001") or code.startswith("XX") or code == "57014":
            self.resync(name)
        return False

    def resync(self, name):
        rows = self.h.sql("""SELECT metadata_location FROM public.iceberg_tables WHERE catalog_name = %s
                             AND table_namespace = %s AND table_name = %s""", (CATALOG, self.ns, name))
        if rows and rows[0][0]:
            self.cur[name] = rows[0][0]
        else:
            self.reset(name)


def location_form(rnd: random.Random, path: str) -> str:
    """the same file as an absolute path or one of the file: URI forms"""
    return rnd.choices([path, "file://" + path, "file:" + path, "file://localhost" + path],
                       weights=[6, 2, 1, 1])[0]


# ----------------------------------------------------------------- metadata

class MetadataTarget(Target):
    """metadata JSON: mutated, written under a fresh name, pointed at, read"""
    name = "metadata"
    NS = "fz_meta"

    def setup(self):
        start = str(self.h.root / "seeds" / "metadata" / "00003-v2.metadata.json")
        self.pool = Pool(self.h, self.NS, [f"m{i}" for i in range(4)], start, cycle=200)
        self.raw = [b for _, b in self.seeds.metadata_raw]
        self.docs = [d for _, d in self.seeds.metadata_json]

    def make_input(self) -> tuple[bytes, list, object]:
        rnd = self.rnd
        ops, doc = [], None
        if rnd.random() < 0.75:
            doc = copy.deepcopy(rnd.choice(self.docs))
            for _ in range(rnd.choice([1, 1, 2, 3, 5])):
                doc, what = mutate_json(doc, rnd)
                ops.append(what)
            if approx_size(doc) > 8 << 20:          # metadata files stay under 8 MB
                return self.make_input()
            b = dumps(doc)
            if rnd.random() < 0.15:
                b, what = mutate_bytes(b, rnd)
                ops.append(what)
        elif rnd.random() < 0.97:
            b, what = mutate_bytes(rnd.choice(self.raw), rnd, rnd.choice(self.raw))
            ops.append(what)
        else:
            b, what = gzip_bomb(rnd)
            return b, [what], None
        if b[:2] != b"\x1f\x8b" and rnd.random() < 0.2:
            b, what = gzip_bytes(b, rnd)
            ops.append(what)
        return b, ops, doc

    def step(self):
        rnd, h = self.rnd, self.h
        for _ in range(3):
            data, ops, doc = self.make_input()
            if not self.suppressed(ops):
                break
        gz = data[:2] == b"\x1f\x8b" and rnd.random() < 0.5
        path = self.write(self.new_path(".gz.metadata.json" if gz else ".metadata.json"), data)
        loc = location_form(rnd, path)
        case = Case(self.name, files=[path], ops=ops)
        how = rnd.random()
        if how < 0.15:                       # a fresh table, registered and dropped
            name = f"r{self.counter}"
            case.setup = [("SELECT skade.create_namespace(%s)", (self.NS,))]
            _, code = h.run(self.name, "register_table", "SELECT skade.register_table(%s, %s, %s)",
                            (self.NS, name, loc), case, writes=True)
            if code is None:
                self.read(name, doc, case)
                h.run(self.name, "drop_table", "SELECT skade.drop_table(%s, %s)", (self.NS, name),
                      case, writes=True)
            return
        name = rnd.choice(list(self.pool.cur))
        if self.pool.point(self, name, loc, case, "update" if how < 0.35 else "commit"):
            self.read(name, doc, case)

    def read(self, name: str, doc, case: Case):
        """one or two of the functions that read metadata"""
        rnd, h, ns = self.rnd, self.h, self.NS
        ids = [s.get("snapshot-id") for s in (doc or {}).get("snapshots", [])
               if isinstance(s, dict) and isinstance(s.get("snapshot-id"), int)] \
            if isinstance(doc, dict) and isinstance(doc.get("snapshots"), list) else []
        mode = rnd.choice(["all", "all", "refs", "none", "refs", "ALL", "", None])
        for _ in range(rnd.choice([1, 1, 2])):
            f = rnd.choice(["load_table", "load_table", "table_metadata", "snapshots", "refs",
                            "history", "load_table_as_of", "load_table_at"])
            if f == "load_table":
                q = "SELECT metadata_location, previous_metadata_location, length(metadata::text) " \
                    "FROM skade.load_table(%s, %s, snapshots => %s)"
                p = (ns, name, mode)
            elif f == "table_metadata":
                q, p = "SELECT length(skade.table_metadata(%s, %s, snapshots => %s)::text)", (ns, name, mode)
            elif f in ("snapshots", "refs", "history"):
                q, p = f"SELECT * FROM skade.{f}(%s, %s)", (ns, name)
            elif f == "load_table_as_of":
                ts = rnd.choice(["now", "infinity", "-infinity", "2024-03-01 00:00:00+00", "1970-01-01",
                                 "2023-11-14 22:13:20+00", "294276-12-31 23:59:59+00", "4713-01-01 BC"])
                q = "SELECT snapshot_id, made_current_at, metadata_location, length(metadata::text) " \
                    "FROM skade.load_table_as_of(%s, %s, %s::timestamptz, snapshots => %s)"
                p = (ns, name, ts, mode)
            else:
                sid = rnd.choice(ids + [0, -1, 2**63 - 1, -2**63, None]) if ids else rnd.choice(INTS[:22])
                if isinstance(sid, int) and not -2**63 <= sid < 2**63:
                    sid = -1
                q = "SELECT snapshot_id, metadata_location, length(metadata::text) " \
                    "FROM skade.load_table_at(%s, %s, %s::bigint, snapshots => %s)"
                p = (ns, name, sid, mode)
            h.run(self.name, f, q, p, case)


# --------------------------------------------------------------------- avro

class AvroTarget(Target):
    """a mutated manifest list or manifest behind valid metadata"""
    name = "avro"
    NS = "fz_avro"

    def setup(self):
        self.tables = [t for t in self.seeds.tables if t.manifest_list is not None]
        start = next(t for t in self.tables if t.name == "avro/v2_deflate").metadata_path
        self.pool = Pool(self.h, self.NS, [f"a{i}" for i in range(4)], start, cycle=300)
        self.odd_paths = make_odd_paths(self.h.root, self.seeds)
        self.filter_gen = FilterGen(self.rnd)

    def step(self):
        rnd = self.rnd
        t = rnd.choice(self.tables)
        lst = t.manifest_list
        mutate_list = not t.manifests or rnd.random() < 0.45
        seed = lst if mutate_list else rnd.choice(t.manifests)
        for _ in range(3):
            data, ops = avro_mutate.mutate(seed, rnd, self.seeds.avro, self.odd_paths)
            ops = [f"seed:{t.name}"] + ops           # a seed that keeps crashing is tried less too
            if not self.suppressed(ops):
                break
        files = []
        mpath = self.write(self.new_path("-m.avro" if not mutate_list else "-l.avro"), data)
        files.append(mpath)
        if mutate_list:
            list_path = mpath
            files += [m.path for m in t.manifests]
        else:
            list_path = self.write_list(lst, seed, mpath, len(data), ops)
            files.append(list_path)
            files += [m.path for m in t.manifests if m is not seed]
        md = copy.deepcopy(t.metadata)
        for s in md.get("snapshots", []):
            if s.get("snapshot-id") == md.get("current-snapshot-id"):
                s["manifest-list"] = location_form(rnd, list_path)
        meta = self.write(self.new_path(".metadata.json"), json.dumps(md).encode())
        files.insert(0, meta)
        case = Case(self.name, files=files, ops=ops)
        name = rnd.choice(list(self.pool.cur))
        if not self.pool.point(self, name, meta, case, "commit"):
            return
        self.read(name, t, case)

    def write_list(self, lst, seed, mpath: str, size: int, ops: list) -> str:
        """the table's manifest list with the mutated manifest in place of seed"""
        c = copy.deepcopy(lst.container)
        recs = copy.deepcopy(lst.records)
        for r in recs:
            if r["manifest_path"].endswith(os.path.basename(seed.path)):
                r["manifest_path"] = location_form(self.rnd, mpath)
                r["manifest_length"] = size if self.rnd.random() < 0.95 else size + self.rnd.choice([-1, 1])
        c.set_records(recs)
        return self.write(self.new_path("-l.avro"), c.to_bytes())

    def read(self, name: str, t, case: Case):
        rnd, h, ns = self.rnd, self.h, self.NS
        f = rnd.choice(["manifests", "files", "plan_files", "plan_files", "plan_files_filter"])
        sid = None if rnd.random() < 0.9 else rnd.choice(t.snapshot_ids + [-1])
        if f == "manifests":
            h.run(self.name, f, "SELECT * FROM skade.manifests(%s, %s, %s)", (ns, name, sid), case)
        elif f == "files":
            h.run(self.name, f, "SELECT * FROM skade.files(%s, %s, %s)", (ns, name, sid), case)
        else:
            flt = "true" if f == "plan_files" else jtext(self.filter_gen.filter(t.columns))
            h.run(self.name, "plan_files", "SELECT * FROM skade.plan_files(%s, %s, %s::jsonb, %s)",
                  (ns, name, flt, sid), case)


def make_odd_paths(root: Path, seeds) -> list:
    """where a manifest list may point instead of a manifest"""
    odd = root / "odd"
    odd.mkdir(exist_ok=True)
    (odd / "empty.avro").write_bytes(b"")
    (odd / "magic.avro").write_bytes(avro.MAGIC)
    (odd / "one.avro").write_bytes(b"O")
    (odd / "dir.avro").mkdir(exist_ok=True)
    for name, target in (("passwd.avro", "/etc/passwd"), ("tmp.avro", "/tmp")):
        if not (odd / name).is_symlink():
            os.symlink(target, odd / name)
    if not (odd / "fifo.avro").exists():
        os.mkfifo(odd / "fifo.avro")
    os.chmod(odd / "fifo.avro", 0o644)
    any_manifest = [a.path for a in seeds.avro if "-m" in os.path.basename(a.path)]
    any_list = [a.path for a in seeds.avro if os.path.basename(a.path).startswith("snap-")]
    metas = [t.metadata_path for t in seeds.tables]
    paths = [str(odd / n) for n in ("empty.avro", "magic.avro", "one.avro", "dir.avro", "passwd.avro",
                                    "tmp.avro", "fifo.avro", "missing.avro")]
    paths += ["/dev/zero", "/etc/passwd", "/proc/self/status", "s3://bucket/m.avro", "relative/m.avro", "",
              "file://", "file:", "file://otherhost/x.avro", str(odd) + "/../odd/one.avro",
              str(root) + "/" + "x" * 5000, str(odd / "ctl\x01.avro"), str(root)]
    return paths + any_manifest[:20] + any_list[:10] + metas[:5]


# ------------------------------------------------------------------- filter

OPS = ["eq", "not-eq", "lt", "lt-eq", "gt", "gt-eq", "in", "not-in", "is-null", "not-null",
       "is-nan", "not-nan", "starts-with", "not-starts-with"]
TRANSFORMS = ["identity", "bucket[16]", "bucket[0]", "truncate[4]", "truncate[-1]", "year", "month",
              "day", "hour", "void", "unknown[1]", "bucket[99999999999]"]


class FilterGen:
    """Iceberg REST expression JSON, mostly well-formed for the table's
    columns (to get past binding into pruning), sometimes not"""

    def __init__(self, rnd: random.Random):
        self.rnd = rnd

    def filter(self, cols: dict, depth: int = 0):
        rnd = self.rnd
        if depth == 0 and rnd.random() < 0.02:
            return Raw(b'{"type":"not","child":' * rnd.choice([100, 3000, 100000]) + b"true" +
                       b"}" * rnd.choice([100, 3000, 100000]))
        k = rnd.random()
        if depth < 6 and k < 0.3:
            return {"type": rnd.choice(["and", "or"]), "left": self.filter(cols, depth + 1),
                    "right": self.filter(cols, depth + 1)}
        if depth < 6 and k < 0.38:
            return {"type": "not", "child": self.filter(cols, depth + 1)}
        if k < 0.42:
            return rnd.choice([True, False, {"type": "true"}, {"type": "false"}])
        return self.predicate(cols)

    def term(self, cols: dict):
        rnd = self.rnd
        col = rnd.choice(list(cols) or ["id"]) if rnd.random() < 0.9 else \
            rnd.choice(["nope", "", "ID", "data_file", "id.x", "\u00e9", 1, None])
        r = rnd.random()
        if r < 0.75:
            return col
        if r < 0.9:
            return {"type": "reference", "term": col}
        return {"type": "transform", "transform": rnd.choice(TRANSFORMS), "term": col}

    def value(self, typ: str):
        rnd = self.rnd
        if rnd.random() < 0.15:
            return interesting(rnd)
        if typ in ("long", "int"):
            return rnd.choice([1, 2, 5, 9, 0, -1, 2**31 - 1, 2**31, 2**63 - 1, -2**63, 2**63, 1.5, "5",
                               Raw(rnd.choice(RAW_NUMBERS))])
        if typ == "string":
            return rnd.choice(["a", "b", "c", "", "a\u0000", "\uffff", "z" * 300, "\U0001F642", "A", "b%",
                               "_", 1])
        if typ.startswith("timestamp"):
            return rnd.choice(["2024-03-01T08:00:00", "2024-03-01T08:00:00+00:00", "2024-03-03T16:00:00.000001",
                               "2024-03-01T08:00:00.123456789", "2024-03-01T08:00:00.123456789+00:00",
                               "2024-03-01", "294277-01-01T00:00:00", "infinity", "-infinity", "garbage",
                               1709280000000000, -1, 2**63 - 1])
        if typ in ("double", "float"):
            return rnd.choice([10.0, 20.5, 0.0, -0.0, 90.0, 1e308, -1e308, 5, "NaN", "Infinity", "1.5",
                               Raw(b"1e400"), Raw(b"-0"), 3.4028235e38])
        if typ == "date":
            return rnd.choice(["2024-03-01", "2024-02-30", 19783, -1, "infinity"])
        return interesting(rnd)

    def predicate(self, cols: dict):
        rnd = self.rnd
        op = rnd.choice(OPS) if rnd.random() < 0.95 else rnd.choice(["EQ", "", "between", 1, None])
        term = self.term(cols)
        typ = cols.get(term if isinstance(term, str) else term.get("term") if isinstance(term, dict) and isinstance(term.get("term"), str) else "", "long")
        expr = {"type": op, "term": term}
        if op in ("in", "not-in"):
            n = rnd.choice([0, 1, 2, 3, 10, 1000])
            expr["values"] = [self.value(typ) for _ in range(n)] if rnd.random() < 0.95 else \
                rnd.choice([None, 1, "a", {}])
        elif op not in ("is-null", "not-null", "is-nan", "not-nan"):
            expr["value"] = self.value(typ)
        if rnd.random() < 0.05:
            expr[rnd.choice(["value", "values", "extra", "term"])] = interesting(rnd)
        if rnd.random() < 0.05:
            del expr["term"]
        return expr


class FilterTarget(Target):
    """plan_files() with generated filters on every good table"""
    name = "filter"
    NS = "fz_filter"

    def setup(self):
        h = self.h
        h.sql("SELECT skade.create_namespace(%s)", (self.NS,))
        self.tables = {}
        for t in self.seeds.tables:
            name = t.name.replace("/", "_")
            h.sql("SELECT skade.register_table(%s, %s, %s)", (self.NS, name, t.metadata_path))
            self.tables[name] = t
        self.gen = FilterGen(self.rnd)

    def step(self):
        rnd, h = self.rnd, self.h
        name = rnd.choice(list(self.tables))
        t = self.tables[name]
        doc = self.gen.filter(t.columns)
        ops = [f"seed:{t.name}", "gen"]
        if self.suppressed(ops):
            return
        if rnd.random() < 0.2 and not isinstance(doc, Raw):
            doc, what = mutate_json(doc, rnd)
            ops.append(what)
            if approx_size(doc) > 4 << 20:
                doc, ops = self.gen.filter(t.columns), ops[:2]
        text = jtext(doc)
        if rnd.random() < 0.03:
            text = mutate_bytes(text.encode(), rnd)[0].decode("utf-8", "replace")
            ops.append("bytes")
        sid = None if rnd.random() < 0.9 else rnd.choice(t.snapshot_ids + [0, -1, 2**63 - 1])
        case = Case(self.name, files=t.files, ops=ops)
        case.setup = [("SELECT skade.create_namespace(%s)", (self.NS,)),
                      ("SELECT skade.register_table(%s, %s, %s)", (self.NS, name, t.metadata_path))]
        h.run(self.name, "plan_files", "SELECT * FROM skade.plan_files(%s, %s, %s::jsonb, %s)",
              (self.NS, name, text, sid), case)


# ------------------------------------------------------------------- commit

class CommitTarget(Target):
    """commit_transaction() with random change arrays, commit_table() with
    odd arguments, snapshot lookups by id"""
    name = "commit"
    NS = "fz_commit"

    def setup(self):
        h, root = self.h, self.h.root
        good = ["00003-v2", "00004-v2next", "00005-other-table", "00006-seq-back", "00001-v1",
                "00001-v3", "00000-empty"]
        self.good = [str(root / "seeds" / "metadata" / f"{g}.metadata.json") for g in good]
        self.good += [t.metadata_path for t in self.seeds.tables]
        self.good.append(str(root / "seeds" / "metadata" / "00003-v2.gz.metadata.json"))
        self.odd = make_odd_paths(root, self.seeds) + [
            "s3://bucket/t/metadata/00001.metadata.json", "x" * 1001, "/" + "a/" * 600,
            str(root / "seeds" / "metadata" / "bad-syntax.metadata.json"),
            str(root / "seeds" / "metadata" / "bomb.gz.metadata.json")]
        self.pool = Pool(h, self.NS, [f"c{i}" for i in range(6)], self.good[0], cycle=10**9)
        h.sql("""INSERT INTO public.iceberg_tables (catalog_name, table_namespace, table_name,
                 metadata_location, iceberg_type) VALUES (%s, %s, 'v0', %s, 'VIEW')
                 ON CONFLICT DO NOTHING""", (CATALOG, self.NS, self.good[0]))
        self.snapshot_ids = sorted({i for t in self.seeds.tables for i in t.snapshot_ids if isinstance(i, int)})

    def loc(self):
        rnd = self.rnd
        return location_form(rnd, rnd.choice(self.good)) if rnd.random() < 0.85 else rnd.choice(self.odd)

    def change(self):
        """one element of a change array: valid, then perhaps bent"""
        rnd = self.rnd
        name = rnd.choice(list(self.pool.cur))
        ch = {"namespace": self.NS, "name": name, "expected_location": self.pool.cur[name],
              "new_location": self.loc()}
        r = rnd.random()
        if r < 0.1:
            ch["expected_location"] = rnd.choice(self.good)           # stale: 40001
        elif r < 0.15:
            ch["name"] = rnd.choice(["nope", "v0", "", "c0.c1", "x" * 256])
        elif r < 0.2:
            ch["namespace"] = rnd.choice(["nope", "", ".", "fz_commit.", "a" * 256])
        elif r < 0.25:
            del ch[rnd.choice(list(ch))]
        elif r < 0.3:
            ch[rnd.choice(list(ch) + ["extra"])] = interesting(rnd)
        elif r < 0.33:
            ch = Raw(b"[]") if rnd.random() < 0.5 else interesting(rnd)
        return ch

    def step(self):
        r = self.rnd.random()
        if r < 0.7:
            self.transaction()
        elif r < 0.88:
            self.commit_table()
        else:
            self.lookups()

    def pool_setup(self) -> list:
        out = [("SELECT skade.create_namespace(%s)", (self.NS,))]
        for n, loc in self.pool.cur.items():
            out.append(("SELECT skade.register_table(%s, %s, %s)", (self.NS, n, loc)))
        return out

    def transaction(self):
        rnd, h = self.rnd, self.h
        changes = [self.change() for _ in range(rnd.choice([1, 1, 2, 3, 5]))]
        ops = ["changes"]
        if rnd.random() < 0.03:
            changes = changes * rnd.choice([2, 1000])
            ops.append("repeat")
        doc = changes
        if rnd.random() < 0.1:
            doc, what = mutate_json(doc, rnd)
            ops.append(what)
            if approx_size(doc) > 4 << 20:
                doc, ops = changes, ops[:-1]
        if rnd.random() < 0.02:
            doc = rnd.choice([{}, "x", 1, None, [], [[]], deep_nesting(rnd)])
            ops.append("not_array")
        catalog = None if rnd.random() < 0.95 else rnd.choice(["", "other", "skade", "x" * 300])
        case = Case(self.name, files=list(self.good), ops=ops, setup=self.pool_setup())
        rows, code = h.run(self.name, "commit_transaction",
                           "SELECT * FROM skade.commit_transaction(%s::jsonb, %s)",
                           (maybe_null(rnd, jtext(doc)), catalog), case, writes=True)
        if code is None:
            for ns, name, loc, _ in rows or []:
                if ns == self.NS and name in self.pool.cur:
                    self.pool.cur[name] = loc
        elif code in ("lost", "XX000") or code.startswith("XX") or code == "57014":
            for n in self.pool.cur:
                self.pool.resync(n)

    def commit_table(self):
        rnd, h = self.rnd, self.h
        name = rnd.choice(list(self.pool.cur))
        args = [self.NS, name, self.pool.cur[name], self.loc(), None]
        i = rnd.randrange(6)
        if i < 5:
            args[i] = rnd.choice([None, "", "nope", "x" * 1001, "\u00e9" * 128, "file:", "s3://b/k",
                                  self.pool.cur[name], rnd.choice(self.odd)]) if i != 4 else \
                rnd.choice(["", "other", "skade", None])
        case = Case(self.name, files=list(self.good), ops=[f"commit_table_arg{i}"], setup=self.pool_setup())
        rows, code = h.run(self.name, "commit_table", "SELECT skade.commit_table(%s, %s, %s, %s, %s)",
                           tuple(args), case, writes=True)
        if code is None and args[0] == self.NS and args[1] in self.pool.cur and args[4] in (None, CATALOG):
            self.pool.cur[args[1]] = args[3]
        elif code is not None and code != "client":
            self.pool.resync(name)

    def lookups(self):
        rnd, h = self.rnd, self.h
        ids = self.snapshot_ids
        f = rnd.choice(["resolve_many", "resolve_many", "load_table_at", "load_table_as_of",
                        "index_status", "cache_stats", "rebuild_index"] + ["resolve_many"] * 3)
        case = Case(self.name, ops=[f], setup=self.pool_setup())
        name = rnd.choice(list(self.pool.cur))
        if f == "resolve_many":
            arr = [rnd.choice(ids + [0, -1, 2**63 - 1, -2**63, None]) for _ in range(rnd.choice([0, 1, 3, 100, 10000]))]
            h.run(self.name, f, "SELECT * FROM skade.resolve_many(%s::bigint[])",
                  (maybe_null(rnd, arr),), case)
        elif f == "load_table_at":
            h.run(self.name, f, "SELECT snapshot_id, metadata_location FROM skade.load_table_at(%s, %s, %s)",
                  (self.NS, name, maybe_null(rnd, rnd.choice(ids + [0, -1]))), case)
        elif f == "load_table_as_of":
            h.run(self.name, f, "SELECT snapshot_id, metadata_location FROM skade.load_table_as_of(%s, %s, %s::timestamptz)",
                  (self.NS, name, rnd.choice(["now", "-infinity", "infinity", "2020-01-01", None])), case)
        elif f == "rebuild_index":
            if rnd.random() < 0.1:      # waits for the worker: rare
                h.run(self.name, f, "SELECT skade.rebuild_index()", (), case)
        else:
            h.run(self.name, f, f"SELECT * FROM skade.{f}()", (), case)


# -------------------------------------------------------------------- names

FRAGMENTS = ["a", "b", "ns", "Ns", "t", "\u00e9", "\u540d\u524d", "\U0001F642", "%", "_", "\\", "'", '"',
             " ", "  ", "a b", "\t", "\n", "\x01", "\x7f", "\u0085", "\u200b", "\ufeff", "\u202e", "\uffff",
             "\U0010FFFF", "e\u0301", "NULL", "null", "*", "..", "-", "$", "a%b", "a_b", "[a]", "(", "{}",
             "\ud7ff", "\ue000", "\u00a0", "x" * 100]


class NamesTarget(Target):
    """namespace and table names and properties through every catalog call"""
    name = "names"

    def setup(self):
        self.known_ns = []                       # namespaces that exist (as far as we know)
        self.known_tables = []                   # (ns, name)
        self.loc = str(self.h.root / "seeds" / "metadata" / "00003-v2.metadata.json")

    def gen_name(self, levels: bool = True) -> str:
        rnd = self.rnd
        r = rnd.random()
        if r < 0.1:     # around the 255-byte limit, multi-byte characters straddling it
            return rnd.choice(["a" * 255, "a" * 256, "\u00e9" * 127 + "a", "\u00e9" * 128, "a" * 254 + "\u00e9",
                               "\U0001F642" * 63 + "abc", "\U0001F642" * 64, "a" * 2000])
        if r < 0.2 and self.known_ns:
            base = rnd.choice(self.known_ns)
            return base + "." + self.fragment() if levels and rnd.random() < 0.7 else base
        n = rnd.choice([1, 1, 2, 3]) if levels else 1
        sep = rnd.choice([".", ".", ".", "..", " . "]) if levels else ""
        name = sep.join(self.fragment() for _ in range(n)) or "a"
        if levels and rnd.random() < 0.05:
            name = rnd.choice([".", ""]) + name + rnd.choice([".", ""])
        return name

    def fragment(self) -> str:
        rnd = self.rnd
        if rnd.random() < 0.2:
            return chr(rnd.choice([rnd.randrange(0x20, 0x7F), rnd.randrange(0xA0, 0xD7FF),
                                   rnd.randrange(0xE000, 0x10FFFF)]))
        return "".join(rnd.choice(FRAGMENTS) for _ in range(rnd.choice([1, 1, 2, 3])))

    def props(self):
        rnd = self.rnd
        if rnd.random() < 0.1:
            return rnd.choice([[], "x", 1, None, {"a": {"b": "c"}}, {"a": [1]}, {"a": None},
                               {"exists": "true"}, {"location": "/x"}, deep_nesting(rnd)])
        return {self.fragment() if rnd.random() < 0.8 else rnd.choice(["a" * 255, "a" * 256, "", "exists",
                                                                       "location", "comment"]):
                rnd.choice(["v", "", "x" * 1000, "x" * 1001, "\u00e9" * 500, "\u00e9" * 501, self.fragment(),
                            1, True, None]) for _ in range(rnd.choice([0, 1, 2, 5, 50]))}

    def some_ns(self) -> str:
        rnd = self.rnd
        return rnd.choice(self.known_ns) if self.known_ns and rnd.random() < 0.6 else self.gen_name()

    def some_table(self):
        rnd = self.rnd
        if self.known_tables and rnd.random() < 0.6:
            return rnd.choice(self.known_tables)
        return self.some_ns(), self.gen_name(levels=False)

    def step(self):
        rnd, h = self.rnd, self.h
        self.bound()
        f = rnd.choice(["create_namespace", "create_namespace", "drop_namespace", "list_namespaces",
                        "namespace_properties", "namespace_exists", "update_namespace_properties",
                        "register_table", "register_table", "rename_table", "drop_table", "list_tables",
                        "table_exists"])
        catalog = None if rnd.random() < 0.97 else rnd.choice(["", "other", "x" * 300, "\u00e9"])
        case = Case(self.name, files=[self.loc], ops=[f])
        ns = self.some_ns()
        case.setup = [("SELECT skade.create_namespace(%s)", (n,))
                      for n in self.known_ns[-5:]]
        if f == "create_namespace":
            ns = self.gen_name()
            _, code = h.run(self.name, f, "SELECT skade.create_namespace(%s, %s::jsonb, %s)",
                            (maybe_null(rnd, ns), jtext(self.props()), catalog), case, writes=True)
            if code is None and catalog in (None, CATALOG):
                self.known_ns.append(ns)
        elif f == "drop_namespace":
            _, code = h.run(self.name, f, "SELECT skade.drop_namespace(%s, %s)", (maybe_null(rnd, ns), catalog),
                            case, writes=True)
            if code is None and ns in self.known_ns and catalog in (None, CATALOG):
                self.known_ns.remove(ns)
        elif f == "list_namespaces":
            parent = rnd.choice([None, ns, "", ns + "."])
            h.run(self.name, f, "SELECT * FROM skade.list_namespaces(%s, %s)", (parent, catalog), case)
        elif f in ("namespace_properties", "namespace_exists", "list_tables"):
            q = f"SELECT * FROM skade.{f}(%s, %s)"
            h.run(self.name, f, q, (maybe_null(rnd, ns), catalog), case)
        elif f == "update_namespace_properties":
            removals = [self.fragment() for _ in range(rnd.choice([0, 1, 3]))] + \
                ([None] if rnd.random() < 0.05 else [])
            h.run(self.name, f, "SELECT * FROM skade.update_namespace_properties(%s, %s::jsonb, %s::text[], %s)",
                  (maybe_null(rnd, ns), jtext(self.props()), removals, catalog), case, writes=True)
        elif f == "register_table":
            name = self.gen_name(levels=False)
            loc = self.loc if rnd.random() < 0.9 else rnd.choice(["s3://b/k.json", "", "rel/x.json", "/nope"])
            _, code = h.run(self.name, f, "SELECT skade.register_table(%s, %s, %s, %s)",
                            (ns, maybe_null(rnd, name), loc, catalog), case, writes=True)
            if code is None and catalog in (None, CATALOG):
                self.known_tables.append((ns, name))
        elif f == "rename_table":
            ns0, name0 = self.some_table()
            new_ns, new_name = self.some_ns(), self.gen_name(levels=False)
            _, code = h.run(self.name, f, "SELECT skade.rename_table(%s, %s, %s, %s, %s)",
                            (ns0, name0, new_ns, maybe_null(rnd, new_name), catalog), case, writes=True)
            if code is None and (ns0, name0) in self.known_tables:
                self.known_tables.remove((ns0, name0))
                self.known_tables.append((new_ns, new_name))
        elif f == "drop_table":
            ns0, name0 = self.some_table()
            _, code = h.run(self.name, f, "SELECT skade.drop_table(%s, %s, %s)", (ns0, name0, catalog),
                            case, writes=True)
            if code is None and (ns0, name0) in self.known_tables:
                self.known_tables.remove((ns0, name0))
        else:
            ns0, name0 = self.some_table()
            h.run(self.name, f, "SELECT skade.table_exists(%s, %s, %s)", (ns0, name0, catalog), case)

    def bound(self):
        """keep the catalog small: past 120 namespaces, drop what we made"""
        if len(self.known_ns) + len(self.known_tables) < 240:
            return
        h = self.h
        h.sql("""DELETE FROM public.iceberg_tables WHERE table_namespace NOT LIKE 'fz\\_%%'""")
        h.sql("""DELETE FROM public.iceberg_namespace_properties WHERE namespace NOT LIKE 'fz\\_%%'""")
        self.known_ns.clear()
        self.known_tables.clear()
        h.fp = None


# ------------------------------------------------------------------- admin

class AdminTarget(Target):
    """the superuser-only functions, with odd and NULL arguments (as the
    superuser: the fuzz role may not run them)"""
    name = "admin"
    role = "postgres"

    def setup(self):
        self.ids = sorted({i for t in self.seeds.tables for i in t.snapshot_ids if isinstance(i, int)})

    def ids_arg(self):
        rnd = self.rnd
        if rnd.random() < 0.15:
            return None
        return [rnd.choice(self.ids + [0, -1, 2**63 - 1, -2**63, None])
                for _ in range(rnd.choice([0, 1, 5, 1000]))]

    def step(self):
        rnd, h = self.rnd, self.h
        f, q, p = rnd.choice([
            ("index_check", "SELECT skade_test.index_check(%s::bigint[])", (self.ids_arg(),)),
            ("index_check", "SELECT skade_test.index_check(%s::bigint[])", (self.ids_arg(),)),
            ("resolve_commit_log", "SELECT skade.resolve_commit_log(%s)",
             (rnd.choice([None, 0, -1, 1, 100, 2**31 - 1]),)),
            ("stree64_bench", "SELECT * FROM skade_test.stree64_bench(%s, %s)",
             (rnd.choice([None, 0, -1, 1, 7, 1000]), rnd.choice([None, 0, -1, 1, 100]))),
            ("cache_reset", "SELECT skade.cache_reset()", ()),
            ("cache_stats", "SELECT * FROM skade.cache_stats()", ()),
            ("index_status", "SELECT * FROM skade.index_status()", ()),
            ("adopt_jdbc_catalog", "SELECT skade.adopt_jdbc_catalog()", ()),
        ])
        case = Case(self.name, ops=[f], role=self.role)
        h.run(self.name, f, q, p, case, writes=f in ("resolve_commit_log", "adopt_jdbc_catalog"),
              role=self.role)


TARGETS = {c.name: c for c in (MetadataTarget, AvroTarget, FilterTarget, CommitTarget, NamesTarget,
                               AdminTarget)}
