//! The endpoint however a router spells it: each of the three routers the
//! proxy fronts sends more paths than `/mcp` to its endpoint (axum's
//! `nest_service` everything under `/mcp/`, Express `/mcp/` and any letter
//! case, Starlette percent-encoded letters, after a `307` for `/mcp/`), and
//! the layer must be there whichever the client used. The real servers are
//! ignored unless scripts/install-test-servers.sh has run; axum's routing is
//! scripted (the rmcp example is the library's, not this package's).

use std::time::{Duration, Instant};

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response};
use mcp_tool_errors::render_error;
use serde_json::{Value, json};

use crate::everything::Everything;
use crate::python::{PythonServer, tool_call as python_call};
use crate::support::{
    Events, Proxy, Reply, Upstream, error_result, event_data, json, send_to, tool_call,
};

/// POSTs `body` to `path` at `address` as an MCP client does, with `headers`.
async fn post_at(
    address: std::net::SocketAddr,
    path: &str,
    body: &str,
    headers: &[(&str, &str)],
) -> Response<Incoming> {
    let mut request = Request::post(path)
        .header("host", address.to_string())
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let body = Full::new(Bytes::from(body.to_owned()));
    send_to(address, request.body(body).unwrap()).await
}

/// `answer` with the text of its first content element rendered as the
/// layer renders an error of `tool`.
fn rewrapped(answer: &Value, tool: &str) -> Value {
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let mut rewrapped = answer.clone();
    rewrapped["result"]["content"][0]["text"] = render_error(tool, text).into();
    rewrapped
}

#[tokio::test]
async fn a_tool_error_under_the_endpoint_is_rewrapped_as_axum_nests_it_and_none_beside_it() {
    let upstream = Upstream::start(|_| Reply::json(&error_result(1, "disk full"))).await;
    let proxy = Proxy::start(&upstream.url(), &[]).await;
    let raw: Value = serde_json::from_str(&error_result(1, "disk full")).unwrap();

    // The last two as a hop that normalizes paths (nginx) sends them to `/mcp`.
    for path in ["/mcp/", "/mcp/x", "/./mcp", "/x/../mcp"] {
        let answer = json(post_at(proxy.address, path, &tool_call(1, "fail"), &[]).await).await;
        assert_eq!(answer, rewrapped(&raw, "fail"), "{path}");
    }
    // A path no router sends to the endpoint is not read.
    let answer = json(post_at(proxy.address, "/mcpx", &tool_call(1, "fail"), &[]).await).await;
    assert_eq!(answer, raw);
}

/// An upstream that routes as axum's `nest_service(endpoint, ..)`: every path
/// that is `endpoint` or starts with `endpoint/`, as sent (axum neither
/// decodes nor normalizes it), answers the tool error; any other is `404`.
async fn routing_by_prefix(endpoint: &'static str) -> Upstream {
    Upstream::start(move |received| {
        let path = received.uri.split('?').next().unwrap_or_default();
        let under = path
            .strip_prefix(endpoint)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'));
        if under {
            Reply::json(&error_result(1, "disk full"))
        } else {
            Reply::Whole(hyper::StatusCode::NOT_FOUND, vec![], Vec::new())
        }
    })
    .await
}

#[tokio::test]
async fn a_tool_error_at_a_dot_segment_under_the_endpoint_is_rewrapped_as_axum_routes_it() {
    let raw: Value = serde_json::from_str(&error_result(1, "disk full")).unwrap();
    // Each spelling the upstream routes to its endpoint, an endpoint at the
    // root of the path and one under it.
    for (endpoint, paths) in [
        (
            "/mcp",
            &[
                "/mcp/..",
                "/mcp/../x",
                "/mcp/%2e%2e",
                "/mcp/%2E%2E/",
                "/mcp//..",
                "/mcp/./..",
                "/mcp/x/../..",
                "/mcp/",
            ][..],
        ),
        (
            "/v1/mcp",
            &["/v1/mcp/..", "/v1/mcp/../..", "/v1/mcp/%2e%2e/x", "/v1/mcp"][..],
        ),
    ] {
        let upstream = routing_by_prefix(endpoint).await;
        let url = format!("http://{}{endpoint}", upstream.address);
        let proxy = Proxy::start(&url, &[]).await;
        for path in paths {
            let direct =
                json(post_at(upstream.address, path, &tool_call(1, "fail"), &[]).await).await;
            assert_eq!(direct, raw, "the upstream routes {path} to its endpoint");
            let answer = json(post_at(proxy.address, path, &tool_call(1, "fail"), &[]).await).await;
            assert_eq!(answer, rewrapped(&raw, "fail"), "{path}");
        }
    }
}

