//! The span to the letter of the MCP conventions: every field the request holds
//! recorded when the span is created, the status by the JSON-RPC error code,
//! and `network.transport` when the layer is told.

use std::convert::Infallible;

use mcp_tool_errors::{ToolErrorLayer, ToolErrors};
use serde_json::{Value, json};
use tower::{Layer, ServiceExt, service_fn};
use tracing_subscriber::fmt::format::FmtSpan;

use crate::answer::respond;
use crate::captured::Captured;
use crate::exporter::{
    CLIENT_ERROR_CODES, assert_failed, assert_protocol_error, assert_span, exporter, span_named,
};

/// Answers `conv_ok` with a result, and a tool named `conv_code_N` with the
/// JSON-RPC error `N`.
async fn server(request: Value) -> Result<Value, Infallible> {
    let tool = request["params"]["name"].as_str().unwrap_or_default();
    let answer = match tool.strip_prefix("conv_code_") {
        Some(code) => {
            let code: i64 = code.parse().expect("a tool named after its error code");
            json!({"error": {"code": code, "message": "refused"}})
        }
        None => {
            json!({"result": {"content": [{"type": "text", "text": "sunny"}], "isError": false}})
        }
    };
    Ok(respond(&request, answer))
}

fn tool_call(id: &str, tool: &str) -> Value {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {
            "name": tool, "arguments": {},
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2025-11-25"},
        },
    })
}

/// The lines a fmt subscriber that prints each new span writes while
/// `request` goes through `layer`, on this thread.
async fn new_span_lines(layer: ToolErrorLayer, request: Value) -> String {
    exporter();
    let captured = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(captured.clone())
        .with_span_events(FmtSpan::NEW)
        .with_ansi(false)
        .finish();
    let _default = tracing::subscriber::set_default(subscriber);
    layer
        .layer(service_fn(server))
        .oneshot(request)
        .await
        .unwrap();
    captured.text()
}

#[tokio::test]
async fn the_new_span_line_shows_every_field_the_request_holds() {
    let lines = new_span_lines(ToolErrorLayer::new(), tool_call("conv-new-1", "conv_ok")).await;

    let new = lines
        .lines()
        .find(|line| line.contains("new"))
        .unwrap_or_else(|| panic!("a new-span line: {lines}"));
    for field in [
        r#"otel.name=tools/call conv_ok"#,
        r#"mcp.method.name="tools/call""#,
        r#"mcp.protocol.version="2025-11-25""#,
        r#"jsonrpc.request.id=conv-new-1"#,
        r#"gen_ai.operation.name="execute_tool""#,
        r#"gen_ai.tool.name="conv_ok""#,
    ] {
        assert!(new.contains(field), "{field} in the new-span line: {new}");
    }
    assert!(!new.contains("network.transport"), "{new}");
}

#[tokio::test]
async fn the_new_span_line_shows_the_transport_the_layer_was_told() {
    let layer = ToolErrorLayer::new().network_transport("pipe");
    let lines = new_span_lines(layer, tool_call("conv-new-2", "conv_ok")).await;

    let new = lines.lines().find(|line| line.contains("new")).unwrap();
    assert!(new.contains(r#"network.transport="pipe""#), "{new}");
}

#[tokio::test]
async fn the_exported_span_has_the_transport_the_layer_was_told() {
    exporter();
    for (tool, transport) in [("conv_ok_tcp", Some("tcp")), ("conv_ok_untold", None)] {
        let mut layer = ToolErrorLayer::new();
        if let Some(transport) = transport {
            layer = layer.network_transport(transport);
        }
        layer
            .layer(service_fn(server))
            .oneshot(tool_call(tool, tool))
            .await
            .unwrap();
        let span = span_named(&format!("tools/call {tool}"));
        assert_span(&span, &[("network.transport", transport)]);
    }
}

#[tokio::test]
async fn a_client_error_keeps_the_status_unset_but_says_its_code() {
    exporter();
    for code in CLIENT_ERROR_CODES {
        let tool = format!("conv_code_{code}");
        let response = ToolErrors::new(service_fn(server))
            .oneshot(tool_call(&tool, &tool))
            .await
            .unwrap();
        assert_eq!(response["error"]["code"].to_string(), code);

        let span = span_named(&format!("tools/call {tool}"));
        assert_protocol_error(&span, code);
        assert_failed(&span, false);
    }
}

#[tokio::test]
async fn a_server_error_code_sets_the_status_to_error() {
    exporter();
    for code in ["-32603", "-32000", "-32001", "-1"] {
        let tool = format!("conv_code_{code}");
        ToolErrors::new(service_fn(server))
            .oneshot(tool_call(&tool, &tool))
            .await
            .unwrap();

        let span = span_named(&format!("tools/call {tool}"));
        assert_protocol_error(&span, code);
        assert_failed(&span, true);
    }
}
