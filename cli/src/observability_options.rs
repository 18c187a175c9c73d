//! The options of what an operator sees of the command: its log's format and,
//! in the modes that listen, the health endpoints. OTLP export is configured by the
//! OpenTelemetry environment variables, not by options (`telemetry`).

use std::net::SocketAddr;

/// The command's own log, and the health endpoints.
#[derive(Debug, clap::Args)]
pub(crate) struct ObservabilityOptions {
    /// The format of the command's own log on stderr: `text`, a line a person
    /// reads, or `json`, one object a line (`timestamp`, `level`, `message`
    /// and the event's fields). RUST_LOG filters it (default: info).
    #[arg(long, value_name = "FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub(crate) log_format: LogFormat,

    /// With --listen: serve `GET /livez` (200 while the process runs) and
    /// `GET /readyz` (200 while accepting connections, 503 from the moment a
    /// drain starts) on ADDR, a listener of their own (e.g. 0.0.0.0:9090).
    #[arg(long, value_name = "ADDR", requires = "listen")]
    pub(crate) admin_listen: Option<SocketAddr>,
}

/// The format of the command's log lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum LogFormat {
    /// `mcp-tool-errors: MESSAGE`.
    Text,
    /// One JSON object a line.
    Json,
}
