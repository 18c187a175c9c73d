//! OTLP export in stdio mode, to a receiver in the test (`otlp_receiver`):
//! the library's spans and its metric for a success, a tool error, a timeout
//! and a crashed child; a client's trace continued; nothing exported, and no
//! exporter thread, without the variables; a closed port that costs the
//! calls nothing.

use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::trace::v1::{Span, status};
use serde_json::{Value, json};

use crate::otlp_receiver::{Receiver, string};
use crate::support::{Server, Session, send, tool_call};

const TRACE_ID: &str = "0af7651916cd43dd8448eb211c80319c";
const PARENT_ID: &str = "b7ad6b7169203331";

/// A child whose `ok` succeeds, whose `fail` answers a tool error, whose
/// `hang` never answers and whose `die` exits 3.
fn server(env: &[(&str, String)]) -> Server {
    let mut server = Server::scripted(json!({"on": {
        "tools/call ok": [send(r#"{"jsonrpc":"2.0","id":$ID,"result":{"content":[{"type":"text","text":"fine"}]}}"#)],
        "tools/call fail": [send(r#"{"jsonrpc":"2.0","id":$ID,"result":{"content":[{"type":"text","text":"boom"}],"isError":true}}"#)],
        "tools/call die": [{"exit": 3}],
    }}));
    server.env.extend(
        env.iter()
            .map(|(key, value)| (key.to_string(), value.clone())),
    );
    server
}

/// A `tools/call` of `tool` whose `_meta` carries the test's trace context.
fn traced_call(id: i64, tool: &str) -> Value {
    let mut call = tool_call(id, tool, json!({}));
    call["params"]["_meta"] = json!({"traceparent": format!("00-{TRACE_ID}-{PARENT_ID}-01")});
    call
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn span<'a>(spans: &'a [Span], name: &str) -> &'a Span {
    spans
        .iter()
        .find(|span| span.name == name)
        .unwrap_or_else(|| panic!("no span {name}: {spans:?}"))
}

fn attribute(span: &Span, key: &str) -> Option<String> {
    string(&span.attributes, key)
}

fn is_error(span: &Span) -> bool {
    span.status
        .as_ref()
        .is_some_and(|status| status.code == status::StatusCode::Error as i32)
}

/// The names of the threads of process `pid`.
fn threads(pid: u32) -> Vec<String> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .expect("the process's threads")
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .map(|name| name.trim_end().to_owned())
        .collect()
}

fn exporter_threads(pid: u32) -> Vec<String> {
    threads(pid)
        .into_iter()
        .filter(|name| name.starts_with("OpenTelemetry") || name.starts_with("OTel"))
        .collect()
}

#[tokio::test]
async fn spans_and_the_metric_of_a_success_a_tool_error_a_timeout_and_a_crash_are_exported() {
    let receiver = Receiver::start().await;
    let env = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint()),
        ("OTEL_EXPORTER_OTLP_HEADERS", "x-test=yes".to_owned()),
    ];
    let mut session = Session::wrapped(&["--tool-timeout-for", "hang=200ms"], &server(&env));

    let ok = session.exchange(&traced_call(1, "ok")).await;
    // What the test without the variables looks for is there with them.
    assert_eq!(
        exporter_threads(session.pid()).len(),
        2,
        "{:?}",
        threads(session.pid())
    );
    assert!(ok[0].contains("fine"), "{ok:?}");
    let fail = session.exchange(&tool_call(2, "fail", json!({}))).await;
    assert!(fail[0].contains("<error tool=\\\"fail\\\">"), "{fail:?}");
    let hang = session.exchange(&tool_call(3, "hang", json!({}))).await;
    assert!(hang[0].contains("did not finish"), "{hang:?}");
    session
        .send(&tool_call(4, "die", json!({})).to_string())
        .await;
    while session.line_or_eof().await.is_some() {}
    assert_eq!(session.wait().await.code(), Some(3));

    // Flushed at exit: nothing waits for the batch's delay.
    let spans = receiver.spans();
    let ok = span(&spans, "tools/call ok");
    assert_eq!(hex(&ok.trace_id), TRACE_ID, "the client's trace continued");
    assert_eq!(hex(&ok.parent_span_id), PARENT_ID);
    assert_eq!(attribute(ok, "error.type"), None);
    assert!(!is_error(ok));
    let fail = span(&spans, "tools/call fail");
    assert_ne!(hex(&fail.trace_id), TRACE_ID, "a trace of its own");
    assert_eq!(attribute(fail, "error.type").as_deref(), Some("tool_error"));
    assert!(is_error(fail));
    let hang = span(&spans, "tools/call hang");
    assert_eq!(
        attribute(hang, "mcp_tool_errors.cause").as_deref(),
        Some("timeout")
    );
    assert_eq!(attribute(hang, "error.type").as_deref(), Some("timeout"));
    assert!(is_error(hang));
    let die = span(&spans, "tools/call die");
    assert_eq!(
        attribute(die, "error.type").as_deref(),
        Some("server_exited"),
        "{die:?}"
    );
    assert_eq!(
        attribute(die, "mcp_tool_errors.cause").as_deref(),
        Some("server_exited")
    );
    assert!(is_error(die));
    for span in [ok, fail, hang, die] {
        assert_eq!(
            attribute(span, "network.transport").as_deref(),
            Some("pipe")
        );
        assert_eq!(
            attribute(span, "mcp.method.name").as_deref(),
            Some("tools/call")
        );
        assert!(attribute(span, "jsonrpc.request.id").is_some(), "{span:?}");
    }
    let counts = receiver.histogram_counts("mcp.server.operation.duration", "error.type");
    let total: u64 = counts.iter().map(|(_, count)| count).sum();
    assert_eq!(total, 4, "{counts:?}");
    assert!(counts.contains(&(None, 1)), "{counts:?}");
    assert!(
        counts.contains(&(Some("server_exited".to_owned()), 1)),
        "{counts:?}"
    );
    assert!(
        receiver
            .service_names()
            .iter()
            .all(|name| name == "mcp-tool-errors")
    );
    assert!(
        receiver
            .headers()
            .iter()
            .all(|header| header.as_deref() == Some("yes"))
    );
}

