//! The metric `mcp.server.operation.duration`, exported through the SDK's
//! in-memory metric exporter: its name, unit, the conventions' bucket
//! boundaries and its attributes, for a success, a tool error and an unknown
//! method; and `gen_ai.tool.name` bounded: only tools the server answered with
//! a success, at most 1,000 per layer, `_OTHER` for any other.

use std::collections::{BTreeMap, BTreeSet};
use std::convert::Infallible;
use std::time::Duration;

use mcp_tool_errors::ToolErrorLayer;
use opentelemetry_sdk::metrics::data::HistogramDataPoint;
use serde_json::{Value, json};
use tower::{Layer, ServiceExt, service_fn};

use crate::answer::respond;
use crate::exporter::{attribute, duration_points, exporter, span_named};

/// The conventions' explicit bucket boundaries, in seconds.
const BOUNDARIES: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// Answers a `tools/call` whose arguments say `hang` never, of `*_unknown`
/// with -32602 (no such tool), of `*_refuse` or with arguments that say
/// `refuse` with an `isError` result (as the Python SDK answers a tool it does
/// not know), of any other tool with a success, and any other method with
/// -32601.
async fn server(request: Value) -> Result<Value, Infallible> {
    if request["params"]["arguments"]["hang"] == true {
        std::future::pending::<()>().await;
    }
    let tool = request["params"]["name"].as_str().unwrap_or_default();
    let answer = match request["method"].as_str() {
        Some("tools/call") if tool.ends_with("_unknown") => {
            json!({"error": {"code": -32602, "message": format!("Unknown tool: {tool}")}})
        }
        Some("tools/call") => {
            let refused =
                tool.ends_with("_refuse") || request["params"]["arguments"]["refuse"] == true;
            json!({"result": {"content": [{"type": "text", "text": "sunny"}], "isError": refused}})
        }
        _ => json!({"error": {"code": -32601, "message": "Method not found"}}),
    };
    Ok(respond(&request, answer))
}

/// Sends `method` (with tool `tool`, for a `tools/call`) through a layer that
/// serves stdio, under protocol 2025-11-25.
async fn send(method: &str, tool: Option<&str>) -> Value {
    send_through(ToolErrorLayer::new(), method, tool).await
}

async fn send_through(layer: ToolErrorLayer, method: &str, tool: Option<&str>) -> Value {
    send_over(layer, "pipe", method, tool, json!({})).await
}

/// Sends `method` (with tool `tool` and `arguments`, for a `tools/call`)
/// through `layer`, told that it serves over `transport`: a value no other
/// test uses keeps a test's data points apart from those of the tests that run
/// beside it when its tool names are all `_OTHER`.
async fn send_over(
    layer: ToolErrorLayer,
    transport: &'static str,
    method: &str,
    tool: Option<&str>,
    arguments: Value,
) -> Value {
    exporter();
    let mut params = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2025-11-25"}});
    if let Some(tool) = tool {
        params["name"] = json!(tool);
        params["arguments"] = arguments;
    }
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    layer
        .network_transport(transport)
        .layer(service_fn(server))
        .oneshot(request)
        .await
        .unwrap()
}

/// Sends a `tools/call` of `tool` through `layer`, over `transport`.
async fn call_over(layer: &ToolErrorLayer, transport: &'static str, tool: &str) -> Value {
    send_over(
        layer.clone(),
        transport,
        "tools/call",
        Some(tool),
        json!({}),
    )
    .await
}

/// How many requests the data points over `transport` count for each value of
/// `gen_ai.tool.name`.
fn counts_by_tool(transport: &str) -> BTreeMap<String, u64> {
    let (_, points) = duration_points("network.transport", transport);
    let mut counts = BTreeMap::new();
    for point in &points {
        let tool = attributes(point)
            .remove("gen_ai.tool.name")
            .expect("a tools/call names its tool");
        *counts.entry(tool).or_default() += point.count();
    }
    counts
}

/// The one data point whose attribute `key` is `value`, checked for the
/// conventions' unit and boundaries and for one recorded duration.
fn one_data_point(key: &str, value: &str) -> HistogramDataPoint<f64> {
    let (unit, mut points) = duration_points(key, value);
    assert_eq!(unit, "s");
    assert_eq!(
        points.len(),
        1,
        "one data point with {key} = {value}: {points:#?}"
    );
    let point = points.remove(0);
    assert_eq!(point.bounds().collect::<Vec<_>>(), BOUNDARIES);
    assert_eq!(point.count(), 1);
    assert!(point.sum() >= 0.0 && point.sum() < 300.0, "{point:#?}");
    point
}

