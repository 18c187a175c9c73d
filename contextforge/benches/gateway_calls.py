"""Calls through the gateway, timed: the official Python client at a virtual
server's MCP endpoint makes CALLS sequential calls of each tool (after a few
untimed ones) and prints one JSON line: per tool, the median and 90th
percentile of the call's time in milliseconds.

    gateway_calls.py URL TOKEN CALLS
"""

import asyncio
import json
import statistics
import sys
import time

import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

WARMUP = 5
TOOLS = {"cfup-echo": {"text": "merged change 1234"}, "cfup-fail": {"path": "/data/1"}}


async def main(url, token, calls):
    figures = {}
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        async with streamable_http_client(url, http_client=http) as (read, write, *_):
            async with ClientSession(read, write) as session:
                await session.initialize()
                for tool, arguments in TOOLS.items():
                    for _ in range(WARMUP):
                        await session.call_tool(tool, arguments)
                    took = []
                    for _ in range(calls):
                        started = time.perf_counter()
                        await asyncio.wait_for(session.call_tool(tool, arguments), 30)
                        took.append((time.perf_counter() - started) * 1000)
                    took.sort()
                    figures[tool] = {
                        "median_ms": round(statistics.median(took), 1),
                        "p90_ms": round(took[int(len(took) * 0.9)], 1),
                    }
    print(json.dumps(figures))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
