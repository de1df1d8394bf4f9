"""The Java-written fixture table (test/data/clients/java: `events`, three appends),
registered in skade as a table of its own whose metadata lives in this run's
warehouse (so the server may write next to it and remove its manifest lists);
its manifests and data stay in the fixture copy test/interop/run.sh made."""

import os
import re
import shutil

import pytest

CURRENT = "00004-c91ef392-1928-4306-bd9c-e5269c849709.metadata.json"


def register_java_events(skade, catalog, warehouse, ns: str) -> str:
    """Copy the fixture's metadata directory to <warehouse>/<ns>/java_events,
    point its location and manifest lists there, register it as
    <ns>.java_events in catalog py_cat; returns the registered location."""
    src = os.environ.get("SKADE_JAVA_FIXTURE_WAREHOUSE")
    if not src:
        pytest.skip("SKADE_JAVA_FIXTURE_WAREHOUSE is not set (test/interop/run.sh sets it)")
    src_meta = os.path.join(src, "fixtures", "events", "metadata")
    dst_dir = os.path.join(str(warehouse), ns, "java_events")
    dst_meta = os.path.join(dst_dir, "metadata")
    shutil.rmtree(dst_dir, ignore_errors=True)
    shutil.copytree(src_meta, dst_meta)
    os.chmod(dst_meta, 0o777)
    current = os.path.join(dst_meta, CURRENT)
    with open(current) as f:
        text = f.read().replace(src_meta, dst_meta)
    with open(current, "w") as f:
        f.write(re.sub(r'"location" *: *"[^"]*"', f'"location":"{dst_dir}"', text))
    catalog.create_namespace_if_not_exists(ns)
    skade.query("SELECT skade.register_table(%s, 'java_events', %s, 'py_cat')", (ns, current))
    return current


def all_rows(table, **scan) -> list[tuple]:
    """Every row a scan reads, as sorted tuples of its values."""
    return sorted(tuple(r.values()) for r in table.scan(**scan).to_arrow().to_pylist())
