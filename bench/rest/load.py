#!/usr/bin/env python3
"""Helpers of bench/rest_load.sh (the issue 14 Load benchmark); Python standard library only.

    python3 load.py sample POSTMASTER_PID INTERVAL WAREHOUSE OUT.tsv
        every INTERVAL seconds until killed (sample-once POSTMASTER_PID SECONDS WAREHOUSE OUT.tsv:
        one sample appended, at SECONDS), one line per REST worker (the postmaster's
        children whose process title is "postgres: skade rest worker N"): seconds since start,
        pid, worker, Rss, RssAnon, RssShmem (/proc/PID/status), Pss (/proc/PID/smaps_rollup),
        private (Private_Clean + Private_Dirty of its private mappings, /proc/PID/smaps), and the
        largest *.metadata.json under WAREHOUSE, all kB
    python3 load.py report RESULT.json ACKED LOCATIONS.tsv SAMPLES.tsv CONFIG.json
        the report: requests by kind, errors by status, commits/s, p50/p99, lost updates
        (acknowledged commits missing from their table's parent chain), the workers' memory
        over time with a verdict; exits 1 if anything must not be (an error other than 409, a
        lost update, a worker that restarted or grew)

ACKED holds "TABLE SNAPSHOT-ID ok|unknown" per commit loadgen saw acknowledged (ok) or whose
outcome an error left open (unknown); LOCATIONS.tsv "TABLE<TAB>METADATA-LOCATION<TAB>INITIAL
METADATA-LOCATION" (after the run, and as registered before it).
"""
import gzip
import json
import os
import re
import sys
import time


# ------------------------------------------------------------------- sample

def proc_kv(path):
    out = {}
    try:
        with open(path) as f:
            for line in f:
                k, _, v = line.partition(":")
                v = v.split()
                if v and v[0].isdigit():
                    out[k.strip()] = int(v[0])
    except OSError:
        pass
    return out


def rest_workers(postmaster):
    """(pid, title) of the postmaster's children that are REST workers"""
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            if ppid != postmaster:
                continue
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                title = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except (OSError, ValueError, IndexError):
            continue
        if "skade rest worker" in title:
            out.append((int(pid), title))
    return sorted(out, key=lambda x: x[1])


def private_kb(pid):
    """Private_Clean + Private_Dirty of the process's private mappings (/proc/PID/smaps): its heap,
    stacks and the pages of its libraries it wrote. Shared mappings (PostgreSQL's shared memory,
    where skade's caches live) are left out: smaps counts a shared page only this process has
    touched as "private" too, so smaps_rollup's Private_* grows as the caches fill."""
    total, shared = 0, False
    try:
        with open(f"/proc/{pid}/smaps") as f:
            for line in f:
                head = line.split(None, 2)
                if not head:
                    continue
                if "-" in head[0] and len(head) > 1 and len(head[1]) == 4:  # a mapping's header
                    shared = head[1][3] == "s"
                elif not shared and head[0] in ("Private_Clean:", "Private_Dirty:"):
                    total += int(head[1])
    except OSError:
        return 0
    return total


def largest_metadata_kb(warehouse):
    big = 0
    for d, _, files in os.walk(warehouse):
        for f in files:
            if f.endswith(".metadata.json"):
                try:
                    big = max(big, os.stat(os.path.join(d, f)).st_size)
                except OSError:
                    pass
    return big // 1024


def sample_once(postmaster, t, warehouse, out):
    meta = largest_metadata_kb(warehouse)
    for pid, title in rest_workers(int(postmaster)):
        st = proc_kv(f"/proc/{pid}/status")
        sm = proc_kv(f"/proc/{pid}/smaps_rollup")
        if not st:
            continue
        m = re.search(r"skade rest worker (\d+)", title)
        print(f"{t:.1f}\t{pid}\t{m.group(1) if m else title}\t{st.get('VmRSS', 0)}\t{st.get('RssAnon', 0)}\t"
              f"{st.get('RssShmem', 0)}\t{sm.get('Pss', 0)}\t{private_kb(pid)}\t{meta}", file=out, flush=True)


def sample(postmaster, interval, warehouse, out_path):
    t0 = time.monotonic()
    with open(out_path, "w") as out:
        while True:
            sample_once(postmaster, time.monotonic() - t0, warehouse, out)
            # sleep to the next multiple of the interval
            time.sleep(max(0.0, interval - ((time.monotonic() - t0) % interval)))


