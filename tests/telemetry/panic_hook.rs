//! Where a panic payload goes. `install_panic_hook`'s line about a withheld
//! panic: a `tracing` event when a subscriber is set, so that it follows the
//! application's log format, and the plain stderr line otherwise (each in a
//! child process of its own, since the hook and the global subscriber are one
//! per process). The layer's own error event, which holds the payload: kept out
//! of a log by filtering its target, with the request span still there.

use std::convert::Infallible;

use mcp_tool_errors::ToolErrorLayer;
use serde_json::{Value, json};
use tower::{Layer, ServiceExt, service_fn};
use tracing_subscriber::Layer as _;
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::fmt::format::FmtSpan;
use tracing_subscriber::layer::SubscriberExt;

use crate::captured::Captured;

/// Set in the child process: `plain` (no subscriber) or `subscriber`.
const CHILD_MODE: &str = "MCP_TOOL_ERRORS_TELEMETRY_HOOK_CHILD";
const PAYLOAD: &str = "[expected] hook child payload token=hunter2";
/// What the hook's line says, in either form.
const WITHHELD: &str = "panicked; the answer is an error and the panic message is withheld";

/// Not a test of its own: the body of the child process, which does nothing
/// unless `CHILD_MODE` is set.
#[tokio::test]
async fn panic_hook_child() {
    let Ok(mode) = std::env::var(CHILD_MODE) else {
        return;
    };
    if mode == "subscriber" {
        // The application's log: a fmt subscriber on stderr that filters the
        // layer's own error event out, so only the hook's line is left.
        let subscriber = tracing_subscriber::fmt()
            .with_writer(std::io::stderr)
            .with_ansi(false)
            .with_max_level(tracing::Level::WARN)
            .finish();
        tracing::subscriber::set_global_default(subscriber).unwrap();
    }
    mcp_tool_errors::install_panic_hook();
    let panicking = service_fn(|_: Value| async {
        panic!("{PAYLOAD}");
        #[allow(unreachable_code)]
        Ok::<Value, Infallible>(Value::Null)
    });
    let request = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                         "params": {"name": "deploy", "arguments": {}}});
    let layer = ToolErrorLayer::new();
    #[cfg(feature = "redact")]
    let layer = layer.redact_secrets(true);
    let response = layer.layer(panicking).oneshot(request).await.unwrap();
    assert_eq!(response["result"]["isError"], true);
}

/// The stderr of `panic_hook_child` run alone in a new process in `mode`.
fn child_stderr(mode: &str) -> String {
    crate::test_child::stderr_of("panic_hook::panic_hook_child", CHILD_MODE, mode)
}

/// The lines of `stderr` that report the withheld panic.
fn withheld_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|line| line.contains(WITHHELD))
        .collect()
}

#[test]
fn without_a_subscriber_the_hook_writes_a_plain_stderr_line() {
    let stderr = child_stderr("plain");
    let lines = withheld_lines(&stderr);
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(
        lines[0].starts_with("mcp-tool-errors: the handler of tool \"deploy\""),
        "{stderr}"
    );
    assert!(!stderr.contains("hunter2"), "{stderr}");
}

#[test]
fn with_a_subscriber_the_hooks_line_is_a_tracing_event() {
    let stderr = child_stderr("subscriber");
    let lines = withheld_lines(&stderr);
    assert_eq!(lines.len(), 1, "{stderr}");
    // The fmt subscriber's format: level, then target, then the message.
    assert!(!lines[0].starts_with("mcp-tool-errors:"), "{stderr}");
    assert!(
        lines[0].contains(" WARN mcp_tool_errors: the handler of tool \"deploy\""),
        "{stderr}"
    );
    assert!(!stderr.contains("hunter2"), "{stderr}");
}

/// Sends a `tools/call` of `tool` to a handler that panics, through the default
/// layer, on this thread.
async fn call_a_panicking_tool(tool: &str) {
    crate::exporter::exporter();
    crate::quiet_panics::silence_expected_panics();
    let panicking = service_fn(|_: Value| async {
        panic!("{PAYLOAD}");
        #[allow(unreachable_code)]
        Ok::<Value, Infallible>(Value::Null)
    });
    let request = json!({"jsonrpc": "2.0", "id": tool, "method": "tools/call",
                         "params": {"name": tool, "arguments": {}}});
    let response = ToolErrorLayer::new()
        .layer(panicking)
        .oneshot(request)
        .await
        .unwrap();
    assert_eq!(response["result"]["isError"], true);
}

#[tokio::test]
async fn filtering_the_panic_target_out_keeps_the_payload_out_and_the_span_in() {
    let captured = Captured::default();
    let filter = Targets::new()
        .with_default(LevelFilter::INFO)
        .with_target("mcp_tool_errors::panic", LevelFilter::OFF);
    let log = tracing_subscriber::fmt::layer()
        .with_writer(captured.clone())
        .with_span_events(FmtSpan::NEW)
        .with_ansi(false)
        .with_filter(filter);
    let _default = tracing::subscriber::set_default(tracing_subscriber::registry().with(log));

    call_a_panicking_tool("deploy_filtered").await;

    let log = captured.text();
    assert!(
        log.contains("otel.name=tools/call deploy_filtered"),
        "the span: {log}"
    );
    assert!(!log.contains("hunter2"), "{log}");
    assert!(!log.contains("handler panicked"), "{log}");
}

#[tokio::test]
async fn the_control_without_the_filter_the_payload_is_in_the_log() {
    let captured = Captured::default();
    let log = tracing_subscriber::fmt::layer()
        .with_writer(captured.clone())
        .with_ansi(false)
        .with_filter(LevelFilter::INFO);
    let _default = tracing::subscriber::set_default(tracing_subscriber::registry().with(log));

    call_a_panicking_tool("deploy_unfiltered").await;

    let log = captured.text();
    assert!(log.contains("handler panicked"), "{log}");
    assert!(log.contains("hunter2"), "{log}");
}
