#!/usr/bin/env python3
"""skade's mutational fuzzer: the driver.  Run it through run.sh, which
makes the throwaway server, scratch root and virtualenv this expects.

    fuzz.py --port P --scratch DIR --log FILE --out DIR [--seconds N]
            [--execs N] [--seed S] [--targets a,b] [--replay DIR ...]

Order of work: set up the fuzz role and helper functions, re-home the
fixtures into <scratch>/root/seeds, replay every regress case
(test/fuzz/regress/*, then --replay dirs), then run the targets until the
time or execution budget is spent (or SIGINT), then print the report.
Exit status: 0 if no finding, 1 if any, 2 on a harness failure.
"""

from __future__ import annotations

import argparse
import json
import random
import signal
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from fuzzlib import avro, leak, seeds as seedmod        # noqa: E402
from fuzzlib.harness import Case, Harness               # noqa: E402
from fuzzlib.targets import TARGETS                     # noqa: E402

# how often each target is picked (the file targets are where most bugs live)
WEIGHTS = {"metadata": 3, "avro": 3, "filter": 2, "commit": 2, "names": 2, "admin": 0.5}

SETUP_SQL = """
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'skade_fuzz') THEN
    CREATE ROLE skade_fuzz LOGIN;
  END IF;
END $$;
GRANT skade_writer TO skade_fuzz;
ALTER ROLE skade_fuzz SET statement_timeout = '%(timeout)ss';
ALTER ROLE skade_fuzz SET client_min_messages = error;
CREATE SCHEMA IF NOT EXISTS fuzz;
-- the catalog state a failed call must not change
CREATE OR REPLACE FUNCTION fuzz.fingerprint() RETURNS text LANGUAGE sql AS $f$
  SELECT concat_ws(' ',
    (SELECT md5(coalesce(string_agg(concat_ws('|', catalog_name, table_namespace, table_name,
                metadata_location, previous_metadata_location, iceberg_type), E'\\n'
                ORDER BY catalog_name, table_namespace, table_name), ''))
     FROM public.iceberg_tables),
    (SELECT md5(coalesce(string_agg(concat_ws('|', catalog_name, namespace, property_key,
                property_value), E'\\n' ORDER BY catalog_name, namespace, property_key), ''))
     FROM public.iceberg_namespace_properties),
    (SELECT coalesce(max(seq), 0) FROM skade.commit_log),
    (SELECT count(*) FROM skade.snapshot_map))
$f$;
-- tables whose L1 pointer-mirror answer differs from the heap
CREATE OR REPLACE FUNCTION fuzz.mirror_mismatches() RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
  r record;
  loc text;
  bad text := '';
BEGIN
  FOR r IN SELECT catalog_name, table_namespace, table_name, metadata_location
           FROM public.iceberg_tables
           WHERE coalesce(iceberg_type, 'TABLE') = 'TABLE' AND metadata_location IS NOT NULL
             AND table_namespace LIKE 'fz\\_%%' LOOP
    BEGIN
      SELECT l.metadata_location INTO loc
      FROM skade.load_table(r.table_namespace, r.table_name, 'none', r.catalog_name) l;
      IF loc IS DISTINCT FROM r.metadata_location THEN
        bad := bad || format('%%s.%%s: mirror %%s, heap %%s; ', r.table_namespace, r.table_name,
                             loc, r.metadata_location);
      END IF;
    EXCEPTION WHEN OTHERS THEN
      IF SQLSTATE LIKE 'XX%%' THEN
        bad := bad || format('%%s.%%s: %%s %%s; ', r.table_namespace, r.table_name, SQLSTATE, SQLERRM);
      END IF;
    END;
  END LOOP;
  RETURN bad;
END
$f$;
"""


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--scratch", required=True, help="scratch dir; <scratch>/root is the fuzz root")
    p.add_argument("--log", required=True, help="the server log")
    p.add_argument("--out", required=True, help="findings go to <out>/findings")
    p.add_argument("--data", default=str(HERE.parent / "data"))
    p.add_argument("--seconds", type=float, default=180, help="0: until interrupted")
    p.add_argument("--execs", type=int, default=0, help="stop after N executions (0: no limit)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--targets", default=",".join(TARGETS))
    p.add_argument("--replay", nargs="*", default=[], help="finding/regress dirs to replay")
    p.add_argument("--no-regress", action="store_true", help="skip test/fuzz/regress")
    p.add_argument("--replay-only", action="store_true")
    p.add_argument("--no-leak-probe", action="store_true", help="skip the leak probe")
    p.add_argument("--selftest", action="store_true",
                   help="only check that every detector fires (exit 0 if all do)")
    # a 21 MB jsonb literal of nested arrays takes PostgreSQL's own jsonb_in 2.3 GB
    # before skade is called: bigger statements would measure the server, not skade
    p.add_argument("--max-sql-mb", type=int, default=4, help="larger statements are not sent")
    p.add_argument("--statement-timeout", type=int, default=10)
    p.add_argument("--mem-limit-mb", type=int, default=256)
    p.add_argument("--leak-limit-mb", type=int, default=128)
    p.add_argument("--reconnect-every", type=int, default=2000)
    p.add_argument("--warmup-calls", type=int, default=50)
    p.add_argument("--allow-xx001", action="store_true",
                   help="XX001 from a file-reading function is no finding (skade before 22SK1)")
    p.add_argument("--save-per-signature", type=int, default=3)
    p.add_argument("--max-saved", type=int, default=200)
    return p.parse_args(argv)


