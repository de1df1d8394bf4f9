"""Access delegation through skade's REST catalog, against MinIO (test/delegation/run.sh).

Vended credentials are scoped by the session policy skade sends and MinIO enforces; remote
signing signs only what lies in the table's location.  The clients hold no S3 key: pyiceberg
gets credentials or a signer from the catalog, boto3 uses exactly what the catalog handed out.
"""
import datetime
import http.server
import json
import os
import subprocess
import threading
import time

import boto3
import botocore
import pyarrow as pa
import pytest
import requests
from botocore.config import Config
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

URI = os.environ["SKADE_DELEG_URI"]
CATALOG = os.environ["SKADE_DELEG_CATALOG"]
S3 = os.environ["SKADE_DELEG_S3"]
WRITER = os.environ["SKADE_DELEG_WRITER_TOKEN"]
READER = os.environ["SKADE_DELEG_READER_TOKEN"]
A_READER = os.environ["SKADE_DELEG_A_READER_TOKEN"]
SCHEMA = Schema(NestedField(1, "id", LongType(), required=False), NestedField(2, "s", StringType(), required=False))
ROWS = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "s": pa.array(["a", "b", "c"])})


def psql(sql):
    return subprocess.run(["psql", "-XAtq", "-v", "ON_ERROR_STOP=1", "-c", sql], check=True,
                          capture_output=True, text=True).stdout.strip()


def reload_with(setting, value):
    psql(f"ALTER SYSTEM SET {setting} = '{value}'")
    psql("SELECT pg_reload_conf()")
    time.sleep(1.0)  # the executors read the file at their next request


def reset(setting):
    psql(f"ALTER SYSTEM RESET {setting}")
    psql("SELECT pg_reload_conf()")
    time.sleep(1.0)


def s3(access_key, secret_key, token=None):
    return boto3.client("s3", endpoint_url=S3, region_name="us-east-1", aws_access_key_id=access_key,
                        aws_secret_access_key=secret_key, aws_session_token=token,
                        config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}))


ROOT = s3(os.environ["SKADE_DELEG_ROOT_USER"], os.environ["SKADE_DELEG_ROOT_PASSWORD"])


def catalog(token, delegation="vended-credentials"):
    return RestCatalog("deleg", uri=URI, token=token, warehouse=CATALOG,
                       **{"header.X-Iceberg-Access-Delegation": delegation})


def table_url(name):
    return f"{URI}/v1/{CATALOG}/namespaces/ns/tables/{name}"


def load(token, name, delegation="vended-credentials", **kw):
    headers = {"Authorization": f"Bearer {token}"}
    if delegation:
        headers["X-Iceberg-Access-Delegation"] = delegation
    return requests.get(table_url(name), headers=headers, **kw)


def creds_of(answer):
    sc = answer["storage-credentials"]
    assert len(sc) == 1
    c = sc[0]["config"]
    return sc[0]["prefix"], c


def client_of(config):
    return s3(config["s3.access-key-id"], config["s3.secret-access-key"], config["s3.session-token"])


def denied(call):
    with pytest.raises(botocore.exceptions.ClientError) as e:
        call()
    assert e.value.response["Error"]["Code"] in ("AccessDenied", "403"), e.value.response
    return e.value


@pytest.fixture(scope="module", autouse=True)
def tables():
    # (run.sh made the buckets, s3://other/secret/x and s3://lake/wh/outside)
    cat = catalog(WRITER)
    cat.create_namespace("ns")
    for name in ("a", "b"):
        t = cat.create_table(f"ns.{name}", SCHEMA)
        t.append(ROWS)  # the data files written with the vended credentials
    psql(f"SELECT skade.grant('read', 'deleg_a_reader', 'ns', 'a', '{CATALOG}')")
    yield


def meta_key(answer):
    loc = answer["metadata-location"]
    assert loc.startswith("s3://lake/"), loc
    return loc[len("s3://lake/"):]


def test_writer_appends_and_reads_with_vended_credentials_only():
    t = catalog(WRITER).load_table("ns.a")
    t.append(ROWS)
    got = catalog(READER).load_table("ns.a").scan().to_arrow()
    assert sorted(got["id"].to_pylist()) == [1, 1, 2, 2, 3, 3]


