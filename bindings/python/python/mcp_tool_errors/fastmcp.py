"""The layer in FastMCP (``fastmcp`` 4.2 or later): :class:`ToolErrorsMiddleware`,
for ``mcp.add_middleware(...)``.

FastMCP turns a tool's exception into its ``isError`` result after the
middleware chain, so an exception reaches this middleware raised; and its
``ErrorHandlingMiddleware`` turns every exception that passes through it into
a JSON-RPC error. This middleware must therefore sit inside
``ErrorHandlingMiddleware`` (added after it): it answers every exception of a
call before that one sees it. Placed outside, it warns at the first call.
"""

from __future__ import annotations

import logging
from typing import Any

import mcp_types
from fastmcp.exceptions import DisabledError, FastMCPError, NotFoundError, ToolError
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.server.middleware.error_handling import ErrorHandlingMiddleware
from fastmcp.tools import ToolResult
from mcp.shared.exceptions import MCPError

from mcp_tool_errors._call import crashed, text_of, within_timeout
from mcp_tool_errors._core import ToolErrorLayer

__all__ = ["ToolErrorsMiddleware"]

logger = logging.getLogger("mcp_tool_errors")


class ToolErrorsMiddleware(Middleware):
    """Every ``tools/call`` answered as the mcp-tool-errors layer answers it.

    - a ``ToolError`` the tool raised, an unknown tool, arguments that fail
      validation, and an ``isError`` result the tool returned: the text
      FastMCP would send, rewrapped as ``<error tool="NAME">`` llmxml,
      imitations escaped, redacted and capped as configured;
    - any other exception (which FastMCP hands on as a ``ToolError`` caused
      by it): answered as the layer answers a panic; its text is sent only
      under ``expose_panic_messages`` and never when the server has
      ``mask_error_details``, and the traceback is logged to the
      ``mcp_tool_errors`` logger;
    - a call that does not finish within its timeout: the layer's text, its
      task cancelled;
    - protocol errors (``MCPError``) and every other method: as FastMCP
      writes them.

    Keyword arguments: those of :class:`~mcp_tool_errors.ToolErrorLayer`.
    """

    def __init__(self, **options: Any) -> None:
        self.layer = ToolErrorLayer(**options)
        self._placement_checked = False

    async def on_call_tool(
        self,
        context: MiddlewareContext[mcp_types.CallToolRequestParams],
        call_next: CallNext[mcp_types.CallToolRequestParams, ToolResult],
    ) -> ToolResult:
        self._check_placement(context)
        tool = context.message.name
        try:
            result, timed_out = await within_timeout(self.layer, tool, lambda: call_next(context))
        except MCPError:
            raise
        except (FastMCPError, NotFoundError, DisabledError) as failure:
            if _is_crash(failure):
                return _tool_result(crashed(self.layer, tool, failure.__cause__, self._crash_message(context, failure)))
            return self._rewrapped(tool, _error_result(str(failure)))
        except Exception as failure:  # noqa: BLE001 - a crash is answered, not raised
            return _tool_result(crashed(self.layer, tool, failure))
        if timed_out is not None:
            return _tool_result(timed_out)
        if isinstance(result, ToolResult) and result.is_error:
            return self._rewrapped(tool, result.to_mcp_result())
        return result

    def _rewrapped(self, tool: str, result: mcp_types.CallToolResult) -> ToolResult:
        wire = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        return _tool_result(self.layer.rewrap_result(tool, wire) or wire)

    @staticmethod
    def _crash_message(context: MiddlewareContext[Any], failure: BaseException) -> str:
        """The crash's text as FastMCP would show it: the original
        exception's, or FastMCP's own text when the server masks details."""
        server = context.fastmcp_context.fastmcp if context.fastmcp_context is not None else None
        if server is not None and getattr(server, "_mask_error_details", False):
            return text_of(failure)
        return text_of(failure.__cause__)

    def _check_placement(self, context: MiddlewareContext[Any]) -> None:
        if self._placement_checked:
            return
        self._placement_checked = True
        server = context.fastmcp_context.fastmcp if context.fastmcp_context is not None else None
        chain = list(getattr(server, "middleware", ()))
        if self not in chain:
            return
        inside = chain[chain.index(self) + 1 :]
        if any(isinstance(middleware, ErrorHandlingMiddleware) for middleware in inside):
            logger.warning(
                "mcp_tool_errors.fastmcp.ToolErrorsMiddleware sits outside ErrorHandlingMiddleware, which turns "
                "every tool exception into a JSON-RPC error before it gets here: add it after ErrorHandlingMiddleware"
            )


def _is_crash(failure: BaseException) -> bool:
    """Whether FastMCP raised ``failure`` for an exception of the tool that
    is not FastMCP's own (a ``ToolError`` caused by it, raised in FastMCP's
    code: a tool's own ``raise ToolError(...) from error`` is its answer)."""
    cause = failure.__cause__
    return (
        type(failure) is ToolError
        and isinstance(cause, Exception)
        and not isinstance(cause, (FastMCPError, NotFoundError, DisabledError, MCPError))
        and _raised_in_fastmcp(failure)
    )


def _raised_in_fastmcp(failure: BaseException) -> bool:
    """Whether the innermost frame of ``failure``'s traceback, where it was
    raised, is FastMCP's code."""
    frames = failure.__traceback__
    if frames is None:
        return False
    while frames.tb_next is not None:
        frames = frames.tb_next
    module = frames.tb_frame.f_globals.get("__name__", "")
    return isinstance(module, str) and module.split(".")[0] == "fastmcp"


def _error_result(text: str) -> mcp_types.CallToolResult:
    """The result FastMCP makes of a tool-visible error with this text."""
    return mcp_types.CallToolResult(content=[mcp_types.TextContent(type="text", text=text)], is_error=True)


def _tool_result(wire: dict[str, Any]) -> ToolResult:
    """A wire result as the ``ToolResult`` FastMCP's chain carries."""
    result = mcp_types.CallToolResult.model_validate(wire)
    return ToolResult(
        content=result.content,
        structured_content=result.structured_content,
        meta=result.meta,
        is_error=bool(result.is_error),
    )
