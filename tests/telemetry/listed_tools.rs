//! The metric names the tools the server listed: every name of a `tools/list`
//! answer the layer passed (its pages adding up), whether or not a call of it
//! ever succeeded, so that a tool that fails at every call is named with its
//! `error.type`; bounded as the names learned from successes are (1,000 per
//! layer, together); and nothing that is not a server's list of tools names
//! anything. Over JSON and tower-mcp's messages (rmcp's: `rmcp/listed_tools.rs`).

use std::collections::BTreeMap;
use std::convert::Infallible;

use mcp_tool_errors::ToolErrorLayer;
use serde_json::{Value, json};
use tower::{Layer, ServiceExt, service_fn};

use crate::answer::respond;
use crate::exporter::{duration_points, exporter};

/// How many tool names a layer's metric records as they are.
const MAX_TOOL_NAMES: usize = 1_000;

/// A server whose every tool fails: `tools/list` answers with page `cursor`
/// of `pages` (the first without one); a `tools/call` of a name ending in
/// `_unknown` gets -32602, any other an `isError` result; any other method
/// gets -32601. A batch is answered in order.
fn failing_server(
    pages: Vec<Value>,
) -> impl tower::Service<Value, Response = Value, Error = Infallible, Future: Send> + Clone {
    service_fn(move |request: Value| {
        let response = match &request {
            Value::Array(batch) => {
                Value::Array(batch.iter().map(|one| answer(&pages, one)).collect())
            }
            one => answer(&pages, one),
        };
        std::future::ready(Ok(response))
    })
}

/// [`failing_server`]'s answer to one request.
fn answer(pages: &[Value], request: &Value) -> Value {
    let answer = match request["method"].as_str() {
        Some("tools/list") => {
            let page = request["params"]["cursor"]
                .as_str()
                .map_or(0, |cursor| cursor.parse::<usize>().unwrap());
            json!({"result": pages[page]})
        }
        Some("tools/call")
            if request["params"]["name"]
                .as_str()
                .is_some_and(|tool| tool.ends_with("_unknown")) =>
        {
            json!({"error": {"code": -32602, "message": "Unknown tool"}})
        }
        Some("tools/call") => {
            json!({"result": {"content": [{"type": "text", "text": "broken"}], "isError": true}})
        }
        _ => json!({"error": {"code": -32601, "message": "Method not found"}}),
    };
    respond(request, answer)
}

/// A page of `tools/list` naming `tools`, and `next` as its cursor.
fn page(tools: &[&str], next: Option<&str>) -> Value {
    let tools: Vec<Value> = tools
        .iter()
        .map(|name| json!({"name": name, "inputSchema": {"type": "object"}}))
        .collect();
    match next {
        Some(next) => json!({"tools": tools, "nextCursor": next}),
        None => json!({"tools": tools}),
    }
}

/// Sends `message` through `layer` over `server`, told it serves over
/// `transport` (a value no other test uses, to find its data points).
async fn send(
    layer: &ToolErrorLayer,
    transport: &'static str,
    server: impl tower::Service<Value, Response = Value, Error = Infallible, Future: Send>
    + Clone
    + Send
    + 'static,
    message: Value,
) -> Value {
    exporter();
    layer
        .clone()
        .network_transport(transport)
        .layer(server)
        .oneshot(message)
        .await
        .unwrap()
}

fn list(id: u64, cursor: Option<&str>) -> Value {
    match cursor {
        Some(cursor) => {
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": {"cursor": cursor}})
        }
        None => json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}),
    }
}

fn call(id: u64, tool: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": tool, "arguments": {}}})
}

/// How many `tools/call` requests the data points over `transport` count for
/// each `gen_ai.tool.name` and `error.type`.
fn calls_by_tool_and_error(transport: &str) -> BTreeMap<(String, String), u64> {
    let (_, points) = duration_points("network.transport", transport);
    let mut counts = BTreeMap::new();
    for point in &points {
        let attributes: BTreeMap<String, String> = point
            .attributes()
            .map(|attribute| (attribute.key.to_string(), attribute.value.to_string()))
            .collect();
        if attributes["mcp.method.name"] != "tools/call" {
            continue;
        }
        let key = (
            attributes["gen_ai.tool.name"].clone(),
            attributes.get("error.type").cloned().unwrap_or_default(),
        );
        *counts.entry(key).or_default() += point.count();
    }
    counts
}

