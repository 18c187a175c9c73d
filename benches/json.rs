//! The layer over JSON-RPC messages, each case next to what it is compared with:
//!
//! - `pass_through`, `tools_call`: a realistic round trip (parse the request bytes,
//!   dispatch, serialize the response) through the bare server, the layered one,
//!   the layered one with a `tool_timeout` (`layered_timeout`), and two
//!   hand-written references: a minimal panic catcher (`catch_panic`), and the
//!   same reading the least a rewrap needs, the id, the tool and `isError`
//!   (`reads_for_rewrap`, a floor for the layer's cost);
//! - `rewrap`: `render_error` over messages from 64 B to 16 MiB, next to a
//!   `String::clone` of the same message;
//! - `caught_panic`: a panicking handler answered by the layer, next to a bare
//!   `catch_unwind` of the same panic;
//! - `sanitize`: an error of 1 MiB rewrapped with `redact_secrets(true)` and one
//!   of 16 MiB with `max_error_bytes(4096)`, each next to the same rewrap with
//!   no option; `tools_call/layered_sanitizing` is the success path with every
//!   option on.
//! - `batch_reversed`: a batch of 8,000 `tools/call` that succeed, answered in
//!   the reverse order, parsed, dispatched and serialized through the bare
//!   server and the layered one: the cost of matching each answer to its call.
//! - `tools_call_filtered`, `tools_call_traced`: the `tools_call` round trip under
//!   a subscriber that filters the request span out (level `WARN`), and under a
//!   `tracing-opentelemetry` pipeline that records and exports it (to an exporter
//!   that drops it, so the network is not timed).
//! - `tools_call_metered` (instruction counts only, `BENCH_REPEAT`, with the
//!   feature `opentelemetry`): the `tools_call` round trip with a meter provider
//!   installed, so that the layer records `mcp.server.operation.duration`.
//!
//! Futures are polled on this thread with a no-op waker, so no runtime is timed.
//! A tokio runtime is entered (never driven) for the whole run, since a timeout
//! starts tokio's timer.

mod support;

use std::convert::Infallible;
use std::future::{Future, Ready, poll_fn, ready};
use std::hint::black_box;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput};
use mcp_tool_errors::{ToolErrorLayer, ToolErrors, render_error};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter};
use pin_project_lite::pin_project;
use serde_json::{Value, json};
use support::complete::complete;
use support::failing_tool::FailingTool;
use support::{Estimates, Summary};
use tower::{Layer, Service};
use tracing::Dispatch;
use tracing_subscriber::layer::SubscriberExt;

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a runtime for the timer");
    let _in_runtime = runtime.enter();
    if let Some(spec) = std::env::var_os("BENCH_REPEAT") {
        support::repeat(&spec.to_string_lossy(), routine);
        return;
    }
    let estimates = Estimates::since_now();
    let mut criterion = support::criterion();
    round_trips(&mut criterion);
    batch_reversed(&mut criterion);
    rewrap(&mut criterion);
    caught_panic(&mut criterion);
    sanitize(&mut criterion);
    criterion.final_summary();
    summarize(&estimates);
}

