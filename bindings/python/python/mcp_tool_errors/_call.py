"""What every server adapter does around one ``tools/call``: the call under
its tool's timeout, and an exception the tool did not mean as its answer
logged and answered as the layer answers a crash. The texts are the layer's
(:class:`~mcp_tool_errors.ToolErrorLayer`); this module only decides when
each applies."""

from __future__ import annotations

import logging
import traceback
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio

from mcp_tool_errors._core import ToolErrorLayer

logger = logging.getLogger("mcp_tool_errors")

Result = TypeVar("Result")


async def within_timeout(
    layer: ToolErrorLayer, tool: str, call: Callable[[], Awaitable[Result]]
) -> tuple[Result | None, dict[str, Any] | None]:
    """``(call's result, None)``; or, when the call of ``tool`` did not finish
    within its timeout, ``(None, the layer's result for it)``, the call's task
    cancelled (a tool running in a worker thread stops only at its next check
    of cancellation)."""
    timeout = layer.tool_timeout_of(tool)
    if timeout is None:
        return await call(), None
    with anyio.move_on_after(timeout):
        return await call(), None
    logger.warning("tool %r did not finish within %s s; its task was cancelled", tool, timeout)
    return None, layer.timed_out_result(tool, timeout)


def crashed(layer: ToolErrorLayer, tool: str, failure: BaseException, message: str | None = None) -> dict[str, Any]:
    """The layer's result for a call of ``tool`` that raised ``failure``;
    ``message`` (by default the exception's text) is sent only under
    ``expose_panic_messages``. The traceback goes to the ``mcp_tool_errors``
    logger, redacted when ``redact_secrets`` is on."""
    logger.error(
        "tool %r raised an exception, answered as a crash:\n%s",
        tool,
        layer.scrub_log_text("".join(traceback.format_exception(failure)).rstrip()),
    )
    if message is None:
        message = str(failure) or type(failure).__name__
    return layer.crashed_result(tool, message)
