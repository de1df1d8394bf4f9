#!/usr/bin/env python3
"""Lost and duplicated appends of bench/hot_table.sh: after writers appended to a fresh table.

    python3 check.py METADATA_LOCATION ACKED_FILE

ACKED_FILE holds the snapshot ids the writers were answered 200 for, one per line. Reads the
table's current metadata file (bench/rest/chain.py) and prints one JSON line: chain (snapshots reachable from the current one through
parent-snapshot-id), acked, lost (acknowledged ids not in the chain), extra (chain snapshots
nobody was answered for), dup (ids acknowledged twice), orphans (snapshots of the file off the
chain: a half-applied commit) and missing_lists (chain snapshots whose manifest list is not
there). lost, dup, extra, orphans and missing_lists must be 0 -- extra excepted after a crash
(test/rest/crash.sh): a commit made whose answer the crash cut off.
"""
import os
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "rest"))
from chain import main_chain, read_metadata  # noqa: E402  (bench/rest/chain.py)


def main():
    loc, acked_file = sys.argv[1], sys.argv[2]
    md = read_metadata(loc)
    parent, chain = main_chain(md)
    acked = [int(x) for x in open(acked_file).read().split()]
    seen = set(chain)
    lists = {s["snapshot-id"]: s.get("manifest-list", "") for s in md.get("snapshots", [])}
    missing = sum(1 for sid in chain
                  if not os.path.exists(lists[sid][len("file:"):] if lists[sid].startswith("file:") else lists[sid]))
    print(json.dumps({"chain": len(chain), "acked": len(acked),
                      "lost": sum(1 for a in acked if a not in seen),
                      "extra": len(seen - set(acked)),
                      "dup": len(acked) - len(set(acked)),
                      "orphans": len(parent) - len(chain),
                      "missing_lists": missing}))


if __name__ == "__main__":
    main()
