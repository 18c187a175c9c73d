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

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::options::{Options, http_options};

    #[test]
    fn the_log_is_text_unless_json_is_asked_for() {
        let text = Options::try_parse_from(["mcp-tool-errors", "server"]).expect("valid");
        assert_eq!(text.observability.log_format, LogFormat::Text);
        let json = Options::try_parse_from(["mcp-tool-errors", "--log-format", "json", "server"])
            .expect("valid");
        assert_eq!(json.observability.log_format, LogFormat::Json);
        assert!(
            Options::try_parse_from(["mcp-tool-errors", "--log-format", "xml", "server"]).is_err()
        );
    }

    #[test]
    fn the_admin_listener_goes_with_listen_only() {
        let options = http_options(&["--admin-listen", "127.0.0.1:9090"]);
        assert_eq!(
            options.observability.admin_listen,
            Some("127.0.0.1:9090".parse().expect("an address"))
        );
        let bridge = Options::try_parse_from([
            "mcp-tool-errors",
            "--admin-listen",
            "127.0.0.1:0",
            "--listen",
            "127.0.0.1:0",
            "s",
        ])
        .expect("the bridge's probes");
        assert!(bridge.observability.admin_listen.is_some());
        assert!(
            Options::try_parse_from(["mcp-tool-errors", "--admin-listen", "127.0.0.1:0", "s"])
                .is_err()
        );
    }
}
