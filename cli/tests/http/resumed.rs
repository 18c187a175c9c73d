//! Answers outside the exchange of their request: replayed on a resumed stream
//! (a `GET` with `Last-Event-ID` after the client lost the `POST`'s stream), or
//! sent on the session's `GET` stream. Rewritten when this process relayed the
//! call in that session (under `--invalid-params-as-tool-errors` too); passed
//! as they are otherwise.

use http_body_util::Full;
use hyper::Request;
use hyper::body::Bytes;
use mcp_tool_errors::render_error;
use tokio::sync::mpsc;

use crate::support::{Events, Proxy, Reply, Upstream, error_result, event_data, tool_call};

/// `GET /mcp` in `session`, resuming after `last_event_id`.
fn resume(session: &str, last_event_id: &str) -> Request<Full<Bytes>> {
    Request::get("/mcp")
        .header("accept", "text/event-stream")
        .header("mcp-session-id", session)
        .header("last-event-id", last_event_id)
        .body(Full::new(Bytes::new()))
        .unwrap()
}

/// An upstream whose `POST` stream sends one progress event and then stays
/// open without an answer, and whose `GET` stream replays `replayed`.
async fn resumable_upstream(
    replayed: String,
) -> (Upstream, mpsc::UnboundedSender<Result<Vec<u8>, ()>>) {
    let (open, post_stream) = mpsc::unbounded_channel();
    open.send(Ok(b"id: e1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n".to_vec()))
        .unwrap();
    let post_stream = std::sync::Mutex::new(Some(post_stream));
    let upstream = Upstream::start(move |received| match received.method.as_str() {
        "POST" => Reply::Events(post_stream.lock().unwrap().take().expect("one POST")),
        _ => Reply::events(&[&replayed]),
    })
    .await;
    (upstream, open)
}

#[tokio::test]
async fn an_answer_replayed_on_a_resumed_stream_is_rewritten_when_this_process_relayed_the_call() {
    let replayed = format!("id: e2\ndata: {}\n\n", error_result(7, "exit status 2"));
    let (upstream, _open) = resumable_upstream(replayed).await;
    let proxy = Proxy::start(&upstream.url(), &[]).await;

    let response = proxy
        .post(&tool_call(7, "build"), &[("mcp-session-id", "s-1")])
        .await;
    let mut events = Events::new(response);
    assert!(events.next().await.unwrap().starts_with("id: e1\n"));
    // The client loses the stream before the answer, and resumes.
    drop(events);
    let mut resumed = Events::new(proxy.send(resume("s-1", "e1")).await);

    let event = resumed.next().await.unwrap();
    assert!(event.starts_with("id: e2\n"), "{event}");
    assert_eq!(
        event_data(&event)["result"]["content"][0]["text"],
        render_error("build", "exit status 2")
    );
    let get = &upstream.received()[1];
    assert_eq!(
        (get.method.as_str(), get.header("last-event-id")),
        ("GET", Some("e1"))
    );
}

/// A call sent as `9.0` whose answer the server replays as `9` (the
/// TypeScript SDK writes a number back so): one id, JSON-RPC's rule, the
/// library's `JsonRpcId`, so the replayed answer is the call's.
#[tokio::test]
async fn an_answer_replayed_with_another_spelling_of_the_calls_id_is_rewritten() {
    let replayed = format!("id: e2\ndata: {}\n\n", error_result(9, "exit status 2"));
    let (upstream, _open) = resumable_upstream(replayed).await;
    let proxy = Proxy::start(&upstream.url(), &[]).await;
    let call = r#"{"jsonrpc":"2.0","id":9.0,"method":"tools/call","params":{"name":"build","arguments":{}}}"#;

    let response = proxy.post(call, &[("mcp-session-id", "s-1")]).await;
    let mut events = Events::new(response);
    assert!(events.next().await.unwrap().starts_with("id: e1\n"));
    drop(events);
    let mut resumed = Events::new(proxy.send(resume("s-1", "e1")).await);

    let event = resumed.next().await.unwrap();
    assert_eq!(
        event_data(&event)["result"]["content"][0]["text"],
        render_error("build", "exit status 2"),
        "{event}"
    );
}

#[tokio::test]
async fn an_answer_to_a_call_of_another_session_or_never_relayed_passes_as_it_is() {
    let replayed = format!(
        "id: e2\ndata: {}\n\nid: e3\ndata: {}\n\n",
        error_result(7, "exit status 2"),
        error_result(8, "not relayed")
    );
    let (upstream, _open) = resumable_upstream(replayed.clone()).await;
    let proxy = Proxy::start(&upstream.url(), &[]).await;
    let response = proxy
        .post(&tool_call(7, "build"), &[("mcp-session-id", "s-1")])
        .await;
    let mut events = Events::new(response);
    events.next().await.unwrap();

    let mut other_session = Events::new(proxy.send(resume("s-2", "e1")).await);
    let mut relayed = String::new();
    while let Some(event) = other_session.next().await {
        relayed.push_str(&event);
    }
    assert_eq!(relayed, replayed);

    let mut same_session = Events::new(proxy.send(resume("s-1", "e1")).await);
    same_session.next().await.unwrap();
    assert_eq!(
        same_session.next().await.unwrap(),
        format!("id: e3\ndata: {}\n\n", error_result(8, "not relayed"))
    );
}

