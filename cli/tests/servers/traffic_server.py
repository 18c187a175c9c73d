"""A server for the same traffic through every mode (`same_traffic.rs`).

On stdio (no argument), or over HTTP at `/mcp` (`--http`: the port it
listens on, on 127.0.0.1, is the first line it writes). It answers as the
official SDKs do where the test looks:

- ids are written back as the TypeScript SDK's servers write them (seen
  with server-everything: `9.0` comes back as `9`, `1e2` as `100`, `-0` as
  `0`): a number parsed, so `9e0` is `9` too;
- `initialize` and `ping` succeed; `tools/call` of `ok` succeeds with its
  text, of `fail` fails (`isError`) with its text, of anything else is an
  `isError` result saying the tool is unknown (as the Python SDK answers);
- a request with `_meta.progressToken` gets one `notifications/progress`
  first, its token written back as an id is;
- a batch is answered as one array, in reverse order; a member that is no
  request (no string method) is answered with `-32600`;
- notifications and responses get no answer.
"""

import json
import sys


def written_back(id):
    if isinstance(id, float) and id.is_integer():
        return int(id)
    return id


def answer(request):
    if not isinstance(request, dict) or not isinstance(request.get("method"), str):
        id = request.get("id") if isinstance(request, dict) else None
        error = {"code": -32600, "message": "Invalid Request"}
        return [], {"jsonrpc": "2.0", "id": written_back(id), "error": error}
    if "id" not in request:
        return [], None
    id = written_back(request["id"])
    params = request.get("params") or {}
    method = request["method"]
    before = []
    token = (params.get("_meta") or {}).get("progressToken")
    if token is not None:
        before.append({
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": written_back(token), "progress": 1, "total": 2},
        })
    if method == "initialize":
        result = {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "traffic", "version": "1"},
        }
    elif method == "tools/call":
        name = params.get("name")
        text = (params.get("arguments") or {}).get("text", "")
        if name == "ok":
            result = {"content": [{"type": "text", "text": text}], "isError": False}
        elif name == "fail":
            result = {"content": [{"type": "text", "text": text}], "isError": True}
        else:
            unknown = f"Unknown tool: {name}"
            result = {"content": [{"type": "text", "text": unknown}], "isError": True}
    else:
        result = {}
    return before, {"jsonrpc": "2.0", "id": id, "result": result}


def answers(message):
    """The messages written for `message`: notifications, then the answer."""
    if isinstance(message, list):
        before, batch = [], []
        for member in message:
            notes, reply = answer(member)
            before += notes
            if reply is not None:
                batch.append(reply)
        batch.reverse()
        return before + ([batch] if batch else [])
    notes, reply = answer(message)
    return notes + ([reply] if reply is not None else [])


def stdio():
    for line in sys.stdin:
        if not line.strip():
            continue
        for out in answers(json.loads(line)):
            sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


def http():
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("content-length", 0)))
            out = answers(json.loads(body))
            if not out:
                self.send_response(202)
                self.send_header("content-length", "0")
                self.end_headers()
                return
            if len(out) == 1:
                data, kind = json.dumps(out[0]).encode(), "application/json"
            else:
                events = "".join(f"event: message\ndata: {json.dumps(m)}\n\n" for m in out)
                data, kind = events.encode(), "text/event-stream"
            self.send_response(200)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    http() if sys.argv[1:] == ["--http"] else stdio()
