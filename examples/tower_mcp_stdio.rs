//! A tower-mcp server over stdio with the tool-error layer on.
//!
//! ```text
//! cargo run --example tower_mcp_stdio --features tower-mcp
//! ```
//!
//! Tools:
//!
//! - `echo {text}`: returns `text`;
//! - `fail {message}`: an `isError` result with `message`, which the layer rewraps;
//! - `panic`: panics with a message holding a (fake) API key, which the layer
//!   answers without sending it;
//! - `panic_async`: the same, after an `.await`;
//! - `add {a, b}`: integer addition; wrong arguments get tower-mcp's own
//!   validation error, which the layer rewraps;
//! - `sleep {ms}`: sleeps that long, then returns `slept MS ms`.
//!
//! With `MCP_TOOL_TIMEOUT_MS` set to an integer, every tool call gets that many
//! milliseconds (`ToolErrorLayer::tool_timeout`): `sleep` past it is answered
//! with an `<error tool="sleep">` element and its handler's future is dropped.
//!
//! A call to any other tool is a JSON-RPC error and passes through untouched.
//! stdout carries JSON-RPC only: the logs, and the panic messages of the default
//! panic hook, go to stderr.

use std::time::Duration;

use mcp_tool_errors::ToolErrorLayer;
use schemars::JsonSchema;
use serde::Deserialize;
use tower_mcp::{BoxError, CallToolResult, McpRouter, NoParams, StdioTransport, Tool, ToolBuilder};

/// What `panic` and `panic_async` panic with: a stand-in for the secrets real
/// panic messages pick up from the values they format.
const LEAKY_PANIC: &str =
    "billing API refused the request made with api_key=sk-test-51HxFAKEc0ffee";

#[derive(Debug, Deserialize, JsonSchema)]
struct EchoInput {
    /// The text to send back.
    text: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct FailInput {
    /// The error message the tool reports.
    message: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct SleepInput {
    /// How long to sleep, in milliseconds.
    ms: u64,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct AddInput {
    a: i64,
    b: i64,
}

fn echo() -> Tool {
    ToolBuilder::new("echo")
        .description("Returns `text` unchanged.")
        .handler(|input: EchoInput| async move { Ok(CallToolResult::text(input.text)) })
        .build()
}

fn fail() -> Tool {
    ToolBuilder::new("fail")
        .description("Reports `message` as a tool error.")
        .handler(|input: FailInput| async move { Ok(CallToolResult::error(input.message)) })
        .build()
}

fn panic_tool() -> Tool {
    ToolBuilder::new("panic")
        .description("Panics at once.")
        .handler(|_: NoParams| async move { leak_a_secret() })
        .build()
}

fn panic_async() -> Tool {
    ToolBuilder::new("panic_async")
        .description("Panics after an await.")
        .handler(|_: NoParams| async move {
            tokio::task::yield_now().await;
            leak_a_secret()
        })
        .build()
}

fn add() -> Tool {
    ToolBuilder::new("add")
        .description("Adds two integers.")
        .handler(|input: AddInput| async move {
            Ok(match input.a.checked_add(input.b) {
                Some(sum) => CallToolResult::text(sum.to_string()),
                None => CallToolResult::error("the sum does not fit in a 64-bit integer"),
            })
        })
        .build()
}

fn sleep() -> Tool {
    ToolBuilder::new("sleep")
        .description("Sleeps `ms` milliseconds, then says so.")
        .handler(|input: SleepInput| async move {
            tokio::time::sleep(Duration::from_millis(input.ms)).await;
            Ok(CallToolResult::text(format!("slept {} ms", input.ms)))
        })
        .build()
}

/// The layer, with `tool_timeout` when `MCP_TOOL_TIMEOUT_MS` holds an integer.
fn layer_from_env() -> ToolErrorLayer {
    let timeout_ms = std::env::var("MCP_TOOL_TIMEOUT_MS").ok();
    match timeout_ms.and_then(|ms| ms.parse().ok()) {
        Some(ms) => ToolErrorLayer::new().tool_timeout(Duration::from_millis(ms)),
        None => ToolErrorLayer::new(),
    }
}

fn leak_a_secret() -> tower_mcp::Result<CallToolResult> {
    panic!("{LEAKY_PANIC}")
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .init();
    let router = McpRouter::new()
        .server_info("mcp-tool-errors-tower-mcp-stdio", env!("CARGO_PKG_VERSION"))
        .tool(echo())
        .tool(fail())
        .tool(panic_tool())
        .tool(panic_async())
        .tool(add())
        .tool(sleep());
    let mut transport = StdioTransport::new(router).layer(layer_from_env());
    tracing::info!("serving on stdio");
    transport.run().await?;
    Ok(())
}
