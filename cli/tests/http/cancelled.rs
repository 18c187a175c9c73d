//! A call the client cancelled (its `notifications/cancelled`, sent on
//! another connection of the session, as a client sends every message) gets no
//! answer of the proxy's and no second cancellation at the server: not at its
//! timeout, not at the end of a drain, not when the server ends its stream
//! unanswered. The client's cancellation reaches the server once, as it was
//! sent, and not after the proxy's own. A stream the client closes is no
//! cancellation.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use hyper::StatusCode;
use mcp_tool_errors::render_error;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::support::{
    Events, Proxy, Received, Reply, Upstream, answering, body, bounded, event_data, post_to,
    tool_call,
};

/// The reason the client gives.
const REASON: &str = "The user stopped the call.";

/// The reason the proxy gives when it cancels a call itself.
const PROXYS_REASON: &str = "The client's tool timeout expired.";

/// A progress notification, the event a tool's stream starts with here.
const PROGRESS: &str = "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n";

/// The client's `notifications/cancelled` of request `id`.
fn cancellation(id: &Value) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": id, "reason": REASON}})
}

/// The reasons of the `notifications/cancelled` of request `id` in `session`
/// that `upstream` received, each alone in its request.
fn cancellations(upstream: &Upstream, session: &str, id: u64) -> Vec<String> {
    upstream
        .received()
        .iter()
        .filter(|request| {
            let message = request.json();
            message["method"] == "notifications/cancelled"
                && message["params"]["requestId"] == id
                && request.header("mcp-session-id") == Some(session)
        })
        .map(|request| request.json()["params"]["reason"].to_string())
        .collect()
}

/// `[REASON]`, as [`cancellations`] lists it: the client's cancellation, once.
fn the_clients_only() -> Vec<String> {
    vec![json!(REASON).to_string()]
}

/// Sends the client's cancellation of `id` in `session` on a connection of its
/// own; returns once the upstream has it.
async fn cancel(proxy: &Proxy, upstream: &Upstream, session: &str, id: u64) {
    let response = proxy
        .post(
            &cancellation(&json!(id)).to_string(),
            &[("mcp-session-id", session)],
        )
        .await;
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    upstream
        .wait_for(|request| {
            request.json()["method"] == "notifications/cancelled"
                && request.header("mcp-session-id") == Some(session)
        })
        .await;
}

/// Gives a cancellation of the proxy's, if one were sent, the time to reach
/// the upstream.
async fn settle() {
    tokio::time::sleep(Duration::from_millis(300)).await;
}

/// Sends `tools/call` `id` of `slow` in `session` to the proxy at `address`,
/// in a task: its response's status and body.
fn call(
    address: std::net::SocketAddr,
    session: &'static str,
    id: u64,
) -> tokio::task::JoinHandle<(StatusCode, String)> {
    tokio::spawn(async move {
        let response = post_to(
            address,
            &tool_call(id, "slow"),
            &[("mcp-session-id", session)],
        )
        .await;
        let status = response.status();
        let body = body(response).await;
        (status, String::from_utf8_lossy(&body).into_owned())
    })
}

/// The senders of the upstream's event streams, held to keep them open.
type OpenStreams = Arc<Mutex<Vec<mpsc::UnboundedSender<Result<Vec<u8>, ()>>>>>;

/// Answers `tools/call` with an event stream that sends [`PROGRESS`] and
/// stays open (its sender kept in `open`), anything else with `202`.
fn streams_kept_open(open: OpenStreams) -> impl Fn(&Received) -> Reply + Send + Sync + 'static {
    move |request| match request.json()["method"].as_str() {
        Some("tools/call") => {
            let (sender, receiver) = mpsc::unbounded_channel();
            sender.send(Ok(PROGRESS.as_bytes().to_vec())).unwrap();
            open.lock().unwrap().push(sender);
            Reply::Events(receiver)
        }
        _ => Reply::Whole(StatusCode::ACCEPTED, Vec::new(), Vec::new()),
    }
}

#[tokio::test]
async fn a_cancelled_call_gets_no_answer_at_its_timeout_and_the_server_one_cancellation() {
    let upstream = Upstream::start(answering(|| Reply::Hang)).await;
    let proxy = Proxy::start(&upstream.url(), &["--tool-timeout", "1s"]).await;
    let call = call(proxy.address, "s-1", 7);
    upstream
        .wait_for(|request| request.json()["method"] == "tools/call")
        .await;

    cancel(&proxy, &upstream, "s-1", 7).await;

    // At the timeout, the client's request ends with nothing to read.
    let (status, body) = bounded("the call's response", call).await.unwrap();
    assert_eq!((status, body.as_str()), (StatusCode::ACCEPTED, ""));
    settle().await;
    assert_eq!(cancellations(&upstream, "s-1", 7), the_clients_only());
    let log = proxy.log();
    assert!(
        log.contains("the client cancelled call 7: no answer and no cancellation"),
        "{log}"
    );
}

