//! Event streams as the grammar writes them: lines that end with `\r`, `\n` or
//! `\r\n`, and a byte-order mark before the first event; and one answer to
//! each request, whatever the proxy could read of the upstream's.
//!
//! Each test runs on both paths: a call of `direct` (no timeout applies: a
//! direct call) and of `timed` (under `--tool-timeout-for`: an exchange).

use std::time::Duration;

use http_body_util::BodyExt;
use hyper::Response;
use hyper::body::Incoming;
use mcp_tool_errors::render_error;
use serde_json::Value;
use tokio::sync::mpsc;

use crate::support::{Proxy, Reply, Upstream, bounded, error_result, tool_call};

/// The tools of both paths: `direct` goes through a direct call, `timed`
/// through an exchange.
const TOOLS: [&str; 2] = ["direct", "timed"];

/// The proxy in front of `upstream`, with a timeout for `timed` only.
async fn proxy(upstream: &Upstream) -> Proxy {
    Proxy::start(&upstream.url(), &["--tool-timeout-for", "timed=30s"]).await
}

/// The data of each whole event of `stream`, as a client reads the grammar:
/// a byte-order mark first is skipped, a line ends with `\r\n`, `\n` or `\r`,
/// and a blank line ends an event.
fn event_data(stream: &[u8]) -> Vec<Vec<u8>> {
    let mut rest = stream.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(stream);
    let (mut events, mut data): (Vec<Vec<u8>>, Option<Vec<u8>>) = (Vec::new(), None);
    while let Some(end) = rest.iter().position(|byte| matches!(byte, b'\r' | b'\n')) {
        let line = &rest[..end];
        if line.is_empty() {
            events.extend(data.take());
        } else if let Some(value) = line.strip_prefix(b"data:") {
            let value = value.strip_prefix(b" ").unwrap_or(value);
            match &mut data {
                Some(data) => {
                    data.push(b'\n');
                    data.extend_from_slice(value);
                }
                None => data = Some(value.to_vec()),
            }
        }
        let ending = if rest[end..].starts_with(b"\r\n") {
            2
        } else {
            1
        };
        rest = &rest[end + ending..];
    }
    events
}

/// The messages of the stream's events, read as a lenient client reads them
/// (bytes that are not UTF-8 replaced).
fn messages(stream: &[u8]) -> Vec<Value> {
    event_data(stream)
        .iter()
        .filter_map(|data| serde_json::from_str(&String::from_utf8_lossy(data)).ok())
        .collect()
}

/// The answers to request `id` among `messages` and the batches among them,
/// ids compared by value as a JavaScript client compares them (`1.0` is `1`).
fn answers(messages: &[Value], id: u64) -> Vec<&Value> {
    messages
        .iter()
        .flat_map(|message| match message {
            Value::Array(batch) => batch.iter().collect(),
            single => vec![single],
        })
        .filter(|message| {
            message.get("method").is_none() && message["id"].as_f64() == Some(id as f64)
        })
        .collect()
}

/// The messages of `stream`, after asserting that exactly one answers `id`
/// and that it is `tool`'s error `boom`, rewrapped.
fn assert_one_answer_rewrapped(stream: &[u8], id: u64, tool: &str) -> Vec<Value> {
    let messages = messages(stream);
    let answers = answers(&messages, id);
    assert_eq!(
        answers.len(),
        1,
        "{tool}: {}",
        String::from_utf8_lossy(stream)
    );
    assert_eq!(
        answers[0]["result"]["content"][0]["text"],
        render_error(tool, "boom"),
        "{tool}"
    );
    messages
}

/// The whole stream, as the client gets it.
async fn whole_stream(response: Response<Incoming>) -> Vec<u8> {
    bounded("the whole stream", response.into_body().collect())
        .await
        .expect("the stream")
        .to_bytes()
        .to_vec()
}

/// Reads the stream until it holds an answer to `id`, within `within`.
async fn first_answer(response: Response<Incoming>, id: u64, within: Duration) -> Value {
    let mut body = response.into_body();
    let mut stream = Vec::new();
    let reading = async {
        loop {
            if let Some(answer) = answers(&messages(&stream), id).first() {
                return (*answer).clone();
            }
            match body.frame().await {
                Some(Ok(frame)) => stream.extend_from_slice(&frame.into_data().unwrap_or_default()),
                other => panic!("the stream ended without an answer: {other:?}"),
            }
        }
    };
    tokio::time::timeout(within, reading)
        .await
        .unwrap_or_else(|_| panic!("no answer to {id} within {within:?}"))
}

/// An event stream that sends `bytes`, then ends.
fn events_of(bytes: &[u8]) -> Reply {
    let (sender, receiver) = mpsc::unbounded_channel();
    let _ = sender.send(Ok(bytes.to_vec()));
    Reply::Events(receiver)
}

/// A `notifications/progress` event's message.
const PROGRESS: &str = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}"#;

