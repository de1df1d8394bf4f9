"""The table fixtures of data/, re-homed to S3 and to a local directory.

Usage: fixtures_s3.py DATA_DIR STAGE LOCAL_ROOT BUCKET [--extra PREFIX]... [--only DIR]...

Every fixture table with manifests -- test/data/avro/warehouse/* (v1, v2_*, v3,
exotic_types and the bad ones), test/data/clients/java/warehouse/fixtures/* and
test/data/clients/python/warehouse/fixtures/* -- is written twice:

  - to LOCAL_ROOT/{avro,java,py}/<table>, every recorded path becoming
    file://LOCAL_ROOT/...;
  - to s3://BUCKET/PREFIX/{avro,java,py}/<table> (staged under STAGE/s3,
    then uploaded), every recorded path becoming s3://BUCKET/PREFIX/....

Both forms of a recorded path (plain "/tmp/..." and "file:///tmp/...") map
to the same new URI, and PREFIX is chosen so that s3://BUCKET/PREFIX is
exactly as long as file://LOCAL_ROOT: the two copies answer identically once
the two roots are swapped, but for the sizes of compressed manifests (the
codec compresses different bytes; each copy's manifest_length is its own).  Each --extra PREFIX uploads a further copy to s3://BUCKET/
PREFIX/... (for tests that write and delete).  --only DIR ("py/fixtures/
events", ...) limits the tables to those named.

Metadata JSON and Avro files are re-homed with test/fuzz/fuzzlib/seeds.py's
functions; manifest_length in a manifest list follows its manifest's new
size, keyed by the manifest's new recorded path (seeds.py keys by the local
output path, which is no recorded path for an s3 copy).  Other files (data,
version-hint.text) are copied as they are.

The S3 server comes from the environment start_s3 (test/s3/lib.sh) exports:
S3_ENDPOINT, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION.

Writes STAGE/fixtures.json: {"local": "file://LOCAL_ROOT", "s3":
"s3://BUCKET/PREFIX", "extra": {PREFIX: "s3://BUCKET/PREFIX"}, "tables":
[{"group", "name", "dir", "metadata"}]} where dir is "<group>/<name>"
below either root and metadata the current metadata file below dir.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuzz"))
from fuzzlib.seeds import (_copy_metadata_json, _current_metadata,  # noqa: E402
                           _rehome_avro)

# (recorded prefix, directory under data/, group)
GROUPS = [
    ("/tmp/skade-fixtures/avro/", "avro/warehouse", "avro"),
    ("/tmp/skade-fixtures/java/", "clients/java/warehouse", "java"),
    ("/tmp/skade-fixture-py/", "clients/python/warehouse", "py"),
]


def mapping_to(root: str):
    """every recorded prefix (file:// URI first, then plain) -> root/<group>/"""
    m = []
    for old, _, group in GROUPS:
        m.append(("file://" + old, f"{root}/{group}/"))
    for old, _, group in GROUPS:
        m.append((old, f"{root}/{group}/"))
    return m


def tables(data: Path):
    """(group, name relative to the group, source dir), every fixture table"""
    out = []
    for _, rel, group in GROUPS:
        base = data / rel
        for meta in sorted(base.rglob("metadata")):
            if meta.is_dir() and any(meta.glob("*.json")):
                out.append((group, str(meta.parent.relative_to(base)), meta.parent))
    return out


def rehome_table(src: Path, dst: Path, mapping, new_dir: str) -> None:
    """src's files at dst, recorded paths re-homed; new_dir: the table's new
    URI (what its metadata/ files are recorded under)"""
    meta_out = dst / "metadata"
    meta_out.mkdir(parents=True, exist_ok=True)
    files = sorted((src / "metadata").iterdir())
    lengths = {}
    # manifests first: their new sizes go into the lists, keyed by their new
    # recorded path
    for f in files:
        if f.suffix == ".avro" and not f.name.startswith("snap-"):
            out = meta_out / f.name
            _rehome_avro(f, out, mapping, {})
            lengths[f"{new_dir}/metadata/{f.name}"] = (f.stat().st_size, out.stat().st_size)
    for f in files:
        out = meta_out / f.name
        if f.name.startswith("snap-") and f.suffix == ".avro":
            _rehome_avro(f, out, mapping, lengths)
        elif f.name.endswith(".json"):
            _copy_metadata_json(f, out, mapping)
        elif f.suffix != ".avro":
            out.write_bytes(f.read_bytes())
    for f in sorted(src.rglob("*")):
        if f.is_file() and (src / "metadata") not in f.parents:
            out = dst / f.relative_to(src)
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(f.read_bytes())


def s3_client():
    import boto3
    return boto3.client("s3", endpoint_url=os.environ["S3_ENDPOINT"],
                        region_name=os.environ.get("AWS_REGION", "us-east-1"),
                        aws_access_key_id=os.environ["AWS_ACCESS_KEY_ID"],
                        aws_secret_access_key=os.environ["AWS_SECRET_ACCESS_KEY"])


# moto 5.2.1 checks a signature against the path as werkzeug re-quotes it,
# not as sent: a key with "=", "+", ":", "," or "%" (Hive partition
# directories of data files) is always SignatureDoesNotMatch.  Such objects
# (data files only; metadata never needs them) are left out.
SAFE_KEY = re.compile(r"[A-Za-z0-9/._~ -]+")


def upload(client, stage: Path, bucket: str, prefix: str) -> tuple[int, int]:
    n = skipped = 0
    for f in sorted(stage.rglob("*")):
        if f.is_file():
            key = f"{prefix}/{f.relative_to(stage)}"
            if not SAFE_KEY.fullmatch(key):
                skipped += 1
                continue
            client.put_object(Bucket=bucket, Key=key, Body=f.read_bytes())
            n += 1
    return n, skipped


def main() -> None:
    args = sys.argv[1:]
    extra, only = [], []
    for opt, into in (("--extra", extra), ("--only", only)):
        while opt in args:
            i = args.index(opt)
            into.append(args[i + 1])
            del args[i:i + 2]
    data, stage, local_root, bucket = Path(args[0]), Path(args[1]), args[2].rstrip("/"), args[3]
    local_url = "file://" + local_root
    head = f"s3://{bucket}/"
    pad = len(local_url) - len(head) - len("eq")
    if pad < 0:
        sys.exit(f"fixtures_s3.py: {local_root} is too short for bucket {bucket}")
    prefix = "eq" + "x" * pad
    s3_url = head + prefix
    assert len(s3_url) == len(local_url)

    found = [t for t in tables(data) if not only or f"{t[0]}/{t[1]}" in only]
    client = s3_client()
    index = {"local": local_url, "s3": s3_url, "extra": {}, "tables": []}
    targets = [(local_url, Path(local_root), None)]
    targets.append((s3_url, stage / "s3" / prefix, prefix))
    for p in extra:
        targets.append((head + p, stage / "s3" / p, p))
    for root_url, out_root, key_prefix in targets:
        mapping = mapping_to(root_url)
        for group, name, src in found:
            rehome_table(src, out_root / group / name, mapping, f"{root_url}/{group}/{name}")
        if key_prefix is not None:
            n, skipped = upload(client, out_root, bucket, key_prefix)
            print(f"fixtures_s3.py: {n} objects under {root_url} "
                  f"({skipped} data files with keys moto cannot check left out)")
            if key_prefix != prefix:
                index["extra"][key_prefix] = root_url
    for group, name, src in found:
        cur = _current_metadata(Path(local_root) / group / name / "metadata")
        index["tables"].append({"group": group, "name": name, "dir": f"{group}/{name}",
                                "metadata": f"metadata/{cur.name}"})
    (stage / "fixtures.json").write_text(json.dumps(index, indent=1))
    print(f"fixtures_s3.py: {len(found)} tables under {local_url} and {s3_url}")


if __name__ == "__main__":
    main()
