//! Continuing the client's trace (feature `opentelemetry`): the W3C trace context
//! in `params._meta` becomes the parent of the request span.

use opentelemetry::propagation::Extractor;
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt;

use crate::model::RequestView;

/// The trace context keys `_meta` carries, unprefixed (MCP SEP-414).
const KEYS: [&str; 2] = ["traceparent", "tracestate"];

/// The `_meta` trace context of a request, as a propagator reads it.
struct MetaTraceContext<'v, 'a>(&'v RequestView<'a>);

impl Extractor for MetaTraceContext<'_, '_> {
    fn get(&self, key: &str) -> Option<&str> {
        match key {
            "traceparent" => self.0.traceparent(),
            "tracestate" => self.0.tracestate(),
            _ => None,
        }
    }

    fn keys(&self) -> Vec<&str> {
        KEYS.into_iter()
            .filter(|key| self.get(key).is_some())
            .collect()
    }
}

/// Makes the remote context in `view` the parent of `span`, when the request
/// carries one.
pub(super) fn continue_trace(span: &Span, view: &RequestView<'_>) {
    if view.traceparent().is_none() {
        return;
    }
    let parent = opentelemetry::global::get_text_map_propagator(|propagator| {
        propagator.extract(&MetaTraceContext(view))
    });
    // Fails only when no `tracing-opentelemetry` layer records the span: then
    // there is no trace to continue.
    let _ = span.set_parent(parent);
}