/// The routine criterion measures as `name`, boxed, for the paired ratios and
/// for `BENCH_REPEAT` (instruction counts under callgrind).
fn routine(name: &str) -> Option<support::Routine<'static>> {
    let (group, bench) = name.split_once('/')?;
    let request = match group {
        "pass_through" => TOOLS_LIST,
        "tools_call" => TOOLS_CALL,
        "tools_call_filtered" | "tools_call_traced" => {
            let dispatch = subscriber(group)?;
            let (mut bare, mut layered) = (Server, ToolErrors::new(Server));
            return match bench {
                "bare" => Some(Box::new(move || {
                    tracing::dispatcher::with_default(&dispatch, || {
                        drop(black_box(round_trip(&mut bare, black_box(TOOLS_CALL))))
                    })
                })),
                "layered" => Some(Box::new(move || {
                    tracing::dispatcher::with_default(&dispatch, || {
                        drop(black_box(round_trip(&mut layered, black_box(TOOLS_CALL))))
                    })
                })),
                _ => None,
            };
        }
        "batch_reversed" => {
            let request = reversed_batch_request();
            let (mut bare, mut layered) = (Server, ToolErrors::new(Server));
            return match bench {
                "bare" => Some(Box::new(move || {
                    drop(black_box(round_trip(&mut bare, black_box(&request))))
                })),
                "layered" => Some(Box::new(move || {
                    drop(black_box(round_trip(&mut layered, black_box(&request))))
                })),
                _ => None,
            };
        }
        "tools_call_metered" => {
            install_meter_provider()?;
            let (mut bare, mut layered) = (Server, ToolErrors::new(Server));
            return match bench {
                "bare" => Some(Box::new(move || {
                    drop(black_box(round_trip(&mut bare, black_box(TOOLS_CALL))))
                })),
                "layered" => Some(Box::new(move || {
                    drop(black_box(round_trip(&mut layered, black_box(TOOLS_CALL))))
                })),
                _ => None,
            };
        }
        "rewrap" => {
            let (kind, size) = bench.split_once('/')?;
            let message = error_message(size.parse().ok()?);
            return match kind {
                "render_error" => Some(Box::new(move || {
                    drop(black_box(render_error(REWRAP_TOOL, black_box(&message))))
                })),
                "string_clone" => Some(Box::new(move || {
                    drop(black_box(black_box(&message).clone()))
                })),
                _ => None,
            };
        }
        "sanitize" => {
            let (kind, size) = bench.split_once('/')?;
            let mut service = sanitize_service(kind, size.parse().ok()?)?;
            return Some(Box::new(move || drop(black_box(rewrap_once(&mut service)))));
        }
        "caught_panic" => {
            std::panic::set_hook(Box::new(|_| {}));
            let request: Value = serde_json::from_slice(TOOLS_CALL).expect("the request is JSON");
            let (mut bare, mut layered) = (Panicking, ToolErrors::new(Panicking));
            return match bench {
                "catch_unwind" => Some(Box::new(move || {
                    drop(black_box(panic_bare(&mut bare, &request)))
                })),
                "layered" => Some(Box::new(move || {
                    drop(black_box(panic_layered(&mut layered, &request)))
                })),
                _ => None,
            };
        }
        _ => return None,
    };
    let (mut bare, mut layered, mut timed, mut reference) = (
        Server,
        ToolErrors::new(Server),
        with_timeout(Server),
        CatchPanic { inner: Server },
    );
    match bench {
        "bare" => Some(Box::new(move || {
            drop(black_box(round_trip(&mut bare, black_box(request))))
        })),
        "layered" => Some(Box::new(move || {
            drop(black_box(round_trip(&mut layered, black_box(request))))
        })),
        "layered_timeout" => Some(Box::new(move || {
            drop(black_box(round_trip(&mut timed, black_box(request))))
        })),
        "catch_panic" => Some(Box::new(move || {
            drop(black_box(round_trip(&mut reference, black_box(request))))
        })),
        "reads_for_rewrap" => {
            let mut floor = ReadsForRewrap {
                inner: CatchPanic { inner: Server },
            };
            Some(Box::new(move || {
                drop(black_box(round_trip(&mut floor, black_box(request))))
            }))
        }
        "layered_sanitizing" => {
            let mut sanitizing = sanitizing_layer().layer(Server);
            Some(Box::new(move || {
                drop(black_box(round_trip(&mut sanitizing, black_box(request))))
            }))
        }
        // Each option alone, for its cost on the success path.
        option => {
            let layer = ToolErrorLayer::new();
            let layer = match option {
                #[cfg(feature = "redact")]
                "layered_redact" => layer.redact_secrets(true),
                "layered_scrubber" => {
                    layer.redact_with(|text: &str| std::borrow::Cow::Borrowed(text))
                }
                "layered_cap" => layer.max_error_bytes(64 * 1024),
                "layered_expose" => layer.expose_panic_messages(true),
                "layered_max_tasks" => layer.max_remembered_tasks(16),
                _ => return None,
            };
            let mut service = layer.layer(Server);
            Some(Box::new(move || {
                drop(black_box(round_trip(&mut service, black_box(request))))
            }))
        }
    }
}

