"""The local S3 server of the suite (test/s3/run.sh started it), from the environment.

S3_ENDPOINT, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION: the moto server and the key
it checks signatures against (test/s3/lib.sh start_s3). SKADE_S3_BUCKET: the bucket under
skade.allowed_roots (the warehouse is s3://BUCKET/wh, skade.write_roots is s3://BUCKET/wh);
SKADE_S3_OUTSIDE_BUCKET: a bucket the clients may write but skade may not read;
SKADE_S3_DIR: the server's directory (moto.log lists every request it answered);
SKADE_S3_ALT_PORT: a port listed in skade.s3_allowed_endpoints as http://127.0.0.1:PORT,
that a test binds itself (a counting relay to moto).
"""

from __future__ import annotations

import os
import re
import socket
import threading
from contextlib import contextmanager
from pathlib import Path

from pyarrow import fs

from pgenv import sqlalchemy_uri
from pyiceberg.catalog.sql import SqlCatalog


def env(key: str) -> str:
    v = os.environ.get(key)
    if not v:
        raise RuntimeError(f"{key} is not set: run the suite through test/s3/run.sh")
    return v


ENDPOINT = env("S3_ENDPOINT")
BUCKET = os.environ.get("SKADE_S3_BUCKET", "skade-wh")
OUTSIDE = os.environ.get("SKADE_S3_OUTSIDE_BUCKET", "skade-outside")
REGION = os.environ.get("AWS_REGION", "us-east-1")
WAREHOUSE = f"s3://{BUCKET}/wh"


def s3_properties(endpoint: str = ENDPOINT) -> dict[str, str]:
    """What a user gives pyiceberg for an S3-compatible server: pyarrow's S3 FileIO with
    an endpoint override, the key, the region (without one pyarrow asks AWS where the
    bucket is). pyarrow addresses buckets path-style whenever an endpoint is given:
    s3.path-style-access is the Java client's name and is set for symmetry only."""
    return {
        "py-io-impl": "pyiceberg.io.pyarrow.PyArrowFileIO",
        "s3.endpoint": endpoint,
        "s3.access-key-id": env("AWS_ACCESS_KEY_ID"),
        "s3.secret-access-key": env("AWS_SECRET_ACCESS_KEY"),
        "s3.region": REGION,
        "s3.path-style-access": "true",
    }


def make_catalog(name: str, warehouse: str = WAREHOUSE, **props: str) -> SqlCatalog:
    return SqlCatalog(name, uri=sqlalchemy_uri(), warehouse=warehouse, **{**s3_properties(), **props})


def filesystem() -> fs.S3FileSystem:
    return fs.S3FileSystem(endpoint_override=ENDPOINT, access_key=env("AWS_ACCESS_KEY_ID"),
                           secret_key=env("AWS_SECRET_ACCESS_KEY"), region=REGION)


def key_of(location: str) -> str:
    """s3://bucket/key (or s3a://, s3n://) as pyarrow names it: bucket/key."""
    return re.sub(r"^s3[an]?://", "", location)


def exists(location: str) -> bool:
    return filesystem().get_file_info(key_of(location)).type != fs.FileType.NotFound


def remove_prefix(location: str) -> None:
    """Every object under s3://bucket/prefix (a namespace's leftovers of an earlier run)."""
    s3 = filesystem()
    if s3.get_file_info(key_of(location)).type != fs.FileType.NotFound:
        s3.delete_dir(key_of(location))


# ------------------------------------------------------------ moto's request log

# werkzeug's access log: "METHOD PATH HTTP/1.1", coloured by status
_REQUEST = re.compile(r'"(?:\x1b\[[0-9;]*m)*(GET|PUT|HEAD|POST|DELETE) (\S+) HTTP/')


def requests() -> list[tuple[str, str]]:
    """Every request moto answered so far, as (method, path), in order."""
    log = Path(env("SKADE_S3_DIR")) / "moto.log"
    return [m.groups() for m in _REQUEST.finditer(log.read_text(errors="replace"))]


@contextmanager
def no_request():
    """Asserts that the block made no request to the S3 server at all."""
    before = len(requests())
    yield
    made = requests()[before:]
    assert made == [], f"requests reached the S3 server: {made}"


# ------------------------------------------------------------ a counting relay

class Relay:
    """A TCP relay on 127.0.0.1:port to the S3 server, counting the connections it took
    (forward=False: accepts and closes, a server that must never be contacted)."""

    def __init__(self, port: int, forward: bool = True):
        self.connections = 0
        self.open = 0   # connections open now, and the most open at once
        self.peak = 0
        self.lock = threading.Lock()
        self.pairs = []  # the relayed connections (cut closes them)
        self.forward = forward
        host, _, target = ENDPOINT.removeprefix("http://").partition(":")
        self.target = (host, int(target.rstrip("/")))
        self.sock = socket.create_server(("127.0.0.1", port), reuse_port=False)
        self.sock.settimeout(0.2)
        self.stopping = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _serve(self) -> None:
        while not self.stopping:
            try:
                conn, _ = self.sock.accept()
            except (socket.timeout, OSError):
                continue
            self.connections += 1
            if not self.forward:
                conn.close()
                continue
            upstream = socket.create_connection(self.target)
            with self.lock:
                self.open += 1
                self.peak = max(self.peak, self.open)
                self.pairs.append((conn, upstream))
            threading.Thread(target=self._relay, args=(conn, upstream), daemon=True).start()

    def _relay(self, conn: socket.socket, upstream: socket.socket) -> None:
        pipes = [threading.Thread(target=self._pipe, args=(a, b), daemon=True)
                 for a, b in ((conn, upstream), (upstream, conn))]
        for p in pipes:
            p.start()
        for p in pipes:
            p.join()
        with self.lock:
            self.open -= 1

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
            dst.shutdown(socket.SHUT_WR)  # the end of one direction only
        except OSError:
            for s in (src, dst):
                s.close()

    def close(self) -> None:
        self.stopping = True
        self.thread.join()
        self.sock.close()

    def cut(self) -> None:
        """close, and end every relayed connection: the endpoint is gone (refused)"""
        self.close()
        with self.lock:
            for pair in self.pairs:
                for s in pair:
                    try:
                        s.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                    s.close()
            self.pairs.clear()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
