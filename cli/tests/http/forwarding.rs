//! What passes through the proxy: paths, queries, headers both ways, and the
//! upstream's 4xx answers, untouched.

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::{Request, StatusCode};

use crate::support::{Proxy, Reply, Upstream, body, bounded, tool_call, try_send_to};

#[tokio::test]
async fn any_path_reaches_the_upstreams_origin_with_its_query_and_the_answer_comes_back() {
    let upstream = Upstream::start(|_| {
        Reply::Whole(
            StatusCode::OK,
            vec![
                ("content-type", "application/json".to_owned()),
                ("x-upstream", "kept".to_owned()),
            ],
            br#"{"resource":"https://mcp.example/mcp"}"#.to_vec(),
        )
    })
    .await;
    let proxy = Proxy::start(&upstream.url(), &[]).await;

    let request = Request::get("/.well-known/oauth-protected-resource/mcp?x=1&y=%20")
        .header("host", "proxy.example:8080")
        .body(Full::new(Bytes::new()))
        .unwrap();
    let response = proxy.send(request).await;

    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["x-upstream"], "kept");
    assert_eq!(
        body(response).await,
        &br#"{"resource":"https://mcp.example/mcp"}"#[..]
    );
    let received = upstream.received();
    assert_eq!(received.len(), 1);
    assert_eq!(received[0].method, "GET");
    assert_eq!(
        received[0].uri,
        "/.well-known/oauth-protected-resource/mcp?x=1&y=%20"
    );
}

