"""The official Python client (PyPI `mcp`, its `Client`) against one stdio
server, connected both ways a user would: over stdio, starting the server
itself, and over Streamable HTTP at the bridge's URL. The same requests both
ways, in each of the client's two modes ('legacy': `initialize`, a session;
'auto', its default: `server/discover` first, falling back to `initialize`).

    bridge_client.py URL REQUESTS COMMAND [ARGS...]

REQUESTS is a JSON list of {"method", "params"}: `tools/list` and `tools/call`
are sent with the client's own methods, anything else as it is. The server's
requests (sampling, elicitation, roots) get fixed answers. Prints one JSON
line: for each mode and each way, the protocol version agreed and the outcome
of each request, {"result": ...} or {"error": {"code", "message", "data"}}.
"""

import asyncio
import json
import sys

import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from pydantic import TypeAdapter


def dump(result):
    return result.model_dump(mode="json", by_alias=True, exclude_none=True)


async def outcome(client, request):
    method, params = request["method"], request.get("params")
    try:
        if method == "tools/list":
            result = dump(await client.list_tools())
        elif method == "tools/call":
            result = dump(await client.call_tool(params["name"], params.get("arguments")))
        else:
            result = await client.session.send_request(
                types.Request[dict | None, str](method=method, params=params),
                TypeAdapter(dict),
            )
        return {"result": result}
    except MCPError as error:
        return {"error": error.error.model_dump(mode="json", exclude_none=True)}


async def sample(context, params):
    asked = params.messages[0].content.text
    return types.CreateMessageResult(
        model="fixed", role="assistant", content=types.TextContent(type="text", text=f"sampled: {asked}")
    )


async def elicit(context, params):
    return types.ElicitResult(action="accept", content={"name": "Ada"})


async def roots(context):
    return types.ListRootsResult(roots=[types.Root(uri="file:///srv/project", name="project")])


async def run(server, mode, requests):
    callbacks = {"sampling_callback": sample, "elicitation_callback": elicit, "list_roots_callback": roots}
    async with Client(server, mode=mode, **callbacks) as client:
        return {
            "protocol": client.session.protocol_version,
            "outcomes": [await outcome(client, request) for request in requests],
        }


async def main(url, requests, command):
    stdio = StdioServerParameters(command=command[0], args=command[1:])
    received = {}
    for mode in ("legacy", "auto"):
        received[mode] = {
            "stdio": await run(stdio, mode, requests),
            "bridge": await run(url, mode, requests),
        }
    print(json.dumps(received))


asyncio.run(main(sys.argv[1], json.loads(sys.argv[2]), sys.argv[3:]))
