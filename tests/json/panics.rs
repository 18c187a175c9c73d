//! Every panic of the inner service is answered: in `call` or while its future is
//! polled, with any payload (one whose `Drop` panics too), in a notification
//! handler, and under load on a multi-threaded runtime. A panic in `poll_ready` is
//! the one the layer does not catch; `a_panic_in_poll_ready_reaches_the_caller`
//! shows where it goes.

use crate::support;

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::future::{Future, poll_fn};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Once;
use std::task::{Context, Poll};

use mcp_tool_errors::{ToolErrorLayer, ToolErrors, is_rendered, render_error};
use serde_json::{Value, json};
use support::complete::complete;
use support::{HANG_GUARD, HIDDEN_TOOL_MESSAGE, tool_call};
use tower::{Layer, Service, ServiceExt, service_fn};

/// Silences the deliberate panics of this file: those of `support::quiet_panics`,
/// and those raised here with a payload that is not a string (it cannot carry
/// the `[expected]` mark).
fn silence_deliberate_panics() {
    static ONCE: Once = Once::new();
    support::quiet_panics::silence_expected_panics();
    ONCE.call_once(|| {
        let quiet = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let payload = info.payload();
            let is_string = payload.is::<&str>() || payload.is::<String>();
            let raised_here = info
                .location()
                .is_some_and(|at| at.file().ends_with("panics.rs"));
            if is_string || !raised_here {
                quiet(info);
            }
        }));
    });
}

fn request(id: Value, method: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method})
}

/// Where the inner service panics.
#[derive(Debug, Clone, Copy)]
enum PanicIn {
    Call,
    /// In its future, after it has waited once.
    Future,
}

/// A layered service over an inner one that calls `raise` in `call` or in its future.
fn panicking(
    raise: fn(),
    at: PanicIn,
) -> ToolErrors<
    impl Service<Value, Response = Option<Value>, Error = Infallible, Future: Send> + Clone,
> {
    ToolErrors::new(service_fn(move |_request: Value| {
        if let PanicIn::Call = at {
            raise();
        }
        async move {
            if let PanicIn::Future = at {
                tokio::task::yield_now().await;
                raise();
            }
            Ok::<Option<Value>, Infallible>(None)
        }
    }))
}

async fn answer<S>(service: S, request: Value) -> Option<Value>
where
    S: Service<Value, Response = Option<Value>, Error = Infallible>,
{
    let response = tokio::time::timeout(HANG_GUARD, service.oneshot(request)).await;
    match response.expect("answered within the hang guard") {
        Ok(response) => response,
    }
}

/// Checks that `response` is the hidden `isError` answer of `tool` to `id`.
#[track_caller]
fn assert_hidden_tool_error(response: &Value, id: &Value, tool: &str) {
    assert_eq!(response["jsonrpc"], "2.0", "{response}");
    assert_eq!(&response["id"], id, "{response}");
    assert_eq!(response["result"]["isError"], true, "{response}");
    assert_eq!(
        response["result"]["content"],
        json!([{"type": "text", "text": render_error(tool, HIDDEN_TOOL_MESSAGE)}]),
        "{response}"
    );
}

/// Checks that `response` is the internal error answering `id`.
#[track_caller]
fn assert_internal_error(response: &Value, id: &Value) {
    assert_eq!(response["jsonrpc"], "2.0", "{response}");
    assert_eq!(&response["id"], id, "{response}");
    assert_eq!(response["error"]["code"], -32603, "{response}");
    assert!(response.get("result").is_none(), "{response}");
}

fn panic_with_str() {
    panic!("[expected] the handler failed");
}

#[tokio::test]
async fn a_panic_in_call_is_answered() {
    silence_deliberate_panics();
    let service = panicking(panic_with_str, PanicIn::Call);
    let response = answer(service.clone(), tool_call(7, "deploy"))
        .await
        .unwrap();
    assert_hidden_tool_error(&response, &json!(7), "deploy");
    let other = request(json!("req-8"), "resources/read");
    let response = answer(service, other).await.unwrap();
    assert_internal_error(&response, &json!("req-8"));
}