#[tokio::test]
async fn headers_pass_except_hop_by_hop_host_is_the_upstreams_and_the_client_is_named() {
    let upstream =
        Upstream::start(|_| Reply::json(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#)).await;
    let proxy = Proxy::start(&upstream.url(), &[]).await;

    let response = proxy
        .post(
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            &[
                ("authorization", "Bearer token-1"),
                ("mcp-session-id", "session-9"),
                ("mcp-protocol-version", "2025-06-18"),
                ("connection", "keep-alive, x-hop"),
                ("x-hop", "this hop only"),
                ("x-forwarded-for", "203.0.113.7"),
            ],
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let _ = body(response).await;

    let received = &upstream.received()[0];
    assert_eq!(received.uri, "/mcp");
    assert_eq!(received.header("authorization"), Some("Bearer token-1"));
    assert_eq!(received.header("mcp-session-id"), Some("session-9"));
    assert_eq!(received.header("mcp-protocol-version"), Some("2025-06-18"));
    assert_eq!(
        received.header("accept"),
        Some("application/json, text/event-stream")
    );
    assert_eq!(received.header("x-hop"), None);
    assert_eq!(
        received.header("host"),
        Some(upstream.address.to_string().as_str())
    );
    assert_eq!(
        received.header("x-forwarded-for"),
        Some("203.0.113.7, 127.0.0.1")
    );
    assert_eq!(
        received.header("forwarded"),
        Some(format!("for=127.0.0.1;host=\"{}\";proto=http", proxy.address).as_str())
    );
}

#[tokio::test]
async fn an_upstream_4xx_to_a_tool_call_passes_through_untouched() {
    let challenge =
        r#"Bearer resource_metadata="https://mcp.example/.well-known/oauth-protected-resource""#;
    let error_body =
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Unauthorized"}}"#;
    let upstream = Upstream::start(move |_| {
        Reply::Whole(
            StatusCode::UNAUTHORIZED,
            vec![
                ("content-type", "application/json".to_owned()),
                ("www-authenticate", challenge.to_owned()),
            ],
            error_body.as_bytes().to_vec(),
        )
    })
    .await;
    let proxy = Proxy::start(&upstream.url(), &[]).await;

    let response = proxy.post(&tool_call(1, "search"), &[]).await;

    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(response.headers()["www-authenticate"], challenge);
    assert_eq!(body(response).await, error_body.as_bytes());
}

#[tokio::test]
async fn a_notification_is_forwarded_as_it_is_and_its_202_comes_back() {
    let upstream =
        Upstream::start(|_| Reply::Whole(StatusCode::ACCEPTED, Vec::new(), Vec::new())).await;
    let proxy = Proxy::start(&upstream.url(), &[]).await;
    let notification = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

    let response = proxy.post(notification, &[]).await;

    assert_eq!(response.status(), StatusCode::ACCEPTED);
    assert_eq!(upstream.received()[0].body, notification.as_bytes());
}

/// The proxy's bound on a message it reads whole (`MAX_MESSAGE_BYTES`).
const MAX_REQUEST_BYTES: usize = 16 * 1024 * 1024;

#[tokio::test]
async fn a_request_of_the_largest_size_read_whole_is_forwarded() {
    let upstream =
        Upstream::start(|_| Reply::json(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#)).await;
    let proxy = Proxy::start(&upstream.url(), &[]).await;
    let call = tool_call(1, "write");
    // The call, padded with spaces (JSON whitespace) to the bound exactly.
    let padded = format!("{call}{}", " ".repeat(MAX_REQUEST_BYTES - call.len()));

    let response = proxy.post(&padded, &[]).await;

    assert_eq!(response.status(), StatusCode::OK);
    let _ = body(response).await;
    assert_eq!(upstream.received()[0].body.len(), MAX_REQUEST_BYTES);
}

#[tokio::test]
async fn an_endless_request_body_is_refused_at_the_bound_and_never_forwarded() {
    let upstream = Upstream::start(|_| Reply::json("{}")).await;
    let proxy = Proxy::start(&upstream.url(), &[]).await;
    // Chunked, no length, never ending: a call, then spaces forever.
    let body = Endless {
        first: Some(Bytes::from(tool_call(1, "write"))),
        then: Bytes::from(vec![b' '; 64 * 1024]),
    };
    let request = Request::post("/mcp")
        .header("content-type", "application/json")
        .body(body)
        .unwrap();

    // The proxy answers 413 before the body ends, then lingers (reads and
    // discards what the client still sends) before it closes: the client,
    // still writing, reads the answer before any reset.
    let response = try_send_to(proxy.address, request)
        .await
        .expect("the 413, read before the connection closes");
    assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
    bounded("the refusal is logged", async {
        while !proxy
            .log()
            .contains("refused a request of more than 16777216 bytes")
        {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(upstream.received().is_empty());
    assert!(
        proxy
            .log()
            .contains("refused a request of more than 16777216 bytes")
    );
}

/// A request body that never ends: `first`, then `then` again and again.
struct Endless {
    first: Option<Bytes>,
    then: Bytes,
}

impl hyper::body::Body for Endless {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Bytes>, Self::Error>>> {
        let chunk = self.first.take().unwrap_or_else(|| self.then.clone());
        std::task::Poll::Ready(Some(Ok(hyper::body::Frame::data(chunk))))
    }
}

#[tokio::test]
async fn a_get_stream_at_the_endpoint_streams_through_as_it_arrives() {
    let (chunks, script_chunks) = tokio::sync::mpsc::unbounded_channel();
    let script_chunks = std::sync::Mutex::new(Some(script_chunks));
    let upstream = Upstream::start(move |_| {
        Reply::Events(script_chunks.lock().unwrap().take().expect("one request"))
    })
    .await;
    let proxy = Proxy::start(&upstream.url(), &[]).await;
    let first =
        "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n";
    chunks.send(Ok(first.as_bytes().to_vec())).unwrap();

    let request = Request::get("/mcp")
        .header("accept", "text/event-stream")
        .header("mcp-session-id", "s-3")
        .header("last-event-id", "0")
        .body(Full::new(Bytes::new()))
        .unwrap();
    let response = proxy.send(request).await;
    let mut events = crate::support::Events::new(response);

    // Read before the upstream has sent anything more: not buffered.
    assert_eq!(events.next().await.unwrap(), first);
    let received = &upstream.received()[0];
    assert_eq!(received.header("last-event-id"), Some("0"));
    assert_eq!(received.header("mcp-session-id"), Some("s-3"));
    drop(chunks);
    assert_eq!(events.next().await, None);
}

#[tokio::test]
async fn a_json_body_that_answers_nothing_passes_as_it_is() {
    let odd = r#"{"status":"ok"}"#;
    let upstream = Upstream::start(move |_| Reply::json(odd)).await;
    let proxy = Proxy::start(&upstream.url(), &[]).await;

    let response = proxy.post(&tool_call(1, "search"), &[]).await;

    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(body(response).await, odd.as_bytes());
}