/// The attributes of `point`, as text.
fn attributes(point: &HistogramDataPoint<f64>) -> BTreeMap<String, String> {
    point
        .attributes()
        .map(|attribute| (attribute.key.to_string(), attribute.value.to_string()))
        .collect()
}

fn expected(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(key, value)| (key.to_string(), value.to_string()))
        .collect()
}

#[tokio::test]
async fn a_successful_call_is_timed_with_the_tool_and_no_error() {
    send("tools/call", Some("metric_weather_ok")).await;

    let point = one_data_point("gen_ai.tool.name", "metric_weather_ok");
    assert_eq!(
        attributes(&point),
        expected(&[
            ("mcp.method.name", "tools/call"),
            ("gen_ai.tool.name", "metric_weather_ok"),
            ("gen_ai.operation.name", "execute_tool"),
            ("mcp.protocol.version", "2025-11-25"),
            ("network.transport", "pipe"),
        ])
    );
}

#[tokio::test]
async fn a_tool_error_is_timed_with_error_type_tool_error() {
    // Known by its success first: an error result alone names no tool.
    let (layer, tool, transport) = (ToolErrorLayer::new(), "metric_weather", "metric-tool-error");
    call_over(&layer, transport, tool).await;
    let refuse = json!({"refuse": true});
    let response = send_over(layer, transport, "tools/call", Some(tool), refuse).await;
    assert_eq!(response["result"]["isError"], true);

    let (_, points) = duration_points("network.transport", transport);
    let failed: Vec<_> = points
        .iter()
        .map(attributes)
        .filter(|attributes| attributes.contains_key("error.type"))
        .collect();
    assert_eq!(
        failed,
        [expected(&[
            ("mcp.method.name", "tools/call"),
            ("gen_ai.tool.name", tool),
            ("gen_ai.operation.name", "execute_tool"),
            ("mcp.protocol.version", "2025-11-25"),
            ("network.transport", transport),
            ("error.type", "tool_error"),
        ])]
    );
}

#[tokio::test]
async fn an_unknown_method_is_timed_with_its_error_code() {
    let response = send("metric/unknown", None).await;
    assert_eq!(response["error"]["code"], -32601);

    let point = one_data_point("mcp.method.name", "metric/unknown");
    assert_eq!(
        attributes(&point),
        expected(&[
            ("mcp.method.name", "metric/unknown"),
            ("mcp.protocol.version", "2025-11-25"),
            ("network.transport", "pipe"),
            ("error.type", "-32601"),
            ("rpc.response.status_code", "-32601"),
        ])
    );
}

#[tokio::test(start_paused = true)]
async fn a_call_the_layer_answers_after_a_timeout_is_timed_as_a_timeout() {
    // The tool answered once: its name is known to the layer.
    let layer = ToolErrorLayer::new().tool_timeout(Duration::from_secs(5));
    let tool = Some("metric_weather_hang");
    send_over(
        layer.clone(),
        "metric-timeout",
        "tools/call",
        tool,
        json!({}),
    )
    .await;
    let hang = json!({"hang": true});
    let response = send_over(layer, "metric-timeout", "tools/call", tool, hang).await;
    assert_eq!(response["result"]["isError"], true);

    let (_, points) = duration_points("gen_ai.tool.name", "metric_weather_hang");
    let timed_out = points
        .iter()
        .filter(|point| attributes(point).get("error.type").map(String::as_str) == Some("timeout"))
        .count();
    assert_eq!(timed_out, 1, "{points:#?}");
}

#[tokio::test]
async fn an_unknown_tool_is_timed_as_other_and_keeps_its_name_on_the_span() {
    let response = send_over(
        ToolErrorLayer::new(),
        "metric-unknown-tool",
        "tools/call",
        Some("metric_weather_unknown"),
        json!({}),
    )
    .await;
    assert_eq!(response["error"]["code"], -32602);

    let (_, points) = duration_points("network.transport", "metric-unknown-tool");
    assert_eq!(points.len(), 1, "{points:#?}");
    assert_eq!(
        attributes(&points[0]),
        expected(&[
            ("mcp.method.name", "tools/call"),
            ("gen_ai.tool.name", "_OTHER"),
            ("gen_ai.operation.name", "execute_tool"),
            ("mcp.protocol.version", "2025-11-25"),
            ("network.transport", "metric-unknown-tool"),
            ("error.type", "-32602"),
            ("rpc.response.status_code", "-32602"),
        ])
    );
    assert!(
        duration_points("gen_ai.tool.name", "metric_weather_unknown")
            .1
            .is_empty()
    );
    let span = span_named("tools/call metric_weather_unknown");
    assert_eq!(
        attribute(&span, "gen_ai.tool.name").as_deref(),
        Some("metric_weather_unknown")
    );
}

