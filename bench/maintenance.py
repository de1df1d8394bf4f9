"""Issue 12: skade.expire_snapshots() + skade.rewrite_manifests() on a table
of APPENDS fast appends, and what a pyiceberg reader feels: the median time
of table.scan().plan_files() before and after, in one run.

    python bench/maintenance.py WAREHOUSE [appends=10000] [runs=5]
(PGHOST/PGPORT/PGUSER/PGDATABASE name the server; bench/maintenance.sh sets
them.  Runs as a user that can write WAREHOUSE; files are created mode 666/777
so that the server, as another user, can write the table's metadata too.)

The table (format v2, unpartitioned, id long / label string) is built as a
stream of fast appends, each adding one Parquet data file of ROWS rows and one
new manifest, the manifest list of snapshot k listing manifests k, k-1, ... 1
(the new one first, as Java's and pyiceberg's fast append do):

- append 1 is pyiceberg's own table.append() through SqlCatalog;
- appends 2..N are written here, because pyiceberg's append slows with the
  table (its commit rebuilds the whole metadata in Python: 72 ms per append
  over the first 100, 620 ms per append at 500 snapshots on the 2-core
  machine this was written on; 10,000 would take hours).  Each one writes a
  real Parquet file (pyarrow, with the table schema's field ids), its
  DataFile (statistics read back from the Parquet footer by pyiceberg's
  parquet_file_to_data_file), a manifest by pyiceberg's own ManifestWriterV2
  (gzip, as pyiceberg writes them), and a manifest list (deflate, the same
  Avro schema and header keys as pyiceberg's ManifestListWriterV2, each
  manifest's record encoded by that writer once and the records reused in
  later lists, in blocks of BLOCK records as Java's 64 kB sync interval
  gives); then commits through skade.update_table() (assert-ref-snapshot-id
  main; add-snapshot with pyiceberg's append summary; set-snapshot-ref main),
  with increasing sequence numbers and timestamps of now.
- Metadata files that fell out of the metadata log are deleted as the build
  goes (each commit rewrites the whole metadata.json, several MB near 10,000
  snapshots; keeping them would cost tens of GB); nothing measured reads them.

Then, in order: pyiceberg plan_files (median of RUNS cold plans: table
reloaded, pyiceberg's manifest cache cleared) and skade.plan_files (cold:
skade.cache_reset() first), the rows pyiceberg reads (count and sum of ids);
the baseline for expire: every snapshot's manifest list read once through
skade.manifests(); expire_snapshots(older_than => now(), retain_last => 1)
(SKADE_BENCH_EXPIRE_TIMEOUT=seconds cancels it by statement_timeout and goes
on without it); rewrite_manifests(); plan_files and the rows again.  Exits 1
if the rows or the planned files differ from what was appended.
"""
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
import uuid
import zlib
from collections import deque

import psycopg2
import psycopg2.errors
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.io.pyarrow import parquet_file_to_data_file
from pyiceberg.manifest import (ManifestEntry, ManifestEntryStatus, clear_manifest_cache, write_manifest,
                                write_manifest_list)
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

os.umask(0)  # the server (another user) writes into the directories pyiceberg makes

WAREHOUSE = sys.argv[1]
APPENDS = int(sys.argv[2]) if len(sys.argv) > 2 else 10000
RUNS = int(sys.argv[3]) if len(sys.argv) > 3 else 5
# seconds after which expire_snapshots is cancelled (0: never); the rest still runs
EXPIRE_TIMEOUT = float(os.environ.get("SKADE_BENCH_EXPIRE_TIMEOUT", "0"))
ROWS = 10     # rows per data file
BLOCK = 400   # manifest-list records per Avro block (~64 kB uncompressed)
KEEP_METADATA = 110  # metadata files kept (the log holds the last 100)
NS, NAME, CATALOG = "maint", "t", "bench"

dsn = "postgresql+psycopg2://{u}@{h}:{p}/{d}".format(
    u=os.environ["PGUSER"], h=os.environ["PGHOST"], p=os.environ["PGPORT"], d=os.environ["PGDATABASE"])
