#!/usr/bin/env python3
"""Two bench/report reports side by side: every metric both have, its value in each and
new/old, and its ratio to the same-run baseline in each (the ratio is what survives a noisy
machine: both sides of it were measured together).

    python3 bench/compare.py OLD.md NEW.md [--worse 1.15]

A metric is flagged "slower" when both its value and its ratio to the same-run baseline moved the
wrong way by more than --worse (default 15%): the value alone moves with the machine's load, the
ratio alone with its baseline's (a JVM, a fixture) noise.  Which way is wrong: for times (ms, ns,
s) higher, for rates (.../s) lower; a ratio labelled skade/x moves with the value, x/skade against
it.  Exit status 0.
"""
import re
import sys

NUM = re.compile(r"([-+]?[0-9][0-9,]*\.?[0-9]*)\s*([a-zA-Z/%µ]*)")


def parse(path):
    """{(benchmark, metric): (value text, value, unit, ratio, ratio label)}"""
    out, bench = {}, None
    for line in open(path, encoding="utf-8"):
        m = re.match(r"^## (\S+)", line)
        if m:
            bench = m.group(1)
            continue
        if not line.startswith("| ") or bench is None or line.startswith("| metric") or line.startswith("|---"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 5:
            continue
        metric, value, ratio = cells[0], cells[1], cells[4]
        v = NUM.match(value)
        r = re.match(r"([0-9.]+)x \(([^)]*)\)", ratio)
        out[(bench, metric)] = (value, float(v.group(1).replace(",", "")) if v else None,
                                v.group(2) if v else "", float(r.group(1)) if r else None,
                                r.group(2) if r else "")
    return out


def lower_is_better(unit, label):
    """times (ms, ns/key, ...) and sizes: lower is better; rates (.../s): higher is better"""
    if unit.endswith("/s"):
        return False
    return unit.split("/")[0] in ("ms", "s", "us", "µs", "ns", "MB", "kB", "B", "bytes")


def main(argv):
    worse = 1.15
    if "--worse" in argv:
        i = argv.index("--worse")
        worse = float(argv[i + 1])
        del argv[i:i + 2]
    old, new = parse(argv[1]), parse(argv[2])
    flagged = 0
    print(f"{'benchmark':18} {'metric':70} {'old':>14} {'new':>14} {'new/old':>8} "
          f"{'old ratio':>9} {'new ratio':>9}")
    for key in new:
        if key not in old:
            continue
        ov, onum, unit, orat, label = old[key]
        nv, nnum, _, nrat, _ = new[key]
        if onum is None or nnum is None:
            continue
        change = nnum / onum if onum else float("nan")
        flag = ""
        lower = lower_is_better(unit, label)
        value_worse = change > worse if lower else change < 1 / worse
        if orat and nrat and value_worse:
            moved = nrat / orat
            if label.startswith("skade/"):
                ratio_worse = moved > worse if lower else moved < 1 / worse
            elif "/skade" in label:
                ratio_worse = moved < 1 / worse
            else:
                ratio_worse = False
            if ratio_worse:
                flag = "  slower"
        flagged += bool(flag)
        print(f"{key[0]:18} {key[1][:70]:70} {ov:>14} {nv:>14} {change:8.2f} "
              f"{(f'{orat:.2f}x' if orat else ''):>9} {(f'{nrat:.2f}x' if nrat else ''):>9}{flag}")
    print(f"compare: {sum(1 for k in new if k in old)} metrics in both, {flagged} slower by more than "
          f"{(worse - 1) * 100:.0f}% in value and against their same-run baseline")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
