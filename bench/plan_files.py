"""P7: skade.plan_files() vs pyiceberg's table.scan(row_filter=...).plan_files()
on the same table (10,000 data files in 100 manifests, written by pyiceberg
through skade's JDBC tables) and the same filters, in one run.

    python bench/plan_files.py WAREHOUSE [manifests=100] [files-per-manifest=100] [runs=7]
(PGHOST/PGPORT/PGUSER/PGDATABASE name the server; bench/plan_files.sh sets them.)
"""
import json
import os
import statistics
import sys
import time

import psycopg2
import pyarrow as pa
from pyiceberg import expressions as E
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import LongType, NestedField, StringType

warehouse = sys.argv[1]
MANIFESTS = int(sys.argv[2]) if len(sys.argv) > 2 else 100
PER = int(sys.argv[3]) if len(sys.argv) > 3 else 100
RUNS = int(sys.argv[4]) if len(sys.argv) > 4 else 7
ROWS = 10  # rows per data file

dsn = "postgresql+psycopg2://{u}@{h}:{p}/{d}".format(
    u=os.environ["PGUSER"], h=os.environ["PGHOST"], p=os.environ["PGPORT"], d=os.environ["PGDATABASE"])
catalog = SqlCatalog("bench", uri=dsn, warehouse=f"file://{warehouse}")
conn = psycopg2.connect("")
conn.autocommit = True
cur = conn.cursor()

schema = Schema(NestedField(1, "id", LongType(), required=True),
                NestedField(2, "part", LongType(), required=True),
                NestedField(3, "label", StringType(), required=False))
spec = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="part"))

t0 = time.perf_counter()
if ("p7",) not in catalog.list_namespaces():
    catalog.create_namespace("p7")
if catalog.table_exists("p7.t"):
    catalog.drop_table("p7.t")
table = catalog.create_table("p7.t", schema=schema, partition_spec=spec)
for m in range(MANIFESTS):
    # one append = one manifest; one file per partition value
    ids = [(m * PER + k) * ROWS + r for k in range(PER) for r in range(ROWS)]
    parts = [k for k in range(PER) for r in range(ROWS)]
    table.append(pa.table({"id": pa.array(ids, pa.int64()), "part": pa.array(parts, pa.int64()),
                           "label": pa.array([f"l{i}" for i in ids])},
                          schema=schema.as_arrow()))
table = catalog.load_table("p7.t")
nfiles = len(table.inspect.files())
print(f"table: {nfiles} data files in {MANIFESTS} manifests, built in {time.perf_counter() - t0:.0f} s")

filters = [
    ("part = 7 (1%, identity partition)", {"type": "eq", "term": "part", "value": 7},
     E.EqualTo("part", 7)),
    ("id = 4242 (1 file)", {"type": "eq", "term": "id", "value": 4242}, E.EqualTo("id", 4242)),
    ("id < 5000 (~5%)", {"type": "lt", "term": "id", "value": 5000}, E.LessThan("id", 5000)),
    ("label starts-with l99 (~1%)", {"type": "starts-with", "term": "label", "value": "l99"},
     E.StartsWith("label", "l99")),
    ("true (all)", True, E.AlwaysTrue()),
]


def timed(fn):
    out = []
    for _ in range(RUNS):
        t = time.perf_counter()
        n = fn()
        out.append(time.perf_counter() - t)
    return statistics.median(out), n


def skade_plan(f):
    cur.execute("SELECT count(*) FROM skade.plan_files('p7', 't', %s, catalog => 'bench')", (json.dumps(f),))
    return cur.fetchone()[0]


def skade_cold(f):
    # skade cold: its metadata (L0) and manifest (L0.5) caches emptied first;
    # the files stay in the OS page cache, as they do for pyiceberg cold
    cur.execute("SELECT skade.cache_reset()")
    return skade_plan(f)


print(f"{'filter':32} {'py cold':>10} {'py warm':>10} {'skade cold':>11} {'skade warm':>11} "
      f"{'files s/p':>11} {'warm ratio':>10} {'cold ratio':>10}")
for label, jf, pf in filters:
    # cold pyiceberg: a freshly loaded table (its manifest cache is per process
    # and keyed by manifest list, so reload and clear it)
    def py_cold():
        import pyiceberg.manifest as pm
        if hasattr(pm, "clear_manifest_cache"):  # pyiceberg 0.12
            pm.clear_manifest_cache()
        else:
            pm._manifests.cache_clear()
        tab = catalog.load_table("p7.t")
        return len(list(tab.scan(row_filter=pf).plan_files()))
    cold, n_py = timed(py_cold)
    warm_table = catalog.load_table("p7.t")
    list(warm_table.scan(row_filter=pf).plan_files())
    warm, _ = timed(lambda: len(list(warm_table.scan(row_filter=pf).plan_files())))
    sk_cold, n_sk = timed(lambda: skade_cold(jf))
    skade_plan(jf)
    sk_warm, _ = timed(lambda: skade_plan(jf))
    print(f"{label:32} {cold * 1000:7.1f} ms {warm * 1000:7.1f} ms {sk_cold * 1000:8.1f} ms "
          f"{sk_warm * 1000:8.1f} ms {n_sk:>5}/{n_py:<5} {warm / sk_warm:9.2f}x {cold / sk_cold:9.2f}x")
    if label.startswith("true"):
        cold_all = sk_cold
cur.execute("SELECT manifest_entries, manifest_bytes, manifest_hits, manifest_misses FROM skade.cache_stats()")
e, b, h, m = cur.fetchone()
print(f"skade L0.5 after the run: {e} manifests cached in {b / 1048576:.1f} MiB; {h} hits, {m} misses "
      "since the last cold run")
print("warm ratio = pyiceberg warm / skade warm; cold ratio = pyiceberg cold / skade cold "
      "(medians of the runs; the client-side count(*) of skade's rows is included)")
if nfiles == 10000 and MANIFESTS == 100:
    print(f"cold plan of all 10,000 files in 100 manifests: {cold_all * 1000:.1f} ms "
          f"(issue 15 target <= 60 ms) {'met' if cold_all <= 0.060 else 'MISSED'}")