fn counted(entries: &[(&str, &str, u64)]) -> BTreeMap<(String, String), u64> {
    entries
        .iter()
        .map(|(tool, error, count)| ((tool.to_string(), error.to_string()), *count))
        .collect()
}

#[tokio::test]
async fn a_listed_tool_is_named_though_every_call_of_it_failed() {
    let server = failing_server(vec![
        page(&["listed_broken", "listed_unknown"], Some("1")),
        page(&["listed_on_page_two"], None),
    ]);
    let layer = ToolErrorLayer::new();
    let transport = "listed-failing";
    // Both pages, through two clones of the layer: the names add up.
    send(&layer, transport, server.clone(), list(1, None)).await;
    send(&layer, transport, server.clone(), list(2, Some("1"))).await;
    for (id, tool) in [
        (3, "listed_broken"),
        (4, "listed_broken"),
        (5, "listed_unknown"),
        (6, "listed_on_page_two"),
        (7, "not_listed"),
    ] {
        send(&layer, transport, server.clone(), call(id, tool)).await;
    }

    assert_eq!(
        calls_by_tool_and_error(transport),
        counted(&[
            ("listed_broken", "tool_error", 2),
            ("listed_unknown", "-32602", 1),
            ("listed_on_page_two", "tool_error", 1),
            ("_OTHER", "tool_error", 1),
        ])
    );
}

#[tokio::test]
async fn a_list_past_1000_tools_names_the_first_1000_and_a_layer_of_its_own_none() {
    let name = |i: usize| format!("listed_bound_{i:04}");
    let names: Vec<String> = (0..MAX_TOOL_NAMES + 5).map(name).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    // The worst input: one page listing more tools than the bound.
    let server = failing_server(vec![page(&names, None)]);
    let layer = ToolErrorLayer::new();
    let transport = "listed-bound";
    send(&layer, transport, server.clone(), list(1, None)).await;
    // Listed again: nothing more is learned, nothing is forgotten.
    send(&layer, transport, server.clone(), list(2, None)).await;
    for (id, i) in [
        (3, 0),
        (4, MAX_TOOL_NAMES - 1),
        (5, MAX_TOOL_NAMES),
        (6, MAX_TOOL_NAMES + 4),
    ] {
        send(&layer, transport, server.clone(), call(id, &name(i))).await;
    }
    send(
        &ToolErrorLayer::new(),
        "listed-bound-apart",
        server,
        call(7, &name(0)),
    )
    .await;

    let (first, last) = (name(0), name(MAX_TOOL_NAMES - 1));
    assert_eq!(
        calls_by_tool_and_error(transport),
        counted(&[
            (&first, "tool_error", 1),
            (&last, "tool_error", 1),
            ("_OTHER", "tool_error", 2),
        ])
    );
    assert_eq!(
        calls_by_tool_and_error("listed-bound-apart"),
        counted(&[("_OTHER", "tool_error", 1)])
    );
}

