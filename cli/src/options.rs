//! The command line: the options mirror the layer's settings, then the
//! server's command (`--` before it is optional).

use std::time::Duration;

use clap::Parser;
use mcp_tool_errors::ToolErrorLayer;

use crate::jsonrpc::timed_tools::TimedTools;
use crate::server::client_limits::{self, ClientLimits};

/// Wraps an MCP server: tool errors become llmxml the model can read, hung tool
/// calls are answered at their timeout, and a crashed server still answers.
/// Three modes: stdio (COMMAND's stdio relayed on this command's own), HTTP
/// reverse proxy (--upstream URL --listen ADDR, in front of a Streamable HTTP
/// server) and bridge (--listen ADDR COMMAND, the stdio server COMMAND served
/// over Streamable HTTP, a child per session).
#[derive(Debug, Parser)]
#[command(
    name = "mcp-tool-errors",
    version,
    override_usage = "mcp-tool-errors [OPTIONS] COMMAND [ARGS]...                      (stdio)\n       mcp-tool-errors [OPTIONS] --upstream URL --listen ADDR           (HTTP reverse proxy)\n       mcp-tool-errors [OPTIONS] --listen ADDR [--] COMMAND [ARGS]...   (bridge)"
)]
pub(crate) struct Options {
    /// Answer a tools/call that the server has not answered after DURATION
    /// (e.g. 500ms, 1.5s, 2m, 1h, 1m30s) with an isError result, and cancel it
    /// at the server.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub(crate) tool_timeout: Option<Duration>,

    /// The timeout of one tool, overriding --tool-timeout; repeatable.
    #[arg(long, value_name = "NAME=DURATION", value_parser = parse_tool_timeout)]
    pub(crate) tool_timeout_for: Vec<(String, Duration)>,

    /// Cut the text of each tool error to at most N bytes (1 or more) as the
    /// element's body shows it (each `<` of an `<error` or `</error` tag in the text
    /// counted as the 4 bytes of `&lt;`), not counting the ` … [truncated N bytes]`
    /// suffix that a cut text ends with, nor the `<error tool="NAME">` element
    /// around it. The cut falls on a character boundary.
    #[arg(long, value_name = "N", value_parser = parse_max_error_bytes)]
    pub(crate) max_error_bytes: Option<usize>,

    /// Replace secrets (tokens, keys, passwords) in tool error texts.
    #[arg(long)]
    pub(crate) redact_secrets: bool,

    /// Turn a -32602 (invalid params) answer to a tools/call of a tool that the
    /// server listed into an isError result the model can read and correct.
    #[arg(long)]
    pub(crate) invalid_params_as_tool_errors: bool,

    /// Serve HTTP instead: a reverse proxy in front of the Streamable HTTP MCP
    /// server at URL, whose path is the MCP endpoint (e.g.
    /// https://mcp.example/mcp). Needs --listen.
    #[arg(long, value_name = "URL", value_parser = crate::upstream::url::parse_upstream, requires = "listen")]
    pub(crate) upstream: Option<crate::upstream::url::UpstreamUrl>,

    /// The address to serve plain HTTP on (e.g. 127.0.0.1:8080; port 0 picks
    /// a free one); `listening on ADDR` is printed on stderr. With --upstream,
    /// in front of that server; with COMMAND, the bridge: the stdio server
    /// COMMAND served over Streamable HTTP at http://ADDR/mcp, a child per
    /// session.
    #[arg(long, value_name = "ADDR")]
    pub(crate) listen: Option<std::net::SocketAddr>,

    /// With --listen and COMMAND: the path of the MCP endpoint. Default: /mcp.
    #[arg(long, value_name = "PATH", value_parser = parse_path, requires = "listen", conflicts_with = "upstream")]
    pub(crate) path: Option<String>,

    /// With --listen and COMMAND: end a session (and its child) after
    /// DURATION with no request and no open stream. Default: 10m.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, requires = "listen", conflicts_with = "upstream")]
    pub(crate) session_idle_timeout: Option<Duration>,

