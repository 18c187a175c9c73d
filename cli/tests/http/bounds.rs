//! The bounds on what the proxy waits for and reads of the upstream, each fed
//! the worst input: a JSON answer that never ends, an event that never ends, an
//! upstream that accepts a request and never answers, and one that never
//! completes the TCP handshake. Each is answered with a sentence the model
//! reads, in the shape the client waits for.

use std::time::Duration;

use mcp_tool_errors::render_error;
use serde_json::json;
use tokio::net::{TcpSocket, TcpStream};

use crate::support::{
    Events, Proxy, Reply, Upstream, answering, bounded, event_data, json, tool_call,
};

const TOO_LARGE: &str = "The server sent a message larger than 16 MiB, the most the proxy reads.";
const PING: &str = r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#;

#[tokio::test]
async fn a_json_answer_that_never_ends_is_answered_as_too_large() {
    let upstream = Upstream::start(answering(|| Reply::Endless {
        content_type: "application/json",
        head: r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":""#,
        repeated: vec![b'a'; 64 * 1024],
    }))
    .await;
    let proxy = Proxy::start(&upstream.url(), &[]).await;

    let answer = json(proxy.post(&tool_call(1, "dump"), &[]).await).await;
    let ping = json(proxy.post(PING, &[]).await).await;

    assert_eq!(
        answer,
        json!({"jsonrpc": "2.0", "id": 1, "result": {
            "content": [{"type": "text", "text": render_error("dump", TOO_LARGE)}],
            "isError": true,
        }})
    );
    assert_eq!(
        ping,
        json!({"jsonrpc": "2.0", "id": "p", "error": {"code": -32603, "message": TOO_LARGE}})
    );
}

#[tokio::test]
async fn an_event_that_never_ends_is_answered_as_too_large_and_cancelled() {
    let upstream = Upstream::start(answering(|| Reply::Endless {
        content_type: "text/event-stream",
        head: "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\ndata: ",
        repeated: vec![b'a'; 64 * 1024],
    }))
    .await;
    let proxy = Proxy::start(&upstream.url(), &[]).await;

    let mut stream = Events::new(
        proxy
            .post(&tool_call(2, "dump"), &[("mcp-session-id", "s-2")])
            .await,
    );
    let progress = stream.next().await.expect("the event before");
    let last = stream.next().await.expect("the answer");

    assert_eq!(event_data(&progress)["method"], "notifications/progress");
    assert_eq!(
        event_data(&last)["result"]["content"][0]["text"],
        render_error("dump", TOO_LARGE)
    );
    assert_eq!(stream.next().await, None);
    let cancelled = upstream
        .wait_for(|request| request.json()["method"] == "notifications/cancelled")
        .await;
    assert_eq!(cancelled.json()["params"]["requestId"], 2);
    assert_eq!(cancelled.header("mcp-session-id"), Some("s-2"));
}

#[tokio::test]
async fn a_request_never_answered_is_answered_at_the_tool_timeout_and_cancelled() {
    let upstream = Upstream::start(answering(|| Reply::Hang)).await;
    // The tool timeout bounds every request, not only tools/call (which the
    // layer answers with its own sentence, tested with the failures).
    let proxy = Proxy::start(&upstream.url(), &["--tool-timeout", "300ms"]).await;

    let ping = json(proxy.post(PING, &[]).await).await;

    assert_eq!(
        ping,
        json!({"jsonrpc": "2.0", "id": "p", "error": {
            "code": -32603,
            "message": "The server did not answer within 300ms; the request was cancelled.",
        }})
    );
    let cancelled = upstream
        .wait_for(|request| request.json()["method"] == "notifications/cancelled")
        .await;
    assert_eq!(cancelled.json()["params"]["requestId"], "p");
}

#[tokio::test]
async fn an_upstream_that_never_completes_the_handshake_is_unreachable() {
    // A listener that never accepts, its queue filled: the system drops the
    // next handshakes, and a connection attempt waits until it gives up.
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let listener = socket.listen(1).unwrap();
    let address = listener.local_addr().unwrap();
    let mut queued = Vec::new();
    bounded("the queue fills", async {
        while let Ok(Ok(stream)) =
            tokio::time::timeout(Duration::from_millis(200), TcpStream::connect(address)).await
        {
            queued.push(stream);
        }
    })
    .await;
    let proxy = Proxy::start(&format!("http://{address}/mcp"), &[]).await;

    let ping = json(proxy.post(PING, &[]).await).await;

    assert_eq!(
        ping,
        json!({"jsonrpc": "2.0", "id": "p", "error": {
            "code": -32603, "message": "The server could not be reached.",
        }})
    );
    assert!(proxy.log().contains("connect"), "{}", proxy.log());
    drop((listener, queued));
}
