//! A client that speaks JSON-RPC lines to a server and keeps every byte it
//! receives: what the client sees, before any typed parsing could drop a field.

use serde_json::{Value, json};
use tokio::io::{
    AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf,
};

use mcp_tool_errors::is_rendered;

use super::within_hang_guard;

pub struct LineClient {
    to_server: WriteHalf<DuplexStream>,
    from_server: Lines<BufReader<ReadHalf<DuplexStream>>>,
    /// Every line the server sent, in order.
    pub received: String,
}

impl LineClient {
    /// A client on `io`, initialized with the MCP handshake.
    pub async fn initialized(io: DuplexStream) -> Self {
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
