"""The gateway-facing plugin: hands every tool result to the mcp-tool-errors
layer (the `mcp_tool_errors` binding) and returns what it makes of it."""

from __future__ import annotations

import logging

from cpex.framework import Plugin, ToolPostInvokeResult

from mcp_tool_errors import ToolErrorLayer

logger = logging.getLogger(__name__)

# The options of the layer that apply to a result at hand: timeouts and
# crashes need a request, which the hook does not see.
CONFIG_KEYS = ["redact_secrets", "max_error_bytes"]


class ToolErrorsPlugin(Plugin):
    """Rewraps the text of every ``isError`` tool result the gateway passes on
    as ``<error tool="NAME">`` llmxml, as the mcp-tool-errors layer writes it.

    The configuration (``config:``) is read when the gateway loads the plugin:
    ``redact_secrets`` (true or false) and ``max_error_bytes`` (1 or more, or
    null). A key that is unknown or holds a value its option does not take
    fails the load with a ``ValueError`` naming the key.
    """

    def __init__(self, config) -> None:
        super().__init__(config)
        self._layer = ToolErrorLayer.from_config(config.config, CONFIG_KEYS, "mcp-tool-errors-contextforge", "config key")

    async def tool_post_invoke(self, payload, context, extensions=None):
        """The result rewrapped when it is a tool error; otherwise unchanged.

        Never raises into the gateway: a failure is logged by where it
        happened (its message may quote the tool's text) and the result passes
        as the gateway made it.
        """
        try:
            result = self._layer.rewrap_result(payload.name, payload.result)
        except Exception as failure:  # noqa: BLE001 - the gateway must get an answer
            _log_failure(failure)
            return ToolPostInvokeResult()
        if result is None:
            return ToolPostInvokeResult()
        return ToolPostInvokeResult(modified_payload=payload.model_copy(update={"result": result}))


def _log_failure(failure: BaseException) -> None:
    """Logs where `failure` was raised, never its message."""
    frame = failure.__traceback__
    while frame is not None and frame.tb_next is not None:
        frame = frame.tb_next
    where = f"{frame.tb_frame.f_code.co_filename}:{frame.tb_lineno}" if frame else "unknown"
    logger.error(
        "mcp-tool-errors: the tool result could not be rewrapped (%s at %s); it passes as the gateway made it",
        type(failure).__name__,
        where,
    )