catalog = SqlCatalog(CATALOG, uri=dsn, warehouse=f"file://{WAREHOUSE}")
conn = psycopg2.connect("")
conn.autocommit = True
cur = conn.cursor()
scratch = tempfile.mkdtemp(prefix="skade-bench-maint-")


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def local(uri):
    return uri[len("file://"):] if uri.startswith("file://") else uri


# ---- Avro object container files (the spec's framing; the records are pyiceberg's)

def zigzag(n):
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while n & ~0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def read_long(buf, pos):
    shift = result = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return (result >> 1) ^ -(result & 1), pos


def read_container(path):
    """(metadata dict, [record bytes of each block, decompressed])"""
    with open(path, "rb") as f:
        buf = f.read()
    assert buf[:4] == b"Obj\x01", path
    pos, meta = 4, {}
    while True:
        count, pos = read_long(buf, pos)
        if count == 0:
            break
        if count < 0:
            count = -count
            _, pos = read_long(buf, pos)
        for _ in range(count):
            kl, pos = read_long(buf, pos)
            key = buf[pos:pos + kl].decode()
            pos += kl
            vl, pos = read_long(buf, pos)
            meta[key] = buf[pos:pos + vl]
            pos += vl
    sync = buf[pos:pos + 16]
    pos += 16
    blocks = []
    codec = meta.get("avro.codec", b"null")
    while pos < len(buf):
        count, pos = read_long(buf, pos)
        size, pos = read_long(buf, pos)
        data = buf[pos:pos + size]
        pos += size
        assert buf[pos:pos + 16] == sync, path
        pos += 16
        blocks.append((count, zlib.decompress(data, -15) if codec == b"deflate" else data))
    return meta, blocks


def container_header(meta, sync):
    out = bytearray(b"Obj\x01")
    out += zigzag(len(meta))
    for k, v in meta.items():
        kb = k.encode()
        out += zigzag(len(kb)) + kb + zigzag(len(v)) + v
    out += zigzag(0) + sync
    return bytes(out)


def deflate_block(records, sync):
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    data = c.compress(b"".join(records)) + c.flush()
    return zigzag(len(records)) + zigzag(len(data)) + data + sync


class ManifestLists:
    """Manifest lists of a fast-append chain: newest record first, sealed
    blocks of BLOCK records compressed once and reused."""

    def __init__(self, schema_json, first_record):
        self.schema_json = schema_json
        self.sync = os.urandom(16)
        self.head = [first_record]  # newest first, not yet sealed
        self.sealed = []            # compressed blocks, newest first

    def add(self, record):
        self.head.insert(0, record)
        if len(self.head) == BLOCK:
            self.sealed.insert(0, deflate_block(self.head, self.sync))
            self.head = []

    def write(self, path, snapshot_id, parent_id, seq):
        meta = {"avro.schema": self.schema_json, "avro.codec": b"deflate",
                "snapshot-id": str(snapshot_id).encode(), "parent-snapshot-id": str(parent_id).encode(),
                "sequence-number": str(seq).encode(), "format-version": b"2"}
        with open(path, "wb") as f:
            f.write(container_header(meta, self.sync))
            if self.head:
                f.write(deflate_block(self.head, self.sync))
            for b in self.sealed:
                f.write(b)


def list_record(io, manifest_file, snapshot_id, parent_id, seq):
    """The Avro record pyiceberg's ManifestListWriterV2 writes for one manifest
    (its sequence numbers assigned from the committing snapshot)"""
    path = os.path.join(scratch, "one.avro")
    with write_manifest_list(format_version=2, output_file=io.new_output(path), snapshot_id=snapshot_id,
                             parent_snapshot_id=parent_id, sequence_number=seq, avro_compression="null") as w:
        w.add_manifests([manifest_file])
    meta, blocks = read_container(path)
    os.unlink(path)
    assert len(blocks) == 1 and blocks[0][0] == 1
    return meta["avro.schema"], blocks[0][1]


