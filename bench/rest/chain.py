#!/usr/bin/env python3
"""Lost-update check of bench/rest.sh's B2: after W writers appended snapshots to a table.

    python3 chain.py METADATA_LOCATION INITIAL_SNAPSHOTS SUCCESSES

Reads the table's current metadata file and prints one JSON line: snapshots (in the file),
chain (snapshots reachable from the current one through parent-snapshot-id), expected
(INITIAL_SNAPSHOTS + SUCCESSES) and lost = expected - chain (an acknowledged commit that is
not in the table's history), orphans = snapshots - chain. Both must be 0.
"""
import gzip
import json
import sys


def main():
    loc, initial, ok = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    path = loc[len("file:"):] if loc.startswith("file:") else loc
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    md = json.loads(raw)
    parent = {s["snapshot-id"]: s.get("parent-snapshot-id") for s in md.get("snapshots", [])}
    chain, sid = 0, md.get("current-snapshot-id")
    while sid is not None and sid != -1 and sid in parent:
        chain += 1
        sid = parent[sid]
    expected = initial + ok
    print(json.dumps({"snapshots": len(parent), "chain": chain, "expected": expected,
                      "lost": expected - chain, "orphans": len(parent) - chain}))


if __name__ == "__main__":
    main()