# ------------------------------------------------------------------- report

def read_metadata(loc):
    path = loc
    for pre in ("file://", "file:"):
        if path.startswith(pre):
            path = path[len(pre):]
            break
    with open(path, "rb") as f:
        raw = f.read()
    size = len(raw)
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw), size


def parent_chain(md):
    """the snapshot ids from the current one back through parent-snapshot-id, and the parents"""
    parent = {s["snapshot-id"]: s.get("parent-snapshot-id") for s in md.get("snapshots", [])}
    chain, sid, seen = [], md.get("current-snapshot-id"), set()
    while sid is not None and sid != -1 and sid in parent and sid not in seen:
        chain.append(sid)
        seen.add(sid)
        sid = parent[sid]
    return chain, parent


def chain_check(acked_path, locations_path):
    """per table: acknowledged commits, the parent chain of the current snapshot, lost updates
    (acknowledged, not in the chain), unexpected snapshots (in the chain past the initial ones,
    never acknowledged nor left open: e.g. a commit answered 409 that was applied anyway),
    orphans (in the file, not in the chain)"""
    ok, unknown = {}, {}
    with open(acked_path) as f:
        for line in f:
            t, sid, how = line.split()
            (ok if how == "ok" else unknown).setdefault(t, set()).add(int(sid))
    rows = []
    with open(locations_path) as f:
        for line in f:
            table, loc, initial_loc = line.rstrip("\n").split("\t")
            md, size = read_metadata(loc)
            chain, parent = parent_chain(md)
            initial = parent_chain(read_metadata(initial_loc)[0])[0]
            chain_set = set(chain)
            acked = ok.get(table, set())
            open_ = unknown.get(table, set())
            # the chain's snapshots past the initial ones (which must end it, in their order)
            added = chain[: max(0, len(chain) - len(initial))]
            rows.append({
                "table": table, "acked": len(acked), "open": len(open_),
                "open_applied": len(open_ & chain_set), "chain": len(chain), "snapshots": len(parent),
                "lost": sorted(acked - chain_set), "unexpected": sorted(set(added) - acked - open_),
                "orphans": len(parent) - len(chain), "initial_kept": chain[len(added):] == initial,
                "bytes": size,
            })
    return rows


def pct_str(x):
    return f"{100 * x:.1f}%"


def fnum(v, digits=1):
    if v is None:
        return "-"
    return f"{v:,.{digits}f}"


def read_samples(path):
    by_worker = {}
    with open(path) as f:
        for line in f:
            p = line.rstrip("\n").split("\t")
            if len(p) != 9:
                continue
            t, pid, w = float(p[0]), int(p[1]), p[2]
            rss, anon, shmem, pss, private, meta = map(int, p[3:])
            by_worker.setdefault(w, []).append({"t": t, "pid": pid, "rss": rss, "anon": anon, "shmem": shmem,
                                                "pss": pss, "private": private, "meta": meta})
    return by_worker


def slope_kb_per_min(xs):
    """least-squares slope of (t, anon) in kB per minute"""
    if len(xs) < 2:
        return 0.0
    n = len(xs)
    mt = sum(x["t"] for x in xs) / n
    ma = sum(x["anon"] for x in xs) / n
    den = sum((x["t"] - mt) ** 2 for x in xs)
    return 60 * sum((x["t"] - mt) * (x["anon"] - ma) for x in xs) / den if den else 0.0


