//! How long the proxy waits for the upstream's response head at the MCP
//! endpoint, so that an upstream that accepts a request and never answers it
//! does not hold the client forever.
//!
//! A `tools/call` is the layer's to bound: with a timeout (`--tool-timeout`, or
//! its own `--tool-timeout-for`) the layer answers it with its own sentence, and
//! without one it runs as long as the tool does, as in the stdio mode (a tool
//! answered in a JSON body sends its head only with its answer, and no default
//! may cut a long tool the user did not bound). Every other request waits for
//! the head at most `--tool-timeout` when it is set (the bound a user gave to
//! any call), and [`DEFAULT`] otherwise. The timeout ends with the exchange's
//! own answer for a server that did not answer in time, and the server is sent
//! `notifications/cancelled`. Once an event stream's head
//! has come, the stream is the server's to keep open (progress can last).

use std::time::Duration;

use crate::jsonrpc::layer_request::LayerRequest;

/// The bound on a request other than `tools/call` when `--tool-timeout` is not
/// set: long enough for a slow listing or resource read, short enough that a
/// lost request is answered within a model's patience.
pub(crate) const DEFAULT: Duration = Duration::from_secs(5 * 60);

/// The response-head timeouts, from the command line.
#[derive(Debug, Clone)]
pub(crate) struct HeadTimeout {
    /// `--tool-timeout`, which bounds the other requests too.
    tool_timeout: Option<Duration>,
}

impl HeadTimeout {
    /// The timeouts under `--tool-timeout`, `None` when it is not set.
    pub(crate) fn new(tool_timeout: Option<Duration>) -> Self {
        Self { tool_timeout }
    }

    /// The bound for the requests of a message (as the layer reads each:
    /// [`LayerRequest::each_of`]); `None` when every one is a `tools/call`,
    /// the layer's to bound.
    pub(crate) fn for_requests(&self, requests: &[LayerRequest]) -> Option<Duration> {
        if requests.iter().all(LayerRequest::is_tool_call) {
            None
        } else {
            Some(self.tool_timeout.unwrap_or(DEFAULT))
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn for_message(timeouts: &HeadTimeout, message: &Value) -> Option<Duration> {
        timeouts.for_requests(&LayerRequest::each_of(message))
    }

    fn call(tool: &str) -> Value {
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool}})
    }

    const PING: &str = r#"{"jsonrpc": "2.0", "id": 2, "method": "ping"}"#;

    #[test]
    fn without_tool_timeouts_calls_run_as_long_as_their_tools_and_the_rest_get_the_default() {
        let timeouts = HeadTimeout::new(None);
        assert_eq!(for_message(&timeouts, &call("build")), None);
        let ping: Value = serde_json::from_str(PING).unwrap();
        assert_eq!(for_message(&timeouts, &ping), Some(DEFAULT));
    }

    #[test]
    fn a_tool_timeout_leaves_calls_to_the_layer_and_bounds_the_rest() {
        let timeouts = HeadTimeout::new(Some(Duration::from_secs(30)));
        assert_eq!(for_message(&timeouts, &call("build")), None);
        let ping: Value = serde_json::from_str(PING).unwrap();
        assert_eq!(for_message(&timeouts, &ping), Some(Duration::from_secs(30)));
        let batch = json!([call("build"), ping]);
        assert_eq!(
            for_message(&timeouts, &batch),
            Some(Duration::from_secs(30))
        );
    }

    #[test]
    fn a_tools_own_timeout_leaves_every_call_to_the_layer() {
        // `--tool-timeout-for build=2m` bounds `build` alone: the layer's.
        let timeouts = HeadTimeout::new(None);
        assert_eq!(for_message(&timeouts, &call("build")), None);
        assert_eq!(for_message(&timeouts, &call("search")), None);
        let ping: Value = serde_json::from_str(PING).unwrap();
        assert_eq!(for_message(&timeouts, &ping), Some(DEFAULT));
    }
}
