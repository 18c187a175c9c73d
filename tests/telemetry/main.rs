//! The request span, exported: `tracing-opentelemetry` into the OpenTelemetry
//! SDK's in-memory exporter, on the JSON path. A binary of its own, since it
//! installs its own global subscriber; it needs the feature `opentelemetry`
//! only. The same through rmcp's client and server: `rmcp/main.rs`.

#[allow(unreachable_pub)]
#[path = "../support/quiet_panics.rs"]
mod quiet_panics;

#[allow(unreachable_pub)]
#[path = "../support/test_child.rs"]
mod test_child;

mod answer;
mod captured;
mod conventions;
mod exporter;
mod json;
mod listed_tools;
mod metric;
mod panic_hook;