/// Every sanitizing option on: redaction (with the feature `redact`), a
/// scrubber with nothing to do, a cap.
fn sanitizing_layer() -> ToolErrorLayer {
    let layer = ToolErrorLayer::new();
    #[cfg(feature = "redact")]
    let layer = layer.redact_secrets(true);
    layer
        .redact_with(|text: &str| std::borrow::Cow::Borrowed(text))
        .max_error_bytes(64 * 1024)
}

/// A `tools/list`: the layer only reads the method.
const TOOLS_LIST: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#;
/// A `tools/call` that succeeds; the tool name is 24 bytes, the longest kept inline.
const TOOLS_CALL: &[u8] = br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_merge_requests_open","arguments":{"project":"core","state":"opened","limit":10}}}"#;

fn round_trips(c: &mut Criterion) {
    for (group_name, request) in [("pass_through", TOOLS_LIST), ("tools_call", TOOLS_CALL)] {
        let mut group = c.benchmark_group(group_name);
        let mut bare = Server;
        let mut layered = ToolErrors::new(Server);
        let mut timed = with_timeout(Server);
        let mut reference = CatchPanic { inner: Server };
        assert_eq!(
            round_trip(&mut bare, request),
            round_trip(&mut layered, request)
        );
        assert_eq!(
            round_trip(&mut bare, request),
            round_trip(&mut timed, request)
        );
        group.bench_function("bare", |b| {
            b.iter(|| round_trip(&mut bare, black_box(request)))
        });
        group.bench_function("layered", |b| {
            b.iter(|| round_trip(&mut layered, black_box(request)))
        });
        group.bench_function("layered_timeout", |b| {
            b.iter(|| round_trip(&mut timed, black_box(request)))
        });
        group.bench_function("catch_panic", |b| {
            b.iter(|| round_trip(&mut reference, black_box(request)))
        });
        let mut floor = ReadsForRewrap {
            inner: CatchPanic { inner: Server },
        };
        assert_eq!(
            round_trip(&mut bare, request),
            round_trip(&mut floor, request)
        );
        group.bench_function("reads_for_rewrap", |b| {
            b.iter(|| round_trip(&mut floor, black_box(request)))
        });
        if group_name == "tools_call" {
            let mut sanitizing = sanitizing_layer().layer(Server);
            assert_eq!(
                round_trip(&mut bare, request),
                round_trip(&mut sanitizing, request)
            );
            group.bench_function("layered_sanitizing", |b| {
                b.iter(|| round_trip(&mut sanitizing, black_box(request)))
            });
        }
        group.finish();
    }
    for group_name in ["tools_call_filtered", "tools_call_traced"] {
        let dispatch = subscriber(group_name).expect("a subscriber for the group");
        let mut group = c.benchmark_group(group_name);
        let mut bare = Server;
        let mut layered = ToolErrors::new(Server);
        group.bench_function("bare", |b| {
            b.iter(|| {
                tracing::dispatcher::with_default(&dispatch, || {
                    round_trip(&mut bare, black_box(TOOLS_CALL))
                })
            })
        });
        group.bench_function("layered", |b| {
            b.iter(|| {
                tracing::dispatcher::with_default(&dispatch, || {
                    round_trip(&mut layered, black_box(TOOLS_CALL))
                })
            })
        });
        group.finish();
    }
}

/// How many `tools/call` the `batch_reversed` batch holds.
const REVERSED_BATCH_CALLS: u64 = 8_000;

fn batch_reversed(c: &mut Criterion) {
    let request = reversed_batch_request();
    let mut group = c.benchmark_group("batch_reversed");
    let mut bare = Server;
    let mut layered = ToolErrors::new(Server);
    assert_eq!(
        round_trip(&mut bare, &request),
        round_trip(&mut layered, &request)
    );
    group.bench_function("bare", |b| {
        b.iter(|| round_trip(&mut bare, black_box(&request)))
    });
    group.bench_function("layered", |b| {
        b.iter(|| round_trip(&mut layered, black_box(&request)))
    });
    group.finish();
}

