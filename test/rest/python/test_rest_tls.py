"""TLS on the REST port: skade.rest_tls_cert_file / _key_file turn the
port to TLS 1.2+ only (reloaded, no restart); pyiceberg connects with ssl.cabundle, a client
trusting another CA fails the handshake, plain HTTP is refused; a certificate rotated on
reload serves new connections while old ones finish on the old one; an unusable key file
keeps the old certificate; skade.rest_tls_ca_file asks clients for certificates of its CA.

The module turns TLS on for the suite's server and off again at its end (the other modules
speak plain HTTP to the same port).
"""

from __future__ import annotations

import os
import socket
import ssl
import time

import psycopg2
import pytest
import requests
from cryptography.hazmat.primitives import serialization
from pyiceberg.catalog.rest import RestCatalog

import restenv
from idp import Pki
from restenv import alter_system, sql, wait_for

HTTPS = restenv.URI.replace("http://", "https://")


def served_cert(ca_file=None):
    """The certificate the REST port presents to a new connection (DER), and the version."""
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    with socket.create_connection((restenv.HOST, restenv.PORT), timeout=5) as s:
        with ctx.wrap_socket(s, server_hostname="127.0.0.1") as t:
            return t.getpeercert(binary_form=True), t.version()


def cert_der(cert):
    return cert.public_bytes(serialization.Encoding.DER)


@pytest.fixture(scope="module")
def pg():
    conn = psycopg2.connect(restenv.PG_DSN)
    conn.autocommit = True
    yield conn
    conn.close()


@pytest.fixture(scope="module")
def tls(pg):
    pki = Pki("a")
    cert_file, key_file, cert = pki.issue("server-a")
    alter_system(pg, rest_tls_cert_file=cert_file, rest_tls_key_file=key_file)
    try:
        assert wait_for(lambda: served_cert()[0] == cert_der(cert)), "the REST port never spoke TLS"
        yield pki, cert
    finally:
        conn = psycopg2.connect(restenv.PG_DSN)     # (a test restarts the server)
        conn.autocommit = True
        alter_system(conn, rest_tls_cert_file=None, rest_tls_key_file=None, rest_tls_ca_file=None)
        conn.close()
        assert wait_for(lambda: requests.get(f"{restenv.URI}/v1/config", timeout=5).status_code == 401), \
            "the REST port did not speak plain HTTP again"


def config(session=None, verify=True, cert=None):
    return (session or requests).get(f"{HTTPS}/v1/config?warehouse={restenv.CATALOG}",
                                     headers=restenv.auth(), verify=verify, cert=cert, timeout=10)


def test_tls_only_and_1_2_at_least(tls):
    pki, cert = tls
    assert config(verify=pki.ca_file).status_code == 200
    assert served_cert()[1] in ("TLSv1.2", "TLSv1.3")
    # plain HTTP on the TLS port: no answer in HTTP
    with pytest.raises(requests.RequestException):
        requests.get(f"{restenv.URI}/v1/config", headers=restenv.auth(), timeout=5)
    # TLS 1.1 is refused
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    try:
        ctx.minimum_version = ssl.TLSVersion.TLSv1
        ctx.maximum_version = ssl.TLSVersion.TLSv1_1
        ctx.set_ciphers("ALL:@SECLEVEL=0")
    except (ValueError, ssl.SSLError):
        pytest.skip("this OpenSSL cannot even offer TLS 1.1")
    with socket.create_connection((restenv.HOST, restenv.PORT), timeout=5) as s:
        with pytest.raises((ssl.SSLError, OSError)):
            ctx.wrap_socket(s, server_hostname="127.0.0.1")


def test_wrong_ca_fails_the_handshake(tls):
    other = Pki("other")
    with pytest.raises(requests.exceptions.SSLError):
        config(verify=other.ca_file)


def test_pyiceberg_over_https(tls, monkeypatch):
    # requests lets REQUESTS_CA_BUNDLE / CURL_CA_BUNDLE override a session's verify (the
    # cabundle pyiceberg sets): a client that names its CA must not have them set
    monkeypatch.delenv("REQUESTS_CA_BUNDLE", raising=False)
    monkeypatch.delenv("CURL_CA_BUNDLE", raising=False)
    pki, _ = tls
    cat = RestCatalog("tls", uri=HTTPS, token=restenv.WRITER_TOKEN, warehouse=restenv.CATALOG,
                      **{"ssl": {"cabundle": pki.ca_file}})
    ns = f"tls_{os.getpid()}"
    cat.create_namespace(ns)
    assert (ns,) in cat.list_namespaces()
    cat.drop_namespace(ns)
    with pytest.raises(Exception):
        RestCatalog("tls2", uri=HTTPS, token=restenv.WRITER_TOKEN, warehouse=restenv.CATALOG,
                    **{"ssl": {"cabundle": Pki("x").ca_file}})


