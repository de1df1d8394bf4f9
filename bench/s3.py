"""Issue 13 benchmark (bench/s3.sh): skade on S3-hosted tables vs the raw GET of
the same bytes, pyiceberg reading the same objects from the same S3 server, and
skade on file:// (the same bytes on local disk), in one run.

    python bench/s3.py plan-table DIR LOCATION [manifests=100] [files-per-manifest=100]
        (pyiceberg's Python) writes in DIR the files of a format-v2 table at
        LOCATION (s3://bucket/... or file://DIR) of manifests x
        files-per-manifest data files, one manifest per append, every
        recorded path under LOCATION; the files hold exactly the bytes to
        upload, so every manifest_length is the uploaded object's size; prints
        the locations read by planning (JSON).
    python bench/s3.py upload STAGE BUCKET
        (boto3's Python, test/s3) PUTs every file under STAGE/BUCKET as the key
        of its relative path (one PUT each, never multipart).
    python bench/s3.py relay PORT_FILE UPSTREAM_PORT DELAY_MS
        a TCP relay adding DELAY_MS before each request (see relay()).
    python bench/s3.py measure CONFIG.json
        (pyiceberg's Python) the measurements; prints the result table.

Each timing is the median of RUNS repetitions (CONFIG "runs").  The server
under test and moto share this machine's cores: moto is a single Python
process (werkzeug), several times slower per request than S3 or MinIO, so the
absolute times say little; the ratios to the baselines measured here are the
result.
"""
import json
import os
import statistics
import subprocess
import sys
import time
import uuid

EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


# --------------------------------------------------------------- plan-table