    /// With --listen and COMMAND: run at most N sessions (children) at once;
    /// one more `initialize` is answered 503 with Retry-After. Default: 64.
    #[arg(long, value_name = "N", value_parser = parse_max_sessions, requires = "listen", conflicts_with = "upstream")]
    pub(crate) max_sessions: Option<usize>,

    /// With --listen and COMMAND: clients must send `Authorization: Bearer
    /// TOKEN`, TOKEN being the first line of the file at PATH (else 401).
    /// Required to listen on an address that is not loopback, unless
    /// --allow-unauthenticated.
    #[arg(
        long,
        value_name = "PATH",
        requires = "listen",
        conflicts_with = "upstream"
    )]
    pub(crate) auth_token_file: Option<std::path::PathBuf>,

    /// With --listen and COMMAND: serve browser clients whose pages come
    /// from ORIGIN (e.g. https://mcp.example, a reverse proxy's), and
    /// requests for its host, besides the listen address's own; repeatable.
    #[arg(long, value_name = "ORIGIN", value_parser = parse_origin, requires = "listen", conflicts_with = "upstream")]
    pub(crate) allow_origin: Vec<String>,

    /// With --listen and COMMAND: serve an address that is not loopback
    /// without --auth-token-file (something in front authenticates).
    #[arg(long, requires = "listen", conflicts_with_all = ["upstream", "auth_token_file"])]
    pub(crate) allow_unauthenticated: bool,

    /// Without --upstream: the most bytes of one line of the server that are
    /// read (the child's messages); a longer one is dropped as it comes, and
    /// the request it answers is answered with an error saying so. Default:
    /// 16777216 (16 MiB, the HTTP mode's bound on a message).
    #[arg(long, value_name = "N", value_parser = parse_max_message_bytes, conflicts_with = "upstream")]
    pub(crate) max_message_bytes: Option<usize>,

    /// With --listen: on SIGTERM or SIGINT, stop accepting connections and
    /// give the calls in flight DURATION to finish; those that have not are
    /// answered as at a timeout, and the command exits 0. Default: 10s.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, requires = "listen")]
    pub(crate) drain_timeout: Option<Duration>,

    /// With --listen: close a client's connection whose request head has
    /// not come whole DURATION after its first byte (or, for the
    /// connection's first request, after it connected). Default: 60s.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, requires = "listen")]
    pub(crate) client_header_timeout: Option<Duration>,

    /// With --listen: close a client's connection whose request body sends
    /// nothing for DURATION while it is read. Default: 60s.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, requires = "listen")]
    pub(crate) client_body_timeout: Option<Duration>,

    /// With --listen: close a client's connection that reads nothing of
    /// its answer for DURATION while the proxy has some to write. Default:
    /// 60s.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, requires = "listen")]
    pub(crate) client_send_timeout: Option<Duration>,

    /// With --listen: close a client's kept-alive connection that sends no
    /// new request for DURATION; keep it longer than the idle timeout of the
    /// load balancer in front. Default: 75s.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, requires = "listen")]
    pub(crate) keepalive_timeout: Option<Duration>,

    /// With --listen: serve at most N client connections at once; a new one
    /// beyond closes the connection idle longest (one with no request in
    /// progress). Default: half the file-descriptor limit (raised to its
    /// hard limit at start) less what the process keeps for itself, so that
    /// each connection has one to the upstream.
    #[arg(long, value_name = "N", value_parser = parse_max_connections, requires = "listen")]
    pub(crate) max_connections: Option<usize>,

    /// Start the server's command (in the stdio mode and the bridge) with an
    /// empty environment but for the variables --env names; without it, the
    /// command gets this command's whole environment.
    #[arg(long, conflicts_with = "upstream")]
    pub(crate) env_clear: bool,

    /// With --env-clear: pass the variable NAME, as this command has it, to
    /// the server's command; repeatable (e.g. --env PATH --env HOME).
    #[arg(long, value_name = "NAME", value_parser = parse_env_name, requires = "env_clear")]
    pub(crate) env: Vec<String>,

    /// With --upstream: what becomes of the X-Forwarded-For and Forwarded
    /// headers a client sent: `append` the client's address to them (behind a
    /// load balancer, which wrote them), or `replace` them with it (at the
    /// edge, where any client could write them). Default: append.
    #[arg(
        long,
        value_name = "MODE",
        value_enum,
        requires = "upstream",
        conflicts_with = "command"
    )]
    pub(crate) forwarded: Option<crate::upstream::forwarded::ForwardedHeaders>,

    /// The server's command and its arguments: everything from the first
    /// argument that is not an option of this command (or after `--`) is the
    /// server's, options included.
    #[arg(
        value_name = "COMMAND",
        required_unless_present = "upstream",
        conflicts_with = "upstream",
        num_args = 1..,
        trailing_var_arg = true
    )]
    pub(crate) command: Vec<String>,

    #[command(flatten)]
    pub(crate) observability: crate::observability_options::ObservabilityOptions,
}

