//! The answers the command makes itself, for one request, in place of the
//! server's: one home for their JSON-RPC shape.

use mcp_tool_errors::NoAnswer;
use serde_json::{Value, json};

/// The JSON-RPC error code of a message that is no JSON.
pub(crate) const PARSE_ERROR: i64 = -32700;

/// The JSON-RPC error code of an invalid request.
pub(crate) const INVALID_REQUEST: i64 = -32600;

/// The JSON-RPC error code of an internal error.
pub(crate) const INTERNAL_ERROR: i64 = -32603;

// The keys of every object made here are written in sorted order, as the
// library writes the objects it makes: the same bytes whether serde_json's
// map sorts them or keeps them as written (`preserve_order`, which another
// crate of a build may turn on).

/// A JSON-RPC error response to the request `id`.
pub(crate) fn error(id: &Value, code: i64, message: &str) -> Value {
    json!({"error": {"code": code, "message": message}, "id": id, "jsonrpc": "2.0"})
}

/// The answer to a message that is no JSON, in every mode: no request is
/// known, so no id.
pub(crate) fn parse_error() -> Value {
    error(&Value::Null, PARSE_ERROR, "Parse error")
}

/// The answer to a request the server will not answer, for `reason`, saying
/// `sentence`: an `isError` result for a `tools/call` (the layer renders it
/// into the element), a `-32603` error for anything else. Marked with
/// `reason`, which the layer's span records as `error.type` and removes.
pub(crate) fn unanswered(
    id: &Value,
    is_tool_call: bool,
    sentence: &str,
    reason: NoAnswer,
) -> Value {
    let mut answer = if is_tool_call {
        json!({
            "id": id,
            "jsonrpc": "2.0",
            "result": {"content": [{"text": sentence, "type": "text"}], "isError": true},
        })
    } else {
        error(id, INTERNAL_ERROR, sentence)
    };
    reason.mark(&mut answer);
    answer
}

/// The answer to a message's `requests` (their ids, and which are
/// `tools/call`) that the server will not answer, each [`unanswered`]: a
/// batch of them for a `batch`.
pub(crate) fn unanswered_all(
    requests: &[(Value, bool)],
    batch: bool,
    sentence: &str,
    reason: NoAnswer,
) -> Value {
    let mut answers = requests
        .iter()
        .map(|(id, is_tool_call)| unanswered(id, *is_tool_call, sentence, reason));
    if batch {
        Value::Array(answers.collect())
    } else {
        answers.next().unwrap_or(Value::Null)
    }
}
