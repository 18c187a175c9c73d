from typing import Any, Mapping, final

__all__ = ["ToolErrorLayer"]

@final
class ToolErrorLayer:
    """The layer, configured; answers for one ``tools/call`` at a time.

    Keyword arguments: ``tool_timeout`` (seconds), ``tool_timeouts`` (tool
    name to seconds), ``redact_secrets``, ``max_error_bytes``,
    ``expose_panic_messages``; a ``ValueError`` names the one that is unknown
    or holds a value it does not take.
    """

    def __new__(
        cls,
        *,
        tool_timeout: float | None = None,
        tool_timeouts: Mapping[str, float] | None = None,
        redact_secrets: bool | None = None,
        max_error_bytes: int | None = None,
        expose_panic_messages: bool | None = None,
    ) -> ToolErrorLayer: ...
    @staticmethod
    def from_config(config: Mapping[str, Any] | None, keys: list[str], owner: str, noun: str) -> ToolErrorLayer: ...
    def rewrap_result(self, tool: str, result: Any) -> dict[str, Any] | None: ...
    def tool_timeout_of(self, tool: str) -> float | None: ...
    def timed_out_result(self, tool: str, timeout: float) -> dict[str, Any]: ...
    def crashed_result(self, tool: str, message: str) -> dict[str, Any]: ...
    def scrub_log_text(self, text: str) -> str: ...
