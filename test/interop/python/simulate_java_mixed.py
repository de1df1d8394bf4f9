"""NOT part of the suite: stands in for the Java suite's half of the mixed
protocol when Java is not available, so that `run.sh mixed` can be tried alone.

    SKADE_WAREHOUSE=... PG...=... .venv/bin/python simulate_java_mixed.py

Creates namespace `mixed` and `mixed.from_java` in catalog `interop` (ids
1..10 named "j<id>", two appends), with a Hadoop-style `file:/` location as
Java's HadoopFileIO writes it.  Refuses to touch an existing table.
"""

import pyarrow as pa

from pgenv import make_catalog, warehouse_dir
from test_mixed import ARROW, SCHEMA

cat = make_catalog("interop")
if not cat.namespace_exists("mixed"):
    cat.create_namespace("mixed")
if cat.table_exists("mixed.from_java"):
    raise SystemExit("mixed.from_java exists already; not touching it")
t = cat.create_table("mixed.from_java", SCHEMA, location=f"file:{warehouse_dir()}/mixed/from_java")
for lo, hi in ((1, 6), (6, 11)):
    t.append(pa.Table.from_pylist([{"id": i, "name": f"j{i}"} for i in range(lo, hi)], schema=ARROW))
print(t.metadata_location)
