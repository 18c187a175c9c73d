//! The request span on the JSON path: a layered `tower::Service` over
//! `serde_json::Value`.

use std::convert::Infallible;
use std::time::Duration;

use mcp_tool_errors::{NoAnswer, ToolErrorLayer, ToolErrors};
use serde_json::{Value, json};
use tower::{Layer, Service, ServiceExt, service_fn};

use crate::answer::respond;
use crate::exporter::{
    PARENT_SPAN_ID, TRACE_ID, TRACEPARENT, assert_failed, assert_logged, assert_no_attribute_holds,
    assert_protocol_error, assert_span, assert_timed_out, assert_tool_error, duration_points,
    exporter, span_named, span_with_id,
};

/// In every tool call's arguments; no span may hold it.
const ARGUMENT: &str = "argument-Oslo-7731";
/// In every panic message; no span may hold it.
const PAYLOAD: &str = "token=hunter2";

/// A server whose tools answer by their name: `*_task` with a task handle
/// (protocol 2025-11-25), `*_refuse` with an `isError` result, `*_panic` by
/// panicking, `*_hang` never, `*_ok` with a result, `*_unreachable` with the
/// `isError` result of a proxy whose upstream cannot be reached, marked
/// [`NoAnswer::UpstreamUnreachable`]; any other tool is unknown (-32602). The
/// task of `*_refuse_task` fails with an `isError` result, any other
/// succeeds.
async fn server(request: Value) -> Result<Value, Infallible> {
    let tool = request["params"]["name"].as_str().unwrap_or_default();
    let task_id = request["params"]["taskId"].as_str().unwrap_or_default();
    let answer = if tool.ends_with("_task") {
        json!({"result": {"task": {"taskId": format!("{tool}-id"), "status": "working"}}})
    } else if request["method"] == "tasks/result" {
        let refused = task_id.ends_with("_refuse_task-id");
        json!({"result": {"content": [{"type": "text", "text": "no forecast"}], "isError": refused}})
    } else if tool.ends_with("_ok") || request["method"] == "ping" {
        json!({"result": {"content": [{"type": "text", "text": "sunny"}], "isError": false}})
    } else if tool.ends_with("_refuse") {
        json!({"result": {"content": [{"type": "text", "text": "no forecast"}], "isError": true}})
    } else if tool.ends_with("_panic") {
        panic!("[expected] the forecast service failed, {PAYLOAD}");
    } else if tool.ends_with("_hang") {
        std::future::pending::<()>().await;
        unreachable!("a pending future never finishes")
    } else if tool.ends_with("_unreachable") {
        let text = "The server could not be reached.";
        let answer =
            json!({"result": {"content": [{"type": "text", "text": text}], "isError": true}});
        let mut answer = respond(&request, answer);
        NoAnswer::UpstreamUnreachable.mark(&mut answer);
        return Ok(answer);
    } else {
        json!({"error": {"code": -32602, "message": format!("Unknown tool: {tool}")}})
    };
    Ok(respond(&request, answer))
}

/// Sends `request` through the layered server.
async fn send(request: Value) -> Value {
    exporter();
    ToolErrors::new(service_fn(server))
        .oneshot(request)
        .await
        .unwrap()
}

fn tool_call(id: &str, tool: &str) -> Value {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": {"city": ARGUMENT}},
    })
}

#[tokio::test]
async fn a_successful_call_is_a_server_span_named_after_the_tool() {
    let response = send(tool_call("json-ok", "json_weather_ok")).await;
    assert_eq!(response["result"]["isError"], false);

    let span = span_named("tools/call json_weather_ok");
    assert_span(
        &span,
        &[
            ("mcp.method.name", Some("tools/call")),
            ("jsonrpc.request.id", Some("json-ok")),
            ("gen_ai.operation.name", Some("execute_tool")),
            ("gen_ai.tool.name", Some("json_weather_ok")),
            ("error.type", None),
            ("mcp_tool_errors.cause", None),
        ],
    );
    assert_failed(&span, false);
    assert_no_attribute_holds(&span, &[ARGUMENT]);
}