impl Options {
    /// The layer in front of the server, configured from the options: the one
    /// place where they reach it.
    pub(crate) fn layer(&self) -> ToolErrorLayer {
        let mut layer = ToolErrorLayer::new().redact_secrets(self.redact_secrets);
        if let Some(timeout) = self.tool_timeout {
            layer = layer.tool_timeout(timeout);
        }
        for (tool, timeout) in &self.tool_timeout_for {
            layer = layer.tool_timeout_for(tool.clone(), *timeout);
        }
        if let Some(max_bytes) = self.max_error_bytes {
            layer = layer.max_error_bytes(max_bytes);
        }
        layer
    }

    /// The most bytes of one line of the server that are read.
    pub(crate) fn max_message_bytes(&self) -> usize {
        self.max_message_bytes
            .unwrap_or(crate::http::body::MAX_MESSAGE_BYTES)
    }

    /// The limits on clients the options give, the default for each other one; the
    /// connection cap from the process's file-descriptor limit and its
    /// `workers`.
    pub(crate) fn client_limits(&self, workers: usize) -> ClientLimits {
        ClientLimits {
            header_timeout: self
                .client_header_timeout
                .unwrap_or(client_limits::DEFAULT_HEADER_TIMEOUT),
            body_timeout: self
                .client_body_timeout
                .unwrap_or(client_limits::DEFAULT_BODY_TIMEOUT),
            send_timeout: self
                .client_send_timeout
                .unwrap_or(client_limits::DEFAULT_SEND_TIMEOUT),
            keepalive_timeout: self
                .keepalive_timeout
                .unwrap_or(client_limits::DEFAULT_KEEPALIVE_TIMEOUT),
            max_connections: self.max_connections.unwrap_or_else(|| {
                client_limits::max_connections_within(client_limits::descriptor_limit(), workers)
            }),
        }
    }

    /// The tools whose calls the layer holds a timer for.
    pub(crate) fn timed_tools(&self) -> TimedTools {
        TimedTools::new(
            self.tool_timeout.is_some(),
            self.tool_timeout_for
                .iter()
                .map(|(tool, _)| tool.clone())
                .collect(),
        )
    }
}

/// Reads a duration the way `humantime` does: `500ms`, `1.5s`, `2m`, `1h`,
/// `1m30s`; a unit is required and zero is refused.
pub(crate) fn parse_duration(text: &str) -> Result<Duration, String> {
    let duration = humantime::parse_duration(text).map_err(|error| {
        format!("`{text}` is not a duration ({error}): write e.g. 500ms, 1.5s, 2m, 1h or 1m30s")
    })?;
    if duration.is_zero() {
        return Err(format!("`{text}`: a timeout must be longer than zero"));
    }
    Ok(duration)
}

/// Reads the byte limit of `--max-error-bytes`: 1 or more.
fn parse_max_error_bytes(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err("at least 1 byte of the text must be kept".to_owned()),
        Ok(max_bytes) => Ok(max_bytes),
        Err(error) => Err(format!("`{text}` is not a number of bytes ({error})")),
    }
}

/// Reads the connection cap of `--max-connections`: 1 or more.
fn parse_max_sessions(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(sessions @ 1..) => Ok(sessions),
        _ => Err(format!("`{text}` is not a number of sessions (1 or more)")),
    }
}

