//! Timeouts behind `ServerHandlerExt`, under tokio's paused clock: rmcp's own
//! client against a layered server over an in-memory duplex, and a hand-written
//! client for what rmcp's client cannot show (that a cancelled call gets no
//! answer on the wire).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mcp_tool_errors::ToolErrorLayer;
use mcp_tool_errors::render_error;
use mcp_tool_errors::rmcp::{RequestWithContext, ServerHandlerExt};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequest, ClientRequest, ProtocolVersion, RequestId, ServerCapabilities, ServerConfig,
    ServerResult,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::time::Instant;
use tower::{Layer, ServiceExt as _};

use super::servers::{EchoArgs, ProbeClient, call, connect_duplex, echo, only_text, server_peer};

const TIMEOUT: Duration = Duration::from_secs(2);

/// What the `hang` tool saw happen to it.
#[derive(Debug, Default)]
struct Probe {
    started: AtomicBool,
    /// Its future was dropped.
    dropped: AtomicBool,
    /// The work it spawned with the request's cancellation token was stopped.
    cancelled: AtomicBool,
}

/// Sets its flag when dropped.
struct DropFlag(Arc<Probe>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.dropped.store(true, Ordering::SeqCst);
    }
}

#[derive(Debug, Clone)]
struct HangServer {
    tool_router: ToolRouter<Self>,
    probe: Arc<Probe>,
}

impl HangServer {
    fn new() -> (Self, Arc<Probe>) {
        let probe = Arc::new(Probe::default());
        let server = Self {
            tool_router: Self::tool_router(),
            probe: Arc::clone(&probe),
        };
        (server, probe)
    }
}

#[tool_router]
impl HangServer {
    /// Spawns work that stops with the request's token, then never finishes.
    #[tool(description = "Never finishes")]
    async fn hang(&self, context: RequestContext<RoleServer>) -> String {
        let probe = Arc::clone(&self.probe);
        let ct = context.ct.clone();
        tokio::spawn(async move {
            ct.cancelled().await;
            probe.cancelled.store(true, Ordering::SeqCst);
        });
        let _dropped = DropFlag(Arc::clone(&self.probe));
        self.probe.started.store(true, Ordering::SeqCst);
        std::future::pending::<()>().await;
        unreachable!("a pending future never finishes")
    }

