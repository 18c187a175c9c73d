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
use std::time::Instant;

#[cfg(feature = "opentelemetry")]
use compact_str::CompactString;
#[cfg(feature = "opentelemetry")]
use opentelemetry::metrics::Histogram;
#[cfg(feature = "opentelemetry")]
use opentelemetry::{KeyValue, Value};

use crate::model::RequestView;

#[cfg(feature = "opentelemetry")]
use super::instrument::histogram;
use super::outcome::Failure;
use super::tool_names::ToolNames;

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
