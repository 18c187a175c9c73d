"""The client side of the gateway test (scripts/ci/contextforge.sh): the
official Python client (PyPI `mcp`) at a ContextForge virtual server's MCP
endpoint, with a bearer token; calls each tool once and prints one JSON line:
for each tool, the result as the client got it ({"result": ...}), or the
JSON-RPC error ({"error": ...}).

    gateway_client.py URL TOKEN CALLS

CALLS is a JSON list of [tool, arguments].
"""

import asyncio
import json
import sys

import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

# The bound on each call, so that a call that is never answered fails the run.
CALL_TIMEOUT_S = 30


def dump(result):
    return result.model_dump(mode="json", by_alias=True, exclude_none=True)


async def main(url, token, calls):
    outcomes = {}
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=CALL_TIMEOUT_S) as http:
        async with streamable_http_client(url, http_client=http) as (read, write, *_):
            async with ClientSession(read, write) as session:
                await session.initialize()
                for tool, arguments in calls:
                    try:
                        result = await asyncio.wait_for(session.call_tool(tool, arguments), CALL_TIMEOUT_S)
                        outcomes[tool] = {"result": dump(result)}
                    except MCPError as error:
                        outcomes[tool] = {"error": error.error.model_dump(mode="json", exclude_none=True)}
    print(json.dumps(outcomes))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], json.loads(sys.argv[3])))
