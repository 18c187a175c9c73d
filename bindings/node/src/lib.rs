//! The `mcp-tool-errors` layer as a Node.js addon: what `withToolErrors`
//! (`index.cjs`) asks of the layer, the layer's rules and texts all in Rust.
//!
//! JSON crosses as text, serialized and parsed by JavaScript's own `JSON`:
//! what the addon reads is what the SDK's transport would write (`undefined`
//! members left out, `toJSON` applied), and what it returns keeps the order of
//! the keys it read.

mod command_order;

use std::time::Duration;

use mcp_tool_errors::{JsonRpcId, TIMEOUT_CANCELLATION_REASON, ToolErrorLayer};
use napi_derive::napi;
use serde_json::{Value, json};

/// JSON-RPC's code of an invalid request.
const INVALID_REQUEST: i64 = -32600;

/// The options of `withToolErrors`, already checked by `index.cjs`: timeouts
/// in whole milliseconds, as the SDK counts time.
#[napi(object)]
#[derive(Debug)]
pub struct LayerOptions {
    /// The timeout of every tool without one of its own.
    pub tool_timeout: Option<u32>,
    /// The timeouts of single tools, by name.
    pub tool_timeouts: Option<Vec<ToolTimeout>>,
    /// Whether secrets in error texts are replaced by `[REDACTED]`.
    pub redact_secrets: Option<bool>,
    /// The most bytes of an error text the model reads.
    pub max_error_bytes: Option<u32>,
}

/// The timeout of one tool.
#[napi(object)]
#[derive(Debug)]
pub struct ToolTimeout {
    /// The tool's name.
    pub tool: String,
    /// Its timeout, in milliseconds.
    pub milliseconds: u32,
}

/// One configured layer, for the calls of one wrapped transport.
#[napi]
#[derive(Debug)]
pub struct Layer {
    layer: ToolErrorLayer,
}

#[napi]
impl Layer {
    /// The layer the options describe.
    #[napi(constructor)]
    pub fn new(options: LayerOptions) -> Self {
        let mut layer = ToolErrorLayer::new();
        if let Some(milliseconds) = options.tool_timeout {
            layer = layer.tool_timeout(Duration::from_millis(milliseconds.into()));
        }
        for ToolTimeout { tool, milliseconds } in options.tool_timeouts.unwrap_or_default() {
            layer = layer.tool_timeout_for(tool, Duration::from_millis(milliseconds.into()));
        }
        if let Some(redact) = options.redact_secrets {
            layer = layer.redact_secrets(redact);
        }
        if let Some(max_bytes) = options.max_error_bytes {
            layer = layer.max_error_bytes(max_bytes as usize);
        }
        Self { layer }
    }

    /// The result of a `tools/call` of `tool` (JSON text) as the layer
    /// rewrites it and the command writes it, or `null` when the layer leaves
    /// it as it is (not a tool error, or not JSON).
    #[napi]
    pub fn rewrap_result(&self, tool: String, result: String) -> Option<String> {
        let server: Value = serde_json::from_str(&result).ok()?;
        let mut result = server.clone();
        self.layer
            .rewrap_result(&tool, &mut result)
            .then(|| command_order::over_server_value(&server, result).to_string())
    }

    /// The timeout of a call of `tool`, in milliseconds, or `null` when none
    /// bounds it.
    #[napi]
    pub fn timeout_of(&self, tool: String) -> Option<u32> {
        let timeout = self.layer.tool_timeout_of(&tool)?;
        Some(u32::try_from(timeout.as_millis()).unwrap_or(u32::MAX))
    }

    /// The answer (JSON text) to the `tools/call` of `tool` with id `id` (JSON
    /// text) that did not finish within its timeout, as the command writes
    /// it.
    #[napi]
    pub fn timed_out_answer(&self, id: String, tool: String) -> napi::Result<String> {
        let id = json_id(&id)?;
        let timeout = self
            .layer
            .tool_timeout_of(&tool)
            .ok_or_else(|| napi::Error::from_reason(format!("the tool `{tool}` has no timeout")))?;
        // Keys in the order a sorted map writes them, as the library makes its
        // own objects: the command's bytes, under either map.
        let answer = json!({
            "id": id,
            "jsonrpc": "2.0",
            "result": self.layer.timed_out_result(&tool, timeout),
        });
        Ok(answer.to_string())
    }
}

/// The `notifications/cancelled` (JSON text) that cancels the request `id`
/// (JSON text) in the server once the layer has answered it at its timeout.
#[napi]
pub fn cancellation(id: String) -> napi::Result<String> {
    Ok(json!({
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": json_id(&id)?, "reason": TIMEOUT_CANCELLATION_REASON},
    })
    .to_string())
}

/// The answer (JSON text) refusing a request whose id `id` (JSON text) is in
/// use, a request before it with that id not answered yet: code `-32600`
/// and the library's [`JsonRpcId::in_use_message`], as the command refuses
/// it, since the server's answers to the two would carry one id and the layer
/// could not tell which answers which.
#[napi]
pub fn id_in_use(id: String) -> napi::Result<String> {
    let id = json_id(&id)?;
    let message = JsonRpcId::new(&id).in_use_message();
    // Keys sorted, as in `timed_out_answer`.
    let answer = json!({
        "error": {"code": INVALID_REQUEST, "message": message},
        "id": id,
        "jsonrpc": "2.0",
    });
    Ok(answer.to_string())
}

/// Whether the library reads `json` (JSON text): not when it holds a lone
/// surrogate (`"\ud800"`), which JavaScript's strings may and Rust's cannot,
/// and which makes the command pass the message that holds it untouched.
#[napi]
pub fn readable(json: String) -> bool {
    serde_json::from_str::<Value>(&json).is_ok()
}

/// A request id, from its JSON text.
fn json_id(id: &str) -> napi::Result<Value> {
    serde_json::from_str(id)
        .map_err(|error| napi::Error::from_reason(format!("a request id is JSON: {error}")))
}
