#!/usr/bin/env python3
"""Lost and duplicated appends of bench/hot_table.sh: after writers appended to a fresh table.

    python3 check.py METADATA_LOCATION ACKED_FILE

ACKED_FILE holds the snapshot ids the writers were answered 200 for, one per line. Reads the
table's current metadata file (bench/rest/chain.py) and prints one JSON line: chain (snapshots reachable from the current one through
parent-snapshot-id), acked, lost (acknowledged ids not in the chain), extra (chain snapshots
nobody was answered for), dup (ids acknowledged twice). lost, dup and extra must be 0.
"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "rest"))
from chain import main_chain, read_metadata  # noqa: E402  (bench/rest/chain.py)


def main():
    loc, acked_file = sys.argv[1], sys.argv[2]
    _, chain = main_chain(read_metadata(loc))
    acked = [int(x) for x in open(acked_file).read().split()]
    seen = set(chain)
    print(json.dumps({"chain": len(chain), "acked": len(acked),
                      "lost": sum(1 for a in acked if a not in seen),
                      "extra": len(seen - set(acked)),
                      "dup": len(acked) - len(set(acked))}))


if __name__ == "__main__":
    main()
