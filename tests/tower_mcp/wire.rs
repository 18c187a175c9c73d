//! A client on the far end of tower-mcp's stdio transport, in process: JSON-RPC
//! lines written to the transport's input and read back from its output.

use mcp_tool_errors::ToolErrorLayer;
use serde_json::{Value, json};
use tokio::io::{
    AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf,
};
use tokio::task::JoinHandle;
use tower_mcp::{McpRouter, StdioTransport};

use crate::support::within_hang_guard;

/// A connected, initialized client of one stdio transport.
pub(crate) struct Wire {
    to_server: WriteHalf<DuplexStream>,
    from_server: Lines<BufReader<ReadHalf<DuplexStream>>>,
    server: JoinHandle<()>,
}

impl Wire {
    /// `router` served over stdio with `layer` on, as a server would run it.
    pub(crate) async fn layered(router: McpRouter, layer: ToolErrorLayer) -> Self {
        let (client, server) = tokio::io::duplex(64 * 1024);
        let (reader, writer) = tokio::io::split(server);
        let server = tokio::spawn(async move {
            let mut transport = StdioTransport::new(router).layer(layer);
            transport.run_with_streams(reader, writer).await.unwrap();
        });
        Self::connect(client, server).await
    }

    /// `router` served over stdio without the layer: what tower-mcp sends alone.
    pub(crate) async fn bare(router: McpRouter) -> Self {
        let (client, server) = tokio::io::duplex(64 * 1024);
        let (reader, writer) = tokio::io::split(server);
        let server = tokio::spawn(async move {
            let mut transport = StdioTransport::new(router);
            transport.run_with_streams(reader, writer).await.unwrap();
        });
        Self::connect(client, server).await
    }

    async fn connect(client: DuplexStream, server: JoinHandle<()>) -> Self {
        let (reader, writer) = tokio::io::split(client);
        let mut wire = Self {
            to_server: writer,
            from_server: BufReader::new(reader).lines(),
            server,
        };
        let params = json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "tests", "version": "1"},
        });
        let answer = wire.request(0, "initialize", params).await;
        assert!(answer.contains("\"result\""), "initialize failed: {answer}");
        wire.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        wire
    }

    /// Calls `tool` and returns the response line exactly as the transport wrote it.
    pub(crate) async fn call_tool(&mut self, id: i64, tool: &str, arguments: Value) -> String {
        let params = json!({"name": tool, "arguments": arguments});
        self.request(id, "tools/call", params).await
    }

    /// Sends one request and returns its response line exactly as written.
    pub(crate) async fn request(&mut self, id: i64, method: &str, params: Value) -> String {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        let what = format!("{method} (id {id})");
        within_hang_guard(&what, self.response_to(id)).await
    }

    async fn send(&mut self, message: Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.to_server.write_all(line.as_bytes()).await.unwrap();
        self.to_server.flush().await.unwrap();
    }

    /// Skips notifications (log messages and the like) up to the response to `id`.
    async fn response_to(&mut self, id: i64) -> String {
        loop {
            let line = self
                .from_server
                .next_line()
                .await
                .unwrap()
                .expect("the transport closed its output");
            let message: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("not JSON on the transport's output ({e}): {line}"));
            if message.get("id") == Some(&json!(id)) {
                return line;
            }
        }
    }
}

impl Drop for Wire {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// The text of the first content item of a `tools/call` response line.
pub(crate) fn first_text(line: &str) -> String {
    let message: Value = serde_json::from_str(line).unwrap();
    message["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text item in {line}"))
        .to_owned()
}

/// Whether a `tools/call` response line is an `isError` result.
pub(crate) fn is_error_result(line: &str) -> bool {
    let message: Value = serde_json::from_str(line).unwrap();
    message["result"]["isError"] == json!(true)
}
