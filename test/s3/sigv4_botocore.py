#!/usr/bin/env python3
"""Cross-check skade's AWS SigV4 signer (src/util/sigv4.c, via skade_test.sigv4_sign())
against botocore's S3SigV4Auth on random S3-style requests.

Each request has a random method, a random object key (UTF-8, spaces,
reserved and special characters, '//' at times) encoded S3 style (every byte
but A-Z a-z 0-9 - _ . ~ / as %XX, once), random query parameters (repeated
names, valueless "a" and empty "a=" parameters, encoded values), random
extra headers (mixed case, repeated names, leading/trailing/inner runs of
spaces and tabs, UTF-8 letters, empty values), a random body signed
(SHA-256) or not (UNSIGNED-PAYLOAD), random credentials and region, and a
fixed (seeded) timestamp.  botocore signs it; skade_test.sigv4_sign() is then
given exactly what botocore signed: the URL's path and query as sent, every
header botocore signed with its raw (untrimmed) value in botocore's order,
the x-amz-content-sha256 value botocore used (checked against our own
SHA-256 of the body, or UNSIGNED-PAYLOAD), and the same date, region and
keys.  The canonical request, string to sign and Authorization value must be
identical.  Prints "N requests: 0 mismatches"; exits 1 on any mismatch, 2 if
skade could not be asked.

Usage (a Python with botocore, e.g. test/s3's virtualenv; psql on PATH or
$PSQL; a server where the skade extension is created):

    python3 test/s3/sigv4_botocore.py [--count 500] [--seed N] [--dsn CONNINFO]

The connection is CONNINFO if given, else $SKADE_TEST_DSN, else libpq's own
environment (PGHOST, PGPORT, PGUSER, PGDATABASE, ...).  The role needs
EXECUTE on skade_test.sigv4_sign (test/functions.sql creates it for everyone).

Not generated, as the signer's contract excludes them or botocore treats them
specially: Date (botocore rewrites it and drops X-Amz-Date), the headers
botocore never signs (Expect, Transfer-Encoding, User-Agent,
X-Amzn-Trace-Id), empty query pieces ("a&&b"; skade drops them, botocore
signs "="), control characters and non-ASCII whitespace in header values
(skade rejects control characters; Python's str.split() also squeezes
U+00A0 and the like, skade squeezes only spaces and tabs).
"""
import argparse
import datetime
import hashlib
import os
import random
import subprocess
import sys
from urllib.parse import quote, urlsplit

import botocore.auth
from botocore.auth import S3SigV4Auth, SIGNED_HEADERS_BLACKLIST, UNSIGNED_PAYLOAD
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

METHODS = ["GET", "PUT", "POST", "DELETE", "HEAD"]
REGIONS = ["us-east-1", "eu-west-3", "ap-southeast-2", "us-gov-west-1", "local"]
KEY_CHARS = (list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
             + list(" !\"#$%&'()*+,-.:;<=>?@[\\]^_`{|}~") + ["/", "/", "é", "ß", "日本", "🐘", "ø", "\u00a0"])
QUERY_NAMES = ["prefix", "list-type", "max-keys", "continuation-token", "delimiter",
               "encoding-type", "uploadId", "partNumber", "uploads", "x-id", "versionId",
               "start-after", "fetch-owner", "Prefix", "a", "a-b", "A", "_", "~x"]
HEADER_NAMES = ["Content-Type", "Range", "x-amz-storage-class", "x-amz-meta-name",
                "X-Amz-Meta-Name", "If-Match", "If-None-Match", "Content-MD5",
                "x-amz-checksum-crc32c", "X-Amz-Security-Token", "Cache-Control",
                "x-amz-copy-source", "x-amz-server-side-encryption", "Content-Disposition"]
VALUE_CHARS = (list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
               + list("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~") + ["é", "日", "ß"])


def rand_text(rng, chars, lo, hi):
    return "".join(rng.choice(chars) for _ in range(rng.randint(lo, hi)))


def rand_spaces(rng, lo=0, hi=3):
    return "".join(rng.choice(" \t") for _ in range(rng.randint(lo, hi)))


def rand_header_value(rng):
    if rng.random() < 0.05:
        return rand_spaces(rng)  # empty once trimmed
    words = [rand_text(rng, VALUE_CHARS, 1, 12) for _ in range(rng.randint(1, 4))]
    out = rand_spaces(rng)
    for i, w in enumerate(words):
        out += (rand_spaces(rng, 1, 4) if i else "") + w
    return out + rand_spaces(rng)


def rand_query(rng):
    params = []
    for _ in range(rng.choice([0, 0, 1, 2, 3, 5])):
        name = rng.choice(QUERY_NAMES) if rng.random() < 0.7 else rand_text(rng, KEY_CHARS, 1, 6)
        name = quote(name, safe="")
        r = rng.random()
        if r < 0.15:
            params.append(name)  # valueless: "uploads"
        elif r < 0.25:
            params.append(name + "=")  # empty value
        else:
            params.append(name + "=" + quote(rand_text(rng, KEY_CHARS, 1, 10), safe=""))
        if rng.random() < 0.2:  # the same name again, another value
            params.append(name + "=" + quote(rand_text(rng, KEY_CHARS, 0, 4), safe=""))
    rng.shuffle(params)
    return "&".join(params)


class RecordingS3SigV4Auth(S3SigV4Auth):
    """S3SigV4Auth keeping the canonical request and string to sign it used."""

    def canonical_request(self, request):
        self.recorded_creq = super().canonical_request(request)
        return self.recorded_creq

    def string_to_sign(self, request, canonical_request):
        self.recorded_sts = super().string_to_sign(request, canonical_request)
        return self.recorded_sts


