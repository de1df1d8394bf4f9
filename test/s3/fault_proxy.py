"""An HTTP proxy between skade and an S3 server whose behaviour a test
switches (test/faults/s3.sh).

Usage: fault_proxy.py PORT CONTROL_PORT UPSTREAM      (UPSTREAM: http://host:port)

Requests to 127.0.0.1:PORT are forwarded to UPSTREAM with their headers as
sent (Host included: the signature covers it) unless a fault applies.  The
control server on 127.0.0.1:CONTROL_PORT answers:

  GET /set?mode=M[&count=N][&match=S][&delay=SECONDS]
        the next N requests (default: all) whose "METHOD path" contains S
        (default: any) get fault M, the others pass; mode pass clears it
  GET /stats          JSON: {"requests": [["METHOD path", "fault"], ...]}
                      every request since the last /reset
  GET /reset          forget the requests seen

Modes (M):
  pass        forward
  refuse      stop listening (connections refused; open connections are
              closed at their next request); any other mode listens again
  delay       forward, answer after SECONDS
  hang        never answer (until the mode changes; then close)
  503         503 SlowDown (S3 XML error body)
  500         500 InternalError
  403         403 AccessDenied
  404         404 NoSuchKey
  truncate    forward; send the headers (true Content-Length) and half the
              body, then close
  shortbody   forward; send the body without its last 10 bytes with a
              Content-Length that says so, ETag kept
  shortbody_noetag   the same without ETag (nothing tells it is short)
  badetag     forward; one byte of the body changed, length and ETag kept
  lost        forward (the server acts), then answer 500 as if the answer
              was lost
"""

from __future__ import annotations

import http.client
import http.server
import json
import socket
import sys
import threading
import time
import urllib.parse

PORT, CTL_PORT, UPSTREAM = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
UP = urllib.parse.urlparse(UPSTREAM)

lock = threading.Lock()
state = {"mode": "pass", "count": -1, "match": "", "delay": 0.0, "gen": 0, "connections": 0}
seen: list = []

ERRORS = {
    "503": (503, "SlowDown", "Please reduce your request rate."),
    "500": (500, "InternalError", "We encountered an internal error. Please try again."),
    "403": (403, "AccessDenied", "Access Denied"),
    "404": (404, "NoSuchKey", "The specified key does not exist."),
}


def take(line: str) -> tuple[str, float, int]:
    """the fault for this request (consumes one of count)"""
    with lock:
        mode = state["mode"]
        if mode != "pass" and state["match"] in line and state["count"] != 0:
            if state["count"] > 0:
                state["count"] -= 1
            seen.append([line, mode])
            return mode, state["delay"], state["gen"]
        seen.append([line, "pass"])
        return "pass", 0.0, state["gen"]


class Proxy(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def _forward(self, body: bytes):
        conn = http.client.HTTPConnection(UP.hostname, UP.port, timeout=60)
        conn.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
        for k, v in self.headers.items():
            conn.putheader(k, v)
        conn.endheaders(body if body else None)
        r = conn.getresponse()
        data = r.read()
        headers = [(k, v) for k, v in r.getheaders()
                   if k.lower() not in ("content-length", "transfer-encoding", "connection")]
        conn.close()
        return r.status, r.reason, headers, data

    def _send(self, status, reason, headers, data, length=None):
        self.send_response_only(status, reason)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data) if length is None else length))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)
        self.wfile.flush()

    def _handle(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        line = f"{self.command} {self.path}"
        if state["mode"] == "refuse":
            seen.append([line, "refuse"])
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        mode, delay, gen = take(line)
        if mode in ERRORS:
            status, code, msg = ERRORS[mode]
            xml = (f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code>'
                   f'<Message>{msg}</Message><RequestId>fault</RequestId></Error>').encode()
            self._send(status, "", [("Content-Type", "application/xml")], xml)
            return
        if mode == "hang":
            while True:
                with lock:
                    if state["gen"] != gen:
                        break
                time.sleep(0.1)
            self.close_connection = True
            return
        status, reason, headers, data = self._forward(body)
        if mode == "lost":
            xml = b"<Error><Code>InternalError</Code><Message>lost</Message></Error>"
            self._send(500, "", [("Content-Type", "application/xml")], xml)
            return
        if mode == "delay":
            time.sleep(delay)
        if status == 200 and self.command == "GET" and data:
            if mode == "truncate":
                self._send(status, reason, headers, data[:len(data) // 2], length=len(data))
                self.close_connection = True
                return
            if mode in ("shortbody", "shortbody_noetag"):
                if mode == "shortbody_noetag":
                    headers = [(k, v) for k, v in headers if k.lower() != "etag"]
                self._send(status, reason, headers, data[:-10])
                return
            if mode == "badetag":
                i = len(data) // 2
                data = data[:i] + bytes([data[i] ^ 0x01]) + data[i + 1:]
        self._send(status, reason, headers, data)

    do_GET = do_PUT = do_DELETE = do_HEAD = do_POST = _handle


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def get_request(self):
        got = super().get_request()
        with lock:
            state["connections"] += 1   # connections accepted (keep-alive: fewer than requests)
        return got


data_server = None


def listen(on: bool):
    global data_server
    if on and data_server is None:
        data_server = Server(("127.0.0.1", PORT), Proxy)
        threading.Thread(target=data_server.serve_forever, daemon=True).start()
    elif not on and data_server is not None:
        data_server.shutdown()
        data_server.server_close()
        data_server = None


class Control(http.server.BaseHTTPRequestHandler):
    def log_message(self, fmt, *args):
        pass

    def do_GET(self):
        u = urllib.parse.urlparse(self.path)
        q = dict(urllib.parse.parse_qsl(u.query))
        out = {"ok": True}
        if u.path == "/set":
            with lock:
                state.update(mode=q.get("mode", "pass"), count=int(q.get("count", -1)),
                             match=q.get("match", ""), delay=float(q.get("delay", 0)),
                             gen=state["gen"] + 1)
            listen(state["mode"] != "refuse")
        elif u.path == "/stats":
            with lock:
                out = {"requests": list(seen), "mode": state["mode"], "count": state["count"],
                       "connections": state["connections"]}
        elif u.path == "/reset":
            with lock:
                seen.clear()
        b = json.dumps(out).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)


listen(True)
http.server.ThreadingHTTPServer(("127.0.0.1", CTL_PORT), Control).serve_forever()