def test_load_answers_storage_credentials_for_the_table_location():
    r = load(READER, "a")
    assert r.status_code == 200, r.text
    answer = r.json()
    prefix, c = creds_of(answer)
    assert prefix == answer["metadata"]["location"] == "s3://lake/wh/ns/a"
    for k in ("s3.access-key-id", "s3.secret-access-key", "s3.session-token"):
        assert c[k] and answer["config"][k] == c[k]  # and the legacy keys
    expires = int(c["s3.session-token-expires-at-ms"])
    assert time.time() * 1000 < expires < (time.time() + 3700) * 1000
    assert c["s3.endpoint"] == S3 and c["s3.path-style-access"] == "true"
    assert c["client.refresh-credentials-endpoint"] == f"v1/{CATALOG}/namespaces/ns/tables/a/credentials"
    assert c["s3.access-key-id"] != os.environ["SKADE_DELEG_ROOT_USER"]


def test_no_header_no_credentials():
    r = load(READER, "a", delegation=None)
    assert r.status_code == 200 and r.json()["config"] == {} and "storage-credentials" not in r.json()


def test_reader_credentials_read_the_table_and_nothing_else():
    answer = load(READER, "a").json()
    _, c = creds_of(answer)
    cl = client_of(c)
    key = meta_key(answer)
    assert cl.get_object(Bucket="lake", Key=key)["Body"].read()
    listed = cl.list_objects_v2(Bucket="lake", Prefix="wh/ns/a/")
    assert listed["KeyCount"] > 0
    denied(lambda: cl.put_object(Bucket="lake", Key="wh/ns/a/data/evil.parquet", Body=b"x"))
    denied(lambda: cl.delete_object(Bucket="lake", Key=key))
    b_key = meta_key(load(READER, "b").json())
    denied(lambda: cl.get_object(Bucket="lake", Key=b_key))
    denied(lambda: cl.list_objects_v2(Bucket="lake", Prefix="wh/ns/b/"))
    denied(lambda: cl.list_objects_v2(Bucket="lake", Prefix="wh/ns/a"))  # would name ns/ab's files
    denied(lambda: cl.get_object(Bucket="lake", Key="wh/outside"))
    denied(lambda: cl.get_object(Bucket="other", Key="secret/x"))
    assert ROOT.head_object(Bucket="lake", Key=key)  # (the delete above was refused)


def test_writer_credentials_write_the_table_only():
    _, c = creds_of(load(WRITER, "a").json())
    cl = client_of(c)
    cl.put_object(Bucket="lake", Key="wh/ns/a/data/probe", Body=b"x")
    cl.delete_object(Bucket="lake", Key="wh/ns/a/data/probe")
    denied(lambda: cl.put_object(Bucket="lake", Key="wh/ns/b/data/probe", Body=b"x"))
    denied(lambda: cl.put_object(Bucket="lake", Key="wh/probe", Body=b"x"))


def test_restricted_role_gets_read_only_credentials_for_its_table():
    r = load(A_READER, "a")
    assert r.status_code == 200, r.text
    cl = client_of(creds_of(r.json())[1])
    assert cl.get_object(Bucket="lake", Key=meta_key(r.json()))["Body"].read()
    denied(lambda: cl.put_object(Bucket="lake", Key="wh/ns/a/data/evil", Body=b"x"))
    # table b is absent to it: no answer, no credentials, no signature
    assert load(A_READER, "b").status_code == 404
    s = requests.post(table_url("b") + "/sign", headers={"Authorization": f"Bearer {A_READER}"},
                      json={"method": "GET", "region": "us-east-1", "uri": f"{S3}/lake/wh/ns/b/x", "headers": {}})
    assert s.status_code == 404
    c = requests.get(table_url("b") + "/credentials", headers={"Authorization": f"Bearer {A_READER}"})
    assert c.status_code == 404


def test_credentials_route_refreshes_the_same_scope():
    for params in ({}, {"planId": "p-1"}):
        r = requests.get(table_url("a") + "/credentials", params=params,
                         headers={"Authorization": f"Bearer {READER}"})
        assert r.status_code == 200, r.text
        sc = r.json()["storage-credentials"]
        assert [x["prefix"] for x in sc] == ["s3://lake/wh/ns/a"]
        cl = client_of(sc[0]["config"])
        assert cl.list_objects_v2(Bucket="lake", Prefix="wh/ns/a/")["KeyCount"] > 0
        denied(lambda: cl.put_object(Bucket="lake", Key="wh/ns/a/x", Body=b"x"))
    # pyiceberg's own call of the route
    got = catalog(READER).load_credentials(("ns", "a"), "s3://lake/wh/ns/a/data/f.parquet")
    assert got["s3.session-token"]


