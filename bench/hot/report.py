#!/usr/bin/env python3
"""The summary of bench/hot_table.sh: results.tsv (MODE WRITERS LOADGEN-JSON CHECK-JSON per
run) as one table, the ratios measured in the same run, and the issue's targets with a
verdict each. Group commit rows say "not built" (issue 30 part 2)."""
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
    print(f"{'writers':>7} {'mode':10} {'commits/s':>10} {'p50 ms':>8} {'p99 ms':>8} {'409 rate':>9} {'rebased':>8} {'errors':>7} {'lost':>5} {'dup':>4} {'extra':>6}")
    for w in order:
        for mode in ("strict", "rebase", "group", "fixture", "sql_strict", "sql_rebase"):
            if (mode, w) not in runs:
                continue
            o, c = runs[(mode, w)]
            if mode == "group":
                print(f"{w:>7} {'rebase+group':10} {'not built (issue 30 part 2)':>40}")
                continue
            print(f"{w:>7} {mode:10} {o['commits_per_s']:10.1f} {o['p50_ms']:8.1f} {o['p99_ms']:8.1f} "
                  f"{o['conflict_rate']*100:8.1f}% {o['rebased']:8} {o['errors']:7} {c['lost']:5} {c['dup']:4} {c['extra']:6}")
    for mode in ("py_strict", "py_rebase"):
        for (m, w), (o, _) in runs.items():
            if m == mode:
                print(f"{w:>7} {mode:10} {o['commits_per_s']:10.2f} {o['p50_ms']:8.1f} {o['p99_ms']:8.1f} "
                      f"{o['conflict_rate']*100:8.1f}% {'':>8} {o['failures']:7} {o['lost']:5} {o['dup']:4} {o['extra']:6}"
                      "   (errors column: appends failed after pyiceberg's retries)")
    print()
    print("ratios (same run) and the issue's targets")
    bad = 0
    for w in order:
        s, r, f = runs.get(("strict", w)), runs.get(("rebase", w)), runs.get(("fixture", w))
        if not (s and r):
            continue
        rs, rr = s[0]["commits_per_s"], r[0]["commits_per_s"]
        line = f"  {w:>3} writers: rebase/strict {rr / rs if rs else float('inf'):6.2f}x"
        if f:
            rf = f[0]["commits_per_s"]
            line += f"   rebase/fixture {rr / rf if rf else float('inf'):6.2f}x"
        qs, qr = runs.get(("sql_strict", w)), runs.get(("sql_rebase", w))
        if qs and qr:
            a, b = qs[0]["commits_per_s"], qr[0]["commits_per_s"]
            line += f"   SQL rebase/strict {b / a if a else float('inf'):6.2f}x"
        print(line)
        lost = sum(x[1].get(k, 0) for x in (s, r, f, qs, qr) if x for k in ("lost", "dup", "extra"))
        if lost:
            print(f"      LOST/DUPLICATED/EXTRA appends at {w} writers: {lost}")
            bad += 1
        if w == max(order):
            targets = [("rebase >= 10x strict commits/s", rs > 0 and rr / rs >= 10),
                       ("409 rate < 1% (rebase)", r[0]["conflict_rate"] < 0.01),
                       ("p99 < 100 ms (rebase)", r[0]["p99_ms"] < 100)]
            if f:
                targets.insert(1, ("rebase >= 20x fixture commits/s",
                                   f[0]["commits_per_s"] > 0 and rr / f[0]["commits_per_s"] >= 20))
            for what, ok in targets:
                print(f"      target at {w} writers: {what}: {'met' if ok else 'NOT met'}")
    ps, pr = runs.get(("py_strict", max([w for (m, w) in runs if m == "py_strict"], default=0))), None
    for (m, w), v in runs.items():
        if m == "py_rebase":
            pr = v
    if ps and pr:
        a, b = ps[0]["commits_per_s"], pr[0]["commits_per_s"]
        print(f"  pyiceberg: rebase/strict {b / a if a else float('inf'):.2f}x "
              f"(target >= 2x: {'met' if a and b / a >= 2 else 'NOT met'}), 409 rate {pr[0]['conflict_rate']*100:.1f}% "
              f"(target < 1%: {'met' if pr[0]['conflict_rate'] < 0.01 else 'NOT met'})")
        if any(pr[0][k] or ps[0][k] for k in ("lost", "dup", "extra")):
            print("      LOST/DUPLICATED/EXTRA pyiceberg rows")
            bad += 1
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
