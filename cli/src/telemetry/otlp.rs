//! OTLP export, configured the OpenTelemetry way: by the environment. A
//! signal is exported when `OTEL_EXPORTER_OTLP_ENDPOINT` or its own
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` / `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`
//! is set; with none set (or `OTEL_SDK_DISABLED=true`, or
//! `OTEL_TRACES_EXPORTER` / `OTEL_METRICS_EXPORTER` `none`) nothing is built
//! and no thread started.
//!
//! The SDK and the exporter read the rest themselves: the endpoints, headers
//! and timeout (`OTEL_EXPORTER_OTLP_*`), the sampler (`OTEL_TRACES_SAMPLER`,
//! `_ARG`), the batch (`OTEL_BSP_*`), the metric interval
//! (`OTEL_METRIC_EXPORT_INTERVAL`), the resource (`OTEL_SERVICE_NAME`,
//! `OTEL_RESOURCE_ATTRIBUTES`). The command adds the default service name,
//! `mcp-tool-errors`, and refuses a protocol other than `http/protobuf`.
//!
//! Spans go to the SDK's batch processor and metric points to its periodic
//! reader: each exports from a thread of its own, never the relay's, and a
//! request only queues its span (dropped when the queue is full).

use std::time::Duration;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{MetricExporter, SpanExporter, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::{SdkTracerProvider, Tracer};

use super::http_client::ExportClient;

/// The service name when neither `OTEL_SERVICE_NAME` nor
/// `OTEL_RESOURCE_ATTRIBUTES` says one.
const SERVICE_NAME: &str = "mcp-tool-errors";

/// The instrumentation scope of the spans (the library's metric has its own).
const SCOPE: &str = "mcp-tool-errors";

/// How long the exit waits for each signal's last export.
const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(5);

/// The one signal or the other.
#[derive(Debug, Clone, Copy)]
enum Signal {
    Traces,
    Metrics,
}

impl Signal {
    fn name(self) -> &'static str {
        match self {
            Self::Traces => "TRACES",
            Self::Metrics => "METRICS",
        }
    }

    fn var(self, what: &str) -> Option<String> {
        let signal = format!("OTEL_EXPORTER_OTLP_{}_{what}", self.name());
        set_var(&signal).or_else(|| set_var(&format!("OTEL_EXPORTER_OTLP_{what}")))
    }

    /// Whether the environment asks for this signal's export; `Err` says why
    /// it cannot be.
    fn wanted(self) -> Result<bool, String> {
        if set_var("OTEL_SDK_DISABLED").is_some_and(|value| value.eq_ignore_ascii_case("true")) {
            return Ok(false);
        }
        let exporter = format!("OTEL_{}_EXPORTER", self.name());
        if set_var(&exporter).is_some_and(|value| value.eq_ignore_ascii_case("none")) {
            return Ok(false);
        }
        if self.var("ENDPOINT").is_none() {
            return Ok(false);
        }
        match self.var("PROTOCOL") {
            None => Ok(true),
            Some(protocol) if protocol.eq_ignore_ascii_case("http/protobuf") => Ok(true),
            Some(protocol) => Err(format!(
                "OTLP protocol `{protocol}` is not built in (only http/protobuf, port 4318): no {} exported",
                self.name().to_ascii_lowercase()
            )),
        }
    }
}

/// A variable's value, when set and not empty.
fn set_var(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .filter(|value| !value.trim().is_empty())
}

/// The providers built from the environment.
#[derive(Debug, Default)]
pub(super) struct Export {
    traces: Option<SdkTracerProvider>,
    metrics: Option<SdkMeterProvider>,
}

impl Export {
    /// Builds what the environment asks for; the problems, to be logged once
    /// the log is installed.
    pub(super) fn from_env() -> (Self, Vec<String>) {
        let mut problems = Vec::new();
        let mut wanted = |signal: Signal| {
            signal.wanted().unwrap_or_else(|problem| {
                problems.push(problem);
                false
            })
        };
        let (traces, metrics) = (wanted(Signal::Traces), wanted(Signal::Metrics));
        let mut export = Self::default();
        if !traces && !metrics {
            return (export, problems);
        }
        let resource = resource();
        if traces {
            match span_exporter() {
                Ok(exporter) => {
                    export.traces = Some(
                        SdkTracerProvider::builder()
                            .with_batch_exporter(exporter)
                            .with_resource(resource.clone())
                            .build(),
                    );
                }
                Err(error) => problems.push(format!("cannot export traces: {error}")),
            }
        }
        if metrics {
            match metric_exporter() {
                Ok(exporter) => {
                    export.metrics = Some(
                        SdkMeterProvider::builder()
                            .with_periodic_exporter(exporter)
                            .with_resource(resource)
                            .build(),
                    );
                }
                Err(error) => problems.push(format!("cannot export metrics: {error}")),
            }
        }
        (export, problems)
    }

    /// The tracer for the spans, when traces are exported.
    pub(super) fn tracer(&self) -> Option<Tracer> {
        self.traces.as_ref().map(|provider| provider.tracer(SCOPE))
    }

    /// The meter provider, when metrics are exported.
    pub(super) fn meter_provider(&self) -> Option<SdkMeterProvider> {
        self.metrics.clone()
    }

    /// Exports what is left, each signal in a thread of its own, and waits
    /// for both (at most [`SHUTDOWN_TIMEOUT`] for the spans).
    pub(super) fn shut_down(self) {
        std::thread::scope(|scope| {
            if let Some(traces) = &self.traces {
                scope.spawn(|| traces.shutdown_with_timeout(SHUTDOWN_TIMEOUT));
            }
            if let Some(metrics) = &self.metrics {
                scope.spawn(|| metrics.shutdown_with_timeout(SHUTDOWN_TIMEOUT));
            }
        });
    }
}

/// The SDK's resource from the environment, with the command's service name
/// when the environment names none.
fn resource() -> Resource {
    let named = set_var("OTEL_SERVICE_NAME").is_some()
        || set_var("OTEL_RESOURCE_ATTRIBUTES")
            .is_some_and(|attributes| attributes.contains("service.name="));
    let builder = Resource::builder();
    if named {
        builder.build()
    } else {
        builder.with_service_name(SERVICE_NAME).build()
    }
}

fn span_exporter() -> Result<SpanExporter, String> {
    let client = ExportClient::new().map_err(|error| error.to_string())?;
    SpanExporter::builder()
        .with_http()
        .with_http_client(client)
        .build()
        .map_err(|error| error.to_string())
}

fn metric_exporter() -> Result<MetricExporter, String> {
    let client = ExportClient::new().map_err(|error| error.to_string())?;
    MetricExporter::builder()
        .with_http()
        .with_http_client(client)
        .build()
        .map_err(|error| error.to_string())
}