# ---- the table

schema = Schema(NestedField(1, "id", LongType(), required=True),
                NestedField(2, "label", StringType(), required=False))
arrow_schema = schema.as_arrow()


def rows_of(k):
    ids = [k * ROWS + r for r in range(ROWS)]
    return pa.table({"id": pa.array(ids, pa.int64()), "label": pa.array([f"row{i}" for i in ids])},
                    schema=arrow_schema)


def build():
    t0 = time.perf_counter()
    catalog.create_namespace(NS)
    table = catalog.create_table(f"{NS}.{NAME}", schema=schema)
    table.append(rows_of(0))  # append 1: pyiceberg itself
    table = catalog.load_table(f"{NS}.{NAME}")
    io, tm = table.io, table.metadata
    snap = table.current_snapshot()
    meta, blocks = read_container(local(snap.manifest_list))
    assert len(blocks) == 1 and blocks[0][0] == 1
    lists = ManifestLists(meta["avro.schema"], blocks[0][1])
    summary = dict(snap.summary.additional_properties)
    total_size = int(summary["total-files-size"])
    loc = tm.location.rstrip("/")
    parent, seq, ts = snap.snapshot_id, snap.sequence_number, snap.timestamp_ms
    written = deque([table.metadata_location])
    t_write = t_commit = 0.0
    for k in range(1, APPENDS):
        w0 = time.perf_counter()
        sid = random.getrandbits(63)
        seq += 1
        commit = uuid.uuid4()
        data_path = f"{loc}/data/00000-{k}-{commit}.parquet"
        pq.write_table(rows_of(k), local(data_path))
        df = parquet_file_to_data_file(io, tm, data_path)
        with write_manifest(format_version=2, spec=tm.spec(), schema=schema,
                            output_file=io.new_output(f"{loc}/metadata/{commit}-m0.avro"),
                            snapshot_id=sid, avro_compression="gzip") as mw:
            mw.add(ManifestEntry.from_args(status=ManifestEntryStatus.ADDED, snapshot_id=sid,
                                           sequence_number=None, file_sequence_number=None, data_file=df))
        _, record = list_record(io, mw.to_manifest_file(), sid, parent, seq)
        lists.add(record)
        mlist = f"{loc}/metadata/snap-{sid}-0-{commit}.avro"
        lists.write(local(mlist), sid, parent, seq)
        total_size += df.file_size_in_bytes
        summary = {"operation": "append", "added-files-size": str(df.file_size_in_bytes),
                   "added-data-files": "1", "added-records": str(ROWS),
                   "total-data-files": str(k + 1), "total-delete-files": "0",
                   "total-records": str((k + 1) * ROWS), "total-files-size": str(total_size),
                   "total-position-deletes": "0", "total-equality-deletes": "0"}
        ts = max(ts + 1, int(time.time() * 1000))
        snapshot = {"snapshot-id": sid, "parent-snapshot-id": parent, "sequence-number": seq,
                    "timestamp-ms": ts, "manifest-list": mlist, "summary": summary, "schema-id": 0}
        w1 = time.perf_counter()
        cur.execute("SELECT skade.update_table(%s, %s, %s, %s, catalog => %s)",
                    (NS, NAME,
                     json.dumps([{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": parent}]),
                     json.dumps([{"action": "add-snapshot", "snapshot": snapshot},
                                 {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch",
                                  "snapshot-id": sid}]),
                     CATALOG))
        written.append(cur.fetchone()[0])
        w2 = time.perf_counter()
        t_write += w1 - w0
        t_commit += w2 - w1
        while len(written) > KEEP_METADATA:
            os.unlink(local(written.popleft()))
        parent = sid
        if (k + 1) % 500 == 0 or k + 1 == APPENDS:
            log(f"  {k + 1} appends, {time.perf_counter() - t0:.0f} s (files {t_write:.0f} s, "
                f"update_table {t_commit:.0f} s)")
    return time.perf_counter() - t0, t_write, t_commit


# ---- measurements

def state():
    """(metadata location, metadata.json bytes, snapshots, manifests in the current snapshot)"""
    table = catalog.load_table(f"{NS}.{NAME}")
    return (table.metadata_location, os.path.getsize(local(table.metadata_location)), len(table.metadata.snapshots),
            len(table.current_snapshot().manifests(table.io)))


def plan_files():
    """median of RUNS cold pyiceberg plans (table reloaded, manifest cache cleared)"""
    times, n = [], None
    for _ in range(RUNS):
        clear_manifest_cache()
        table = catalog.load_table(f"{NS}.{NAME}")
        t = time.perf_counter()
        n = len(list(table.scan().plan_files()))
        times.append(time.perf_counter() - t)
    return statistics.median(times), n


def skade_plan_files():
    """median of RUNS cold skade.plan_files (L0/L0.5 emptied first)"""
    times, n = [], None
    for _ in range(RUNS):
        cur.execute("SELECT skade.cache_reset()")
        t = time.perf_counter()
        cur.execute("SELECT count(*) FROM skade.plan_files(%s, %s, catalog => %s)", (NS, NAME, CATALOG))
        n = cur.fetchone()[0]
        times.append(time.perf_counter() - t)
    return statistics.median(times), n


def read_rows():
    """what a reader gets: the rows pyiceberg reads back (count, sum of ids)"""
    table = catalog.load_table(f"{NS}.{NAME}")
    t = time.perf_counter()
    ids = table.scan(selected_fields=("id",)).to_arrow()["id"]
    return len(ids), pc.sum(ids).as_py() or 0, time.perf_counter() - t


def main():
    log(f"building {APPENDS} fast appends")
    built, t_files, t_commits = build()
    log(f"built in {built:.0f} s: files {t_files:.0f} s, update_table {t_commits:.0f} s "
        f"({1000 * t_commits / max(1, APPENDS - 1):.1f} ms per commit on average)")
    expected_rows = APPENDS * ROWS
    expected_sum = expected_rows * (expected_rows - 1) // 2

    loc0, size0, snaps0, mans0 = state()
    log("plan_files before")
    py0, files0 = plan_files()
    sk0, skfiles0 = skade_plan_files()
    rows0, sum0, read0 = read_rows()
    log(f"  pyiceberg {py0 * 1000:.0f} ms, skade {sk0 * 1000:.0f} ms ({files0}/{skfiles0} files), "
        f"{rows0} rows read in {read0:.1f} s; metadata.json {size0} bytes, {mans0} manifests")

    log("baseline: every snapshot's manifest list read through skade.manifests()")
    t = time.perf_counter()
    cur.execute("SELECT count(*) FROM skade.snapshots(%s, %s, catalog => %s) s, "
                "LATERAL skade.manifests(%s, %s, s.snapshot_id, %s) mf", (NS, NAME, CATALOG, NS, NAME, CATALOG))
    list_entries = cur.fetchone()[0]
    t_lists = time.perf_counter() - t

    log(f"  {list_entries} entries in {t_lists:.1f} s")

    log("expire_snapshots" + (f" (cancelled after {EXPIRE_TIMEOUT} s)" if EXPIRE_TIMEOUT else ""))
    cur.execute("SET statement_timeout = %s", (f"{int(EXPIRE_TIMEOUT * 1000)}ms",))
    t = time.perf_counter()
    try:
        cur.execute("SELECT kind, count(*) FROM skade.expire_snapshots(%s, %s, older_than => now(), "
                    "retain_last => 1, catalog => %s) GROUP BY kind ORDER BY kind", (NS, NAME, CATALOG))
        expired = dict(cur.fetchall())
    except psycopg2.errors.QueryCanceled:
        expired = None
    t_expire = time.perf_counter() - t
    cur.execute("RESET statement_timeout")
    log(f"  {t_expire:.1f} s: {expired if expired is not None else 'cancelled'}")
    loc1, size1, snaps1, mans1 = state()

    log("rewrite_manifests")
    t = time.perf_counter()
    cur.execute("SELECT manifests_replaced, manifests_created, manifests_kept, entries_rewritten "
                "FROM skade.rewrite_manifests(%s, %s, catalog => %s)", (NS, NAME, CATALOG))
    replaced, created, kept, entries = cur.fetchone()
    t_rewrite = time.perf_counter() - t
    loc2, size2, snaps2, mans2 = state()
    log(f"  {t_rewrite:.1f} s: {replaced} replaced by {created}")

    log("plan_files after")
    py2, files2 = plan_files()
    sk2, skfiles2 = skade_plan_files()
    rows2, sum2, read2 = read_rows()

    print(f"\ntable {NS}.{NAME}: {APPENDS} fast appends of {ROWS} rows (built in {built:.0f} s; "
          f"update_table {1000 * t_commits / max(1, APPENDS - 1):.1f} ms per append on average)")
    print(f"\n{'':34} {'before':>14} {'after expire':>14} {'after rewrite':>14}")
    print(f"{'snapshots':34} {snaps0:>14} {snaps1:>14} {snaps2:>14}")
    print(f"{'manifests in the current snapshot':34} {mans0:>14} {mans1:>14} {mans2:>14}")
    print(f"{'metadata.json bytes':34} {size0:>14} {size1:>14} {size2:>14}")
    if expired is None:
        print(f"\n{'expire_snapshots':34} {'> ' + f'{EXPIRE_TIMEOUT:g}':>10} s   cancelled by statement_timeout "
              "(SKADE_BENCH_EXPIRE_TIMEOUT); nothing expired")
    else:
        print(f"\n{'expire_snapshots':34} {t_expire:>10.2f} s   files reported: "
              + ", ".join(f"{n} {k}" for k, n in expired.items()))
    print(f"{'  baseline: read every list':34} {t_lists:>10.2f} s   (skade.manifests() of each snapshot: "
          f"{list_entries} entries" + ("" if expired is None else f"; expire / baseline {t_expire / t_lists:.2f}x")
          + ")")
    print(f"{'rewrite_manifests':34} {t_rewrite:>10.2f} s   {replaced} manifests replaced by {created} "
          f"({kept} kept, {entries} entries)")
    print(f"\n{'median of ' + str(RUNS) + ', cold':34} {'before':>12} {'after':>12} {'speed-up':>10}")
    print(f"{'pyiceberg scan().plan_files()':34} {py0 * 1000:>9.1f} ms {py2 * 1000:>9.1f} ms {py0 / py2:>9.1f}x")
    print(f"{'skade.plan_files() (count(*))':34} {sk0 * 1000:>9.1f} ms {sk2 * 1000:>9.1f} ms {sk0 / sk2:>9.1f}x")
    print(f"{'files planned (pyiceberg / skade)':34} {files0:>7}/{skfiles0:<6} {files2:>7}/{skfiles2:<6}")
    print(f"\nrows pyiceberg reads: before {rows0} (sum of ids {sum0}, {read0:.1f} s), "
          f"after {rows2} (sum {sum2}, {read2:.1f} s); expected {expected_rows} (sum {expected_sum})")
    print(f"metadata.json: {size0 / size2:.1f}x smaller after; "
          f"expire + rewrite {t_expire + t_rewrite:.1f} s = {(t_expire + t_rewrite) / py0:.1f} plans before")
    ok = (rows0 == rows2 == expected_rows and sum0 == sum2 == expected_sum and files0 == skfiles0 == APPENDS
          and files2 == skfiles2 == APPENDS and mans0 == APPENDS and mans2 == 1
          and snaps2 == (APPENDS + 1 if expired is None else 2))
    print("check: " + ("same rows before and after, every file planned" if ok else "FAILED"))
    if not ok:
        sys.exit(1)


try:
    main()
finally:
    shutil.rmtree(scratch, ignore_errors=True)
