#!/usr/bin/env python3
"""The layout of src/: the dependency rule of src/README.md, checked and measured.

    test/layout/layout.py check   every #include of a skade header names its folder
                                  ("io/file_access.h") and no folder includes one above it
                                  (exit status 1 and one line per offending #include)
    test/layout/layout.py selftest  the check fails on a copy of src/ given an #include running up,
                                  one not naming its folder, and a folder not in the layers
    test/layout/layout.py stats   files and lines per folder, circles (files that include each
                                  other in a loop, headers and sources of one name counted as one
                                  file), #includes running up, the longest files and functions

The order of the folders is read from src/README.md's line "Layers, lowest first: a < b < ...";
folders on one floor ("api | rest") may not include each other.  --map FILE (lines "name folder")
assigns folders to a flat tree, to measure a tree before it was split.
"""
import os
import re
import sys
from collections import defaultdict

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SRC = os.environ.get("SKADE_LAYOUT_SRC") or os.path.join(ROOT, "src")   # (another tree: the self-test)
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def floors():
    """folder -> floor number, from src/README.md"""
    with open(os.path.join(SRC, "README.md")) as f:
        for line in f:
            m = re.match(r"\s*Layers, lowest first:\s*(.+?)\s*$", line.replace("`", ""))
            if m:
                return {name.strip(): i for i, floor in enumerate(m.group(1).split("<"))
                        for name in floor.split("|")}
    sys.exit("src/README.md has no line 'Layers, lowest first: ...'")


def sources():
    """relative paths (to src/) of every .c and .h of skade"""
    out = []
    for d, dirs, files in os.walk(SRC):
        dirs[:] = sorted(x for x in dirs if not x.startswith("."))
        out += [os.path.relpath(os.path.join(d, f), SRC) for f in sorted(files) if f.endswith((".c", ".h"))]
    return out


def folder_of(rel, mapping):
    if mapping is not None:
        return mapping.get(module(rel), "?")
    d = os.path.dirname(rel)
    return d if d else module(rel)          # src/skade.c is a floor of its own


def module(rel):
    return os.path.splitext(os.path.basename(rel))[0]


def includes(rel):
    with open(os.path.join(SRC, rel), errors="replace") as f:
        return [(n, m.group(1)) for n, line in enumerate(f, 1) if (m := INCLUDE.match(line))]


def resolve(name, rel, files):
    """the skade file an #include names (as written, or beside the includer), or None (PostgreSQL's)"""
    for cand in (name, os.path.normpath(os.path.join(os.path.dirname(rel), name))):
        if cand in files:
            return cand
    return None


def check():
    order = floors()
    files = set(sources())
    bad = []
    for rel in sorted(files):
        mine = folder_of(rel, None)
        if mine not in order:
            bad.append(f"src/{rel}: folder {mine!r} is not in src/README.md's layers")
            continue
        for n, name in includes(rel):
            target = resolve(name, rel, files)
            if target is None:
                bare = [f for f in files if os.path.basename(f) == name and "/" not in name]
                if bare:
                    bad.append(f"src/{rel}:{n}: #include \"{name}\" must name the folder: \"{bare[0]}\"")
                continue
            theirs = folder_of(target, None)
            if "/" in target and name != target:
                bad.append(f"src/{rel}:{n}: #include \"{name}\" must name the folder: \"{target}\"")
            elif theirs != mine and order.get(theirs, -1) >= order[mine]:
                bad.append(f"src/{rel}:{n}: {mine} may not include {theirs} (\"{name}\"): "
                           f"it is not below {mine} in src/README.md")
    for line in bad:
        print(line)
    print(f"layout: {len(files)} files, {len(bad)} offending #include lines")
    return 1 if bad else 0