# ------------------------------------------------------------------ replay

def rehome_files(d: Path, rels: list, old: str, new: str) -> None:
    """copy a case's files to the new root, paths inside rewritten: other
    files first, then manifest lists, whose manifest_length follow the new
    sizes of their manifests (recompressed blocks change size)"""
    deltas, lists = {}, []
    for rel in rels:
        src, dst = d / "files" / rel, Path(new) / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        b = src.read_bytes()
        if b.startswith(avro.MAGIC) and avro.rehome_list(b, old.encode(), new.encode(), {}) is not None:
            lists.append((src, dst))
            continue
        out = avro.rehome(b, old.encode(), new.encode())
        dst.write_bytes(out)
        deltas[str(dst)] = len(out) - len(b)
    for src, dst in lists:
        dst.write_bytes(avro.rehome_list(src.read_bytes(), old.encode(), new.encode(), deltas))


def replay(h: Harness, dirs, scratch: Path) -> int:
    """run saved cases (findings or regress fixtures) again; their files are
    re-homed from the root they were recorded at to a fresh root of the
    same length, so paths inside Avro strings keep their lengths"""
    n = 0
    for d in dirs:
        d = Path(d)
        if not (d / "case.json").is_file():
            print(f"replay {d}: no case.json; skipped")
            continue
        meta = json.loads((d / "case.json").read_text())
        old = meta["root"]
        pad = len(old) - len(str(scratch)) - 2
        if pad < 1:
            print(f"replay {d}: recorded root {old} is too short to re-home; skipped")
            continue
        n += 1
        new = f"{scratch}/r{n:0{pad}d}"
        rehome_files(d, meta["files"], old, new)
        role = meta.get("role") or "skade_fuzz"
        case = Case("regress", files=[f"{new}/{r}" for r in meta["files"]], ops=[f"replay:{d.name}"],
                    role=role)
        h.drop_session("regress")
        for s in meta["setup"]:
            h.run("regress", "setup", s.replace(old, new), None, Case("regress", ops=case.ops, role=role),
                  writes=True, role=role)
        h.run("regress", meta.get("func") or "call", meta["sql"].replace(old, new), None, case,
              writes=True, role=role)
        h.drop_session("regress")
        print(f"replayed {d}")
    # leave the catalog as the targets expect it
    h.sql("DELETE FROM public.iceberg_tables")
    h.sql("DELETE FROM public.iceberg_namespace_properties")
    h.fp = None
    return n


# ---------------------------------------------------------------- selftest

def selftest(h: Harness) -> bool:
    """each detector on a call made to trip it; True if all fired"""
    ok = True
    checks = [
        ("crash", "SELECT pg_terminate_backend(pg_backend_pid())", None, None),
        ("hang", f"SELECT pg_sleep({h.args.statement_timeout + 2})", None, None),
        ("internal", "DO $$ BEGIN RAISE EXCEPTION 'selftest' USING ERRCODE = 'XX000'; END $$", None, None),
        ("memory", "SELECT length(repeat('x', %s))", ((h.args.mem_limit_mb + 64) << 20,), None),
        ("state", "SELECT 1/0", None, "INSERT INTO public.iceberg_namespace_properties VALUES "
                                "('skade', 'fz_selftest', 'k', 'v')"),
    ]
    for kind, query, params, sneak in checks:
        before = h.findings[kind]
        if sneak:            # a change behind the harness's back, as a buggy failed call would make
            h.fp = h.fingerprint()
            h.sql(sneak, fetch=False)
        h.run("selftest", kind, query, params, None)
        fired = h.findings[kind] > before
        ok &= fired
        print(f"selftest {kind}: {'detected' if fired else 'NOT DETECTED'}")
    h.sql("DELETE FROM public.iceberg_namespace_properties WHERE namespace = 'fz_selftest'", fetch=False)
    return ok


# ------------------------------------------------------------------ report