#[tokio::test(start_paused = true)]
async fn a_tool_never_answered_with_a_result_is_timed_as_other() {
    // The layer answers in place of the tool: no result of the server's names it.
    let layer = ToolErrorLayer::new().tool_timeout(Duration::from_secs(5));
    let hang = json!({"hang": true});
    let tool = Some("metric_never_answered");
    let response = send_over(layer, "metric-never-answered", "tools/call", tool, hang).await;
    assert_eq!(response["result"]["isError"], true);

    assert_eq!(
        counts_by_tool("metric-never-answered"),
        BTreeMap::from([("_OTHER".to_owned(), 1)])
    );
}

#[tokio::test]
async fn a_tool_is_named_once_known_to_the_layer_and_its_clones_only() {
    let layer = ToolErrorLayer::new();
    let refuse = json!({"refuse": true});
    let learned = Some("metric_learned");
    // Unknown to the layer, then answered with an error result (which names
    // nothing: a server may answer a made-up name so), then with a success,
    // and from then on known to every clone of the layer, failing or not.
    call_over(&layer, "metric-learned", "metric_learned_unknown").await;
    send_over(
        layer.clone(),
        "metric-learned",
        "tools/call",
        learned,
        refuse.clone(),
    )
    .await;
    call_over(&layer, "metric-learned", "metric_learned").await;
    send_over(
        layer.clone(),
        "metric-learned",
        "tools/call",
        learned,
        refuse,
    )
    .await;
    // A layer of its own knows nothing of it.
    call_over(
        &ToolErrorLayer::new(),
        "metric-learned-apart",
        "metric_learned_unknown",
    )
    .await;

    assert_eq!(
        counts_by_tool("metric-learned"),
        BTreeMap::from([("_OTHER".to_owned(), 2), ("metric_learned".to_owned(), 2),])
    );
    assert_eq!(
        counts_by_tool("metric-learned-apart"),
        BTreeMap::from([("_OTHER".to_owned(), 1)])
    );
}

#[tokio::test]
async fn made_up_names_answered_with_error_results_leave_room_for_the_real_tools() {
    let layer = ToolErrorLayer::new();
    // The worst input: more made-up names than the bound, each answered with
    // an `isError` result, as the Python SDK answers an unknown tool.
    for i in 0..MAX_TOOL_NAMES + 5 {
        call_over(
            &layer,
            "metric-made-up",
            &format!("metric_made_up_{i:04}_refuse"),
        )
        .await;
    }
    call_over(&layer, "metric-made-up", "metric_real_tool").await;

    assert_eq!(
        counts_by_tool("metric-made-up"),
        BTreeMap::from([
            ("_OTHER".to_owned(), MAX_TOOL_NAMES as u64 + 5),
            ("metric_real_tool".to_owned(), 1),
        ])
    );
}

/// How many tool names a layer's metric records as they are.
const MAX_TOOL_NAMES: usize = 1_000;

#[tokio::test]
async fn past_1000_tool_names_answered_with_a_success_every_new_one_is_other() {
    let layer = ToolErrorLayer::new();
    let name = |i: usize| format!("metric_bound_{i:04}");
    // The worst input: every call a new name, every one answered with a success.
    for i in 0..MAX_TOOL_NAMES + 5 {
        call_over(&layer, "metric-bound", &name(i)).await;
    }
    // Each name past the bound again, answered again: the names stay 1,000.
    for i in MAX_TOOL_NAMES..MAX_TOOL_NAMES + 5 {
        call_over(&layer, "metric-bound", &name(i)).await;
    }
    // A name the layer knows stays named.
    call_over(&layer, "metric-bound", &name(0)).await;

    let counts = counts_by_tool("metric-bound");
    let named: BTreeSet<&str> = counts
        .keys()
        .map(String::as_str)
        .filter(|tool| *tool != "_OTHER")
        .collect();
    let first: BTreeSet<String> = (0..MAX_TOOL_NAMES).map(name).collect();
    assert_eq!(named, first.iter().map(String::as_str).collect());
    assert_eq!(counts["_OTHER"], 10);
    assert_eq!(counts[&name(0)], 2);
    // The bound is the layer's: a new layer names the next tool.
    call_over(
        &ToolErrorLayer::new(),
        "metric-bound-new-layer",
        &name(MAX_TOOL_NAMES),
    )
    .await;
    assert_eq!(
        counts_by_tool("metric-bound-new-layer"),
        BTreeMap::from([(name(MAX_TOOL_NAMES), 1)])
    );
}
