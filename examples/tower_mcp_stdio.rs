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
//!   validation error, which the layer rewraps.
//!
//! A call to any other tool is a JSON-RPC error and passes through untouched.
//! stdout carries JSON-RPC only: the logs, and the panic messages of the default
//! panic hook, go to stderr.

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
        .tool(add());
    let mut transport = StdioTransport::new(router).layer(ToolErrorLayer::new());
    tracing::info!("serving on stdio");
    transport.run().await?;
    Ok(())
}
