//! The layer in front of a real `McpRouter`, served by tower-mcp's stdio
//! transport in process: what the client reads, compared with what tower-mcp
//! sends without the layer.

use std::collections::HashMap;
use std::convert::Infallible;

use mcp_tool_errors::{ToolErrorLayer, render_error};
use serde_json::{Value, json};
use tower::{Layer, ServiceExt, service_fn};
use tower_mcp::prompt::PromptBuilder;
use tower_mcp::{
    CallToolParams, CallToolResult, GetPromptResult, McpRequest, McpRouter, NoParams, PanicPolicy,
    RequestId, RouterRequest, RouterResponse, Tool, ToolBuilder,
};

use crate::support::quiet_panics::silence_expected_panics;
use crate::wire::{Wire, first_text, is_error_result};

const SECRET: &str = "token=sk-live-0000SECRET";

fn refusing_tool() -> Tool {
    ToolBuilder::new("lookup")
        .description("Always refuses.")
        .handler(|_: NoParams| async { Ok(CallToolResult::error("no such key")) })
        .build()
}

fn failing_handler() -> Tool {
    ToolBuilder::new("quota")
        .description("Its handler returns an error.")
        .handler(|_: NoParams| async { Err(tower_mcp::Error::tool("quota exceeded")) })
        .build()
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct AddInput {
    a: i64,
    b: i64,
}

fn add() -> Tool {
    ToolBuilder::new("add")
        .description("Adds two integers.")
        .handler(|input: AddInput| async move {
            Ok(CallToolResult::text((input.a + input.b).to_string()))
        })
        .build()
}

fn panicking_tool() -> Tool {
    ToolBuilder::new("leak")
        .description("Panics with a secret in the message.")
        .handler(|_: NoParams| async { panic_with_secret() })
        .build()
}

fn panic_with_secret<T>() -> T {
    panic!("[expected] request failed with {SECRET}")
}

fn router() -> McpRouter {
    McpRouter::new()
        .server_info("tests", "1.0.0")
        .tool(refusing_tool())
        .tool(failing_handler())
        .tool(add())
        .tool(panicking_tool())
        .prompt(
            PromptBuilder::new("summary")
                .description("Panics while building the prompt.")
                .handler(|_: HashMap<String, String>| async {
                    panic_with_secret::<tower_mcp::Result<GetPromptResult>>()
                })
                .build(),
        )
}

#[tokio::test]
async fn a_tool_error_result_is_rewrapped() {
    let mut wire = Wire::layered(router(), ToolErrorLayer::new()).await;
    let line = wire.call_tool(1, "lookup", json!({})).await;
    assert!(is_error_result(&line), "{line}");
    assert_eq!(first_text(&line), render_error("lookup", "no such key"));
}

/// The response lines to `requests` (sent with ids 1, 2, ...) from the router
/// `serve` builds, served without the layer and with it: (bare, layered) pairs.
async fn bare_and_layered(
    serve: impl Fn() -> McpRouter,
    requests: &[(&str, Value)],
) -> Vec<(String, String)> {
    let mut bare = Wire::bare(serve()).await;
    let mut layered = Wire::layered(serve(), ToolErrorLayer::new()).await;
    let mut answers = Vec::new();
    for (id, (method, params)) in (1..).zip(requests) {
        let without = bare.request(id, method, params.clone()).await;
        let with = layered.request(id, method, params.clone()).await;
        answers.push((without, with));
    }
    answers
}

/// [`bare_and_layered`] for a single `tools/call`.
async fn call_bare_and_layered(
    serve: impl Fn() -> McpRouter,
    tool: &str,
    arguments: Value,
) -> (String, String) {
    let params = json!({"name": tool, "arguments": arguments});
    let mut answers = bare_and_layered(serve, &[("tools/call", params)]).await;
    answers.pop().unwrap()
}

#[tokio::test]
async fn a_handler_error_is_rewrapped_from_tower_mcps_own_text() {
    let (bare, layered) = call_bare_and_layered(router, "quota", json!({})).await;
    assert!(is_error_result(&bare), "{bare}");
    assert!(first_text(&bare).contains("quota exceeded"), "{bare}");
    assert_eq!(
        first_text(&layered),
        render_error("quota", &first_text(&bare))
    );
}

#[tokio::test]
async fn a_validation_error_of_typed_arguments_is_rewrapped() {
    let (bare, layered) = call_bare_and_layered(router, "add", json!({"a": "two", "b": 3})).await;
    assert!(
        is_error_result(&bare),
        "tower-mcp reports bad arguments as a tool error: {bare}"
    );
    assert_eq!(
        first_text(&layered),
        render_error("add", &first_text(&bare))
    );
}

#[tokio::test]
async fn protocol_errors_pass_through_byte_for_byte() {
    let requests = [
        (
            "tools/call",
            json!({"name": "no_such_tool", "arguments": {}}),
        ),
        ("tools/call", json!({"arguments": {}})),
        ("no/such/method", json!({})),
    ];
    for (bare, layered) in bare_and_layered(router, &requests).await {
        assert!(bare.contains("\"error\""), "not a protocol error: {bare}");
        assert_eq!(layered, bare);
    }
}

#[tokio::test]
async fn successful_answers_pass_through_byte_for_byte() {
    let requests = [
        (
            "tools/call",
            json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
        ),
        ("tools/list", json!({})),
        ("ping", json!({})),
    ];
    for (bare, layered) in bare_and_layered(router, &requests).await {
        assert!(bare.contains("\"result\""), "not a success: {bare}");
        assert_eq!(layered, bare);
    }
}

#[tokio::test]
async fn a_panicking_tool_gets_an_error_result_without_the_payload() {
    silence_expected_panics();
    let mut wire = Wire::layered(router(), ToolErrorLayer::new()).await;
    let line = wire.call_tool(7, "leak", json!({})).await;
    assert!(is_error_result(&line), "{line}");
    assert!(
        first_text(&line).starts_with("<error tool=\"leak\">\n"),
        "{line}"
    );
    assert!(
        !line.contains("sk-live"),
        "the payload reached the client: {line}"
    );
    // The server is still there for the next request.
    let after = wire.call_tool(8, "lookup", json!({})).await;
    assert!(is_error_result(&after), "{after}");
}

#[tokio::test]
async fn a_panic_outside_tools_call_is_an_internal_error_with_the_request_id() {
    silence_expected_panics();
    let expected = json!({
        "jsonrpc": "2.0",
        "id": 9,
        "error": {
            "code": -32603,
            "message": "Internal error: the server failed while handling this request.",
        },
    });
    // tower-mcp's `catch_panics` covers tool handlers only: the layer answers
    // for a prompt with it on or off.
    for router in [router(), router().catch_panics()] {
        let mut wire = Wire::layered(router, ToolErrorLayer::new()).await;
        let line = wire
            .request(9, "prompts/get", json!({"name": "summary"}))
            .await;
        assert_eq!(line, expected.to_string());
    }
}

#[tokio::test]
async fn with_catch_panics_on_tower_mcp_answers_and_the_layer_rewraps_its_text() {
    silence_expected_panics();
    let (bare, layered) =
        call_bare_and_layered(|| router().catch_panics(), "leak", json!({})).await;
    // tower-mcp's detailed policy sends the payload; the layer cannot take it back.
    assert!(first_text(&bare).contains(SECRET), "{bare}");
    assert_eq!(
        first_text(&layered),
        render_error("leak", &first_text(&bare))
    );
}

#[tokio::test]
async fn a_redacted_panic_policy_is_wrapped_like_any_tool_error() {
    silence_expected_panics();
    let router = router().catch_panics_with(PanicPolicy::redacted("the tool crashed"));
    let line = Wire::layered(router, ToolErrorLayer::new())
        .await
        .call_tool(1, "leak", json!({}))
        .await;
    assert_eq!(first_text(&line), render_error("leak", "the tool crashed"));
    assert!(!line.contains("sk-live"), "{line}");
}

#[tokio::test]
async fn an_error_of_the_inner_service_is_passed_on_unchanged() {
    let inner = service_fn(|_: RouterRequest| async {
        Err::<RouterResponse, _>("backend unavailable".to_owned())
    });
    let params: CallToolParams =
        serde_json::from_value(json!({"name": "lookup", "arguments": {}})).unwrap();
    let request = RouterRequest::new(RequestId::Number(1), McpRequest::CallTool(params));
    let error = ToolErrorLayer::new()
        .layer(inner)
        .oneshot(request)
        .await
        .unwrap_err();
    assert_eq!(error, "backend unavailable");
}

#[tokio::test]
async fn a_string_id_is_echoed_after_a_panic() {
    silence_expected_panics();
    let inner = service_fn(|_: RouterRequest| async {
        panic_with_secret::<Result<RouterResponse, Infallible>>()
    });
    let request = RouterRequest::new(RequestId::String("call-a".into()), McpRequest::Ping);
    let response = ToolErrorLayer::new()
        .layer(inner)
        .oneshot(request)
        .await
        .unwrap();
    assert_eq!(response.id, RequestId::String("call-a".into()));
    let error = response
        .inner
        .expect_err("a panic outside tools/call is a JSON-RPC error");
    assert_eq!(error.code, -32603);
}
