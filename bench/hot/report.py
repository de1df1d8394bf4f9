#!/usr/bin/env python3
"""The summary of bench/hot_table.sh: results.tsv (MODE WRITERS LOADGEN-JSON CHECK-JSON per
run) as one table, the ratios measured in the same run, and the issue's targets with a
verdict each (on rebase + group commit, what skade ships; rebase alone beside it)."""
import json
import sys


def main():
    runs = {}
    order = []
    for line in open(sys.argv[1]):
        mode, w, out, chk = line.rstrip("\n").split("\t")
        runs[(mode, int(w))] = (json.loads(out), json.loads(chk))
        if int(w) not in order and not mode.startswith("py_"):
            order.append(int(w))
    print(f"{'writers':>7} {'mode':12} {'commits/s':>10} {'p50 ms':>8} {'p99 ms':>8} {'409 rate':>9} {'rebased':>8} {'errors':>7} {'lost':>5} {'dup':>4} {'extra':>6}")
    for w in order:
        for mode in ("strict", "rebase", "group", "fixture", "sql_strict", "sql_rebase"):
            if (mode, w) not in runs:
                continue
            o, c = runs[(mode, w)]
            print(f"{w:>7} {'rebase+group' if mode == 'group' else mode:12} {o['commits_per_s']:10.1f} {o['p50_ms']:8.1f} {o['p99_ms']:8.1f} "
                  f"{o['conflict_rate']*100:8.1f}% {o['rebased']:8} {o['errors']:7} {c['lost']:5} {c['dup']:4} {c['extra']:6}")
    for mode in ("py_strict", "py_rebase", "py_group"):
        for (m, w), (o, _) in runs.items():
            if m == mode:
                print(f"{w:>7} {mode:12} {o['commits_per_s']:10.2f} {o['p50_ms']:8.1f} {o['p99_ms']:8.1f} "
                      f"{o['conflict_rate']*100:8.1f}% {'':>8} {o['failures']:7} {o['lost']:5} {o['dup']:4} {o['extra']:6}"
                      "   (errors column: appends failed after pyiceberg's retries)")
    print()
    print("ratios (same run) and the issue's targets")
    bad = 0
    for w in order:
        s, r, g, f = (runs.get((m, w)) for m in ("strict", "rebase", "group", "fixture"))
        if not (s and r and g):
            continue
        rs, rr, rg = s[0]["commits_per_s"], r[0]["commits_per_s"], g[0]["commits_per_s"]
        x = lambda a, b: a / b if b else float("inf")
        line = f"  {w:>3} writers: group/strict {x(rg, rs):6.2f}x   rebase/strict {x(rr, rs):6.2f}x   group/rebase {x(rg, rr):5.2f}x"
        if f:
            line += f"   group/fixture {x(rg, f[0]['commits_per_s']):6.2f}x"
        qs, qr = runs.get(("sql_strict", w)), runs.get(("sql_rebase", w))
        if qs and qr:
            line += f"   SQL rebase/strict {x(qr[0]['commits_per_s'], qs[0]['commits_per_s']):6.2f}x"
        print(line)
        lost = sum(v[1].get(k, 0) for v in (s, r, g, f, qs, qr) if v for k in ("lost", "dup", "extra", "orphans"))
        if lost:
            print(f"      LOST/DUPLICATED/EXTRA/ORPHANED appends at {w} writers: {lost}")
            bad += 1
        if w == max(order):
            targets = [("rebase+group >= 10x strict commits/s", rs > 0 and rg / rs >= 10),
                       ("409 rate < 1% (rebase+group)", g[0]["conflict_rate"] < 0.01),
                       ("p99 < 100 ms (rebase+group)", g[0]["p99_ms"] < 100)]
            if f:
                targets.insert(1, ("rebase+group >= 20x fixture commits/s",
                                   f[0]["commits_per_s"] > 0 and rg / f[0]["commits_per_s"] >= 20))
            for what, ok in targets:
                print(f"      target at {w} writers: {what}: {'met' if ok else 'NOT met'}")
    py = {m: v for (m, w), v in runs.items() if m.startswith("py_")}
    ps = py.get("py_strict")
    for mode in ("py_rebase", "py_group"):
        pr = py.get(mode)
        if not (ps and pr):
            continue
        a, b = ps[0]["commits_per_s"], pr[0]["commits_per_s"]
        print(f"  pyiceberg: {mode[3:]}/strict {b / a if a else float('inf'):.2f}x "
              f"(target >= 2x: {'met' if a and b / a >= 2 else 'NOT met'}), 409 rate {pr[0]['conflict_rate']*100:.1f}% "
              f"(target < 1%: {'met' if pr[0]['conflict_rate'] < 0.01 else 'NOT met'})")
        if any(pr[0][k] or ps[0][k] for k in ("lost", "dup", "extra")):
            print("      LOST/DUPLICATED/EXTRA pyiceberg rows")
            bad += 1
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
