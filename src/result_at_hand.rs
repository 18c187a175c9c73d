//! [`ToolErrorLayer::rewrap_result`]: the layer applied to a `tools/call`
//! result already at hand, where no `tower::Service` sits (a gateway's hook
//! after each tool call, say).

use serde_json::Value;

use crate::layer::ToolErrorLayer;
use crate::model::{AnswerBody, CallResult};
use crate::render::ErrorRenderer;

impl<R: ErrorRenderer> ToolErrorLayer<R> {
    /// Rewrites `result`, the result object of a `tools/call` of `tool`, as the
    /// layer writes it when a server answers that call through it; returns
    /// whether `result` was a tool error the layer read, the only kind it may
    /// change.
    ///
    /// The same rules as over JSON-RPC, byte for byte: every text of an
    /// `isError: true` result rendered (imitations of the element escaped,
    /// redacted and capped as configured), a text already rendered not wrapped
    /// twice, an error with no text given one. A success, a task handle, a
    /// value that is not an object and a malformed result are left as they
    /// are, and `false` is returned. What needs a request (timeouts, panics,
    /// tasks delivered later) does not apply here.
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
}
