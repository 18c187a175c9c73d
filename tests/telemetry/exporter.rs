//! One OpenTelemetry pipeline for the whole binary, spans and metrics, and how
//! tests read what it exported. Tests run in parallel, so each one finds its
//! spans and data points by a name or an id no other test uses.

use std::sync::OnceLock;

use opentelemetry::trace::{SpanKind, Status, TracerProvider as _};
use opentelemetry::{Array, Value};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, HistogramDataPoint, MetricData};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, SdkMeterProvider};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use tracing_subscriber::layer::SubscriberExt;

/// A trace context as a client sends it in `params._meta`.
pub(crate) const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
pub(crate) const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
pub(crate) const PARENT_SPAN_ID: &str = "00f067aa0ba902b7";

/// The pipeline of this binary: spans and metrics, each into an in-memory
/// exporter.
struct Pipeline {
    spans: InMemorySpanExporter,
    _tracer_provider: SdkTracerProvider,
    metrics: InMemoryMetricExporter,
    meter_provider: SdkMeterProvider,
}

/// Installs the pipeline at the first call: the tracing subscriber, the global
/// meter provider (before any request, since the layer creates its instrument
/// at the first one) and the W3C trace context as the global propagator.
fn pipeline() -> &'static Pipeline {
    static PIPELINE: OnceLock<Pipeline> = OnceLock::new();
    PIPELINE.get_or_init(|| {
        let spans = InMemorySpanExporter::default();
        let tracer_provider = SdkTracerProvider::builder()
            .with_simple_exporter(spans.clone())
            .build();
        let layer =
            tracing_opentelemetry::layer().with_tracer(tracer_provider.tracer("telemetry-tests"));
        tracing::subscriber::set_global_default(tracing_subscriber::registry().with(layer))
            .expect("no other subscriber in this binary");
        let metrics = InMemoryMetricExporter::default();
        let meter_provider = SdkMeterProvider::builder()
            .with_periodic_exporter(metrics.clone())
            .build();
        opentelemetry::global::set_meter_provider(meter_provider.clone());
        opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
        Pipeline {
            spans,
            _tracer_provider: tracer_provider,
            metrics,
            meter_provider,
        }
    })
}

/// The exporter every span of this binary ends in; installs the pipeline.
pub(crate) fn exporter() -> &'static InMemorySpanExporter {
    &pipeline().spans
}

/// What the last export of `mcp.server.operation.duration` holds for one
/// request (after a flush): the metric's unit and the data points with the
/// attribute `key` = `value`.
pub(crate) fn duration_points(key: &str, value: &str) -> (String, Vec<HistogramDataPoint<f64>>) {
    let pipeline = pipeline();
    pipeline
        .meter_provider
        .force_flush()
        .expect("the metrics are flushed");
    let exports = pipeline
        .metrics
        .get_finished_metrics()
        .expect("the exporter is running");
    let metric = exports
        .iter()
        .rev()
        .flat_map(|resource| resource.scope_metrics())
        .filter(|scope| scope.scope().name() == "mcp-tool-errors")
        .flat_map(|scope| scope.metrics())
        .find(|metric| metric.name() == "mcp.server.operation.duration")
        .expect("the metric was exported");
    let AggregatedMetrics::F64(MetricData::Histogram(histogram)) = metric.data() else {
        panic!("an f64 histogram: {metric:#?}");
    };
    let points = histogram
        .data_points()
        .filter(|point| {
            point
                .attributes()
                .any(|attribute| attribute.key.as_str() == key && attribute.value.as_str() == value)
        })
        .cloned()
        .collect();
    (metric.unit().to_owned(), points)
}

/// The spans of the layer exported so far that `select` picks.
pub(crate) fn layer_spans(select: impl Fn(&SpanData) -> bool) -> Vec<SpanData> {
    exporter()
        .get_finished_spans()
        .expect("the exporter is running")
        .into_iter()
        .filter(|span| attribute(span, "mcp.method.name").is_some() || span.name == "mcp.server")
        .filter(|span| select(span))
        .collect()
}