#[tokio::test]
async fn a_tool_error_is_a_failed_span_with_error_type_tool_error() {
    let response = send(tool_call("json-refuse", "json_weather_refuse")).await;
    assert_eq!(response["result"]["isError"], true);

    let span = span_named("tools/call json_weather_refuse");
    assert_tool_error(&span, "tool_error");
    assert_span(
        &span,
        &[
            ("jsonrpc.request.id", Some("json-refuse")),
            ("gen_ai.tool.name", Some("json_weather_refuse")),
            ("rpc.response.status_code", None),
        ],
    );
    assert_no_attribute_holds(&span, &[ARGUMENT, "no forecast"]);
}

#[tokio::test]
async fn a_panic_is_a_failed_span_whose_cause_is_panic() {
    crate::quiet_panics::silence_expected_panics();
    let response = send(tool_call("json-panic", "json_weather_panic")).await;
    assert_eq!(response["result"]["isError"], true);

    let span = span_named("tools/call json_weather_panic");
    assert_tool_error(&span, "panic");
    assert_no_attribute_holds(&span, &[ARGUMENT, PAYLOAD]);
    assert_logged(&span, "handler panicked");
}

#[tokio::test]
async fn a_panic_in_another_request_has_the_internal_error_code() {
    crate::quiet_panics::silence_expected_panics();
    let request = json!({
        "jsonrpc": "2.0", "id": "json-panic-list", "method": "prompts/get",
        "params": {"name": "x_panic"},
    });
    let response = send(request).await;
    assert_eq!(response["error"]["code"], -32603);

    let span = span_with_id("json-panic-list");
    assert_eq!(span.name, "prompts/get");
    assert_span(
        &span,
        &[
            ("error.type", Some("-32603")),
            ("rpc.response.status_code", Some("-32603")),
            ("mcp_tool_errors.cause", Some("panic")),
            ("gen_ai.tool.name", None),
        ],
    );
    assert_failed(&span, true);
}

#[tokio::test]
async fn an_answer_the_service_made_itself_is_a_failed_span_with_its_reason() {
    let response = send(tool_call("json-unreachable", "json_weather_unreachable")).await;
    let text = response["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("<error tool=\"json_weather_unreachable\">"),
        "{text}"
    );
    assert_eq!(
        response.as_object().unwrap().len(),
        3,
        "no mark: {response}"
    );

    let span = span_named("tools/call json_weather_unreachable");
    assert_span(
        &span,
        &[
            ("error.type", Some("upstream_unreachable")),
            ("mcp_tool_errors.cause", Some("upstream_unreachable")),
            ("rpc.response.status_code", None),
        ],
    );
    assert_failed(&span, true);
    let (_, points) = duration_points("error.type", "upstream_unreachable");
    assert_eq!(points.len(), 1, "{points:#?}");
}

#[tokio::test]
async fn an_unknown_tool_is_a_protocol_error_with_its_code() {
    let response = send(tool_call("json-unknown", "json_no_such_tool")).await;
    assert_eq!(response["error"]["code"], -32602);

    let span = span_named("tools/call json_no_such_tool");
    assert_protocol_error(&span, "-32602");
}

#[tokio::test]
async fn other_requests_are_named_after_their_method_alone() {
    let request = json!({
        "jsonrpc": "2.0", "id": 7_000_001, "method": "ping",
        "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}},
    });
    send(request).await;

    let span = span_with_id("7000001");
    assert_eq!(span.name, "ping");
    assert_span(
        &span,
        &[
            ("mcp.method.name", Some("ping")),
            ("mcp.protocol.version", Some("2026-07-28")),
            ("gen_ai.operation.name", None),
            ("gen_ai.tool.name", None),
            ("error.type", None),
        ],
    );
    assert_failed(&span, false);
}

