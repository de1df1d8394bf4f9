"""Copy the table fixtures of data/ to a test run's own directory.

Usage: fixtures.py DATA_DIR DEST

The fixtures record the absolute paths of the runs that generated them:
/tmp/skade-fixtures/avro/... (test/data/avro/warehouse), /tmp/skade-fixtures/java/...
(test/data/clients/java/warehouse) and /tmp/skade-fixture-py/... (test/data/clients/
python/warehouse).  They are copied to DEST/avro, DEST/java and DEST/p with
every recorded path rewritten to its new place: metadata JSON as text, Avro
manifest lists and manifests decoded and re-encoded with the same schema,
header and codec (test/fuzz/fuzzlib/seeds.py), other files as they are (text
files with their paths rewritten).  DEST should be exactly as long as
/tmp/skade-fixtures, so that every rewritten path keeps its length and the
tests' expected output, column widths included, stays the same.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "fuzz"))
from fuzzlib.seeds import _rehome_table_dir, _rewrite_text  # noqa: E402

GROUPS = [  # (recorded prefix, directory under data/, directory under DEST)
    ("/tmp/skade-fixtures/avro/", "avro/warehouse", "avro"),
    ("/tmp/skade-fixtures/java/", "clients/java/warehouse", "java"),
    ("/tmp/skade-fixture-py/", "clients/python/warehouse", "p"),
]


def copy_group(src: Path, dst: Path, mapping) -> int:
    tables = sorted({m.parent for m in src.rglob("metadata") if m.is_dir()})
    for t in tables:
        _rehome_table_dir(t, dst / t.relative_to(src), mapping)
    for f in sorted(src.rglob("*")):
        if not f.is_file() or any(t in f.parents and f.parent.name == "metadata" for t in tables):
            continue
        out = dst / f.relative_to(src)
        out.parent.mkdir(parents=True, exist_ok=True)
        b = f.read_bytes()
        if f.suffix in (".tsv", ".json", ".txt", ".csv"):
            b = _rewrite_text(b, mapping)
        out.write_bytes(b)
    return len(tables)


def main() -> None:
    data, dest = Path(sys.argv[1]), Path(sys.argv[2])
    mapping = [(old, f"{dest}/{sub}/") for old, _, sub in GROUPS]
    n = 0
    for _, rel, sub in GROUPS:
        n += copy_group(data / rel, dest / sub, mapping)
    print(f"fixtures.py: {n} tables re-homed under {dest}")


if __name__ == "__main__":
    main()