#[tokio::test]
async fn an_answer_event_whose_lines_end_with_cr_is_rewrapped() {
    let upstream = Upstream::start(|request| {
        let id = request.json()["id"].as_u64().unwrap_or_default();
        let answer = error_result(id, "boom");
        Reply::events(&[
            &format!("id: 1\rdata: {PROGRESS}\r\r"),
            &format!("id: 2\rdata: {answer}\r\r"),
        ])
    })
    .await;
    let proxy = proxy(&upstream).await;

    for (id, tool) in (1..).zip(TOOLS) {
        let stream = whole_stream(proxy.post(&tool_call(id, tool), &[]).await).await;

        let messages = assert_one_answer_rewrapped(&stream, id, tool);
        assert_eq!(messages[0]["method"], "notifications/progress", "{tool}");
    }
}

#[tokio::test]
async fn an_answer_event_ended_by_a_lone_cr_goes_out_before_the_streams_next_byte() {
    // The streams stay open: nothing comes after the answer's last `\r`.
    let (open, mut streams) = mpsc::unbounded_channel();
    let upstream = Upstream::start(move |request| {
        let id = request.json()["id"].as_u64().unwrap_or_default();
        let (sender, receiver) = mpsc::unbounded_channel();
        let _ = sender.send(Ok(
            format!("data: {}\r\r", error_result(id, "boom")).into_bytes()
        ));
        let _ = open.send(sender);
        Reply::Events(receiver)
    })
    .await;
    let proxy = proxy(&upstream).await;

    for (id, tool) in (1..).zip(TOOLS) {
        let response = proxy.post(&tool_call(id, tool), &[]).await;

        let answer = first_answer(response, id, Duration::from_secs(2)).await;
        assert_eq!(
            answer["result"]["content"][0]["text"],
            render_error(tool, "boom"),
            "{tool}"
        );
        assert!(streams.recv().await.is_some(), "the stream is still open");
    }
}

#[tokio::test]
async fn a_byte_order_mark_before_the_first_event_is_skipped_and_the_answer_rewrapped() {
    let upstream = Upstream::start(|request| {
        let id = request.json()["id"].as_u64().unwrap_or_default();
        Reply::events(&[&format!("\u{FEFF}data: {}\n\n", error_result(id, "boom"))])
    })
    .await;
    let proxy = proxy(&upstream).await;

    for (id, tool) in (1..).zip(TOOLS) {
        let stream = whole_stream(proxy.post(&tool_call(id, tool), &[]).await).await;

        assert_one_answer_rewrapped(&stream, id, tool);
    }
}

#[tokio::test]
async fn an_answer_the_proxy_cannot_read_is_the_only_answer_its_request_gets() {
    // Not UTF-8 (a Latin-1 `é`), and an id written as a float: a client that
    // replaces bad bytes and compares numbers by value reads both as answers.
    let upstream = Upstream::start(|request| {
        let id = request.json()["id"].as_u64().unwrap_or_default();
        let answer = match id % 2 {
            0 => [
                format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"caf"#)
                    .as_bytes(),
                b"\xE9\"}],\"isError\":true}}",
            ]
            .concat(),
            _ => error_result(id, "boom")
                .replace(&format!("\"id\":{id}"), &format!("\"id\":{id}.0"))
                .into_bytes(),
        };
        events_of(&[&b"data: "[..], &answer, b"\n\n"].concat())
    })
    .await;
    let proxy = proxy(&upstream).await;

    for (id, tool) in (1..).zip(["direct", "timed", "direct", "timed"]) {
        let stream = whole_stream(proxy.post(&tool_call(id, tool), &[]).await).await;

        let messages = messages(&stream);
        let answers = answers(&messages, id);
        assert_eq!(
            answers.len(),
            1,
            "{tool} {id}: {}",
            String::from_utf8_lossy(&stream)
        );
        let is_proxys = answers[0].to_string().contains("closed the connection");
        assert!(!is_proxys, "{tool} {id}: {}", answers[0]);
    }
    assert!(
        proxy.log().contains("an answer the proxy could not read"),
        "{}",
        proxy.log()
    );
}

#[tokio::test]
async fn a_batch_gets_the_proxys_answer_only_for_the_requests_nothing_answered() {
    // The call's answer is not UTF-8; the ping's never comes.
    let upstream = Upstream::start(|_| {
        events_of(
            b"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\
              \"text\":\"\xE9\"}]}}\n\n",
        )
    })
    .await;
    let proxy = proxy(&upstream).await;
    let batch = format!(
        r#"[{},{{"jsonrpc":"2.0","id":2,"method":"ping"}}]"#,
        tool_call(1, "timed")
    );

    let stream = whole_stream(proxy.post(&batch, &[]).await).await;

    let messages = messages(&stream);
    let shown = String::from_utf8_lossy(&stream);
    assert_eq!(answers(&messages, 1).len(), 1, "{shown}");
    let pings = answers(&messages, 2);
    assert_eq!(pings.len(), 1, "{shown}");
    assert_eq!(
        pings[0]["error"]["message"],
        "The server closed the connection before answering."
    );
}
