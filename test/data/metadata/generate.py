#!/usr/bin/env python3
"""Generate Iceberg table-metadata fixtures (and benchmark inputs).

    python3 generate.py fixtures [DIR]          small good and bad files for the regression tests
    python3 generate.py big N PATH [--gzip]     one metadata file with N snapshots (benchmarks)

The files follow the Iceberg table spec (format v1/v2/v3): schemas,
partition specs, snapshots with summaries shaped like Spark/Java writers'
(about 800 bytes per snapshot), snapshot log, metadata log and refs.
"""
import gzip
import json
import os
import sys
import uuid

TABLE_UUID = "8d2a5c1e-4b7f-4c1a-9e3d-2f6b8a7c9d01"


def schema(schema_id=0, extra=False):
    fields = [
        {"id": 1, "name": "id", "required": True, "type": "long"},
        {"id": 2, "name": "ts", "required": False, "type": "timestamptz"},
        {"id": 3, "name": "category", "required": False, "type": "string"},
    ]
    if extra:
        fields.append({"id": 4, "name": "amount", "required": False, "type": "decimal(10, 2)"})
    return {"type": "struct", "schema-id": schema_id, "fields": fields}


def snapshot(i, base_id, version, base_ts):
    sid = base_id + i
    s = {
        "snapshot-id": sid,
        "timestamp-ms": base_ts + i * 60000,
        "summary": {
            "operation": "append" if i % 10 else "overwrite",
            "spark.app.id": "local-1700000000000",
            "added-data-files": "4", "added-records": str(1000 + i), "added-files-size": str(40960 + i),
            "changed-partition-count": "2", "total-records": str(1000 * (i + 1)),
            "total-files-size": str(40960 * (i + 1)), "total-data-files": str(4 * (i + 1)),
            "total-delete-files": "0", "total-position-deletes": "0", "total-equality-deletes": "0",
        },
        "manifest-list": f"file:/warehouse/db/events/metadata/snap-{sid}-1-{uuid.UUID(int=sid)}.avro",
        "schema-id": 0,
    }
    if i > 0:
        s["parent-snapshot-id"] = sid - 1
    if version >= 2:
        s["sequence-number"] = i + 1
    return s


def metadata(n, version=2, refs=True, tag=True):
    base_id, base_ts = 3051729675574597000, 1700000000000
    snaps = [snapshot(i, base_id, version, base_ts) for i in range(n)]
    md = {
        "format-version": version,
        "table-uuid": TABLE_UUID,
        "location": "file:/warehouse/db/events",
        "last-updated-ms": base_ts + n * 60000,
        "last-column-id": 4,
        "schemas": [schema(0), schema(1, extra=True)],
        "current-schema-id": 1,
        "partition-specs": [{"spec-id": 0, "fields": [
            {"name": "ts_day", "transform": "day", "source-id": 2, "field-id": 1000}]}],
        "default-spec-id": 0,
        "last-partition-id": 1000,
        "properties": {"write.format.default": "parquet", "owner": "etl"},
        "current-snapshot-id": snaps[-1]["snapshot-id"] if snaps else -1,
        "snapshots": snaps,
        "snapshot-log": [{"timestamp-ms": s["timestamp-ms"], "snapshot-id": s["snapshot-id"]} for s in snaps],
        "metadata-log": [],
        "sort-orders": [{"order-id": 0, "fields": []}],
        "default-sort-order-id": 0,
    }
    if version >= 2:
        md["last-sequence-number"] = n
    if version == 1:
        md["schema"] = schema(0)
        md["partition-spec"] = md["partition-specs"][0]["fields"]
    if refs and snaps:
        md["refs"] = {"main": {"snapshot-id": snaps[-1]["snapshot-id"], "type": "branch"}}
        if tag and n > 1:
            md["refs"]["v1-release"] = {"snapshot-id": snaps[0]["snapshot-id"], "type": "tag",
                                        "max-ref-age-ms": 864000000}
    return md


def write(path, obj, gz=False, raw=None):
    data = raw if raw is not None else json.dumps(obj, indent=2).encode()
    if gz:
        data = gzip.compress(data, mtime=0)
    with open(path, "wb") as f:
        f.write(data)


def fixtures(d):
    os.makedirs(d, exist_ok=True)
    write(f"{d}/00003-v2.metadata.json", metadata(3))
    write(f"{d}/00004-v2next.metadata.json", {**metadata(4), "last-sequence-number": 4})
    write(f"{d}/00001-v1.metadata.json", metadata(2, version=1, refs=False))
    write(f"{d}/00001-v3.metadata.json", metadata(1, version=3))
    write(f"{d}/00000-empty.metadata.json", metadata(0))
    write(f"{d}/00003-v2.gz.metadata.json", metadata(3), gz=True)
    write(f"{d}/00003-gzip-by-magic.metadata.json", metadata(3), gz=True)
    other = metadata(3)
    other["table-uuid"] = "00000000-0000-0000-0000-000000000000"
    write(f"{d}/00005-other-table.metadata.json", other)
    back = metadata(3)
    back["last-sequence-number"] = 1
    write(f"{d}/00006-seq-back.metadata.json", back)
    # bad input
    write(f"{d}/bad-syntax.metadata.json", None, raw=b'{\n  "format-version": 2,\n  "location": "x",\n  oops\n}\n')
    bad = metadata(2)
    del bad["location"]
    write(f"{d}/bad-missing-location.metadata.json", bad)
    bad = metadata(2)
    bad["snapshots"][1]["snapshot-id"] = "12"
    write(f"{d}/bad-mistyped-snapshot-id.metadata.json", bad)
    bad = metadata(2)
    bad["format-version"] = 9
    write(f"{d}/bad-version.metadata.json", bad)
    bad = metadata(2)
    bad["current-snapshot-id"] = 42
    write(f"{d}/bad-current-snapshot.metadata.json", bad)
    write(f"{d}/bad-deep.metadata.json", None, raw=b"[" * 4096 + b"]" * 4096)
    write(f"{d}/bad-not-object.metadata.json", None, raw=b"[1, 2, 3]")
    full = gzip.compress(json.dumps(metadata(50)).encode(), mtime=0)
    write(f"{d}/bad-truncated.gz.metadata.json", None, raw=full[: len(full) // 2])
    # 20 MB of spaces after a valid object: a bomb under a small skade.max_metadata_size
    write(f"{d}/bomb.gz.metadata.json", None,
          raw=gzip.compress(json.dumps(metadata(1)).encode() + b" " * (20 * 1024 * 1024), mtime=0))


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "fixtures":
        fixtures(sys.argv[2] if len(sys.argv) > 2 else os.path.dirname(os.path.abspath(__file__)))
    elif len(sys.argv) >= 4 and sys.argv[1] == "big":
        n = int(sys.argv[2])
        write(sys.argv[3], metadata(n), gz="--gzip" in sys.argv)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
