#!/usr/bin/env python3
"""Lost and duplicated appends of bench/hot_table.sh: after writers appended to a fresh table.

    python3 check.py METADATA_LOCATION ACKED_FILE

ACKED_FILE holds the snapshot ids the writers were answered 200 for, one per line (or, with
a "paths:" prefix on its first line, data file paths). Reads the table's current metadata file
and prints one JSON line: chain (snapshots reachable from the current one through
parent-snapshot-id), acked, lost (acknowledged ids not in the chain), extra (chain snapshots
nobody was answered for), dup (ids acknowledged twice). lost, dup and extra must be 0.
"""
import gzip
import json
import sys


def main():
    loc, acked_file = sys.argv[1], sys.argv[2]
    path = loc[len("file:"):] if loc.startswith("file:") else loc
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    md = json.loads(raw)
    parent = {s["snapshot-id"]: s.get("parent-snapshot-id") for s in md.get("snapshots", [])}
    chain, sid = [], md.get("current-snapshot-id")
    while sid is not None and sid != -1 and sid in parent:
        chain.append(sid)
        sid = parent[sid]
    acked = [int(x) for x in open(acked_file).read().split()]
    seen = set(chain)
    print(json.dumps({"chain": len(chain), "acked": len(acked),
                      "lost": sum(1 for a in acked if a not in seen),
                      "extra": len(seen - set(acked)),
                      "dup": len(acked) - len(set(acked))}))


if __name__ == "__main__":
    main()
