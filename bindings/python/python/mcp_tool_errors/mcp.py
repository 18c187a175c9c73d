"""The layer in the official MCP Python SDK (``mcp`` 2.3 or later):
:class:`ToolErrorsMiddleware`, a ``ServerMiddleware`` for
``MCPServer(..., middleware=[...])`` and the low-level ``Server``'s
``middleware`` list."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from mcp_tool_errors._call import crashed, within_timeout
from mcp_tool_errors._core import ToolErrorLayer

__all__ = ["ToolErrorsMiddleware"]


class ToolErrorsMiddleware:
    """Every ``tools/call`` answered as the mcp-tool-errors layer answers it.

    - a tool error (an ``isError`` result, which is what ``MCPServer`` makes
      of a ``ToolError``) has its texts rewrapped as ``<error tool="NAME">``
      llmxml, imitations escaped, redacted and capped as configured;
    - an exception the handler raised (the low-level ``Server``; ``MCPServer``
      answers a crash itself with ``Error executing tool NAME``, rewrapped)
      is answered as the layer answers a panic: its text is sent only under
      ``expose_panic_messages``, and the traceback is logged to the
      ``mcp_tool_errors`` logger;
    - a call that does not finish within its timeout is answered with the
      layer's text and its task cancelled;
    - protocol errors (``MCPError``, malformed params) and every other method
      pass as the SDK writes them.

    Keyword arguments: those of :class:`~mcp_tool_errors.ToolErrorLayer`.
    """

    def __init__(self, **options: Any) -> None:
        self.layer = ToolErrorLayer(**options)

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        tool = _tool_name(ctx)
        if tool is None:
            return await call_next(ctx)
        try:
            result, timed_out = await within_timeout(self.layer, tool, lambda: call_next(ctx))
        except (MCPError, ValidationError):
            raise
        except Exception as failure:  # noqa: BLE001 - a crash is answered, not raised
            return crashed(self.layer, tool, failure)
        if timed_out is not None:
            return timed_out
        rewrapped = self.layer.rewrap_result(tool, result) if isinstance(result, dict) else None
        return result if rewrapped is None else rewrapped


def _tool_name(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """The tool a ``tools/call`` names; ``None`` for any other message, or a
    call without a name (the SDK refuses it as invalid params)."""
    if ctx.method != "tools/call" or not isinstance(ctx.params, Mapping):
        return None
    name = ctx.params.get("name")
    return name if isinstance(name, str) else None
