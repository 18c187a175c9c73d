//! The layer applied where no `tower::Service` sits (a gateway's hook after
//! each tool call, a binding that runs the handler itself):
//! [`ToolErrorLayer::rewrap_result`] for a `tools/call` result already at
//! hand ([`ToolErrorLayer::rewrap_error_texts`] for its texts alone), and
//! the layer's own answers and log text for a call its caller timed out or
//! saw fail ([`ToolErrorLayer::tool_timeout_of`],
//! [`ToolErrorLayer::timed_out_result`], [`ToolErrorLayer::crashed_result`],
//! [`ToolErrorLayer::scrub_log_text`]), and the reason it gives the server
//! when it cancels a call at its timeout ([`TIMEOUT_CANCELLATION_REASON`]).

use std::borrow::Cow;
use std::time::Duration;

use serde_json::Value;

use crate::json::tool_error_result;
use crate::layer::ToolErrorLayer;
use crate::model::{AnswerBody, CallResult, ToolResult};
use crate::panic::logged_text;
use crate::render::ErrorRenderer;
use crate::unanswered::{crashed_tool_text, timed_out_tool_text};

/// The reason a caller that times out calls through the layer gives the
/// server when it cancels a call at its timeout: `params.reason` of the
/// `notifications/cancelled` it sends for the call's id, once it has answered
/// the client with [`ToolErrorLayer::timed_out_result`]. A tool of the
/// TypeScript SDK reads it as its `AbortSignal`'s `reason`.
///
/// ```
/// use mcp_tool_errors::TIMEOUT_CANCELLATION_REASON;
/// use serde_json::json;
///
/// let cancellation = json!({
///     "jsonrpc": "2.0",
///     "method": "notifications/cancelled",
///     "params": {"requestId": 7, "reason": TIMEOUT_CANCELLATION_REASON},
/// });
/// assert_eq!(cancellation["params"]["reason"], "The client's tool timeout expired.");
/// ```
pub const TIMEOUT_CANCELLATION_REASON: &str = "The client's tool timeout expired.";

impl<R: ErrorRenderer> ToolErrorLayer<R> {
    /// Rewrites `result`, the result object of a `tools/call` of `tool`, as the
    /// layer writes it when a server answers that call through it; returns
    /// whether `result` was a tool error the layer read, the only kind it may
    /// change.
    ///
    /// The same rules as over JSON-RPC, byte for byte: every text of an
    /// `isError: true` result rendered (imitations of the element escaped,
    /// redacted and capped as configured), an element already rendered for
    /// `tool` not wrapped twice, an element of another tool rendered again
    /// under `tool` (behind a gateway that renames tools, the model reads the
    /// name it called), an error with no text given one. A success, a task
    /// handle, a value that is not an object and a malformed result are left
    /// as they are, and `false` is returned. What needs a request (timeouts,
    /// panics, tasks delivered later) does not apply here.
    ///
    /// ```
    /// use mcp_tool_errors::ToolErrorLayer;
    /// use serde_json::json;
    ///
    /// let layer = ToolErrorLayer::new().max_error_bytes(16 * 1024);
    /// let mut result = json!({
    ///     "content": [{"type": "text", "text": "no such change"}],
    ///     "isError": true,
    /// });
    /// assert!(layer.rewrap_result("get_change", &mut result));
    /// assert_eq!(
    ///     result["content"][0]["text"],
    ///     "<error tool=\"get_change\">\nno such change\n</error>",
    /// );
    ///
    /// let mut success = json!({"content": [{"type": "text", "text": "merged"}]});
    /// assert!(!layer.rewrap_result("get_change", &mut success));
    /// assert_eq!(success["content"][0]["text"], "merged");
    /// ```
    pub fn rewrap_result(&self, tool: &str, result: &mut Value) -> bool {
        let Value::Object(body) = result else {
            return false;
        };
        match body.as_call_result() {
            CallResult::Tool {
                result,
                is_error: true,
            } => self.config().rewrap(result, tool),
            _ => false,
        }
    }

    /// Rewrites `texts`, the texts of the text items of an `isError: true`
    /// result of a call of `tool`, in their order, as
    /// [`rewrap_result`](Self::rewrap_result) rewrites those items; with no
    /// text, the one such a result is given is inserted first. For a caller
    /// that reads a result's texts from its bytes and writes back the ones
    /// that changed, without building the result as a JSON value.
    ///
    /// The texts must come from a result `rewrap_result` rewraps: `isError`
    /// `true`, `content` a list, the `text` of every `"type": "text"` item a
    /// string. This function cannot see the result, so it rewrites whatever
    /// it is given; for any other result call `rewrap_result`, which leaves
    /// it as it is.
    ///
    /// ```
    /// use mcp_tool_errors::ToolErrorLayer;
    ///
    /// let mut texts = vec!["no such change".to_owned()];
    /// ToolErrorLayer::new().rewrap_error_texts("get_change", &mut texts);
    /// assert_eq!(texts, ["<error tool=\"get_change\">\nno such change\n</error>"]);
    /// ```
    pub fn rewrap_error_texts(&self, tool: &str, texts: &mut Vec<String>) {
        self.config().rewrap(&mut ErrorTexts(texts), tool);
    }

