//! The request span and the metric, as the layer records them; the user's
//! documentation is in `src/docs/telemetry.md`, part of the crate docs.

use std::cell::OnceCell;

use tracing::Span;

use crate::model::{Outcome, Request};
use crate::tasks::Delivered;

#[cfg(feature = "opentelemetry")]
mod instrument;
mod metric;
mod no_answer;
mod outcome;
#[cfg(feature = "opentelemetry")]
mod propagation;
mod span;
mod tool_names;

pub(crate) use metric::OperationDuration;
pub use no_answer::NoAnswer;
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
/// unless the inner service made the answer itself (`no_answer`, the reason it
/// marked it with), or the answer delivered the result of a task (`delivered`).
/// That result fails the request when it is an `isError` result, with the cause
/// `panic` when it is the layer's answer to a panic of the task's operation; the
/// span then also names the task's tool, when the layer saw the task created.
/// `outcome` is read only when something records it; `tool_names` are the
/// layer's, which the metric names tools from.
pub(crate) fn record_answer(
    span: &Span,
    duration: &mut OperationDuration,
    tool_names: &ToolNames,
    delivered: Option<Delivered>,
    no_answer: Option<NoAnswer>,
    outcome: impl FnOnce() -> Outcome,
) {
    // First: when nothing records the request, this is all it costs.
    if !is_recording(span, duration) {
        return;
    }
    if let Some(reason) = no_answer {
        return record_outcome(span, duration, tool_names, Cause::NoAnswer(reason), outcome);
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
        cause.answered_with_success(outcome),
        tool_names,
    );
}
