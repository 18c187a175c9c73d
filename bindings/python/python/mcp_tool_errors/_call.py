"""What every server adapter does around one ``tools/call``: the call under
its tool's timeout, and an exception the tool did not mean as its answer
logged and answered as the layer answers a crash. The texts are the layer's
(:class:`~mcp_tool_errors.ToolErrorLayer`); this module only decides when
each applies."""

from __future__ import annotations

import asyncio
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
    cancelled: an ``async`` tool stops at its next ``await``; a sync tool,
    which its host runs in a worker thread, runs on until it returns, its
    result dropped."""
    timeout = layer.tool_timeout_of(tool)
    if timeout is None:
        try:
            return await call(), None
        except asyncio.CancelledError as cancelled:
            if _on_asyncio() and not _cancelled_from_outside():
                raise CancelledItself from cancelled
            raise
    if _on_asyncio():
        finished, result = await _within_on_asyncio(call, timeout)
    else:
        finished, result = False, None
        with anyio.move_on_after(timeout):
            finished, result = True, await call()
    if finished:
        return result, None
    logger.warning("tool %r did not finish within %s s; its task was cancelled", tool, timeout)
    return None, layer.timed_out_result(tool, timeout)


async def _within_on_asyncio(call: Callable[[], Awaitable[Result]], timeout: float) -> tuple[bool, Result | None]:
    """The call in a task of its own, waited for at most ``timeout``. A cancel
    scope around the call would do on asyncio too, but its cancellation waits
    for a worker thread to return (the hosts run sync tools with
    ``anyio.to_thread.run_sync``), so a hung sync tool would hold the answer."""
    task = asyncio.ensure_future(call())
    try:
        done, _ = await asyncio.wait({task}, timeout=timeout)
    except BaseException:
        _abandon(task)
        raise
    if done:
        if task.cancelled() and not _cancelled_from_outside():
            raise CancelledItself
        return True, task.result()
    _abandon(task)
    return False, None


def _abandon(task: asyncio.Future[Any]) -> None:
    """Cancels ``task``, whose outcome no one awaits any more (retrieved when
    it ends, so that asyncio does not report it)."""
    task.cancel()
    task.add_done_callback(lambda done: done.cancelled() or done.exception())


class CancelledItself(Exception):
    """A call whose task raised ``CancelledError`` though nobody cancelled it:
    the tool ended without answering, a crash (raised on, the host would
    answer nothing, or close the session)."""

    def __init__(self) -> None:
        super().__init__("the tool's task was cancelled, though nothing cancelled the call")


def _cancelled_from_outside() -> bool:
    """Whether the current task has a cancellation pending (the client's
    cancellation, the host's shutdown); on Python 3.10, which cannot tell,
    always."""
    task = asyncio.current_task()
    cancelling = getattr(task, "cancelling", None)
    return cancelling is None or cancelling() > 0


def text_of(failure: BaseException) -> str:
    """``failure``'s text, else its type's name (when it has none, or its
    ``__str__`` raises)."""
    try:
        return str(failure) or type(failure).__name__
    except Exception:  # noqa: BLE001 - an exception's text is the exception's own code
        return type(failure).__name__


def _on_asyncio() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


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
        message = text_of(failure)
    return layer.crashed_result(tool, message)
