//! What the command tells an operator: its own log on stderr (`log`), with the
//! library's events in the same lines and `RUST_LOG` filtering both, and, when
//! an OTLP endpoint is configured, the library's request spans and its
//! duration metric exported (`otlp`).
//!
//! The log's layer sees events only: a span the library opens per request
//! is enabled (and paid for) only when it is exported.

mod log;

use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

use crate::observability_options::ObservabilityOptions;

/// The `tracing` target of the command's own events, apart from the
/// library's (`mcp_tool_errors`): `RUST_LOG=mcp_tool_errors_cli=warn`.
pub(crate) const TARGET: &str = "mcp_tool_errors_cli";

/// Installs the process's subscriber.
pub(crate) fn install(options: &ObservabilityOptions) {
    let subscriber = tracing_subscriber::registry().with(log::layer(options.log_format));
    // Only the first installation counts (a test's runs, say).
    let _ = subscriber.try_init();
}
