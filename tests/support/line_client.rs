//! A client that speaks JSON-RPC lines to a server and keeps every byte it
//! receives: what the client sees, before any typed parsing could drop a field.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{
    AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream, Lines,
};

use mcp_tool_errors::is_rendered;

use super::within_hang_guard;

type ToServer = Box<dyn AsyncWrite + Unpin + Send>;
type FromServer = Box<dyn AsyncRead + Unpin + Send>;

pub struct LineClient {
    to_server: ToServer,
    from_server: Lines<BufReader<FromServer>>,
    /// Every line the server sent, in order.
    pub received: String,
}

/// The `initialize` parameters of a 2025-11-25 client that declares the tasks
/// extension.
pub fn tasks_client_2025_11_25() -> Value {
    json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
        "clientInfo": {"name": "tasks-check", "version": "1"},
    })
}

impl LineClient {
    /// A client on `io`, initialized with the MCP handshake.
    pub async fn initialized(io: DuplexStream) -> Self {
        let params = json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "leak-check", "version": "1"},
        });
        let (reader, writer) = tokio::io::split(io);
        Self::initialized_with(reader, writer, params).await
    }

    /// A client reading the server's lines from `from_server` and writing its
    /// own to `to_server`, initialized with `params`.
    pub async fn initialized_with(
        from_server: impl AsyncRead + Unpin + Send + 'static,
        to_server: impl AsyncWrite + Unpin + Send + 'static,
        params: Value,
    ) -> Self {
        let from_server: FromServer = Box::new(from_server);
        let mut client = Self {
            to_server: Box::new(to_server),
            from_server: BufReader::new(from_server).lines(),
            received: String::new(),
        };
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
    pub async fn request(&mut self, id: Value, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        let what = format!("{method} (id {id})");
        within_hang_guard(&what, self.response_to(&id)).await
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

    /// Polls `tasks/get` of `task_id` (with ids from `first_id` on, every
    /// `interval`) until the task is no longer `working`; its last answer.
    pub async fn poll_task(&mut self, first_id: u64, task_id: &str, interval: Duration) -> Value {
        for id in first_id.. {
            let answer = self
                .request(json!(id), "tasks/get", json!({"taskId": task_id}))
                .await;
            if answer["result"]["status"] != "working" {
                return answer;
            }
            tokio::time::sleep(interval).await;
        }
        unreachable!("ids do not run out")
    }

    pub async fn call_tool(&mut self, id: u64, tool: &str) -> Value {
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
pub fn assert_panic_answered(answer: &Value, tool: &str) {
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        is_rendered(text) && text.starts_with(&format!("<error tool=\"{tool}\">")),
        "{answer}"
    );
}
