"""Who a REST request is: static tokens follow their role, and
bearer JWTs of an OpenID provider the test runs itself.

Tokens: refused for a NOLOGIN role, an expired role (VALID UNTIL), a dropped role (also
once a role of the same name is created again) and a superuser (unless
skade.rest_allow_superuser); revoked by the id shown in the token, never by the secret.

JWTs: a small OpenID provider (http.server on 127.0.0.1; keys from `cryptography`, tokens
from PyJWT): discovery, a JWKS with an RSA and an EC key, rotation, a client_credentials
token endpoint. pyiceberg's RestCatalog with token= and with credential= +
oauth2-server-uri=; every kind of bad token refused with the same 401; the role found by
skade.rest_oidc_roles or the role claim; a JWKS file beside the issuer's keys; a flood of
unknown key ids costs the provider a bounded number of fetches.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import tempfile
import time
import uuid

import jwt
import psycopg2
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from pyiceberg.catalog.rest import RestCatalog

import restenv
from idp import AUDIENCE, Provider, b64url
from restenv import alter_system, assert_error, call, sql, wait_for
REFUSED = "invalid or expired credentials"


def config_url():
    return f"{restenv.URI}/v1/config?warehouse={restenv.CATALOG}"


def status(token):
    return call("GET", config_url(), token=token).status_code


def refused(token):
    """401 in Iceberg's error model, with nothing that tells one refusal from another."""
    err = assert_error(call("GET", config_url(), token=token), 401, "NotAuthorizedException")
    assert err["message"] == REFUSED, err


@pytest.fixture(scope="module")
def pg():
    conn = psycopg2.connect(restenv.PG_DSN)
    conn.autocommit = True
    yield conn
    conn.close()


def make_role(pg, name, *options, grant="skade_reader"):
    sql(pg, f"DROP ROLE IF EXISTS {name}")
    sql(pg, f"CREATE ROLE {name} {' '.join(options) or 'LOGIN'}")
    if grant:
        sql(pg, f"GRANT {grant} TO {name}")


def new_token(pg, role, valid="1 hour"):
    return sql(pg, "SELECT skade.rest_create_token(%s, %s, 'test_rest_auth')", (role, valid))[0][0]


def token_id(token):
    return int(token.split("_")[1])


# ------------------------------------------------------------- static tokens


def test_token_of_nologin_role_refused(pg):
    make_role(pg, "auth_nl")
    t = new_token(pg, "auth_nl")
    assert status(t) == 200
    sql(pg, "ALTER ROLE auth_nl NOLOGIN")
    refused(t)
    # and a token cannot be made for it
    with pytest.raises(psycopg2.Error) as e:
        new_token(pg, "auth_nl")
    assert e.value.pgcode == "55000"
    sql(pg, "ALTER ROLE auth_nl LOGIN")
    assert status(t) == 200


def test_token_of_expired_role_refused(pg):
    make_role(pg, "auth_exp")
    t = new_token(pg, "auth_exp")
    assert status(t) == 200
    sql(pg, "ALTER ROLE auth_exp VALID UNTIL '2000-01-01'")
    refused(t)
    sql(pg, "ALTER ROLE auth_exp VALID UNTIL 'infinity'")
    assert status(t) == 200


def test_token_does_not_outlive_its_role(pg):
    make_role(pg, "auth_ghost", grant="skade_writer")
    t = new_token(pg, "auth_ghost")
    assert status(t) == 200
    sql(pg, "DROP ROLE auth_ghost")
    refused(t)
    make_role(pg, "auth_ghost", grant="skade_writer")
    refused(t)      # a stranger under the old name
    rows = sql(pg, "SELECT usable, refused_because FROM skade.rest_list_tokens() WHERE token_id = %s",
               (token_id(t),))
    assert rows == [(False, "its role no longer exists")]


