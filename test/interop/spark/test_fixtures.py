"""Tables written by other clients — the committed fixtures of the stock Java
JdbcCatalog (test/data/clients/java) and of pyiceberg (test/data/clients/python),
copies re-homed by run.sh — registered in skade and read by Spark: the
recorded rows and snapshots.  Then Spark appends, skade expires all but the
last two snapshots and rewrites the manifests, and Spark reads the same rows
as before (now and at the retained snapshots), the expired snapshots are gone,
the files skade reports unreferenced are, and Spark appends on top."""

import csv
import json
import os
from pathlib import Path

import pytest

from sparkenv import SparkTable, check_unreferenced, dict_rows

JAVA = Path(os.environ["SKADE_JAVA_FIXTURES"])
PY = Path(os.environ["SKADE_PY_FIXTURES"])


def java_tables() -> list[dict]:
    with open(JAVA / "tables.tsv") as f:
        return [{"client": "java", "name": r["table"].split(".")[-1],
                 "metadata": str(JAVA / r["metadata_location"]), "snapshots": int(r["snapshots"]),
                 "rows": int(r["rows"]), "current": int(r["current_snapshot_id"])}
                for r in csv.DictReader(f, delimiter="\t")]


def py_tables() -> list[dict]:
    index = json.loads((PY / "fixtures.json").read_text())
    return [{"client": "py", "name": i["table"].split(".")[-1], "metadata": i["current_metadata_location"],
             "snapshots": len(i["snapshots"]), "rows": len(i["current_rows"]),
             "current": i["current_snapshot_id"], "info": i}
            for i in index["tables"]]


TABLES = java_tables() + py_tables()


@pytest.mark.parametrize("fx", TABLES, ids=[f"{t['client']}-{t['name']}" for t in TABLES])
def test_spark_reads_client_tables_after_skade_maintenance(spark, skade, fx):
    ns = f"{fx['client']}fx"
    if not skade.one("SELECT skade.namespace_exists(%s, catalog => 'spark_cat')", (ns,)):
        skade.create_namespace(ns)
    skade.register(ns, fx["name"], fx["metadata"])
    t = SparkTable(spark, ns, fx["name"])

    # as the writing client recorded it
    assert len(t.rows()) == fx["rows"]
    assert t.current_snapshot_id() == fx["current"]
    assert len(t.snapshot_ids()) == fx["snapshots"]
    if "info" in fx:
        info = fx["info"]
        assert dict_rows(spark, f"SELECT * FROM {t.ident}") == info["current_rows"]
        for s in info["snapshots"]:
            assert dict_rows(spark, f"SELECT * FROM {t.ident} VERSION AS OF {s['snapshot_id']}") == s["rows"], s

    # two Spark appends on top: at least three snapshots and two manifests each
    top = max(r[0] for r in t.rows())
    low = min(r[0] for r in t.rows())
    t.insert_like(top + 1, low)
    t.insert_like(top + 2, low)
    ids = t.snapshot_ids()
    at = t.history_by_snapshot()
    current = t.rows()
    files = t.data_files()
    partitions = t.partitions()
    gz = fx["metadata"].endswith(".gz.metadata.json")

    lists = {s["snapshot_id"]: s["manifest_list"] for s in t.snapshots()}
    referenced = t.referenced_files()
    gone = skade.expire(ns, fx["name"], retain_last=2)
    assert t.snapshot_ids() == ids[-2:]
    assert {f for f, k in gone if k == "manifest-list"} == {lists[sid] for sid in ids[:-2]}
    check_unreferenced(t, referenced, gone)
    if "info" in fx and any(s["operation"] != "append" for s in fx["info"]["snapshots"]):
        # pyiceberg's overwrite and delete removed data files: unreferenced now
        assert {k for _, k in gone} >= {"manifest-list", "manifest", "data"}, gone
    assert skade.metadata_location(ns, fx["name"]).endswith(".gz.metadata.json" if gz else ".metadata.json")
    assert t.rows() == current
    for sid in ids[-2:]:
        assert t.rows_at(sid) == at[sid]
    for sid in ids[:-2]:
        with pytest.raises(Exception, match=str(sid)):
            t.rows_at(sid)

    before = len(t.manifests())
    r = skade.rewrite_manifests(ns, fx["name"])
    assert r["manifests_replaced"] >= 2 and r["manifests_created"] >= 1
    assert len(t.manifests()) == before - r["manifests_replaced"] + r["manifests_created"]
    assert t.snapshots()[-1]["operation"] == "replace"
    assert t.rows() == current
    for sid in ids[-2:]:
        assert t.rows_at(sid) == at[sid]
    assert t.data_files() == files == skade.files(ns, fx["name"])
    assert t.partitions() == partitions

    t.insert_like(top + 3, low)
    assert [r[0] for r in t.rows()] == sorted([r[0] for r in current] + [top + 3])
