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
//! - the `test_*` tools of the MCP conformance suite, also served by the
//!   `rmcp_http` example.
//!
//! stdout carries the protocol, so the logs (and the default panic hook's
//! report) go to stderr.

mod rmcp_tools;

use mcp_tool_errors::rmcp::ServerHandlerExt;
use rmcp::ServiceExt;
use rmcp_tools::DemoServer;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    rmcp_tools::log_to_stderr();

    let server = DemoServer::new().with_tool_errors();
    let running = server.serve(rmcp::transport::stdio()).await?;
    tracing::info!("serving on stdio");
    running.waiting().await?;
    Ok(())
}
