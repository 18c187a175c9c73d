//! The request span, exported: `tracing-opentelemetry` into the OpenTelemetry
//! SDK's in-memory exporter, through the JSON path and through rmcp's own client
//! and server. A binary of its own, since it installs its own global subscriber.

#[allow(unreachable_pub)]
#[path = "../support/quiet_panics.rs"]
mod quiet_panics;

mod exporter;
mod json;
mod rmcp;
