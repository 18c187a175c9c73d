//! When the upstream gives no answer, the client still gets one: an `isError`
//! result with the element for a `tools/call`, `-32603` with the same sentence
//! for any other request, as a JSON body or as the last event of a stream
//! already started.

use hyper::StatusCode;
use mcp_tool_errors::render_error;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::support::{
    Events, Proxy, Reply, Upstream, closing_upstream, event_data, json, refused_port, tool_call,
};

/// What a `tools/call` of `tool` with `id` gets when the upstream failed so.
fn tool_failure(id: u64, tool: &str, sentence: &str) -> Value {
    json!({
        "jsonrpc": "2.0", "id": id,
        "result": {"content": [{"type": "text", "text": render_error(tool, sentence)}], "isError": true},
    })
}

/// What any other request gets.
fn internal_error(id: u64, sentence: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": sentence}})
}

#[tokio::test]
async fn an_unreachable_server_is_answered_and_the_reason_logged() {
    let port = refused_port().await;
    let proxy = Proxy::start(&format!("http://{port}/mcp"), &[]).await;
    let sentence = "The server could not be reached.";

    let response = proxy.post(&tool_call(1, "search"), &[]).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(json(response).await, tool_failure(1, "search", sentence));

    let ping = proxy
        .post(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#, &[])
        .await;
    assert_eq!(json(ping).await, internal_error(2, sentence));
    let log = proxy.log();
    assert!(log.contains("no answer from"), "{log}");
    assert!(log.to_ascii_lowercase().contains("refused"), "{log}");
}

#[tokio::test]
async fn a_tls_handshake_that_fails_is_an_unreachable_server() {
    // A plain HTTP server where the URL says https: the handshake fails.
    let upstream = Upstream::start(|_| Reply::json("{}")).await;
    let proxy = Proxy::start(&format!("https://{}/mcp", upstream.address), &[]).await;

    let response = proxy.post(&tool_call(1, "search"), &[]).await;

    assert_eq!(
        json(response).await,
        tool_failure(1, "search", "The server could not be reached.")
    );
    let log = proxy.log();
    assert!(
        log.contains(&format!("no answer from https://{}/mcp", upstream.address)),
        "{log}"
    );
    assert!(upstream.received().is_empty());
}

#[tokio::test]
async fn a_request_outside_the_endpoint_that_reaches_nothing_is_a_502() {
    let port = refused_port().await;
    let proxy = Proxy::start(&format!("http://{port}/mcp"), &[]).await;
    let request = hyper::Request::get("/.well-known/oauth-authorization-server")
        .body(http_body_util::Full::new(hyper::body::Bytes::new()))
        .unwrap();

    let response = proxy.send(request).await;

    assert_eq!(response.status(), StatusCode::BAD_GATEWAY);
    assert!(proxy.log().contains("cannot forward to"), "{}", proxy.log());
}

#[tokio::test]
async fn a_5xx_without_a_json_rpc_body_is_answered_with_its_status() {
    let upstream = Upstream::start(|_| {
        Reply::Whole(
            StatusCode::BAD_GATEWAY,
            vec![("content-type", "text/html".to_owned())],
            b"<html><body>502 Bad Gateway</body></html>".to_vec(),
        )
    })
    .await;
    let proxy = Proxy::start(&upstream.url(), &[]).await;

    let response = proxy.post(&tool_call(4, "deploy"), &[]).await;

    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        json(response).await,
        tool_failure(
            4,
            "deploy",
            "The server answered HTTP 502 instead of a result."
        )
    );
}

#[tokio::test]
async fn a_5xx_with_a_json_rpc_answer_is_that_answer() {
    let answer = r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"database down"}}"#;
    let upstream = Upstream::start(move |_| {
        Reply::Whole(
            StatusCode::INTERNAL_SERVER_ERROR,
            vec![("content-type", "application/json".to_owned())],
            answer.as_bytes().to_vec(),
        )
    })
    .await;
    let proxy = Proxy::start(&upstream.url(), &[]).await;

    let response = proxy.post(&tool_call(4, "deploy"), &[]).await;

    assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(crate::support::body(response).await, answer.as_bytes());
}

#[tokio::test]
async fn a_connection_closed_mid_answer_is_answered() {
    let (address, _server) = closing_upstream(
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 200\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":",
    )
    .await;
    let proxy = Proxy::start(&format!("http://{address}/mcp"), &[]).await;
    let sentence = "The server closed the connection before answering.";

    let response = proxy.post(&tool_call(6, "search"), &[]).await;
    assert_eq!(json(response).await, tool_failure(6, "search", sentence));
}

