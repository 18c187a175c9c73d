//! The instrument of the metric `mcp.server.operation.duration`: one
//! histogram per process, made at the first request from the global meter
//! provider as it is then, and whether it records.

use std::sync::OnceLock;

use opentelemetry::InstrumentationScope;
use opentelemetry::metrics::Histogram;

/// The metric's name in the conventions.
const NAME: &str = "mcp.server.operation.duration";

/// The conventions' explicit bucket boundaries for the metric, in seconds.
const BOUNDARIES: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// The one histogram of this process; `None` when the global meter provider
/// was OpenTelemetry's no-op provider at the first request.
static DURATION: OnceLock<Option<Histogram<f64>>> = OnceLock::new();

/// [`DURATION`], created at the first call: after that one load and a branch.
#[inline]
pub(super) fn histogram() -> Option<&'static Histogram<f64>> {
    match DURATION.get() {
        Some(histogram) => histogram.as_ref(),
        None => create_histogram(),
    }
}

/// Whether the metric is recorded in this process: its instrument was made,
/// from a meter provider that records. Known from the first request on.
pub(super) fn is_recorded() -> bool {
    DURATION.get().is_some_and(Option::is_some)
}

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
