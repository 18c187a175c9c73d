//! What the command tells an operator: its own log on stderr (`log`), with the
//! library's events in the same lines and `RUST_LOG` filtering both, and, when
//! an OTLP endpoint is configured (`otlp`), the library's request spans and
//! its duration metric, exported over HTTP (`http_client`), each request in
//! the client's trace (`propagation`).
//!
//! The log's layer sees events only: the span the library opens per request
//! is enabled (and paid for) only when it is exported.
//!
//! It uses nothing of the command but its options (`observability_options`):
//! every part writes its log here.

/// An event of the command's own log, at `$level` (`info`,
/// `warn`, `error`), with `tracing`'s fields and message.
macro_rules! event {
    ($level:ident, $($rest:tt)+) => {
        tracing::$level!(target: crate::telemetry::TARGET, $($rest)+)
    };
}

pub(crate) use event;

mod http_client;
mod log;
mod otlp;
mod propagation;

pub(crate) use log::describe;
pub(crate) use propagation::{header_trace_context, spans_exported};

use std::sync::atomic::{AtomicBool, Ordering};

use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::Tracer;
use tracing::Dispatch;
use tracing::level_filters::LevelFilter;
use tracing_subscriber::Layer;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

use crate::observability_options::{LogFormat, ObservabilityOptions};

/// The `tracing` target of the command's own events, apart from the
/// library's (`mcp_tool_errors`): `RUST_LOG=mcp_tool_errors_cli=warn`.
pub(crate) const TARGET: &str = "mcp_tool_errors_cli";

/// Whether the library's duration metric is recorded: set once, before the
/// first request, when a metrics exporter is installed.
static METRICS_RECORDED: AtomicBool = AtomicBool::new(false);

/// Whether the library's duration metric is recorded (a metrics exporter is
/// installed): then the layer reads every `tools/list` answer, since the
/// metric names each tool listed.
pub(crate) fn metrics_recorded() -> bool {
    METRICS_RECORDED.load(Ordering::Relaxed)
}

/// What is exported, until it is flushed at exit.
#[derive(Debug)]
pub(crate) struct Telemetry {
    export: otlp::Export,
    traced: bool,
}

impl Telemetry {
    /// Whether request spans are exported: then every request goes through
    /// the layer, which records its span.
    pub(crate) fn traced(&self) -> bool {
        self.traced
    }

    /// Exports the spans and metric points left (the last requests', the
    /// drain's), waiting a few seconds at most.
    pub(crate) fn flush(self) {
        self.export.shut_down();
    }
}

/// The process's subscriber: the log, and the spans' exporter when there is
/// one. An absent exporter is no layer at all: tracing-subscriber's
/// `Option<Layer>` enables every span when it is `None`, and the registry
/// would then open, enter and close the library's request span on every
/// request for no one.
fn subscriber(log_format: LogFormat, tracer: Option<Tracer>) -> Dispatch {
    let logged = tracing_subscriber::registry().with(log::layer(log_format));
    match tracer {
        Some(tracer) => Dispatch::new(
            logged.with(
                tracing_opentelemetry::layer()
                    .with_tracer(tracer)
                    // The library's attributes alone: the source lines of
                    // the library, the relay's worker threads, the busy and
                    // idle time of each poll tell an operator nothing, and
                    // cost every request time and allocations. No context
                    // is activated at each poll either: nothing in the
                    // command opens spans of its own under the request's.
                    .with_location(false)
                    .with_threads(false)
                    .with_target(false)
                    .with_tracked_inactivity(false)
                    .with_context_activation(false)
                    .with_filter(LevelFilter::INFO),
            ),
        ),
        None => Dispatch::new(logged),
    }
}

/// Installs the process's subscriber, and the exporters the environment asks
/// for.
pub(crate) fn install(options: &ObservabilityOptions) -> Telemetry {
    let (export, problems) = otlp::Export::from_env();
    let tracer = export.tracer();
    let traced = tracer.is_some();
    // Only the first installation counts (a test's runs, say).
    let _ = subscriber(options.log_format, tracer).try_init();
    for problem in problems {
        event!(error, "{problem}");
    }
    if traced {
        propagation::set_spans_exported();
        // The library continues a client's trace from `params._meta`.
        opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
    }
    if let Some(meters) = export.meter_provider() {
        // Before the first request, which makes the library's instrument.
        opentelemetry::global::set_meter_provider(meters);
        METRICS_RECORDED.store(true, Ordering::Relaxed);
    }
    Telemetry { export, traced }
}

/// A message of the command's own log (stderr, beside a child's), at the
/// level most of them have: something went wrong. `event!` gives a level and
/// fields.
pub(crate) fn log(message: &str) {
    event!(warn, "{message}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_an_exporter_no_span_is_enabled() {
        let dispatch = subscriber(LogFormat::Text, None);
        tracing::dispatcher::with_default(&dispatch, || {
            let span = tracing::info_span!(target: "mcp_tool_errors", "mcp.server");
            assert!(span.is_disabled(), "a span no layer records is not opened");
        });
    }

    #[test]
    fn with_an_exporter_the_request_span_is_enabled() {
        let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder().build();
        let tracer = opentelemetry::trace::TracerProvider::tracer(&provider, "test");
        let dispatch = subscriber(LogFormat::Text, Some(tracer));
        tracing::dispatcher::with_default(&dispatch, || {
            let span = tracing::info_span!(target: "mcp_tool_errors", "mcp.server");
            assert!(!span.is_disabled());
        });
    }
}
