"""An MCP server on the official Python SDK (PyPI `mcp`, its MCPServer class),
served over Streamable HTTP: the upstream of the HTTP mode's tests. Stateless,
answering in JSON bodies; with the argument `stateful`, with sessions,
answering in event streams.

It listens on 127.0.0.1 on a port the system picks, and prints
`listening on 127.0.0.1:PORT` on stderr once it accepts connections.
"""

import asyncio
import socket
import sys

import uvicorn
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("python-http-test-server")


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
        print("python_http_server: sleep was cancelled", file=sys.stderr, flush=True)
        raise
    return "slept"


@server.tool()
async def progress(steps: int, ctx: Context) -> str:
    """Reports progress `steps` times, a little apart, then answers."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step}")
        await asyncio.sleep(0.05)
    return f"{steps} steps"


class Announcing(uvicorn.Server):
    """Says where it listens once it does."""

    def __init__(self, config, address):
        super().__init__(config)
        self.address = address

    async def startup(self, sockets=None):
        await super().startup(sockets=sockets)
        print(f"listening on {self.address}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    host, port = listener.getsockname()
    stateful = sys.argv[1:] == ["stateful"]
    app = server.streamable_http_app(
        json_response=not stateful, stateless_http=not stateful, host=host
    )
    config = uvicorn.Config(app, log_level="warning")
    asyncio.run(Announcing(config, f"{host}:{port}").serve(sockets=[listener]))
