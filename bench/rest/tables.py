#!/usr/bin/env python3
"""The tables of bench/rest.sh: one metadata file per table, N snapshots each.

    python3 tables.py WAREHOUSE NAME:N [NAME:N ...]

For each NAME: WAREHOUSE/b/NAME/metadata/00000-<uuid>.metadata.json with N snapshots
(test/data/metadata/generate.py's shape: Spark-like summaries, snapshot log, refs main + a tag),
the table's own uuid and location (WAREHOUSE/b/NAME, where commits write their next files),
written compact as Java's TableMetadataParser writes it. Prints "NAME PATH" per table.
Also writes WAREHOUSE/manifest-list.avro, an empty placeholder the benchmark's appended
snapshots name (neither server reads a snapshot's manifest list to commit or load it).
"""
import json
import os
import sys
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data", "metadata"))
import generate  # noqa: E402


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    wh = os.path.abspath(sys.argv[1])
    for arg in sys.argv[2:]:
        name, n = arg.split(":")
        loc = f"{wh}/b/{name}"
        os.makedirs(f"{loc}/metadata", exist_ok=True)
        md = generate.metadata(int(n))
        md["table-uuid"] = str(uuid.uuid4())
        md["location"] = f"file:{loc}"
        path = f"{loc}/metadata/00000-{uuid.uuid4()}.metadata.json"
        with open(path, "w") as f:
            json.dump(md, f, separators=(",", ":"))
        print(name, path)
    open(f"{wh}/manifest-list.avro", "a").close()


if __name__ == "__main__":
    main()
