//! SIGTERM drains: no new connections, the calls in flight get
//! `--drain-timeout` to finish, those still waiting are then answered as at a
//! timeout (and cancelled at the server), and the command exits 0.

use mcp_tool_errors::render_error;
use serde_json::json;
use std::net::SocketAddr;

use serde_json::Value;
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::support::{
    DRAINED, Events, Proxy, Reply, Upstream, answering, bounded, error_result, event_data, json,
    post_to, tool_call,
};

/// Waits until `address` refuses connections.
async fn refuses(address: std::net::SocketAddr) {
    bounded("the listener is closed", async {
        while TcpStream::connect(address).await.is_ok() {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    })
    .await;
}

#[tokio::test]
async fn an_idle_proxy_exits_0_at_once() {
    let upstream = Upstream::start(|_| Reply::Hang).await;
    // A drain timeout longer than the test's patience: exiting within it shows
    // that an idle proxy does not wait for the timeout.
    let mut proxy = Proxy::start(&upstream.url(), &["--drain-timeout", "1h"]).await;

    proxy.terminate();

    assert_eq!(proxy.exited().await.code(), Some(0));
}

#[tokio::test]
async fn a_call_in_flight_is_answered_by_the_server_while_new_connections_are_refused() {
    let (answer, events) = mpsc::unbounded_channel();
    let events = std::sync::Mutex::new(Some(events));
    let upstream =
        Upstream::start(move |_| Reply::Events(events.lock().unwrap().take().expect("one call")))
            .await;
    let mut proxy = Proxy::start(&upstream.url(), &["--drain-timeout", "1h"]).await;
    let address = proxy.address;
    let call = tokio::spawn(async move {
        let response = crate::support::post_to(address, &tool_call(4, "deploy"), &[]).await;
        let mut events = Events::new(response);
        events.next().await
    });
    upstream
        .wait_for(|request| request.json()["method"] == "tools/call")
        .await;

    proxy.terminate();
    refuses(address).await;
    answer
        .send(Ok(
            format!("data: {}\n\n", error_result(4, "disk full")).into_bytes()
        ))
        .unwrap();
    drop(answer);

    let event = bounded("the answer", call)
        .await
        .unwrap()
        .expect("an event");
    assert_eq!(
        event_data(&event)["result"]["content"][0]["text"],
        render_error("deploy", "disk full")
    );
    assert_eq!(proxy.exited().await.code(), Some(0));
}

/// A `tools/call` (id 7, in session `s-1`) and a `ping` (id `"p"`) that the
/// upstream has received and will never answer.
pub(crate) struct InFlight {
    call: JoinHandle<Value>,
    ping: JoinHandle<Value>,
}

impl InFlight {
    /// Sends both to the proxy at `address` and waits until `upstream` has them.
    pub(crate) async fn send(address: SocketAddr, upstream: &Upstream) -> Self {
        let call = tokio::spawn(async move {
            json(
                post_to(
                    address,
                    &tool_call(7, "deploy"),
                    &[("mcp-session-id", "s-1")],
                )
                .await,
            )
            .await
        });
        let ping = tokio::spawn(async move {
            json(
                post_to(
                    address,
                    r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#,
                    &[],
                )
                .await,
            )
            .await
        });
        upstream
            .wait_for(|request| request.json()["method"] == "tools/call")
            .await;
        upstream
            .wait_for(|request| request.json()["method"] == "ping")
            .await;
        Self { call, ping }
    }

    /// Asserts that the drain answered both with its sentence and cancelled
    /// the call at `upstream`, in its session.
    pub(crate) async fn assert_answered_by_the_drain_and_cancelled(self, upstream: &Upstream) {
        assert_eq!(
            bounded("the tool call's answer", self.call).await.unwrap(),
            json!({"jsonrpc": "2.0", "id": 7, "result": {
                "content": [{"type": "text", "text": render_error("deploy", DRAINED)}],
                "isError": true,
            }})
        );
        assert_eq!(
            bounded("the ping's answer", self.ping).await.unwrap(),
            json!({"jsonrpc": "2.0", "id": "p", "error": {"code": -32603, "message": DRAINED}})
        );
        let cancelled = upstream
            .wait_for(|request| {
                request.json()["method"] == "notifications/cancelled"
                    && request.json()["params"]["requestId"] == 7
            })
            .await;
        assert_eq!(cancelled.header("mcp-session-id"), Some("s-1"));
    }
}

#[tokio::test]
async fn calls_still_waiting_at_the_drain_timeout_are_answered_and_cancelled() {
    let upstream = Upstream::start(answering(|| Reply::Hang)).await;
    let mut proxy = Proxy::start(&upstream.url(), &["--drain-timeout", "300ms"]).await;
    let in_flight = InFlight::send(proxy.address, &upstream).await;

    proxy.terminate();

    in_flight
        .assert_answered_by_the_drain_and_cancelled(&upstream)
        .await;
    assert_eq!(proxy.exited().await.code(), Some(0));
}

#[tokio::test]
async fn a_started_event_stream_ends_with_the_answer_at_the_drain_timeout() {
    let (events, stream) = mpsc::unbounded_channel();
    let stream = std::sync::Mutex::new(Some(stream));
    let upstream = Upstream::start(move |request| match request.json()["method"].as_str() {
        Some("tools/call") => Reply::Events(stream.lock().unwrap().take().expect("one call")),
        _ => Reply::Whole(hyper::StatusCode::ACCEPTED, vec![], vec![]),
    })
    .await;
    let progress = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}"#;
    events
        .send(Ok(format!("id: 1\ndata: {progress}\n\n").into_bytes()))
        .unwrap();
    let mut proxy = Proxy::start(&upstream.url(), &["--drain-timeout", "300ms"]).await;
    let mut stream = Events::new(proxy.post(&tool_call(9, "render"), &[]).await);
    assert_eq!(
        stream.next().await.unwrap(),
        format!("id: 1\ndata: {progress}\n\n")
    );

    proxy.terminate();

    let last = stream.next().await.expect("the answer");
    assert_eq!(
        event_data(&last)["result"]["content"][0]["text"],
        render_error("render", DRAINED)
    );
    assert_eq!(stream.next().await, None);
    upstream
        .wait_for(|request| request.json()["method"] == "notifications/cancelled")
        .await;
    assert_eq!(proxy.exited().await.code(), Some(0));
    drop(events);
}

