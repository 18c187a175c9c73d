//! The metric `mcp.server.operation.duration` (feature `opentelemetry`): how
//! long each request took, from its arrival at the layer to its answer, as a
//! histogram through OpenTelemetry's global meter provider.
//!
//! The instrument is created once, at the first request the layer handles,
//! from the global meter provider as it is then: install the provider
//! (`opentelemetry::global::set_meter_provider`) before serving. Without one
//! (OpenTelemetry's no-op provider) nothing is timed or copied per request.
//!
//! Its attribute `gen_ai.tool.name` names only tools the server listed or
//! answered with a success, at most 1,000 per layer, and `_OTHER` any other
//! (see `tool_names.rs`): a client sends whatever names it likes, and each
//! distinct value would be a series of its own in a metrics backend.

#[cfg(feature = "opentelemetry")]
use std::sync::OnceLock;
#[cfg(feature = "opentelemetry")]
use std::time::Instant;

#[cfg(feature = "opentelemetry")]
use compact_str::CompactString;
#[cfg(feature = "opentelemetry")]
use opentelemetry::metrics::Histogram;
#[cfg(feature = "opentelemetry")]
use opentelemetry::{InstrumentationScope, KeyValue, Value};

use crate::model::RequestView;

use super::outcome::Failure;
use super::tool_names::ToolNames;

/// The metric's name in the conventions.
#[cfg(feature = "opentelemetry")]
const NAME: &str = "mcp.server.operation.duration";

/// The conventions' explicit bucket boundaries for the metric, in seconds.
#[cfg(feature = "opentelemetry")]
const BOUNDARIES: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// The one histogram of this process; `None` when the global meter provider
/// was OpenTelemetry's no-op provider at the first request.
#[cfg(feature = "opentelemetry")]
static DURATION: OnceLock<Option<Histogram<f64>>> = OnceLock::new();

/// [`DURATION`], created at the first call: after that one load and a branch.
#[cfg(feature = "opentelemetry")]
#[inline]
fn histogram() -> Option<&'static Histogram<f64>> {
    match DURATION.get() {
        Some(histogram) => histogram.as_ref(),
        None => create_histogram(),
    }
}

/// Whether the metric is recorded in this process: its instrument was made,
/// from a meter provider that records. Known from the first request on.
#[cfg(feature = "opentelemetry")]
pub(super) fn is_recorded() -> bool {
    DURATION.get().is_some_and(Option::is_some)
}

#[cfg(feature = "opentelemetry")]
#[cold]
#[inline(never)]
fn create_histogram() -> Option<&'static Histogram<f64>> {
    DURATION
        .get_or_init(|| {
            let provider = opentelemetry::global::meter_provider();
            // The API has no "is this the no-op provider" query. The no-op
            // provider is the one without state: any provider that records
            // holds its pipeline. Knowing it here is what lets a request skip
            // the clock and the copies of its attributes.
            if size_of_val(&*provider) == 0 {
                return None;
            }
            let scope = InstrumentationScope::builder(env!("CARGO_PKG_NAME"))
                .with_version(env!("CARGO_PKG_VERSION"))
                .build();
            let histogram = provider
                .meter_with_scope(scope)
                .f64_histogram(NAME)
                .with_unit("s")
                .with_description(
                    "MCP request or notification duration as observed on the receiver \
                     from the time it was received until the result or ack is sent.",
                )
                .with_boundaries(BOUNDARIES.to_vec())
                .build();
            Some(histogram)
        })
        .as_ref()
}

/// The timing of one request for the metric: empty when nothing records it.
#[derive(Debug, Default)]
pub(crate) struct OperationDuration {
    // Boxed, so that a future without the metric grows by one pointer only.
    #[cfg(feature = "opentelemetry")]
    started: Option<Box<Started>>,
}

