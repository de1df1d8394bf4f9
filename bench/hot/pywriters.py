#!/usr/bin/env python3
"""pyiceberg writers of bench/hot_table.sh: W processes, each a RestCatalog appending one row
per commit to one table for D seconds (pyiceberg's own retries as configured on the table).

    python3 pywriters.py URI WAREHOUSE TOKEN NAMESPACE TABLE WRITERS SECONDS

Prints one JSON line: commits (acknowledged appends), commits_per_s, p50_ms/p99_ms of an
append (the client's whole append() call: its retries included), posts (commit requests the
writers sent, counted on their HTTP sessions), conflicts (of those answered 409),
conflict_rate, failures (appends that raised after pyiceberg's retries), and the check of a
scan afterwards: lost (acknowledged rows missing), dup (rows twice), extra (rows nobody was
acknowledged for) -- all three must be 0.
"""
import json
import multiprocessing as mp
import sys
import time


def writer(args):
    uri, wh, token, ns, name, w, secs = args
    import pyarrow as pa
    from pyiceberg.catalog.rest import RestCatalog
    from pyiceberg.exceptions import CommitFailedException

    cat = RestCatalog(f"w{w}", uri=uri, warehouse=wh, token=token)
    stat = {"posts": 0, "conflicts": 0}

    def hook(resp, *a, **k):
        if resp.request.method == "POST" and "/tables/" in resp.request.url:
            stat["posts"] += 1
            stat["conflicts"] += resp.status_code == 409

    cat._session.hooks["response"].append(hook)
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False)])
    t = cat.load_table((ns, name))
    lat, ids, failures, k = [], [], 0, 0
    end = time.monotonic() + secs
    while time.monotonic() < end:
        rid = w * 10_000_000 + k
        k += 1
        t0 = time.monotonic()
        try:
            t.append(pa.Table.from_pylist([{"id": rid}], schema=schema))
        except CommitFailedException:
            failures += 1
            t = cat.load_table((ns, name))
            continue
        lat.append((time.monotonic() - t0) * 1000)
        ids.append(rid)
    return lat, ids, failures, stat


def pct(xs, p):
    if not xs:
        return 0.0
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def main():
    uri, wh, token, ns, name, writers, secs = sys.argv[1:8]
    writers, secs = int(writers), float(secs)
    t0 = time.monotonic()
    with mp.get_context("spawn").Pool(writers) as pool:
        res = pool.map(writer, [(uri, wh, token, ns, name, w, secs) for w in range(writers)])
    elapsed = time.monotonic() - t0
    lat = [x for r in res for x in r[0]]
    ids = [x for r in res for x in r[1]]
    posts = sum(r[3]["posts"] for r in res)
    conflicts = sum(r[3]["conflicts"] for r in res)
    # every acknowledged row in the table exactly once, no other
    from pyiceberg.catalog.rest import RestCatalog
    rows = RestCatalog("check", uri=uri, warehouse=wh, token=token).load_table((ns, name)).scan().to_arrow()
    got = rows["id"].to_pylist()
    lost = len(set(ids) - set(got))
    dup = len(got) - len(set(got))
    extra = len(set(got) - set(ids))
    print(json.dumps({"writers": writers, "commits": len(ids), "commits_per_s": len(ids) / secs,
                      "lost": lost, "dup": dup, "extra": extra,
                      "elapsed_s": elapsed, "p50_ms": pct(lat, 50), "p99_ms": pct(lat, 99),
                      "posts": posts, "conflicts": conflicts,
                      "conflict_rate": conflicts / posts if posts else 0.0,
                      "failures": sum(r[2] for r in res)}))


if __name__ == "__main__":
    main()