/// A batch of `REVERSED_BATCH_CALLS` `tools/call`, each with an id of its own.
fn reversed_batch_request() -> Vec<u8> {
    let call: Value = serde_json::from_slice(TOOLS_CALL).expect("the request is JSON");
    let batch: Vec<Value> = (0..REVERSED_BATCH_CALLS)
        .map(|id| {
            let mut call = call.clone();
            call["id"] = Value::from(id);
            call
        })
        .collect();
    serde_json::to_vec(&batch).expect("a Value always serializes")
}

/// The subscriber the `tools_call_*` group runs under.
fn subscriber(group: &str) -> Option<Dispatch> {
    match group {
        "tools_call_filtered" => Some(Dispatch::new(
            tracing_subscriber::fmt()
                .with_writer(std::io::sink)
                .with_max_level(tracing::Level::WARN)
                .finish(),
        )),
        "tools_call_traced" => {
            let provider = SdkTracerProvider::builder()
                .with_simple_exporter(Discard)
                .build();
            let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("bench"));
            Some(Dispatch::new(tracing_subscriber::registry().with(layer)))
        }
        _ => None,
    }
}

/// Installs a global meter provider whose periodic reader keeps the metrics in
/// memory, before the layer's first request creates its instrument.
#[cfg(feature = "opentelemetry")]
fn install_meter_provider() -> Option<()> {
    let provider = opentelemetry_sdk::metrics::SdkMeterProvider::builder()
        .with_periodic_exporter(opentelemetry_sdk::metrics::InMemoryMetricExporter::default())
        .build();
    opentelemetry::global::set_meter_provider(provider);
    Some(())
}

/// Without the feature `opentelemetry` the layer records no metric.
#[cfg(not(feature = "opentelemetry"))]
fn install_meter_provider() -> Option<()> {
    None
}

/// An exporter that drops every span: the pipeline is timed, not the network.
#[derive(Debug)]
struct Discard;

impl SpanExporter for Discard {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        drop(black_box(batch));
        Ok(())
    }
}

/// `inner` behind the layer with a timeout for every tool (and one of its own for
/// another tool, so that the per-tool lookup is paid too).
fn with_timeout<S>(inner: S) -> ToolErrors<S> {
    ToolErrorLayer::new()
        .tool_timeout(Duration::from_secs(30))
        .tool_timeout_for("get_merge_request", Duration::from_secs(300))
        .layer(inner)
}

/// What a JSON-RPC server does with one message: parse, handle, serialize.
fn round_trip<S>(service: &mut S, request: &[u8]) -> Vec<u8>
where
    S: Service<Value, Response = Value, Error = Infallible>,
{
    let request: Value = serde_json::from_slice(request).expect("the request is JSON");
    let Ok(()) = complete(poll_fn(|cx| service.poll_ready(cx)));
    let Ok(response) = complete(service.call(request));
    serde_json::to_vec(&response).expect("a Value always serializes")
}

/// A small MCP server over `Value`s: lists three tools and answers calls to
/// them; answers the requests of a batch in the reverse order, as a server that
/// answers each as soon as it is done may.
#[derive(Clone, Copy)]
struct Server;

impl Service<Value> for Server {
    type Response = Value;
    type Error = Infallible;
    type Future = Ready<Result<Value, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Value) -> Self::Future {
        if let Value::Array(batch) = request {
            let answers = batch
                .into_iter()
                .rev()
                .map(|request| match self.call(request).into_inner() {
                    Ok(answer) => answer,
                })
                .collect();
            return ready(Ok(Value::Array(answers)));
        }
        let result = match request["method"].as_str() {
            Some("tools/list") => list_tools(),
            Some("tools/call") => call_tool(&request["params"]),
            _ => json!({}),
        };
        ready(Ok(
            json!({"jsonrpc": "2.0", "id": request["id"], "result": result}),
        ))
    }
}