#[tokio::test]
async fn the_service_name_and_resource_come_from_the_environment() {
    let receiver = Receiver::start().await;
    let env = [
        (
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            format!("{}/v1/traces", receiver.endpoint()),
        ),
        ("OTEL_SERVICE_NAME", "weather-tools".to_owned()),
    ];
    let mut session = Session::wrapped(&[], &server(&env));
    session.exchange(&tool_call(1, "ok", json!({}))).await;
    session.close_stdin();
    session.wait().await;
    assert!(!receiver.spans().is_empty());
    assert!(
        receiver
            .service_names()
            .iter()
            .all(|name| name == "weather-tools"),
        "{:?}",
        receiver.service_names()
    );
    // Traces only: no metric was asked for.
    assert!(
        receiver
            .histogram_counts("mcp.server.operation.duration", "error.type")
            .is_empty()
    );
}

#[tokio::test]
async fn without_an_otlp_variable_nothing_is_exported_and_no_exporter_thread_runs() {
    let receiver = Receiver::start().await;
    // What the endpoint would be; the variables that would name it are not set.
    let env = [
        ("OTEL_SERVICE_NAME", "unused".to_owned()),
        (
            "OTEL_EXPORTER_OTLP_HEADERS",
            format!("x-test={}", receiver.endpoint()),
        ),
    ];
    let mut session = Session::wrapped(&[], &server(&env));
    session.exchange(&traced_call(1, "ok")).await;
    assert_eq!(exporter_threads(session.pid()), Vec::<String>::new());
    session.close_stdin();
    session.wait().await;
    // OTEL_SDK_DISABLED wins over an endpoint.
    let env = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint()),
        ("OTEL_SDK_DISABLED", "true".to_owned()),
    ];
    let mut session = Session::wrapped(&[], &server(&env));
    session.exchange(&traced_call(1, "ok")).await;
    assert_eq!(exporter_threads(session.pid()), Vec::<String>::new());
    session.close_stdin();
    session.wait().await;
    assert!(receiver.headers().is_empty(), "{:?}", receiver.headers());
}

