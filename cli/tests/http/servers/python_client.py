"""The official Python client (PyPI `mcp`) over Streamable HTTP: connects to the
URL in argv[1], makes the same calls as everything_client.mjs, and prints what
it received as one JSON line on stdout."""

import asyncio
import json
import sys

from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client


def dump(result):
    return result.model_dump(mode="json", by_alias=True, exclude_none=True)


async def main(url):
    progress = []

    async def on_progress(progress_value, total, message):
        progress.append({"progress": progress_value, "total": total})

    async with streamable_http_client(url) as (read, write, *_):
        async with ClientSession(read, write) as session:
            await session.initialize()
            received = {
                "tools": dump(await session.list_tools()),
                "echo": dump(await session.call_tool("echo", {"message": 'héllo "world"\n'})),
                "invalid": dump(await session.call_tool("echo", {})),
                "long": dump(
                    await session.call_tool(
                        "trigger-long-running-operation",
                        {"duration": 0.3, "steps": 3},
                        progress_callback=on_progress,
                    )
                ),
            }
    received["progress"] = progress
    print(json.dumps(received))


asyncio.run(main(sys.argv[1]))
