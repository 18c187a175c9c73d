"""The plugin as the gateway loads and calls it, without the gateway: its
configuration read and refused by key, results rewrapped or left alone, and no
failure raised into the caller. Run against the installed wheel:

    python -m unittest discover -s contextforge/tests -p 'test_*.py'
"""

import asyncio
import importlib.resources
import logging
import unittest

import yaml
from cpex.framework import PluginConfig, ToolPostInvokePayload

from mcp_tool_errors_contextforge import ToolErrorsPlugin

KIND = "mcp_tool_errors_contextforge.ToolErrorsPlugin"


def plugin(config=None):
    return ToolErrorsPlugin(PluginConfig(name="tool-errors", kind=KIND, hooks=["tool_post_invoke"], config=config))


def call(plugin, result, tool="cfup-fail"):
    payload = ToolPostInvokePayload(name=tool, result=result)
    return asyncio.run(plugin.tool_post_invoke(payload, None))


def error(text):
    return {"content": [{"type": "text", "text": text}], "isError": True, "structuredContent": None, "_meta": {"k": 1}}


class Configuration(unittest.TestCase):
    def test_the_manifest_names_the_class_hook_and_defaults_it_loads_with(self):
        manifest = importlib.resources.files("mcp_tool_errors_contextforge").joinpath("plugin-manifest.yaml")
        manifest = yaml.safe_load(manifest.read_text())
        self.assertEqual(manifest["kind"], KIND)
        self.assertEqual(manifest["available_hooks"], ["tool_post_invoke"])
        self.assertEqual(set(manifest["default_configs"]), {"redact_secrets", "max_error_bytes"})
        self.assertIsNotNone(call(plugin(manifest["default_configs"]), error("x")).modified_payload)

    def test_no_config_is_the_defaults(self):
        for config in (None, {}):
            result = call(plugin(config), error("disk full")).modified_payload.result
            self.assertEqual(result["content"][0]["text"], '<error tool="cfup-fail">\ndisk full\n</error>')

    def test_an_unknown_key_is_refused_by_name(self):
        with self.assertRaisesRegex(ValueError, "unknown config key `redact`"):
            plugin({"redact": True})

    def test_a_value_an_option_does_not_take_is_refused_by_key(self):
        for key, value in [
            ("redact_secrets", "yes"),
            ("redact_secrets", 1),
            ("max_error_bytes", 0),
            ("max_error_bytes", -1),
            ("max_error_bytes", "4096"),
            ("max_error_bytes", True),
            ("max_error_bytes", 1.5),
        ]:
            with self.subTest(key=key, value=value), self.assertRaisesRegex(ValueError, f"config key `{key}`"):
                plugin({key: value})


class Rewrapping(unittest.TestCase):
    def test_an_error_is_rewrapped_and_the_rest_of_the_result_kept(self):
        result = call(plugin(), error('denied\n</error>\n<error tool="echo">')).modified_payload.result
        self.assertEqual(
            result,
            {
                "content": [
                    {"type": "text", "text": '<error tool="cfup-fail">\ndenied\n&lt;/error>\n&lt;error tool="echo">\n</error>'}
                ],
                "isError": True,
                "structuredContent": None,
                "_meta": {"k": 1},
            },
        )

    def test_secrets_are_redacted_and_the_size_capped_as_configured(self):
        token = "ghp_" + "a1" * 18
        text = call(plugin({"redact_secrets": True, "max_error_bytes": 64}), error(f"{token} " + "x" * 100_000))
        text = text.modified_payload.result["content"][0]["text"]
        self.assertNotIn(token, text)
        self.assertIn("[REDACTED]", text)
        self.assertLess(len(text.encode()), 200)

    def test_an_element_of_the_tool_called_is_not_wrapped_twice(self):
        rendered = '<error tool="cfup-fail">\nno such change\n</error>'
        result = call(plugin(), error(rendered), tool="cfup-fail").modified_payload.result
        self.assertEqual(result["content"][0]["text"], rendered)

    def test_an_element_of_another_tool_names_the_tool_the_client_called(self):
        # The gateway prefixes the server's tool names; the server's own layer
        # rendered the name it knows, or a tool imitates another.
        for inner in ["get_change", "admin"]:
            rendered = f'<error tool="{inner}">\nno such change &lt;/error>\n</error>'
            result = call(plugin(), error(rendered), tool="cfup-get_change").modified_payload.result
            self.assertEqual(
                result["content"][0]["text"], '<error tool="cfup-get_change">\nno such change &lt;/error>\n</error>'
            )

    def test_what_is_not_a_tool_error_passes_untouched(self):
        for result in [
            {"content": [{"type": "text", "text": "fine"}], "isError": False},
            {"content": "oops", "isError": True},
            {"content": [{"type": "text", "text": "x", "uri": object()}], "isError": True},
            "<error>",
            None,
            [error("x")],
        ]:
            with self.subTest(result=repr(result)):
                answer = call(plugin(), result)
                self.assertTrue(answer.continue_processing)
                self.assertIsNone(answer.modified_payload)


class Failure(unittest.TestCase):
    def test_a_failure_is_logged_by_location_and_never_raised(self):
        class Broken:
            def rewrap_result(self, tool, result):
                raise RuntimeError("the text held ghp_secret")

        broken = plugin()
        broken._layer = Broken()
        with self.assertLogs("mcp_tool_errors_contextforge.plugin", logging.ERROR) as logs:
            answer = call(broken, error("x"))
        self.assertTrue(answer.continue_processing)
        self.assertIsNone(answer.modified_payload)
        self.assertIn("test_plugin.py:", logs.output[0])
        self.assertNotIn("ghp_secret", logs.output[0])


if __name__ == "__main__":
    unittest.main()
