//! The request span: every request the layer handles runs inside a `tracing`
//! span that follows OpenTelemetry's semantic conventions for MCP servers, so
//! that a tool error, which is a successful JSON-RPC response, still counts as
//! a failure.
//!
//! The span is created at level `INFO` with target `mcp_tool_errors`. A
//! subscriber that does not enable it costs nothing: no field is read and nothing
//! is allocated. Export it with `tracing-opentelemetry`; the fields below are the
//! span's attributes, and the `otel.*` fields set its name, kind and status.
//!
//! Its `tracing` name is always `mcp.server` (a `tracing` span's name is fixed
//! where it is written); the name the conventions give it, `tools/call
//! get_weather`, is in the field `otel.name`, which `tracing-opentelemetry`
//! exports as the span's name. Every field the request holds (method, tool, id,
//! protocol version) and `network.transport` are recorded when the span is
//! created, so a subscriber's "new span" line (`FmtSpan::NEW`) shows them; the
//! fields of the outcome are recorded when the request ends.
//!
//! | field | value |
//! |---|---|
//! | `otel.name` | `{mcp.method.name} {gen_ai.tool.name}` for a `tools/call` (`tools/call get_weather`), `{mcp.method.name}` otherwise |
//! | `otel.kind` | `server` |
//! | `otel.status_code` | `ERROR` when the request failed (`error.type` is set), except for a JSON-RPC error the client caused: -32700, -32600, -32601, -32602, -32002; unset otherwise |
//! | `mcp.method.name` | the JSON-RPC method |
//! | `mcp.protocol.version` | when known: from the request's `_meta` (`io.modelcontextprotocol/protocolVersion`), an `initialize`'s `protocolVersion`, or, on rmcp, the session's handshake |
//! | `jsonrpc.request.id` | the request id as text (`7`, `req-7`); absent for a notification or a `null` id |
//! | `gen_ai.operation.name` | `execute_tool`, for a `tools/call` |
//! | `gen_ai.tool.name` | the tool, for a `tools/call` |
//! | `network.transport` | what [`ToolErrorLayer::network_transport`](crate::ToolErrorLayer::network_transport) says (`pipe` for stdio, `tcp` for HTTP); absent when not set |
//! | `error.type` | `tool_error` for an `isError` result; the JSON-RPC error code (`-32602`) for an error response; `_OTHER` for any other failure |
//! | `rpc.response.status_code` | the JSON-RPC error code, for an error response |
//! | `mcp_tool_errors.cause` | why the request failed, see below |
//!
//! The conventions (the MCP page of the OpenTelemetry GenAI semantic
//! conventions) set the status to `ERROR` whenever `error.type` is present; the
//! layer leaves it unset for the five codes above, which report a bad request
//! rather than a failing server, as the general rule for server spans does for
//! errors the caller caused. Alerts on the status then fire for what the server
//! can fix.
//!
//! `mcp_tool_errors.cause` tells apart what `error.type` cannot:
//!
//! - `tool_error`: the tool answered with an `isError: true` result;
//! - `panic`: the handler panicked and the layer answered in its place;
//! - `timeout`: the handler did not finish within its timeout
//!   (`ToolErrorLayer::tool_timeout`); the layer answered in its place and
//!   cancelled it;
//! - `protocol_error`: the inner server answered with a JSON-RPC error (an
//!   unknown tool, invalid parameters);
//! - `service_error`: the inner service failed with an error of its own that is
//!   not a JSON-RPC error response.
//!
//! No field holds the tool's arguments, its result, a panic payload or an error
//! message. The events the layer logs for a request (a caught panic, a timeout,
//! a rewrap) are recorded inside its span.
//!
//! A JSON-RPC batch gets one span, named after no method (`mcp.server`): its
//! status is the first failure among its responses. Behind rmcp's
//! `ServerHandlerExt`, only `tools/call` and `tasks/get` go through the layer and
//! get a span.
//!
//! # Task-augmented tool calls
//!
//! A `tools/call` answered with a task handle is a success: the tool has not
//! ended yet. Its result reaches the client later, in a `tasks/get` (or, in
//! protocol 2025-11-25 on the JSON path, a `tasks/result`), and that request's
//! span reports it: `error.type` `tool_error` and an error status when the
//! delivered result is an `isError` result, with `mcp_tool_errors.cause`
//! `tool_error`, or `panic` when the task's operation panicked and the layer
//! answered in its place (rmcp's `catch_task_panics`); `gen_ai.tool.name` names
//! the task's tool when the layer saw the task created. A `tasks/get` of a task
//! still working, or of one that failed or was cancelled without a result, is a
//! success: that request itself did not fail.
//!
//! # The metric `mcp.server.operation.duration`
//!
//! With the feature `opentelemetry`, each request is also timed, from its
//! arrival at the layer to its answer, in the histogram of the conventions:
//! `mcp.server.operation.duration`, `f64` seconds (unit `s`), the explicit
//! bucket boundaries `[0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120,
//! 300]`, instrumentation scope `mcp-tool-errors`, with the attributes
//! `mcp.method.name`, `gen_ai.tool.name`, `gen_ai.operation.name`,
//! `mcp.protocol.version`, `network.transport`, `error.type` and
//! `rpc.response.status_code`, valued as on the span, except
//! `gen_ai.tool.name`. A batch is not timed.
//!
//! `gen_ai.tool.name` has a bounded number of values, since a client sends
//! whatever tool names it likes and each value is a series of its own in a
//! metrics backend: it names only a tool the server answered a `tools/call` of
//! with a result (`isError` or not; the request that first does is named too),
//! at most 1,000 distinct names per layer value, and is `_OTHER` for any other:
//! a tool the server answered with a JSON-RPC error (an unknown tool), one whose
//! calls only panicked or timed out, and every new name past the 1,000th. The
//! names are the layer's, shared by its clones (as its memory of tasks is) and
//! kept for its lifetime; a layer made with [`ToolErrorLayer::new`](crate::ToolErrorLayer::new)
//! starts with none. The span keeps the name as sent.
//!
//! It is recorded through OpenTelemetry's global meter provider. The instrument
//! is created once, at the first request the layer handles, from the provider
//! installed then: install yours before serving. Without one (the no-op
//! provider) nothing is timed or copied per request.
//!
//! ```
//! use opentelemetry_sdk::metrics::{InMemoryMetricExporter, SdkMeterProvider};
//!
//! // Your exporter (OTLP, say); the in-memory one keeps the example self-contained.
//! let provider = SdkMeterProvider::builder()
//!     .with_periodic_exporter(InMemoryMetricExporter::default())
//!     .build();
//! opentelemetry::global::set_meter_provider(provider);
//! // ...then build the layer and serve.
//! ```
//!
//! # Continuing the client's trace
//!
//! With the feature `opentelemetry`, the span's parent is the remote context in
//! the request's `params._meta` (`traceparent`, `tracestate`), read with the
//! global text-map propagator: install one with
//! `opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new())`.
//! tower-mcp's typed `_meta` drops these keys before the layer sees the request,
//! so on that path the span has no remote parent.