def plan_table(out_dir, loc, manifests=100, per=100, table_uuid=0x5ade, sid_base=1000000):
    """a table at loc (files written under out_dir, its local image) of
    manifests x per data files (identity partition part = file index in its
    manifest, 10 rows each, bounds on every column) as 'manifests' fast
    appends; no Parquet file is written (planning never opens one).  Prints
    (JSON) the metadata, manifest list and manifest locations.  table_uuid
    (an int) and sid_base (snapshot ids are sid_base + m) tell tables of one
    catalog apart (bench/rest/plan.py)."""
    from pyiceberg.conversions import to_bytes
    from pyiceberg.io.pyarrow import PyArrowFileIO
    from pyiceberg.manifest import (DataFile, DataFileContent, FileFormat, ManifestEntry,
                                    ManifestEntryStatus, write_manifest, write_manifest_list)
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import IdentityTransform
    from pyiceberg.typedef import Record
    from pyiceberg.types import LongType, NestedField, StringType

    rows = 10
    schema = Schema(NestedField(1, "id", LongType(), required=True),
                    NestedField(2, "part", LongType(), required=True),
                    NestedField(3, "label", StringType(), required=False))
    spec = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(),
                                        name="part"))
    local = out_dir
    os.makedirs(os.path.join(local, "metadata"), exist_ok=True)
    io = PyArrowFileIO()
    base_ts = 1764547200000
    snapshots, written, parent, total_size = [], [], None, 0
    for m in range(manifests):
        sid = sid_base + m
        seq = m + 1
        commit = uuid.UUID(int=m + 1)
        name = f"{commit}-m0.avro"
        with write_manifest(format_version=2, spec=spec, schema=schema,
                            output_file=io.new_output(os.path.join(local, "metadata", name)),
                            snapshot_id=sid, avro_compression="deflate") as mw:
            for k in range(per):
                lo = (m * per + k) * rows
                hi = lo + rows - 1
                size = 1100 + k
                total_size += size
                df = DataFile.from_args(
                    _table_format_version=2,
                    content=DataFileContent.DATA,
                    file_path=f"{loc}/data/part={k}/00000-{m}-{commit}.parquet",
                    file_format=FileFormat.PARQUET, partition=Record(k), record_count=rows,
                    file_size_in_bytes=size, column_sizes={1: 90, 2: 60, 3: 110},
                    value_counts={1: rows, 2: rows, 3: rows},
                    null_value_counts={1: 0, 2: 0, 3: 0}, nan_value_counts={},
                    lower_bounds={1: to_bytes(LongType(), lo), 2: to_bytes(LongType(), k),
                                  3: f"l{lo}".encode()},
                    upper_bounds={1: to_bytes(LongType(), hi), 2: to_bytes(LongType(), k),
                                  3: f"l{hi}".encode()},
                    split_offsets=[4], sort_order_id=0)
                df.spec_id = 0
                mw.add(ManifestEntry.from_args(status=ManifestEntryStatus.ADDED, snapshot_id=sid,
                                               sequence_number=None, file_sequence_number=None,
                                               data_file=df))
        mf = mw.to_manifest_file()
        mf[0] = f"{loc}/metadata/{name}"  # manifest_path as recorded; the length is the file's
        written.insert(0, mf)  # fast append: the new manifest first
        mlist = f"snap-{sid}-0-{commit}.avro"
        with write_manifest_list(format_version=2,
                                 output_file=io.new_output(os.path.join(local, "metadata", mlist)),
                                 snapshot_id=sid, parent_snapshot_id=parent, sequence_number=seq,
                                 avro_compression="deflate") as w:
            w.add_manifests(written)
        # what the list writer assigned the new manifest (it copies): in later lists it keeps them
        written[0].sequence_number = seq
        written[0].min_sequence_number = seq
        snap = {"snapshot-id": sid, "sequence-number": seq, "timestamp-ms": base_ts + m * 60000,
                "manifest-list": f"{loc}/metadata/{mlist}", "schema-id": 0,
                "summary": {"operation": "append", "added-data-files": str(per),
                            "added-records": str(per * rows), "total-data-files": str((m + 1) * per),
                            "total-records": str((m + 1) * per * rows), "total-files-size": str(total_size),
                            "total-delete-files": "0", "total-position-deletes": "0",
                            "total-equality-deletes": "0"}}
        if parent is not None:
            snap["parent-snapshot-id"] = parent
        snapshots.append(snap)
        parent = sid
    md = {
        "format-version": 2, "table-uuid": str(uuid.UUID(int=table_uuid)), "location": loc,
        "last-sequence-number": manifests, "last-updated-ms": snapshots[-1]["timestamp-ms"],
        "last-column-id": 3, "schemas": [json.loads(schema.model_dump_json(by_alias=True))],
        "current-schema-id": 0,
        "partition-specs": [{"spec-id": 0, "fields": [
            {"name": "part", "transform": "identity", "source-id": 2, "field-id": 1000}]}],
        "default-spec-id": 0, "last-partition-id": 1000, "properties": {},
        "current-snapshot-id": parent, "snapshots": snapshots,
        "snapshot-log": [{"timestamp-ms": s["timestamp-ms"], "snapshot-id": s["snapshot-id"]}
                         for s in snapshots],
        "metadata-log": [], "sort-orders": [{"order-id": 0, "fields": []}], "default-sort-order-id": 0,
        "refs": {"main": {"snapshot-id": parent, "type": "branch"}},
    }
    name = f"00001-{uuid.UUID(int=table_uuid)}.metadata.json"
    with open(os.path.join(local, "metadata", name), "w") as f:
        json.dump(md, f)
    print(json.dumps({"metadata": f"{loc}/metadata/{name}", "manifest_list": snapshots[-1]["manifest-list"],
                      "manifests": [m.manifest_path for m in written], "files": manifests * per}))


# ------------------------------------------------------------------- upload

def upload(stage, bucket):
    import boto3
    s3 = boto3.client("s3", endpoint_url=os.environ["S3_ENDPOINT"], region_name=os.environ["AWS_REGION"])
    root = os.path.join(stage, bucket)
    n = size = 0
    for d, _, files in os.walk(root):
        for f in sorted(files):
            p = os.path.join(d, f)
            with open(p, "rb") as fh:
                body = fh.read()
            s3.put_object(Bucket=bucket, Key=os.path.relpath(p, root), Body=body)
            n += 1
            size += len(body)
    print(f"uploaded {n} objects, {size} bytes", file=sys.stderr)


# -------------------------------------------------------------------- relay