#[tokio::test]
async fn a_panic_while_the_future_is_polled_is_answered() {
    silence_deliberate_panics();
    let service = panicking(panic_with_str, PanicIn::Future);
    let response = answer(service.clone(), tool_call(9, "deploy"))
        .await
        .unwrap();
    assert_hidden_tool_error(&response, &json!(9), "deploy");
    let other = request(json!(10), "prompts/get");
    let response = answer(service, other).await.unwrap();
    assert_internal_error(&response, &json!(10));
}

/// A payload that is not a string.
#[derive(Debug)]
struct ErrorCode {
    _code: u32,
}

#[tokio::test]
async fn payloads_that_are_not_strings_are_answered() {
    silence_deliberate_panics();
    let raisers: [fn(); 3] = [
        || std::panic::panic_any(42_i32),
        || std::panic::panic_any(ErrorCode { _code: 500 }),
        || std::panic::panic_any(()),
    ];
    for (n, raise) in (0u64..).zip(raisers) {
        for service in [
            panicking(raise, PanicIn::Call),
            panicking(raise, PanicIn::Future),
        ] {
            let response = answer(service, tool_call(n, "lookup")).await.unwrap();
            assert_hidden_tool_error(&response, &json!(n), "lookup");
        }
        // Exposing messages cannot expose what is not a message.
        let exposing = ToolErrorLayer::new()
            .expose_panic_messages(true)
            .layer(service_fn(move |_request: Value| {
                raise();
                std::future::ready(Ok::<Option<Value>, Infallible>(None))
            }));
        let response = answer(exposing, tool_call(n, "lookup")).await.unwrap();
        let text = response["result"]["content"][0]["text"].as_str().unwrap();
        assert!(is_rendered(text), "{text}");
        assert!(!text.contains("500") && !text.contains("42"), "{text}");
    }
}

/// A panic payload whose `Drop` panics, then (when `again`) a payload whose
/// `Drop` panics as well.
struct PanicsWhenDropped {
    again: bool,
}

impl Drop for PanicsWhenDropped {
    fn drop(&mut self) {
        if self.again {
            std::panic::panic_any(PanicsWhenDropped { again: false });
        }
        panic!("[expected] a panic payload panicked while being dropped");
    }
}

#[tokio::test]
async fn a_payload_that_panics_when_dropped_does_not_take_the_process_down() {
    silence_deliberate_panics();
    let raisers: [fn(); 2] = [
        || std::panic::panic_any(PanicsWhenDropped { again: false }),
        || std::panic::panic_any(PanicsWhenDropped { again: true }),
    ];
    for (n, raise) in (0u64..).zip(raisers) {
        for service in [
            panicking(raise, PanicIn::Call),
            panicking(raise, PanicIn::Future),
        ] {
            let response = answer(service.clone(), tool_call(n, "deploy"))
                .await
                .unwrap();
            assert_hidden_tool_error(&response, &json!(n), "deploy");
            // The service, and the process, carry on.
            let response = answer(service, tool_call(n + 100, "deploy")).await.unwrap();
            assert_hidden_tool_error(&response, &json!(n + 100), "deploy");
        }
    }
}

/// An inner future that panics when polled and again when dropped.
struct PanicsWhenPolledAndDropped;

impl Future for PanicsWhenPolledAndDropped {
    type Output = Result<Option<Value>, Infallible>;

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Self::Output> {
        panic!("[expected] the future failed")
    }
}

impl Drop for PanicsWhenPolledAndDropped {
    fn drop(&mut self) {
        panic!("[expected] the failed future failed again while being dropped");
    }
}

#[test]
fn a_future_that_panics_again_when_dropped_is_answered() {
    silence_deliberate_panics();
    let mut service = ToolErrors::new(service_fn(|_request: Value| PanicsWhenPolledAndDropped));
    for id in 0..3u64 {
        let response = complete(service.call(tool_call(id, "deploy")))
            .unwrap()
            .unwrap();
        assert_hidden_tool_error(&response, &json!(id), "deploy");
    }
}

