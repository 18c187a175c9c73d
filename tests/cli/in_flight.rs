//! Requests in flight: an id reused while in flight, and cancellation by the
//! client.

use serde_json::{Value, json};

use crate::support::{Server, Session, tool_call};

fn send(text: &str) -> Value {
    json!({"send": text})
}

#[tokio::test]
async fn a_request_reusing_an_id_in_flight_is_refused_and_the_first_keeps_its_answer() {
    let own = r#"{"jsonrpc":"2.0","id":$ID,"result":{"content":[{"type":"text","text":"done"}]}}"#;
    let server = Server::scripted(json!({
        "on": {
            // A reused id reaching the child would take the first call's answer.
            "ping": [send(r#"{"jsonrpc":"2.0","id":$ID,"result":{}}"#)],
            "test/release": [send(r#"{"jsonrpc":"2.0","id":$REQUEST_ID,"result":{"content":[{"type":"text","text":"done"}]}}"#)],
        },
    }));
    let mut session = Session::wrapped(&[], &server);
    for (id, shown) in [(json!(7), "7"), (json!("a"), r#""a""#)] {
        let mut call = tool_call(0, "slow", json!({}));
        call["id"] = id.clone();
        session.send(&call.to_string()).await;
        let reuse = json!({"jsonrpc": "2.0", "id": id, "method": "ping"});
        let refused: Value = serde_json::from_str(&session.line_after(&reuse).await).expect("JSON");
        assert_eq!(
            refused,
            json!({
                "jsonrpc": "2.0", "id": id,
                "error": {"code": -32600, "message": format!("Invalid request: id {shown} is already in use.")},
            })
        );
        let release =
            json!({"jsonrpc": "2.0", "method": "test/release", "params": {"requestId": id}});
        let answer = session.line_after(&release).await;
        assert_eq!(answer, own.replace("$ID", shown));
    }
}

#[tokio::test]
async fn a_batch_reusing_an_id_in_flight_is_refused_whole() {
    let server = Server::scripted(json!({
        "on": {"batch": [send(r#"[{"jsonrpc":"2.0","id":2,"result":{}}]"#)]},
    }));
    let mut session = Session::wrapped(&[], &server);
    session
        .send(&tool_call(1, "slow", json!({})).to_string())
        .await;
    let batch = json!([
        {"jsonrpc": "2.0", "id": 2, "method": "ping"},
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
    ]);
    let refused: Value = serde_json::from_str(&session.line_after(&batch).await).expect("JSON");
    assert_eq!(refused[0]["id"], 2);
    assert_eq!(refused[0]["error"]["code"], -32600);
    assert_eq!(
        refused[0]["error"]["message"],
        "Invalid request: the batch holds id 1, which is already in use."
    );
    assert_eq!(refused[1]["id"], 1);
    assert_eq!(
        refused[1]["error"]["message"],
        "Invalid request: id 1 is already in use."
    );
}