fn list_tools() -> Value {
    let tool = |name: &str, description: &str| {
        json!({
            "name": name,
            "description": description,
            "inputSchema": {
                "type": "object",
                "properties": {
                    "project": {"type": "string", "description": "The project path."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 100},
                },
                "required": ["project"],
            },
        })
    };
    json!({"tools": [
        tool("list_merge_requests_open", "Lists the open merge requests of a project."),
        tool("get_merge_request", "Reads one merge request with its discussion."),
        tool("search_changes", "Searches changes by owner, status or text."),
    ]})
}

fn call_tool(params: &Value) -> Value {
    let arguments = &params["arguments"];
    let text = format!(
        "{} {} merge requests in {}: !101 Fix the login redirect, !102 Bump serde",
        arguments["limit"], arguments["state"], arguments["project"],
    );
    json!({"content": [{"type": "text", "text": text}], "isError": false})
}

/// The smallest wrapper that catches panics in `call` and while polling, with no
/// request inspection and no rewrapping: a yardstick for the layer's own cost.
#[derive(Clone, Copy)]
struct CatchPanic<S> {
    inner: S,
}

impl<S> Service<Value> for CatchPanic<S>
where
    S: Service<Value, Response = Value, Error = Infallible>,
{
    type Response = Value;
    type Error = Infallible;
    type Future = CatchPanicFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Value) -> Self::Future {
        match catch_unwind(AssertUnwindSafe(|| self.inner.call(request))) {
            Ok(future) => CatchPanicFuture::Running { future },
            Err(_) => CatchPanicFuture::Panicked,
        }
    }
}

pin_project! {
    #[project = CatchPanicState]
    enum CatchPanicFuture<F> {
        Running { #[pin] future: F },
        Panicked,
    }
}

impl<F> Future for CatchPanicFuture<F>
where
    F: Future<Output = Result<Value, Infallible>>,
{
    type Output = Result<Value, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project() {
            CatchPanicState::Running { future } => {
                match catch_unwind(AssertUnwindSafe(|| future.poll(cx))) {
                    Ok(poll) => poll,
                    Err(_) => Poll::Ready(Ok(internal_error())),
                }
            }
            CatchPanicState::Panicked => Poll::Ready(Ok(internal_error())),
        }
    }
}

/// The least any layer that rewraps tool errors reads on the success path of a
/// `tools/call`, with nothing else: the id and the tool's name (copied, as the
/// request goes to the inner service) before the call, the answer's id and
/// `isError` after it, with serde_json's own lookups (a walk over each
/// object's keys per member costs more), over [`CatchPanic`]. A floor for the
/// layer's cost: no matching structure, no span, no task, no timer.
#[derive(Clone, Copy)]
struct ReadsForRewrap<S> {
    inner: CatchPanic<S>,
}

impl<S> Service<Value> for ReadsForRewrap<S>
where
    S: Service<Value, Response = Value, Error = Infallible>,
{
    type Response = Value;
    type Error = Infallible;
    type Future = ReadsForRewrapFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Value) -> Self::Future {
        let id = request.get("id").cloned().unwrap_or(Value::Null);
        let mut tool = [0; 24];
        let name = request
            .get("params")
            .and_then(|params| params.get("name"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .as_bytes();
        let length = name.len().min(tool.len());
        tool[..length].copy_from_slice(&name[..length]);
        ReadsForRewrapFuture {
            inner: self.inner.call(request),
            id,
            tool,
        }
    }
}

pin_project! {
    struct ReadsForRewrapFuture<F> {
        #[pin]
        inner: CatchPanicFuture<F>,
        id: Value,
        tool: [u8; 24],
    }
}

impl<F> Future for ReadsForRewrapFuture<F>
where
    F: Future<Output = Result<Value, Infallible>>,
{
    type Output = Result<Value, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let Ok(answer) = std::task::ready!(this.inner.poll(cx));
        let is_tool_error = answer.get("id") == Some(&*this.id)
            && answer
                .get("result")
                .and_then(|result| result.get("isError"))
                .and_then(Value::as_bool)
                == Some(true);
        // A rewrap would use the tool's name here.
        black_box((is_tool_error, &this.tool));
        Poll::Ready(Ok(answer))
    }
}