def test_superuser_token_refused_unless_allowed(pg):
    make_role(pg, "auth_su")
    t = new_token(pg, "auth_su")
    sql(pg, "ALTER ROLE auth_su SUPERUSER")
    refused(t)
    with pytest.raises(psycopg2.Error) as e:
        new_token(pg, "auth_su")
    assert e.value.pgcode == "55000"
    try:
        alter_system(pg, rest_allow_superuser="on")
        assert wait_for(lambda: status(t) == 200)
    finally:
        alter_system(pg, rest_allow_superuser=None)
    assert wait_for(lambda: status(t) == 401)
    sql(pg, "ALTER ROLE auth_su NOSUPERUSER")


def test_revoke_by_id_never_by_secret(pg):
    make_role(pg, "auth_rv")
    t = new_token(pg, "auth_rv")
    assert t.startswith("skade_") and len(t.split("_")) == 3
    rows = sql(pg, "SELECT role, usable, comment FROM skade.rest_list_tokens() WHERE token_id = %s",
               (token_id(t),))
    assert rows == [("auth_rv", True, "test_rest_auth")]
    # no function takes the secret any more: it would reach the server log with log_statement
    assert sql(pg, "SELECT pg_get_function_identity_arguments(p.oid) FROM pg_proc p"
                   " WHERE p.proname = 'rest_revoke_token' AND p.pronamespace = 'skade'::regnamespace") \
        == [("token_id bigint",)]
    listed = json.dumps(sql(pg, "SELECT * FROM skade.rest_list_tokens()"), default=str)
    assert t.split("_")[2] not in listed
    assert sql(pg, "SELECT skade.rest_revoke_token(%s)", (token_id(t),)) == [(True,)]
    refused(t)
    assert sql(pg, "SELECT skade.rest_revoke_token(%s)", (token_id(t),)) == [(False,)]


def test_basic_credentials_follow_the_role(pg):
    make_role(pg, "auth_basic")
    t = new_token(pg, "auth_basic")
    basic = {"Authorization": "Basic " + base64.b64encode(f"auth_basic:{t}".encode()).decode()}
    assert call("GET", config_url(), token=None, headers=basic).status_code == 200
    sql(pg, "ALTER ROLE auth_basic NOLOGIN")
    assert_error(call("GET", config_url(), token=None, headers=basic), 401)


def test_anonymous_role_is_checked_too(pg):
    """skade.rest_anonymous_role: a group the operator chose (NOLOGIN is fine), never a
    superuser unless allowed, nor a role that is gone: then requests without credentials are
    refused as if none were set."""
    make_role(pg, "auth_anon", "NOLOGIN")
    url = config_url()
    try:
        alter_system(pg, rest_anonymous_role="auth_anon")
        assert wait_for(lambda: call("GET", url, token=None).status_code == 200)
        sql(pg, "ALTER ROLE auth_anon SUPERUSER")
        err = assert_error(call("GET", url, token=None), 401, "NotAuthorizedException")
        assert err["message"] == "credentials are required", err
        sql(pg, "ALTER ROLE auth_anon NOSUPERUSER")
        assert call("GET", url, token=None).status_code == 200
        sql(pg, "DROP ROLE auth_anon")
        assert_error(call("GET", url, token=None), 401, "NotAuthorizedException")
    finally:
        alter_system(pg, rest_anonymous_role=None)
    assert wait_for(lambda: call("GET", url, token=None).status_code == 401)


# ---------------------------------------------------------------- OpenID


@pytest.fixture(scope="module")
def oidc(pg):
    prov = Provider()
    make_role(pg, "oidc_alice")
    make_role(pg, "oidc_writer", grant="skade_writer")
    make_role(pg, "oidc_reader")
    make_role(pg, "oidc_engineer")
    make_role(pg, "oidc_group", "NOLOGIN")
    alter_system(pg, rest_oidc_issuers=prov.issuer, rest_oidc_audience=AUDIENCE,
               rest_oidc_refetch_interval="2s")
    ok = wait_for(lambda: status(prov.token()) == 200, timeout=15)
    try:
        assert ok, "the REST workers never accepted a token of the provider"
        yield prov
    finally:
        alter_system(pg, rest_oidc_issuers=None, rest_oidc_audience=None, rest_oidc_refetch_interval=None,
                   rest_oidc_jwks_file=None, rest_oidc_role_claim=None)
        sql(pg, "DELETE FROM skade.rest_oidc_roles")
        prov.server.shutdown()


