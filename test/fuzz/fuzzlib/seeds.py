"""Seeds from the fixtures in data/, re-homed into the fuzzer's scratch root.

The fixtures record absolute paths of their generation runs
(/tmp/skade-fixtures/avro/<table>, /tmp/skade-fixtures/java,
/tmp/skade-fixture-py).  Each seed table's metadata directory is copied to
<root>/seeds/<group>/...: metadata JSON (plain and gzip) with the prefixes
replaced as text; manifest lists and manifests decoded with fastavro, paths
replaced in every string, and re-encoded with the same writer schema, header
(every key) and codec; each manifest list's manifest_length follows its
manifest's new size.  Files that do not decode (the corrupt_* and
short_manifest fixtures) are copied byte for byte and keep their recorded
lengths, so they stay exactly as bad as they were.
"""

from __future__ import annotations

import copy
import gzip
import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from . import avro

FIXTURE_PREFIXES = [  # (recorded prefix, group under <root>/seeds)
    ("/tmp/skade-fixtures/avro/", "avro"),
    ("/tmp/skade-fixtures/java/", "java"),
    ("/tmp/skade-fixture-py/", "py"),
]


@dataclass
class AvroSeed:
    """one manifest list or manifest: its bytes, parsed container and records
    (None when it does not decode)"""
    path: str
    data: bytes
    container: avro.Container | None
    records: list | None


@dataclass
class TableSeed:
    """one fixture table, re-homed: its current metadata and the Avro files
    of its current snapshot"""
    name: str                      # e.g. avro/v2_deflate
    metadata_path: str             # the current metadata file (re-homed)
    metadata: dict                 # parsed
    format_version: int
    columns: dict                  # column name -> Iceberg type (current schema)
    snapshot_ids: list
    manifest_list: AvroSeed | None # of the current snapshot
    manifests: list = field(default_factory=list)   # AvroSeed of the current list
    files: list = field(default_factory=list)       # every file of the table dir


@dataclass
class Seeds:
    metadata_raw: list = field(default_factory=list)   # (name, bytes) every metadata file
    metadata_json: list = field(default_factory=list)  # (name, parsed) those that parse
    tables: list = field(default_factory=list)         # TableSeed
    avro: list = field(default_factory=list)           # AvroSeed, every Avro file


def _rewrite_text(b: bytes, mapping) -> bytes:
    for old, new in mapping:
        b = b.replace(old.encode(), new.encode())
    return b


def _rewrite_strings(v, mapping):
    if isinstance(v, str):
        for old, new in mapping:
            v = v.replace(old, new)
        return v
    if isinstance(v, dict):
        return {k: _rewrite_strings(x, mapping) for k, x in v.items()}
    if isinstance(v, list):
        return [_rewrite_strings(x, mapping) for x in v]
    return v


def _local(loc: str) -> str:
    for p in ("file://localhost/", "file:///", "file:/"):
        if loc.startswith(p):
            return "/" + loc[len(p):]
    return loc


def _copy_metadata_json(src: Path, dst: Path, mapping) -> bytes:
    b = src.read_bytes()
    if b[:2] == b"\x1f\x8b":
        try:
            b = gzip.compress(_rewrite_text(gzip.decompress(b), mapping), mtime=0)
        except Exception:
            pass            # a truncated/bad gzip fixture stays as it is
    else:
        b = _rewrite_text(b, mapping)
    dst.write_bytes(b)
    return b


def _rehome_avro(src: Path, dst: Path, mapping, lengths: dict) -> None:
    """re-encode src at dst with its paths rewritten; manifest lists also
    get manifest_length from lengths (new path -> (old size, new size))"""
    b = src.read_bytes()
    try:
        c = avro.Container(b)
        recs = c.records()
    except Exception:
        dst.write_bytes(b)
        return
    recs = _rewrite_strings(recs, mapping)
    for r in recs:
        if isinstance(r, dict) and "manifest_path" in r and r["manifest_path"] in lengths:
            old_size, new_size = lengths[r["manifest_path"]]
            r["manifest_length"] += new_size - old_size
    per_block = None if len(c.blocks) <= 1 else max(1, c.blocks[0].count)
    c.set_records(recs, per_block=per_block)
    dst.write_bytes(c.to_bytes())


def _rehome_table_dir(src: Path, dst: Path, mapping) -> None:
    (dst / "metadata").mkdir(parents=True, exist_ok=True)
    files = sorted((src / "metadata").iterdir())
    lengths = {}
    # manifests first (their new sizes go into the lists)
    for f in files:
        if f.suffix == ".avro" and not f.name.startswith("snap-"):
            out = dst / "metadata" / f.name
            _rehome_avro(f, out, mapping, {})
            lengths[str(out)] = (f.stat().st_size, out.stat().st_size)
    # manifest_path values may be "file:///..." or plain: key both forms
    lengths.update({"file://" + k: v for k, v in list(lengths.items())})
    for f in files:
        out = dst / "metadata" / f.name
        if f.name.startswith("snap-") and f.suffix == ".avro":
            _rehome_avro(f, out, mapping, lengths)
        elif f.name.endswith(".json"):
            _copy_metadata_json(f, out, mapping)
        elif f.suffix != ".avro":
            out.write_bytes(f.read_bytes())


