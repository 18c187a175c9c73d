//! With the default configuration no byte of a panic payload reaches the client,
//! through the JSON path, rmcp and tower-mcp; the payload goes to the `tracing`
//! log instead, in an error event that names the tool and the request id.
//!
//! Each test captures the log of its own thread: the tests run on
//! current-thread runtimes, so every task they spawn logs there too.

mod support;

use std::convert::Infallible;
use std::time::Duration;

use mcp_tool_errors::{ToolErrorLayer, ToolErrors, is_rendered};
use serde_json::{Value, json};
use support::log::CapturedLog;
use tower::{Layer, Service, ServiceExt, service_fn};

/// A fake secret, as a handler might format into a panic message.
const SECRET: &str = "sk-live-7Hq2Zx9PvB4nLw0T";

/// What a hung answer would look like: far longer than any answer here takes.
const HANG_GUARD: Duration = Duration::from_secs(30);

/// Panics as a handler that formatted a credential into its message would.
fn panic_with_secret<T>() -> T {
    panic!("[expected] connecting with token={SECRET} failed")
}

/// The parts of the panic payload found in `sent`.
fn payload_parts_in(sent: &str) -> Vec<&'static str> {
    let parts = [
        SECRET,
        "7Hq2Zx9PvB4nLw0T",
        "sk-live",
        "token=",
        "[expected]",
        "connecting with",
    ];
    parts
        .into_iter()
        .filter(|part| sent.contains(part))
        .collect()
}

/// Fails the test if any part of the panic payload is in `sent`.
#[track_caller]
fn assert_nothing_of_the_payload_in(sent: &str) {
    let found = payload_parts_in(sent);
    assert!(
        found.is_empty(),
        "{found:?} of the panic payload reached the client: {}",
        sent
    );
}

/// Log assertions of these tests.
trait PanicLog {
    fn assert_panic_logged(&self, tool: Option<&str>, id: &str);
}

impl PanicLog for CapturedLog {
    /// Checks that the log has an error event for the panic answered for `id`
    /// (and `tool`, for a `tools/call`), with the payload in it.
    /// `id` is as JSON writes it, the way every message type logs it.
    #[track_caller]
    fn assert_panic_logged(&self, tool: Option<&str>, id: &str) {
        let lines = self.lines();
        let event = lines.iter().find(|line| {
            line.contains("handler panicked; answering with an error")
                && line.contains(&format!(" id={id} "))
                && tool.is_none_or(|tool| line.contains(&format!("tool=\"{tool}\"")))
        });
        let event = event.unwrap_or_else(|| {
            panic!(
                "no error event for {tool:?} (id {id}) in\n{}",
                &lines.join("\n")
            )
        });
        assert!(event.contains("ERROR"), "{}", event);
        assert!(
            event.contains(SECRET),
            "the payload is not in the log: {}",
            event
        );
        if tool.is_none() {
            assert!(!event.contains("tool="), "{}", event);
        }
    }
}

// ---------------------------------------------------------------------------
// The JSON path.
// ---------------------------------------------------------------------------

fn tool_call(id: u64, tool: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": {}}})
}

/// The default layer over a service that panics with the secret, in `call` or
/// in its future.
fn leaky_json_service(
    in_call: bool,
) -> ToolErrors<impl Service<Value, Response = Option<Value>, Error = Infallible> + Clone> {
    ToolErrors::new(service_fn(move |_request: Value| {
        if in_call {
            panic_with_secret::<()>();
        }
        async move {
            tokio::task::yield_now().await;
            panic_with_secret::<Result<Option<Value>, Infallible>>()
        }
    }))
}

async fn send<S>(service: S, request: Value) -> Option<Value>
where
    S: Service<Value, Response = Option<Value>, Error = Infallible>,
{
    match tokio::time::timeout(HANG_GUARD, service.oneshot(request))
        .await
        .expect("answered")
    {
        Ok(response) => response,
    }
}

#[tokio::test]
async fn json_path_keeps_the_payload_in_the_log() {
    support::quiet_panics::silence_expected_panics();
    let log = CapturedLog::start();
    for (n, in_call) in [(4101u64, true), (4102, false)] {
        let service = leaky_json_service(in_call);
        let response = send(service.clone(), tool_call(n, "deploy")).await.unwrap();
        let sent = serde_json::to_string(&response).unwrap();
        assert_nothing_of_the_payload_in(&sent);
        assert_eq!(response["result"]["isError"], true, "{sent}");
        assert!(is_rendered(
            response["result"]["content"][0]["text"].as_str().unwrap()
        ));
        log.assert_panic_logged(Some("deploy"), &n.to_string());

        let other = json!({"jsonrpc": "2.0", "id": format!("r{n}"), "method": "resources/read", "params": {"uri": "file:///etc"}});
        let response = send(service.clone(), other).await.unwrap();
        let sent = serde_json::to_string(&response).unwrap();
        assert_nothing_of_the_payload_in(&sent);
        assert_eq!(response["error"]["code"], -32603, "{sent}");
        log.assert_panic_logged(None, &format!("\"r{n}\""));

        let batch = json!([tool_call(n + 10, "deploy"), tool_call(n + 20, "rollback")]);
        let response = send(service, batch).await.unwrap();
        assert_nothing_of_the_payload_in(&serde_json::to_string(&response).unwrap());
        log.assert_panic_logged(Some("deploy"), &(n + 10).to_string());
        log.assert_panic_logged(Some("rollback"), &(n + 20).to_string());
    }
}

