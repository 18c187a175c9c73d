//! Batches: each answer is matched to its request by id, whatever the order the
//! answers come in; an id used by several requests of a batch goes to the first
//! of them that has no answer yet, so that each answer is read as its own
//! call's; ids compare as JSON-RPC ids (a number by its value).

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
        let mut answers = failed_answers(&batch);
        answers.reverse();
        ready(Ok(Value::Array(answers)))
    })
}

/// The same answers as [`reversing_server`]'s, in the batch's order.
fn in_order_server()
-> impl Service<Value, Response = Value, Error = Infallible, Future = Ready<Result<Value, Infallible>>>
+ Clone {
    service_fn(|batch: Value| ready(Ok(Value::Array(failed_answers(&batch)))))
}

/// An error result for every request of `batch`, in order, each holding the
/// request's tool name (or method).
fn failed_answers(batch: &Value) -> Vec<Value> {
    let batch = batch.as_array().expect("a batch");
    batch
        .iter()
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
        .collect()
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

/// Two `tools/call` with one id: each answer is read as the answer of the
/// first call with that id that has no answer yet, so each names its own tool.
#[tokio::test]
async fn a_batch_repeating_an_id_has_each_answer_wrapped_with_its_own_calls_tool() {
    let batch = json!([
        tool_call(7, "alpha"),
        tool_call(8, "other"),
        tool_call(7, "beta")
    ]);
    let response = ToolErrors::new(in_order_server())
        .oneshot(batch)
        .await
        .unwrap();
    let answers = response.as_array().unwrap();
    assert_eq!(text(&answers[0]), render_error("alpha", "alpha failed"));
    assert_eq!(text(&answers[1]), render_error("other", "other failed"));
    assert_eq!(text(&answers[2]), render_error("beta", "beta failed"));
}

/// When the first request with an id is not a `tools/call`, its answer is
/// not a tool result; the next answer with that id is the `tools/call`'s, and
/// is rewrapped with its tool.
#[tokio::test]
async fn an_id_first_used_by_another_request_leaves_the_next_answer_to_the_tool_call() {
    let ping = json!({"jsonrpc": "2.0", "id": "x", "method": "ping"});
    let batch = json!([ping, tool_call("x", "deploy"), tool_call(9, "build")]);
    let response = ToolErrors::new(in_order_server())
        .oneshot(batch)
        .await
        .unwrap();
    let answers = response.as_array().unwrap();
    assert_eq!(text(&answers[0]), "ping failed");
    assert_eq!(text(&answers[1]), render_error("deploy", "deploy failed"));
    assert_eq!(text(&answers[2]), render_error("build", "build failed"));
}

/// Ids are compared as JSON-RPC ids: `1` and `"1"` are different ids, `1`
/// and `1.0` the same (a peer that re-encodes numbers as floats sends `1.0`);
/// an id that is not a valid JSON-RPC id (an object) still matches an equal one.
#[tokio::test]
async fn ids_match_as_json_rpc_ids() {
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

    // A number id comes back as a float of the same value: the same id. An
    // answer whose id no request has is left as it is; an object id whose
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
    assert_eq!(text(&answers[0]), render_error("a", "t"));
    assert_eq!(text(&answers[1]), "t");
    assert_eq!(text(&answers[2]), render_error("c", "t"));
}

/// One request with id `9.0`, answered with id `9` (what a peer that
/// re-encodes numbers sends): the same id, so the error is rewrapped.
#[tokio::test]
async fn a_request_with_id_9_0_is_answered_by_an_answer_with_id_9() {
    let server = service_fn(|_: Value| {
        let failed =
            json!({"content": [{"type": "text", "text": "quota exceeded"}], "isError": true});
        ready(Ok::<_, Infallible>(
            json!({"jsonrpc": "2.0", "id": 9, "result": failed}),
        ))
    });
    let answer = ToolErrors::new(server)
        .oneshot(tool_call(9.0, "export"))
        .await
        .unwrap();
    assert_eq!(text(&answer), render_error("export", "quota exceeded"));
}