def report(h: Harness, names, t0: float, interrupted: bool) -> bool:
    wall = time.monotonic() - t0
    total = sum(h.stats[n].execs for n in h.stats)
    print("\n==== skade fuzz report " + ("(interrupted) " if interrupted else "") + "=" * 40)
    print(f"seed {h.args.seed}, {wall:.0f} s, {total} executions, {total / max(wall, 1e-9):.0f}/s")
    if getattr(h, "leak_results", None):
        print("leak probe (RssAnon kB per call, same input): " +
              ", ".join(f"{k} {v:+.2f}" for k, v in h.leak_results.items()))
    for n in [x for x in ["regress", "leakprobe"] + names if x in h.stats]:
        st = h.stats[n]
        drift = st.drifts
        dtxt = (f"RSS drift {sum(drift) / len(drift):+.2f} kB/call (max {max(drift):+.2f}, {len(drift)} windows)"
                if drift else "RSS drift n/a (no full window)")
        print(f"\n[{n}] {st.execs} executions, {st.execs / max(wall, 1e-9):.0f}/s overall, "
              f"{st.execs / max(st.seconds, 1e-9):.0f}/s in calls; {dtxt}")
        hist = ", ".join(f"{k} {v}" for k, v in st.states.most_common())
        print(f"  SQLSTATEs: {hist}")
        if st.findings:
            print("  findings: " + ", ".join(f"{k} {v}" for k, v in st.findings.items()))
    if h.list_lines:
        print("\nsaved findings:")
        for line in h.list_lines:
            print("  " + line)
    if h.harness_errors:
        print(f"\nharness errors (fuzzer bugs, not findings): {h.harness_errors}")
    f = h.findings
    bad = sum(f.values()) > 0
    print(f"\nfuzz: {total} executions, {f['crash']} crashes, {f['hang']} hangs, "
          f"{f['internal']} internal errors, {f['memory']} memory, {f['state']} state; "
          f"{'FAIL' if bad else 'OK'}")
    return bad


# -------------------------------------------------------------------- main

class Tee:
    """stdout also into <out>/fuzz.log"""

    def __init__(self, path: Path):
        self.f = open(path, "a", buffering=1, errors="replace")
        self.out = sys.stdout

    def write(self, s):
        self.out.write(s)
        self.f.write(s)

    def flush(self):
        self.out.flush()
        self.f.flush()


def main(argv) -> int:
    args = parse_args(argv)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    sys.stdout = Tee(Path(args.out) / "fuzz.log")
    scratch = Path(args.scratch)
    root = scratch / "root"
    root.mkdir(parents=True, exist_ok=True)
    h = Harness(args, root, scratch)
    h.sql(SETUP_SQL % {"timeout": args.statement_timeout}, fetch=False)

    stop = {"now": False}

    def on_sigint(signum, frame):
        if stop["now"]:
            raise KeyboardInterrupt
        stop["now"] = True
        print("\ninterrupted: finishing the current call, then the report", flush=True)

    signal.signal(signal.SIGINT, on_sigint)
    signal.signal(signal.SIGTERM, on_sigint)
    t0 = time.monotonic()

    if args.selftest:
        return 0 if selftest(h) else 1
    regress = [] if args.no_regress or args.replay else sorted(p for p in (HERE / "regress").glob("*") if (p / "case.json").exists())
    if regress or args.replay:
        replay(h, regress + args.replay, scratch)
    names = [n for n in args.targets.split(",") if n]
    if args.replay_only:
        return 1 if report(h, [], t0, False) else 0

    seeds = seedmod.build(Path(args.data), root)
    print(f"seeds: {len(seeds.metadata_raw)} metadata files, {len(seeds.tables)} tables, "
          f"{len(seeds.avro)} Avro files (re-homed under {root}/seeds)", flush=True)
    targets = []
    for n in names:
        if n not in TARGETS:
            print(f"unknown target {n}; known: {', '.join(TARGETS)}")
            return 2
        t = TARGETS[n](h, seeds, random.Random(f"{args.seed}:{n}"))
        t.setup()
        targets.append(t)
    h.fp = None
    if not args.no_leak_probe:
        meta = next(t.metadata_path for t in seeds.tables if t.name == "avro/v2_deflate")
        meta2 = str(root / "seeds" / "metadata" / "00003-v2.metadata.json")
        h.leak_results = leak.run(h, meta, meta2)
    pick = random.Random(args.seed)
    deadline = time.monotonic() + args.seconds if args.seconds > 0 else float("inf")
    last = time.monotonic()
    try:
        while not stop["now"] and time.monotonic() < deadline:
            total = sum(h.stats[n].execs for n in names)
            if args.execs and total >= args.execs:
                break
            t = pick.choices(targets, weights=[WEIGHTS.get(x.name, 1) for x in targets])[0]
            try:
                t.step()
            except KeyboardInterrupt:
                raise
            except Exception:
                h.harness_errors += 1
                if h.harness_errors <= 20:
                    print(f"harness error in {t.name}:\n{traceback.format_exc()}", flush=True)
                h.reset_all()
                h.wait_for_server()
            if time.monotonic() - last > 30:
                last = time.monotonic()
                print(f"[{last - t0:6.0f}s] {total} executions "
                      f"({', '.join(f'{n} {h.stats[n].execs}' for n in names)}); "
                      f"findings {dict(h.findings) or 0}", flush=True)
    except KeyboardInterrupt:
        stop["now"] = True
    for n in list(h.sessions):
        h.end_window(n, h.sessions[n])
    bad = report(h, names, t0, stop["now"])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