def test_jwt_rs256_and_es256_accepted(oidc):
    assert status(oidc.token("rsa1")) == 200
    assert status(oidc.token("ec1")) == 200
    # a token without a kid: each key that may sign its alg is tried
    body = {"iss": oidc.issuer, "aud": [AUDIENCE, "other"], "sub": "oidc_alice", "exp": int(time.time()) + 60}
    assert status(jwt.encode(body, oidc.keys["ec1"], algorithm="ES256")) == 200


def test_jwt_runs_as_its_role(oidc, pg):
    """The role claim (sub) names the role; its privileges are those of SQL, and the commit
    log names it."""
    ns = f"oidc_{uuid.uuid4().hex[:8]}"
    writer = oidc.token(sub="oidc_writer")
    r = call("POST", restenv.url("namespaces"), token=oidc.token(sub="oidc_alice"), body={"namespace": [ns]})
    assert_error(r, 403, "ForbiddenException")         # a reader
    r = call("POST", restenv.url("namespaces"), token=writer, body={"namespace": [ns]})
    assert r.status_code == 200, r.text
    r = call("POST", restenv.url(f"namespaces/{ns}/tables"), token=writer,
             body={"name": "t", "schema": {"type": "struct", "schema-id": 0,
                                           "fields": [{"id": 1, "name": "id", "type": "long", "required": True}]}})
    assert r.status_code == 200, r.text
    assert sql(pg, "SELECT op, committed_by FROM skade.commit_log WHERE table_namespace = %s ORDER BY seq",
               (ns,)) == [("create", "oidc_writer")]
    assert call("DELETE", restenv.url(f"namespaces/{ns}/tables/t"), token=writer).status_code == 204
    assert call("DELETE", restenv.url(f"namespaces/{ns}"), token=writer).status_code == 204


@pytest.mark.parametrize("case", ["expired", "not yet valid", "no expiry", "wrong issuer", "wrong audience",
                                  "no audience", "wrong key", "alg none", "HS256 with the public key",
                                  "truncated", "signature of another token", "unknown alg", "crit header",
                                  "nologin role", "superuser", "no such role", "RSA key claiming ES256"])
def test_jwt_refused(oidc, case):
    now = int(time.time())
    good = oidc.token()
    h, p, s = good.split(".")
    if case == "expired":
        t = oidc.token(exp=now - 3600, nbf=now - 7200)
    elif case == "not yet valid":
        t = oidc.token(nbf=now + 3600, exp=now + 7200)
    elif case == "no expiry":
        t = oidc.token(exp=None)
    elif case == "wrong issuer":
        t = oidc.token(iss=oidc.issuer + "/other")
    elif case == "wrong audience":
        t = oidc.token(aud="another-service")
    elif case == "no audience":
        t = oidc.token(aud=None)
    elif case == "wrong key":
        t = oidc.token("rsa1", key=rsa.generate_private_key(65537, 2048))
    elif case == "alg none":
        t = b64url(json.dumps({"alg": "none", "kid": "rsa1"}).encode()) + "." + p + "."
    elif case == "HS256 with the public key":
        pem = oidc.keys["rsa1"].public_key().public_bytes(serialization.Encoding.PEM,
                                                          serialization.PublicFormat.SubjectPublicKeyInfo)
        head = b64url(json.dumps({"alg": "HS256", "kid": "rsa1"}).encode())
        sig = hmac.new(pem, f"{head}.{p}".encode(), hashlib.sha256).digest()
        t = f"{head}.{p}.{b64url(sig)}"
    elif case == "truncated":
        t = good[: len(good) - 12]
    elif case == "signature of another token":
        t = f"{h}.{oidc.token(sub='oidc_writer').split('.')[1]}.{s}"
    elif case == "unknown alg":
        t = b64url(json.dumps({"alg": "RS1", "kid": "rsa1"}).encode()) + "." + p + "." + s
    elif case == "crit header":
        t = oidc.token(headers={"crit": ["exp"]})
    elif case == "nologin role":
        t = oidc.token(sub="oidc_group")
    elif case == "superuser":
        t = oidc.token(sub="postgres")
    elif case == "no such role":
        t = oidc.token(sub="nobody_at_all")
    elif case == "RSA key claiming ES256":
        t = b64url(json.dumps({"alg": "ES256", "kid": "rsa1"}).encode()) + "." + p + "." + b64url(b"\1" * 64)
    refused(t)