use std::cell::OnceCell;

use tracing::Span;

use crate::model::{Outcome, Request};
use crate::tasks::Delivered;

mod metric;
mod outcome;
#[cfg(feature = "opentelemetry")]
mod propagation;
mod span;
mod tool_names;

pub(crate) use metric::OperationDuration;
pub(crate) use outcome::Cause;
use outcome::Failure;
pub(crate) use tool_names::ToolNames;

/// Opens the span of `request` and starts timing it for the metric;
/// `network_transport` is the layer's
/// [`network_transport`](crate::ToolErrorLayer::network_transport). The request
/// is read once, and only when one of the two records it.
#[inline]
pub(crate) fn start<Q: Request>(
    request: &Q,
    network_transport: Option<&'static str>,
) -> (Span, OperationDuration) {
    let view = OnceCell::new();
    let span = span::request_span(&view, request, network_transport);
    let duration = OperationDuration::start(
        || view.get_or_init(|| request.view()).as_ref(),
        network_transport,
    );
    (span, duration)
}

/// Whether something records the request's outcome: its span, or the metric.
pub(crate) fn is_recording(span: &Span, duration: &OperationDuration) -> bool {
    !span.is_disabled() || duration.is_recording()
}

/// Records how a request the inner service answered ended: as `outcome` says,
/// unless the answer delivered the result of a task (`delivered`). That result
/// fails the request when it is an `isError` result, with the cause `panic` when
/// it is the layer's answer to a panic of the task's operation; the span then
/// also names the task's tool, when the layer saw the task created. `outcome` is
/// read only when something records it; `tool_names` are the layer's, which the
/// metric names tools from.
pub(crate) fn record_answer(
    span: &Span,
    duration: &mut OperationDuration,
    tool_names: &ToolNames,
    delivered: Option<Delivered>,
    outcome: impl FnOnce() -> Outcome,
) {
    // First: when nothing records the request, this is all it costs.
    if !is_recording(span, duration) {
        return;
    }
    let Some(delivered) = delivered else {
        return record_outcome(span, duration, tool_names, Cause::Service, outcome);
    };
    if let Some(tool) = &delivered.tool {
        span::record_task_tool(span, tool.as_str());
        duration.set_task_tool(tool.as_str());
    }
    let cause = if delivered.panicked {
        Cause::Panic
    } else {
        Cause::Service
    };
    if delivered.failed {
        record_outcome(span, duration, tool_names, cause, || Outcome::ToolError);
    } else {
        record_outcome(span, duration, tool_names, cause, outcome);
    }
}

/// Records how the request ended; `outcome` is read only when something records
/// it.
pub(crate) fn record_outcome(
    span: &Span,
    duration: &mut OperationDuration,
    tool_names: &ToolNames,
    cause: Cause,
    outcome: impl FnOnce() -> Outcome,
) {
    if !is_recording(span, duration) {
        return;
    }
    let outcome = outcome();
    let failure = Failure::of(cause, outcome);
    if let Some(failure) = &failure
        && !span.is_disabled()
    {
        span::record_failure(span, failure);
    }
    duration.finish(
        failure.as_ref(),
        cause.answered_with_result(outcome),
        tool_names,
    );
}