#[tokio::test]
async fn a_connection_closed_before_any_response_is_answered() {
    let (address, _server) = closing_upstream(b"").await;
    let proxy = Proxy::start(&format!("http://{address}/mcp"), &[]).await;
    let sentence = "The server closed the connection before answering.";

    let response = proxy
        .post(r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#, &[])
        .await;
    assert_eq!(
        json(response).await,
        json!({"jsonrpc": "2.0", "id": "p", "error": {"code": -32603, "message": sentence}})
    );
}

#[tokio::test]
async fn an_event_stream_that_ends_before_the_answer_ends_with_one() {
    let progress = "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n";
    for cut in [false, true] {
        let (chunks, script_chunks) = mpsc::unbounded_channel();
        chunks.send(Ok(progress.as_bytes().to_vec())).unwrap();
        chunks
            .send(Ok(b"data: {\"jsonrpc\":\"2.0\",\"id\":".to_vec()))
            .unwrap();
        let script_chunks = std::sync::Mutex::new(Some(script_chunks));
        let upstream =
            Upstream::start(move |_| Reply::Events(script_chunks.lock().unwrap().take().unwrap()))
                .await;
        let proxy = Proxy::start(&upstream.url(), &[]).await;

        let response = proxy.post(&tool_call(9, "build"), &[]).await;
        let mut events = Events::new(response);

        assert_eq!(events.next().await.unwrap(), progress, "cut: {cut}");
        // Once the stream has started: cut (the chunked body never ends), or ended.
        if cut {
            chunks.send(Err(())).unwrap();
        }
        drop(chunks);
        let last = events.next().await.unwrap();
        assert_eq!(
            event_data(&last),
            tool_failure(
                9,
                "build",
                "The server closed the connection before answering."
            ),
            "cut: {cut}"
        );
        assert_eq!(events.next().await, None, "cut: {cut}");
    }
}

#[tokio::test]
async fn a_hung_tool_call_is_answered_at_its_timeout_and_cancelled_at_the_server() {
    let upstream = Upstream::start(|request| match request.json()["method"].as_str() {
        Some("tools/call") => Reply::Hang,
        _ => Reply::Whole(StatusCode::ACCEPTED, Vec::new(), Vec::new()),
    })
    .await;
    let proxy = Proxy::start(&upstream.url(), &["--tool-timeout", "250ms"]).await;
    let session = [
        ("mcp-session-id", "s-1"),
        ("mcp-protocol-version", "2025-06-18"),
    ];

    let response = proxy.post(&tool_call(11, "slow"), &session).await;

    assert_eq!(
        json(response).await,
        tool_failure(
            11,
            "slow",
            "The tool did not finish within 0.25 s and was cancelled."
        )
    );
    let cancel = upstream
        .wait_for(|request| request.json()["method"] == "notifications/cancelled")
        .await;
    assert_eq!(cancel.json()["params"]["requestId"], 11);
    assert_eq!(cancel.uri, "/mcp");
    assert_eq!(cancel.header("mcp-session-id"), Some("s-1"));
    assert_eq!(cancel.header("mcp-protocol-version"), Some("2025-06-18"));
}

#[tokio::test]
async fn a_timeout_on_a_started_event_stream_is_its_last_event() {
    let (chunks, script_chunks) = mpsc::unbounded_channel();
    let progress = "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n";
    chunks.send(Ok(progress.as_bytes().to_vec())).unwrap();
    let script_chunks = std::sync::Mutex::new(Some(script_chunks));
    let upstream = Upstream::start(move |request| match request.json()["method"].as_str() {
        Some("tools/call") => Reply::Events(script_chunks.lock().unwrap().take().unwrap()),
        _ => Reply::Whole(StatusCode::ACCEPTED, Vec::new(), Vec::new()),
    })
    .await;
    let proxy = Proxy::start(&upstream.url(), &["--tool-timeout-for", "slow=300ms"]).await;

    let response = proxy
        .post(&tool_call(12, "slow"), &[("mcp-session-id", "s-2")])
        .await;
    let mut events = Events::new(response);

    assert_eq!(events.next().await.unwrap(), progress);
    let last = events.next().await.unwrap();
    assert_eq!(
        event_data(&last),
        tool_failure(
            12,
            "slow",
            "The tool did not finish within 0.3 s and was cancelled."
        )
    );
    assert_eq!(events.next().await, None);
    let cancel = upstream
        .wait_for(|request| request.json()["method"] == "notifications/cancelled")
        .await;
    assert_eq!(cancel.json()["params"]["requestId"], 12);
    assert_eq!(cancel.header("mcp-session-id"), Some("s-2"));
    // The upstream's stream was dropped: the script's sender sees it closed.
    crate::support::bounded("the upstream stream is abandoned", chunks.closed()).await;
}