#[tokio::test]
async fn a_panic_in_a_notification_handler_is_survived() {
    silence_deliberate_panics();
    let notification = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    for service in [
        panicking(panic_with_str, PanicIn::Call),
        panicking(panic_with_str, PanicIn::Future),
    ] {
        assert_eq!(answer(service.clone(), notification.clone()).await, None);
        // A batch answers its requests and nothing else.
        let batch = json!([notification, tool_call(1, "deploy"), {"jsonrpc": "2.0", "method": "notifications/progress"}, request(json!(2), "ping")]);
        let answers = answer(service.clone(), batch).await.unwrap();
        let answers = answers.as_array().unwrap();
        assert_eq!(answers.len(), 2, "{answers:?}");
        assert_hidden_tool_error(&answers[0], &json!(1), "deploy");
        assert_internal_error(&answers[1], &json!(2));
        // A batch of notifications gets no answer at all.
        let quiet = json!([notification, notification]);
        assert_eq!(answer(service, quiet).await, None);
    }
    // The same through an inner service that answers a bare `Value`.
    let bare = ToolErrors::new(service_fn(|_request: Value| async move {
        panic_with_str();
        Ok::<Value, Infallible>(Value::Null)
    }));
    let response = tokio::time::timeout(HANG_GUARD, bare.oneshot(notification))
        .await
        .unwrap();
    assert_eq!(response.ok(), Some(Value::Null));
}

/// What the inner service of the concurrency test does for each tool.
fn behave(
    request: Value,
) -> Pin<Box<dyn Future<Output = Result<Option<Value>, Infallible>> + Send>> {
    let id = request["id"].clone();
    let tool = request["params"]["name"].as_str().map(str::to_owned);
    match tool.as_deref() {
        Some("panic_sync") => panic!("[expected] sync panic answering {id}"),
        Some("panic_async") => Box::pin(async move {
            tokio::task::yield_now().await;
            panic!("[expected] async panic answering {id}")
        }),
        Some("refuse") => Box::pin(async move {
            tokio::task::yield_now().await;
            let text = format!("refused {id}");
            Ok(Some(
                json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}], "isError": true}}),
            ))
        }),
        _ => Box::pin(async move {
            tokio::task::yield_now().await;
            let text = format!("done {id}");
            Ok(Some(
                json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}]}}),
            ))
        }),
    }
}

const TOOLS: [&str; 4] = ["panic_sync", "panic_async", "refuse", "echo"];