def test_jwt_role_from_the_mapping_table(oidc, pg):
    iss = oidc.issuer
    sql(pg, "SELECT skade.rest_map_oidc_role(%s, 'groups', 'analysts', 'oidc_reader')", (iss,))
    sql(pg, "SELECT skade.rest_map_oidc_role(%s, 'groups', 'engineers', 'oidc_engineer')", (iss,))
    sql(pg, "SELECT skade.rest_map_oidc_role(%s, 'sub', 'bob', 'oidc_writer')", (iss,))
    sql(pg, "SELECT skade.rest_map_oidc_role(%s, 'realm_access.roles', 'ops', 'oidc_writer')", (iss,))
    sql(pg, "SELECT skade.rest_map_oidc_role(%s, 'groups', 'disabled', 'oidc_group')", (iss,))
    try:
        ns = f"oidc_{uuid.uuid4().hex[:8]}"
        create = lambda t: call("POST", restenv.url("namespaces"), token=t, body={"namespace": [ns]})  # noqa: E731
        # a group: the reader's privileges (sub "nobody" names no role by itself)
        reader = oidc.token(sub="nobody", groups=["analysts", "x"])
        assert status(reader) == 200
        assert_error(create(reader), 403, "ForbiddenException")
        # two groups, two roles: ambiguous
        refused(oidc.token(sub="nobody", groups=["analysts", "engineers"]))
        # the subject's own row beats its groups
        r = create(oidc.token(sub="bob", groups=["analysts", "engineers"]))
        assert r.status_code == 200, r.text
        call("DELETE", restenv.url(f"namespaces/{ns}"), token=oidc.token(sub="bob"))
        # a nested claim
        assert status(oidc.token(sub="nobody", realm_access={"roles": ["ops"]})) == 200
        # a mapping to a NOLOGIN role is refused
        refused(oidc.token(sub="nobody", groups=["disabled"]))
        # with the role claim off only the table counts
        alter_system(pg, rest_oidc_role_claim="")
        assert wait_for(lambda: status(oidc.token(sub="oidc_alice")) == 401)
        assert status(oidc.token(sub="bob")) == 200
        alter_system(pg, rest_oidc_role_claim="preferred_username")
        assert wait_for(lambda: status(oidc.token(sub="x", preferred_username="oidc_alice")) == 200)
        # the mapping binds the role itself: dropped and made again, it is a stranger
        sql(pg, "SELECT skade.rest_unmap_oidc_role(%s, 'sub', 'bob')", (iss,))
        refused(oidc.token(sub="bob"))
    finally:
        alter_system(pg, rest_oidc_role_claim=None)
        sql(pg, "DELETE FROM skade.rest_oidc_roles")
    assert wait_for(lambda: status(oidc.token(sub="oidc_alice")) == 200)


