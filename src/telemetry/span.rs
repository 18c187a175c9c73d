//! Creating the request span and recording how the request ended.

use tracing::Span;
use tracing::field::{Empty, display};

use crate::exchange::{Outcome, Request, RequestView};
use crate::tasks::Delivered;

/// Opens the span of `request`. Without a subscriber that records it, the span
/// is disabled and `request` is not read at all.
pub(crate) fn request_span<Q: Request>(request: &Q) -> Span {
    let span = tracing::info_span!(
        target: "mcp_tool_errors",
        "mcp.server",
        "otel.name" = Empty,
        "otel.kind" = "server",
        "otel.status_code" = Empty,
        "mcp.method.name" = Empty,
        "mcp.protocol.version" = Empty,
        "jsonrpc.request.id" = Empty,
        "gen_ai.operation.name" = Empty,
        "gen_ai.tool.name" = Empty,
        "error.type" = Empty,
        "rpc.response.status_code" = Empty,
        "mcp_tool_errors.cause" = Empty,
    );
    if !span.is_disabled()
        && let Some(view) = request.view()
    {
        describe(&span, &view);
    }
    span
}

/// Records what `view` says of the request; the remote parent too, with the
/// feature `opentelemetry`.
fn describe(span: &Span, view: &RequestView<'_>) {
    let method = view.method();
    match view.tool() {
        Some(tool) => {
            span.record("otel.name", format_args!("{method} {tool}"));
            span.record("gen_ai.operation.name", "execute_tool");
            span.record("gen_ai.tool.name", tool);
        }
        None => {
            span.record("otel.name", method);
        }
    }
    span.record("mcp.method.name", method);
    if let Some(version) = view.protocol_version() {
        span.record("mcp.protocol.version", version);
    }
    if let Some(id) = view.id() {
        span.record("jsonrpc.request.id", display(id));
    }
    #[cfg(feature = "opentelemetry")]
    super::propagation::continue_trace(span, view);
}

/// Who answered the request, when the request failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cause {
    /// The inner service: the outcome says what went wrong.
    Service,
    /// The layer, after the handler panicked.
    Panic,
    /// The layer, after the handler ran out of time.
    Timeout,
}

/// Records how a request the inner service answered ended on `span`: as
/// `outcome` says, unless the answer delivered the result of a task
/// (`delivered`). That result fails the request when it is an `isError` result,
/// with the cause `panic` when it is the layer's answer to a panic of the task's
/// operation; the span then also names the task's tool, when the layer saw the
/// task created. `outcome` is read only when the span is recorded.
pub(crate) fn record_answer(
    span: &Span,
    delivered: Option<Delivered>,
    outcome: impl FnOnce() -> Outcome,
) {
    // First: without a subscriber that records the span, this is all it costs.
    if span.is_disabled() {
        return;
    }
    let Some(delivered) = delivered else {
        return record_outcome(span, Cause::Service, outcome);
    };
    if let Some(tool) = &delivered.tool {
        span.record("gen_ai.tool.name", tool.as_str());
    }
    let cause = if delivered.panicked {
        Cause::Panic
    } else {
        Cause::Service
    };
    if delivered.failed {
        record_outcome(span, cause, || Outcome::ToolError);
    } else {
        record_outcome(span, cause, outcome);
    }
}

/// Records how the request ended on `span`; `outcome` is read only when the span
/// is recorded.
pub(crate) fn record_outcome(span: &Span, cause: Cause, outcome: impl FnOnce() -> Outcome) {
    if span.is_disabled() {
        return;
    }
    let outcome = outcome();
    let cause = match (cause, outcome) {
        (Cause::Panic, _) => "panic",
        (Cause::Timeout, _) => "timeout",
        (Cause::Service, Outcome::Success) => return,
        (Cause::Service, Outcome::ToolError) => "tool_error",
        (Cause::Service, Outcome::ErrorResponse { .. }) => "protocol_error",
        (Cause::Service, Outcome::ServiceError) => "service_error",
    };
    match outcome {
        Outcome::ToolError => {
            span.record("error.type", "tool_error");
        }
        Outcome::ErrorResponse { code } => {
            span.record("error.type", display(code));
            span.record("rpc.response.status_code", display(code));
        }
        // A panicked notification has no answer to read a failure from.
        Outcome::Success | Outcome::ServiceError => {
            span.record("error.type", "_OTHER");
        }
    }
    span.record("mcp_tool_errors.cause", cause);
    span.record("otel.status_code", "ERROR");
}