def test_plan_answer_carries_storage_credentials():
    r = requests.post(table_url("a") + "/plan", json={},
                      headers={"Authorization": f"Bearer {READER}", "X-Iceberg-Access-Delegation": "vended-credentials"})
    assert r.status_code == 200, r.text
    plan = r.json()
    assert plan["status"] == "completed" and plan["plan-tasks" if "plan-tasks" in plan else "file-scan-tasks"]
    sc = plan["storage-credentials"]
    assert [x["prefix"] for x in sc] == ["s3://lake/wh/ns/a"]
    cl = client_of(sc[0]["config"])
    task = plan["file-scan-tasks"][0]["data-file"]["file-path"]
    assert cl.get_object(Bucket="lake", Key=task[len("s3://lake/"):])["Body"].read()


def test_outside_write_roots_a_writer_gets_read_only_credentials():
    # a table registered under s3://other (in allowed_roots, not in write_roots)
    src = load(WRITER, "a").json()
    meta = dict(src["metadata"], location="s3://other/ro")
    ROOT.put_object(Bucket="other", Key="ro/metadata/00001-ro.metadata.json", Body=json.dumps(meta).encode())
    r = requests.post(f"{URI}/v1/{CATALOG}/namespaces/ns/register",
                      headers={"Authorization": f"Bearer {WRITER}", "X-Iceberg-Access-Delegation": "vended-credentials"},
                      json={"name": "ro", "metadata-location": "s3://other/ro/metadata/00001-ro.metadata.json"})
    assert r.status_code == 200, r.text
    prefix, c = creds_of(r.json())  # the register answer is delegated too
    assert prefix == "s3://other/ro"
    cl = client_of(c)
    assert cl.get_object(Bucket="other", Key="ro/metadata/00001-ro.metadata.json")["Body"].read()
    denied(lambda: cl.put_object(Bucket="other", Key="ro/data/x", Body=b"x"))
    assert sign(WRITER, "ro", "PUT", f"{S3}/other/ro/data/x").status_code == 403
    assert sign(WRITER, "ro", "GET", f"{S3}/other/ro/data/x").status_code == 200


def test_idempotency_keeps_no_credentials_and_a_replay_gets_fresh_ones():
    h = {"Authorization": f"Bearer {WRITER}", "X-Iceberg-Access-Delegation": "vended-credentials",
         "Idempotency-Key": "0190a0a0-0000-7000-8000-00000000d1e1"}
    body = {"requirements": [], "updates": [{"action": "set-properties", "updates": {"idem": "1"}}]}
    first = requests.post(table_url("b"), headers=h, json=body)
    assert first.status_code == 200, first.text
    _, c = creds_of(first.json())
    stored = psql("SELECT count(*) FROM skade.rest_idempotency WHERE body LIKE '%secret-access-key%'"
                  " OR body LIKE '%" + c["s3.secret-access-key"] + "%'")
    assert stored == "0"
    assert psql("SELECT count(*) FROM skade.rest_idempotency") != "0"
    again = requests.post(table_url("b"), headers=h, json=body)
    assert again.status_code == 200, again.text
    assert again.json()["metadata-location"] == first.json()["metadata-location"]
    _, c2 = creds_of(again.json())
    assert client_of(c2).list_objects_v2(Bucket="lake", Prefix="wh/ns/b/")["KeyCount"] > 0


def test_config_advertises_the_routes():
    r = requests.get(f"{URI}/v1/config", params={"warehouse": CATALOG},
                     headers={"Authorization": f"Bearer {READER}"})
    ends = r.json()["endpoints"]
    assert "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials" in ends
    assert "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/sign" in ends


# ------------------------------------------------------------------ remote signing


def signed_count():
    """How many signing requests skade answered 200 (its /metrics, served to loopback)."""
    total = 0
    for line in requests.get(f"{URI}/metrics").text.splitlines():
        if line.startswith("skade_rest_requests_total") and "tables/{t}/sign" in line and 'status="200"' in line:
            total += int(float(line.rsplit(" ", 1)[1]))
    return total


