//! Batches: each answer is matched to its request by id, whatever the order the
//! answers come in; an id used by several requests of a batch matches the first
//! of them, for every answer that carries it.

use std::convert::Infallible;
use std::future::{Ready, ready};

use mcp_tool_errors::{ToolErrors, render_error};
use serde_json::{Value, json};
use tower::{Service, ServiceExt, service_fn};

use crate::support::tool_call;

/// A server that answers every request of a batch with an error result holding
/// the request's tool name (or method), in the reverse of the batch's order.
fn reversing_server()
-> impl Service<Value, Response = Value, Error = Infallible, Future = Ready<Result<Value, Infallible>>>
+ Clone {
    service_fn(|batch: Value| {
        let answers: Vec<Value> = batch
            .as_array()
            .expect("a batch")
            .iter()
            .rev()
            .map(|request| {
                let said = request["params"]["name"]
                    .as_str()
                    .or(request["method"].as_str())
                    .unwrap_or_default();
                json!({"jsonrpc": "2.0", "id": request["id"], "result": {
                    "content": [{"type": "text", "text": format!("{said} failed")}],
                    "isError": true,
                }})
            })
            .collect();
        ready(Ok(Value::Array(answers)))
    })
}

async fn send(batch: Value) -> Vec<Value> {
    let response = ToolErrors::new(reversing_server())
        .oneshot(batch)
        .await
        .unwrap();
    response.as_array().expect("a batch of answers").clone()
}

fn text(answer: &Value) -> &str {
    answer["result"]["content"][0]["text"].as_str().unwrap()
}

#[tokio::test]
async fn a_batch_answered_in_reverse_order_is_matched_by_id() {
    let calls = 8_000;
    let batch: Vec<Value> = (0..calls)
        .map(|n| tool_call(n, &format!("tool_{n}")))
        .collect();
    let answers = send(Value::Array(batch)).await;
    assert_eq!(answers.len(), calls as usize);
    for answer in &answers {
        let n = answer["id"].as_u64().unwrap();
        let tool = format!("tool_{n}");
        assert_eq!(
            text(answer),
            render_error(&tool, &format!("{tool} failed")),
            "{answer}"
        );
    }
}

/// Two `tools/call` with one id: both answers are matched to the first of
/// them, whichever order they come in, so both name its tool.
#[tokio::test]
async fn an_id_reused_in_a_batch_matches_the_first_request_with_it() {
    let batch = json!([
        tool_call(7, "first"),
        tool_call(8, "other"),
        tool_call(7, "second")
    ]);
    let answers = send(batch).await;
    // Answered in reverse: "second" (id 7), "other" (id 8), "first" (id 7).
    assert_eq!(text(&answers[0]), render_error("first", "second failed"));
    assert_eq!(text(&answers[1]), render_error("other", "other failed"));
    assert_eq!(text(&answers[2]), render_error("first", "first failed"));
}

/// When the first request with an id is not a `tools/call`, no answer with
/// that id is a tool result: none is rewrapped, the later `tools/call` with
/// the same id included.
#[tokio::test]
async fn an_id_first_used_by_another_request_matches_that_request() {
    let ping = json!({"jsonrpc": "2.0", "id": "x", "method": "ping"});
    let batch = json!([ping, tool_call("x", "deploy"), tool_call(9, "build")]);
    let answers = send(batch).await;
    assert_eq!(text(&answers[0]), render_error("build", "build failed"));
    assert_eq!(text(&answers[1]), "deploy failed");
    assert_eq!(text(&answers[2]), "ping failed");
}

/// Ids are compared as JSON values of the same type: `1` and `"1"` are
/// different ids, and so are `1` and `1.0`; an id that is not a valid
/// JSON-RPC id (an object) still matches an equal one.
#[tokio::test]
async fn ids_match_only_ids_of_the_same_value_and_type() {
    let batch = json!([
        tool_call(1, "number"),
        tool_call("1", "string"),
        tool_call(1.5, "float"),
        tool_call(json!({"b": 2, "a": 1}), "object"),
        tool_call(json!(null), "null"),
    ]);
    let answers = send(batch).await;
    for answer in &answers {
        let tool = match &answer["id"] {
            Value::Number(n) if n.is_u64() => "number",
            Value::Number(_) => "float",
            Value::String(_) => "string",
            Value::Object(_) => "object",
            Value::Null => "null",
            other => panic!("unexpected id {other}"),
        };
        assert_eq!(
            text(answer),
            render_error(tool, &format!("{tool} failed")),
            "{answer}"
        );
    }

    // An answer whose id no request has is left as it is; an object id whose
    // members come back in another order is the same id.
    let server = service_fn(|_: Value| {
        let failed = json!({"content": [{"type": "text", "text": "t"}], "isError": true});
        ready(Ok::<_, Infallible>(json!([
            {"jsonrpc": "2.0", "id": 1.0, "result": failed},
            {"jsonrpc": "2.0", "id": "2", "result": failed},
            {"jsonrpc": "2.0", "id": {"a": 1, "b": [2, 3]}, "result": failed},
        ])))
    });
    let batch = json!([
        tool_call(1, "a"),
        tool_call(2, "b"),
        tool_call(json!({"b": [2, 3], "a": 1}), "c"),
    ]);
    let answers = ToolErrors::new(server).oneshot(batch).await.unwrap();
    assert_eq!(text(&answers[0]), "t");
    assert_eq!(text(&answers[1]), "t");
    assert_eq!(text(&answers[2]), render_error("c", "t"));
}