#[tokio::test]
async fn connections_waiting_in_the_listen_queue_at_sigterm_are_served() {
    use tokio::io::AsyncWriteExt;
    let upstream = Upstream::start(|request| {
        Reply::json(&error_result(
            request.json()["id"].as_u64().unwrap(),
            "disk full",
        ))
    })
    .await;
    let mut proxy = Proxy::start(&upstream.url(), &["--drain-timeout", "1h"]).await;
    // Stopped, the proxy accepts nothing: the system completes the handshakes
    // and queues the connections, with their requests, as under a load
    // balancer's traffic at the moment SIGTERM arrives.
    proxy.signal("STOP");
    let mut queued = Vec::new();
    for id in 0..8_u64 {
        let mut stream = bounded("connect", TcpStream::connect(proxy.address))
            .await
            .expect("the system queues the connection");
        let body = tool_call(id, "deploy");
        let request = format!(
            "POST /mcp HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\n\
             accept: application/json, text/event-stream\r\ncontent-length: {}\r\n\r\n{body}",
            proxy.address,
            body.len()
        );
        stream.write_all(request.as_bytes()).await.unwrap();
        queued.push((id, stream));
    }
    proxy.signal("TERM");
    proxy.signal("CONT");

    for (id, mut stream) in queued {
        // The connection closes after its answer, or is kept alive for the
        // client's next request if a worker accepted it and answered before
        // the drain began: the client's close ends it then.
        let read = bounded("the answer", one_response(&mut stream)).await;
        let response = read
            .as_deref()
            .map(String::from_utf8_lossy)
            .unwrap_or_default();
        assert!(
            read.is_ok() && response.starts_with("HTTP/1.1 200"),
            "call {id}: {read:?} {response:?}; the proxy said: {}",
            proxy.log()
        );
        let body = &response[response.find("\r\n\r\n").expect("a head") + 4..];
        let answer: serde_json::Value = serde_json::from_str(body).expect("a JSON body");
        assert_eq!(
            answer["result"]["content"][0]["text"],
            render_error("deploy", "disk full"),
            "call {id}"
        );
    }
    assert_eq!(proxy.exited().await.code(), Some(0));
}

/// One response read from `stream`: its head, and its body as long as its
/// `content-length` says, or to the end of the stream.
async fn one_response(stream: &mut TcpStream) -> std::io::Result<Vec<u8>> {
    use tokio::io::AsyncReadExt;
    let mut response = Vec::new();
    let mut buffer = [0; 4096];
    loop {
        if let Some(end) = response.windows(4).position(|window| window == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&response[..end]).to_ascii_lowercase();
            let length = head
                .lines()
                .find_map(|line| line.strip_prefix("content-length:"))
                .and_then(|length| length.trim().parse::<usize>().ok());
            if length.is_some_and(|length| response.len() >= end + 4 + length) {
                return Ok(response);
            }
        }
        match stream.read(&mut buffer).await? {
            0 => return Ok(response),
            read => response.extend_from_slice(&buffer[..read]),
        }
    }
}