#[tokio::test]
async fn json_path_logs_a_panicked_notification() {
    support::quiet_panics::silence_expected_panics();
    let log = CapturedLog::start();
    let notification = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(send(leaky_json_service(true), notification).await, None);
    let lines = log.lines();
    let event = lines
        .iter()
        .find(|line| line.contains("handler panicked on a message that expects no response"))
        .unwrap_or_else(|| panic!("no event in\n{}", &lines.join("\n")));
    assert!(
        event.contains("ERROR") && event.contains(SECRET),
        "{}",
        event
    );
}

/// The control: the check finds the payload once it is let through on purpose.
#[tokio::test]
async fn json_path_sends_the_payload_only_when_told_to() {
    support::quiet_panics::silence_expected_panics();
    let exposing = ToolErrorLayer::new()
        .expose_panic_messages(true)
        .layer(leaky_json_service(true).into_inner());
    let response = send(exposing, tool_call(1, "deploy")).await.unwrap();
    let sent = serde_json::to_string(&response).unwrap();
    assert!(payload_parts_in(&sent).contains(&SECRET), "{}", &sent);
}

// ---------------------------------------------------------------------------
// A client that speaks JSON-RPC lines to a server and keeps every byte it
// receives: what the client sees, before any typed parsing could drop a field.
// ---------------------------------------------------------------------------

#[cfg(any(feature = "rmcp", feature = "tower-mcp"))]
mod line_client {
    use serde_json::{Value, json};
    use tokio::io::{
        AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf,
    };

    use mcp_tool_errors::is_rendered;

    use super::HANG_GUARD;

    pub(crate) struct LineClient {
        to_server: WriteHalf<DuplexStream>,
        from_server: Lines<BufReader<ReadHalf<DuplexStream>>>,
        /// Every line the server sent, in order.
        pub(crate) received: String,
    }

    impl LineClient {
        /// A client on `io`, initialized with the MCP handshake.
        pub(crate) async fn initialized(io: DuplexStream) -> Self {
            let (reader, writer) = tokio::io::split(io);
            let mut client = Self {
                to_server: writer,
                from_server: BufReader::new(reader).lines(),
                received: String::new(),
            };
            let params = json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "leak-check", "version": "1"},
            });
            let answer = client.request(json!(0), "initialize", params).await;
            assert!(
                answer.get("result").is_some(),
                "initialize failed: {answer}"
            );
            client
                .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
                .await;
            client
        }

        async fn send(&mut self, message: Value) {
            let mut line = message.to_string();
            line.push('\n');
            self.to_server.write_all(line.as_bytes()).await.unwrap();
            self.to_server.flush().await.unwrap();
        }

        /// Sends a request and reads up to its response.
        pub(crate) async fn request(&mut self, id: Value, method: &str, params: Value) -> Value {
            self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
                .await;
            tokio::time::timeout(HANG_GUARD, self.response_to(&id))
                .await
                .unwrap_or_else(|_| panic!("no answer to {method} (id {id}) within {HANG_GUARD:?}"))
        }

        async fn response_to(&mut self, id: &Value) -> Value {
            loop {
                let line = self
                    .from_server
                    .next_line()
                    .await
                    .unwrap()
                    .expect("the server closed the connection");
                self.received.push_str(&line);
                self.received.push('\n');
                let message: Value = serde_json::from_str(&line).unwrap();
                if message.get("id") == Some(id) && message.get("method").is_none() {
                    return message;
                }
            }
        }

        pub(crate) async fn call_tool(&mut self, id: u64, tool: &str) -> Value {
            self.request(
                json!(id),
                "tools/call",
                json!({"name": tool, "arguments": {}}),
            )
            .await
        }
    }

    /// Checks the answer to a panicked `tools/call` read off the wire.
    #[track_caller]
    pub(crate) fn assert_panic_answered(answer: &Value, tool: &str) {
        assert_eq!(answer["result"]["isError"], true, "{answer}");
        let text = answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert!(
            is_rendered(text) && text.starts_with(&format!("<error tool=\"{tool}\">")),
            "{answer}"
        );
    }
}

// ---------------------------------------------------------------------------
// rmcp: a `#[tool_router]` server `.with_tool_errors()`.
// ---------------------------------------------------------------------------

