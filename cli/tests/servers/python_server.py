"""An MCP server on the official Python SDK (PyPI `mcp`, its MCPServer class),
served over stdio, for the tests of the `mcp-tool-errors` command.

Its tools fail in each way the SDK knows, and misbehave in the ways a real
server does: hang, crash mid-call, report progress.
"""

import asyncio
import os
import sys

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError

# The JSON-RPC code, as the protocol defines it.
INVALID_PARAMS = -32602

server = MCPServer("python-test-server")


@server.tool()
def tool_error(path: str) -> str:
    """Fails with the SDK's own tool error."""
    raise ToolError(f"no such file: {path}")


@server.tool()
def plain_exception(path: str) -> str:
    """Fails with an exception the SDK knows nothing about."""
    raise RuntimeError(f"disk on fire while reading {path}")


@server.tool()
def echo(text: str) -> str:
    """Answers with its argument."""
    return text


@server.tool()
async def sleep(seconds: float) -> str:
    """Sleeps; says on stderr when it is cancelled."""
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        print("python_server: sleep was cancelled", file=sys.stderr, flush=True)
        raise
    return "slept"


@server.tool()
def positive(count: int) -> str:
    """Refuses a count below one with the protocol's invalid-params error."""
    if count < 1:
        raise MCPError(INVALID_PARAMS, "Invalid params", f"count must be at least 1, got {count}")
    return str(count)


@server.tool()
def crash() -> str:
    """Kills its own process mid-call, with exit status 3."""
    os._exit(3)


@server.tool()
async def progress(steps: int, ctx: Context) -> str:
    """Reports progress `steps` times, then answers."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step}")
    return f"{steps} steps"


if __name__ == "__main__":
    server.run("stdio")