#[tokio::test]
async fn what_is_not_a_servers_list_of_tools_names_nothing() {
    let layer = ToolErrorLayer::new();
    let transport = "listed-nothing";
    let lists = |result: Value| {
        service_fn(move |request: Value| {
            std::future::ready(Ok::<_, Infallible>(respond(
                &request,
                json!({"result": result.clone()}),
            )))
        })
    };
    // Malformed lists: not an array, items that are no tool, names that are
    // no string.
    for result in [
        json!({"tools": "decoy_a"}),
        json!({"tools": {"name": "decoy_b"}}),
        json!({"tools": ["decoy_c", null, 7, {"title": "decoy_d"}, {"name": ["decoy_e"]}]}),
    ] {
        send(&layer, transport, lists(result), list(1, None)).await;
    }
    // A list answering a request that is not a `tools/list`, or another id.
    let decoy = page(&["decoy_f"], None);
    send(
        &layer,
        transport,
        lists(decoy.clone()),
        call(2, "decoy_answered"),
    )
    .await;
    let other_id = service_fn(move |_: Value| {
        std::future::ready(Ok::<_, Infallible>(
            json!({"jsonrpc": "2.0", "id": 99, "result": decoy.clone()}),
        ))
    });
    send(&layer, transport, other_id, list(3, None)).await;
    // A list sent by the client is no answer of the server's.
    let server = failing_server(vec![page(&[], None)]);
    let from_client = json!({"jsonrpc": "2.0", "id": 4, "result": page(&["decoy_g"], None)});
    send(&layer, transport, server.clone(), from_client).await;

    for (id, tool) in [
        "decoy_a", "decoy_b", "decoy_c", "7", "decoy_d", "decoy_e", "decoy_f", "decoy_g",
    ]
    .into_iter()
    .enumerate()
    {
        send(
            &layer,
            transport,
            server.clone(),
            call(10 + id as u64, tool),
        )
        .await;
    }
    assert_eq!(
        calls_by_tool_and_error(transport),
        counted(&[("decoy_answered", "", 1), ("_OTHER", "tool_error", 8)])
    );
}

#[tokio::test]
async fn a_list_answered_in_a_batch_names_its_tools() {
    let server = failing_server(vec![page(&["batch_listed"], None)]);
    let layer = ToolErrorLayer::new();
    let transport = "listed-batch";
    let batch = json!([call(1, "batch_listed"), list(2, None)]);
    let responses = send(&layer, transport, server.clone(), batch).await;
    assert_eq!(responses.as_array().map(Vec::len), Some(2), "{responses}");
    send(&layer, transport, server, call(3, "batch_listed")).await;

    // The batch is not timed; the call after it names the tool.
    assert_eq!(
        calls_by_tool_and_error(transport),
        counted(&[("batch_listed", "tool_error", 1)])
    );
}

#[cfg(feature = "tower-mcp")]
mod tower_mcp {
    use std::convert::Infallible;

    use mcp_tool_errors::ToolErrorLayer;
    use serde_json::json;
    use tower::{Layer, ServiceExt, service_fn};
    use tower_mcp::{
        CallToolResult, ListToolsParams, McpRequest, McpResponse, RequestId, RouterRequest,
        RouterResponse,
    };

    use super::{calls_by_tool_and_error, counted, page};
    use crate::exporter::exporter;

    /// A router whose every tool fails, listing `tower_listed_broken`.
    async fn answer(request: RouterRequest) -> Result<RouterResponse, Infallible> {
        let inner = match request.inner {
            McpRequest::ListTools(_) => McpResponse::ListTools(
                serde_json::from_value(page(&["tower_listed_broken"], None)).unwrap(),
            ),
            _ => McpResponse::CallTool(CallToolResult::error("broken")),
        };
        Ok(RouterResponse {
            id: request.id,
            inner: Ok(inner),
        })
    }

    #[tokio::test]
    async fn a_tool_a_tower_mcp_router_listed_is_named_though_it_failed() {
        exporter();
        let transport = "listed-tower-mcp";
        let service = ToolErrorLayer::new()
            .network_transport(transport)
            .layer(service_fn(answer));
        let list = RouterRequest::new(
            RequestId::Number(1),
            McpRequest::ListTools(ListToolsParams::default()),
        );
        service.clone().oneshot(list).await.unwrap();
        for (id, tool) in [(2, "tower_listed_broken"), (3, "tower_not_listed")] {
            let params = serde_json::from_value(json!({"name": tool, "arguments": {}})).unwrap();
            let call = RouterRequest::new(RequestId::Number(id), McpRequest::CallTool(params));
            service.clone().oneshot(call).await.unwrap();
        }

        assert_eq!(
            calls_by_tool_and_error(transport),
            counted(&[
                ("tower_listed_broken", "tool_error", 1),
                ("_OTHER", "tool_error", 1),
            ])
        );
    }
}