def report(result_path, acked_path, locations_path, samples_path, cfg_path):
    res = json.load(open(result_path))
    cfg = json.load(open(cfg_path))
    bad = []
    secs = res["elapsed_s"]
    kinds = res["kinds"]

    print(f"\nLoad: {res['clients']} clients for {secs:.0f} s against skade's REST port "
          f"(skade.rest_workers = {cfg['workers']}); tables {cfg['tables']}; mix {cfg['mix']}")
    print("kinds: all = loadTable snapshots=all; refs = snapshots=refs; inm = snapshots=all with If-None-Match "
          "(the client's last ETag of the table: 304 if unchanged); commit = append with "
          "assert-ref-snapshot-id (latency from the first attempt to success, reloads included); "
          "attempt = one commit POST; reload = refs reload before a commit and after each 409")
    print(f"| {'kind':<8} | {'requests':>9} | {'req/s':>8} | {'p50 ms':>8} | {'p99 ms':>8} | {'max ms':>8} | "
          f"{'avg bytes':>10} | statuses")
    print(f"|{'-' * 10}|{'-' * 11}|{'-' * 10}|{'-' * 10}|{'-' * 10}|{'-' * 10}|{'-' * 12}|{'-' * 24}")
    total = 0
    for k in ("all", "refs", "inm", "commit", "reload"):
        d = kinds.get(k)
        if not d:
            continue
        sts = ", ".join(f"{s}: {n:,}" for s, n in sorted(d["statuses"].items()))
        reqs = sum(d["statuses"].values())
        total += reqs
        n = d["n"]
        print(f"| {k:<8} | {reqs:>9,} | {reqs / secs:>8.1f} | {fnum(d['p50_ms'], 2):>8} | {fnum(d['p99_ms'], 2):>8} | "
              f"{fnum(d['max_ms'], 1):>8} | {fnum(d.get('bytes'), 0) if n else '-':>10} | {sts}")
        if k == "commit":
            print(f"| {'attempt':<8} | {res['attempts']:>9,} | {res['attempts'] / secs:>8.1f} | "
                  f"{fnum(res['attempt_p50_ms'], 2):>8} | {fnum(res['attempt_p99_ms'], 2):>8} | {'':>8} | {'':>10} | "
                  f"(one POST each)")
    print(f"| {'total':<8} | {total:>9,} | {total / secs:>8.1f} |")
    inm = kinds.get("inm", {}).get("statuses", {})
    if inm:
        print(f"If-None-Match answered 304 for {pct_str(inm.get('304', 0) / max(1, sum(inm.values())))} "
              f"(200 when the table moved since the client's last full load)")
    att = res["attempts"]
    print(f"commits: {res['commits']:,} acknowledged, {res['commits_per_s']:.1f} commits/s; {att:,} attempts, "
          f"409 rate {pct_str(res['conflicts'] / max(1, att))}, {att / max(1, res['commits']):.2f} attempts per "
          f"success; {res['abandoned']} given up (time up or retries exhausted); per table: "
          + ", ".join(f"{t} {n:,}" for t, n in sorted(res["per_table"].items())))

    # errors: any status but 200 (304 for inm, 409 for commits), and transport errors
    errs = res.get("errors") or {}
    n_err = sum(errs.values())
    print()
    if n_err:
        bad.append(f"{n_err} errors other than 409")
        print(f"ERRORS other than 409: {n_err} (" + ", ".join(f"{s}: {n}" for s, n in sorted(errs.items())) + ")")
        for e in res.get("first_errors") or []:
            print(f"  {e}")
        print("verdict: FAIL (errors other than 409)")
    else:
        print("errors other than 409: none -> verdict: OK")

    # lost updates
    rows = chain_check(acked_path, locations_path)
    print("\nLost updates (the parent chain of each table's current snapshot, read from its metadata file "
          "after the run)")
    print(f"| {'table':<8} | {'acked':>7} | {'open':>5} | {'open, applied':>13} | {'chain':>7} | {'snapshots':>9} | "
          f"{'lost':>5} | {'unexpected':>10} | {'orphans':>7} | {'metadata bytes':>14}")
    print(f"|{'-' * 10}|{'-' * 9}|{'-' * 7}|{'-' * 15}|{'-' * 9}|{'-' * 11}|{'-' * 7}|{'-' * 12}|{'-' * 9}|{'-' * 16}")
    lost = unexpected = 0
    for r in rows:
        lost += len(r["lost"])
        unexpected += len(r["unexpected"])
        print(f"| {r['table']:<8} | {r['acked']:>7,} | {r['open']:>5} | {r['open_applied']:>13} | {r['chain']:>7,} | "
              f"{r['snapshots']:>9,} | {len(r['lost']):>5} | {len(r['unexpected']):>10} | {r['orphans']:>7} | "
              f"{r['bytes']:>14,}")
        if r["lost"]:
            bad.append(f"{r['table']}: {len(r['lost'])} lost updates, e.g. {r['lost'][:3]}")
        if r["unexpected"]:
            bad.append(f"{r['table']}: {len(r['unexpected'])} snapshots in the chain no client saw acknowledged, "
                       f"e.g. {r['unexpected'][:3]}")
        if r["orphans"] or not r["initial_kept"]:
            bad.append(f"{r['table']}: {r['orphans']} orphans, initial snapshots "
                       f"{'kept' if r['initial_kept'] else 'NOT kept'}")
    acked_total = sum(r["acked"] for r in rows)
    if acked_total != res["commits"]:
        bad.append(f"the acknowledged-commit file holds {acked_total}, loadgen counted {res['commits']}")
    print(f"lost updates: {lost} of {acked_total:,} acknowledged commits; unexpected snapshots: {unexpected} -> "
          f"verdict: {'OK' if lost == 0 and unexpected == 0 else 'FAIL'}")

    # memory
    warm, tol_pct, tol_kb, factor = cfg["warmup"], cfg["tol_pct"], cfg["tol_kb"], cfg["meta_factor"]
    by_worker = read_samples(samples_path)
    print(f"\nREST workers' memory, kB, sampled every {cfg['interval']} s (RssAnon: private anonymous memory; "
          f"private: Private_Clean + Private_Dirty of its private mappings in smaps; Rss, Pss and RssShmem "
          f"include the shared memory the worker touched: skade's caches, PostgreSQL's buffers; metadata: the "
          f"largest metadata file in the warehouse then)")
    if not by_worker:
        bad.append("no memory samples")
        print("no samples")
    for w, xs in sorted(by_worker.items()):
        pids = sorted({x["pid"] for x in xs})
        print(f"worker {w} (pid{'s' if len(pids) > 1 else ''} {', '.join(map(str, pids))})")
        print(f"| {'t s':>6} | {'RssAnon':>9} | {'private':>9} | {'Pss':>9} | {'Rss':>9} | {'RssShmem':>9} | "
              f"{'metadata':>9} |")
        for x in xs:
            note = " after the load" if x["t"] > secs + 1 else (" warm-up" if x["t"] < warm else "")
            print(f"| {x['t']:>6.0f} | {x['anon']:>9,} | {x['private']:>9,} | {x['pss']:>9,} | {x['rss']:>9,} | "
                  f"{x['shmem']:>9,} | {x['meta']:>9,} |{note}")
        if len(pids) > 1:
            bad.append(f"worker {w} restarted during the run (pids {pids}): see the server log")
        after = [x for x in xs if x["t"] >= warm]
        if len(after) < 2:
            print(f"  too few samples after the warm-up ({warm} s) for a verdict")
            continue
        base, last = after[0], after[-1]
        meta_grow = max(0, last["meta"] - base["meta"])
        verdicts = []
        for key, label in (("anon", "RssAnon"), ("private", "private")):
            grow = last[key] - base[key]
            tol = max(tol_kb, base[key] * tol_pct / 100) + factor * meta_grow
            ok = grow <= tol
            verdicts.append(ok)
            print(f"  {label}: {base[key]:,} kB at {base['t']:.0f} s (the first sample after the {warm} s warm-up) -> "
                  f"{last[key]:,} kB at {last['t']:.0f} s: {grow:+,} kB; peak {max(x[key] for x in after):,} kB; "
                  f"tolerance +{tol:,.0f} kB -> {'flat' if ok else 'GROWS'}")
        reqs = total * (min(last["t"], secs) - base["t"]) / secs  # about, at the average rate
        print(f"  tolerance = max({tol_kb:,} kB, {tol_pct}%) + {factor} x the largest metadata file's growth meanwhile "
              f"({base['meta']:,} -> {last['meta']:,} kB)")
        print(f"  RssAnon slope after the warm-up: {slope_kb_per_min(after):+,.0f} kB/min; "
              f"{(last['anon'] - base['anon']) * 1024 / max(1.0, reqs):+,.1f} bytes per request served by all "
              f"workers meanwhile (about {reqs:,.0f})")
        if not all(verdicts):
            bad.append(f"worker {w}'s memory grows")
    if by_worker:
        print(f"memory verdict: {'flat' if not any('memory grows' in b for b in bad) else 'GROWS'}")

    print()
    if bad:
        print("FAIL:")
        for b in bad:
            print(f"  {b}")
        return 1
    print("OK: no error other than 409, no lost update, every worker's memory flat")
    return 0


def main():
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "sample":
        sample(sys.argv[2], float(sys.argv[3]), sys.argv[4], sys.argv[5])
    elif cmd == "sample-once":
        with open(sys.argv[5], "a") as out:
            sample_once(sys.argv[2], float(sys.argv[3]), sys.argv[4], out)
    elif cmd == "report":
        sys.exit(report(*sys.argv[2:7]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
