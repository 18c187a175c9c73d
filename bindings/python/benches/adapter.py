"""The adapter's own time per call, without a transport: the official SDK's
middleware around a `call_next` that returns a wire result at once, against
`call_next` alone, same results, same run (microseconds per call, the median
of 5 repeats; the coroutines driven by hand, no event loop timed, so no
timeout: a timer needs the loop).

    adapter.py [CALLS_PER_REPEAT]
"""

import statistics
import sys
import time
from types import SimpleNamespace

from mcp_tool_errors.mcp import ToolErrorsMiddleware

REPEATS = 5
RESULTS = {
    "success, 20 B": {"content": [{"type": "text", "text": "merged change I8a2"}], "isError": False},
    "error, 40 B": {"content": [{"type": "text", "text": "no such file: /data/1 (ENOENT)"}], "isError": True},
    "error, 10 KB": {"content": [{"type": "text", "text": "x" * 10_000}], "isError": True},
}


def drive(coroutine):
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    raise RuntimeError("the call awaited something")


def per_call(call, calls):
    samples = []
    for _ in range(REPEATS):
        began = time.perf_counter()
        for _ in range(calls):
            drive(call())
        samples.append((time.perf_counter() - began) / calls * 1e6)
    return statistics.median(samples)


def main(calls):
    ctx = SimpleNamespace(method="tools/call", params={"name": "get_change", "arguments": {}})
    middleware = {
        "defaults": ToolErrorsMiddleware(),
        "redact + 4096 B cap": ToolErrorsMiddleware(redact_secrets=True, max_error_bytes=4096),
    }
    print("| result | call_next alone | " + " | ".join(f"adapter, {name}" for name in middleware) + " |")
    print("|---|---:|" + "---:|" * len(middleware))
    for label, result in RESULTS.items():

        async def call_next(ctx, result=result):
            return dict(result)

        cells = [per_call(lambda: call_next(ctx), calls)]
        for each in middleware.values():
            cells.append(per_call(lambda each=each: each(ctx, call_next), calls))
        print(f"| {label} | " + " | ".join(f"{cell:.1f}" for cell in cells) + " |")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20_000)
