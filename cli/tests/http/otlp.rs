//! OTLP export in the HTTP mode, to a receiver in the test: the spans of a
//! success (the direct path's included, its span from the call's sending to
//! its answer on an event stream), a tool error, a 5xx and an
//! unreachable upstream (the proxy's own answers, each with its `error.type`),
//! with `network.transport` `tcp`; the client's trace continued from
//! `params._meta` and from the `traceparent` header; flushed at the drain's
//! end.

#[allow(dead_code)]
#[path = "../otlp_receiver.rs"]
mod otlp_receiver;

use hyper::StatusCode;
use opentelemetry_proto::tonic::trace::v1::{Span, status};
use otlp_receiver::{Receiver, string};

use std::time::Duration;

use tokio::sync::mpsc;

use crate::support::{
    Events, Proxy, Reply, Upstream, error_result, event_data, json, refused_port, tool_call,
};

/// How long the `slow` tool takes to answer.
const SLOW: Duration = Duration::from_millis(300);

const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_ID: &str = "00f067aa0ba902b7";
const HEADER_TRACE_ID: &str = "0af7651916cd43dd8448eb211c80319c";
const HEADER_PARENT_ID: &str = "b7ad6b7169203331";

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn spans_named<'a>(spans: &'a [Span], name: &str) -> Vec<&'a Span> {
    spans.iter().filter(|span| span.name == name).collect()
}

fn is_error(span: &Span) -> bool {
    span.status
        .as_ref()
        .is_some_and(|status| status.code == status::StatusCode::Error as i32)
}

/// An upstream whose tool `ok` succeeds, `fail` answers a tool error and
/// `down` a gateway's 502 page.
async fn upstream() -> Upstream {
    Upstream::start(|request| {
        let id = request.json()["id"].as_u64().unwrap_or_default();
        match request.json()["params"]["name"].as_str() {
            Some("fail") => Reply::json(&error_result(id, "disk full")),
            Some("slow") => {
                // An event stream that answers after `SLOW`, as rmcp's
                // server writes one: a priming event at once, then the
                // answer with its event id.
                let (events, stream) = mpsc::unbounded_channel();
                let _ = events.send(Ok(b"data: \nid: 0/0\nretry: 3000\n\n".to_vec()));
                tokio::spawn(async move {
                    tokio::time::sleep(SLOW).await;
                    let answer = format!(
                        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"late"}}]}}}}"#
                    );
                    let _ = events.send(Ok(format!("data: {answer}\nid: 1/0\n\n").into_bytes()));
                });
                Reply::Events(stream)
            }
            Some("down") => Reply::Whole(
                StatusCode::BAD_GATEWAY,
                vec![("content-type", "text/html".to_owned())],
                b"<html><body>502 Bad Gateway</body></html>".to_vec(),
            ),
            _ => Reply::json(&format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"fine"}}]}}}}"#
            )),
        }
    })
    .await
}

#[tokio::test]
async fn spans_of_a_success_a_tool_error_and_an_unreachable_upstream_continue_the_clients_trace() {
    let receiver = Receiver::start().await;
    let env = [("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())];
    let env: Vec<(&str, &str)> = env
        .iter()
        .map(|(key, value)| (*key, value.as_str()))
        .collect();
    let upstream = upstream().await;
    let mut proxy = Proxy::start_with_env(&upstream.url(), &[], &env).await;

    let in_meta = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"ok","_meta":{{"traceparent":"00-{TRACE_ID}-{PARENT_ID}-01"}}}}}}"#
    );
    let answer = json(proxy.post(&in_meta, &[]).await).await;
    assert_eq!(answer["result"]["content"][0]["text"], "fine");
    let header = format!("00-{HEADER_TRACE_ID}-{HEADER_PARENT_ID}-01");
    json(
        proxy
            .post(&tool_call(2, "ok"), &[("traceparent", &header)])
            .await,
    )
    .await;
    let answer = json(proxy.post(&tool_call(3, "fail"), &[]).await).await;
    assert_eq!(answer["result"]["isError"], true);
    let mut slow = Events::new(proxy.post(&tool_call(6, "slow"), &[]).await);
    let _priming = slow.next().await.expect("the priming event");
    let answer = event_data(&slow.next().await.expect("the answer"));
    assert_eq!(answer["result"]["content"][0]["text"], "late");
    let answer = json(proxy.post(&tool_call(5, "down"), &[]).await).await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert_eq!(answer.as_object().unwrap().len(), 3, "no mark: {answer}");
    proxy.terminate();
    assert_eq!(proxy.exited().await.code(), Some(0));

    let unreachable = format!("http://{}/mcp", refused_port().await);
    let mut proxy = Proxy::start_with_env(&unreachable, &[], &env).await;
    let answer = json(proxy.post(&tool_call(4, "ok"), &[]).await).await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    proxy.terminate();
    assert_eq!(proxy.exited().await.code(), Some(0));

    let spans = receiver.spans();
    let ok = spans_named(&spans, "tools/call ok");
    assert_eq!(ok.len(), 3, "{spans:?}");
    let id = |span: &Span| string(&span.attributes, "jsonrpc.request.id");
    let by_id = |wanted: &str| {
        *ok.iter()
            .find(|span| id(span).as_deref() == Some(wanted))
            .unwrap_or_else(|| panic!("no span of request {wanted}: {spans:?}"))
    };
    let in_meta = by_id("1");
    assert_eq!(hex(&in_meta.trace_id), TRACE_ID);
    assert_eq!(hex(&in_meta.parent_span_id), PARENT_ID);
    assert!(!is_error(in_meta));
    let from_header = by_id("2");
    assert_eq!(hex(&from_header.trace_id), HEADER_TRACE_ID);
    assert_eq!(hex(&from_header.parent_span_id), HEADER_PARENT_ID);
    let unreachable = by_id("4");
    assert!(is_error(unreachable), "{unreachable:?}");
    assert_eq!(
        string(&unreachable.attributes, "error.type").as_deref(),
        Some("upstream_unreachable")
    );
    let down = spans_named(&spans, "tools/call down");
    assert_eq!(down.len(), 1, "{spans:?}");
    assert!(is_error(down[0]));
    assert_eq!(
        string(&down[0].attributes, "error.type").as_deref(),
        Some("upstream_5xx")
    );
    // A direct call's span starts as it is sent, not when its answer is read.
    let slow = spans_named(&spans, "tools/call slow");
    assert_eq!(slow.len(), 1, "{spans:?}");
    let lasted = slow[0].end_time_unix_nano - slow[0].start_time_unix_nano;
    assert!(
        u128::from(lasted) >= SLOW.as_nanos(),
        "{lasted} ns: {:?}",
        slow[0]
    );
    assert!(!is_error(slow[0]));
    let fail = spans_named(&spans, "tools/call fail");
    assert_eq!(fail.len(), 1, "{spans:?}");
    assert_eq!(
        string(&fail[0].attributes, "error.type").as_deref(),
        Some("tool_error")
    );
    for span in &spans {
        assert_eq!(
            string(&span.attributes, "network.transport").as_deref(),
            Some("tcp")
        );
        // The library's attributes alone: nothing of where or on which
        // thread the span was made, nor of its polls.
        let others: Vec<&str> = span
            .attributes
            .iter()
            .map(|attribute| attribute.key.as_str())
            .filter(|key| {
                key.starts_with("code.")
                    || key.starts_with("thread.")
                    || ["target", "busy_ns", "idle_ns"].contains(key)
            })
            .collect();
        assert!(others.is_empty(), "{others:?} in {span:?}");
    }
    let points: u64 = receiver
        .histogram_counts("mcp.server.operation.duration", "error.type")
        .iter()
        .map(|(_, count)| count)
        .sum();
    assert_eq!(points, 6);
}

