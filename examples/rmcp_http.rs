//! An rmcp server over streamable HTTP with mcp-tool-errors in front of it: the
//! server of the `rmcp_stdio` example, served at `http://127.0.0.1:PORT/mcp`.
//!
//! ```text
//! PORT=3000 cargo run --example rmcp_http --features rmcp
//! ```
//!
//! `PORT` defaults to 3000; `PORT=0` asks the system for a free port. The
//! server logs the address it listens on to stderr. `MCP_TOOL_ERRORS=off`
//! serves the same tools without the layer, to tell what rmcp does on its own
//! from what the layer does.
//!
//! Besides the demonstration tools (`echo`, `fail`, `panic`, `panic_async`,
//! `add`), it implements the tools (and the prompt) of the MCP conformance
//! suite's `tools-call-*`, `input-required-result-*` and `tasks-*` scenarios,
//! and advertises the tasks extension; `scripts/conformance.sh` runs the suite
//! against it.

mod rmcp_tools;

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

use axum::serve::ListenerExt;
use mcp_tool_errors::ToolErrorLayer;
use mcp_tool_errors::rmcp::ServerHandlerExt;
use rmcp::task_manager::TaskManager;
use rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
};
use rmcp_tools::DemoServer;

/// The port used when `PORT` is not set.
const DEFAULT_PORT: u16 = 3000;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    rmcp_tools::log_to_stderr();

    let port = match std::env::var("PORT") {
        Ok(port) => port
            .parse::<u16>()
            .map_err(|error| format!("PORT={port}: {error}"))?,
        Err(_) => DEFAULT_PORT,
    };
    let layer_on = std::env::var("MCP_TOOL_ERRORS").map_or(true, |value| value != "off");
    if !layer_on {
        tracing::warn!("MCP_TOOL_ERRORS=off: serving without the layer");
    }
    // One server per MCP session, so each session keeps its own log level; the
    // tasks are shared, so that a task can be polled from any session, and so
    // is the layer's memory of them, through clones of one layer.
    let tasks = TaskManager::new();
    let layer = layer_on.then(ToolErrorLayer::new);
    let mcp = StreamableHttpService::new(
        move || {
            let layer = tower::ServiceBuilder::new().option_layer(layer.clone());
            Ok(DemoServer::with_tasks(tasks.clone()).layer(layer))
        },
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let app = axum::Router::new().nest_service("/mcp", mcp);

    let listener =
        tokio::net::TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, port))).await?;
    tracing::info!("listening on http://{}/mcp", listener.local_addr()?);
    // Without TCP_NODELAY, the end of an event stream written in several
    // pieces waits for the client's delayed ACK (40 ms) on a kept-alive
    // connection.
    let listener = listener.tap_io(|connection| {
        let _ = connection.set_nodelay(true);
    });
    axum::serve(listener, app).await?;
    Ok(())
}
