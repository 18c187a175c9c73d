"""The layer in LiteLLM's proxy (``litellm[proxy]``): :class:`ToolErrorsGuardrail`,
a guardrail for ``mode: post_mcp_call`` in the proxy's configuration::

    guardrails:
      - guardrail_name: tool-errors
        litellm_params:
          guardrail: mcp_tool_errors.litellm.ToolErrorsGuardrail
          mode: post_mcp_call
          default_on: true
          redact_secrets: true
          max_error_bytes: 4096

Every upstream tool error that reaches the hook has its texts rewrapped as
``<error tool="NAME">`` llmxml, the tool named as the client called it through
the proxy (``SERVER-TOOL``). What the proxy answers itself (its timeout, an
unknown tool, an upstream that is down) does not pass through the hook.
"""

from __future__ import annotations

from typing import Any

from litellm.integrations.custom_guardrail import CustomGuardrail
from litellm.types.guardrails import GuardrailEventHooks

from mcp_tool_errors._core import ToolErrorLayer

__all__ = ["ToolErrorsGuardrail"]

# The options a result at hand can use: a timeout and a crash are the
# proxy's own to answer, before the hook.
OPTIONS = ["redact_secrets", "max_error_bytes"]
# The options of the other adapters, refused here by name with the reason.
REQUEST_OPTIONS = ["tool_timeout", "tool_timeouts", "expose_panic_messages"]
# How the proxy names a tool call in its logging details: `MCP: ` and the
# tool as the client called it.
MODEL_PREFIX = "MCP: "


class ToolErrorsGuardrail(CustomGuardrail):
    """A ``post_mcp_call`` guardrail that rewraps every tool error reaching it
    as the mcp-tool-errors layer writes it.

    Keyword arguments (``litellm_params`` in the proxy's configuration):
    ``redact_secrets`` and ``max_error_bytes``; a ``ValueError`` names the
    one that holds a value it does not take. ``tool_timeout``,
    ``tool_timeouts`` and ``expose_panic_messages`` are refused: the proxy
    answers a hang and a crash before the hook runs. Every other keyword is
    the guardrail's own, for LiteLLM.
    """

    def __init__(self, **kwargs: Any) -> None:
        refused = [key for key in REQUEST_OPTIONS if kwargs.get(key) is not None]
        if refused:
            raise ValueError(
                f"mcp_tool_errors.litellm: option `{refused[0]}` does not apply to a guardrail: "
                "the proxy answers a hang or a crash before post_mcp_call runs"
            )
        options = {key: kwargs.pop(key) for key in OPTIONS if key in kwargs}
        for key in REQUEST_OPTIONS:
            kwargs.pop(key, None)
        self.layer = ToolErrorLayer.from_config(options, OPTIONS, "mcp_tool_errors.litellm", "option")
        super().__init__(**kwargs)

    async def async_post_mcp_tool_call_hook(
        self, kwargs: dict[str, Any], response_obj: Any, start_time: Any, end_time: Any
    ) -> Any:
        """``response_obj`` with its texts rewrapped when the upstream's result
        is a tool error; ``None`` (the result as it is) otherwise, or when
        the guardrail is not to run for this call (the proxy calls the hook of
        every guardrail: its mode, ``default_on`` and a request's opt-out are
        the guardrail's to check)."""
        if not self.should_run_guardrail(data=kwargs, event_type=GuardrailEventHooks.post_mcp_call):
            return None
        original = kwargs.get("original_response")
        if not getattr(original, "is_error", False):
            return None
        tool = _tool_name(kwargs)
        if tool is None:
            return None
        items = list(response_obj.mcp_tool_call_response)
        result = {
            "content": [item.model_dump(by_alias=True, mode="json", exclude_none=True) for item in items],
            "isError": True,
        }
        rewrapped = self.layer.rewrap_result(tool, result)
        if rewrapped is None:
            return None
        response_obj.mcp_tool_call_response = [_content_like(items, item) for item in rewrapped["content"]]
        return response_obj


def _tool_name(kwargs: dict[str, Any]) -> str | None:
    """The tool as the client called it through the proxy; else as the
    upstream names it."""
    model = kwargs.get("model")
    if isinstance(model, str) and model.startswith(MODEL_PREFIX):
        return model[len(MODEL_PREFIX) :]
    metadata = kwargs.get("mcp_tool_call_metadata") or {}
    name = metadata.get("name") if isinstance(metadata, dict) else None
    return name if isinstance(name, str) else None


def _content_like(items: list[Any], wire: dict[str, Any]) -> Any:
    """``wire`` as the content type the proxy handed the hook for its kind
    (``text``, ``image``, ...): the layer may add a text, so a position says
    nothing of the kind."""
    for item in items:
        if getattr(item, "type", None) == wire.get("type"):
            return type(item).model_validate(wire)
    from mcp_types import TextContent

    return TextContent.model_validate(wire)
