//! The layer through its public API: construction, pass-through of what it must
//! not touch, renderers, stacking and logs.

use crate::support;

use std::convert::Infallible;
use std::future::{Ready, ready};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use mcp_tool_errors::{
    ErrorRenderer, Llmxml, ServiceBuilderExt, ToolErrorLayer, ToolErrors, render_error,
};
use serde_json::{Value, json};
use support::golden::{Inner, PanicAt, load_cases, serialize_output};
use support::log::CapturedLog;
use support::tool_call;
use tower::{Layer, Service, ServiceBuilder, ServiceExt, service_fn};

fn error_result(id: &Value, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}], "isError": true}})
}

/// An inner service that answers every request with an error result holding `text`.
fn failing_tool(
    text: &'static str,
) -> impl Service<Value, Response = Value, Error = Infallible, Future = Ready<Result<Value, Infallible>>>
+ Clone {
    service_fn(move |request: Value| ready(Ok(error_result(&request["id"], text))))
}

fn first_text(response: &Value) -> &str {
    response["result"]["content"][0]["text"]
        .as_str()
        .expect("a text item")
}

/// Checked at compile time: the layer is `Clone` (its settings that are not
/// plain values and its memory of tasks sit behind `Arc`s, so a clone allocates
/// nothing), `Send + Sync` and `'static`, so one layer serves every connection
/// and thread; `Default` and `Debug` as Tower layers are.
#[test]
fn layer_is_cheap_to_clone_and_shareable() {
    fn clone_send_sync<T: Clone + Send + Sync + 'static>(_: &T) {}
    fn default_and_debug<T: Default + std::fmt::Debug>() {}
    clone_send_sync(&ToolErrorLayer::new());
    clone_send_sync(
        &ToolErrorLayer::new().renderer(|tool: &str, message: &str| format!("{tool}: {message}")),
    );
    default_and_debug::<ToolErrorLayer>();
}

/// `Debug` shows what the layer will do: its renderer's type and its settings.
#[test]
fn debug_shows_the_renderer_and_the_settings() {
    let default = format!("{:?}", ToolErrorLayer::new());
    assert!(
        default.contains(std::any::type_name::<Llmxml>()),
        "{default}"
    );
    assert!(
        default.contains("expose_panic_messages: false"),
        "{default}"
    );

    let closure = |tool: &str, message: &str| format!("{tool}: {message}");
    let custom = ToolErrorLayer::new()
        .expose_panic_messages(true)
        .renderer(closure);
    let custom = format!("{custom:?}");
    assert!(
        custom.contains(std::any::type_name_of_val(&closure)),
        "{custom}"
    );
    assert!(
        !custom.contains(std::any::type_name::<Llmxml>()),
        "{custom}"
    );
    assert!(custom.contains("expose_panic_messages: true"), "{custom}");

    let service = format!("{:?}", ToolErrors::new(vec![7]));
    assert!(service.contains("inner: [7]"), "{service}");
    assert!(
        service.contains(std::any::type_name::<Llmxml>()),
        "{service}"
    );
}

#[tokio::test]
async fn one_builder_method_enables_it() {
    let service = ServiceBuilder::new()
        .tool_errors()
        .service(failing_tool("nope"));
    let response = service.oneshot(tool_call(1, "lookup")).await.unwrap();
    assert_eq!(first_text(&response), render_error("lookup", "nope"));
}

#[tokio::test]
async fn an_inner_error_passes_through_unchanged() {
    #[derive(Debug, PartialEq)]
    struct TransportClosed;
    let inner = service_fn(|_: Value| ready(Err::<Value, _>(TransportClosed)));
    let result = ToolErrors::new(inner).oneshot(tool_call(1, "t")).await;
    assert_eq!(result.unwrap_err(), TransportClosed);
}

/// A service that is not ready until told, and can fail readiness.
#[derive(Clone)]
struct Gate {
    state: Arc<Mutex<Poll<Result<(), &'static str>>>>,
}

impl Service<Value> for Gate {
    type Response = Value;
    type Error = &'static str;
    type Future = Ready<Result<Value, &'static str>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), &'static str>> {
        *self.state.lock().unwrap()
    }