fn internal_error() -> Value {
    json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32603, "message": "Internal error"}})
}

const REWRAP_SIZES: [usize; 5] = [64, 1 << 10, 64 << 10, 1 << 20, 16 << 20];
const REWRAP_TOOL: &str = "list_merge_requests_open";

fn rewrap(c: &mut Criterion) {
    let mut group = c.benchmark_group("rewrap");
    for size in REWRAP_SIZES {
        let message = error_message(size);
        group.throughput(Throughput::Bytes(size as u64));
        group.bench_with_input(
            BenchmarkId::new("render_error", size),
            &message,
            |b, message| b.iter(|| render_error(black_box(REWRAP_TOOL), black_box(message))),
        );
        group.bench_with_input(
            BenchmarkId::new("string_clone", size),
            &message,
            |b, message| b.iter(|| black_box(message).clone()),
        );
    }
    group.finish();
}

/// `size` bytes of validation errors, one `<` (not an `<error` tag) per line,
/// as a schema validator writes them.
fn error_message(size: usize) -> String {
    const LINE: &str =
        "validating \"arguments\": /limit: must be <= 100, got 250 (at /arguments/limit)\n";
    let mut message = LINE.repeat(size / LINE.len() + 1);
    message.truncate(size);
    message
}

const REDACT_SIZE: usize = 1 << 20;
const CAP_SIZE: usize = 16 << 20;

fn sanitize(c: &mut Criterion) {
    let mut group = c.benchmark_group("sanitize");
    for (kind, size) in [
        ("plain", REDACT_SIZE),
        ("redact_secrets", REDACT_SIZE),
        ("plain", CAP_SIZE),
        ("max_error_bytes", CAP_SIZE),
    ] {
        // `redact_secrets` needs the feature `redact`: without it, its row is left out.
        let Some(mut service) = sanitize_service(kind, size) else {
            continue;
        };
        group.throughput(Throughput::Bytes(size as u64));
        group.bench_function(BenchmarkId::new(kind, size), |b| {
            b.iter(|| rewrap_once(&mut service))
        });
    }
    group.finish();
}

/// The layer over a tool failing with `size` bytes of upstream error text, with
/// the option `kind` on (`plain`: none); `None` for a kind unknown, or whose
/// feature is off.
fn sanitize_service(kind: &str, size: usize) -> Option<ToolErrors<FailingTool>> {
    let layer = match kind {
        "plain" => ToolErrorLayer::new(),
        #[cfg(feature = "redact")]
        "redact_secrets" => ToolErrorLayer::new().redact_secrets(true),
        "max_error_bytes" => ToolErrorLayer::new().max_error_bytes(4096),
        _ => return None,
    };
    Some(layer.layer(FailingTool {
        text: upstream_error_text(size),
    }))
}

/// One failed `tools/call` through `service`: the inner service copies its text
/// into the response, the layer rewraps it.
fn rewrap_once(service: &mut ToolErrors<FailingTool>) -> Value {
    let request = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                         "params": {"name": REWRAP_TOOL, "arguments": {}}});
    let Ok(response) = complete(service.call(request));
    response
}

/// `size` bytes of what an upstream error passed through looks like: URLs with
/// query strings, paths, SQL, JSON, ids and hashes, with no credential in it
/// (the common case the scan must be fast for).
fn upstream_error_text(size: usize) -> String {
    const LINES: &str = "GET https://api.example.com/v2/search?q=rust+tower&page=2&per_page=50 returned 429 Too Many Requests\n\
        open /var/lib/app/data/config.yaml: no such file or directory\n\
        pq: syntax error at or near \"WHERE\" in: SELECT id, token_count FROM sessions WHERE user_id = $1\n\
        invalid JSON at line 1 column 17: {\"name\": \"alpha\", \"key\": \"user.name\", \"tokens\": 42}\n\
        request 0f8fad5b-d9cb-469f-a165-70867728950e failed: commit 9fceb02d0ae598e95dc970b74767f19372d61af8 not found\n\
        validating \"arguments\": /limit: must be <= 100, got 250 (at /arguments/limit)\n";
    let mut text = LINES.repeat(size / LINES.len() + 1);
    text.truncate(size);
    text
}