/// What the metric records of a request, kept from its arrival.
#[cfg(feature = "opentelemetry")]
#[derive(Debug)]
struct Started {
    histogram: &'static Histogram<f64>,
    at: Instant,
    method: CompactString,
    tool: Option<CompactString>,
    is_tool_call: bool,
    protocol_version: Option<CompactString>,
    network_transport: Option<&'static str>,
}

impl OperationDuration {
    /// Starts timing the request that `view` describes (read only when the
    /// metric is recorded); a message with no view (a batch) is not timed.
    #[inline]
    pub(super) fn start<'v, 'a: 'v>(
        view: impl FnOnce() -> Option<&'v RequestView<'a>>,
        network_transport: Option<&'static str>,
    ) -> Self {
        #[cfg(feature = "opentelemetry")]
        {
            let Some(histogram) = histogram() else {
                return Self::default();
            };
            let Some(view) = view() else {
                return Self::default();
            };
            let tool = view.tool().map(CompactString::from);
            Self {
                started: Some(Box::new(Started {
                    histogram,
                    at: Instant::now(),
                    method: view.method().into(),
                    is_tool_call: tool.is_some(),
                    tool,
                    protocol_version: view.protocol_version().map(CompactString::from),
                    network_transport,
                })),
            }
        }
        #[cfg(not(feature = "opentelemetry"))]
        {
            let _ = (view, network_transport);
            Self::default()
        }
    }

    /// Whether the request is being timed.
    #[inline]
    pub(super) fn is_recording(&self) -> bool {
        #[cfg(feature = "opentelemetry")]
        return self.started.is_some();
        #[cfg(not(feature = "opentelemetry"))]
        false
    }

    /// Names the tool of the task whose result the request delivered.
    pub(super) fn set_task_tool(&mut self, tool: &str) {
        #[cfg(feature = "opentelemetry")]
        if let Some(started) = &mut self.started {
            started.tool = Some(tool.into());
        }
        #[cfg(not(feature = "opentelemetry"))]
        let _ = tool;
    }

    /// Records the request's duration, once, with `failure` when it failed.
    /// `answered`: whether the server answered the request with a success,
    /// which teaches `tool_names` the name of the tool of a `tools/call`.
    pub(super) fn finish(
        &mut self,
        failure: Option<&Failure>,
        answered: bool,
        tool_names: &ToolNames,
    ) {
        #[cfg(feature = "opentelemetry")]
        if let Some(started) = self.started.take() {
            let seconds = started.at.elapsed().as_secs_f64();
            let tool = started
                .tool
                .as_deref()
                .map(|tool| tool_names.attribute(tool, answered && started.is_tool_call));
            let attributes = started.attributes(tool, failure);
            started.histogram.record(seconds, &attributes);
        }
        #[cfg(not(feature = "opentelemetry"))]
        let _ = (failure, answered, tool_names);
    }
}

#[cfg(feature = "opentelemetry")]
impl Started {
    /// The metric's attributes: those the conventions list that the layer
    /// knows, with `tool` as `gen_ai.tool.name`.
    fn attributes(&self, tool: Option<Value>, failure: Option<&Failure>) -> Vec<KeyValue> {
        let mut attributes = Vec::with_capacity(7);
        attributes.push(KeyValue::new("mcp.method.name", self.method.to_string()));
        if let Some(tool) = tool {
            attributes.push(KeyValue::new("gen_ai.tool.name", tool));
        }
        if self.is_tool_call {
            attributes.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
        }
        if let Some(version) = &self.protocol_version {
            attributes.push(KeyValue::new("mcp.protocol.version", version.to_string()));
        }
        if let Some(transport) = self.network_transport {
            attributes.push(KeyValue::new("network.transport", transport));
        }
        if let Some(failure) = failure {
            attributes.push(KeyValue::new(
                "error.type",
                failure.error_type().to_string(),
            ));
            if let Some(code) = failure.status_code() {
                attributes.push(KeyValue::new("rpc.response.status_code", code.to_string()));
            }
        }
        attributes
    }
}