#[tokio::test]
async fn a_protocol_not_built_in_is_said_once_and_nothing_is_exported() {
    let receiver = Receiver::start().await;
    let env = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint()),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc".to_owned()),
    ];
    let mut session = Session::wrapped(&[], &server(&env));
    session.exchange(&tool_call(1, "ok", json!({}))).await;
    session.close_stdin();
    session.wait().await;
    let stderr = session.stderr_to_end().await;
    assert!(
        stderr.contains("OTLP protocol `grpc` is not built in"),
        "{stderr}"
    );
    assert!(receiver.headers().is_empty());
}

/// Runs 200 calls of `ok` through the command with `env`: how long they took,
/// and its stderr.
async fn two_hundred_calls(env: &[(&str, String)]) -> (Duration, String) {
    let mut session = Session::wrapped(&[], &server(env));
    session.exchange(&tool_call(0, "ok", json!({}))).await;
    let started = Instant::now();
    for id in 1..=200 {
        let lines = session.exchange(&traced_call(id, "ok")).await;
        assert!(lines[0].contains("fine"), "{lines:?}");
    }
    let took = started.elapsed();
    session.close_stdin();
    assert_eq!(session.wait().await.code(), Some(0));
    (took, session.stderr_to_end().await)
}

#[tokio::test]
async fn a_collector_that_is_down_costs_the_calls_nothing_and_one_log_line() {
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    };
    let env = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", format!("http://{closed}")),
        // Several exports while the calls run, each one refused.
        ("OTEL_BSP_SCHEDULE_DELAY", "20".to_owned()),
        ("OTEL_METRIC_EXPORT_INTERVAL", "50".to_owned()),
    ];
    let (off, _) = two_hundred_calls(&[]).await;
    let (on, stderr) = two_hundred_calls(&env).await;
    assert!(
        on < off * 3 + Duration::from_millis(500),
        "200 calls: {on:?} with a collector down, {off:?} without export"
    );
    let failures: Vec<&str> = stderr
        .lines()
        .filter(|line| line.contains("cannot export telemetry"))
        .collect();
    // One a minute per signal at most.
    assert!(!failures.is_empty() && failures.len() <= 2, "{stderr}");
}

/// A child whose `tools/list` lists `broken` (in bytes no serializer would
/// write: an escape, a space, a key order), and whose `broken` always fails.
fn listing_server(env: &[(&str, String)]) -> Server {
    let mut server = Server::scripted(json!({"on": {
        "tools/list": [send(r#"{"jsonrpc":"2.0","id":$ID,"result":{"tools":[{"name":"broken","description":"caf\u00e9","inputSchema":{"type":"object"}}] }}"#)],
        "tools/call broken": [send(r#"{"jsonrpc":"2.0","id":$ID,"result":{"content":[{"type":"text","text":"bad credentials"}],"isError":true}}"#)],
    }}));
    server.env.extend(
        env.iter()
            .map(|(key, value)| (key.to_string(), value.clone())),
    );
    server
}

#[tokio::test]
async fn a_listed_tool_that_only_failed_is_named_in_the_metric_exported_alone() {
    let receiver = Receiver::start().await;
    // The metric alone: no span makes every answer go through the layer.
    let env = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint()),
        ("OTEL_TRACES_EXPORTER", "none".to_owned()),
    ];
    let mut session = Session::wrapped(&[], &listing_server(&env));
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let listed = session.exchange(&list).await;
    // The list is read, and passed on as the server's bytes.
    assert_eq!(
        listed,
        [
            r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"broken","description":"caf\u00e9","inputSchema":{"type":"object"}}] }}"#
        ]
    );
    for id in 2..=3 {
        let failed = session.exchange(&tool_call(id, "broken", json!({}))).await;
        assert!(
            failed[0].contains("<error tool=\\\"broken\\\">"),
            "{failed:?}"
        );
    }
    session.close_stdin();
    assert_eq!(session.wait().await.code(), Some(0));

    receiver.assert_names_tool_that_failed_twice("broken");
}
