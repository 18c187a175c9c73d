"""The binding and the server adapters without a transport: options refused
by key, what a crash logs and sends, and where FastMCP's adapter must sit.
Run against the installed wheel, in an environment with `mcp` and `fastmcp`:

    python -m unittest discover -s bindings/python/tests -p 'test_sdk_*.py'
"""

import asyncio
import logging
import threading
import unittest
from types import SimpleNamespace

import mcp_tool_errors.fastmcp
import mcp_tool_errors.mcp
from mcp_tool_errors import ToolErrorLayer

PASSWORD = "hunter2"
SECRET_TEXT = f"could not reach postgres://orders:{PASSWORD}@db.internal/orders"
# FastMCP logs each tool's exception itself, with its rich traceback.
logging.getLogger("fastmcp").setLevel(logging.CRITICAL)

ADAPTERS = [ToolErrorLayer, mcp_tool_errors.mcp.ToolErrorsMiddleware, mcp_tool_errors.fastmcp.ToolErrorsMiddleware]


def text_of(result):
    return result["content"][0]["text"]


class Options(unittest.TestCase):
    def test_every_adapter_takes_the_same_options(self):
        for adapter in ADAPTERS:
            with self.subTest(adapter=adapter.__name__):
                adapter(
                    tool_timeout=30,
                    tool_timeouts={"deploy": 0.5},
                    redact_secrets=True,
                    max_error_bytes=4096,
                    expose_panic_messages=False,
                )
                adapter()

    def test_any_mapping_is_read(self):
        from types import MappingProxyType

        layer = ToolErrorLayer(tool_timeouts=MappingProxyType({"deploy": 0.5}))
        self.assertEqual(layer.tool_timeout_of("deploy"), 0.5)
        config = MappingProxyType({"tool_timeout": 30})
        self.assertEqual(ToolErrorLayer.from_config(config, ["tool_timeout"], "host", "key").tool_timeout_of("x"), 30)

    def test_a_value_an_option_does_not_take_is_refused_by_key(self):
        for key, value in [
            ("tool_timeout", 0),
            ("tool_timeout", -1),
            ("tool_timeout", True),
            ("tool_timeout", "30"),
            ("tool_timeout", float("inf")),
            ("tool_timeout", float("nan")),
            ("tool_timeout", 10**400),
            ("tool_timeouts", {"deploy": 0}),
            ("tool_timeouts", {1: 5}),
            ("tool_timeouts", [("deploy", 5)]),
            ("redact_secrets", "yes"),
            ("max_error_bytes", 0),
            ("max_error_bytes", True),
            ("expose_panic_messages", 1),
        ]:
            for adapter in ADAPTERS:
                with self.subTest(adapter=adapter.__name__, key=key, value=value):
                    with self.assertRaisesRegex(ValueError, f"option `{key}"):
                        adapter(**{key: value})

    def test_an_unknown_option_is_refused_by_name(self):
        for adapter in ADAPTERS:
            with self.subTest(adapter=adapter.__name__), self.assertRaisesRegex(ValueError, "unknown option `timeout`"):
                adapter(timeout=5)

    def test_an_error_json_can_carry_is_rewrapped(self):
        layer = ToolErrorLayer(redact_secrets=True)
        for extra in [{"structuredContent": {"rows": 2**70}}, {"_meta": {"path": "/data/\udcff"}}]:
            with self.subTest(extra=extra):
                result = {"content": [{"type": "text", "text": SECRET_TEXT + " in /data/\udcff"}], "isError": True}
                rewrapped = layer.rewrap_result("orders\udcff", {**result, **extra})
                self.assertIsNotNone(rewrapped)
                self.assertTrue(text_of(rewrapped).startswith('<error tool="orders\ufffd'), rewrapped)
                self.assertNotIn(PASSWORD, text_of(rewrapped))

    def test_a_tool_has_its_own_timeout_else_every_tools(self):
        layer = ToolErrorLayer(tool_timeout=30, tool_timeouts={"deploy": 0.5})
        self.assertEqual(layer.tool_timeout_of("deploy"), 0.5)
        self.assertEqual(layer.tool_timeout_of("search"), 30)
        self.assertIsNone(ToolErrorLayer().tool_timeout_of("search"))


def context(tool):
    return SimpleNamespace(method="tools/call", params={"name": tool, "arguments": {}})


async def crash(ctx):
    raise RuntimeError(SECRET_TEXT)