    #[tool(description = "Sends its text back")]
    fn echo(&self, Parameters(EchoArgs { text }): Parameters<EchoArgs>) -> String {
        text
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for HangServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

fn timed_out_text(tool: &str, seconds: &str) -> String {
    render_error(
        tool,
        &format!("The tool did not finish within {seconds} and was cancelled."),
    )
}

#[tokio::test(start_paused = true)]
async fn a_hung_tool_is_answered_cancelled_and_the_connection_stays_usable() {
    let (server, probe) = HangServer::new();
    let server = server.layer(ToolErrorLayer::new().tool_timeout(TIMEOUT));
    let client = connect_duplex(server, ProbeClient::new(ProtocolVersion::V_2025_11_25).0).await;

    let started = Instant::now();
    let result = client.call_tool(call("hang")).await.expect("answered");
    assert_eq!(
        started.elapsed(),
        TIMEOUT,
        "answered when the timeout passed"
    );
    assert_eq!(result.is_error, Some(true));
    assert_eq!(only_text(&result), timed_out_text("hang", "2 s"));
    assert!(probe.started.load(Ordering::SeqCst));
    assert!(
        probe.dropped.load(Ordering::SeqCst),
        "the tool's future is dropped"
    );
    tokio::task::yield_now().await;
    assert!(
        probe.cancelled.load(Ordering::SeqCst),
        "the request's cancellation token is cancelled"
    );

    let started = Instant::now();
    let result = client
        .call_tool(echo("still here"))
        .await
        .expect("answered");
    assert_eq!(
        started.elapsed(),
        Duration::ZERO,
        "a fast tool is not delayed"
    );
    assert_eq!(result.is_error, Some(false));
    assert_eq!(only_text(&result), "still here");
    client.cancel().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_tool_timeout_of_its_own_overrides_the_default() {
    let (server, _probe) = HangServer::new();
    let layer = ToolErrorLayer::new()
        .tool_timeout(Duration::from_secs(30))
        .tool_timeout_for("hang", Duration::from_millis(250));
    let client = connect_duplex(
        server.layer(layer),
        ProbeClient::new(ProtocolVersion::V_2025_11_25).0,
    )
    .await;
    let started = Instant::now();
    let result = client.call_tool(call("hang")).await.expect("answered");
    assert_eq!(started.elapsed(), Duration::from_millis(250));
    assert_eq!(only_text(&result), timed_out_text("hang", "0.25 s"));
    client.cancel().await.unwrap();
}

/// One JSON-RPC message per line, as rmcp's duplex transport frames them.
struct LineClient {
    reader: BufReader<tokio::io::ReadHalf<DuplexStream>>,
    writer: tokio::io::WriteHalf<DuplexStream>,
}

impl LineClient {
    async fn send(&mut self, message: Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.writer.write_all(line.as_bytes()).await.unwrap();
    }

    async fn receive(&mut self) -> Value {
        let mut line = String::new();
        self.reader.read_line(&mut line).await.unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"))
    }
}

#[tokio::test(start_paused = true)]
async fn a_call_the_client_cancels_is_never_answered() {
    let (server, probe) = HangServer::new();
    let server = server.layer(ToolErrorLayer::new().tool_timeout(TIMEOUT));
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let running = server.serve(server_io).await.expect("server starts");
        let _ = running.waiting().await;
    });
    let (reader, writer) = tokio::io::split(client_io);
    let mut client = LineClient {
        reader: BufReader::new(reader),
        writer,
    };
    client
        .send(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "line-client", "version": "1.0.0"},
            }}),
        )
        .await;
    assert_eq!(client.receive().await["id"], 1);
    client
        .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;

    client
        .send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "hang", "arguments": {}}}))
        .await;
    while !probe.started.load(Ordering::SeqCst) {
        tokio::task::yield_now().await;
    }
    client
        .send(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 2, "reason": "the user gave up"}}),
        )
        .await;
    // Long past the timeout: the layer answers the call, and rmcp, which forgot
    // the request when it was cancelled, sends nothing.
    tokio::time::sleep(TIMEOUT * 10).await;
    assert!(probe.cancelled.load(Ordering::SeqCst));
    assert!(probe.dropped.load(Ordering::SeqCst));

    client
        .send(json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}))
        .await;
    let next = client.receive().await;
    assert_eq!(next["id"], 3, "the first message after the cancel: {next}");
}

/// rmcp cancels a request's token after sending any answer, so the test above
/// cannot tell who cancelled it: here the layer runs without rmcp's serve loop,
/// over a context made by hand.
#[tokio::test(start_paused = true)]
async fn the_layer_itself_cancels_the_token_of_a_timed_out_call() {
    let (peer, _client_io) = server_peer();
    let context = RequestContext::new(RequestId::Number(7), peer);
    let token = context.ct.clone();
    let hanging = tower::service_fn(|_: RequestWithContext| {
        std::future::pending::<Result<ServerResult, ErrorData>>()
    });
    let request = RequestWithContext::new(
        ClientRequest::CallToolRequest(CallToolRequest::new(call("hang"))),
        context,
    );
    let answer = ToolErrorLayer::new()
        .tool_timeout(TIMEOUT)
        .layer(hanging)
        .oneshot(request)
        .await
        .expect("answered with a result");
    let ServerResult::CallToolResult(result) = answer else {
        panic!("not a tools/call result: {answer:?}")
    };
    assert_eq!(only_text(&result), timed_out_text("hang", "2 s"));
    assert!(token.is_cancelled());
}

/// Without a timeout the token is left alone, and requests that are not
/// `tools/call` are never timed.
#[tokio::test(start_paused = true)]
async fn only_tools_call_is_timed() {
    let (peer, _client_io) = server_peer();
    let context = RequestContext::new(RequestId::Number(8), peer);
    let hanging = tower::service_fn(|_: RequestWithContext| {
        std::future::pending::<Result<ServerResult, ErrorData>>()
    });
    let request = RequestWithContext::new(ClientRequest::PingRequest(Default::default()), context);
    let answer = tokio::time::timeout(
        TIMEOUT * 1000,
        ToolErrorLayer::new()
            .tool_timeout(TIMEOUT)
            .layer(hanging)
            .oneshot(request),
    )
    .await;
    assert!(answer.is_err(), "the layer answered a ping: {answer:?}");
}