def relay(port_file, upstream_port, delay_ms):
    """a TCP relay on a free port of 127.0.0.1 to upstream_port that holds
    each chunk a client sends for delay_ms before passing it on (a request's
    first-byte latency, as S3's; answers pass at once).  Bytes are relayed
    unchanged, so SigV4 signatures (over the Host the client sent) still
    check.  Writes its port to port_file; runs until killed."""
    import asyncio

    async def pump(reader, writer, delay):
        try:
            while True:
                chunk = await reader.read(65536)
                if not chunk:
                    break
                if delay:
                    await asyncio.sleep(delay)
                writer.write(chunk)
                await writer.drain()
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    async def client(cr, cw):
        try:
            ur, uw = await asyncio.open_connection("127.0.0.1", upstream_port)
        except OSError:
            cw.close()
            return
        await asyncio.gather(pump(cr, uw, delay_ms / 1000), pump(ur, cw, 0))

    async def main():
        server = await asyncio.start_server(client, "127.0.0.1", 0)
        with open(port_file + ".tmp", "w") as f:
            f.write(str(server.sockets[0].getsockname()[1]))
        os.rename(port_file + ".tmp", port_file)
        async with server:
            await server.serve_forever()

    asyncio.run(main())


# ------------------------------------------------------------------ measure

def median_ms(fn, runs):
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return statistics.median(out)


