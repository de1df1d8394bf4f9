"""bench/delegation.sh's client: see there.  Prints one line per figure."""
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import http.client
from urllib.parse import urlsplit

import requests

URI = os.environ["SKADE_DELEG_URI"]
CAT = os.environ["SKADE_DELEG_CATALOG"]
S3 = os.environ["SKADE_DELEG_S3"]
TOKEN = os.environ["SKADE_DELEG_WRITER_TOKEN"]
ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 7
PER_ROUND = 200
COLD = 40

s = requests.Session()
s.headers["Authorization"] = f"Bearer {TOKEN}"
# the timed requests: one keep-alive connection, as little client between the clocks as can be
conn = http.client.HTTPConnection(urlsplit(URI).hostname, urlsplit(URI).port)
AUTH = {"Authorization": f"Bearer {TOKEN}", "Accept-Encoding": "gzip"}


def timed(method, path, headers=None, body=None):
    t = time.perf_counter()
    conn.request(method, path, body=body, headers={**AUTH, **(headers or {})})
    r = conn.getresponse()
    data = r.read()
    return (time.perf_counter() - t) * 1000, r.status, data, r.getheader("Content-Encoding")


def url(name):
    return f"{URI}/v1/{CAT}/namespaces/bn/tables/{name}"


def schema(n):
    return {"type": "struct", "schema-id": 0,
            "fields": [{"id": i + 1, "name": f"c{i}", "type": "long", "required": False} for i in range(n)]}


def create(name, ncols):
    r = s.post(f"{URI}/v1/{CAT}/namespaces/bn/tables", json={"name": name, "schema": schema(ncols)})
    r.raise_for_status()


def load_ms(name, delegation):
    h = {"X-Iceberg-Access-Delegation": delegation} if delegation else {}
    d, status, data, enc = timed("GET", urlsplit(url(name)).path, h)
    assert status == 200, data
    if delegation:
        text = gzip.decompress(data) if enc == "gzip" else data
        assert b"storage-credentials" in text
    return d


def p50(xs):
    return statistics.median(xs)


s.post(f"{URI}/v1/{CAT}/namespaces", json={"namespace": ["bn"]}).raise_for_status()
create("small", 3)
create("wide", 400)
for i in range(COLD):
    create(f"cold{i}", 3)
wide = s.get(url("wide"), headers={"Accept-Encoding": "identity"})
print(f"tables: small ({len(s.get(url('small')).content)} B answer), wide ({len(wide.content)} B answer, gzip'd)")

# cold: the first vended load of a table no executor has credentials for (an STS call)
cold = [load_ms(f"cold{i}", "vended-credentials") for i in range(COLD)]

for name in ("small", "wide"):
    for _ in range(100):
        load_ms(name, None)
        load_ms(name, "vended-credentials")
    plain_r, vended_r = [], []
    for r in range(ROUNDS):
        order = (None, "vended-credentials") if r % 2 == 0 else ("vended-credentials", None)
        got = {}
        for mode in order:
            got[mode] = p50([load_ms(name, mode) for _ in range(PER_ROUND)])
        plain_r.append(got[None])
        vended_r.append(got["vended-credentials"])
    plain, vended = p50(plain_r), p50(vended_r)
    print(f"loadTable p50 {name}: plain {plain:.3f} ms, vended warm {vended:.3f} ms "
          f"({vended / plain:.2f}x plain; target <= 1.2x)")
print(f"loadTable p50 small, vended cold (STS AssumeRole per load, {COLD} tables): {p50(cold):.3f} ms "
      f"({p50(cold) / plain:.1f}x plain)")

# signing: a GET of an object of the table
key = s.get(url("small")).json()["metadata-location"][len("s3://lake/"):]
body = json.dumps({"method": "GET", "region": "us-east-1", "uri": f"{S3}/lake/{key}", "headers": {}})
for _ in range(100):
    assert s.post(url("small") + "/sign", data=body).status_code == 200
sign_r = []
for _ in range(ROUNDS):
    xs = []
    for _ in range(PER_ROUND):
        d, status, data, _ = timed("POST", urlsplit(url("small")).path + "/sign",
                                   {"Content-Type": "application/json"}, body)
        assert status == 200, data
        xs.append(d)
    sign_r.append(p50(xs))
small_plain = p50([load_ms("small", None) for _ in range(PER_ROUND)])
print(f"sign p50: {p50(sign_r):.3f} ms (target < 1 ms); plain loadTable small p50 {small_plain:.3f} ms")


def ab(path, post=None):
    args = ["ab", "-q", "-k", "-c", "32", "-n", "20000", "-H", f"Authorization: Bearer {TOKEN}"]
    if post:
        f = tempfile.NamedTemporaryFile("w", delete=False, suffix=".json")
        f.write(post)
        f.close()
        args += ["-p", f.name, "-T", "application/json"]
    out = subprocess.run(args + [path], capture_output=True, text=True).stdout
    rps = [line for line in out.splitlines() if line.startswith("Requests per second")]
    bad = [line for line in out.splitlines() if line.startswith("Non-2xx")]
    assert rps and not bad, out
    return float(rps[0].split()[3])


sign_rps = ab(url("small") + "/sign", body)
load_rps = ab(url("small"))
print(f"at 32 clients (ab -k): sign {sign_rps:.0f} req/s, plain loadTable {load_rps:.0f} req/s "
      f"({sign_rps / load_rps:.2f}x)")
