//! With the default configuration no byte of a panic payload reaches a
//! tower-mcp client, read off the raw wire; the payload goes to the `tracing`
//! log instead. An `McpRouter` served over stdio with the layer.

use std::collections::HashMap;

use mcp_tool_errors::ToolErrorLayer;
use serde_json::json;
use tower_mcp::prompt::PromptBuilder;
use tower_mcp::{GetPromptResult, McpRouter, NoParams, StdioTransport, ToolBuilder};

use crate::support::line_client::{LineClient, assert_panic_answered};
use crate::support::log::CapturedLog;
use crate::support::quiet_panics::silence_expected_panics;
use crate::support::secret_payload::{
    PanicLog, SECRET, assert_nothing_of_the_payload_in, panic_with_secret, payload_parts_in,
};

/// A line client of an `McpRouter` whose tool and prompt panic with the secret,
/// served over stdio behind `layer`, and the server's task.
async fn tower_mcp_client(layer: ToolErrorLayer) -> (LineClient, tokio::task::JoinHandle<()>) {
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
    (LineClient::initialized(client_io).await, server)
}

#[tokio::test]
async fn tower_mcp_path_keeps_the_payload_in_the_log() {
    silence_expected_panics();
    let log = CapturedLog::start();
    let (mut client, server) = tower_mcp_client(ToolErrorLayer::new()).await;
    let answer = client.call_tool(6101, "leak").await;
    assert_panic_answered(&answer, "leak");
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