#[cfg(feature = "rmcp")]
mod rmcp_server {
    use rmcp::handler::server::router::tool::ToolRouter;
    use rmcp::model::{ServerCapabilities, ServerConfig};
    use rmcp::{ServerHandler, tool, tool_handler, tool_router};

    #[derive(Debug, Clone)]
    pub(crate) struct LeakyServer {
        tool_router: ToolRouter<Self>,
    }

    impl LeakyServer {
        pub(crate) fn new() -> Self {
            Self {
                tool_router: Self::tool_router(),
            }
        }
    }

    #[tool_router]
    impl LeakyServer {
        #[tool(description = "Panics with a credential in the message")]
        fn leak_sync(&self) -> String {
            super::panic_with_secret()
        }

        #[tool(description = "Panics with a credential in the message, after an await")]
        async fn leak_async(&self) -> String {
            tokio::task::yield_now().await;
            super::panic_with_secret()
        }
    }

    #[tool_handler(router = self.tool_router)]
    impl ServerHandler for LeakyServer {
        fn get_info(&self) -> ServerConfig {
            ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
        }
    }
}

/// A line client of the leaky rmcp server behind `layer`, and the server's task.
#[cfg(feature = "rmcp")]
async fn rmcp_client(
    layer: ToolErrorLayer,
) -> (line_client::LineClient, tokio::task::JoinHandle<()>) {
    use mcp_tool_errors::rmcp::ServerHandlerExt;
    use rmcp::ServiceExt as _;

    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let server = tokio::spawn(async move {
        let running = rmcp_server::LeakyServer::new()
            .layer(layer)
            .serve(server_io)
            .await;
        let _ = running.expect("the server starts").waiting().await;
    });
    (
        line_client::LineClient::initialized(client_io).await,
        server,
    )
}

#[cfg(feature = "rmcp")]
#[tokio::test]
async fn rmcp_path_keeps_the_payload_in_the_log() {
    support::quiet_panics::silence_expected_panics();
    let log = CapturedLog::start();
    let (mut client, server) = rmcp_client(ToolErrorLayer::new()).await;
    for (id, tool) in [(5101, "leak_sync"), (5102, "leak_async")] {
        let answer = client.call_tool(id, tool).await;
        line_client::assert_panic_answered(&answer, tool);
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

// ---------------------------------------------------------------------------
// tower-mcp: an `McpRouter` served over stdio with the layer.
// ---------------------------------------------------------------------------

/// A line client of an `McpRouter` whose tool and prompt panic with the secret,
/// served over stdio behind `layer`, and the server's task.
#[cfg(feature = "tower-mcp")]
async fn tower_mcp_client(
    layer: ToolErrorLayer,
) -> (line_client::LineClient, tokio::task::JoinHandle<()>) {
    use std::collections::HashMap;

    use tower_mcp::prompt::PromptBuilder;
    use tower_mcp::{GetPromptResult, McpRouter, NoParams, StdioTransport, ToolBuilder};

    let leak = ToolBuilder::new("leak")
        .description("Panics with a credential in the message")
        .handler(|_: NoParams| async { panic_with_secret() })
        .build();
    let summary = PromptBuilder::new("summary")
        .description("Panics while building the prompt")
        .handler(|_: HashMap<String, String>| async {
            panic_with_secret::<tower_mcp::Result<GetPromptResult>>()
        })
        .build();
    let router = McpRouter::new()
        .server_info("leaks", "1.0.0")
        .tool(leak)
        .prompt(summary);
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let server = tokio::spawn(async move {
        let (reader, writer) = tokio::io::split(server_io);
        let mut transport = StdioTransport::new(router).layer(layer);
        let _ = transport.run_with_streams(reader, writer).await;
    });
    (
        line_client::LineClient::initialized(client_io).await,
        server,
    )
}

#[cfg(feature = "tower-mcp")]
#[tokio::test]
async fn tower_mcp_path_keeps_the_payload_in_the_log() {
    support::quiet_panics::silence_expected_panics();
    let log = CapturedLog::start();
    let (mut client, server) = tower_mcp_client(ToolErrorLayer::new()).await;
    let answer = client.call_tool(6101, "leak").await;
    line_client::assert_panic_answered(&answer, "leak");
    log.assert_panic_logged(Some("leak"), "6101");

    let answer = client
        .request(json!(6102), "prompts/get", json!({"name": "summary"}))
        .await;
    assert_eq!(answer["error"]["code"], -32603, "{answer}");
    log.assert_panic_logged(None, "6102");

    assert_nothing_of_the_payload_in(&client.received);
    server.abort();

    // The control: the same wire shows the payload once it is let through.
    let (mut client, server) =
        tower_mcp_client(ToolErrorLayer::new().expose_panic_messages(true)).await;
    client.call_tool(6103, "leak").await;
    assert!(
        payload_parts_in(&client.received).contains(&SECRET),
        "{}",
        &client.received
    );
    server.abort();
}