class ClientConfig:
    def __init__(self, sign_payload):
        self.s3 = {"payload_signing_enabled": sign_payload}


def make_case(rng, i):
    """One random request, signed by botocore: the inputs and its results."""
    method = rng.choice(METHODS)
    bucket = rng.choice(["examplebucket", "skade-warehouse", "b.1"])
    key = rand_text(rng, KEY_CHARS, 1, 24)
    if rng.random() < 0.1:
        key = "a//" + key
    path = "/" + bucket + "/" + quote(key, safe="/")
    query = rand_query(rng)
    host = rng.choice(["127.0.0.1:9000", "s3.amazonaws.com", "minio.local:443"])
    url = rng.choice(["http", "https"]) + "://" + host + path + ("?" + query if query else "")
    body = bytes(rng.getrandbits(8) for _ in range(rng.choice([0, 0, 1, 17, 300, 2048])))
    sign_payload = rng.random() < 0.6
    when = datetime.datetime(2013, 5, 24) + datetime.timedelta(seconds=rng.randint(0, 400_000_000))

    request = AWSRequest(method=method, url=url, data=body)
    request.headers[rng.choice(["Host", "host", "HOST"])] = rand_spaces(rng) + host + rand_spaces(rng)
    for _ in range(rng.randint(0, 5)):
        request.headers[rng.choice(HEADER_NAMES)] = rand_header_value(rng)
    if rng.random() < 0.15:
        request.headers["x-amz-meta-dup"] = rand_header_value(rng)
        request.headers["X-Amz-Meta-Dup"] = rand_header_value(rng)
    request.context["client_config"] = ClientConfig(sign_payload)

    access_key = "AKIA" + rand_text(rng, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16, 16)
    secret_key = rand_text(rng, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/", 40, 40)
    region = rng.choice(REGIONS)
    auth = RecordingS3SigV4Auth(Credentials(access_key, secret_key), "s3", region)
    botocore.auth.get_current_datetime = lambda remove_tzinfo=True: when
    auth.add_auth(request)

    payload_hash = hashlib.sha256(body).hexdigest() if sign_payload else UNSIGNED_PAYLOAD
    if request.headers["X-Amz-Content-SHA256"] != payload_hash:
        raise SystemExit(f"request {i}: botocore signed payload "
                         f"{request.headers['X-Amz-Content-SHA256']}, expected {payload_hash}")
    headers = [f"{name}:{value}" for name, value in request.headers.items()
               if name.lower() != "authorization" and name.lower() not in SIGNED_HEADERS_BLACKLIST]
    parts = urlsplit(url)
    return {
        "method": method, "uri": parts.path, "query": parts.query or None, "headers": headers,
        "payload_hash": payload_hash, "region": region, "amz_date": when.strftime("%Y%m%dT%H%M%SZ"),
        "access_key": access_key, "secret_key": secret_key,
        "creq": auth.recorded_creq, "sts": auth.recorded_sts,
        "authorization": request.headers["Authorization"],
    }


def lit(s):
    return "NULL" if s is None else "'" + s.replace("'", "''") + "'"


def ask_skade(cases, dsn):
    """skade_test.sigv4_sign() of every case, through one psql session."""
    lines = ["\\set ON_ERROR_STOP 1", "SET client_encoding = 'UTF8';"]
    for i, c in enumerate(cases):
        headers = "ARRAY[" + ", ".join(lit(h) for h in c["headers"]) + "]::text[]"
        lines.append(
            f"SELECT concat_ws(chr(31), {i}, s.canonical_request, s.string_to_sign, s.authorization, chr(30))"
            f" FROM skade_test.sigv4_sign("
            f"{lit(c['method'])}, {lit(c['uri'])}, {lit(c['query'])}, {headers}, "
            f"{lit(c['payload_hash'])}, {lit(c['region'])}, 's3', {lit(c['amz_date'])}, "
            f"{lit(c['access_key'])}, {lit(c['secret_key'])}) s;")
    cmd = [os.environ.get("PSQL", "psql"), "-X", "-q", "-A", "-t"]
    if dsn:
        cmd += ["-d", dsn]
    env = dict(os.environ, PGCLIENTENCODING="UTF8")
    res = subprocess.run(cmd, input="\n".join(lines).encode(), capture_output=True, env=env)
    if res.returncode != 0:
        sys.stderr.write(res.stderr.decode(errors="replace"))
        raise SystemExit(2)
    out = {}
    for rec in res.stdout.decode().split("\x1f\x1e\n"):
        if rec:
            i, creq, sts, authz = rec.split("\x1f")
            out[int(i)] = (creq, sts, authz)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=500)
    ap.add_argument("--seed", type=int, default=20130524)
    ap.add_argument("--dsn", default=os.environ.get("SKADE_TEST_DSN"))
    args = ap.parse_args()

    rng = random.Random(args.seed)
    cases = [make_case(rng, i) for i in range(args.count)]
    got = ask_skade(cases, args.dsn)
    mismatches = 0
    for i, c in enumerate(cases):
        want = (c["creq"], c["sts"], c["authorization"])
        if got.get(i) != want:
            mismatches += 1
            if mismatches <= 5:
                print(f"--- request {i} differs: {c['method']} {c['uri']} ? {c['query']}\n"
                      f"headers {c['headers']!r}\n"
                      f"botocore:\n{want[0]}\n{want[2]}\nskade:\n"
                      f"{got[i][0] if i in got else '(no row)'}\n{got[i][2] if i in got else ''}\n")
    print(f"{args.count} requests: {mismatches} mismatches")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