def _current_metadata(meta_dir: Path) -> Path:
    every = sorted(p for p in meta_dir.iterdir() if p.name.endswith(".metadata.json"))
    js = [p for p in every if ".gz." not in p.name] or every
    numbered = [p for p in js if p.name[:5].isdigit()]
    if numbered:
        return numbered[-1]
    return max(js, key=lambda p: int("".join(ch for ch in p.name if ch.isdigit()) or 0))


def _load_json(b: bytes):
    if b[:2] == b"\x1f\x8b":
        b = gzip.decompress(b)
    return json.loads(b)


def _avro_seed(path: str, decode: bool = True) -> AvroSeed:
    b = Path(path).read_bytes()
    try:
        c = avro.Container(b)
    except Exception:
        return AvroSeed(path, b, None, None)
    try:
        if not decode:
            raise ValueError("not decoded")
        recs = c.records()
    except Exception:
        recs = None
    return AvroSeed(path, b, c, recs)


def _table_seed(name: str, meta_path: Path, decode: bool = True) -> TableSeed:
    md = _load_json(meta_path.read_bytes())
    schema = next((s for s in md.get("schemas", []) if s.get("schema-id") == md.get("current-schema-id")),
                  md.get("schema") or {"fields": []})
    cols = {f["name"]: f["type"] if isinstance(f["type"], str) else f["type"].get("type", "struct")
            for f in schema.get("fields", [])}
    snaps = md.get("snapshots", [])
    cur = next((s for s in snaps if s.get("snapshot-id") == md.get("current-snapshot-id")), None)
    ts = TableSeed(name, str(meta_path), md, md.get("format-version", 1), cols,
                   [s.get("snapshot-id") for s in snaps], None)
    ts.files = sorted(str(p) for p in meta_path.parent.iterdir())
    if cur and cur.get("manifest-list"):
        ts.manifest_list = _avro_seed(_local(cur["manifest-list"]), decode)
        for r in ts.manifest_list.records or []:
            p = _local(r["manifest_path"])
            if os.path.exists(p):
                ts.manifests.append(_avro_seed(p))
    return ts


def build(data_dir: Path, root: Path) -> Seeds:
    """copy and re-home every fixture under root/seeds; return the seeds"""
    out = root / "seeds"
    mapping = [(old, f"{out}/{group}/") for old, group in FIXTURE_PREFIXES]
    seeds = Seeds()

    # test/data/metadata: standalone metadata files (no Avro behind them)
    (out / "metadata").mkdir(parents=True, exist_ok=True)
    for f in sorted((data_dir / "metadata").glob("*.json")):
        b = _copy_metadata_json(f, out / "metadata" / f.name, mapping)
        seeds.metadata_raw.append((f"metadata/{f.name}", b))

    # tables with manifests: test/data/avro/warehouse/*, test/data/clients/{java,python}
    table_dirs = []
    for d in sorted((data_dir / "avro" / "warehouse").iterdir()):
        if (d / "metadata").is_dir():
            table_dirs.append((f"avro/{d.name}", d, out / "avro" / d.name))
    for group, sub in (("java", "java"), ("py", "python")):
        base = data_dir / "clients" / sub / "warehouse"
        for d in sorted(base.glob("*/*")):
            if (d / "metadata").is_dir():
                rel = d.relative_to(base)
                table_dirs.append((f"{group}/{rel}", d, out / group / rel))
    for name, src, dst in table_dirs:
        _rehome_table_dir(src, dst, mapping)
        for f in sorted((dst / "metadata").glob("*.json")):
            seeds.metadata_raw.append((f"{name}/{f.name}", f.read_bytes()))
        seeds.tables.append(_table_seed(name, _current_metadata(dst / "metadata")))
        for f in sorted((dst / "metadata").glob("*.avro")):
            seeds.avro.append(_avro_seed(str(f)))

    # test/data/avro/hostile.py: hand-made hostile manifest lists and manifests
    # (they crashed or blew up older builds), written straight into the root
    hostile = data_dir / "avro" / "hostile.py"
    if hostile.exists():
        dst = out / "hostile"
        r = subprocess.run([sys.executable, str(hostile), str(dst)], capture_output=True, text=True)
        if r.returncode == 0:
            for meta in sorted(dst.glob("*/metadata/v1.metadata.json")):
                name = f"hostile/{meta.parent.parent.name}"
                try:
                    # not decoded: some take fastavro seconds (arrays of a million nulls)
                    seeds.tables.append(_table_seed(name, meta, decode=False))
                except Exception:
                    continue
                seeds.metadata_raw.append((f"{name}/{meta.name}", meta.read_bytes()))
                for f in sorted(meta.parent.glob("*.avro")):
                    seeds.avro.append(_avro_seed(str(f), decode=False))
        else:
            print(f"seeds: {hostile} failed: {r.stderr[-500:]}")

    for name, b in seeds.metadata_raw:
        try:
            seeds.metadata_json.append((name, _load_json(b)))
        except Exception:
            pass
    return seeds


def clone(v):
    return copy.deepcopy(v)