#[tokio::test]
async fn the_clients_cancellation_of_a_call_the_proxy_cancelled_first_is_not_sent_again() {
    let upstream = Upstream::start(answering(|| Reply::Hang)).await;
    let proxy = Proxy::start(&upstream.url(), &["--tool-timeout", "300ms"]).await;
    let (status, _) = bounded("the call's response", call(proxy.address, "s-g", 7))
        .await
        .unwrap();
    assert_eq!(status, StatusCode::OK, "the timeout's answer");
    upstream
        .wait_for(|request| request.json()["method"] == "notifications/cancelled")
        .await;

    // The client's own timeout fired too, a moment later.
    let response = proxy
        .post(
            &cancellation(&json!(7)).to_string(),
            &[("mcp-session-id", "s-g")],
        )
        .await;

    assert_eq!(response.status(), StatusCode::ACCEPTED);
    settle().await;
    assert_eq!(
        cancellations(&upstream, "s-g", 7),
        [json!(PROXYS_REASON).to_string()]
    );
}

#[tokio::test]
async fn a_cancellation_on_another_connection_ends_the_stream_of_its_session_only() {
    let open = Arc::new(Mutex::new(Vec::new()));
    let upstream = Upstream::start(streams_kept_open(open.clone())).await;
    let proxy = Proxy::start(&upstream.url(), &["--tool-timeout", "1s"]).await;
    // The same id in two sessions, each call's stream on its own connection.
    let mut streams = Vec::new();
    for session in ["s-a", "s-b"] {
        let response = proxy
            .post(&tool_call(7, "slow"), &[("mcp-session-id", session)])
            .await;
        let mut events = Events::new(response);
        assert_eq!(events.next().await.as_deref(), Some(PROGRESS));
        streams.push(tokio::spawn(async move {
            let mut rest = Vec::new();
            while let Some(event) = events.next().await {
                rest.push(event_data(&event));
            }
            rest
        }));
    }

    cancel(&proxy, &upstream, "s-a", 7).await;

    let cancelled = bounded("the cancelled call's stream", streams.remove(0))
        .await
        .unwrap();
    assert_eq!(
        cancelled,
        Vec::<Value>::new(),
        "no answer after the progress"
    );
    let timed_out = bounded("the other session's stream", streams.remove(0))
        .await
        .unwrap();
    let sentence = "The tool did not finish within 1 s and was cancelled.";
    assert_eq!(
        timed_out,
        [json!({"jsonrpc": "2.0", "id": 7, "result": {
            "content": [{"type": "text", "text": render_error("slow", sentence)}],
            "isError": true,
        }})]
    );
    settle().await;
    assert_eq!(cancellations(&upstream, "s-a", 7), the_clients_only());
    assert_eq!(
        cancellations(&upstream, "s-b", 7),
        [json!(PROXYS_REASON).to_string()]
    );
    drop(open);
}

#[tokio::test]
async fn a_stream_the_client_closed_without_cancelling_is_still_cancelled_at_its_timeout() {
    let open = Arc::new(Mutex::new(Vec::new()));
    let upstream = Upstream::start(streams_kept_open(open.clone())).await;
    let proxy = Proxy::start(&upstream.url(), &["--tool-timeout", "500ms"]).await;
    let response = proxy
        .post(&tool_call(7, "slow"), &[("mcp-session-id", "s-c")])
        .await;
    let mut events = Events::new(response);
    assert_eq!(events.next().await.as_deref(), Some(PROGRESS));

    drop(events);

    upstream
        .wait_for(|request| request.json()["method"] == "notifications/cancelled")
        .await;
    settle().await;
    assert_eq!(
        cancellations(&upstream, "s-c", 7),
        [json!(PROXYS_REASON).to_string()]
    );
    drop(open);
}

#[tokio::test]
async fn a_cancelled_call_whose_stream_the_server_ends_unanswered_gets_no_answer() {
    // A call no timeout applies to (read by its envelope), and one under the
    // layer's timer.
    for options in [&[][..], &["--tool-timeout", "60s"]] {
        let stream = Arc::new(Mutex::new(None));
        let kept = stream.clone();
        // The server ends the call's stream when the call is cancelled.
        let upstream = Upstream::start(move |request| match request.json()["method"].as_str() {
            Some("tools/call") => {
                let (sender, receiver) = mpsc::unbounded_channel();
                sender.send(Ok(PROGRESS.as_bytes().to_vec())).unwrap();
                *kept.lock().unwrap() = Some(sender);
                Reply::Events(receiver)
            }
            method => {
                if method == Some("notifications/cancelled") {
                    kept.lock().unwrap().take();
                }
                Reply::Whole(StatusCode::ACCEPTED, Vec::new(), Vec::new())
            }
        })
        .await;
        let proxy = Proxy::start(&upstream.url(), options).await;
        let response = proxy
            .post(&tool_call(7, "slow"), &[("mcp-session-id", "s-d")])
            .await;
        let mut events = Events::new(response);
        assert_eq!(events.next().await.as_deref(), Some(PROGRESS));

        cancel(&proxy, &upstream, "s-d", 7).await;

        assert_eq!(events.next().await, None, "{options:?}");
        settle().await;
        assert_eq!(
            cancellations(&upstream, "s-d", 7),
            the_clients_only(),
            "{options:?}"
        );
        drop(stream);
    }
}

