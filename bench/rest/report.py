#!/usr/bin/env python3
"""The table bench/rest.sh prints, from its results file.

    python3 report.py RESULTS SIZES WRITERS

RESULTS holds one "KEY<TAB>JSON" line per measurement (loadgen's output, chain.py's merged in
for B2). Keys: "self C", "config SERVER C", "b1 N MODE C SERVER" (MODE all|refs|304|identity),
"b2 W SERVER". Ratios are skade's advantage: fixture/skade for latencies, skade/fixture for
rates (above 1 = skade better).
"""
import json
import sys


def load(path):
    r = {}
    with open(path) as f:
        for line in f:
            k, _, v = line.rstrip("\n").partition("\t")
            if v:
                r[k] = json.loads(v)
    return r


def num(v, unit):
    if v is None:
        return "-"
    if unit == "ms":
        return f"{v:.3f}" if v < 10 else f"{v:.1f}"
    if unit == "rate":
        return f"{v:.0f}" if v >= 100 else f"{v:.1f}"
    if unit == "pct":
        return f"{100 * v:.0f}%"
    return f"{v:.2f}" if isinstance(v, float) else str(v)


def ratio(s, f, lower_better):
    if s is None or f is None or s == 0 or f == 0:
        return "-"
    x = f / s if lower_better else s / f
    return f"{x:.1f}x" if x < 100 else f"{x:.0f}x"


def row(name, s, f, unit, target="", lower_better=True, with_ratio=True):
    r = ratio(s, f, lower_better) if with_ratio else ""
    print(f"| {name:<42} | {num(s, unit):>9} | {num(f, unit):>9} | {r:>7} | {target}")


def header(title):
    print()
    print(title)
    print(f"| {'metric':<42} | {'skade':>9} | {'fixture':>9} | {'ratio':>7} | target")
    print(f"|{'-' * 44}|{'-' * 11}|{'-' * 11}|{'-' * 9}|{'-' * 30}")


def get(r, key, field):
    v = r.get(key)
    if v is None or v.get("n", 1) == 0:
        return None
    return v.get(field)


def errors(r, prefix):
    bad = []
    for k, v in sorted(r.items()):
        if k.startswith(prefix) and (v.get("errors") or 0) > 0:
            bad.append(f"{k}: {v['errors']} errors ({v.get('first_error', '')[:160]})")
    return bad


def main():
    r = load(sys.argv[1])
    sizes = [int(x) for x in sys.argv[2].split()]
    writers = [int(x) for x in sys.argv[3].split()]

    header("Load generator check (GET, keep-alive; req/s the generator drives)")
    for c in (1, 32):
        row(f"trivial in-process server, {c} client(s)", get(r, f"self {c}", "rps"), None, "rate", "", False, False)
    for c in (1, 32):
        row(f"GET /v1/config, {c} client(s) req/s", get(r, f"config skade {c}", "rps"),
            get(r, f"config fixture {c}", "rps"), "rate", "", False)
    row("GET /v1/config, 1 client p50 (ms)", get(r, "config skade 1", "p50_ms"),
        get(r, "config fixture 1", "p50_ms"), "ms")

    for n in sizes:
        k = lambda mode, c, srv: f"b1 {n} {mode} {c} {srv}"  # noqa: E731
        b = lambda mode, srv: get(r, k(mode, 1, srv), "bytes")  # noqa: E731
        title = (f"B1 loadTable warm, {n:,} snapshots (bytes per answer, skade/fixture: all gzip "
                 f"{b('all', 'skade')}/{b('all', 'fixture')}, all identity {b('identity', 'skade')}/"
                 f"{b('identity', 'fixture')}, refs {b('refs', 'skade')}/{b('refs', 'fixture')})")
        header(title)
        at9k = n == 9000
        for mode, label in (("all", "all"), ("identity", "all, no gzip"), ("refs", "refs"), ("304", "If-None-Match 304")):
            tgt50 = ""
            if mode == "all" and at9k:
                tgt50 = "<= 11 ms and >= 20x"
            elif mode in ("refs", "304"):
                tgt50 = "< 1 ms"
            s50, f50 = get(r, k(mode, 1, "skade"), "p50_ms"), get(r, k(mode, 1, "fixture"), "p50_ms")
            if tgt50 and s50 is not None:
                ok = s50 <= 11 if mode == "all" else s50 < 1
                if mode == "all" and f50:
                    ok = ok and f50 / s50 >= 20
                tgt50 += "  -> " + ("met" if ok else "NOT met")
            row(f"{label}: 1 client p50 (ms)", s50, f50, "ms", tgt50)
            row(f"{label}: 1 client p99 (ms)", get(r, k(mode, 1, "skade"), "p99_ms"),
                get(r, k(mode, 1, "fixture"), "p99_ms"), "ms")
            if mode == "identity":
                continue
            for c in (8, 32):
                s, f = get(r, k(mode, c, "skade"), "rps"), get(r, k(mode, c, "fixture"), "rps")
                if k(mode, c, "skade") not in r and k(mode, c, "fixture") not in r:
                    print(f"| {label + f': {c} clients req/s':<42} | {'skipped':>9} | {'skipped':>9} | {'':>7} |")
                    continue
                row(f"{label}: {c} clients req/s", s, f, "rate", "", False)

    header("B2 commits on one hot table (append: add-snapshot + set-snapshot-ref main, "
           "assert-ref-snapshot-id; 409 -> reload refs, retry)")
    for w in writers:
        s, f = r.get(f"b2 {w} skade", {}), r.get(f"b2 {w} fixture", {})
        tgt = ">= 5x" if w == 8 else ""
        cs, cf = s.get("commits_per_s"), f.get("commits_per_s")
        if tgt and cs and cf:
            tgt += "  -> " + ("met" if cs / cf >= 5 else "NOT met")
        row(f"{w} writer(s): commits/s", cs, cf, "rate", tgt, False)
        row(f"{w} writer(s): commit p50 (ms, with retries)", s.get("p50_ms"), f.get("p50_ms"), "ms")
        row(f"{w} writer(s): commit p95 (ms, with retries)", s.get("p95_ms"), f.get("p95_ms"), "ms")
        row(f"{w} writer(s): attempt p50 (ms)", s.get("attempt_p50_ms"), f.get("attempt_p50_ms"), "ms")
        row(f"{w} writer(s): 409 rate", s.get("conflict_rate"), f.get("conflict_rate"), "pct", "", True, False)
        row(f"{w} writer(s): attempts per success", s.get("attempts_per_commit"),
            f.get("attempts_per_commit"), "x", "", True, False)
        row(f"{w} writer(s): successes / snapshots added", s.get("commits"), f.get("commits"), "x", "", True, False)
        row(f"{w} writer(s): lost updates, orphans", None, None, "x",
            f"skade {s.get('lost', '?')}, {s.get('orphans', '?')}; fixture {f.get('lost', '?')}, "
            f"{f.get('orphans', '?')}  (target 0)", True, False)

    bad = errors(r, "")
    print()
    if bad:
        print("errors (other than 409s):")
        for b in bad:
            print("  " + b)
    else:
        print("errors (other than 409s): none")


if __name__ == "__main__":
    main()