/// The status of `GET path` on the health listener at `address`.
pub(crate) async fn probe(address: std::net::SocketAddr, path: &str) -> hyper::StatusCode {
    let request = hyper::Request::get(path)
        .header("host", "health")
        .body(http_body_util::Empty::<hyper::body::Bytes>::new())
        .unwrap();
    crate::support::send_to(address, request).await.status()
}

#[tokio::test]
async fn readyz_answers_503_from_sigterm_while_a_call_is_in_flight_and_livez_200() {
    let upstream = Upstream::start(answering(|| Reply::Hang)).await;
    let admin = crate::support::refused_port().await;
    let admin_option = admin.to_string();
    let mut proxy = Proxy::start(
        &upstream.url(),
        &["--drain-timeout", "1s", "--admin-listen", &admin_option],
    )
    .await;
    assert_eq!(probe(admin, "/livez").await, 200);
    assert_eq!(probe(admin, "/readyz").await, 200);
    assert_eq!(probe(admin, "/mcp").await, 404);
    let address = proxy.address;
    let call = tokio::spawn(async move {
        json(crate::support::post_to(address, &tool_call(7, "deploy"), &[]).await).await
    });
    upstream
        .wait_for(|request| request.json()["method"] == "tools/call")
        .await;
    assert_eq!(probe(admin, "/readyz").await, 200);

    proxy.terminate();
    bounded("/readyz answers 503", async {
        while probe(admin, "/readyz").await != 503 {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    })
    .await;
    // The call is still waiting for its answer, and the process lives.
    assert!(!call.is_finished());
    assert_eq!(probe(admin, "/livez").await, 200);
    assert_eq!(probe(admin, "/readyz").await, 503);

    let answer = bounded("the tool call's answer", call).await.unwrap();
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert_eq!(proxy.exited().await.code(), Some(0));
}

/// A `tools/call` of `deploy` with `id` to the endpoint at `address`.
fn call_request(
    address: SocketAddr,
    id: u64,
) -> hyper::Request<http_body_util::Full<hyper::body::Bytes>> {
    hyper::Request::post("/mcp")
        .header("host", address.to_string())
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(http_body_util::Full::new(tool_call(id, "deploy").into()))
        .unwrap()
}

/// Waits until the proxy says that it drains, and gives its connections'
/// tasks time to see it.
async fn draining(proxy: &Proxy) {
    bounded("the proxy drains", async {
        while !proxy.log().contains("draining:") {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    })
    .await;
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
}

#[tokio::test]
async fn a_kept_alive_connection_idle_at_sigterm_is_answered_its_next_request_with_connection_close()
 {
    use http_body_util::BodyExt;
    let upstream = Upstream::start(|request| {
        Reply::json(&error_result(
            request.json()["id"].as_u64().unwrap(),
            "disk full",
        ))
    })
    .await;
    // A drain timeout longer than the test's patience: the connection closes
    // after its answer, and the proxy exits then.
    let mut proxy = Proxy::start(&upstream.url(), &["--drain-timeout", "1h"]).await;
    let address = proxy.address;
    let stream = bounded("connect", TcpStream::connect(address))
        .await
        .unwrap();
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .unwrap();
    let connection = tokio::spawn(connection);
    let first = bounded(
        "the first answer",
        sender.send_request(call_request(address, 1)),
    )
    .await
    .expect("the first answer");
    assert_eq!(first.headers().get("connection"), None);
    bounded("the first body", first.into_body().collect())
        .await
        .unwrap();

    // The connection is idle, kept alive, as a load balancer keeps it.
    proxy.terminate();
    refuses(address).await;
    draining(&proxy).await;

    let second = bounded(
        "the second answer",
        sender.send_request(call_request(address, 2)),
    )
    .await
    .unwrap_or_else(|error| {
        panic!(
            "the request sent on the kept-alive connection was not answered: {error}; \
                 the proxy said: {}",
            proxy.log()
        )
    });
    assert_eq!(second.status(), 200);
    assert_eq!(second.headers()["connection"], "close");
    let body = bounded("the second body", second.into_body().collect())
        .await
        .unwrap()
        .to_bytes();
    let answer: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        answer["result"]["content"][0]["text"],
        render_error("deploy", "disk full")
    );
    // Closed after that answer: the drain is over.
    bounded("the connection closes", connection)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(proxy.exited().await.code(), Some(0));
}
