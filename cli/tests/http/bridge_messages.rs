//! What the bridge reads of a client's message, by the workspace's one rule
//! for each: an id in use (a session's call in flight, or an id held twice
//! in a batch, with or without a session) is refused `-32600` and never
//! reaches the child; only an `initialize` request opens a session. The
//! real binary on 127.0.0.1; every wait is bounded.

use hyper::StatusCode;
use serde_json::{Value, json};

use crate::bridge::{Bridge, answers, child};
use crate::process_support::{Server, send};
use crate::support::{bounded, post_to, tool_call};

/// The refusal of `id` in use, as `id_in_use` words it.
fn in_use(id: &Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32600, "message": format!("Invalid request: id {id} is already in use.")}})
}

#[tokio::test]
async fn an_id_in_flight_in_a_session_in_any_spelling_is_refused_and_the_call_keeps_its_answer() {
    let bridge = Bridge::start(&[], &child(json!({}))).await;
    let session = bridge.open().await;
    // The child never answers `hang`.
    let hanging = session.post(&tool_call(1, "hang")).await;
    assert_eq!(hanging.status(), StatusCode::OK);
    let again = r#"{"jsonrpc":"2.0","id":1.0,"method":"ping"}"#;
    assert_eq!(session.call(again).await, [in_use(&json!(1.0))]);
    let twice = r#"[{"jsonrpc":"2.0","id":"a","method":"ping"},{"jsonrpc":"2.0","id":"a","method":"ping"}]"#;
    let held = "Invalid request: the batch holds id \"a\", which is already in use.";
    assert_eq!(
        session.call(twice).await,
        [json!([
            {"jsonrpc": "2.0", "id": "a", "error": {"code": -32600, "message": held}},
            in_use(&json!("a")),
        ])]
    );
    drop(hanging);
}

#[tokio::test]
async fn a_sessionless_batch_holding_an_id_twice_is_refused_whole() {
    let discovered = r#"{"jsonrpc":"2.0","id":$ID,"result":{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"resultType":"complete"}}"#;
    let done = r#"{"jsonrpc":"2.0","id":$ID,"result":{"content":[]}}"#;
    let bridge = Bridge::start(
        &[],
        &Server::scripted(json!({"on": {
            "server/discover": [send(discovered)],
            "tools/call ok": [send(done)],
        }})),
    )
    .await;
    let call = |id: u64| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"ok","arguments":{{}},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}}}}"#
        )
    };
    let batch = format!("[{},{}]", call(1), call(1));
    let response = post_to(bridge.process.address, &batch, &[]).await;
    assert_eq!(response.status(), StatusCode::OK);
    let held = "Invalid request: the batch holds id 1, which is already in use.";
    assert_eq!(
        answers(response).await,
        [json!([
            {"jsonrpc": "2.0", "id": 1, "error": {"code": -32600, "message": held}},
            in_use(&json!(1)),
        ])]
    );
    assert!(bridge.children().is_empty(), "no child is started for it");
    // A single request with that id passes.
    let response = post_to(bridge.process.address, &call(1), &[]).await;
    let answers = answers(response).await;
    assert_eq!(answers.len(), 1, "{answers:?}");
    assert_eq!(answers[0]["result"]["content"], json!([]), "{answers:?}");
}

#[tokio::test]
async fn an_initialize_notification_opens_no_session() {
    let bridge = Bridge::start(&["--max-sessions", "1"], &child(json!({}))).await;
    let address = bridge.process.address;
    let notification = r#"{"jsonrpc":"2.0","method":"initialize","params":{}}"#;
    let response = post_to(address, notification, &[]).await;
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    assert!(response.headers().get("mcp-session-id").is_none());
    bounded("no child runs", async {
        while !bridge.children().is_empty() {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    })
    .await;
    // The one session the cap allows is still free.
    let _session = bridge.open().await;
}

/// A server of protocol 2026-07-28 that reads batches: it answers
/// `server/discover`, never answers `hang`, and dies of an `initialize`.
const MODERN_SERVER: &str = r#"
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    for member in message if isinstance(message, list) else [message]:
        if member.get("method") == "initialize":
            sys.exit(9)
        if member.get("method") == "server/discover":
            result = {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}, "resultType": "complete"}
            print(json.dumps({"jsonrpc": "2.0", "id": member["id"], "result": result}), flush=True)
"#;

#[tokio::test]
async fn an_initialize_in_a_sessionless_batch_never_reaches_the_shared_child() {
    let bridge = Bridge::start(&[], &Server::new("python3", &["-c", MODERN_SERVER])).await;
    let address = bridge.process.address;
    let hang = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hang","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
    let hanging = post_to(address, hang, &[]).await;
    assert_eq!(hanging.status(), StatusCode::OK);
    let children = bridge.children();
    assert_eq!(children.len(), 1, "{children:?}");
    let batch = format!(
        "[{},{}]",
        crate::bridge::INITIALIZE,
        r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#
    );
    let response = post_to(address, &batch, &[]).await;
    let refusals = answers(response).await;
    let codes: Vec<&Value> = refusals[0]
        .as_array()
        .expect("a batch")
        .iter()
        .map(|answer| &answer["error"]["code"])
        .collect();
    assert_eq!(codes, [&json!(-32600), &json!(-32600)], "{refusals:?}");
    // The other client's call is still in flight, on the same child.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(bridge.children(), children);
    drop(hanging);
}
