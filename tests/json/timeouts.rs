//! Timeouts through the JSON path, under tokio's paused clock: when a call is
//! answered, what is answered, what is dropped, what is never timed, and that
//! without a timeout the layer needs no runtime at all.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use crate::support::complete::block_on;
use crate::support::log::CapturedLog;
use crate::support::tool_call;
use mcp_tool_errors::{ToolErrorLayer, render_error};
use serde_json::{Value, json};
use tokio::time::Instant;
use tower::{Layer, ServiceExt, service_fn};

fn timed_out_text(tool: &str, seconds: &str) -> String {
    render_error(
        tool,
        &format!("The tool did not finish within {seconds} and was cancelled."),
    )
}

/// Sets its flag when dropped.
struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// An inner service whose every answer hangs forever; `dropped` says whether
/// the last future it made was dropped.
fn hanging() -> (
    impl tower::Service<Value, Response = Value, Error = Infallible, Future: Send> + Clone,
    Arc<AtomicBool>,
) {
    let dropped = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&dropped);
    let service = service_fn(move |_: Value| {
        let guard = DropFlag(Arc::clone(&flag));
        async move {
            let _guard = guard;
            std::future::pending::<Result<Value, Infallible>>().await
        }
    });
    (service, dropped)
}

/// An inner service that answers `tools/call` with a success after `after`.
fn answering_after(
    after: Duration,
) -> impl tower::Service<Value, Response = Value, Error = Infallible> + Clone {
    service_fn(move |request: Value| async move {
        tokio::time::sleep(after).await;
        Ok(json!({"jsonrpc": "2.0", "id": request["id"],
            "result": {"content": [{"type": "text", "text": "done"}], "isError": false}}))
    })
}

#[tokio::test(start_paused = true)]
async fn a_hung_call_is_answered_when_its_timeout_passes_and_its_future_is_dropped() {
    let (inner, dropped) = hanging();
    let service = ToolErrorLayer::new()
        .tool_timeout(Duration::from_millis(50))
        .layer(inner);
    let started = Instant::now();
    let response = service
        .oneshot(tool_call(json!(4), "search"))
        .await
        .unwrap();
    assert_eq!(started.elapsed(), Duration::from_millis(50));
    assert_eq!(
        response,
        json!({"jsonrpc": "2.0", "id": 4, "result": {
            "content": [{"type": "text", "text": timed_out_text("search", "0.05 s")}],
            "isError": true,
        }})
    );
    assert!(dropped.load(Ordering::SeqCst));
}

