//! `--invalid-params-as-tool-errors` in HTTP mode, as on stdio: a `-32602`
//! answer to a `tools/call` of a tool that a `tools/list` answer relayed by this
//! proxy named becomes an `isError` result rendered into the element, in a JSON
//! body and in an event stream; any other `-32602` passes byte for byte.

use mcp_tool_errors::render_error;
use serde_json::json;

use crate::support::{Events, Proxy, Received, Reply, Upstream, body, event_data, json, tool_call};

const OPTION: &str = "--invalid-params-as-tool-errors";

fn invalid_params(id: &serde_json::Value) -> String {
    json!({
        "jsonrpc": "2.0", "id": id,
        "error": {"code": -32602, "message": "Invalid params", "data": "query: required"},
    })
    .to_string()
}

fn tools_list(id: &serde_json::Value) -> String {
    json!({
        "jsonrpc": "2.0", "id": id,
        "result": {"tools": [{"name": "search", "inputSchema": {"type": "object"}}]},
    })
    .to_string()
}

const LIST: &str = r#"{"jsonrpc":"2.0","id":"list","method":"tools/list"}"#;

/// Answers `tools/list` with the tool `search`, and every call with `-32602`,
/// in JSON bodies, or in event streams when `events` says so.
fn script(events: bool) -> impl Fn(&Received) -> Reply + Send + Sync + 'static {
    move |request| {
        let message = request.json();
        let answer = match message["method"].as_str() {
            Some("tools/list") => tools_list(&message["id"]),
            _ => invalid_params(&message["id"]),
        };
        if events {
            Reply::events(&[&format!("id: e-1\ndata: {answer}\n\n")])
        } else {
            Reply::json(&answer)
        }
    }
}

#[tokio::test]
async fn invalid_params_of_a_listed_tool_become_a_tool_error_in_a_json_body() {
    let upstream = Upstream::start(script(false)).await;
    let proxy = Proxy::start(&upstream.url(), &[OPTION]).await;

    // Before tools/list, no tool is known: nothing is converted.
    let before = body(proxy.post(&tool_call(1, "search"), &[]).await).await;
    assert_eq!(before, invalid_params(&json!(1)).as_bytes());
    json(proxy.post(LIST, &[]).await).await;
    let answer = json(proxy.post(&tool_call(2, "search"), &[]).await).await;
    let unlisted = body(proxy.post(&tool_call(3, "ghost"), &[]).await).await;

    assert_eq!(
        answer,
        json!({"jsonrpc": "2.0", "id": 2, "result": {
            "content": [{"type": "text", "text": render_error("search", "Invalid params\nquery: required")}],
            "isError": true,
        }})
    );
    assert_eq!(unlisted, invalid_params(&json!(3)).as_bytes());
}

#[tokio::test]
async fn invalid_params_of_a_listed_tool_become_a_tool_error_in_an_event_stream() {
    let upstream = Upstream::start(script(true)).await;
    let proxy = Proxy::start(&upstream.url(), &[OPTION]).await;
    let mut listed = Events::new(proxy.post(LIST, &[]).await);
    listed.next().await.expect("the tools");

    let mut stream = Events::new(proxy.post(&tool_call(2, "search"), &[]).await);
    let event = stream.next().await.expect("the answer");

    assert!(event.starts_with("id: e-1\n"), "{event:?}");
    assert_eq!(
        event_data(&event)["result"]["content"][0]["text"],
        render_error("search", "Invalid params\nquery: required")
    );
    assert_eq!(event_data(&event)["result"]["isError"], true);
    assert_eq!(stream.next().await, None);
    let mut unlisted = Events::new(proxy.post(&tool_call(3, "ghost"), &[]).await);
    assert_eq!(
        unlisted.next().await.expect("the answer"),
        format!("id: e-1\ndata: {}\n\n", invalid_params(&json!(3)))
    );
}

#[tokio::test]
async fn without_the_option_invalid_params_pass_byte_for_byte() {
    let upstream = Upstream::start(script(false)).await;
    let proxy = Proxy::start(&upstream.url(), &[]).await;
    json(proxy.post(LIST, &[]).await).await;

    let answer = body(proxy.post(&tool_call(2, "search"), &[]).await).await;

    assert_eq!(answer, invalid_params(&json!(2)).as_bytes());
}
