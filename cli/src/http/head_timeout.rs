//! How long the proxy waits for the upstream's response head at the MCP
//! endpoint, so that an upstream that accepts a request and never answers it
//! does not hold the client forever.
//!
//! A `tools/call` of a tool with a timeout (`--tool-timeout`, or its own
//! `--tool-timeout-for`) is bounded by the layer, which answers it with its own
//! sentence: no other bound applies. Every other request waits for the head at
//! most `--tool-timeout` when it is set (the bound a user gave to any call), and
//! [`DEFAULT`] otherwise. The timeout ends with the answer of
//! [`Failure::NoAnswerWithin`](crate::http::failure::Failure::NoAnswerWithin),
//! and the server is sent `notifications/cancelled`. Once an event stream's head
//! has come, the stream is the server's to keep open (progress can last).

use std::collections::HashSet;
use std::time::Duration;

use serde_json::Value;

use crate::options::Options;

/// The bound when `--tool-timeout` is not set: long enough for a slow tool
/// answered in a JSON body (whose head comes with its answer), short enough
/// that a lost request is answered within a model's patience.
pub(crate) const DEFAULT: Duration = Duration::from_secs(5 * 60);

/// The response-head timeouts, from the command line.
#[derive(Debug, Clone)]
pub(crate) struct HeadTimeout {
    /// `--tool-timeout`: every `tools/call` is the layer's to bound.
    tool_timeout: Option<Duration>,
    /// The tools of `--tool-timeout-for`.
    tools_with_timeouts: HashSet<String>,
}

impl HeadTimeout {
    pub(crate) fn new(options: &Options) -> Self {
        Self {
            tool_timeout: options.tool_timeout,
            tools_with_timeouts: options
                .tool_timeout_for
                .iter()
                .map(|(tool, _)| tool.clone())
                .collect(),
        }
    }

    /// The bound for `message` (a request or a batch); `None` when the layer
    /// bounds every request in it.
    pub(crate) fn for_message(&self, message: &Value) -> Option<Duration> {
        let bounded_by_layer = |request: &Value| {
            request["method"] == "tools/call"
                && (self.tool_timeout.is_some()
                    || request["params"]["name"]
                        .as_str()
                        .is_some_and(|tool| self.tools_with_timeouts.contains(tool)))
        };
        let requests: Vec<&Value> = match message {
            Value::Array(batch) => batch.iter().filter(|m| m.get("id").is_some()).collect(),
            single => vec![single],
        };
        if requests.iter().all(|request| bounded_by_layer(request)) {
            None
        } else {
            Some(self.tool_timeout.unwrap_or(DEFAULT))
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use serde_json::json;

    use super::*;

    fn head_timeout(options: &[&str]) -> HeadTimeout {
        let args = [
            "mcp-tool-errors",
            "--upstream",
            "http://h/mcp",
            "--listen",
            "127.0.0.1:0",
        ];
        HeadTimeout::new(&Options::try_parse_from(args.iter().chain(options)).unwrap())
    }

    fn call(tool: &str) -> Value {
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool}})
    }

    const PING: &str = r#"{"jsonrpc": "2.0", "id": 2, "method": "ping"}"#;

    #[test]
    fn without_tool_timeouts_every_request_gets_the_default() {
        let timeouts = head_timeout(&[]);
        assert_eq!(timeouts.for_message(&call("build")), Some(DEFAULT));
        let ping: Value = serde_json::from_str(PING).unwrap();
        assert_eq!(timeouts.for_message(&ping), Some(DEFAULT));
    }

    #[test]
    fn a_tool_timeout_leaves_calls_to_the_layer_and_bounds_the_rest() {
        let timeouts = head_timeout(&["--tool-timeout", "30s"]);
        assert_eq!(timeouts.for_message(&call("build")), None);
        let ping: Value = serde_json::from_str(PING).unwrap();
        assert_eq!(timeouts.for_message(&ping), Some(Duration::from_secs(30)));
        let batch = json!([call("build"), ping]);
        assert_eq!(timeouts.for_message(&batch), Some(Duration::from_secs(30)));
    }

    #[test]
    fn a_tools_own_timeout_leaves_its_calls_to_the_layer_only() {
        let timeouts = head_timeout(&["--tool-timeout-for", "build=2m"]);
        assert_eq!(timeouts.for_message(&call("build")), None);
        assert_eq!(timeouts.for_message(&call("search")), Some(DEFAULT));
    }
}