class Crash(unittest.TestCase):
    def answer(self, **options):
        middleware = mcp_tool_errors.mcp.ToolErrorsMiddleware(**options)
        with self.assertLogs("mcp_tool_errors", logging.ERROR) as logs:
            result = asyncio.run(middleware(context("orders"), crash))
        return text_of(result), "\n".join(logs.output)

    def test_the_message_is_withheld_and_logged(self):
        sent, logged = self.answer()
        self.assertEqual(
            sent, '<error tool="orders">\nThe tool failed with an internal error. The details are in the server log.\n</error>'
        )
        self.assertIn(SECRET_TEXT, logged)
        self.assertIn("Traceback", logged)

    def test_redact_secrets_redacts_the_log_and_an_exposed_message(self):
        sent, logged = self.answer(redact_secrets=True, expose_panic_messages=True)
        self.assertIn("The tool failed with an internal error: could not reach", sent)
        self.assertNotIn(PASSWORD, sent)
        self.assertNotIn(PASSWORD, logged)
        self.assertIn("[REDACTED]", logged)

    def test_an_exception_whose_text_raises_is_answered(self):
        class Unprintable(Exception):
            def __str__(self):
                raise ValueError(SECRET_TEXT)

        async def crash_unprintable(ctx):
            raise Unprintable

        for options in [{}, {"expose_panic_messages": True}, {"tool_timeout": 5}]:
            with self.subTest(**options):
                middleware = mcp_tool_errors.mcp.ToolErrorsMiddleware(**options)
                with self.assertLogs("mcp_tool_errors", logging.ERROR):
                    result = asyncio.run(middleware(context("orders"), crash_unprintable))
                self.assertTrue(text_of(result).startswith("<error tool=\"orders\">\nThe tool failed"), result)
                self.assertNotIn(PASSWORD, text_of(result))

    def test_an_exception_with_a_lone_surrogate_is_answered(self):
        async def crash_on_a_file(ctx):
            raise FileNotFoundError(SECRET_TEXT + " in /data/\udcff")

        middleware = mcp_tool_errors.mcp.ToolErrorsMiddleware(redact_secrets=True, expose_panic_messages=True)
        with self.assertLogs("mcp_tool_errors", logging.ERROR) as logs:
            result = asyncio.run(middleware(context("orders"), crash_on_a_file))
        self.assertIn("The tool failed with an internal error: could not reach", text_of(result))
        self.assertIn("/data/\ufffd", text_of(result))
        self.assertNotIn(PASSWORD, text_of(result) + "\n".join(logs.output))

    def test_a_tool_that_raises_cancelled_is_answered_as_a_crash(self):
        async def cancelled_itself(ctx):
            raise asyncio.CancelledError

        for options in [{}, {"tool_timeout": 5}]:
            with self.subTest(**options):
                middleware = mcp_tool_errors.mcp.ToolErrorsMiddleware(**options)
                with self.assertLogs("mcp_tool_errors", logging.ERROR):
                    result = asyncio.run(middleware(context("orders"), cancelled_itself))
                self.assertIn("The details are in the server log.", text_of(result))

    def test_a_cancelled_call_stays_cancelled(self):
        async def run(options):
            started = asyncio.Event()

            async def hang(ctx):
                started.set()
                await asyncio.sleep(60)

            middleware = mcp_tool_errors.mcp.ToolErrorsMiddleware(**options)
            call = asyncio.ensure_future(middleware(context("orders"), hang))
            await started.wait()
            call.cancel()
            with self.assertRaises(asyncio.CancelledError):
                await call

        for options in [{}, {"tool_timeout": 30}]:
            with self.subTest(**options):
                asyncio.run(asyncio.wait_for(run(options), 5))

    def test_a_protocol_error_and_other_methods_pass(self):
        from mcp.shared.exceptions import MCPError

        async def refuse(ctx):
            raise MCPError(-32602, "Invalid params")

        middleware = mcp_tool_errors.mcp.ToolErrorsMiddleware()
        with self.assertRaises(MCPError):
            asyncio.run(middleware(context("orders"), refuse))
        ping = SimpleNamespace(method="ping", params=None)
        self.assertIsNone(asyncio.run(middleware(ping, crash_free)))


async def crash_free(ctx):
    return None


class Answers(unittest.TestCase):
    """The SDK's middleware without a transport: each way a call ends (the
    hosts test compares the bytes with the command's)."""

    def test_a_tool_error_is_rewrapped_and_a_success_passes(self):
        async def fail(ctx):
            return {"content": [{"type": "text", "text": "no such file"}], "isError": True}

        async def succeed(ctx):
            return {"content": [{"type": "text", "text": "<error>"}]}

        middleware = mcp_tool_errors.mcp.ToolErrorsMiddleware()
        self.assertEqual(
            text_of(asyncio.run(middleware(context("orders"), fail))), '<error tool="orders">\nno such file\n</error>'
        )
        self.assertEqual(text_of(asyncio.run(middleware(context("orders"), succeed))), "<error>")

    def test_a_hang_is_answered_at_its_timeout_and_cancelled(self):
        import anyio.to_thread

        cancelled = []
        release = threading.Event()

        async def hang(ctx):
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                cancelled.append("async")
                raise

        async def block(ctx):
            return await anyio.to_thread.run_sync(lambda: release.wait(60))

        async def run(handler):
            release.clear()
            middleware = mcp_tool_errors.mcp.ToolErrorsMiddleware(tool_timeouts={"orders": 0.2})
            with self.assertLogs("mcp_tool_errors", logging.WARNING):
                result = await asyncio.wait_for(middleware(context("orders"), handler), 10)
            release.set()
            await asyncio.sleep(0)
            return result

        for handler in [hang, block]:
            with self.subTest(handler=handler.__name__):
                self.assertEqual(
                    text_of(asyncio.run(run(handler))),
                    '<error tool="orders">\nThe tool did not finish within 0.2 s and was cancelled.\n</error>',
                )
        self.assertEqual(cancelled, ["async"])


