//! The proxy in front of a server on the official Python SDK (PyPI `mcp`, its
//! `MCPServer` class) served over Streamable HTTP, stateless, answering in JSON:
//! servers/python_http_server.py. The SDK is installed by
//! scripts/install-test-servers.sh into `.tools/`.

use std::net::SocketAddr;
use std::path::PathBuf;

use mcp_tool_errors::render_error;
use serde_json::{Value, json};
use tokio::process::Command;

use crate::support::{Events, ListeningProcess, Proxy, body, event_data, json, post_to};

const NEEDS_SERVERS: &str = "needs the test servers: scripts/install-test-servers.sh";

/// The Python server, running until dropped.
pub(crate) struct PythonServer(ListeningProcess);

impl PythonServer {
    /// Stateless, answering in JSON bodies.
    pub(crate) async fn start() -> Self {
        Self::start_with(&[]).await
    }

    /// With sessions, answering in event streams.
    async fn start_stateful() -> Self {
        Self::start_with(&["stateful"]).await
    }

    async fn start_with(args: &[&str]) -> Self {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let python = root.join("../.tools/python/bin/python");
        assert!(python.exists(), "{NEEDS_SERVERS}");
        let mut command = Command::new(python);
        command
            .arg(root.join("tests/http/servers/python_http_server.py"))
            .args(args);
        Self(ListeningProcess::spawn(command, "listening on ").await)
    }

    pub(crate) fn address(&self) -> SocketAddr {
        self.0.address
    }

    fn url(&self) -> String {
        format!("http://{}/mcp", self.address())
    }
}

const PROTOCOL: [(&str, &str); 1] = [("mcp-protocol-version", "2025-06-18")];

/// A `tools/call` of `tool` with `arguments`, with `id`.
pub(crate) fn tool_call(id: u64, tool: &str, arguments: Value) -> String {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    })
    .to_string()
}

#[tokio::test]
#[ignore = "needs the test servers: scripts/install-test-servers.sh"]
async fn python_tool_errors_become_the_element_with_the_sdks_own_text() {
    let server = PythonServer::start().await;
    let proxy = Proxy::start(&server.url(), &[]).await;
    // The SDK answers a call of an unknown tool with an error result too.
    for (id, tool) in [
        (1, "tool_error"),
        (2, "plain_exception"),
        (3, "no_such_tool"),
    ] {
        let call = tool_call(id, tool, json!({"path": "/etc/missing"}));
        let direct = json(post_to(server.address(), &call, &PROTOCOL).await).await;
        let proxied = json(proxy.post(&call, &PROTOCOL).await).await;
        let direct_text = direct["result"]["content"][0]["text"].as_str().unwrap();
        assert_eq!(direct["result"]["isError"], true, "{direct}");
        let mut expected = direct.clone();
        expected["result"]["content"][0]["text"] = render_error(tool, direct_text).into();
        assert_eq!(proxied, expected);
    }
}

#[tokio::test]
#[ignore = "needs the test servers: scripts/install-test-servers.sh"]
async fn python_successes_and_other_answers_are_byte_identical_through_the_proxy() {
    let server = PythonServer::start().await;
    let proxy = Proxy::start(&server.url(), &[]).await;
    let requests = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string(),
        tool_call(2, "echo", json!({"text": "héllo \"world\"\n"})),
        json!({"jsonrpc": "2.0", "id": 3, "method": "no/such/method"}).to_string(),
        json!({"jsonrpc": "2.0", "id": 4, "method": "ping"}).to_string(),
    ];
    for request in &requests {
        let direct = post_to(server.address(), request, &PROTOCOL).await;
        let direct_status = direct.status();
        let direct = body(direct).await;
        let proxied = proxy.post(request, &PROTOCOL).await;
        assert_eq!(proxied.status(), direct_status, "{request}");
        assert_eq!(body(proxied).await, direct, "{request}");
    }
}

#[tokio::test]
#[ignore = "needs the test servers: scripts/install-test-servers.sh"]
async fn a_python_tool_that_hangs_is_answered_at_its_timeout() {
    let server = PythonServer::start().await;
    let proxy = Proxy::start(&server.url(), &["--tool-timeout", "500ms"]).await;

    let call = tool_call(5, "sleep", json!({"seconds": 60}));
    let answer = json(proxy.post(&call, &PROTOCOL).await).await;

    assert_eq!(
        answer,
        json!({
            "jsonrpc": "2.0", "id": 5,
            "result": {
                "content": [{"type": "text", "text": render_error("sleep", "The tool did not finish within 0.5 s and was cancelled.")}],
                "isError": true,
            },
        })
    );
}

