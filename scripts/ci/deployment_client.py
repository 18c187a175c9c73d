"""The client side of scripts/ci/deployment.sh, on the official Python client
(PyPI `mcp`): the same mixed tool calls made directly to the upstream and then
through the load balancer, with SIGTERM sent to one replica once a third of the
balanced calls are answered; every balanced answer compared with the direct
one. Prints the figures as one JSON line on stdout; exits 1 when a call went
unanswered or an answer differs.

    deployment_client.py DIRECT_URL BALANCED_URL REPLICA_PID CALLS IN_FLIGHT
"""

import asyncio
import json
import os
import signal
import sys
import time

from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

# The bound on each call, so that a call that is never answered fails the run
# instead of hanging it.
CALL_TIMEOUT_S = 30


def mixed_calls(count):
    """Successes and both kinds of tool error, and a slow call that keeps some
    in flight whenever the replica is stopped."""
    kinds = [
        lambda i: ("echo", {"text": f"call {i}: héllo \"world\""}),
        lambda i: ("tool_error", {"path": f"/data/{i}"}),
        lambda i: ("sleep", {"seconds": 0.05}),
        lambda i: ("plain_exception", {"path": f"/data/{i}"}),
        lambda i: ("positive", {"count": i + 1}),
    ]
    return [kinds[i % len(kinds)](i) for i in range(count)]


def dump(result):
    return result.model_dump(mode="json", by_alias=True, exclude_none=True)


async def call_all(url, calls, in_flight, after_answered=None):
    """The answers to `calls` at `url`, `in_flight` at a time: a result dump,
    or the exception that stood for it. `after_answered(count)` runs after
    each answer."""
    answers = [None] * len(calls)
    answered = 0
    slots = asyncio.Semaphore(in_flight)
    async with streamable_http_client(url) as (read, write, *_):
        async with ClientSession(read, write) as session:
            await session.initialize()

            async def one(index, name, arguments):
                nonlocal answered
                async with slots:
                    try:
                        result = await asyncio.wait_for(
                            session.call_tool(name, arguments), CALL_TIMEOUT_S
                        )
                        answers[index] = dump(result)
                    except Exception as error:  # noqa: BLE001 - a lost call, whatever the cause
                        answers[index] = error
                    answered += 1
                    if after_answered:
                        after_answered(answered)

            async with asyncio.TaskGroup() as group:
                for index, (name, arguments) in enumerate(calls):
                    group.create_task(one(index, name, arguments))
    return answers


def wrapped(tool, text):
    """The element the proxy makes of a tool error's text. The texts of this
    run hold no `<` and the tool names no quote, so no escaping applies."""
    assert "<" not in text and '"' not in tool, (tool, text)
    return f'<error tool="{tool}">\n{text}\n</error>'


def compare(calls, direct, balanced):
    figures = {"identical": 0, "wrapped": 0, "lost": 0, "different": 0}
    problems = []
    for index, (name, _) in enumerate(calls):
        expected, got = direct[index], balanced[index]
        if isinstance(expected, Exception):
            raise SystemExit(f"call {index} ({name}) failed directly: {expected!r}")
        if isinstance(got, Exception):
            figures["lost"] += 1
            problems.append(f"call {index} ({name}): no answer: {got!r}")
            continue
        if expected.get("isError"):
            expected = json.loads(json.dumps(expected))
            expected["content"][0]["text"] = wrapped(name, expected["content"][0]["text"])
            kind = "wrapped"
        else:
            kind = "identical"
        if got == expected:
            figures[kind] += 1
        else:
            figures["different"] += 1
            problems.append(f"call {index} ({name}): {got} instead of {expected}")
    return figures, problems


async def main(direct_url, balanced_url, replica_pid, count, in_flight):
    calls = mixed_calls(count)
    direct = await call_all(direct_url, calls, in_flight)

    stopped = {}

    def stop_replica(answered):
        if not stopped and answered >= count // 3:
            os.kill(replica_pid, signal.SIGTERM)
            stopped["after"] = answered

    started = time.monotonic()
    balanced = await call_all(balanced_url, calls, in_flight, stop_replica)
    seconds = time.monotonic() - started

    figures, problems = compare(calls, direct, balanced)
    figures = {
        "calls": count,
        "answered": count - figures["lost"],
        **figures,
        "in_flight": in_flight,
        "sigterm_after_answers": stopped.get("after"),
        "seconds": round(seconds, 2),
    }
    print(json.dumps(figures), flush=True)
    for problem in problems[:20]:
        print(problem, file=sys.stderr)
    if problems or not stopped:
        sys.exit(1)


if __name__ == "__main__":
    direct_url, balanced_url, pid, count, in_flight = sys.argv[1:]
    asyncio.run(main(direct_url, balanced_url, int(pid), int(count), int(in_flight)))
