//! Who may use the bridge, as an operator configures it: origins allowed
//! besides the listener's own, the `Host` a loopback listener serves, the
//! bearer scheme as RFC 7235 and RFC 6750 write it, a token rotated without
//! a restart, and a log that never shows a session id whole. The real
//! binary and a plain HTTP client on 127.0.0.1; every wait is bounded.

use std::path::PathBuf;
use std::time::Duration;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use serde_json::json;

use crate::bridge::{Bridge, INITIALIZE, child};
use crate::support::{bounded, json as json_body, send_to, tool_call};

/// A token file of this test's own, holding `text`.
fn token_file(name: &str, text: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("bridge-{name}-{}", std::process::id()));
    std::fs::write(&path, text).unwrap();
    path
}

/// An `initialize` with `Host: host` and `headers`.
async fn initialize_at(
    bridge: &Bridge,
    host: &str,
    headers: &[(&str, &str)],
) -> Response<Incoming> {
    let mut request = Request::post("/mcp")
        .header("host", host)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let request = request.body(Full::new(Bytes::from(INITIALIZE))).unwrap();
    send_to(bridge.process.address, request).await
}

#[tokio::test]
async fn an_origin_allowed_by_name_is_served_and_any_other_refused() {
    let bridge = Bridge::start(
        &[
            "--allow-origin",
            "https://mcp.example",
            "--allow-origin",
            "https://tools.example:8443",
        ],
        &child(json!({})),
    )
    .await;
    for origin in ["https://mcp.example", "https://tools.example:8443"] {
        bridge
            .open_with(&[("origin", origin)])
            .await
            .map_err(|response| response.status())
            .expect("served");
    }
    for origin in ["https://evil.example", "http://mcp.example", "null"] {
        let refused = bridge
            .open_with(&[("origin", origin)])
            .await
            .err()
            .expect("refused");
        assert_eq!(refused.status(), StatusCode::FORBIDDEN, "{origin}");
    }
    assert_eq!(bridge.children().len(), 2, "no child for a refused client");
    // Behind a proxy that passes the client's Host on, the allowed origin's
    // host is the bridge's own.
    let origin = [("origin", "https://mcp.example")];
    let served = initialize_at(&bridge, "mcp.example", &origin).await;
    assert_eq!(served.status(), StatusCode::OK);
    let refused = initialize_at(&bridge, "evil.example", &origin).await;
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn a_loopback_listener_refuses_a_host_not_its_own_as_the_typescript_sdk_does() {
    let bridge = Bridge::start(&[], &child(json!({}))).await;
    let port = bridge.process.address.port();
    for host in ["evil.example", &format!("evil.example:{port}")] {
        let refused = initialize_at(&bridge, host, &[]).await;
        assert_eq!(refused.status(), StatusCode::FORBIDDEN, "{host}");
        assert_eq!(
            json_body(refused).await,
            json!({
                "jsonrpc": "2.0",
                "error": {"code": -32000, "message": "Invalid Host: evil.example"},
                "id": null,
            })
        );
    }
    assert!(
        bridge.children().is_empty(),
        "no child for a refused client"
    );
    for host in [
        format!("localhost:{port}"),
        "localhost".to_owned(),
        format!("127.0.0.1:{port}"),
        format!("[::1]:{port}"),
    ] {
        let served = initialize_at(&bridge, &host, &[]).await;
        assert_eq!(served.status(), StatusCode::OK, "{host}");
    }
}

#[tokio::test]
async fn the_bearer_scheme_is_read_in_any_case_after_one_or_more_spaces() {
    let token = token_file("scheme", "s3cret\n");
    let bridge = Bridge::start(
        &["--auth-token-file", token.to_str().unwrap()],
        &child(json!({})),
    )
    .await;
    for authorization in ["Bearer s3cret", "bearer s3cret", "BEARER   s3cret"] {
        bridge
            .open_with(&[("authorization", authorization)])
            .await
            .map_err(|response| response.status())
            .expect(authorization);
    }
    for authorization in ["Bearers3cret", "Basic s3cret", "Bearer s3cre", "Bearer"] {
        let refused = bridge
            .open_with(&[("authorization", authorization)])
            .await
            .err()
            .expect(authorization);
        assert_eq!(
            refused.status(),
            StatusCode::UNAUTHORIZED,
            "{authorization}"
        );
    }
    std::fs::remove_file(token).unwrap();
}

#[tokio::test]
async fn a_token_rotated_in_its_file_is_in_force_without_a_restart() {
    let token = token_file("rotated", "first\n");
    let bridge = Bridge::start(
        &["--auth-token-file", token.to_str().unwrap()],
        &child(json!({"tools/call echo": [crate::process_support::send(
            r#"{"jsonrpc":"2.0","id":$ID,"result":{"content":[]}}"#
        )]})),
    )
    .await;
    let session = bridge
        .open_with(&[("authorization", "Bearer first")])
        .await
        .map_err(|response| response.status())
        .expect("served");
    std::fs::write(&token, "second-token\n").unwrap();
    bounded("the new token is in force", async {
        while bridge
            .open_with(&[("authorization", "Bearer second-token")])
            .await
            .is_err()
        {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
    let refused = bridge
        .open_with(&[("authorization", "Bearer first")])
        .await
        .err()
        .expect("the old token is refused");
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    // The session opened with the old token lives on, with the new one.
    let call = crate::support::post_to(
        session.address,
        &tool_call(1, "echo"),
        &[
            ("mcp-session-id", &session.id),
            ("authorization", "Bearer second-token"),
        ],
    )
    .await;
    assert_eq!(call.status(), StatusCode::OK);
    // A file emptied (a write caught half-way) leaves the token in force,
    // said once.
    std::fs::write(&token, "").unwrap();
    for _ in 0..3 {
        tokio::time::sleep(Duration::from_millis(1100)).await;
        bridge
            .open_with(&[("authorization", "Bearer second-token")])
            .await
            .map_err(|response| response.status())
            .expect("served");
    }
    assert_eq!(bridge.process.log().matches("stays in force").count(), 1);
    std::fs::remove_file(token).unwrap();
}

#[tokio::test]
async fn the_log_shows_a_sessions_id_prefix_and_its_servers_pid_never_the_whole_id() {
    let bridge = Bridge::start(&[], &child(json!({}))).await;
    let session = bridge.open().await;
    let pid = bridge.children()[0];
    let prefix = &session.id[..8];
    bridge
        .process
        .log_shows(&format!(
            "session started: {prefix}, the server's pid {pid}"
        ))
        .await;
    assert_eq!(session.delete().await, StatusCode::OK);
    bridge
        .process
        .log_shows(&format!(
            "session ended: {prefix}, the server's pid {pid} exited"
        ))
        .await;
    let log = bridge.process.log();
    assert!(!log.contains(&session.id), "{log}");
}

#[tokio::test]
async fn the_json_log_gives_a_sessions_id_prefix_and_its_servers_pid_as_fields() {
    use tokio::io::{AsyncBufReadExt, BufReader};

    let server = child(json!({}));
    let mut bridge = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcp-tool-errors"))
        .args(["--log-format", "json", "--listen", "127.0.0.1:0", "--"])
        .arg(&server.program)
        .args(&server.args)
        .envs(server.env.iter().map(|(key, value)| (key, value)))
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(bridge.stderr.take().unwrap()).lines();
    let mut log = Vec::new();
    // Reads the log until a line whose message starts with `start`.
    let mut until = async |start: &str| {
        bounded(start, async {
            loop {
                let line = lines.next_line().await.unwrap().expect("a log line");
                // The child's own stderr passes as it is.
                let Ok(event) = serde_json::from_str::<serde_json::Value>(&line) else {
                    continue;
                };
                log.push(line);
                if event["message"].as_str().unwrap().starts_with(start) {
                    return event;
                }
            }
        })
        .await
    };
    let listening = until("listening on").await;
    let address: std::net::SocketAddr = listening["address"].as_str().unwrap().parse().unwrap();
    let opened = crate::support::post_to(address, INITIALIZE, &[]).await;
    assert_eq!(opened.status(), StatusCode::OK);
    let id = opened.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let pid = crate::process_support::children_of(bridge.id().unwrap())[0];
    let started = until("session started").await;
    assert_eq!(started["session"], id[..8]);
    assert_eq!(started["pid"], pid);
    let delete = Request::delete("/mcp")
        .header("mcp-session-id", &id)
        .body(http_body_util::Empty::<Bytes>::new())
        .unwrap();
    assert_eq!(send_to(address, delete).await.status(), StatusCode::OK);
    let ended = until("session ended").await;
    assert_eq!(ended["session"], id[..8]);
    assert_eq!(ended["pid"], pid);
    assert!(!log.iter().any(|line| line.contains(&id)), "{log:?}");
}

#[tokio::test]
async fn off_loopback_the_bridge_serves_with_a_token_or_allow_unauthenticated_whatever_the_host() {
    let open = Bridge::start_at("0.0.0.0:0", &["--allow-unauthenticated"], &child(json!({}))).await;
    let served = initialize_at(&open, "mcp.example", &[]).await;
    assert_eq!(served.status(), StatusCode::OK);

    let token = token_file("off-loopback", "s3cret\n");
    let guarded = Bridge::start_at(
        "0.0.0.0:0",
        &["--auth-token-file", token.to_str().unwrap()],
        &child(json!({})),
    )
    .await;
    let refused = initialize_at(&guarded, "mcp.example", &[]).await;
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    let served = initialize_at(
        &guarded,
        "mcp.example",
        &[("authorization", "Bearer s3cret")],
    )
    .await;
    assert_eq!(served.status(), StatusCode::OK);
    std::fs::remove_file(token).unwrap();
}