/// Reads an origin as a browser writes it in `Origin`: `http://` or
/// `https://`, a host, and a port or none; no path.
fn parse_origin(text: &str) -> Result<String, String> {
    let host = text
        .strip_prefix("http://")
        .or_else(|| text.strip_prefix("https://"));
    match host {
        Some(host) if !host.is_empty() && !host.contains(['/', '?', '#', '@', ' ']) => {
            Ok(text.to_ascii_lowercase())
        }
        _ => Err(format!(
            "`{text}` is not an origin: write it as a browser sends it, e.g. https://mcp.example or http://10.0.0.5:8080, without a path"
        )),
    }
}

/// Reads the name of `--env`: not empty, without `=`.
fn parse_env_name(text: &str) -> Result<String, String> {
    if text.is_empty() || text.contains(['=', '\0']) {
        Err(format!(
            "`{text}` is not the name of a variable (--env NAME passes NAME's value)"
        ))
    } else {
        Ok(text.to_owned())
    }
}

/// Reads `--max-message-bytes`: 1024 or more.
fn parse_max_message_bytes(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(bytes) if bytes >= 1024 => Ok(bytes),
        _ => Err("expected a number of bytes, 1024 or more".to_owned()),
    }
}

fn parse_path(text: &str) -> Result<String, String> {
    if text.starts_with('/') && !text.contains(['?', '#']) {
        Ok(text.to_owned())
    } else {
        Err(format!(
            "`{text}` is not a path (it starts with /, without ? or #)"
        ))
    }
}

fn parse_max_connections(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err("at least 1 connection must be served".to_owned()),
        Ok(connections) => Ok(connections),
        Err(error) => Err(format!("`{text}` is not a number of connections ({error})")),
    }
}

/// Reads `NAME=DURATION`; the name is everything before the last `=`.
fn parse_tool_timeout(text: &str) -> Result<(String, Duration), String> {
    let (name, duration) = text
        .rsplit_once('=')
        .ok_or_else(|| format!("`{text}` is not NAME=DURATION"))?;
    if name.is_empty() {
        return Err(format!("`{text}` has no tool name before `=`"));
    }
    Ok((name.to_owned(), parse_duration(duration)?))
}

