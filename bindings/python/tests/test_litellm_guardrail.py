"""LiteLLM's guardrail without the proxy: its options, and the hook called
with what the proxy hands it (the shapes seen from litellm[proxy] calling a
stdio upstream). Run against the installed wheel, with `litellm` installed:

    python -m unittest discover -s bindings/python/tests -p 'test_litellm_*.py'
"""

import asyncio
import unittest

import mcp_types
from litellm.types.mcp import MCPPostCallResponseObject

from mcp_tool_errors.litellm import ToolErrorsGuardrail


def guardrail(event_hook="post_mcp_call", default_on=True, **options):
    return ToolErrorsGuardrail(guardrail_name="tool-errors", event_hook=event_hook, default_on=default_on, **options)


def hook(guardrail, text, is_error=True, content=None):
    if content is None:
        content = [mcp_types.TextContent(type="text", text=text)]
    kwargs = {
        "model": "MCP: hosts-fail",
        "original_response": mcp_types.CallToolResult(content=content, is_error=is_error),
        "mcp_tool_call_metadata": {"name": "fail", "mcp_server_name": "hosts", "namespaced_tool_name": "hosts/fail"},
    }
    response = MCPPostCallResponseObject(mcp_tool_call_response=list(content), hidden_params={})
    return asyncio.run(guardrail.async_post_mcp_tool_call_hook(kwargs, response, None, None))


class Options(unittest.TestCase):
    def test_a_value_an_option_does_not_take_is_refused_by_key(self):
        for key, value in [("redact_secrets", "yes"), ("max_error_bytes", 0)]:
            with self.subTest(key=key), self.assertRaisesRegex(ValueError, f"option `{key}`"):
                guardrail(**{key: value})

    def test_what_needs_a_request_is_refused_with_the_reason(self):
        for key, value in [("tool_timeout", 5), ("tool_timeouts", {"x": 5}), ("expose_panic_messages", True)]:
            with self.subTest(key=key), self.assertRaisesRegex(ValueError, f"option `{key}` does not apply"):
                guardrail(**{key: value})


class Hook(unittest.TestCase):
    def test_an_error_is_rewrapped_for_the_tool_the_client_called(self):
        answer = hook(guardrail(redact_secrets=True), "token ghp_" + "a1" * 18)
        text = answer.mcp_tool_call_response[0].text
        self.assertTrue(text.startswith('<error tool="hosts-fail">\n'), text)
        self.assertIn("[REDACTED]", text)

    def test_an_error_without_text_gets_the_layers_text_before_its_image(self):
        image = mcp_types.ImageContent(type="image", data="AAAA", mime_type="image/png")
        answer = hook(guardrail(), None, content=[image])
        self.assertEqual(
            [item.type for item in answer.mcp_tool_call_response], ["text", "image"], answer.mcp_tool_call_response
        )
        self.assertTrue(answer.mcp_tool_call_response[0].text.startswith('<error tool="hosts-fail">\n'))
        self.assertEqual(answer.mcp_tool_call_response[1], image)

    def test_it_runs_only_where_configured(self):
        for options in [{"default_on": False}, {"event_hook": "pre_call"}]:
            with self.subTest(**options):
                self.assertIsNone(hook(guardrail(**options), "no such file"))

    def test_a_success_is_left_to_the_proxy(self):
        self.assertIsNone(hook(guardrail(), "<error>", is_error=False))


if __name__ == "__main__":
    unittest.main()
