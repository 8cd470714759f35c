#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""A scriptable HTTP receiver for the transport tests (standard library only).

Listens on 127.0.0.1, port chosen by the kernel, and prints the port as the first line of
stdout. Each request is recorded in --dir as NNNN.meta (text: "method M", "path P",
"peer HOST:PORT", "raw_length N", "gzip 0|1", one "header name: value" line per header with
lowercased names) and NNNN.body (the body, gunzipped when Content-Encoding said gzip). The
record is written as soon as the body is read, before any scripted delay, so a test can see
that a request is in flight.

The answers come from --script, a JSON file:
  {"responses": [ACTION, ...], "default": ACTION}
request i gets responses[i], later ones get "default" (200 with an empty body unless given).
ACTION: {"status": 200, "headers": {"Name": "value"}, "body": "text" | "body_hex": "0a07...",
         "content_type": "...", "delay": seconds, "retry_after_date_in": seconds}
"retry_after_date_in" adds a Retry-After header holding an HTTP-date that many seconds ahead.

--down S binds the port at once but listens only after S seconds: until then a connection is
refused, as by a receiver that is down. --lifetime S (default 120) and --max-requests N (default
1000) bound the process; the test kills it anyway.
"""

import argparse
import email.utils
import gzip
import json
import os
import socketserver
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Receiver(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def server_bind(self):
        # HTTPServer.server_bind() would look our name up in DNS: not wanted, maybe slow.
        socketserver.TCPServer.server_bind(self)
        self.server_name = "127.0.0.1"
        self.server_port = self.socket.getsockname()[1]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the transport expects

    def log_message(self, fmt, *args):
        pass

    def read_body(self):
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            data = b""
            while True:
                size = int(self.rfile.readline().strip().split(b";")[0], 16)
                if size == 0:
                    self.rfile.readline()
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length", "0")))

    def record(self, raw):
        st = self.server.state
        with st["lock"]:
            index = st["count"]
            st["count"] += 1
        gz = "gzip" in self.headers.get("Content-Encoding", "").lower()
        body = raw
        if gz:
            try:
                body = gzip.decompress(raw)
            except Exception as e:  # recorded as such: the test then fails on the body
                body = ("gunzip failed: %s" % e).encode()
        lines = [
            "method %s" % self.command,
            "path %s" % self.path,
            "peer %s:%d" % self.client_address[:2],
            "raw_length %d" % len(raw),
            "gzip %d" % (1 if gz else 0),
        ]
        for name, value in self.headers.items():
            lines.append("header %s: %s" % (name.lower(), value))
        base = os.path.join(st["dir"], "%04d" % index)
        with open(base + ".body.tmp", "wb") as f:
            f.write(body)
        os.rename(base + ".body.tmp", base + ".body")
        with open(base + ".meta.tmp", "w") as f:
            f.write("\n".join(lines) + "\n")
        # .meta last: its presence says the record is complete
        os.rename(base + ".meta.tmp", base + ".meta")
        return index

    def answer(self, index):
        script = self.server.state["script"]
        responses = script.get("responses", [])
        action = responses[index] if index < len(responses) else script.get("default", {})
        if action.get("delay"):
            time.sleep(float(action["delay"]))
        if "body_hex" in action:
            body = bytes.fromhex(action["body_hex"])
        else:
            body = action.get("body", "").encode()
        self.send_response(int(action.get("status", 200)))
        if "content_type" in action:
            self.send_header("Content-Type", action["content_type"])
        for name, value in action.get("headers", {}).items():
            self.send_header(name, value)
        if "retry_after_date_in" in action:
            when = time.time() + float(action["retry_after_date_in"])
            self.send_header("Retry-After", email.utils.formatdate(when, usegmt=True))
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def handle_any(self):
        index = self.record(self.read_body())
        self.answer(index)
        st = self.server.state
        if index + 1 >= st["max_requests"]:
            threading.Thread(target=self.server.shutdown, daemon=True).start()

    do_POST = handle_any
    do_PUT = handle_any
    do_GET = handle_any


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", required=True)
    ap.add_argument("--script")
    ap.add_argument("--down", type=float, default=0)
    ap.add_argument("--lifetime", type=float, default=120)
    ap.add_argument("--max-requests", type=int, default=1000)
    args = ap.parse_args()

    script = {}
    if args.script:
        with open(args.script) as f:
            script = json.load(f)

    # Whatever happens, do not outlive the test by much.
    def expire():
        time.sleep(args.lifetime)
        os._exit(3)

    threading.Thread(target=expire, daemon=True).start()

    server = Receiver(("127.0.0.1", 0), Handler, bind_and_activate=False)
    server.state = {
        "lock": threading.Lock(),
        "count": 0,
        "dir": args.dir,
        "script": script,
        "max_requests": args.max_requests,
    }
    server.server_bind()
    if args.down <= 0:
        # Listening before the port is told: the test may connect at once.
        server.server_activate()
    print(server.server_port, flush=True)
    # The test reads the port and closes its end: nothing more may go to stdout.
    sys.stdout = open(os.devnull, "w")
    if args.down > 0:
        # Bound but not listening: connections are refused, as by a receiver that is down.
        time.sleep(args.down)
        server.server_activate()
    try:
        server.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass
    server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
