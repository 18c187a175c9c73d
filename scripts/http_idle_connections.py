#!/usr/bin/env python3
"""Idle connections against the command's HTTP mode, and a fresh client's call.

    scripts/http_idle_connections.py COMMAND NOFILE COUNT [OPTION...]

Starts COMMAND (the mcp-tool-errors binary) under `prlimit --nofile=NOFILE`
(util-linux; e.g. 512:512) with OPTIONs, in front of an upstream in this
script answering every POST with a result, all on 127.0.0.1. Opens COUNT
connections to it that send nothing, then times a `tools/call` on a new
connection (30 s at most), and prints how many of the COUNT the proxy closed,
how many descriptors it holds, and its log lines after `listening on`.
docs/http.md's figures on the limits on clients come from it.
"""

import http.client
import http.server
import json
import os
import socket
import subprocess
import sys
import threading
import time


class Upstream(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        request = json.loads(self.rfile.read(int(self.headers["content-length"])))
        answer = json.dumps({"jsonrpc": "2.0", "id": request["id"],
                             "result": {"content": [{"type": "text", "text": "ok"}]}}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args):
        pass


def main():
    command, nofile, count, options = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
    upstream = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{upstream.server_address[1]}/mcp"
    proxy = subprocess.Popen(
        ["prlimit", f"--nofile={nofile}", "--", command, *options,
         "--upstream", url, "--listen", "127.0.0.1:0"],
        stderr=subprocess.PIPE, text=True)
    port = int(proxy.stderr.readline().rsplit(":", 1)[1])
    log = []
    threading.Thread(target=lambda: log.extend(proxy.stderr), daemon=True).start()
    idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(count)]
    time.sleep(0.5)
    started = time.monotonic()
    client = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "echo", "arguments": {}}}
    try:
        client.request("POST", "/mcp", body=json.dumps(call),
                       headers={"content-type": "application/json",
                                "accept": "application/json, text/event-stream"})
        outcome = client.getresponse().status
    except OSError as error:
        outcome = repr(error)
    elapsed = time.monotonic() - started
    descriptors = len(os.listdir(f"/proc/{proxy.pid}/fd"))
    closed = 0
    for connection in idle:
        connection.setblocking(False)
        try:
            closed += connection.recv(1) == b""
        except BlockingIOError:
            pass
        except OSError:
            closed += 1
    print(f"{count} idle connections under {nofile} descriptors: the call {outcome} "
          f"in {elapsed:.3f} s; {closed} idle ones closed by the proxy; "
          f"{descriptors} descriptors open; {len(log)} log lines")
    for line in log[:3]:
        print("   ", line.rstrip())
    proxy.terminate()
    proxy.wait()


if __name__ == "__main__":
    main()
