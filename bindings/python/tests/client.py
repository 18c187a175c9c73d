"""The client of the hosts test (scripts/ci/python_bindings.sh): the official
Python client (PyPI `mcp`) calls each case once and prints one JSON object:
for each case, the result as the client got it ({"result": ...}), the
JSON-RPC error ({"error": ...}), or {"unanswered": SECONDS} when no answer came
within the case's wait.

    client.py CASES stdio COMMAND [ARGS...]
    client.py CASES http URL [TOKEN]

CASES is a JSON object from case name to [tool, arguments] or [tool,
arguments, WAIT]: WAIT seconds for a call that may hang (a hang is recorded
as unanswered after it), else CALL_TIMEOUT_S (which fails the run).
"""

import json
import os
import sys

import anyio
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError

# The bound on a call not expected to hang: past it, the run fails.
CALL_TIMEOUT_S = 60


def dump(result):
    return result.model_dump(mode="json", by_alias=True, exclude_none=True)


async def call_each(session, cases):
    await session.initialize()
    outcomes = {}
    for case, (tool, arguments, *wait) in cases.items():
        try:
            with anyio.fail_after(wait[0] if wait else CALL_TIMEOUT_S):
                outcomes[case] = {"result": dump(await session.call_tool(tool, arguments))}
        except MCPError as error:
            outcomes[case] = {"error": error.error.model_dump(mode="json", exclude_none=True)}
        except TimeoutError:
            if not wait:
                raise
            outcomes[case] = {"unanswered": wait[0]}
    return outcomes


async def over_stdio(cases, command):
    from mcp.client.stdio import StdioServerParameters, stdio_client

    parameters = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    async with stdio_client(parameters) as (read, write):
        async with ClientSession(read, write) as session:
            return await call_each(session, cases)


async def over_http(cases, url, token=None):
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        async with streamable_http_client(url, http_client=http) as (read, write, *_):
            async with ClientSession(read, write) as session:
                return await call_each(session, cases)


def main():
    cases, transport, rest = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3:]
    outcomes = anyio.run(lambda: over_http(cases, *rest) if transport == "http" else over_stdio(cases, rest))
    print(json.dumps(outcomes))


if __name__ == "__main__":
    main()
