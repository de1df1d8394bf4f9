"""The leak probe: each reading function called many times with the same
good input on one connection; the backend's RssAnon must not keep growing.

The fuzz targets measure RSS drift per connection window too, but their
inputs vary (and glibc keeps freed memory), so their drift is a hint; this
probe is the check: after a warm-up, `calls` identical calls, twice, and a
finding when both halves grew by more than `limit_kb` per call.
"""

from __future__ import annotations

from .harness import Case, Harness, read_status

NS = "fz_probe"


def probe_calls(h: Harness, meta: str, meta2: str) -> list:
    t = (NS, "t")
    eq = '{"type":"and","left":{"type":"eq","term":"category","value":"a"},"right":{"type":"gt","term":"id","value":1}}'
    return [
        ("manifests", "SELECT * FROM skade.manifests(%s, %s)", t),
        ("files", "SELECT * FROM skade.files(%s, %s)", t),
        ("plan_files", "SELECT * FROM skade.plan_files(%s, %s, 'true')", t),
        ("plan_files", "SELECT * FROM skade.plan_files(%s, %s, %s::jsonb)", t + (eq,)),
        ("load_table", "SELECT length(metadata::text) FROM skade.load_table(%s, %s)", t),
        ("load_table", "SELECT length(metadata::text) FROM skade.load_table(%s, %s, snapshots => 'refs')", t),
        ("table_metadata", "SELECT length(skade.table_metadata(%s, %s)::text)", t),
        ("snapshots", "SELECT * FROM skade.snapshots(%s, %s)", t),
        ("refs", "SELECT * FROM skade.refs(%s, %s)", t),
        ("history", "SELECT * FROM skade.history(%s, %s)", t),
        ("load_table_as_of", "SELECT snapshot_id FROM skade.load_table_as_of(%s, %s, now())", t),
        ("list_tables", "SELECT * FROM skade.list_tables(%s)", (NS,)),
        ("namespace_properties", "SELECT skade.namespace_properties(%s)", (NS,)),
        ("commit_table", "SELECT skade.commit_table(%s, %s, %s, %s)",     # there and back
         lambda i: t + ((meta, meta2) if i % 2 == 0 else (meta2, meta))),
        ("commit_transaction", "SELECT * FROM skade.commit_transaction(%s::jsonb)",
         (f'[{{"namespace":"{NS}","name":"t","expected_location":"{meta}","new_location":"{meta}"}}]',)),
        ("commit_error", "SELECT skade.commit_table(%s, %s, 'nope', %s)", t + (meta,)),
        ("plan_files_error", "SELECT * FROM skade.plan_files(%s, %s, '{\"type\":\"eq\",\"term\":\"nope\",\"value\":1}')", t),
    ]


def run(h: Harness, meta: str, meta2: str, calls: int = 300, warmup: int = 50, limit_kb: float = 2.0) -> dict:
    """{label: kB per call}; a memory finding for each function that leaks"""
    h.sql("SELECT skade.create_namespace(%s)", (NS,))
    h.sql("SELECT skade.register_table(%s, 't', %s)", (NS, meta))
    out = {}
    for func, query, params in probe_calls(h, meta, meta2):
        label = func
        while label in out:
            label += "'"
        h.drop_session("leakprobe")
        case = Case("leakprobe", files=[meta], ops=["leak_probe"],
                    setup=[("SELECT skade.create_namespace(%s)", (NS,)),
                           ("SELECT skade.register_table(%s, 't', %s)", (NS, meta))])
        growth = []
        for phase in range(3):
            s = h.session("leakprobe")
            before = read_status(s.pid).get("RssAnon", 0)
            for i in range(warmup if phase == 0 else calls):
                h.run("leakprobe", func, query, params(i) if callable(params) else params, case,
                      writes=func.startswith("commit"))
            after = read_status(h.session("leakprobe").pid).get("RssAnon", 0)
            if phase:
                growth.append((after - before) / calls)
        per_call = min(growth)
        out[label] = per_call
        if per_call > limit_kb:
            h.finding("memory", "leakprobe", func, case, None,
                      f"backend RssAnon grows {per_call:.1f} kB per call of the same input "
                      f"({' then '.join(f'{g:.1f}' for g in growth)} kB/call over {calls} calls each)",
                      sig=("leak", query))
    h.drop_session("leakprobe")
    h.sql("SELECT skade.drop_table(%s, 't')", (NS,))
    h.sql("SELECT skade.drop_namespace(%s)", (NS,))
    h.fp = None
    return out
