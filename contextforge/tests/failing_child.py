"""A stdio MCP server for the command under test in compare.py: answers every
`tools/call` with an `isError` result whose one text is the text given for
that tool, so that the command rewraps exactly the text the gateway passed on.

    failing_child.py TEXTS

TEXTS is a JSON object from tool name to text.
"""

import json
import sys

texts = json.loads(sys.argv[1])
for line in sys.stdin:
    request = json.loads(line)
    if "id" not in request:
        continue
    if request.get("method") == "tools/call":
        text = texts[request["params"]["name"]]
        result = {"content": [{"type": "text", "text": text}], "isError": True}
    else:
        result = {}
    print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}), flush=True)