def test_jwt_key_rotation_and_refetch_bound(oidc):
    """A key the provider starts to publish is picked up on its first token; tokens with
    made-up key ids do not make skade fetch the key set more than once per interval per
    worker."""
    oidc.keys["rsa2"] = rsa.generate_private_key(65537, 2048)
    oidc.published.append("rsa2")
    t = oidc.token("rsa2")
    assert wait_for(lambda: status(t) == 200, timeout=10)
    time.sleep(2.5)                 # past the refetch interval of every worker
    hits = oidc.jwks_hits
    start = time.monotonic()
    for i in range(40):
        refused(oidc.token("rsa1", headers={"kid": f"made-up-{i}"}))
    spent = time.monotonic() - start
    workers = 4                     # skade.rest_max_workers
    bound = workers * (1 + int(spent / 2.0) + 1)
    assert oidc.jwks_hits - hits <= bound, (oidc.jwks_hits - hits, spent)
    # a key the provider stops publishing stops working once the set is fetched again
    oidc.published.remove("rsa2")
    time.sleep(2.5)
    refused(oidc.token("rsa2", headers={"kid": "made-up-again"}))  # makes the worker refetch
    assert wait_for(lambda: status(oidc.token("rsa2")) == 401, timeout=10)


def test_jwt_from_the_jwks_file(oidc, pg):
    d = tempfile.mkdtemp(prefix="skade-jwks-")
    os.chmod(d, 0o755)
    path = os.path.join(d, "jwks.json")
    k1 = ec.generate_private_key(ec.SECP384R1())
    k2 = rsa.generate_private_key(65537, 3072)

    def write(kid, key):
        with open(path + ".tmp", "w") as f:
            json.dump({"keys": [Provider.jwk(kid, key), {"kty": "oct", "k": "c2VjcmV0", "kid": "hmac"}]}, f)
        os.chmod(path + ".tmp", 0o644)
        os.replace(path + ".tmp", path)

    write("file1", k1)
    alter_system(pg, rest_oidc_jwks_file=path)
    try:
        t1 = oidc.token("file1", key=k1, alg="ES384")
        assert wait_for(lambda: status(t1) == 200)
        # an HS256 token "signed" with the file's symmetric key: never accepted
        head = b64url(json.dumps({"alg": "HS256", "kid": "hmac"}).encode())
        body = t1.split(".")[1]
        refused(f"{head}.{body}.{b64url(hmac.new(b'secret', f'{head}.{body}'.encode(), hashlib.sha256).digest())}")
        # the file replaced: its old key no longer counts, the new one does
        write("file2", k2)
        t2 = oidc.token("file2", key=k2, alg="PS256")
        assert wait_for(lambda: status(t2) == 200)
        refused(t1)
        # the issuer's own keys still count beside the file
        assert status(oidc.token("rsa1")) == 200
    finally:
        alter_system(pg, rest_oidc_jwks_file=None)


def test_pyiceberg_with_a_token_and_with_client_credentials(oidc, pg):
    ns = f"oidc_py_{uuid.uuid4().hex[:8]}"
    cat = RestCatalog("oidc", uri=restenv.URI, warehouse=restenv.CATALOG, token=oidc.token(sub="oidc_writer"))
    cat.create_namespace(ns)
    assert (ns,) in cat.list_namespaces()
    oidc.clients["oidc_writer"] = ("s3cret", {})
    hits = oidc.token_hits
    cat2 = RestCatalog("oidc2", uri=restenv.URI, warehouse=restenv.CATALOG, credential="oidc_writer:s3cret",
                       **{"oauth2-server-uri": oidc.token_url, "scope": "catalog"})
    assert oidc.token_hits > hits
    assert (ns,) in cat2.list_namespaces()
    cat2.drop_namespace(ns)
    # a wrong secret: the provider refuses, no catalog
    with pytest.raises(Exception):
        RestCatalog("oidc3", uri=restenv.URI, warehouse=restenv.CATALOG, credential="oidc_writer:wrong",
                    **{"oauth2-server-uri": oidc.token_url})