#[tokio::test]
async fn a_stream_the_server_ends_after_an_event_id_is_ended_without_an_answer_for_the_client_to_resume()
 {
    // From 2025-11-25 a server may close a `POST`'s stream before its answer
    // once it has sent an event id, for the client to resume with `GET`: the
    // call still runs, and its answer comes on the resumed stream.
    let primed = "id: e1\nretry: 10\ndata: \n\n";
    let replayed = format!("id: e2\ndata: {}\n\n", error_result(7, "exit status 2"));
    let upstream = Upstream::start(move |received| match received.method.as_str() {
        "POST" => Reply::events(&[primed]),
        _ => Reply::events(&[&replayed]),
    })
    .await;
    let proxy = Proxy::start(&upstream.url(), &[]).await;

    let response = proxy
        .post(&tool_call(7, "build"), &[("mcp-session-id", "s-1")])
        .await;
    let mut events = Events::new(response);
    assert_eq!(events.next().await.unwrap(), primed);
    assert_eq!(events.next().await, None, "no answer of the proxy's own");

    let mut resumed = Events::new(proxy.send(resume("s-1", "e1")).await);
    let event = resumed.next().await.unwrap();
    assert_eq!(
        event_data(&event)["result"]["content"][0]["text"],
        render_error("build", "exit status 2")
    );
    let methods: Vec<String> = upstream
        .received()
        .iter()
        .map(|received| received.method.clone())
        .collect();
    assert_eq!(methods, ["POST", "GET"], "nothing cancelled at the server");
}

#[tokio::test]
async fn a_stream_that_ends_before_the_answer_without_an_event_id_or_after_one_reset_is_answered() {
    // Nothing to resume from: an id never sent, or reset by an empty `id`.
    for events_sent in [
        "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"x\"}}\n\n",
        "id: e1\ndata: \n\nid\ndata: \n\n",
    ] {
        let upstream = Upstream::start(move |_| Reply::events(&[events_sent])).await;
        let proxy = Proxy::start(&upstream.url(), &[]).await;
        let response = proxy
            .post(&tool_call(7, "build"), &[("mcp-session-id", "s-1")])
            .await;
        let mut events = Events::new(response);
        let mut last = None;
        while let Some(event) = events.next().await {
            last = Some(event);
        }
        let last = last.expect("events");
        assert_eq!(
            event_data(&last)["result"]["content"][0]["text"],
            render_error(
                "build",
                "The server closed the connection before answering."
            ),
            "{events_sent:?}"
        );
    }
}

/// Under `--invalid-params-as-tool-errors`, a `-32602` answer to a call of a
/// listed tool replayed on a resumed stream becomes a tool error, as it does
/// in the call's own stream: the layer over an answer at hand is the same,
/// wherever the answer comes.
#[tokio::test]
async fn invalid_params_replayed_on_a_resumed_stream_become_a_tool_error_as_in_the_calls_stream() {
    let invalid = r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"Invalid params","data":"query: required"}}"#;
    let (open, post_stream) = mpsc::unbounded_channel();
    open.send(Ok(b"id: e1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n".to_vec()))
        .unwrap();
    let post_stream = std::sync::Mutex::new(Some(post_stream));
    let upstream = Upstream::start(move |received| {
        match (received.method.as_str(), received.json()["method"].as_str()) {
            ("POST", Some("tools/list")) => Reply::json(
                r#"{"jsonrpc":"2.0","id":"list","result":{"tools":[{"name":"search","inputSchema":{"type":"object"}}]}}"#,
            ),
            ("POST", _) => Reply::Events(post_stream.lock().unwrap().take().expect("one call")),
            _ => Reply::events(&[&format!("id: e2\ndata: {invalid}\n\n")]),
        }
    })
    .await;
    let proxy = Proxy::start(&upstream.url(), &["--invalid-params-as-tool-errors"]).await;
    let session = [("mcp-session-id", "s-1")];
    let list = r#"{"jsonrpc":"2.0","id":"list","method":"tools/list"}"#;
    drop(crate::support::body(proxy.post(list, &session).await).await);

    let mut events = Events::new(proxy.post(&tool_call(7, "search"), &session).await);
    assert!(events.next().await.unwrap().starts_with("id: e1\n"));
    drop(events);
    let mut resumed = Events::new(proxy.send(resume("s-1", "e1")).await);

    let answer = event_data(&resumed.next().await.unwrap());
    assert_eq!(
        answer["result"]["content"][0]["text"],
        render_error("search", "Invalid params\nquery: required"),
        "{answer}"
    );
    assert_eq!(answer["result"]["isError"], true);
    drop(open);
}