/// A session opened at `address` (the server, or the proxy in front of it):
/// its id, after `initialize` and `notifications/initialized`.
async fn open_session(address: SocketAddr) -> String {
    let initialize = json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "mcp-tool-errors-tests", "version": "0"},
        },
    });
    let response = post_to(address, &initialize.to_string(), &PROTOCOL).await;
    let session = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let _ = body(response).await;
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let headers = [PROTOCOL[0], ("mcp-session-id", &session)];
    let response = post_to(address, initialized, &headers).await;
    assert_eq!(response.status(), 202);
    session
}

/// Every event of the answer to `request` in `session` at `address`.
async fn events(address: SocketAddr, session: &str, request: &str) -> Vec<String> {
    let headers = [PROTOCOL[0], ("mcp-session-id", session)];
    let response = post_to(address, request, &headers).await;
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let mut events = Events::new(response);
    let mut all = Vec::new();
    while let Some(event) = events.next().await {
        all.push(event);
    }
    all
}

#[tokio::test]
#[ignore = "needs the test servers: scripts/install-test-servers.sh"]
async fn python_sessions_over_event_streams_progress_unchanged_and_errors_rewrapped() {
    let server = PythonServer::start_stateful().await;
    let proxy = Proxy::start(&server.url(), &[]).await;
    let direct_session = open_session(server.address()).await;
    let proxied_session = open_session(proxy.address).await;

    let progress = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "progress", "arguments": {"steps": 3}, "_meta": {"progressToken": "p-1"}},
    })
    .to_string();
    let direct = events(server.address(), &direct_session, &progress).await;
    let proxied = events(proxy.address, &proxied_session, &progress).await;
    assert_eq!(direct.len(), 4, "{direct:?}");
    assert_eq!(proxied, direct);

    let failing = tool_call(2, "tool_error", json!({"path": "/etc/missing"}));
    let direct = events(server.address(), &direct_session, &failing).await;
    let proxied = events(proxy.address, &proxied_session, &failing).await;
    let direct_answer = event_data(direct.last().unwrap());
    let direct_text = direct_answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap();
    let mut expected = direct_answer.clone();
    expected["result"]["content"][0]["text"] = render_error("tool_error", direct_text).into();
    assert_eq!(proxied.len(), direct.len());
    assert_eq!(event_data(proxied.last().unwrap()), expected);
}

#[tokio::test]
#[ignore = "needs the test servers: scripts/install-test-servers.sh"]
async fn a_python_tool_that_hangs_in_a_session_is_answered_and_cancelled_in_that_session() {
    let server = PythonServer::start_stateful().await;
    let proxy = Proxy::start(&server.url(), &["--tool-timeout", "500ms"]).await;
    let session = open_session(proxy.address).await;

    let call = tool_call(3, "sleep", json!({"seconds": 60}));
    let answered = events(proxy.address, &session, &call).await;

    assert_eq!(
        event_data(answered.last().unwrap()),
        json!({
            "jsonrpc": "2.0", "id": 3,
            "result": {
                "content": [{"type": "text", "text": render_error("sleep", "The tool did not finish within 0.5 s and was cancelled.")}],
                "isError": true,
            },
        })
    );
    // The notification reached the session: the SDK cancelled the tool's task.
    server
        .0
        .log_shows("python_server: sleep was cancelled")
        .await;
}

/// A call whose arguments hold `NaN`: no JSON to the proxy, a float to the
/// SDK (its parser takes `NaN` and `Infinity`), which runs the tool. Its
/// error must not reach the client without the layer: the proxy answers the
/// body `-32700` and the tool never runs.
#[tokio::test]
#[ignore = "needs the test servers: scripts/install-test-servers.sh"]
async fn a_python_call_holding_nan_runs_no_tool_without_the_layer() {
    let server = PythonServer::start().await;
    let proxy = Proxy::start(&server.url(), &[]).await;
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tool_error","arguments":{"path":"/etc/missing","n":NaN}}}"#;
    let direct = json(post_to(server.address(), call, &PROTOCOL).await).await;
    assert_eq!(
        direct["result"]["isError"], true,
        "the SDK runs it: {direct}"
    );

    let proxied = json(proxy.post(call, &PROTOCOL).await).await;
    assert_eq!(proxied["error"]["code"], -32700, "{proxied}");
}
