"""Tool errors as llmxml the model can read, inside Python MCP servers and
gateways: the mcp-tool-errors layer (Rust), with one adapter per host.

- ``mcp_tool_errors.mcp.ToolErrorsMiddleware``: the official SDK (``mcp``),
  ``MCPServer(middleware=[...])`` and the low-level ``Server``;
- ``mcp_tool_errors.fastmcp.ToolErrorsMiddleware``: FastMCP's
  ``mcp.add_middleware(...)``;
- ``mcp_tool_errors.litellm.ToolErrorsGuardrail``: LiteLLM's proxy, a
  ``post_mcp_call`` guardrail.

Each takes the same keyword arguments: ``tool_timeout`` (seconds),
``tool_timeouts`` (a mapping of tool name to seconds), ``redact_secrets``,
``max_error_bytes`` and ``expose_panic_messages``. :class:`ToolErrorLayer`
is the configured layer they share; every rule and text is the library's.
"""

from mcp_tool_errors._core import ToolErrorLayer

__all__ = ["ToolErrorLayer"]