fn caught_panic(c: &mut Criterion) {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let request: Value = serde_json::from_slice(TOOLS_CALL).expect("the request is JSON");
    let mut bare = Panicking;
    let mut layered = ToolErrors::new(Panicking);
    assert_eq!(
        panic_layered(&mut layered, &request)["result"]["isError"],
        true
    );

    let mut group = c.benchmark_group("caught_panic");
    group.bench_function("catch_unwind", |b| {
        b.iter(|| panic_bare(&mut bare, black_box(&request)))
    });
    group.bench_function("layered", |b| {
        b.iter(|| panic_layered(&mut layered, black_box(&request)))
    });
    group.finish();
    std::panic::set_hook(hook);
}

/// The panic caught bare; the request is cloned as the layered case clones it.
fn panic_bare(bare: &mut Panicking, request: &Value) -> Box<dyn std::any::Any + Send> {
    let request = request.clone();
    catch_unwind(AssertUnwindSafe(|| complete(bare.call(request)))).expect_err("the handler panics")
}

/// The panic caught and answered by the layer.
fn panic_layered(layered: &mut ToolErrors<Panicking>, request: &Value) -> Value {
    let Ok(answer) = complete(layered.call(request.clone()));
    answer
}

/// A server whose handler panics while its future is polled.
#[derive(Clone, Copy)]
struct Panicking;

impl Service<Value> for Panicking {
    type Response = Value;
    type Error = Infallible;
    type Future = PanicOnPoll;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _request: Value) -> Self::Future {
        PanicOnPoll
    }
}

struct PanicOnPoll;

impl Future for PanicOnPoll {
    type Output = Result<Value, Infallible>;

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Self::Output> {
        panic!("the merge request service is unreachable")
    }
}

