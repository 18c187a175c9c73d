"""A stdio MCP server in the standard library alone, served by the bridge in
its deployment test (scripts/ci/bridge_deployment.sh): it answers
`initialize`, `tools/list`, a `tools/call` of `echo` at once with its `text`
argument, and one of `slow` half a second later, so that calls are in flight when a replica
drains. It starts in some 20 ms, so that a session costs little."""

import json
import sys
import threading
import time

written = threading.Lock()


def write(message):
    with written:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def text_result(request_id, text):
    return {"jsonrpc": "2.0", "id": request_id,
            "result": {"content": [{"type": "text", "text": text}]}}


def answer_later(request_id, text):
    time.sleep(0.5)
    write(text_result(request_id, text))


for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message or "method" not in message:
        continue
    if message["method"] == "initialize":
        write({"jsonrpc": "2.0", "id": message["id"], "result": {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "deployment", "version": "1"}}})
    elif message["method"] == "tools/list":
        schema = {"type": "object", "properties": {"text": {"type": "string"}}}
        write({"jsonrpc": "2.0", "id": message["id"], "result": {"tools": [
            {"name": name, "inputSchema": schema} for name in ("echo", "slow")]}})
    elif message["method"] == "tools/call":
        params = message["params"]
        text = params.get("arguments", {}).get("text", "")
        if params["name"] == "slow":
            threading.Thread(target=answer_later, args=(message["id"], text)).start()
        else:
            write(text_result(message["id"], text))
    else:
        write({"jsonrpc": "2.0", "id": message["id"],
               "error": {"code": -32601, "message": "Method not found"}})