def test_pyiceberg_reads_and_writes_through_remote_signing():
    r = load(WRITER, "a", delegation="remote-signing")
    c = r.json()["config"]
    assert c["s3.remote-signing-enabled"] == "true" and "storage-credentials" not in r.json()
    assert c["s3.signer.endpoint"] == f"v1/{CATALOG}/namespaces/ns/tables/a/sign"
    assert "s3.access-key-id" not in c
    cat = catalog(WRITER, "remote-signing")
    t = cat.load_table("ns.a")
    assert type(t.io).__name__ == "FsspecFileIO"
    signed = signed_count()
    before = len(t.scan().to_arrow())
    t.append(ROWS)
    assert len(catalog(READER, "remote-signing").load_table("ns.a").scan().to_arrow()) == before + 3
    assert signed_count() > signed + 3  # every S3 request went through the signing route


def sign(token, name, method, uri, headers=None, body=None, raw=None):
    payload = {"method": method, "region": "us-east-1", "uri": uri, "headers": headers or {}}
    if body is not None:
        payload["body"] = body
    return requests.post(table_url(name) + "/sign", headers={"Authorization": f"Bearer {token}"},
                         data=raw if raw is not None else json.dumps(payload))


def send_signed(method, uri, signed, data=None):
    return requests.request(method, signed["uri"], data=data,
                            headers={k: ",".join(v) for k, v in signed["headers"].items()})


def test_signed_request_works_and_is_exactly_scoped():
    answer = load(READER, "a").json()
    key = meta_key(answer)
    r = sign(READER, "a", "GET", f"{S3}/lake/{key}")
    assert r.status_code == 200, r.text
    got = send_signed("GET", f"{S3}/lake/{key}", r.json())
    assert got.status_code == 200 and got.content == ROOT.get_object(Bucket="lake", Key=key)["Body"].read()
    r = sign(READER, "a", "GET", f"{S3}/lake?list-type=2&prefix=wh%2Fns%2Fa%2F")
    assert r.status_code == 200, r.text
    assert send_signed("GET", None, r.json()).status_code == 200


@pytest.mark.parametrize("method,uri,headers,why", [
    ("GET", "{s3}/lake/wh/ns/b/metadata/x.json", {}, "outside"),          # another table
    ("GET", "{s3}/lake/wh/ns/ab/x", {}, "outside"),                        # a sibling prefix
    ("GET", "{s3}/lake/wh/ns/a/../b/x", {}, "segment"),
    ("GET", "{s3}/lake/wh/ns/a/%2e%2e/b/x", {}, "encoded"),
    ("GET", "{s3}/lake/wh/ns/a%2Fx", {}, "encoded"),
    ("GET", "{s3}/lake/wh/ns/a", {}, "outside"),                            # the prefix itself
    ("GET", "{s3}/lake?list-type=2", {}, "list"),                          # the whole bucket
    ("GET", "{s3}/lake?list-type=2&prefix=wh%2Fns%2Fb%2F", {}, "list"),
    ("GET", "{s3}/lake?list-type=2&prefix=wh%2Fns%2Fa", {}, "list"),
    ("GET", "{s3}/other/secret/x", {}, "outside"),
    ("GET", "http://evil.example:9000/lake/wh/ns/a/x", {}, "endpoint"),
    ("GET", "{s3}/lake/wh/ns/a/x?acl", {}, "query"),
    ("PUT", "{s3}/lake/wh/ns/a/x?tagging", {}, "query"),
    ("GET", "file:///etc/passwd", {}, "url"),
    ("PATCH", "{s3}/lake/wh/ns/a/x", {}, "method"),
    ("PUT", "{s3}/lake/wh/ns/a/data/x", {"x-amz-copy-source": ["lake/wh/ns/b/x"]}, "header"),
    ("PUT", "{s3}/lake/wh/ns/a/data/x", {"x-amz-acl": ["public-read"]}, "header"),
    ("PUT", "{s3}/lake/wh/ns/a/data/x", {"x-amz-content-sha256": ["STREAMING-AWS4-HMAC-SHA256-PAYLOAD"]}, "hash"),
])
def test_signing_refuses_what_lies_outside(method, uri, headers, why):
    r = sign(WRITER, "a", method, uri.format(s3=S3), headers)
    assert r.status_code == 403, (why, r.status_code, r.text)
    err = r.json()["error"]
    assert err["type"] == "ForbiddenException" and "Authorization" not in r.text