def test_rotation_on_reload_keeps_open_connections(tls, pg):
    """A connection opened on certificate A is served to its end after the rotation to B
    (the suite's idle timeout is 2 s: the old connection is used again at once)."""
    import http.client
    pki, cert_a = tls
    ctx = ssl.create_default_context(cafile=pki.ca_file)
    old = http.client.HTTPSConnection(restenv.HOST, restenv.PORT, context=ctx, timeout=10)
    path = f"/v1/config?warehouse={restenv.CATALOG}"

    def get(conn):
        conn.request("GET", path, headers=restenv.auth())
        r = conn.getresponse()
        r.read()
        return r.status

    assert get(old) == 200
    assert old.sock.getpeercert(binary_form=True) == cert_der(cert_a)
    cert_file, key_file, cert_b = pki.issue("server-b")
    alter_system(pg, rest_tls_cert_file=cert_file, rest_tls_key_file=key_file)
    deadline = time.monotonic() + 10
    while served_cert()[0] != cert_der(cert_b):
        assert time.monotonic() < deadline, "the new certificate is not served"
        assert get(old) == 200          # kept busy meanwhile: never idle for 2 s
        time.sleep(0.1)
    assert get(old) == 200
    assert old.sock.getpeercert(binary_form=True) == cert_der(cert_a)
    old.close()
    # a key file others may read is refused: the served certificate stays
    bad_cert, bad_key, _ = pki.issue("server-c")
    os.chmod(bad_key, 0o644)
    alter_system(pg, rest_tls_cert_file=bad_cert, rest_tls_key_file=bad_key)
    time.sleep(1.0)
    assert served_cert()[0] == cert_der(cert_b)
    assert config(verify=pki.ca_file).status_code == 200
    alter_system(pg, rest_tls_cert_file=cert_file, rest_tls_key_file=key_file)


def test_client_certificates(tls, pg):
    pki, _ = tls
    clients = Pki("clients")
    good_cert, good_key, _ = clients.issue("client-1", server=False)
    stranger = Pki("stranger")
    bad_cert, bad_key, _ = stranger.issue("client-2", server=False)
    for f in (good_key, bad_key):
        os.chown(f, 0, 0)      # the client's files (root), not the server's
    alter_system(pg, rest_tls_ca_file=clients.ca_file)
    try:
        assert wait_for(lambda: config(verify=pki.ca_file).status_code == 401)
        r = config(verify=pki.ca_file)
        assert r.json()["error"]["type"] == "NotAuthorizedException"
        assert config(verify=pki.ca_file, cert=(good_cert, good_key)).status_code == 200
        r = None
        try:
            r = config(verify=pki.ca_file, cert=(bad_cert, bad_key))
        except requests.exceptions.SSLError:
            pass            # refused in the handshake: as good
        assert r is None or r.status_code == 401
    finally:
        alter_system(pg, rest_tls_ca_file=None)
    assert wait_for(lambda: config(verify=pki.ca_file).status_code == 200)


def test_tls_from_startup(tls, pg):
    """A server started with the TLS files set speaks TLS from its first connection (the
    listener reads them before it listens), and a restart without them speaks plain HTTP."""
    import subprocess
    pki, _ = tls
    cert_file, key_file, cert = pki.issue("server-start")
    sql(pg, "ALTER SYSTEM SET skade.rest_tls_cert_file = %s", (cert_file,))
    sql(pg, "ALTER SYSTEM SET skade.rest_tls_key_file = %s", (key_file,))
    data = restenv.env("SKADE_REST_DATA")
    pg_ctl = os.path.join(restenv.env("SKADE_REST_PGBIN"), "pg_ctl")

    def restart():
        subprocess.run(["runuser", "-u", "postgres", "--", pg_ctl, "-D", data, "-w", "-t", "60", "-m", "fast",
                        "-l", os.path.join(data, "server.log"), "restart"], check=True, capture_output=True)

    restart()
    assert wait_for(lambda: served_cert()[0] == cert_der(cert)), "not TLS after a restart with the files set"
    assert config(verify=pki.ca_file).status_code == 200
    conn = psycopg2.connect(restenv.PG_DSN)
    conn.autocommit = True
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'skade rest listener'")
            assert cur.fetchone() == (1,)
    finally:
        conn.close()