#[tokio::test]
async fn a_traceparent_in_meta_continues_the_clients_trace() {
    let mut request = tool_call("json-traced", "json_traced_ok");
    request["params"]["_meta"] = json!({"traceparent": TRACEPARENT, "tracestate": "vendor=1"});
    send(request).await;

    let span = span_named("tools/call json_traced_ok");
    assert_eq!(span.span_context.trace_id().to_string(), TRACE_ID);
    assert_eq!(span.parent_span_id.to_string(), PARENT_SPAN_ID);
    assert!(span.parent_span_is_remote);
    assert_eq!(span.span_context.trace_state().header(), "vendor=1");
}

#[tokio::test]
async fn without_a_traceparent_the_span_starts_a_trace_of_its_own() {
    send(tool_call("json-untraced", "json_untraced_ok")).await;

    let span = span_named("tools/call json_untraced_ok");
    assert_ne!(span.span_context.trace_id().to_string(), TRACE_ID);
    assert!(!span.parent_span_is_remote);
}

#[tokio::test(start_paused = true)]
async fn a_timeout_is_a_failed_span_whose_cause_is_timeout() {
    exporter();
    let layered = ToolErrorLayer::new()
        .tool_timeout(Duration::from_secs(2))
        .layer(service_fn(server));
    let response = layered
        .oneshot(tool_call("json-hang", "json_weather_hang"))
        .await
        .unwrap();
    assert_eq!(response["result"]["isError"], true);

    let span = span_named("tools/call json_weather_hang");
    assert_timed_out(&span);
    assert_span(
        &span,
        &[
            ("jsonrpc.request.id", Some("json-hang")),
            ("gen_ai.tool.name", Some("json_weather_hang")),
            ("rpc.response.status_code", None),
        ],
    );
    assert_no_attribute_holds(&span, &[ARGUMENT]);
    assert_logged(&span, "tool call timed out");
}

/// Calls `tool`, which answers with a task handle, then fetches the task's result
/// with `tasks/result`, through one layered service: the ids of both requests
/// start with `id`.
async fn call_as_task(id: &str, tool: &str) -> Value {
    exporter();
    let mut layered = ToolErrors::new(service_fn(server));
    let created = layered
        .ready()
        .await
        .unwrap()
        .call(tool_call(&format!("{id}-call"), tool))
        .await
        .unwrap();
    let task_id = created["result"]["task"]["taskId"].clone();
    assert!(task_id.is_string(), "a task handle: {created}");
    let request = json!({
        "jsonrpc": "2.0", "id": format!("{id}-result"), "method": "tasks/result",
        "params": {"taskId": task_id},
    });
    layered.ready().await.unwrap().call(request).await.unwrap()
}

#[tokio::test]
async fn a_task_result_in_error_fails_the_span_that_delivers_it() {
    let delivered = call_as_task("json-task-refused", "json_weather_refuse_task").await;
    assert_eq!(delivered["result"]["isError"], true);

    let created = span_with_id("json-task-refused-call");
    assert_span(&created, &[("error.type", None)]);
    assert_failed(&created, false);
    let span = span_with_id("json-task-refused-result");
    assert_eq!(span.name, "tasks/result");
    assert_tool_error(&span, "tool_error");
    assert_span(
        &span,
        &[
            ("mcp.method.name", Some("tasks/result")),
            ("gen_ai.tool.name", Some("json_weather_refuse_task")),
        ],
    );
    assert_no_attribute_holds(&span, &["no forecast"]);
}

#[tokio::test]
async fn a_task_result_that_succeeded_leaves_the_span_that_delivers_it_unset() {
    let delivered = call_as_task("json-task-ok", "json_weather_ok_task").await;
    assert_eq!(delivered["result"]["isError"], false);

    let span = span_with_id("json-task-ok-result");
    assert_span(
        &span,
        &[
            ("gen_ai.tool.name", Some("json_weather_ok_task")),
            ("error.type", None),
            ("mcp_tool_errors.cause", None),
        ],
    );
    assert_failed(&span, false);
}