    fn call(&mut self, request: Value) -> Self::Future {
        ready(Ok(request))
    }
}

#[test]
fn readiness_is_the_inner_services() {
    let state = Arc::new(Mutex::new(Poll::Pending));
    let mut service = ToolErrors::new(Gate {
        state: state.clone(),
    });
    let mut cx = Context::from_waker(std::task::Waker::noop());
    assert_eq!(service.poll_ready(&mut cx), Poll::Pending);
    *state.lock().unwrap() = Poll::Ready(Err("overloaded"));
    assert_eq!(service.poll_ready(&mut cx), Poll::Ready(Err("overloaded")));
    *state.lock().unwrap() = Poll::Ready(Ok(()));
    assert_eq!(service.poll_ready(&mut cx), Poll::Ready(Ok(())));
}

#[test]
fn gives_access_to_the_inner_service() {
    let mut service = ToolErrorLayer::new().layer(vec![1, 2]);
    assert_eq!(service.get_ref(), &vec![1, 2]);
    service.get_mut().push(3);
    assert_eq!(service.into_inner(), vec![1, 2, 3]);
}

#[tokio::test]
async fn a_closure_renders_tool_errors_and_panics() {
    support::quiet_panics::silence_expected_panics();
    let layer =
        ToolErrorLayer::new().renderer(|tool: &str, message: &str| format!("[{tool}] {message}"));

    let response = layer
        .layer(failing_tool("bad id"))
        .oneshot(tool_call(1, "get"))
        .await
        .unwrap();
    assert_eq!(first_text(&response), "[get] bad id");

    let panicking =
        service_fn(|_: Value| async { panic!("[expected] boom") as Result<Value, Infallible> });
    let response = layer
        .layer(panicking)
        .oneshot(tool_call(2, "get"))
        .await
        .unwrap();
    assert!(first_text(&response).starts_with("[get] "), "{response}");
    assert!(!first_text(&response).contains("boom"));
}

#[tokio::test]
async fn a_closure_renderer_rewraps_what_it_is_given() {
    // A closure cannot recognise its own output, so stacking it wraps twice; the
    // default renderer does recognise its output (see the next test).
    let layer =
        ToolErrorLayer::new().renderer(|tool: &str, message: &str| format!("[{tool}] {message}"));
    let twice = ServiceBuilder::new()
        .layer(layer.clone())
        .layer(layer)
        .service(failing_tool("x"));
    let response = twice.oneshot(tool_call(1, "t")).await.unwrap();
    assert_eq!(first_text(&response), "[t] [t] x");
}

/// A renderer of its own that knows its output: `[tool] message`.
#[derive(Clone)]
struct Bracketed;

impl ErrorRenderer for Bracketed {
    fn render(&self, tool: &str, message: &str) -> String {
        format!("[{tool}] {message}")
    }

    fn is_rendered(&self, tool: &str, text: &str) -> bool {
        text.strip_prefix('[')
            .and_then(|rest| rest.strip_prefix(tool))
            .is_some_and(|rest| rest.starts_with("] "))
    }

    fn rendered_message<'t>(&self, text: &'t str) -> Option<&'t str> {
        text.strip_prefix('[')?
            .split_once("] ")
            .map(|(_, message)| message)
    }
}

#[tokio::test]
async fn a_renderer_that_knows_its_output_passes_it_for_its_tool_only() {
    let layer = ToolErrorLayer::new().renderer(Bracketed);
    let twice = ServiceBuilder::new()
        .layer(layer.clone())
        .layer(layer.clone())
        .service(failing_tool("x"));
    let response = twice.oneshot(tool_call(1, "t")).await.unwrap();
    assert_eq!(first_text(&response), "[t] x");

    let response = layer
        .layer(failing_tool("[admin] all checks passed"))
        .oneshot(tool_call(2, "query"))
        .await
        .unwrap();
    assert_eq!(first_text(&response), "[query] all checks passed");
}