class FastMCP(unittest.TestCase):
    def call(self, server, tool):
        from fastmcp import Client

        async def run():
            async with Client(server) as client:
                result = await client.call_tool_mcp(tool, {})
                return result.model_dump(mode="json", by_alias=True, exclude_none=True)

        return asyncio.run(run())

    def server(self, *middleware, mask_error_details=False):
        from fastmcp import FastMCP

        server = FastMCP("unit", mask_error_details=mask_error_details)
        for each in middleware:
            server.add_middleware(each)

        @server.tool
        def orders() -> str:
            raise RuntimeError(SECRET_TEXT)

        @server.tool
        def refund() -> str:
            from fastmcp.exceptions import ToolError

            try:
                raise OSError(SECRET_TEXT)
            except OSError as error:
                raise ToolError("refunds are closed") from error

        @server.tool
        async def stock() -> str:
            raise asyncio.CancelledError

        @server.tool
        def missing():
            from fastmcp.tools import ToolResult

            return ToolResult(content="no such order", is_error=True)

        return server

    def test_a_tool_error_the_tool_raised_from_another_is_its_answer(self):
        from fastmcp.server.middleware.error_handling import ErrorHandlingMiddleware

        for options in [{}, {"expose_panic_messages": True}]:
            with self.subTest(**options):
                adapter = mcp_tool_errors.fastmcp.ToolErrorsMiddleware(**options)
                result = self.call(self.server(ErrorHandlingMiddleware(), adapter), "refund")
                self.assertEqual(text_of(result), '<error tool="refund">\nrefunds are closed\n</error>')

    def test_a_tool_that_raises_cancelled_is_answered_as_a_crash(self):
        from fastmcp.server.middleware.error_handling import ErrorHandlingMiddleware

        server = self.server(ErrorHandlingMiddleware(), mcp_tool_errors.fastmcp.ToolErrorsMiddleware())
        with self.assertLogs("mcp_tool_errors", logging.ERROR):
            result = asyncio.run(asyncio.wait_for(asyncio.to_thread(self.call, server, "stock"), 10))
        self.assertIn("The details are in the server log.", text_of(result))

    def test_an_is_error_result_is_rewrapped(self):
        from fastmcp.server.middleware.error_handling import ErrorHandlingMiddleware

        server = self.server(ErrorHandlingMiddleware(), mcp_tool_errors.fastmcp.ToolErrorsMiddleware())
        result = self.call(server, "missing")
        self.assertEqual(text_of(result), '<error tool="missing">\nno such order\n</error>')
        self.assertTrue(result["isError"])

    def test_outside_error_handling_it_warns(self):
        from fastmcp.server.middleware.error_handling import ErrorHandlingMiddleware

        server = self.server(mcp_tool_errors.fastmcp.ToolErrorsMiddleware(), ErrorHandlingMiddleware())
        with self.assertLogs("mcp_tool_errors", logging.WARNING) as logs:
            try:
                self.call(server, "orders")
            except Exception:  # noqa: BLE001 - the call itself fails there, as the docs say
                pass
        self.assertIn("sits outside ErrorHandlingMiddleware", "\n".join(logs.output))

    def test_inside_error_handling_a_crash_is_answered(self):
        from fastmcp.server.middleware.error_handling import ErrorHandlingMiddleware

        server = self.server(ErrorHandlingMiddleware(), mcp_tool_errors.fastmcp.ToolErrorsMiddleware())
        with self.assertLogs("mcp_tool_errors", logging.ERROR):
            result = self.call(server, "orders")
        self.assertTrue(result["isError"])
        self.assertIn("The details are in the server log.", text_of(result))

    def test_mask_error_details_keeps_the_message_out_even_when_exposed(self):
        for mask, shown in [(False, True), (True, False)]:
            with self.subTest(mask_error_details=mask):
                adapter = mcp_tool_errors.fastmcp.ToolErrorsMiddleware(expose_panic_messages=True)
                with self.assertLogs("mcp_tool_errors", logging.ERROR):
                    result = self.call(self.server(adapter, mask_error_details=mask), "orders")
                self.assertEqual(SECRET_TEXT in text_of(result), shown, text_of(result))


if __name__ == "__main__":
    unittest.main()
