"""Tool errors as llmxml the model can read, redacted and capped: the
mcp-tool-errors layer as a ContextForge plugin on ``tool_post_invoke``."""

from mcp_tool_errors_contextforge.plugin import ToolErrorsPlugin

__all__ = ["ToolErrorsPlugin"]
