"""The official Python client (PyPI `mcp`, its `Client`, in MODE: `legacy`
or `auto`) when its session is gone, as when the bridge replica that held it
restarted: connected to the bridge at URL, it calls `echo`, prints the
outcome, waits for a line on stdin (the bridge restarted meanwhile), and calls
`echo` twice more.

    session_gone.py MODE URL

Prints {"first"} on one line, then {"first", "second", "third"}: each
{"result": content} or {"error": message}.
"""

import asyncio
import json
import os
import sys

from mcp import Client


async def main(url, mode):
    outcomes = {}
    client = Client(url, mode=mode)
    await client.__aenter__()

    async def echo(text):
        try:
            result = await asyncio.wait_for(client.call_tool("echo", {"text": text}), 10)
            return {"result": result.model_dump(mode="json", exclude_none=True)["content"]}
        except Exception as error:  # the outcome is what is printed
            return {"error": str(error)}

    outcomes["first"] = await echo("first")
    print(json.dumps(outcomes), flush=True)
    await asyncio.to_thread(sys.stdin.readline)
    outcomes["second"] = await echo("second")
    outcomes["third"] = await echo("third")
    print(json.dumps(outcomes), flush=True)
    # Not leaving the client's context: its end (a DELETE of a session that
    # is gone) is not what is looked at.
    os._exit(0)


asyncio.run(main(url=sys.argv[2], mode=sys.argv[1]))
