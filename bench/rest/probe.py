#!/usr/bin/env python3
"""Reproduction aid for bench/rest.sh's B2 findings: the cost of one commit, of the reloads
after it, and of a stale commit (a 409) on one table, one request at a time.

    python3 probe.py PORT TOKEN TABLE [PREFIX=/v1/skade]     (namespace b; the fixture: PREFIX=/v1)

Appends 3 snapshots (add-snapshot + set-snapshot-ref main, assert-ref-snapshot-id), each
followed by a refs reload, a full load and a commit against the previous snapshot (409).
"""
import http.client, json, sys, time
port, token, table = int(sys.argv[1]), sys.argv[2], sys.argv[3]
prefix = sys.argv[4] if len(sys.argv) > 4 else "/v1/skade"
c = http.client.HTTPConnection("127.0.0.1", port)
H = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}
def req(m, path, body=None):
    t = time.perf_counter(); c.request(m, prefix + path, body=body, headers=H); r = c.getresponse(); b = r.read()
    return r.status, b, (time.perf_counter() - t) * 1000
P = f"/namespaces/b/tables/{table}"
st, b, ms = req("GET", P + "?snapshots=refs"); md = json.loads(b)["metadata"]
cur, seq = md["current-snapshot-id"], md["last-sequence-number"]
print("reload refs", st, f"{ms:.2f} ms")
import random
def commit(cur, seq, sid):
    body = json.dumps({"requirements": [{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": cur}],
        "updates": [{"action": "add-snapshot", "snapshot": {"snapshot-id": sid, "parent-snapshot-id": cur, "sequence-number": seq + 1,
          "timestamp-ms": int(time.time() * 1000), "manifest-list": "file:/nonexistent/manifest-list.avro", "summary": {"operation": "append"}, "schema-id": 1}},
          {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": sid}]})
    return req("POST", P, body)
for i in range(3):
    sid = random.randrange(1, 1 << 62)
    st, b, ms = commit(cur, seq, sid); print("commit", st, f"{ms:.2f} ms", len(b), "bytes")
    old = cur; cur, seq = sid, seq + 1
    st, b, ms = req("GET", P + "?snapshots=refs"); print("  reload refs after commit", st, f"{ms:.2f} ms")
    st, b, ms = req("GET", P + "?snapshots=refs"); print("  reload refs again", st, f"{ms:.2f} ms")
    st, b, ms = req("GET", P); print("  load all", st, f"{ms:.2f} ms")
    st, b, ms = commit(old, seq - 1, random.randrange(1, 1 << 62)); print("  stale commit", st, f"{ms:.2f} ms", b[:150])