#[tokio::test]
async fn a_cancelled_call_at_the_end_of_a_drain_is_neither_answered_nor_cancelled_again() {
    for options in [&[][..], &["--tool-timeout", "60s"]] {
        let upstream = Upstream::start(answering(|| Reply::Hang)).await;
        let options = [options, &["--drain-timeout", "300ms"][..]].concat();
        let mut proxy = Proxy::start(&upstream.url(), &options).await;
        let call = call(proxy.address, "s-e", 7);
        upstream
            .wait_for(|request| request.json()["method"] == "tools/call")
            .await;
        cancel(&proxy, &upstream, "s-e", 7).await;

        proxy.terminate();

        let (status, body) = bounded("the call's response", call).await.unwrap();
        assert_eq!(
            (status, body.as_str()),
            (StatusCode::ACCEPTED, ""),
            "{options:?}"
        );
        assert_eq!(proxy.exited().await.code(), Some(0));
        assert_eq!(
            cancellations(&upstream, "s-e", 7),
            the_clients_only(),
            "{options:?}"
        );
    }
}

#[tokio::test]
async fn endless_cancellations_of_calls_never_seen_forget_no_cancelled_call() {
    let upstream = Upstream::start(|request| match request.json()["method"].as_str() {
        Some("tools/call") => Reply::Hang,
        _ => Reply::Whole(StatusCode::ACCEPTED, Vec::new(), Vec::new()),
    })
    .await;
    let proxy = Proxy::start(&upstream.url(), &["--tool-timeout", "2s"]).await;
    let call = call(proxy.address, "s-f", 7);
    upstream
        .wait_for(|request| request.json()["method"] == "tools/call")
        .await;
    cancel(&proxy, &upstream, "s-f", 7).await;

    // The worst input: 40,000 cancellations of ids never seen, long and
    // all different, in the call's session and in another, after the one
    // that counts.
    let long = "x".repeat(64);
    for session in ["s-f", "s-other"] {
        let flood: Vec<Value> = (0..20_000)
            .map(|n| cancellation(&json!(format!("{long}{n}"))))
            .collect();
        let response = proxy
            .post(
                &Value::Array(flood).to_string(),
                &[("mcp-session-id", session)],
            )
            .await;
        assert_eq!(response.status(), StatusCode::ACCEPTED);
    }

    let (status, body) = bounded("the call's response", call).await.unwrap();
    assert_eq!((status, body.as_str()), (StatusCode::ACCEPTED, ""));
    settle().await;
    assert_eq!(cancellations(&upstream, "s-f", 7), the_clients_only());
}

/// A batch's stream that sends one answer, then an event past the proxy's
/// bound: the request left gets the proxy's answer and is cancelled at the
/// server; the one the server answered is not.
#[tokio::test]
async fn a_batch_given_up_after_one_answer_is_cancelled_for_the_request_left_only() {
    let stream = Arc::new(Mutex::new(None));
    let kept = stream.clone();
    let upstream = Upstream::start(move |request| {
        if request.json().is_array() {
            let (sender, receiver) = mpsc::unbounded_channel();
            let answer = json!({"jsonrpc": "2.0", "id": 1, "result": {"content": []}});
            sender
                .send(Ok(format!("data: {answer}\n\n").into_bytes()))
                .unwrap();
            // An event that never ends, past the bound.
            sender.send(Ok(b"data: ".to_vec())).unwrap();
            sender.send(Ok(vec![b'x'; 17 << 20])).unwrap();
            *kept.lock().unwrap() = Some(sender);
            Reply::Events(receiver)
        } else {
            Reply::Whole(StatusCode::ACCEPTED, Vec::new(), Vec::new())
        }
    })
    .await;
    let proxy = Proxy::start(&upstream.url(), &[]).await;
    let batch = format!("[{},{}]", tool_call(1, "quick"), tool_call(2, "slow"));
    let mut events = Events::new(proxy.post(&batch, &[("mcp-session-id", "s-t")]).await);

    assert_eq!(event_data(&events.next().await.unwrap())["id"], 1);
    // The proxy's answer to what is left of the batch: a batch.
    let given_up = event_data(&events.next().await.unwrap());
    assert_eq!(given_up.as_array().map(Vec::len), Some(1), "{given_up}");
    assert_eq!(given_up[0]["id"], 2, "{given_up}");
    assert_eq!(given_up[0]["result"]["isError"], true, "{given_up}");
    upstream
        .wait_for(|request| request.json()["method"] == "notifications/cancelled")
        .await;
    settle().await;
    assert_eq!(
        cancellations(&upstream, "s-t", 2),
        [json!(PROXYS_REASON).to_string()]
    );
    assert_eq!(cancellations(&upstream, "s-t", 1), Vec::<String>::new());
    drop(stream);
}