/// Checks that `response` is what `tool` answers to `id`.
#[track_caller]
fn assert_answer_of(tool: &str, id: u64, response: &Value) {
    let id_value = json!(id);
    match tool {
        "panic_sync" | "panic_async" => assert_hidden_tool_error(response, &id_value, tool),
        "refuse" => {
            assert_eq!(response["id"], id_value, "{response}");
            assert_eq!(
                response["result"]["content"][0]["text"],
                render_error(tool, &format!("refused {id}"))
            );
        }
        _ => {
            assert_eq!(response["id"], id_value, "{response}");
            assert_eq!(
                response["result"]["content"][0]["text"],
                format!("done {id}")
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_calls_each_get_their_own_answer() {
    silence_deliberate_panics();
    const CALLS: u64 = 10_000;
    let service = ToolErrors::new(service_fn(behave));
    let mut tasks = tokio::task::JoinSet::new();
    for id in 0..CALLS {
        let tool = TOOLS[(id % 4) as usize];
        let service = service.clone();
        tasks.spawn(async move { (id, tool, answer(service, tool_call(id, tool)).await) });
    }
    let mut answered = BTreeMap::new();
    while let Some(joined) = tasks.join_next().await {
        let (id, tool, response) = joined.expect("no call task panicked");
        let response = response.expect("a request gets a response");
        assert_answer_of(tool, id, &response);
        assert!(answered.insert(id, tool).is_none(), "{id} answered twice");
    }
    assert_eq!(answered.len() as u64, CALLS);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_panicking_batch_answers_each_of_its_requests_once() {
    silence_deliberate_panics();
    let ids: Vec<u64> = (0..500).collect();
    let batch: Vec<Value> = ids
        .iter()
        .map(|&id| tool_call(id, TOOLS[(id % 2) as usize]))
        .collect();
    let mut tasks = tokio::task::JoinSet::new();
    for at in [PanicIn::Call, PanicIn::Future] {
        let batch = Value::Array(batch.clone());
        let service = panicking(panic_with_str, at);
        tasks.spawn(answer(service, batch));
    }
    while let Some(joined) = tasks.join_next().await {
        let answers = joined
            .unwrap()
            .expect("a batch of requests gets a response");
        let answers = answers.as_array().unwrap();
        assert_eq!(answers.len(), ids.len());
        for (answer, &id) in answers.iter().zip(&ids) {
            assert_hidden_tool_error(answer, &json!(id), TOOLS[(id % 2) as usize]);
        }
    }
}

/// An inner service that panics when asked whether it is ready.
#[derive(Clone)]
struct PanicsWhenPolledForReadiness;

impl Service<Value> for PanicsWhenPolledForReadiness {
    type Response = Option<Value>;
    type Error = Infallible;
    type Future = std::future::Ready<Result<Option<Value>, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        panic!("[expected] the service broke while getting ready")
    }

    fn call(&mut self, _request: Value) -> Self::Future {
        unreachable!("never ready, never called")
    }
}

/// Documented: a panic in `poll_ready` is not caught. There is no request yet to
/// answer, so the panic reaches whoever polls for readiness, as if the layer
/// were not there.
#[tokio::test]
async fn a_panic_in_poll_ready_reaches_the_caller() {
    silence_deliberate_panics();
    let mut service = ToolErrors::new(PanicsWhenPolledForReadiness);
    let polled = catch_unwind(AssertUnwindSafe(|| {
        complete(poll_fn(|cx| service.poll_ready(cx)))
    }));
    let payload = polled.expect_err("the panic propagates out of poll_ready");
    assert_eq!(
        payload.downcast_ref::<&str>(),
        Some(&"[expected] the service broke while getting ready")
    );

    // In a server, that is the task driving the service: it ends with the panic
    // and the request is never answered.
    let serving =
        tokio::spawn(ToolErrors::new(PanicsWhenPolledForReadiness).oneshot(tool_call(1, "deploy")));
    let ended = tokio::time::timeout(HANG_GUARD, serving)
        .await
        .expect("the task ends");
    let error = ended.expect_err("the task panicked");
    assert!(error.is_panic(), "{error}");
}

/// An inner future that answers, then panics when dropped.
struct AnswersThenPanicsWhenDropped;

impl Future for AnswersThenPanicsWhenDropped {
    type Output = Result<Option<Value>, Infallible>;

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Self::Output> {
        let text = "no such change";
        Poll::Ready(Ok(Some(json!({"jsonrpc": "2.0", "id": 1, "result": {
            "content": [{"type": "text", "text": text}], "isError": true}}))))
    }
}

impl Drop for AnswersThenPanicsWhenDropped {
    fn drop(&mut self) {
        panic!("[expected] the future panicked while being dropped after it answered");
    }
}

/// The layer drops the inner future as soon as it has answered, inside `poll`;
/// a panic in that `Drop` should not cost the answer.
#[test]
fn a_future_that_panics_when_dropped_after_answering_still_answers() {
    silence_deliberate_panics();
    let mut service = ToolErrors::new(service_fn(|_request: Value| AnswersThenPanicsWhenDropped));
    let polled = catch_unwind(AssertUnwindSafe(|| {
        complete(service.call(tool_call(1, "get_change")))
    }));
    let response = polled.expect("the answer, not the panic").unwrap().unwrap();
    assert_eq!(
        response["result"]["content"][0]["text"],
        render_error("get_change", "no such change")
    );
}
