//! The metric `mcp.server.operation.duration`, exported through the SDK's
//! in-memory metric exporter: its name, unit, the conventions' bucket
//! boundaries and its attributes, for a success, a tool error and an unknown
//! method.

use std::collections::BTreeMap;
use std::convert::Infallible;

use std::time::Duration;

use mcp_tool_errors::ToolErrorLayer;
use opentelemetry_sdk::metrics::data::HistogramDataPoint;
use serde_json::{Value, json};
use tower::{Layer, ServiceExt, service_fn};

use crate::answer::respond;
use crate::exporter::{duration_points, exporter};

/// The conventions' explicit bucket boundaries, in seconds.
const BOUNDARIES: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// Answers `tools/call` of `*_refuse` with an `isError` result, of `*_hang`
/// never, any other tool with a result, and any other method with -32601.
async fn server(request: Value) -> Result<Value, Infallible> {
    if request["params"]["name"]
        .as_str()
        .is_some_and(|tool| tool.ends_with("_hang"))
    {
        std::future::pending::<()>().await;
    }
    let answer = match request["method"].as_str() {
        Some("tools/call") => {
            let refused = request["params"]["name"]
                .as_str()
                .is_some_and(|tool| tool.ends_with("_refuse"));
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
    exporter();
    let mut params = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2025-11-25"}});
    if let Some(tool) = tool {
        params["name"] = json!(tool);
        params["arguments"] = json!({});
    }
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    layer
        .network_transport("pipe")
        .layer(service_fn(server))
        .oneshot(request)
        .await
        .unwrap()
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
    let response = send("tools/call", Some("metric_weather_refuse")).await;
    assert_eq!(response["result"]["isError"], true);

    let point = one_data_point("gen_ai.tool.name", "metric_weather_refuse");
    assert_eq!(
        attributes(&point),
        expected(&[
            ("mcp.method.name", "tools/call"),
            ("gen_ai.tool.name", "metric_weather_refuse"),
            ("gen_ai.operation.name", "execute_tool"),
            ("mcp.protocol.version", "2025-11-25"),
            ("network.transport", "pipe"),
            ("error.type", "tool_error"),
        ])
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
async fn a_call_the_layer_answers_after_a_timeout_is_timed_as_a_tool_error() {
    let layer = ToolErrorLayer::new().tool_timeout(Duration::from_secs(5));
    let response = send_through(layer, "tools/call", Some("metric_weather_hang")).await;
    assert_eq!(response["result"]["isError"], true);

    let point = one_data_point("gen_ai.tool.name", "metric_weather_hang");
    assert_eq!(attributes(&point)["error.type"], "tool_error");
}
