#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""A stand-in for the kubelet's /pods endpoint, for tests/unit/test_kubelet.c (standard library
only). The real kubelet cannot run on a test machine (it needs a container runtime, a cluster and
root), so this server plays its part on the wire: HTTPS with a given certificate, bearer-token
authentication, and a recorded PodList as the answer.

Listens on 127.0.0.1, port chosen by the kernel, and prints the port as the first line of
stdout. GET /pods answers 200 with the --pods file when the request carries
"Authorization: Bearer <token>" with the token in --token-file (read at each request, so a test
can rotate it), and 401 otherwise, as the kubelet does. Other paths get 404.

--delay S holds every answer S seconds (a kubelet that hangs). --log FILE appends one line per
request: "GET /pods 200 auth=ok|bad|none". --lifetime S (default 60) bounds the process; the
test kills it anyway.
"""

import argparse
import socketserver
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def server_bind(self):
        # HTTPServer.server_bind() would look our name up in DNS: not wanted, maybe slow.
        socketserver.TCPServer.server_bind(self)
        self.server_name = "127.0.0.1"
        self.server_port = self.socket.getsockname()[1]

    def handle_error(self, request, client_address):
        # A client that refuses our certificate aborts the handshake: expected in the tests.
        pass


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def log_request_line(self, status, auth):
        path = self.server.opts.log
        if not path:
            return
        with self.server.log_lock, open(path, "a") as f:
            f.write("%s %s %d auth=%s\n" % (self.command, self.path, status, auth))

    def answer(self, status, body, ctype="text/plain"):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        if status == 401:
            self.send_header("WWW-Authenticate", 'Bearer realm="kubelet"')
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        opts = self.server.opts
        if opts.delay:
            time.sleep(opts.delay)
        with open(opts.token_file) as f:
            want = f.read().strip()
        got = self.headers.get("Authorization")
        auth = "none" if got is None else ("ok" if got == "Bearer " + want else "bad")
        if self.path != "/pods":
            self.log_request_line(404, auth)
            self.answer(404, b"404 page not found\n")
            return
        if auth != "ok":
            self.log_request_line(401, auth)
            self.answer(401, b"Unauthorized")
            return
        with open(opts.pods, "rb") as f:
            body = f.read()
        self.log_request_line(200, auth)
        self.answer(200, body, "application/json")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--pods", required=True)
    ap.add_argument("--token-file", required=True)
    ap.add_argument("--delay", type=float, default=0)
    ap.add_argument("--log")
    ap.add_argument("--lifetime", type=float, default=60)
    opts = ap.parse_args()

    srv = Server(("127.0.0.1", 0), Handler)
    srv.opts = opts
    srv.log_lock = threading.Lock()
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(opts.cert, opts.key)
    # The handshake happens in the handler's thread, on first read: a client that connects and
    # stalls must not block the accept loop.
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True, do_handshake_on_connect=False)
    print(srv.server_port, flush=True)
    threading.Timer(opts.lifetime, srv.shutdown).start()
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