def test_signing_a_write_needs_write_access():
    r = sign(READER, "a", "PUT", f"{S3}/lake/wh/ns/a/data/x")
    assert r.status_code == 403, r.text
    assert sign(WRITER, "a", "PUT", f"{S3}/lake/wh/ns/a/data/x").status_code == 200


def test_delete_objects_is_signed_only_for_keys_inside():
    inside = "<Delete><Object><Key>wh/ns/a/data/p1</Key></Object></Delete>"
    r = sign(WRITER, "a", "POST", f"{S3}/lake?delete", {"Content-MD5": ["x"]}, body=inside)
    assert r.status_code == 200, r.text
    for body in ("<Delete><Object><Key>wh/ns/b/data/p1</Key></Object></Delete>",
                 "<Delete><Object><Key>wh/ns/a/p</Key></Object><Object><Key>wh/outside</Key></Object></Delete>",
                 "<Delete><Object><Key >wh/ns/b/x</Key ></Object></Delete>",
                 "<Delete><Object><Key><![CDATA[wh/ns/b/x]]></Key></Object></Delete>",
                 "<Delete><Object><Key>wh/ns/a/&#46;&#46;/b</Key></Object></Delete>"):
        assert sign(WRITER, "a", "POST", f"{S3}/lake?delete", body=body).status_code == 403, body
    assert sign(WRITER, "a", "POST", f"{S3}/lake?delete").status_code == 403  # no body


@pytest.mark.parametrize("raw,status", [
    ("not json", 400), ("[]", 400), ('{"method": "GET"}', 400),
    ('{"method": 1, "uri": "x", "headers": {}}', 400),
    ('{"method": "GET", "uri": "http://x/", "headers": {"a": [1]}}', 400),
    ('{"method": "GET", "uri": "http://x/", "headers": {"a": "b\\u0001"}}', 400),
])
def test_signing_bad_input(raw, status):
    r = sign(WRITER, "a", None, None, raw=raw)
    assert r.status_code == status, (raw, r.text)
    assert r.json()["error"]["code"] == status


def test_signing_huge_body():
    r = sign(WRITER, "a", "POST", f"{S3}/lake?delete", body="<Delete>" + "x" * (2 * 1024 * 1024) + "</Delete>")
    assert r.status_code in (400, 413), r.status_code


# -------------------------------------------------------------------------- faults


def test_sts_down_is_503_only_for_a_client_that_needs_credentials(tmp_path):
    reload_with("skade.s3_sts_endpoint", "http://127.0.0.1:9")
    try:
        r = load(READER, "b")
        assert r.status_code == 503, r.text
        assert r.headers.get("Retry-After") and r.json()["error"]["type"] == "ServiceUnavailableException"
        # remote signing accepted as well: the answer falls back to it
        r = load(READER, "b", delegation="vended-credentials,remote-signing")
        assert r.status_code == 200, r.text
        assert r.json()["config"]["s3.remote-signing-enabled"] == "true"
        assert "storage-credentials" not in r.json()
        assert load(READER, "b", delegation=None).status_code == 200
    finally:
        reset("skade.s3_sts_endpoint")
    assert load(READER, "b").status_code == 200


def test_sts_refusing_is_a_clear_403():
    # MinIO refuses a lifetime under 15 minutes, as AWS does
    reload_with("skade.s3_vended_credentials_duration", "1min")
    try:
        r = load(READER, "a")
        assert r.status_code == 403, r.text
        msg = r.json()["error"]["message"]
        assert "STS refused AssumeRole" in msg and "InvalidParameterValue" in msg, msg
    finally:
        reset("skade.s3_vended_credentials_duration")