/// An upstream behind Cloudflare's URL normalization (its default type):
/// each `\` read as a `/`, as the WHATWG URL parser reads an `http` URL,
/// runs of `/` merged and dot segments removed, before a router that serves
/// the endpoint `/mcp` alone answers the tool error; any other path is `404`.
async fn behind_cloudflare_normalization() -> Upstream {
    Upstream::start(|received| {
        let path = received.uri.split('?').next().unwrap_or_default();
        let mut segments: Vec<&str> = Vec::new();
        for segment in path
            .split(['/', '\\'])
            .filter(|segment| !segment.is_empty())
        {
            match segment {
                "." => {}
                ".." => drop(segments.pop()),
                segment => segments.push(segment),
            }
        }
        if segments == ["mcp"] {
            Reply::json(&error_result(1, "disk full"))
        } else {
            Reply::Whole(hyper::StatusCode::NOT_FOUND, vec![], Vec::new())
        }
    })
    .await
}

#[tokio::test]
async fn a_tool_error_through_a_backslash_is_rewrapped_as_cloudflare_normalizes_it() {
    let raw: Value = serde_json::from_str(&error_result(1, "disk full")).unwrap();
    let upstream = behind_cloudflare_normalization().await;
    let proxy = Proxy::start(&upstream.url(), &[]).await;
    for path in [
        "/x\\..\\mcp",
        "/x/..\\mcp",
        "/x\\../mcp",
        "/mcp\\",
        "/.\\mcp",
    ] {
        let direct = json(post_at(upstream.address, path, &tool_call(1, "fail"), &[]).await).await;
        assert_eq!(direct, raw, "the upstream routes {path} to its endpoint");
        let answer = json(post_at(proxy.address, path, &tool_call(1, "fail"), &[]).await).await;
        assert_eq!(answer, rewrapped(&raw, "fail"), "{path}");
    }
}

#[tokio::test]
#[ignore = "needs the test servers: scripts/install-test-servers.sh"]
async fn starlette_percent_encoded_letters_reach_the_layer_on_both_paths() {
    let server = PythonServer::start().await;
    let url = format!("http://{}/mcp", server.address());
    let proxy = Proxy::start(&url, &["--tool-timeout-for", "sleep=500ms"]).await;

    // A call no timeout applies to: a direct call.
    let failing = python_call(1, "tool_error", json!({"path": "/etc/missing"}));
    let direct = json(post_at(server.address(), "/mcp", &failing, &[]).await).await;
    let proxied = json(post_at(proxy.address, "/%6dcp", &failing, &[]).await).await;
    assert_eq!(proxied, rewrapped(&direct, "tool_error"));

    // A call under its timeout: an exchange.
    let sleeping = python_call(2, "sleep", json!({"seconds": 3}));
    let started = Instant::now();
    let answer = json(post_at(proxy.address, "/m%63p", &sleeping, &[]).await).await;
    let text = render_error(
        "sleep",
        "The tool did not finish within 0.5 s and was cancelled.",
    );
    assert_eq!(answer["result"]["content"][0]["text"], text, "{answer}");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
#[ignore = "needs the test servers: scripts/install-test-servers.sh"]
async fn the_redirect_starlette_sends_for_a_trailing_slash_points_at_the_proxy() {
    let server = PythonServer::start().await;
    let proxy = Proxy::start(&format!("http://{}/mcp", server.address()), &[]).await;

    let call = python_call(1, "echo", json!({"text": "hi"}));
    let response = post_at(proxy.address, "/mcp/", &call, &[]).await;

    assert_eq!(response.status(), 307);
    assert_eq!(
        response.headers()["location"],
        format!("http://{}/mcp", proxy.address).as_str()
    );
}

/// A session opened at `path` of `address`: its id.
async fn open_session(address: std::net::SocketAddr, path: &str) -> String {
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    }});
    let response = post_at(address, path, &initialize.to_string(), &[]).await;
    let session = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    Events::new(response).next().await;
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let headers = [("mcp-session-id", session.as_str())];
    post_at(address, path, &initialized.to_string(), &headers).await;
    session
}

/// The answer to `request` at `path` in `session`: the data of the stream's
/// last event.
async fn answer_in_session(
    address: std::net::SocketAddr,
    path: &str,
    session: &str,
    request: &str,
) -> Value {
    let headers = [("mcp-session-id", session)];
    let mut events = Events::new(post_at(address, path, request, &headers).await);
    let mut last = None;
    while let Some(event) = events.next().await {
        last = Some(event);
    }
    event_data(&last.expect("an answer event"))
}

#[tokio::test]
#[ignore = "needs the test servers: scripts/install-test-servers.sh"]
async fn express_tool_errors_through_any_letter_case_and_a_trailing_slash_are_rewrapped() {
    let server = Everything::start().await;
    let url = format!("http://{}/mcp", server.address());
    let proxy = Proxy::start(&url, &[]).await;
    // The server reports arguments that fail the schema as an isError result.
    let invalid = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "echo", "arguments": {}}})
    .to_string();
    let direct_session = open_session(server.address(), "/mcp").await;
    let direct = answer_in_session(server.address(), "/mcp", &direct_session, &invalid).await;

    let session = open_session(proxy.address, "/MCP").await;
    for path in ["/mcp/", "/Mcp", "/MCP/"] {
        let proxied = answer_in_session(proxy.address, path, &session, &invalid).await;
        assert_eq!(proxied, rewrapped(&direct, "echo"), "{path}");
    }
}