/// The one span of the layer named `name`.
pub(crate) fn span_named(name: &str) -> SpanData {
    let mut spans = layer_spans(|span| span.name == name);
    assert_eq!(spans.len(), 1, "one span named {name:?}: {spans:#?}");
    spans.remove(0)
}

/// The one span of the layer for the request with id `id`.
pub(crate) fn span_with_id(id: &str) -> SpanData {
    let mut spans =
        layer_spans(|span| attribute(span, "jsonrpc.request.id").as_deref() == Some(id));
    assert_eq!(spans.len(), 1, "one span with id {id:?}: {spans:#?}");
    spans.remove(0)
}

/// The attribute `key` of `span`, as text.
pub(crate) fn attribute(span: &SpanData, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|attribute| attribute.key.as_str() == key)
        .map(|attribute| attribute.value.to_string())
}

/// Asserts what every span of the layer holds: kind server, the method, and the
/// attributes of `expected` (`None`: must be absent).
pub(crate) fn assert_span(span: &SpanData, expected: &[(&str, Option<&str>)]) {
    assert_eq!(span.span_kind, SpanKind::Server, "{span:#?}");
    for (key, value) in expected {
        assert_eq!(
            attribute(span, key).as_deref(),
            *value,
            "{key} of {span:#?}"
        );
    }
}

/// Asserts the span's status: an error, or unset.
pub(crate) fn assert_failed(span: &SpanData, failed: bool) {
    match failed {
        true => assert!(matches!(span.status, Status::Error { .. }), "{span:#?}"),
        false => assert_eq!(span.status, Status::Unset, "{span:#?}"),
    }
}

/// Asserts that no attribute of `span` holds any of `secrets`.
pub(crate) fn assert_no_attribute_holds(span: &SpanData, secrets: &[&str]) {
    for attribute in &span.attributes {
        let text = match &attribute.value {
            Value::Array(Array::String(items)) => format!("{items:?}"),
            other => other.to_string(),
        };
        for secret in secrets {
            assert!(
                !text.contains(secret),
                "attribute {} holds {secret:?}: {text}",
                attribute.key
            );
        }
    }
}

/// Asserts that an event logged inside `span` says `message`.
pub(crate) fn assert_logged(span: &SpanData, message: &str) {
    let logged = span.events.iter().any(|event| event.name.contains(message));
    assert!(logged, "{message:?} is logged inside the span: {span:#?}");
}

/// Asserts that `span` failed as a tool error (`error.type` `tool_error`), for
/// `cause`: `tool_error`, `panic` or `timeout`.
pub(crate) fn assert_tool_error(span: &SpanData, cause: &str) {
    assert_span(
        span,
        &[
            ("error.type", Some("tool_error")),
            ("mcp_tool_errors.cause", Some(cause)),
        ],
    );
    assert_failed(span, true);
}

/// Asserts that `span` failed as the layer's answer to a call that ran out of
/// time: `error.type` and the cause both say `timeout`.
pub(crate) fn assert_timed_out(span: &SpanData) {
    assert_span(
        span,
        &[
            ("error.type", Some("timeout")),
            ("mcp_tool_errors.cause", Some("timeout")),
        ],
    );
    assert_failed(span, true);
}

/// The JSON-RPC error codes that the conventions' server span does not count as
/// an error of the server: the client sent something wrong.
pub(crate) const CLIENT_ERROR_CODES: [&str; 5] = ["-32700", "-32600", "-32601", "-32602", "-32002"];

/// Asserts that `span` failed as a JSON-RPC error with `code`: `error.type` and
/// `rpc.response.status_code` say the code, and the status is `ERROR` unless the
/// client caused it.
pub(crate) fn assert_protocol_error(span: &SpanData, code: &str) {
    assert_span(
        span,
        &[
            ("error.type", Some(code)),
            ("rpc.response.status_code", Some(code)),
            ("mcp_tool_errors.cause", Some("protocol_error")),
        ],
    );
    assert_failed(span, !CLIENT_ERROR_CODES.contains(&code));
}