/// The `tools/list` answer that lists `broken`.
const LISTED: &str = r#"{"jsonrpc":"2.0","id":$ID,"result":{"tools":[{"name":"broken","inputSchema":{"type":"object"}}]}}"#;

/// The tool error every call of `broken` gets.
const BROKEN: &str = r#"{"jsonrpc":"2.0","id":$ID,"result":{"content":[{"type":"text","text":"bad credentials"}],"isError":true}}"#;

/// The metric alone is exported to `receiver`: no span makes every answer go
/// through the layer.
fn metric_alone(receiver: &Receiver) -> Vec<(&'static str, String)> {
    vec![
        ("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint()),
        ("OTEL_TRACES_EXPORTER", "none".to_owned()),
    ]
}

#[tokio::test]
async fn a_listed_tool_that_only_failed_is_named_in_the_metric_of_the_proxy() {
    let receiver = Receiver::start().await;
    let upstream = Upstream::start(|request| {
        let id = request.json()["id"].as_u64().unwrap_or_default();
        let answer = match request.json()["method"].as_str() {
            Some("tools/list") => LISTED,
            _ => BROKEN,
        };
        Reply::json(&answer.replace("$ID", &id.to_string()))
    })
    .await;
    let env = metric_alone(&receiver);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut proxy = Proxy::start_with_env(&upstream.url(), &[], &env).await;
    let listed = json(
        proxy
            .post(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#, &[])
            .await,
    )
    .await;
    assert_eq!(listed["result"]["tools"][0]["name"], "broken");
    for id in 2..=3 {
        let failed = json(proxy.post(&tool_call(id, "broken"), &[]).await).await;
        assert_eq!(failed["result"]["isError"], true, "{failed}");
    }
    proxy.terminate();
    assert_eq!(proxy.exited().await.code(), Some(0));
    receiver.assert_names_tool_that_failed_twice("broken");
}

#[tokio::test]
async fn a_listed_tool_that_only_failed_is_named_in_the_metric_of_the_bridge() {
    let receiver = Receiver::start().await;
    let mut server = crate::bridge::child(serde_json::json!({
        "tools/list": [crate::process_support::send(LISTED)],
        "tools/call broken": [crate::process_support::send(BROKEN)],
    }));
    server.env.extend(
        metric_alone(&receiver)
            .into_iter()
            .map(|(key, value)| (key.to_owned(), value)),
    );
    let mut bridge = crate::bridge::Bridge::start(&[], &server).await;
    let session = bridge.open().await;
    let listed = session
        .call(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)
        .await;
    assert_eq!(
        listed[0]["result"]["tools"][0]["name"], "broken",
        "{listed:?}"
    );
    for id in 2..=3 {
        let failed = session.call(&tool_call(id, "broken")).await;
        assert_eq!(failed[0]["result"]["isError"], true, "{failed:?}");
    }
    bridge.process.terminate();
    assert_eq!(bridge.process.exited().await.code(), Some(0));
    receiver.assert_names_tool_that_failed_twice("broken");
}
