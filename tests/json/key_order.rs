//! Every object the layer creates (its own answers to a panic and a timeout,
//! the JSON-RPC error it answers a request with, the text item it adds to an
//! error without text, the results of `timed_out_result` and
//! `crashed_result`) has its keys in the order a sorted map writes them, so
//! that it is the same bytes whether serde_json keeps insertion order
//! (`preserve_order`, which `--all-features` turns on through tower-mcp) or
//! sorts: a program built either way writes the layer's answers alike.
//! Without `preserve_order` every map is sorted and these checks cannot fail;
//! under `--all-features` they do for any key out of order, as
//! `the_check_fails_for_a_key_out_of_order` shows. What a server wrote keeps
//! its own order, also when the layer takes its mark out of it.

use std::convert::Infallible;
use std::time::Duration;

use serde_json::{Value, json};
use tower::{Layer, ServiceExt, service_fn};

use crate::support::complete::complete;
use crate::support::quiet_panics::silence_expected_panics;
use crate::support::tool_call;
use mcp_tool_errors::ToolErrorLayer;

/// Fails unless every object in `value` has its keys in sorted order.
fn assert_keys_sorted(what: &str, value: &Value) {
    let mut sorted = value.clone();
    sorted.sort_all_objects();
    assert_eq!(
        value.to_string(),
        sorted.to_string(),
        "{what}: the keys of an object the layer created are not in sorted order",
    );
}

/// What the layer answers `request` with when the inner service panics.
fn panicked(request: Value) -> Value {
    silence_expected_panics();
    let server = service_fn(|_: Value| async move {
        panic!("the handler failed");
        #[allow(unreachable_code)]
        Ok::<Value, Infallible>(Value::Null)
    });
    complete(ToolErrorLayer::new().layer(server).oneshot(request)).unwrap()
}

#[test]
fn the_answers_to_a_panic_have_their_keys_sorted() {
    let ping = json!({"id": 2, "jsonrpc": "2.0", "method": "ping"});
    assert_keys_sorted("a tools/call", &panicked(tool_call(1, "deploy")));
    assert_keys_sorted("a ping", &panicked(ping.clone()));
    assert_keys_sorted("a batch", &panicked(json!([tool_call(1, "deploy"), ping])));
}

#[tokio::test(start_paused = true)]
async fn the_answer_at_a_timeout_has_its_keys_sorted() {
    let hanging = service_fn(|_: Value| std::future::pending::<Result<Value, Infallible>>());
    let layer = ToolErrorLayer::new().tool_timeout(Duration::from_secs(1));
    let answer = layer
        .layer(hanging)
        .oneshot(tool_call(1, "deploy"))
        .await
        .unwrap();
    assert_eq!(answer["result"]["isError"], true);
    assert_keys_sorted("a timeout", &answer);
}

#[test]
fn the_text_item_added_to_an_error_without_text_has_its_keys_sorted() {
    // The server's objects are sorted too, so that any key out of order is
    // one the layer wrote.
    let result = json!({
        "content": [{"data": "AA==", "mimeType": "image/png", "type": "image"}],
        "isError": true,
    });
    let server = service_fn(move |request: Value| {
        let answer = json!({"id": request["id"], "jsonrpc": "2.0", "result": result.clone()});
        async move { Ok::<_, Infallible>(answer) }
    });
    let answer = complete(
        ToolErrorLayer::new()
            .layer(server)
            .oneshot(tool_call(1, "screenshot")),
    )
    .unwrap();
    assert_eq!(
        answer["result"]["content"].as_array().map(Vec::len),
        Some(2)
    );
    assert_keys_sorted("an error without text", &answer);

    let mut at_hand = json!({"content": [], "isError": true});
    assert!(ToolErrorLayer::new().rewrap_result("screenshot", &mut at_hand));
    assert_keys_sorted("a result at hand without text", &at_hand);
}

#[test]
fn the_results_for_a_call_run_outside_the_layer_have_their_keys_sorted() {
    let layer = ToolErrorLayer::new();
    let timed_out = layer.timed_out_result("deploy", Duration::from_secs(1));
    assert_keys_sorted("timed_out_result", &timed_out);
    assert_keys_sorted("crashed_result", &layer.crashed_result("deploy", "boom"));
}

/// The check bites where it must: under `preserve_order`, an object written
/// `type` before `text` fails it.
#[cfg(feature = "tower-mcp")]
#[test]
#[should_panic(expected = "not in sorted order")]
fn the_check_fails_for_a_key_out_of_order() {
    assert_keys_sorted("an item", &json!({"type": "text", "text": "x"}));
}

/// A server's answer that carries the member the layer marks its inner
/// service's own answers with, before other members, loses that member only:
/// the others keep the order the server wrote them in.
#[test]
fn a_server_answer_keeps_its_order_when_the_mark_is_taken_out() {
    let server = service_fn(|_: Value| async move {
        let answer = r#"{"jsonrpc":"2.0","mcp_tool_errors.no_answer":"server_exited","id":1,"result":{"z":1,"a":2}}"#;
        Ok::<Value, Infallible>(serde_json::from_str(answer).unwrap())
    });
    let answer = complete(
        ToolErrorLayer::new()
            .layer(server)
            .oneshot(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"})),
    )
    .unwrap();
    let unmarked: Value =
        serde_json::from_str(r#"{"jsonrpc":"2.0","id":1,"result":{"z":1,"a":2}}"#).unwrap();
    assert_eq!(answer.to_string(), unmarked.to_string());
}
