"""The cost of an adapter per call: the official client calls the same tool
through two sessions opened side by side, one to a host without the adapter
and one to the same host with it, alternating, and prints the median and the
90th percentile of each in milliseconds, as a Markdown table row per tool.

    calls.py HOST CALLS WITHOUT WITH TOOL...

WITHOUT and WITH are JSON: {"stdio": [COMMAND, ARGS...]} with the
environment's variables added by {"env": {...}}, or {"http": URL, "token":
TOKEN}. TOOL is NAME=ARGUMENTS_JSON.
"""

import json
import os
import statistics
import sys
import time
from contextlib import AsyncExitStack

import anyio
from mcp.client.session import ClientSession


async def session(stack, endpoint):
    if "stdio" in endpoint:
        from mcp.client.stdio import StdioServerParameters, stdio_client

        command = endpoint["stdio"]
        env = {**os.environ, **endpoint.get("env", {})}
        errlog = stack.enter_context(open(os.devnull, "w"))
        read, write = await stack.enter_async_context(
            stdio_client(StdioServerParameters(command=command[0], args=command[1:], env=env), errlog=errlog)
        )
    else:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        headers = {"Authorization": f"Bearer {endpoint['token']}"} if endpoint.get("token") else {}
        http = await stack.enter_async_context(httpx2.AsyncClient(headers=headers, timeout=60))
        read, write, *_ = await stack.enter_async_context(streamable_http_client(endpoint["http"], http_client=http))
    client = await stack.enter_async_context(ClientSession(read, write))
    await client.initialize()
    return client


def milliseconds(samples):
    ordered = sorted(samples)
    return statistics.median(ordered) * 1000, ordered[int(len(ordered) * 0.9)] * 1000


async def main(host, calls, without, with_adapter, tools):
    async with AsyncExitStack() as stack:
        sessions = {"without": await session(stack, without), "with": await session(stack, with_adapter)}
        for tool in tools:
            name, arguments = tool.split("=", 1)
            arguments = json.loads(arguments)
            samples = {"without": [], "with": []}
            for _ in range(5):
                for each in sessions.values():
                    await each.call_tool(name, arguments)
            for _ in range(calls):
                for which, each in sessions.items():
                    began = time.perf_counter()
                    await each.call_tool(name, arguments)
                    samples[which].append(time.perf_counter() - began)
            (without_median, without_p90), (with_median, with_p90) = map(milliseconds, samples.values())
            print(
                f"| {host} | `{name}` | {without_median:.2f} / {without_p90:.2f} | {with_median:.2f} / {with_p90:.2f} "
                f"| {with_median - without_median:+.2f} |"
            )


if __name__ == "__main__":
    host, calls, without, with_adapter, *tools = sys.argv[1:]
    anyio.run(main, host, int(calls), json.loads(without), json.loads(with_adapter), tools)
