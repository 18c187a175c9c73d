//! An rmcp server over stdio with mcp-tool-errors in front of it.
//!
//! ```text
//! cargo run --example rmcp_stdio --features rmcp
//! ```
//!
//! Any MCP client can start it; for example, with the usual `mcpServers`
//! configuration (Claude Desktop, Claude Code, Cursor and others), from a
//! checkout of this crate:
//!
//! ```json
//! {
//!   "mcpServers": {
//!     "tool-errors-demo": {
//!       "command": "cargo",
//!       "args": ["run", "--quiet", "--example", "rmcp_stdio", "--features", "rmcp",
//!                "--manifest-path", "/path/to/mcp-tool-errors/Cargo.toml"]
//!     }
//!   }
//! }
//! ```
//!
//! Then ask the model to call the tools:
//!
//! - `echo` (`text`) returns the text;
//! - `fail` (`message`) returns an `isError` result, which the client receives
//!   as `<error tool="fail">\nMESSAGE\n</error>`;
//! - `panic` and `panic_async` panic with a (fake) secret in the message; the
//!   client receives an `isError` result that does not contain it, the server
//!   keeps running;
//! - `add` (`a`, `b`: integers) adds; with wrong arguments, rmcp's own
//!   validation error reaches the client as an `<error tool="add">` element;
//! - `sleep` (`ms`: integer) sleeps that long, then returns `slept MS ms`;
//! - the `test_*` tools of the MCP conformance suite, also served by the
//!   `rmcp_http` example.
//!
//! With `MCP_TOOL_TIMEOUT_MS` set to an integer, every tool call gets that many
//! milliseconds (`ToolErrorLayer::tool_timeout`): `sleep` past it is answered
//! with an `<error tool="sleep">` element and cancelled.
//!
//! stdout carries the protocol, so the logs (and the default panic hook's
//! report) go to stderr.

mod rmcp_tools;

use std::time::Duration;

use mcp_tool_errors::ToolErrorLayer;
use mcp_tool_errors::rmcp::ServerHandlerExt;
use rmcp::ServiceExt;
use rmcp_tools::DemoServer;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    rmcp_tools::log_to_stderr();

    let server = DemoServer::new().layer(layer_from_env());
    let running = server.serve(rmcp::transport::stdio()).await?;
    tracing::info!("serving on stdio");
    running.waiting().await?;
    Ok(())
}

/// The layer, with `tool_timeout` when `MCP_TOOL_TIMEOUT_MS` holds an integer.
fn layer_from_env() -> ToolErrorLayer {
    let timeout_ms = std::env::var("MCP_TOOL_TIMEOUT_MS").ok();
    match timeout_ms.and_then(|ms| ms.parse().ok()) {
        Some(ms) => ToolErrorLayer::new().tool_timeout(Duration::from_millis(ms)),
        None => ToolErrorLayer::new(),
    }
}
