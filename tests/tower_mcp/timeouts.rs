//! A timeout in front of a real `McpRouter`, through tower-mcp's in-process
//! `ChannelTransport` and its own client, under tokio's paused clock.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mcp_tool_errors::{ToolErrorLayer, render_error};
use serde_json::json;
use tokio::time::Instant;
use tower_mcp::client::{ChannelTransport, McpClient};
use tower_mcp::{CallToolResult, McpRouter, NoParams, ToolBuilder};

/// Sets its flag when dropped.
struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[tokio::test(start_paused = true)]
async fn a_hung_tool_is_answered_dropped_and_the_client_goes_on() {
    let dropped = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&dropped);
    let hang = ToolBuilder::new("hang")
        .description("Never finishes.")
        .handler(move |_: NoParams| {
            let guard = DropFlag(Arc::clone(&flag));
            async move {
                let _guard = guard;
                std::future::pending::<tower_mcp::Result<CallToolResult>>().await
            }
        })
        .build();
    let echo = ToolBuilder::new("echo")
        .description("Answers at once.")
        .handler(|_: NoParams| async { Ok(CallToolResult::text("here")) })
        .build();
    let router = McpRouter::new()
        .server_info("tests", "1.0.0")
        .tool(hang)
        .tool(echo);
    let layer = ToolErrorLayer::new().tool_timeout(Duration::from_millis(1500));
    let client = McpClient::connect(ChannelTransport::layer(router, layer))
        .await
        .unwrap();
    client.initialize("tests", "1.0.0").await.unwrap();

    let started = Instant::now();
    let result = client.call_tool("hang", json!({})).await.unwrap();
    assert_eq!(started.elapsed(), Duration::from_millis(1500));
    assert!(result.is_error);
    assert_eq!(
        result.all_text(),
        render_error(
            "hang",
            "The tool did not finish within 1.5 s and was cancelled."
        )
    );
    assert!(
        dropped.load(Ordering::SeqCst),
        "the handler's future is dropped"
    );

    let started = Instant::now();
    let result = client.call_tool("echo", json!({})).await.unwrap();
    assert_eq!(started.elapsed(), Duration::ZERO);
    assert!(!result.is_error);
    assert_eq!(result.all_text(), "here");
}
