//! JSON of any depth up to the 16 MiB bound: a request nested deeper than
//! serde_json's limit of 128 levels still goes through the layer (its
//! `--tool-timeout` holds), an answer that deep is still rewrapped, and a body
//! 100,000 levels deep neither crashes the proxy nor goes around the layer.
//! Every answer keeps the upstream's bytes but for the text the layer changes.
//!
//! Each test runs on both paths where both apply: a call of `direct` (a direct
//! call) and of `timed` (under `--tool-timeout-for`: an exchange).

use std::time::Duration;

use mcp_tool_errors::render_error;
use serde_json::Value;

use crate::support::{Proxy, Reply, Upstream, answering, body, bounded};

/// A value `levels` deep: arrays and objects in turn around `1`.
fn nested(levels: usize) -> String {
    let mut text = String::with_capacity(levels * 8);
    for level in 0..levels {
        text.push_str(if level % 2 == 0 { "[" } else { "{\"a\":" });
    }
    text.push('1');
    for level in (0..levels).rev() {
        text.push(if level % 2 == 0 { ']' } else { '}' });
    }
    text
}

/// A `tools/call` of `tool` with `id` whose arguments are `arguments`.
fn call_with(id: u64, tool: &str, arguments: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{{"deep":{arguments}}}}}}}"#
    )
}

/// The `isError` answer to `id` with `text`, and `structured` as its
/// `structuredContent`.
fn error_with(id: u64, text: &str, structured: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":{}}}],"structuredContent":{structured},"isError":true}}}}"#,
        Value::from(text)
    )
}

/// The id of a request as the upstream got it, read from its bytes (which
/// serde_json does not read past 128 levels).
fn id_of(body: &[u8]) -> u64 {
    let text = String::from_utf8_lossy(body);
    let after = text.split("\"id\":").nth(1).unwrap_or_default();
    after
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .and_then(|digits| digits.parse().ok())
        .unwrap_or_default()
}

/// The sentence of a call timed out at 300 ms.
const TIMED_OUT: &str = "The tool did not finish within 0.3 s and was cancelled.";

/// Posts a call of `tool` whose arguments are `levels` deep to a proxy with a
/// 300 ms timeout in front of a server that never answers it: the answer is
/// the timeout's, and the server is told the call is cancelled.
async fn deep_arguments_time_out(levels: usize) {
    let upstream = Upstream::start(answering(|| Reply::Hang)).await;
    let proxy = Proxy::start(&upstream.url(), &["--tool-timeout", "300ms"]).await;
    let request = call_with(5, "slow", &nested(levels));

    let response = proxy.post(&request, &[]).await;
    let answer = tokio::time::timeout(Duration::from_secs(5), body(response))
        .await
        .unwrap_or_else(|_| panic!("{levels} levels: no answer within 5 s"));

    let answer: Value = serde_json::from_slice(&answer).expect("JSON");
    assert_eq!(
        answer["result"]["content"][0]["text"],
        render_error("slow", TIMED_OUT),
        "{levels} levels"
    );
    let received = upstream.received();
    assert_eq!(
        received[0].body,
        request.as_bytes(),
        "sent as the client's bytes"
    );
    upstream
        .wait_for(|request| request.json()["method"] == "notifications/cancelled")
        .await;
}

#[tokio::test]
async fn arguments_129_levels_deep_are_still_timed_out() {
    deep_arguments_time_out(129).await;
}

/// A proxy in front of a server that answers each call of `direct` and
/// `timed` with `answer(id)`: in JSON for an odd id, in an event stream for an
/// even one.
async fn answered_with(answer: fn(u64) -> String) -> (Upstream, Proxy) {
    let upstream = Upstream::start(move |request| {
        let id = id_of(&request.body);
        match id % 2 {
            1 => Reply::json(&answer(id)),
            _ => Reply::events(&[&format!("data: {}\n\n", answer(id))]),
        }
    })
    .await;
    let proxy = Proxy::start(&upstream.url(), &["--tool-timeout-for", "timed=30s"]).await;
    (upstream, proxy)
}

/// Calls `direct` and `timed`, each answered in JSON and in an event stream
/// with `answer(id)`, an `isError` answer whose text is `boom`: each answer
/// reaches the client rewrapped, every other byte the server's.
async fn deep_answers_are_rewrapped(answer: fn(u64) -> String) {
    let (_upstream, proxy) = answered_with(answer).await;
    for (id, tool) in [(1, "direct"), (2, "direct"), (3, "timed"), (4, "timed")] {
        let request = call_with(id, tool, "{}");

        let got = body(proxy.post(&request, &[]).await).await;

        let rendered = Value::from(render_error(tool, "boom")).to_string();
        let expected = answer(id).replace("\"boom\"", &rendered);
        let expected = match id % 2 {
            1 => expected,
            _ => format!("data: {expected}\n\n"),
        };
        // Not shown: the bytes are hundreds of kilobytes.
        assert!(
            got == expected.as_bytes(),
            "{tool} {id}: not the answer rewrapped"
        );
    }
}

#[tokio::test]
async fn an_error_whose_structured_content_is_200_levels_deep_is_rewrapped() {
    deep_answers_are_rewrapped(|id| error_with(id, "boom", &nested(200))).await;
}

#[tokio::test]
async fn bodies_100_000_levels_deep_neither_crash_the_proxy_nor_go_around_the_layer() {
    deep_arguments_time_out(100_000).await;
    deep_answers_are_rewrapped(|id| error_with(id, "boom", &nested(100_000))).await;
}

#[tokio::test]
async fn a_request_whose_id_is_100_000_levels_deep_is_answered_with_that_id() {
    let upstream = Upstream::start(answering(|| Reply::Hang)).await;
    let proxy = Proxy::start(&upstream.url(), &["--tool-timeout", "300ms"]).await;
    let id = nested(100_000);
    let request = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"slow","arguments":{{}}}}}}"#
    );

    let answer = bounded("the answer", body(proxy.post(&request, &[]).await)).await;

    let text = String::from_utf8(answer.to_vec()).expect("UTF-8");
    assert!(
        text.contains(&format!("\"id\":{id}")),
        "not the request's id"
    );
    assert!(
        text.contains("did not finish within 0.3 s"),
        "not the timeout's answer"
    );
    // Still serving.
    deep_arguments_time_out(3).await;
}
