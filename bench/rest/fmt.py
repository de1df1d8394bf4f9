#!/usr/bin/env python3
"""Small formatting helpers of bench/rest.sh.

    python3 fmt.py table SERVER < loadTable-answer     one line: snapshots and uuid the server sees
    python3 fmt.py progress KEY JSON                   one progress line of a measurement
    python3 fmt.py field JSON NAME                     one field of a JSON object
    python3 fmt.py merge JSON JSON                     the two objects merged
"""
import json
import sys


def progress(key, d):
    if "rps" in d:
        s = f"n={d['n']} p50={d['p50_ms']:.3f} ms p99={d['p99_ms']:.3f} ms rps={d['rps']:.1f}"
    else:
        s = (f"commits={d['commits']} commits/s={d['commits_per_s']:.1f} p50={d['p50_ms']:.1f} ms "
             f"409s={d['conflicts']}")
        if "lost" in d:
            s += f" lost={d['lost']} orphans={d['orphans']}"
    if d.get("errors"):
        s += f" ERRORS={d['errors']}: {d.get('first_error', '')[:200]}"
    print(f"  . {key:<28} {s}")


def main():
    op = sys.argv[1]
    if op == "table":
        m = json.load(sys.stdin)["metadata"]
        print(f"  {sys.argv[2]:8} loads b.warm: {len(m['snapshots'])} snapshots, uuid {m['table-uuid']}")
    elif op == "progress":
        progress(sys.argv[2], json.loads(sys.argv[3]))
    elif op == "field":
        print(json.loads(sys.argv[2])[sys.argv[3]])
    elif op == "merge":
        d = json.loads(sys.argv[2])
        d.update(json.loads(sys.argv[3]))
        print(json.dumps(d))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