class FakeSts(http.server.BaseHTTPRequestHandler):
    """An STS that misbehaves as FakeSts.mode says (the faults skade must survive)."""
    mode = "expired"

    def log_message(self, *args):
        pass

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        when = datetime.datetime.now(datetime.timezone.utc)
        creds = ("<AssumeRoleResponse><AssumeRoleResult><Credentials><AccessKeyId>AKIAFAKE</AccessKeyId>"
                 "<SecretAccessKey>secret</SecretAccessKey><SessionToken>token</SessionToken>"
                 "<Expiration>{}</Expiration></Credentials></AssumeRoleResult></AssumeRoleResponse>")
        if self.mode == "slow":
            time.sleep(5)
        if self.mode == "500":
            self.send_response(500)
            body = b"<ErrorResponse><Error><Code>InternalFailure</Code></Error></ErrorResponse>"
        elif self.mode == "expired":  # a clock far from this server's
            self.send_response(200)
            body = creds.format((when - datetime.timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M:%SZ")).encode()
        elif self.mode == "garbage":
            self.send_response(200)
            body = b"<AssumeRoleResponse><AccessKeyId>AKIA&amp;X</AccessKeyId></AssumeRoleResponse>"
        elif self.mode == "huge":
            self.send_response(200)
            body = b"<AssumeRoleResponse>" + b"x" * (1 << 20) + b"</AssumeRoleResponse>"
        else:  # "denied"
            self.send_response(403)
            body = b"<ErrorResponse><Error><Code>AccessDenied</Code><Message>arn:aws:iam::123:role/secret-name is not trusted</Message></Error></ErrorResponse>"
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def fake_sts():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FakeSts)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    reload_with("skade.s3_sts_endpoint", f"http://127.0.0.1:{server.server_port}")
    psql("ALTER SYSTEM SET skade.s3_request_timeout = '1s'")
    psql("ALTER SYSTEM SET skade.s3_max_retries = 0")
    reload_with("skade.s3_sts_external_id", "faults")  # (a cache key no earlier test used)
    yield
    for g in ("skade.s3_request_timeout", "skade.s3_max_retries", "skade.s3_sts_external_id"):
        psql(f"ALTER SYSTEM RESET {g}")
    reset("skade.s3_sts_endpoint")
    server.shutdown()


@pytest.mark.parametrize("mode,status,words", [
    ("expired", 503, "already expired"),
    ("garbage", 503, "no readable AccessKeyId"),
    ("huge", 503, "more than 65536 bytes"),
    ("500", 503, "answered 500"),
    ("slow", 503, "did not answer in time"),
    ("denied", 403, "STS refused AssumeRole (403 AccessDenied)"),
])
def test_sts_faults(fake_sts, mode, status, words):
    FakeSts.mode = mode
    r = load(READER, "a")
    assert r.status_code == status, r.text
    err = r.json()["error"]
    assert words in err["message"], err
    assert "secret-name" not in r.text  # STS's message stays in the server log
    if status == 503:
        assert r.headers.get("Retry-After")
    # what the client did not ask for is not affected
    assert load(READER, "a", delegation=None).status_code == 200


def test_no_credentials_in_the_server_log():
    _, c = creds_of(load(READER, "a").json())
    log = open(os.path.join(os.environ["SKADE_DELEG_DATA"], "server.log"), errors="replace").read()
    assert c["s3.secret-access-key"] not in log and c["s3.session-token"] not in log
    assert os.environ["SKADE_DELEG_ROOT_PASSWORD"] not in log
    rows = psql("SELECT count(*) FROM skade.commit_log WHERE detail::text LIKE '%" + c["s3.access-key-id"] + "%'")
    assert rows == "0"


@pytest.mark.skipif(os.environ.get("SKADE_LONG") != "1", reason="15 minutes: SKADE_LONG=1")
def test_expired_credentials_are_refused_and_refresh_keeps_reading():
    reload_with("skade.s3_vended_credentials_duration", "15min")
    try:
        answer = load(READER, "a").json()
        _, c = creds_of(answer)
        key = meta_key(answer)
        cl = client_of(c)
        expires = int(c["s3.session-token-expires-at-ms"]) / 1000
        assert expires - time.time() < 16 * 60
        t = catalog(READER).load_table("ns.a")
        while time.time() < expires + 5:
            assert len(t.scan().to_arrow()) > 0  # a long read, refreshed as it goes
            time.sleep(60)
            t = catalog(READER).load_table("ns.a")  # the refresh: fresh credentials
        with pytest.raises(botocore.exceptions.ClientError) as e:  # (MinIO forgets expired keys)
            cl.get_object(Bucket="lake", Key=key)
        assert e.value.response["Error"]["Code"] in ("ExpiredToken", "InvalidAccessKeyId", "AccessDenied")
        _, fresh = creds_of(load(READER, "a").json())
        assert fresh["s3.access-key-id"] != c["s3.access-key-id"]
        assert client_of(fresh).get_object(Bucket="lake", Key=key)["Body"].read()
    finally:
        reset("skade.s3_vended_credentials_duration")
