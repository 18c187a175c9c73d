//! The servers and the client the rmcp tests run: a `#[tool_router]` server with
//! tools that succeed, fail, panic and look at their context, and a client that
//! reports what the server sends it.

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientConfig, ContentBlock, PingRequest,
    ProgressNotificationParam, ProtocolVersion, ServerCapabilities, ServerConfig, ServerRequest,
};
use rmcp::service::{
    InboundStreamOrigin, NotificationContext, Peer, RequestContext, RunningService, serve_directly,
};
use rmcp::{
    ClientHandler, ErrorData, RoleClient, RoleServer, ServerHandler, tool, tool_handler,
    tool_router,
};
use tokio::sync::mpsc;

/// The secret in every panic message: it must never reach a client.
pub(crate) const SECRET: &str = "sk-live-SECRET123";

/// Waits for `future`, failing the test if it hangs.
pub(crate) use super::support::{HANG_GUARD, within_hang_guard as answered};

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub(crate) struct EchoArgs {
    /// The text to send back.
    pub(crate) text: String,
}

/// The tool server of every test.
#[derive(Debug, Clone)]
pub(crate) struct ToolServer {
    tool_router: ToolRouter<Self>,
}

impl ToolServer {
    pub(crate) fn new() -> Self {
        Self {
            tool_router: Self::tool_router(),
        }
    }
}

#[tool_router]
impl ToolServer {
    #[tool(description = "Sends its text back")]
    fn echo(&self, Parameters(EchoArgs { text }): Parameters<EchoArgs>) -> String {
        text
    }

    #[tool(description = "Refuses, the way a handler reports a failure to the model")]
    fn refuse(&self) -> CallToolResult {
        CallToolResult::error(vec![ContentBlock::text(
            "unknown action, expected submit (action=merge)",
        )])
    }

    #[tool(description = "Panics in a synchronous tool")]
    fn panic_sync(&self) -> String {
        panic!("[expected] sync tool failed with token={SECRET}")
    }

    #[tool(description = "Panics after an await")]
    async fn panic_async(&self) -> String {
        tokio::task::yield_now().await;
        panic!("[expected] async tool failed with token={SECRET}")
    }

    /// Reports progress on the request's token and pings the client from within
    /// the call, then describes the context it was given.
    #[tool(description = "Uses its request context")]
    async fn use_context(&self, context: RequestContext<RoleServer>) -> Result<String, ErrorData> {
        let token = context.meta.get_progress_token();
        if let Some(token) = &token {
            context
                .peer
                .notify_progress(
                    ProgressNotificationParam::new(token.clone(), 1.0).with_message("halfway"),
                )
                .await
                .map_err(|e| ErrorData::internal_error(format!("progress: {e}"), None))?;
        }
        let pinged = context
            .peer
            .send_request(ServerRequest::PingRequest(PingRequest::default()))
            .await
            .is_ok();
        let report = serde_json::json!({
            "id": context.id,
            "progressToken": token,
            "pinged": pinged,
            "cancelled": context.ct.is_cancelled(),
            "httpMethod": context.extensions.get::<axum::http::request::Parts>().map(|parts| parts.method.to_string()),
        });
        Ok(report.to_string())
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for ToolServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

/// What the client saw the server do.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ClientEvent {
    Progress(ProgressNotificationParam),
    /// A ping from the server, and the HTTP stream it came on (none over a duplex).
    Pinged(Option<InboundStreamOrigin>),
}

/// A client on a chosen protocol version that reports progress and pings.
#[derive(Debug, Clone)]
pub(crate) struct ProbeClient {
    version: ProtocolVersion,
    events: mpsc::UnboundedSender<ClientEvent>,
}

impl ProbeClient {
    /// A client on `version`, and the events it will report.
    pub(crate) fn new(version: ProtocolVersion) -> (Self, mpsc::UnboundedReceiver<ClientEvent>) {
        let (events, receiver) = mpsc::unbounded_channel();
        (Self { version, events }, receiver)
    }
}

impl ClientHandler for ProbeClient {
    fn get_info(&self) -> ClientConfig {
        let mut info = ClientConfig::default();
        info.protocol_version = self.version.clone();
        info
    }

    async fn ping(&self, context: RequestContext<RoleClient>) -> Result<(), ErrorData> {
        let origin = context.extensions.get::<InboundStreamOrigin>().cloned();
        let _ = self.events.send(ClientEvent::Pinged(origin));
        Ok(())
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _: NotificationContext<RoleClient>,
    ) {
        let _ = self.events.send(ClientEvent::Progress(params));
    }
}

/// A client connected to `server` over an in-memory duplex, through rmcp's own
/// `initialize` handshake. The server runs until the client goes away.
pub(crate) async fn connect_duplex<S: ServerHandler>(
    server: S,
    client: ProbeClient,
) -> RunningService<RoleClient, ProbeClient> {
    use rmcp::ServiceExt;
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let (server, client) = answered("initialize", async {
        tokio::join!(server.serve(server_io), client.serve(client_io))
    })
    .await;
    let server = server.expect("server starts");
    tokio::spawn(server.waiting());
    client.expect("client connects")
}

/// A peer for request contexts made by hand: a server on one end of a duplex
/// that nobody reads. Keep the stream as long as the peer is used.
pub(crate) fn server_peer() -> (Peer<RoleServer>, tokio::io::DuplexStream) {
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let server = serve_directly::<RoleServer, _, _, _, _>(ToolServer::new(), server_io, None);
    (server.peer().clone(), client_io)
}

/// `tools/call` of `name` without arguments.
pub(crate) fn call(name: &'static str) -> CallToolRequestParams {
    CallToolRequestParams::new(name)
}

/// `tools/call` of `echo` with `text`.
pub(crate) fn echo(text: &str) -> CallToolRequestParams {
    let arguments = serde_json::json!({ "text": text });
    CallToolRequestParams::new("echo").with_arguments(arguments.as_object().unwrap().clone())
}

/// The single text of a tool result.
pub(crate) fn only_text(result: &CallToolResult) -> &str {
    assert_eq!(
        result.content.len(),
        1,
        "one content item expected: {result:?}"
    );
    &result.content[0].as_text().expect("a text item").text
}