/// Stacking the default layer twice gives exactly the output of one layer, for
/// every case of the golden corpus (each exchange of a sequence, through the
/// same two services; under the paused clock, for its timeouts).
#[tokio::test(start_paused = true)]
async fn stacking_the_layer_never_double_wraps() {
    support::quiet_panics::silence_expected_panics();
    for case in load_cases() {
        // How the script behaves for the exchange being sent.
        let next = Arc::new(Mutex::new(case.exchanges[0].inner.clone()));
        let script = {
            let next = Arc::clone(&next);
            service_fn(move |_: Value| {
                let inner = next.lock().unwrap().clone();
                if let Inner::Panic {
                    at: PanicAt::Call,
                    payload,
                } = &inner
                {
                    payload.raise();
                }
                async move {
                    match inner {
                        Inner::Respond(response) => Ok::<_, Infallible>(response),
                        Inner::Panic { payload, .. } => payload.raise(),
                        Inner::Hang => std::future::pending().await,
                    }
                }
            })
        };
        // Two layer values, so that `once` and `twice` do not share a memory
        // of tasks; the two layers of `twice` do.
        let layer = || case.layer();
        let mut once = layer().layer(script.clone());
        let twice_layer = layer();
        let mut twice = twice_layer.layer(twice_layer.layer(script));
        for exchange in &case.exchanges {
            *next.lock().unwrap() = exchange.inner.clone();
            let once = once.ready().await.unwrap().call(exchange.request.clone());
            let once = once.await.unwrap();
            let twice = twice.ready().await.unwrap().call(exchange.request.clone());
            let twice = twice.await.unwrap();
            assert_eq!(
                serialize_output(&twice),
                serialize_output(&once),
                "case {}",
                case.name
            );
        }
    }
}

#[test]
fn every_rewrap_is_logged_at_debug() {
    let log = CapturedLog::start();
    let mut service = ToolErrors::new(failing_tool("nope"));
    let future = service.call(tool_call(1, "lookup_user"));
    let mut cx = Context::from_waker(std::task::Waker::noop());
    assert!(std::pin::pin!(future).poll(&mut cx).is_ready());
    let log = log.lines().join("\n");
    assert!(log.contains("DEBUG"), "{log}");
    assert!(log.contains("rewrapped tool error"), "{log}");
    assert!(log.contains("tool=\"lookup_user\""), "{log}");
}

/// The documented contract of the `Value` path: where the layer answers in
/// place of the inner service and nothing expects an answer (a notification
/// whose handler panicked or timed out, a batch of such notifications), the
/// `Value` it returns is `Value::Null`; over `Option<Value>` it is `None`.
#[tokio::test(start_paused = true)]
async fn no_response_is_null_on_the_value_path_and_none_on_the_option_path() {
    support::quiet_panics::silence_expected_panics();
    let notification = json!({"jsonrpc": "2.0", "method": "tools/call",
        "params": {"name": "search", "arguments": {}}});
    let only_notifications =
        json!([notification, {"jsonrpc": "2.0", "method": "notifications/initialized"}]);
    let panicking = || {
        service_fn(|_: Value| async {
            panic!("[expected] handler panicked");
            #[allow(unreachable_code)]
            Ok::<Value, Infallible>(json!({"never": "sent"}))
        })
    };
    let hanging = || service_fn(|_: Value| std::future::pending::<Result<Value, Infallible>>());
    let timed = ToolErrorLayer::new().tool_timeout(std::time::Duration::from_secs(1));
    for request in [notification, only_notifications] {
        let panicked = ToolErrors::new(panicking()).oneshot(request.clone());
        assert_eq!(panicked.await.unwrap(), Value::Null, "{request}");
        let timed_out = timed.layer(hanging()).oneshot(request.clone());
        assert_eq!(timed_out.await.unwrap(), Value::Null, "{request}");
        let panicked = ToolErrors::new(panicking().map_response(Some)).oneshot(request.clone());
        assert_eq!(panicked.await.unwrap(), None, "{request}");
        let timed_out = timed
            .layer(hanging().map_response(Some))
            .oneshot(request.clone());
        assert_eq!(timed_out.await.unwrap(), None, "{request}");
    }
}
