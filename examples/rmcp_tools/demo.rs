//! The tools that show what the layer does: one success, one tool error, two
//! panics, one argument error raised by rmcp itself, and one slow tool for
//! timeouts.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::{schemars, tool, tool_router};
use serde::Deserialize;

use super::DemoServer;

/// The arguments of `echo`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(crate) struct EchoArgs {
    /// The text to send back.
    text: String,
}

/// The arguments of `fail`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(crate) struct FailArgs {
    /// The error message the tool reports.
    message: String,
}

/// The arguments of `add`: rmcp rejects anything but two integers before the
/// tool runs.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(crate) struct AddArgs {
    /// The first addend.
    a: i64,
    /// The second addend.
    b: i64,
}

/// The arguments of `sleep`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(crate) struct SleepArgs {
    /// How long to sleep, in milliseconds.
    ms: u64,
}

/// A made-up credential, so a client can check that a panic message never
/// reaches it: the layer logs the message on the server and sends a generic text.
pub(crate) const FAKE_SECRET: &str = "api_key=sk-test-51c0ffee0ddba11";

#[tool_router(router = demo_tools, vis = "pub(crate)")]
impl DemoServer {
    /// Sends the text back unchanged.
    #[tool(description = "Returns `text` unchanged.")]
    fn echo(&self, Parameters(EchoArgs { text }): Parameters<EchoArgs>) -> String {
        text
    }

    /// A tool that reports its failure the MCP way, as an `isError` result.
    #[tool(description = "Always fails: returns an error result whose text is `message`.")]
    fn fail(&self, Parameters(FailArgs { message }): Parameters<FailArgs>) -> CallToolResult {
        CallToolResult::error(vec![ContentBlock::text(message)])
    }

    /// A tool with a bug: it panics as soon as it runs, without ever suspending.
    #[tool(description = "Always panics, with a message that contains a (fake) secret.")]
    fn panic(&self) -> String {
        panic!("could not reach the deploy API with {FAKE_SECRET}")
    }

    /// A tool that panics only after it was suspended once, on a later poll of
    /// its future: the layer must catch panics while polling, not only in `call`.
    #[tool(description = "Panics after an `.await`, with a message that contains a (fake) secret.")]
    async fn panic_async(&self) -> String {
        tokio::task::yield_now().await;
        panic!("the deploy job failed after it started, with {FAKE_SECRET}")
    }

    /// Integer addition; wrong arguments get rmcp's own validation error.
    #[tool(description = "Adds the integers `a` and `b`.")]
    fn add(&self, Parameters(AddArgs { a, b }): Parameters<AddArgs>) -> Result<String, String> {
        a.checked_add(b)
            .map(|sum| sum.to_string())
            .ok_or_else(|| format!("{a} + {b} does not fit in a 64-bit integer"))
    }

    /// A slow tool: past the layer's timeout, the client gets an `<error>`
    /// element instead of waiting, and the sleep is cancelled.
    #[tool(description = "Sleeps `ms` milliseconds, then says so.")]
    async fn sleep(&self, Parameters(SleepArgs { ms }): Parameters<SleepArgs>) -> String {
        tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
        format!("slept {ms} ms")
    }
}