def selftest():
    """check() must pass on src/ and fail on each of three broken copies of it"""
    import shutil
    import subprocess
    import tempfile
    me = os.path.abspath(__file__)

    def run(tree):
        return subprocess.run([sys.executable, me, "check"], env=dict(os.environ, SKADE_LAYOUT_SRC=tree),
                              capture_output=True, text=True)
    breaks = {
        "an #include running up": ("util/names.c", '#include "cache/l0_cache.h"\n'),
        "an #include without its folder": ("io/file_access.c", '#include "guc.h"\n'),
        "a folder outside the layers": ("attic/x.c", '#include "util/guc.h"\n'),
    }
    ok = run(SRC).returncode == 0
    print(f"selftest: src/ as it is {'passes' if ok else 'FAILS'}")
    for what, (rel, line) in breaks.items():
        with tempfile.TemporaryDirectory() as d:
            tree = os.path.join(d, "src")
            shutil.copytree(SRC, tree, ignore=shutil.ignore_patterns("*.o", "*.bc"))
            os.makedirs(os.path.dirname(os.path.join(tree, rel)), exist_ok=True)
            with open(os.path.join(tree, rel), "a") as f:
                f.write(line)
            r = run(tree)
            caught = r.returncode == 1 and f"src/{rel}" in r.stdout
            print(f"selftest: {what} ({rel}) {'is refused' if caught else 'PASSES THE CHECK'}")
            ok = ok and caught
    return 0 if ok else 1


def graph(files):
    g = defaultdict(set)
    for rel in files:
        for _, name in includes(rel):
            t = resolve(name, rel, files) or next((f for f in files if f.endswith("/" + name) or f == name), None)
            if t and module(t) != module(rel):
                g[module(rel)].add(module(t))
    return g


def circles(g, nodes):
    """strongly connected components of more than one node (Tarjan)"""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in g.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return sorted(out, key=len, reverse=True)


def functions(rel):
    """(lines, name) of each function defined at the start of a line (the review's awk)"""
    out, name, start, body = [], None, 0, False
    with open(os.path.join(SRC, rel), errors="replace") as f:
        for n, line in enumerate(f, 1):
            m = re.match(r"^([A-Za-z_][A-Za-z0-9_]*)\(", line)
            if m and not body:
                name, start = m.group(1), n
            elif line.startswith("{") and name and not body:
                body = True
            elif line.startswith("}") and body:
                out.append((n - start + 1, f"src/{rel}:{start} {name}"))
                name, body = None, False
    return out


def stats(mapping):
    order = floors() if mapping is None else None
    files = sources()
    per = defaultdict(lambda: [0, 0])
    lines = {}
    for rel in files:
        with open(os.path.join(SRC, rel), errors="replace") as f:
            lines[rel] = sum(1 for _ in f)
        per[folder_of(rel, mapping)][0] += rel.endswith(".c")
        per[folder_of(rel, mapping)][1] += lines[rel]
    print("folder          .c files   lines")
    for name, (n, l) in sorted(per.items()):
        print(f"  {name:14} {n:8} {l:7}")
    g = graph(set(files))
    comps = circles(g, {module(f) for f in files})
    print(f"circles: {len(comps)}" + "".join(f"\n  {len(c)} files: {' '.join(c)}" for c in comps))
    if mapping is not None:
        try:
            order = floors()
        except SystemExit:
            order = None
    if order:
        where = {module(f): folder_of(f, mapping) for f in files}
        up = sorted(f"{a} ({where[a]}) -> {b} ({where[b]})" for a in g for b in g[a]
                    if where[a] != where[b] and order.get(where[b], -1) >= order.get(where[a], -1))
        print(f"#includes running up (or across a floor): {len(up)}" + "".join(f"\n  {u}" for u in up))
    print("files over 1,200 lines: " + (", ".join(f"src/{r} {lines[r]}" for r in sorted(lines, key=lines.get, reverse=True)
                                               if lines[r] > 1200) or "none"))
    fns = sorted((fn for rel in files if rel.endswith(".c") for fn in functions(rel)), reverse=True)
    print("longest functions:" + "".join(f"\n  {n:4} {where}" for n, where in fns[:8]))
    print(f"functions over 150 lines: {sum(1 for n, _ in fns if n > 150)}, over 100: {sum(1 for n, _ in fns if n > 100)}")
    return 0


def main(argv):
    mapping = None
    if "--map" in argv:
        i = argv.index("--map")
        with open(argv[i + 1]) as f:
            mapping = dict(line.split() for line in f if line.strip())
        del argv[i:i + 2]
    if argv[1:] == ["check"]:
        return check()
    if argv[1:] == ["selftest"]:
        return selftest()
    if argv[1:] == ["stats"]:
        return stats(mapping)
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
