//! Creating the request span and recording how the request ended.

use std::cell::OnceCell;
use std::fmt;

use tracing::Span;
use tracing::field::{Empty, display};

use crate::model::{Request, RequestView};

use super::outcome::Failure;

/// Opens the span of `request`, with every field the request itself holds
/// recorded as the span is created (so a subscriber's "new span" line shows
/// them). Without a subscriber that records it, the span is disabled and
/// `request` is not read for it; `view` is the request's view, read at most once
/// and shared with the metric.
#[inline]
pub(super) fn request_span<'r>(
    view: &OnceCell<Option<RequestView<'r>>>,
    request: &'r impl Request,
    network_transport: Option<&'static str>,
) -> Span {
    // The field values below are evaluated only when the span is enabled.
    let view = || view.get_or_init(|| request.view()).as_ref();
    let span = tracing::info_span!(
        target: "mcp_tool_errors",
        "mcp.server",
        "otel.name" = view().map(|view| display(SpanName(view))),
        "otel.kind" = "server",
        "otel.status_code" = Empty,
        "mcp.method.name" = view().map(RequestView::method),
        "mcp.protocol.version" = view().and_then(RequestView::protocol_version),
        "jsonrpc.request.id" = view().and_then(RequestView::id).map(display),
        "gen_ai.operation.name" = view().and_then(RequestView::tool).map(|_| "execute_tool"),
        "gen_ai.tool.name" = view().and_then(RequestView::tool),
        "network.transport" = network_transport,
        "error.type" = Empty,
        "rpc.response.status_code" = Empty,
        "mcp_tool_errors.cause" = Empty,
    );
    #[cfg(feature = "opentelemetry")]
    if !span.is_disabled()
        && let Some(view) = view()
    {
        super::propagation::continue_trace(&span, view);
    }
    span
}

/// The span's name by the conventions: `{mcp.method.name} {gen_ai.tool.name}`
/// for a `tools/call`, `{mcp.method.name}` otherwise.
struct SpanName<'v, 'a>(&'v RequestView<'a>);

impl fmt::Display for SpanName<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.tool() {
            Some(tool) => write!(f, "{} {tool}", self.0.method()),
            None => f.write_str(self.0.method()),
        }
    }
}

/// Records on `span` the tool of a task whose result a `tasks/get` delivered.
pub(super) fn record_task_tool(span: &Span, tool: &str) {
    span.record("gen_ai.tool.name", tool);
}

/// Records how the request ended on `span`: nothing for a success.
pub(super) fn record_failure(span: &Span, failure: &Failure) {
    span.record("error.type", display(failure.error_type()));
    if let Some(code) = failure.status_code() {
        span.record("rpc.response.status_code", display(code));
    }
    span.record("mcp_tool_errors.cause", failure.cause);
    if failure.is_error_status() {
        span.record("otel.status_code", "ERROR");
    }
}