#[tokio::test(start_paused = true)]
async fn a_tool_timeout_of_its_own_overrides_the_default() {
    let layer = ToolErrorLayer::new()
        .tool_timeout(Duration::from_secs(30))
        .tool_timeout_for("deploy", Duration::from_secs(300))
        .tool_timeout_for("lint", Duration::from_millis(1500));
    for (tool, after, seconds) in [
        ("deploy", 300_000, "300 s"),
        ("lint", 1500, "1.5 s"),
        ("search", 30_000, "30 s"),
    ] {
        let started = Instant::now();
        let response = layer
            .clone()
            .layer(hanging().0)
            .oneshot(tool_call(json!(1), tool))
            .await
            .unwrap();
        assert_eq!(started.elapsed(), Duration::from_millis(after), "{tool}");
        assert_eq!(
            response["result"]["content"][0]["text"],
            timed_out_text(tool, seconds)
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_call_answered_in_time_is_untouched() {
    let service = ToolErrorLayer::new()
        .tool_timeout(Duration::from_secs(1))
        .layer(answering_after(Duration::from_millis(999)));
    let started = Instant::now();
    let response = service
        .oneshot(tool_call(json!(2), "search"))
        .await
        .unwrap();
    assert_eq!(started.elapsed(), Duration::from_millis(999));
    assert_eq!(response["result"]["content"][0]["text"], "done");
    assert_eq!(response["result"]["isError"], false);
}

/// A task-augmented call is answered with a task handle: the timeout bounds the
/// time to that handle, whatever the task does afterwards.
#[tokio::test(start_paused = true)]
async fn a_task_handle_in_time_is_untouched() {
    let handle = json!({"jsonrpc": "2.0", "id": 3, "result": {
        "task": {"taskId": "task-1", "status": "working", "ttl": 600000}}});
    let answer = handle.clone();
    let inner = service_fn(move |_: Value| {
        let answer = answer.clone();
        async move {
            tokio::time::sleep(Duration::from_millis(10)).await;
            Ok::<_, Infallible>(answer)
        }
    });
    let response = ToolErrorLayer::new()
        .tool_timeout(Duration::from_millis(20))
        .layer(inner)
        .oneshot(tool_call(json!(3), "build"))
        .await
        .unwrap();
    assert_eq!(response, handle);
}

#[tokio::test(start_paused = true)]
async fn requests_other_than_tools_call_are_never_timed() {
    let layer = ToolErrorLayer::new().tool_timeout(Duration::from_millis(10));
    let requests = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        json!([
            {"jsonrpc": "2.0", "id": 3, "method": "ping"},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
        ]),
    ];
    for request in requests {
        let service = layer.clone().layer(hanging().0);
        let answer =
            tokio::time::timeout(Duration::from_secs(3600), service.oneshot(request.clone())).await;
        assert!(answer.is_err(), "the layer answered {request}: {answer:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn the_shortest_timeout_of_a_batch_bounds_it() {
    let layer = ToolErrorLayer::new()
        .tool_timeout_for("slow", Duration::from_secs(60))
        .tool_timeout_for("quick", Duration::from_secs(5));
    let batch = json!([tool_call(json!(1), "slow"), tool_call(json!(2), "quick")]);
    let started = Instant::now();
    let response = layer.layer(hanging().0).oneshot(batch).await.unwrap();
    assert_eq!(started.elapsed(), Duration::from_secs(5));
    assert_eq!(
        response[0]["result"]["content"][0]["text"],
        timed_out_text("slow", "5 s")
    );
    assert_eq!(
        response[1]["result"]["content"][0]["text"],
        timed_out_text("quick", "5 s")
    );
}

#[tokio::test(start_paused = true)]
async fn a_timed_out_notification_gets_no_answer_and_is_dropped() {
    let (inner, dropped) = hanging();
    let request = json!({"jsonrpc": "2.0", "method": "tools/call",
        "params": {"name": "search", "arguments": {}}});
    let response = ToolErrorLayer::new()
        .tool_timeout(Duration::from_secs(1))
        .layer(inner.map_response(Some))
        .oneshot(request)
        .await
        .unwrap();
    assert_eq!(response, None);
    assert!(dropped.load(Ordering::SeqCst));
}

#[tokio::test(start_paused = true)]
async fn a_custom_renderer_renders_the_timeout_message() {
    let response = ToolErrorLayer::new()
        .renderer(|tool: &str, message: &str| format!("[{tool}] {message}"))
        .tool_timeout(Duration::from_millis(250))
        .layer(hanging().0)
        .oneshot(tool_call(json!(5), "search"))
        .await
        .unwrap();
    assert_eq!(
        response["result"]["content"][0]["text"],
        "[search] The tool did not finish within 0.25 s and was cancelled."
    );
}

#[tokio::test(start_paused = true)]
async fn every_timeout_is_logged_as_a_warning_with_tool_id_and_timeout() {
    let log = CapturedLog::start();
    ToolErrorLayer::new()
        .tool_timeout(Duration::from_millis(1500))
        .layer(hanging().0)
        .oneshot(tool_call(json!("req-9"), "lookup_user"))
        .await
        .unwrap();
    let log = log.lines().join("\n");
    assert!(log.contains("WARN"), "{log}");
    assert!(log.contains("timed out"), "{log}");
    assert!(log.contains("tool=\"lookup_user\""), "{log}");
    assert!(log.contains("id=\"req-9\""), "{log}");
    assert!(log.contains("timeout=\"1.5 s\""), "{log}");
}

/// A future that is pending once (waking itself) and then ready: it needs an
/// executor, but no runtime.
struct YieldOnce<T>(Option<T>, bool);

impl<T: Unpin> Future for YieldOnce<T> {
    type Output = T;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        if !self.1 {
            self.1 = true;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        Poll::Ready(self.0.take().expect("polled after completion"))
    }
}

#[test]
fn without_a_timeout_no_runtime_is_needed() {
    assert!(tokio::runtime::Handle::try_current().is_err());
    let inner = service_fn(|request: Value| {
        let response = json!({"jsonrpc": "2.0", "id": request["id"],
            "result": {"content": [{"type": "text", "text": "no such change"}], "isError": true}});
        YieldOnce(Some(Ok::<_, Infallible>(response)), false)
    });
    let response = block_on(
        ToolErrorLayer::new()
            .layer(inner)
            .oneshot(tool_call(json!(1), "get_change")),
    )
    .unwrap();
    assert_eq!(
        response["result"]["content"][0]["text"],
        render_error("get_change", "no such change")
    );
}