    /// The timeout that bounds a call of `tool`: its own
    /// ([`tool_timeout_for`](Self::tool_timeout_for)), else every tool's
    /// ([`tool_timeout`](Self::tool_timeout)); `None` when neither is set.
    ///
    /// ```
    /// use mcp_tool_errors::ToolErrorLayer;
    /// use std::time::Duration;
    ///
    /// let layer = ToolErrorLayer::new()
    ///     .tool_timeout(Duration::from_secs(30))
    ///     .tool_timeout_for("deploy", Duration::from_secs(300));
    /// assert_eq!(layer.tool_timeout_of("deploy"), Some(Duration::from_secs(300)));
    /// assert_eq!(layer.tool_timeout_of("search"), Some(Duration::from_secs(30)));
    /// assert_eq!(ToolErrorLayer::new().tool_timeout_of("search"), None);
    /// ```
    pub fn tool_timeout_of(&self, tool: &str) -> Option<Duration> {
        self.config().timeouts.for_tool(tool)
    }

    /// The `tools/call` result the layer answers with when a call of `tool`
    /// did not finish within `timeout`: one text item, rendered (and redacted
    /// and capped as configured), and `isError: true`, byte for byte what the
    /// layer's own timer answers over JSON-RPC.
    ///
    /// ```
    /// use mcp_tool_errors::ToolErrorLayer;
    /// use serde_json::json;
    /// use std::time::Duration;
    ///
    /// let layer = ToolErrorLayer::new();
    /// assert_eq!(
    ///     layer.timed_out_result("deploy", Duration::from_millis(1500)),
    ///     json!({
    ///         "content": [{"type": "text", "text": "<error tool=\"deploy\">\n\
    ///             The tool did not finish within 1.5 s and was cancelled.\n</error>"}],
    ///         "isError": true,
    ///     }),
    /// );
    /// ```
    pub fn timed_out_result(&self, tool: &str, timeout: Duration) -> Value {
        tool_error_result(timed_out_tool_text(tool, timeout, self.config()))
    }

    /// The `tools/call` result the layer answers with when the handler of a
    /// call of `tool` failed without answering (a panic, an exception):
    /// `message`, what the failure said, is shown only under
    /// [`expose_panic_messages`](Self::expose_panic_messages), redacted and
    /// capped as configured; otherwise the model reads that the details are in
    /// the server log. Byte for byte what the layer answers for a panic over
    /// JSON-RPC, whose payload is `message`.
    ///
    /// ```
    /// use mcp_tool_errors::ToolErrorLayer;
    ///
    /// let hidden = ToolErrorLayer::new().crashed_result("deploy", "db password=hunter2");
    /// assert_eq!(
    ///     hidden["content"][0]["text"],
    ///     "<error tool=\"deploy\">\n\
    ///      The tool failed with an internal error. The details are in the server log.\n</error>",
    /// );
    /// assert_eq!(hidden["isError"], true);
    ///
    /// let exposed = ToolErrorLayer::new()
    ///     .expose_panic_messages(true)
    ///     .crashed_result("deploy", "index out of range");
    /// assert_eq!(
    ///     exposed["content"][0]["text"],
    ///     "<error tool=\"deploy\">\n\
    ///      The tool failed with an internal error: index out of range\n</error>",
    /// );
    /// ```
    pub fn crashed_result(&self, tool: &str, message: &str) -> Value {
        tool_error_result(crashed_tool_text(tool, message, self.config()))
    }

    /// `text` (a panic's or an exception's message) as the layer's log may
    /// show it: redacted and scrubbed as configured, not capped (the log is
    /// the operator's, not the model's), borrowed when nothing changed. If the
    /// scrubber panics on it, a fixed text that withholds it stands in its
    /// place, as in the layer's own log.
    ///
    /// ```
    /// use mcp_tool_errors::ToolErrorLayer;
    /// use std::borrow::Cow;
    ///
    /// let layer = ToolErrorLayer::new()
    ///     .redact_with(|text: &str| Cow::Owned(text.replace("hunter2", "[GONE]")))
    ///     .max_error_bytes(8);
    /// assert_eq!(
    ///     layer.scrub_log_text("db password hunter2 rejected"),
    ///     "db password [GONE] rejected",
    /// );
    /// ```
    pub fn scrub_log_text<'t>(&self, text: &'t str) -> Cow<'t, str> {
        logged_text(text, self.config())
    }
}

/// The texts of an `isError: true` result's text items, in their order.
struct ErrorTexts<'a>(&'a mut Vec<String>);

impl ToolResult for ErrorTexts<'_> {
    fn error_texts(&mut self) -> Option<impl Iterator<Item = &mut String>> {
        Some(self.0.iter_mut())
    }

    fn insert_text(&mut self, text: String) {
        self.0.insert(0, text);
    }
}
