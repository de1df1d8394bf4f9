"""A clean shutdown with REST connections open (test/rest/run.sh runs it last: it stops the
server). Opens idle connections, keep-alive connections after an answer, one with half its
headers and one with half its body, then `pg_ctl stop -m fast`: it must finish (well within
60 s: a hang detector, not a timing assertion), every open connection is closed by the
server, the REST port refuses new connections, and the log shows the workers leaving without
a crash."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import restenv


def main() -> int:
    data = Path(restenv.env("SKADE_REST_DATA"))
    pg_ctl = Path(restenv.env("SKADE_REST_PGBIN")) / "pg_ctl"
    log = data / "server.log"
    log_start = log.stat().st_size
    auth = f"Authorization: Bearer {restenv.WRITER_TOKEN}\r\n".encode()
    conns = []
    for _ in range(4):
        conns.append(socket.create_connection((restenv.HOST, restenv.PORT)))  # idle
    for _ in range(4):  # keep-alive, after an answer
        s = socket.create_connection((restenv.HOST, restenv.PORT))
        s.sendall(b"GET /v1/config HTTP/1.1\r\nHost: x\r\n" + auth + b"\r\n")
        s.settimeout(10)
        assert s.recv(65536).startswith(b"HTTP/1.1 200"), "no answer before the shutdown"
        conns.append(s)
    s = socket.create_connection((restenv.HOST, restenv.PORT))  # half the headers
    s.sendall(b"GET /v1/config HTTP/1.1\r\nHost: x\r\n")
    conns.append(s)
    s = socket.create_connection((restenv.HOST, restenv.PORT))  # half the body
    s.sendall(b"POST /v1/" + restenv.CATALOG.encode() + b"/namespaces HTTP/1.1\r\nHost: x\r\n" + auth +
              b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"namespace\": [")
    conns.append(s)

    stop = subprocess.run(["runuser", "-u", "postgres", "--", str(pg_ctl), "-D", str(data), "-m", "fast",
                           "-w", "-t", "60", "stop"], capture_output=True, text=True, timeout=90)
    failures = []
    if stop.returncode != 0:
        failures.append(f"pg_ctl stop -m fast failed: {stop.stdout} {stop.stderr}")
    for i, c in enumerate(conns):
        c.settimeout(5)
        try:
            while c.recv(65536):
                pass
        except socket.timeout:
            failures.append(f"connection {i} is still open after the shutdown")
        except OSError:
            pass  # reset: closed
        c.close()
    try:
        socket.create_connection((restenv.HOST, restenv.PORT), timeout=5).close()
        failures.append("the REST port still accepts connections")
    except OSError:
        pass
    text = log.read_text(errors="replace")[log_start:]
    if "database system is shut down" not in text:
        failures.append("the server log does not show a shutdown")
    for bad in ("terminated by signal", "PANIC", "TRAP", "was terminated"):
        if bad in text:
            failures.append(f"the server log shows {bad!r}")
    if failures:
        print("\n".join(failures))
        print("---- server log since the check started\n" + text[-4000:])
        return 1
    print("clean shutdown with", len(conns), "REST connections open")
    return 0


if __name__ == "__main__":
    sys.exit(main())
