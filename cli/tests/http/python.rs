//! The proxy in front of a server on the official Python SDK (PyPI `mcp`, its
//! `MCPServer` class) served over Streamable HTTP, stateless, answering in JSON:
//! servers/python_http_server.py. The SDK is installed by
//! scripts/install-test-servers.sh into `.tools/`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Stdio;

use mcp_tool_errors::render_error;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::support::{Proxy, body, bounded, json, post_to};

const NEEDS_SERVERS: &str = "needs the test servers: scripts/install-test-servers.sh";

/// The Python server, running until dropped, and where it listens.
struct PythonServer {
    address: SocketAddr,
    _process: Child,
}

impl PythonServer {
    async fn start() -> Self {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let python = root.join("../.tools/python/bin/python");
        assert!(python.exists(), "{NEEDS_SERVERS}");
        let mut process = Command::new(python)
            .arg(root.join("tests/http/servers/python_http_server.py"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("python starts");
        let mut lines = BufReader::new(process.stderr.take().unwrap()).lines();
        let address = bounded("the Python server says where it listens", async {
            loop {
                let line = lines.next_line().await.unwrap().expect("python exited");
                if let Some(address) = line.strip_prefix("listening on ") {
                    return address.parse().expect("an address");
                }
            }
        })
        .await;
        // Its log is read (and dropped), so that it never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Self {
            address,
            _process: process,
        }
    }

    fn url(&self) -> String {
        format!("http://{}/mcp", self.address)
    }
}

const PROTOCOL: [(&str, &str); 1] = [("mcp-protocol-version", "2025-06-18")];

fn tool_call(id: u64, tool: &str, arguments: Value) -> String {
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
        let direct = json(post_to(server.address, &call, &PROTOCOL).await).await;
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
        let direct = post_to(server.address, request, &PROTOCOL).await;
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
