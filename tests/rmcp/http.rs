//! rmcp's own client against a layered server over streamable HTTP on 127.0.0.1.

use std::net::SocketAddr;

use mcp_tool_errors::rmcp::ServerHandlerExt;
use rmcp::model::ProtocolVersion;
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{RoleClient, ServerHandler, ServiceExt};
use tokio::task::JoinHandle;

use super::scenarios::{self, Transport};
use super::servers::{ProbeClient, ToolServer, answered};

const VERSION: ProtocolVersion = ProtocolVersion::V_2025_11_25;

/// An HTTP server on an ephemeral port of 127.0.0.1, stopped when dropped.
struct HttpServer {
    address: SocketAddr,
    task: JoinHandle<()>,
}

impl HttpServer {
    /// Serves a new handler from `factory` for each session, at `/mcp`.
    async fn start<S: ServerHandler>(factory: impl Fn() -> S + Send + Sync + 'static) -> Self {
        let config = StreamableHttpServerConfig::default().with_sse_keep_alive(None);
        let service: StreamableHttpService<S, LocalSessionManager> =
            StreamableHttpService::new(move || Ok(factory()), Default::default(), config);
        let router = axum::Router::new().nest_service("/mcp", service);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let task = tokio::spawn(async move {
            axum::serve(listener, router).await.unwrap();
        });
        Self { address, task }
    }

    async fn connect(&self, client: ProbeClient) -> RunningService<RoleClient, ProbeClient> {
        let uri = format!("http://{}/mcp", self.address);
        let transport = StreamableHttpClientTransport::from_config(
            StreamableHttpClientTransportConfig::with_uri(uri),
        );
        answered("initialize over HTTP", client.serve(transport))
            .await
            .expect("client connects")
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[tokio::test]
async fn panicking_tools_are_answered_and_the_session_stays_usable() {
    super::support::quiet_panics::silence_expected_panics();
    let server = HttpServer::start(|| ToolServer::new().with_tool_errors()).await;
    let client = server.connect(ProbeClient::new(VERSION).0).await;
    scenarios::panicking_tools_are_answered(&client).await;
    scenarios::tool_errors_are_rewrapped(&client).await;
}

#[tokio::test]
async fn successes_and_protocol_errors_are_the_same_with_and_without_the_layer() {
    let bare_server = HttpServer::start(ToolServer::new).await;
    let layered_server = HttpServer::start(|| ToolServer::new().with_tool_errors()).await;
    let bare = bare_server.connect(ProbeClient::new(VERSION).0).await;
    let layered = layered_server.connect(ProbeClient::new(VERSION).0).await;
    scenarios::the_layer_changes_nothing_else(&bare, &layered).await;
}

#[tokio::test]
async fn the_request_context_reaches_the_tool() {
    let server = HttpServer::start(|| ToolServer::new().with_tool_errors()).await;
    let (client, mut events) = ProbeClient::new(VERSION);
    let client = server.connect(client).await;
    scenarios::the_context_reaches_the_tool(&client, &mut events, Transport::StreamableHttp).await;
}
