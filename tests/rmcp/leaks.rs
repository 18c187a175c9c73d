//! With the default configuration no byte of a panic payload reaches an rmcp
//! client, read off the raw wire; the payload goes to the `tracing` log instead.
//! A `#[tool_router]` server `.with_tool_errors()`.

use mcp_tool_errors::ToolErrorLayer;
use mcp_tool_errors::rmcp::ServerHandlerExt;
use rmcp::ServiceExt as _;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};

use crate::support::line_client::{LineClient, assert_panic_answered};
use crate::support::log::CapturedLog;
use crate::support::quiet_panics::silence_expected_panics;
use crate::support::secret_payload::{
    PanicLog, SECRET, assert_nothing_of_the_payload_in, panic_with_secret, payload_parts_in,
};

#[derive(Debug, Clone)]
struct LeakyServer {
    tool_router: ToolRouter<Self>,
}

impl LeakyServer {
    fn new() -> Self {
        Self {
            tool_router: Self::tool_router(),
        }
    }
}

#[tool_router]
impl LeakyServer {
    #[tool(description = "Panics with a credential in the message")]
    fn leak_sync(&self) -> String {
        panic_with_secret()
    }

    #[tool(description = "Panics with a credential in the message, after an await")]
    async fn leak_async(&self) -> String {
        tokio::task::yield_now().await;
        panic_with_secret()
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for LeakyServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

/// A line client of the leaky rmcp server behind `layer`, and the server's task.
async fn rmcp_client(layer: ToolErrorLayer) -> (LineClient, tokio::task::JoinHandle<()>) {
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let server = tokio::spawn(async move {
        let running = LeakyServer::new().layer(layer).serve(server_io).await;
        let _ = running.expect("the server starts").waiting().await;
    });
    (LineClient::initialized(client_io).await, server)
}

#[tokio::test]
async fn rmcp_path_keeps_the_payload_in_the_log() {
    silence_expected_panics();
    let log = CapturedLog::start();
    let (mut client, server) = rmcp_client(ToolErrorLayer::new()).await;
    for (id, tool) in [(5101, "leak_sync"), (5102, "leak_async")] {
        let answer = client.call_tool(id, tool).await;
        assert_panic_answered(&answer, tool);
        log.assert_panic_logged(Some(tool), &id.to_string());
    }
    assert_nothing_of_the_payload_in(&client.received);
    server.abort();

    // The control: the same wire shows the payload once it is let through.
    let (mut client, server) = rmcp_client(ToolErrorLayer::new().expose_panic_messages(true)).await;
    client.call_tool(5103, "leak_sync").await;
    assert!(
        payload_parts_in(&client.received).contains(&SECRET),
        "{}",
        &client.received
    );
    server.abort();
}