class Bench:
    def __init__(self, cfg):
        import psycopg2
        self.psycopg2 = psycopg2
        self.cfg = cfg
        self.runs = cfg["runs"]
        self.key = (os.environ["AWS_ACCESS_KEY_ID"], os.environ["AWS_SECRET_ACCESS_KEY"])
        self.rows = []

    def props(self, endpoint):
        """pyiceberg's FileIO: pyarrow's S3 with an endpoint override"""
        return {"py-io-impl": "pyiceberg.io.pyarrow.PyArrowFileIO", "s3.endpoint": endpoint,
                "s3.access-key-id": self.key[0], "s3.secret-access-key": self.key[1],
                "s3.region": os.environ["AWS_REGION"], "s3.path-style-access": "true"}

    def connect(self):
        c = self.psycopg2.connect("")
        c.autocommit = True
        return c

    def curl_ms(self, endpoint, locations, parallel=0):
        """median time of one curl process GETting the objects (SigV4 by curl;
        one connection reused when one by one); each answer must be a 200"""
        args = ["curl", "-sS", "--aws-sigv4", f"aws:amz:{os.environ['AWS_REGION']}:s3",
                "--user", f"{self.key[0]}:{self.key[1]}", "-H", f"x-amz-content-sha256: {EMPTY_SHA256}",
                "-w", "%{http_code}\n"]
        if parallel:
            args += ["--parallel", "--parallel-immediate", "--parallel-max", str(parallel)]
        for loc in locations:
            assert loc.startswith("s3://")
            args += ["-o", "/dev/null", f"{endpoint}/{loc[5:]}"]

        def get():
            out = subprocess.run(args, check=True, capture_output=True, text=True).stdout.split()
            assert out == ["200"] * len(locations), out
        return median_ms(get, self.runs)

    def sql_ms(self, conn, sql, args=()):
        cur = conn.cursor()
        t = time.perf_counter()
        cur.execute(sql, args)
        cur.fetchall()
        return (time.perf_counter() - t) * 1000

    def cold(self, variants, misses):
        """variants: name -> (sql, args, [setup statements]); runs them
        interleaved, each run in a fresh backend (a new connection to S3, the
        key read again) warmed up on a tiny file:// table (PostgreSQL's own
        catalog caches), then skade.cache_reset() (L0 and L0.5 empty).
        Checks each run missed the caches (misses: (L0, L0.5) misses at least).
        Returns name -> list of ms, in run order."""
        out = {k: [] for k in variants}
        stats = "SELECT misses, manifest_misses FROM skade.cache_stats()"
        for _ in range(self.runs):
            for name, (sql, args, setup) in variants.items():
                conn = self.connect()
                cur = conn.cursor()
                cur.execute("SELECT octet_length(metadata::text) FROM skade.load_table('b', 'tiny')")
                for st in setup:
                    cur.execute(st)
                cur.execute("SELECT skade.cache_reset()")
                cur.execute(stats)
                m0 = cur.fetchone()
                out[name].append(self.sql_ms(conn, sql, args))
                cur.execute(stats)
                m1 = cur.fetchone()
                assert m1[0] - m0[0] >= misses[0] and m1[1] - m0[1] >= misses[1], (name, m0, m1)
                conn.close()
        return out

    def warm_ms(self, sql, argss, reps=21, conn=None):
        """median ms of sql with each of argss, called alternately in one
        backend (conn, or a new one) after a first call each"""
        conn = conn or self.connect()
        for args in argss:
            self.sql_ms(conn, sql, args)
        out = [[] for _ in argss]
        for _ in range(reps):
            for i, args in enumerate(argss):
                out[i].append(self.sql_ms(conn, sql, args))
        conn.close()
        return [statistics.median(o) for o in out]

    def row(self, label, ms, base_label, base_ms, target="", ok=None):
        ratio = ms / base_ms
        self.rows.append((label, ms, base_label, base_ms, ratio, target, None if ok is None else ok(ratio)))
        print(f"  measured: {label} {ms:.1f} ms; {base_label} {base_ms:.1f} ms", file=sys.stderr, flush=True)

    def section(self, title):
        self.rows.append(title)

    # ---- load_table

    def load_tables(self):
        from pyiceberg.table import StaticTable
        endpoint = os.environ["S3_ENDPOINT"]
        q = "SELECT octet_length(metadata::text) FROM skade.load_table('b', %s)"
        for t in self.cfg["load"]:
            n, s3loc, size = t["snapshots"], t["s3"], t["bytes"]
            self.section(f"load_table, snapshots all: {n} snapshots, {size / 1e6:.1f} MB of metadata")
            get = self.curl_ms(endpoint, [s3loc])
            c = self.cold({"s3": (q, (t["s3_table"],), []), "file": (q, (t["file_table"],), [])}, (1, 0))
            cold_s3, cold_file = statistics.median(c["s3"]), statistics.median(c["file"])
            share = statistics.median(a - b for a, b in zip(c["s3"], c["file"]))
            warm_s3, warm_file = self.warm_ms(q, [(t["s3_table"],), (t["file_table"],)])
            py = median_ms(lambda: StaticTable.from_metadata(s3loc, self.props(endpoint)), self.runs)
            self.row("warm, S3", warm_s3, "warm, file:// (same bytes)", warm_file, "~1x", lambda r: r <= 1.2)
            self.row("cold, S3", cold_s3, "raw GET of the object (curl)", get, "<= 1.5x", lambda r: r <= 1.5)
            self.row("  S3 share of cold: cold S3 - cold file://", share, "raw GET of the object (curl)", get,
                     "<= 1.5x", lambda r: r <= 1.5)
            self.row("  cold, file:// (read, parse, cache fill)", cold_file, "raw GET of the object (curl)", get)
            self.row("  pyiceberg StaticTable.from_metadata, S3", py, "cold, S3", cold_s3,
                     "(> 1: skade faster)")

    # ---- plan_files

    def plan(self, endpoint, title, file_too):
        from pyiceberg import manifest as pm
        from pyiceberg.table import StaticTable
        with open(self.cfg["plan"]["s3_info"]) as f:
            p = json.load(f)
        loc, files, nm = p["metadata"], p["files"], len(p["manifests"])
        objs = [loc, p["manifest_list"]] + p["manifests"]
        self.section(title.format(files=files, manifests=nm))
        q = "SELECT count(*) FROM skade.plan_files('p', %s)"
        at = [f"SET skade.s3_endpoint = '{endpoint}'"]
        conn = self.connect()
        cur = conn.cursor()
        cur.execute(at[0])
        for t in ("t", "f"):
            cur.execute(q, (t,))
            assert cur.fetchone()[0] == files, t
        conn.close()
        props = self.props(endpoint)

        def py_cold():
            pm.clear_manifest_cache()
            tab = StaticTable.from_metadata(loc, props)
            n = len(list(tab.scan().plan_files()))
            assert n == files, n
        get_seq = self.curl_ms(endpoint, objs)
        get_par = self.curl_ms(endpoint, objs, parallel=16)
        variants = {"16": (q, ("t",), at + ["SET skade.s3_max_concurrency = 16"]),
                    "1": (q, ("t",), at + ["SET skade.s3_max_concurrency = 1"])}
        if file_too:
            variants["file"] = (q, ("f",), [])
        c = self.cold(variants, (1, nm))
        cold16, cold1 = statistics.median(c["16"]), statistics.median(c["1"])
        py_c = median_ms(py_cold, self.runs)
        self.row("cold, S3", cold16, "pyiceberg cold, S3", py_c, "<= 0.2x (>= 5x faster)", lambda r: r <= 0.2)
        # warm: the S3 and file:// tables alternately in one backend
        conn = self.connect()
        conn.cursor().execute(at[0])
        warm, warm_file = self.warm_ms(q, [("t",), ("f",)], conn=conn)
        if file_too:
            warm_tab = StaticTable.from_metadata(loc, props)
            list(warm_tab.scan().plan_files())
            py_w = median_ms(lambda: list(warm_tab.scan().plan_files()), self.runs)
            self.row("warm, S3", warm, "pyiceberg warm, S3", py_w)
        self.row("warm, S3", warm, "warm, file:// (same content)", warm_file, "~1x", lambda r: r <= 1.2)
        self.row("  cold, S3, s3_max_concurrency = 1", cold1, "cold, S3, s3_max_concurrency = 16", cold16,
                 "(> 1: concurrency helps)")
        self.row("  cold, S3, s3_max_concurrency = 16", cold16, f"raw GET of the {len(objs)} objects, 16 at once",
                 get_par)
        self.row("  cold, S3, s3_max_concurrency = 1", cold1, f"raw GET of the {len(objs)} objects, in turn",
                 get_seq)
        if file_too:
            cold_file = statistics.median(c["file"])
            share = statistics.median(a - b for a, b in zip(c["16"], c["file"]))
            self.row("  S3 share of cold: cold S3 - cold file://", share,
                     f"raw GET of the {len(objs)} objects, 16 at once", get_par)
            self.row("  cold, file:// (read, decode, no S3)", cold_file, "cold, S3", cold16)

    def report(self):
        print()
        print(f"skade on S3: moto {self.cfg['moto']} (SigV4 checked) on 127.0.0.1, median of {self.runs} runs "
              "(warm: of 21 calls)")
        print("moto is one slow-ish Python process sharing the 2 cores with PostgreSQL and the clients:")
        print("absolute times are not S3's; the ratios to the baselines measured in this run are what matter.")
        print("cold = a fresh backend after skade.cache_reset() (every object fetched again); warm = repeated;")
        print("ratio = ms / baseline ms")
        rows = [r for r in self.rows if not isinstance(r, str)]
        w = max(len(r[0]) for r in rows)
        wb = max(len(r[2]) for r in rows)
        for r in self.rows:
            if isinstance(r, str):
                print()
                print(r)
                print(f"  {'metric':{w}} {'ms':>8}   {'baseline':{wb}} {'ms':>8} {'ratio':>7}  target")
                continue
            label, ms, bl, bms, ratio, target, ok = r
            mark = "" if ok is None else ("  ok" if ok else "  MISSED")
            print(f"  {label:{w}} {ms:8.1f}   {bl:{wb}} {bms:8.1f} {ratio:6.2f}x  {target}{mark}")


def measure(cfg_path):
    with open(cfg_path) as f:
        cfg = json.load(f)
    b = Bench(cfg)
    b.load_tables()
    b.plan(os.environ["S3_ENDPOINT"], "plan_files, filter true: {files} data files in {manifests} manifests",
           True)
    relay = cfg.get("relay")
    if relay:
        b.plan(relay["endpoint"], "plan_files again through a relay adding %d ms before each request "
               "(S3's first-byte latency): {files} data files in {manifests} manifests" % relay["delay_ms"],
               False)
    b.report()


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "plan-table":
        plan_table(sys.argv[2], sys.argv[3].rstrip("/"), *map(int, sys.argv[4:6]))
    elif cmd == "upload":
        upload(sys.argv[2], sys.argv[3])
    elif cmd == "relay":
        relay(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
    elif cmd == "measure":
        measure(sys.argv[2])
    else:
        sys.exit(__doc__)
