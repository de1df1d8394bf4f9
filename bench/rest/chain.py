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


def read_metadata(loc: str) -> dict:
    """The table metadata file at loc (file: or a path; gzip or not), parsed."""
    path = loc[len("file:"):] if loc.startswith("file:") else loc
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw)


def main_chain(md: dict) -> tuple[dict, list]:
    """(snapshot id -> parent id, the ids reachable from the current one, newest first)."""
    parent = {s["snapshot-id"]: s.get("parent-snapshot-id") for s in md.get("snapshots", [])}
    chain, sid = [], md.get("current-snapshot-id")
    while sid is not None and sid != -1 and sid in parent:
        chain.append(sid)
        sid = parent[sid]
    return parent, chain


def main():
    loc, initial, ok = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    parent, chain = main_chain(read_metadata(loc))
    expected = initial + ok
    print(json.dumps({"snapshots": len(parent), "chain": len(chain), "expected": expected,
                      "lost": expected - len(chain), "orphans": len(parent) - len(chain)}))


if __name__ == "__main__":
    main()
