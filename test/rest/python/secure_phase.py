"""Holds the REST suite's server on TLS with OpenID tokens while real clients run:

    secure_phase.py ::: COMMAND [ARGS...] [::: COMMAND [ARGS...] ...]

Starts the test OpenID provider (idp.Provider: a client "skade-secure-client" whose tokens live
SKADE_REST_TOKEN_LIFETIME seconds, mapped to the writer role in skade.rest_oidc_roles), makes a
CA and a server certificate (idp.Pki) and a PKCS12 trust store, turns skade's REST port to TLS
and accepts the provider's tokens (ALTER SYSTEM, reload), then runs each COMMAND with
SKADE_REST_SECURE_URI (https), SKADE_REST_CREDENTIAL, SKADE_REST_OAUTH2_URI,
SKADE_REST_TRUSTSTORE, SKADE_REST_CA_FILE, SKADE_REST_SECURE_ROLE and
SKADE_REST_TOKEN_LIFETIME in its environment. A command passes when it exits 0 and the
provider issued its client at least two tokens meanwhile (the first, and a refresh: a client
that went on with an expired token would still pass the server's leeway). At the end the
server speaks plain HTTP again. Exit status: the number of commands that failed.
"""

from __future__ import annotations

import os
import subprocess
import sys

import psycopg2
import requests

import restenv
from idp import AUDIENCE, Pki, Provider
from restenv import alter_system, sql, wait_for

LIFETIME = 8
CLIENT = "skade-secure-client"
SECRET = "skade-secure-secret"


def main(argv):
    commands, cur = [], None
    for a in argv:
        if a == ":::":
            cur = []
            commands.append(cur)
        elif cur is not None:
            cur.append(a)
    commands = [c for c in commands if c]
    if not commands:
        print(__doc__, file=sys.stderr)
        return 2
    conn = psycopg2.connect(restenv.PG_DSN)
    conn.autocommit = True
    prov = Provider()
    prov.token_lifetime = LIFETIME
    prov.clients[CLIENT] = (SECRET, {})
    pki = Pki("secure")
    cert_file, key_file, _ = pki.issue("server")
    https = restenv.URI.replace("http://", "https://")
    failed = 0
    try:
        sql(conn, "SELECT skade.rest_map_oidc_role(%s, 'sub', %s, %s)", (prov.issuer, CLIENT, restenv.WRITER_ROLE))
        alter_system(conn, rest_tls_cert_file=cert_file, rest_tls_key_file=key_file,
               rest_oidc_issuers=prov.issuer, rest_oidc_audience=AUDIENCE)
        probe = prov.token(sub=CLIENT)
        if not wait_for(lambda: requests.get(f"{https}/v1/config?warehouse={restenv.CATALOG}",
                                             headers={"Authorization": f"Bearer {probe}"},
                                             verify=pki.ca_file, timeout=5).status_code == 200, timeout=15):
            print("secure phase: the REST port never spoke TLS with the provider's tokens", file=sys.stderr)
            return len(commands)
        env = dict(os.environ, SKADE_REST_SECURE_URI=https, SKADE_REST_CREDENTIAL=f"{CLIENT}:{SECRET}",
                   SKADE_REST_OAUTH2_URI=prov.token_url, SKADE_REST_TRUSTSTORE=pki.truststore(),
                   SKADE_REST_CA_FILE=pki.ca_file, SKADE_REST_SECURE_ROLE=restenv.WRITER_ROLE,
                   SKADE_REST_TOKEN_LIFETIME=str(LIFETIME))
        for cmd in commands:
            before = len(prov.grants)
            rc = subprocess.call(cmd, env=env)
            grants = prov.grants[before:]
            print(f"secure phase: {cmd[0]} ... exit {rc}, tokens issued: {grants}", flush=True)
            if rc != 0 or len(grants) < 2:
                failed += 1
    finally:
        alter_system(conn, rest_tls_cert_file=None, rest_tls_key_file=None, rest_oidc_issuers=None,
               rest_oidc_audience=None)
        sql(conn, "DELETE FROM skade.rest_oidc_roles WHERE issuer = %s", (prov.issuer,))
        if not wait_for(lambda: requests.get(f"{restenv.URI}/v1/config", timeout=5).status_code == 401):
            print("secure phase: the REST port did not speak plain HTTP again", file=sys.stderr)
            failed += 1
        prov.server.shutdown()
        conn.close()
    return failed


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