/// The options of the HTTP mode in front of `http://h/mcp`, with `extra`:
/// what the HTTP mode's unit tests read their settings from.
#[cfg(test)]
pub(crate) fn http_options(extra: &[&str]) -> Options {
    use clap::Parser;
    let args = [
        "mcp-tool-errors",
        "--upstream",
        "http://h/mcp",
        "--listen",
        "127.0.0.1:0",
    ];
    Options::try_parse_from(args.iter().chain(extra)).expect("valid options")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observability_options::LogFormat;

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

    #[test]
    fn each_limit_has_a_default_and_an_option() {
        let limits = http_options(&[]).client_limits(2);
        assert_eq!(limits.header_timeout, Duration::from_secs(60));
        assert_eq!(limits.body_timeout, Duration::from_secs(60));
        assert_eq!(limits.send_timeout, Duration::from_secs(60));
        assert_eq!(limits.keepalive_timeout, Duration::from_secs(75));
        assert_eq!(limits.shortest_timeout(), Duration::from_secs(60));
        let limits = http_options(&[
            "--client-header-timeout",
            "5s",
            "--client-body-timeout",
            "2s",
            "--client-send-timeout",
            "3s",
            "--keepalive-timeout",
            "1m",
            "--max-connections",
            "100",
        ])
        .client_limits(2);
        assert_eq!(limits.header_timeout, Duration::from_secs(5));
        assert_eq!(limits.body_timeout, Duration::from_secs(2));
        assert_eq!(limits.send_timeout, Duration::from_secs(3));
        assert_eq!(limits.keepalive_timeout, Duration::from_secs(60));
        assert_eq!(limits.max_connections, 100);
        assert_eq!(limits.shortest_timeout(), Duration::from_secs(2));
    }

    #[test]
    fn durations_take_fractions_hours_and_compounds() {
        for (text, duration) in [
            ("500ms", Duration::from_millis(500)),
            ("1.5s", Duration::from_millis(1500)),
            ("30s", Duration::from_secs(30)),
            ("2m", Duration::from_secs(120)),
            ("1h", Duration::from_secs(3600)),
            ("1m30s", Duration::from_secs(90)),
        ] {
            assert_eq!(parse_duration(text), Ok(duration), "{text}");
        }
    }

    #[test]
    fn durations_without_a_unit_or_with_an_unknown_one_are_refused() {
        for wrong in ["30", "s", "1.5", "2x", "-1s", "0s", "0ms", ""] {
            assert!(parse_duration(wrong).is_err(), "{wrong:?} was accepted");
        }
    }

    #[test]
    fn the_byte_limit_is_one_or_more() {
        assert_eq!(parse_max_error_bytes("1"), Ok(1));
        assert!(parse_max_error_bytes("0").is_err());
        assert!(parse_max_error_bytes("-1").is_err());
    }

    #[test]
    fn the_message_bound_is_1024_bytes_or_more_and_16_mib_by_default() {
        assert_eq!(parse_max_message_bytes("1024"), Ok(1024));
        assert!(parse_max_message_bytes("1023").is_err());
        let options = Options::try_parse_from(["mcp-tool-errors", "server"]).unwrap();
        assert_eq!(options.max_message_bytes(), 16 * 1024 * 1024);
        assert!(
            Options::try_parse_from([
                "mcp-tool-errors",
                "--upstream",
                "http://127.0.0.1:1/mcp",
                "--listen",
                "127.0.0.1:0",
                "--max-message-bytes",
                "2048",
            ])
            .is_err(),
            "the HTTP mode has its own bound"
        );
    }

    #[test]
    fn the_connection_cap_is_one_or_more() {
        assert_eq!(parse_max_connections("1"), Ok(1));
        assert!(parse_max_connections("0").is_err());
        assert!(parse_max_connections("many").is_err());
    }

    #[test]
    fn the_client_limits_go_with_listen_and_forwarded_with_upstream_only() {
        use crate::upstream::forwarded::ForwardedHeaders;
        let options = http_options(&["--forwarded", "replace", "--keepalive-timeout", "5s"]);
        assert_eq!(options.forwarded, Some(ForwardedHeaders::Replace));
        assert_eq!(options.keepalive_timeout, Some(Duration::from_secs(5)));
        assert_eq!(http_options(&[]).forwarded, None);
        for stdio in [
            ["--forwarded", "append"],
            ["--max-connections", "10"],
            ["--client-header-timeout", "1s"],
            ["--client-body-timeout", "1s"],
            ["--client-send-timeout", "1s"],
            ["--keepalive-timeout", "1s"],
        ] {
            let args = ["mcp-tool-errors"]
                .into_iter()
                .chain(stdio)
                .chain(["server"]);
            assert!(Options::try_parse_from(args).is_err(), "{stdio:?}");
        }
        assert!(
            Options::try_parse_from([
                "mcp-tool-errors",
                "--upstream",
                "http://h/mcp",
                "--listen",
                "127.0.0.1:0",
                "--forwarded",
                "prepend",
            ])
            .is_err()
        );
    }

    #[test]
    fn the_bridge_is_listen_with_a_command_and_its_options_go_with_it_only() {
        let options = Options::try_parse_from([
            "mcp-tool-errors",
            "--listen",
            "127.0.0.1:0",
            "--max-sessions",
            "2",
            "--session-idle-timeout",
            "30s",
            "--path",
            "/v1/mcp",
            "--keepalive-timeout",
            "5s",
            "--",
            "uvx",
            "server",
        ])
        .expect("a bridge");
        assert_eq!(options.command, ["uvx", "server"]);
        assert_eq!(options.max_sessions, Some(2));
        assert_eq!(options.session_idle_timeout, Some(Duration::from_secs(30)));
        assert_eq!(options.path.as_deref(), Some("/v1/mcp"));
        assert!(options.upstream.is_none());
        let refused: [&[&str]; 6] = [
            // Without --listen: the stdio mode, which serves no sessions.
            &["--max-sessions", "2", "server"],
            &["--listen", "127.0.0.1:0", "--max-sessions", "0", "server"],
            &["--listen", "127.0.0.1:0", "--path", "mcp", "server"],
            &[
                "--listen",
                "127.0.0.1:0",
                "--forwarded",
                "replace",
                "server",
            ],
            &[
                "--upstream",
                "http://h/mcp",
                "--listen",
                "127.0.0.1:0",
                "--max-sessions",
                "2",
            ],
            &[
                "--listen",
                "0.0.0.0:0",
                "--auth-token-file",
                "t",
                "--allow-unauthenticated",
                "server",
            ],
        ];
        for args in refused {
            let args = ["mcp-tool-errors"].into_iter().chain(args.iter().copied());
            assert!(Options::try_parse_from(args).is_err(), "{refused:?}");
        }
    }

    #[test]
    fn an_origin_is_a_scheme_and_a_host_and_a_port_or_none() {
        assert_eq!(
            parse_origin("https://MCP.example"),
            Ok("https://mcp.example".to_owned())
        );
        assert!(parse_origin("http://10.0.0.5:8080").is_ok());
        for wrong in [
            "mcp.example",
            "https://",
            "https://mcp.example/",
            "https://mcp.example/mcp",
            "ftp://mcp.example",
            "null",
            "*",
        ] {
            assert!(parse_origin(wrong).is_err(), "{wrong}");
        }
    }

    #[test]
    fn env_names_a_variable_and_goes_with_env_clear() {
        let options =
            Options::try_parse_from(["mcp-tool-errors", "--env-clear", "--env", "PATH", "s"])
                .expect("valid");
        assert!(options.env_clear);
        assert_eq!(options.env, ["PATH"]);
        for refused in [
            &["--env", "PATH", "s"][..],
            &["--env-clear", "--env", "A=1", "s"][..],
            &["--env-clear", "--env", "", "s"][..],
        ] {
            let args = ["mcp-tool-errors"]
                .into_iter()
                .chain(refused.iter().copied());
            assert!(Options::try_parse_from(args).is_err(), "{refused:?}");
        }
    }

    #[test]
    fn tool_timeouts_split_at_the_last_equals_sign() {
        assert_eq!(
            parse_tool_timeout("a=b=5s"),
            Ok(("a=b".to_owned(), Duration::from_secs(5)))
        );
        assert!(parse_tool_timeout("=5s").is_err());
        assert!(parse_tool_timeout("search").is_err());
    }

    #[test]
    fn after_two_dashes_the_command_keeps_its_own_options() {
        let options = Options::try_parse_from([
            "mcp-tool-errors",
            "--tool-timeout",
            "60s",
            "--tool-timeout-for",
            "build=2m",
            "--max-error-bytes",
            "4096",
            "--redact-secrets",
            "--",
            "uvx",
            "some-server",
            "--verbose",
        ])
        .expect("the options parse");
        assert_eq!(options.tool_timeout, Some(Duration::from_secs(60)));
        assert_eq!(
            options.tool_timeout_for,
            [("build".to_owned(), Duration::from_secs(120))]
        );
        assert_eq!(options.max_error_bytes, Some(4096));
        assert!(options.redact_secrets);
        assert!(!options.invalid_params_as_tool_errors);
        assert_eq!(options.command, ["uvx", "some-server", "--verbose"]);
    }

    #[test]
    fn without_two_dashes_the_command_starts_at_the_first_value_and_keeps_its_options() {
        let options = Options::try_parse_from([
            "mcp-tool-errors",
            "--tool-timeout",
            "1s",
            "python",
            "server.py",
            "--tool-timeout",
            "5",
            "--",
        ])
        .expect("the options parse");
        assert_eq!(options.tool_timeout, Some(Duration::from_secs(1)));
        assert_eq!(
            options.command,
            ["python", "server.py", "--tool-timeout", "5", "--"]
        );
    }

    #[test]
    fn a_command_is_required() {
        assert!(Options::try_parse_from(["mcp-tool-errors", "--redact-secrets"]).is_err());
        assert!(Options::try_parse_from(["mcp-tool-errors", "--"]).is_err());
    }

    #[test]
    fn the_clap_definition_is_consistent() {
        use clap::CommandFactory;
        Options::command().debug_assert();
    }
}
