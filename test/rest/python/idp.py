"""Identity fixtures the REST suites share: a small OpenID provider (Provider: discovery, a
JWKS with an RSA and an EC key, rotation, a token endpoint for client_credentials and
token-exchange) and a certificate authority (Pki: a CA and the certificates it signs, PEM
files, a PKCS12 trust store for Java). Keys come from `cryptography`, tokens from PyJWT.
"""

from __future__ import annotations

import base64
import datetime
import ipaddress
import json
import os
import pwd
import subprocess
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

import jwt
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

AUDIENCE = "skade-test"


def b64url(b: bytes) -> str:
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


class Provider:
    """An OpenID provider: discovery, JWKS (published keys), a client_credentials and
    token-exchange token endpoint. Keys: RSA 2048 ("rsa1") and EC P-256 ("ec1")."""

    def __init__(self):
        self.keys = {"rsa1": rsa.generate_private_key(65537, 2048),
                     "ec1": ec.generate_private_key(ec.SECP256R1())}
        self.published = ["rsa1", "ec1"]
        self.clients = {}           # client_id -> (secret, claims)
        self.jwks_hits = 0
        self.token_hits = 0
        self.grants = []            # grant_type of every token request answered 200
        self.token_lifetime = 600   # expires_in of the tokens the endpoint issues
        prov = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def answer(self, code, body):
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                if self.path == "/realms/test/.well-known/openid-configuration":
                    self.answer(200, {"issuer": prov.issuer, "jwks_uri": prov.issuer + "/certs",
                                      "token_endpoint": prov.token_url})
                elif self.path == "/realms/test/certs":
                    prov.jwks_hits += 1
                    self.answer(200, prov.jwks())
                else:
                    self.answer(404, {"error": "not found"})

            def do_POST(self):
                n = int(self.headers.get("Content-Length", "0"))
                form = {k: v[0] for k, v in parse_qs(self.rfile.read(n).decode()).items()}
                if self.path != "/realms/test/token":
                    return self.answer(404, {"error": "not found"})
                prov.token_hits += 1
                cid, secret = form.get("client_id"), form.get("client_secret")
                auth = self.headers.get("Authorization", "")
                if auth.startswith("Basic "):
                    cid, _, secret = base64.b64decode(auth[6:]).decode().partition(":")
                if form.get("grant_type") == "urn:ietf:params:oauth:grant-type:token-exchange":
                    # Java's refresh: a new token for the subject of a valid one
                    try:
                        claims = prov.verify(form.get("subject_token", ""))
                    except jwt.InvalidTokenError:
                        return self.answer(400, {"error": "invalid_grant"})
                    cid = claims.get("sub")
                    if cid not in prov.clients:
                        return self.answer(400, {"error": "invalid_grant"})
                elif form.get("grant_type") != "client_credentials" or prov.clients.get(cid, (None,))[0] != secret:
                    return self.answer(401, {"error": "invalid_client"})
                tok = prov.token(sub=cid, exp=int(time.time()) + prov.token_lifetime, **prov.clients[cid][1])
                prov.grants.append(form.get("grant_type"))
                self.answer(200, {"access_token": tok, "token_type": "Bearer", "expires_in": prov.token_lifetime,
                                  "issued_token_type": "urn:ietf:params:oauth:token-type:access_token"})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        port = self.server.server_address[1]
        self.issuer = f"http://127.0.0.1:{port}/realms/test"
        self.token_url = f"{self.issuer}/token"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def verify(self, token):
        """The claims of a token this provider issued (signature, audience, expiry checked)."""
        kid = jwt.get_unverified_header(token).get("kid")
        key = self.keys[kid].public_key()
        return jwt.decode(token, key, algorithms=["RS256", "ES256"], audience=AUDIENCE, issuer=self.issuer)

    @staticmethod
    def jwk(kid, key):
        pub = key.public_key()
        alg = RSAAlgorithm if isinstance(key, rsa.RSAPrivateKey) else ECAlgorithm
        d = alg.to_jwk(pub, as_dict=True)
        d.update(kid=kid, use="sig")
        return d

    def jwks(self):
        return {"keys": [self.jwk(k, self.keys[k]) for k in self.published]}

    def token(self, kid="rsa1", key=None, alg=None, headers=None, **claims):
        now = int(time.time())
        body = {"iss": self.issuer, "aud": AUDIENCE, "sub": "oidc_alice", "iat": now,
                "nbf": now, "exp": now + 300}
        body.update(claims)
        body = {k: v for k, v in body.items() if v is not None}
        key = key or self.keys[kid]
        alg = alg or ("RS256" if isinstance(key, rsa.RSAPrivateKey) else "ES256")
        return jwt.encode(body, key, algorithm=alg, headers={"kid": kid, **(headers or {})})


def name(cn):
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


class Pki:
    """A CA and certificates it signs, as PEM files in a directory the server can read."""

    def __init__(self, label):
        self.dir = tempfile.mkdtemp(prefix=f"skade-tls-{label}-")
        os.chmod(self.dir, 0o755)
        self.key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.timezone.utc)
        self.cert = (x509.CertificateBuilder().subject_name(name(f"skade test CA {label}"))
                     .issuer_name(name(f"skade test CA {label}")).public_key(self.key.public_key())
                     .serial_number(x509.random_serial_number())
                     .not_valid_before(now - datetime.timedelta(minutes=5))
                     .not_valid_after(now + datetime.timedelta(days=1))
                     .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                     .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                                  content_commitment=False, key_encipherment=False,
                                                  data_encipherment=False, key_agreement=False,
                                                  encipher_only=False, decipher_only=False), critical=True)
                     .sign(self.key, hashes.SHA256()))
        self.ca_file = self.write("ca.pem", self.cert.public_bytes(serialization.Encoding.PEM))

    def write(self, fname, data, mode=0o644):
        path = os.path.join(self.dir, fname)
        with open(path, "wb") as f:
            f.write(data)
        os.chmod(path, mode)
        return path

    def issue(self, label, server=True):
        """(cert file, key file): the key owned by the server's OS user, mode 0600."""
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.timezone.utc)
        b = (x509.CertificateBuilder().subject_name(name(label)).issuer_name(self.cert.subject)
             .public_key(key.public_key()).serial_number(x509.random_serial_number())
             .not_valid_before(now - datetime.timedelta(minutes=5))
             .not_valid_after(now + datetime.timedelta(days=1)))
        if server:
            b = b.add_extension(x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        cert = b.sign(self.key, hashes.SHA256())
        cert_file = self.write(f"{label}.crt", cert.public_bytes(serialization.Encoding.PEM))
        key_file = self.write(f"{label}.key", key.private_bytes(serialization.Encoding.PEM,
                                                                serialization.PrivateFormat.PKCS8,
                                                                serialization.NoEncryption()), 0o600)
        pg_user = pwd.getpwnam("postgres")
        os.chown(key_file, pg_user.pw_uid, pg_user.pw_gid)
        return cert_file, key_file, cert

    def truststore(self, password="changeit"):
        """A PKCS12 trust store holding the CA (keytool, from the JDK), for Java clients."""
        path = os.path.join(self.dir, "trust.p12")
        subprocess.run(["keytool", "-importcert", "-noprompt", "-alias", "skade-test-ca", "-file",
                        self.ca_file, "-keystore", path, "-storetype", "PKCS12", "-storepass", password],
                       check=True, capture_output=True)
        os.chmod(path, 0o644)
        return path