fn summarize(estimates: &Estimates) {
    let mut summary = Summary::default();
    for group in ["pass_through", "tools_call"] {
        summary.row(
            &format!("{group}: layered / bare, criterion medians"),
            estimates.ratio(group, "layered", "bare"),
            support::ratio,
            "≤ 1.05",
        );
        summary.row(
            &format!("{group}: layered / bare, paired"),
            paired(estimates, group, "bare", "layered"),
            support::ratio,
            "≤ 1.05",
        );
        summary.row(
            &format!("{group}: layered_timeout / bare, criterion medians"),
            estimates.ratio(group, "layered_timeout", "bare"),
            support::ratio,
            "≤ 1.05",
        );
        summary.row(
            &format!("{group}: layered_timeout / bare, paired"),
            paired(estimates, group, "bare", "layered_timeout"),
            support::ratio,
            "≤ 1.05",
        );
        summary.row(
            &format!("{group}: catch_panic / bare (reference), criterion medians"),
            estimates.ratio(group, "catch_panic", "bare"),
            support::ratio,
            "",
        );
        summary.row(
            &format!("{group}: catch_panic / bare (reference), paired"),
            paired(estimates, group, "bare", "catch_panic"),
            support::ratio,
            "",
        );
    }
    for (group, target) in [
        ("tools_call_filtered", "≤ 1.05"),
        ("tools_call_traced", "report"),
        ("batch_reversed", "≤ 1.5"),
    ] {
        summary.row(
            &format!("{group}: layered / bare, criterion medians"),
            estimates.ratio(group, "layered", "bare"),
            support::ratio,
            target,
        );
        summary.row(
            &format!("{group}: layered / bare, paired"),
            paired(estimates, group, "bare", "layered"),
            support::ratio,
            target,
        );
        summary.row(
            &format!("{group}: layered"),
            estimates.median_ns(group, "layered"),
            support::micros,
            "",
        );
    }
    for size in REWRAP_SIZES {
        let render = estimates.median_ns("rewrap", &format!("render_error/{size}"));
        let clone = estimates.median_ns("rewrap", &format!("string_clone/{size}"));
        let target = if size == 1 << 20 { "≥ 1 GiB/s" } else { "" };
        summary.row(
            &format!("rewrap {size} B: render_error"),
            render.map(|ns| support::throughput_gib_s(size, ns)),
            support::gib_per_s,
            target,
        );
        summary.row(
            &format!("rewrap {size} B: String::clone"),
            clone.map(|ns| support::throughput_gib_s(size, ns)),
            support::gib_per_s,
            "",
        );
        summary.row(
            &format!("rewrap {size} B: render_error / String::clone"),
            render.zip(clone).map(|(render, clone)| render / clone),
            support::ratio,
            "",
        );
    }
    summary.row(
        "tools_call: layered_sanitizing / bare (every sanitizing option on), criterion medians",
        estimates.ratio("tools_call", "layered_sanitizing", "bare"),
        support::ratio,
        "≤ 1.05",
    );
    summary.row(
        "tools_call: layered_sanitizing / bare (every sanitizing option on), paired",
        paired(estimates, "tools_call", "bare", "layered_sanitizing"),
        support::ratio,
        "≤ 1.05",
    );
    let plain_1m = estimates.median_ns("sanitize", &format!("plain/{REDACT_SIZE}"));
    let redact_1m = estimates.median_ns("sanitize", &format!("redact_secrets/{REDACT_SIZE}"));
    summary.row(
        "sanitize 1 MiB error: rewrap with redact_secrets, whole call",
        redact_1m.map(|ns| support::throughput_gib_s(REDACT_SIZE, ns)),
        support::gib_per_s,
        "",
    );
    summary.row(
        "sanitize 1 MiB error: the redaction scan alone (minus the plain rewrap)",
        redact_1m
            .zip(plain_1m)
            .map(|(redact, plain)| support::throughput_gib_s(REDACT_SIZE, redact - plain)),
        support::gib_per_s,
        "≥ 0.195 GiB/s (200 MiB/s)",
    );
    summary.row(
        "sanitize 16 MiB error: rewrap plain",
        estimates.median_ns("sanitize", &format!("plain/{CAP_SIZE}")),
        support::micros,
        "",
    );
    summary.row(
        "sanitize 16 MiB error: rewrap with max_error_bytes(4096)",
        estimates.median_ns("sanitize", &format!("max_error_bytes/{CAP_SIZE}")),
        support::micros,
        "",
    );
    summary.row(
        "caught panic: bare catch_unwind",
        estimates.median_ns("caught_panic", "catch_unwind"),
        support::micros,
        "",
    );
    summary.row(
        "caught panic: layered (answer included)",
        estimates.median_ns("caught_panic", "layered"),
        support::micros,
        "",
    );
    summary.row(
        "caught panic: layered / catch_unwind, criterion medians",
        estimates.ratio("caught_panic", "layered", "catch_unwind"),
        support::ratio,
        "",
    );
    summary.row(
        "caught panic: layered / catch_unwind, paired",
        paired(estimates, "caught_panic", "catch_unwind", "layered"),
        support::ratio,
        "",
    );
    summary.print(
        "JSON path. Criterion medians are measured one after the other; paired ratios \
         alternate batches of both, so that both see the same load",
    );
}

/// `denominator` against `numerator` of `group`, measured in alternating batches
/// right now, when this run measured the group at all.
fn paired(estimates: &Estimates, group: &str, denominator: &str, numerator: &str) -> Option<f64> {
    estimates.median_ns(group, denominator)?;
    let mut a = routine(&format!("{group}/{denominator}"))?;
    let mut b = routine(&format!("{group}/{numerator}"))?;
    Some(support::paired_ratio(&mut a, &mut b))
}
