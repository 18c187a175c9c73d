//! Helpers shared by the integration tests. Each test binary includes this
//! module once: `mod support;` from `tests/<name>.rs`, `#[path =
//! "../support/mod.rs"] mod support;` from `tests/<area>/main.rs`.
#![allow(dead_code, unreachable_pub)]

pub mod complete;
pub mod example;
pub mod failing_tool;
pub mod golden;
pub mod line_client;
pub mod log;
pub mod panic_answers;
pub mod quiet_panics;
#[cfg(feature = "rmcp")]
pub mod rmcp_tasks;
pub mod secret_payload;
pub mod test_child;

use std::future::Future;
use std::time::Duration;

use serde_json::{Value, json};

/// The text of a hidden panic: what a `tools/call` whose handler panicked is
/// answered with by default, as `golden/panic-in-call-hidden.out.json` pins it.
pub const HIDDEN_TOOL_MESSAGE: &str =
    "The tool failed with an internal error. The details are in the server log.";

/// What a hung answer would look like: far longer than any answer in these
/// tests takes. A guard against hanging, never a timing assertion.
pub const HANG_GUARD: Duration = Duration::from_secs(60);

/// Awaits `future`, failing the test (with `what`) if it hangs.
pub async fn within_hang_guard<F: Future>(what: &str, future: F) -> F::Output {
    tokio::time::timeout(HANG_GUARD, future)
        .await
        .unwrap_or_else(|_| panic!("{what}: no answer within {HANG_GUARD:?}"))
}

/// A JSON-RPC `tools/call` of `tool` with no arguments.
pub fn tool_call(id: impl Into<Value>, tool: &str) -> Value {
    json!({
        "jsonrpc": "2.0", "id": id.into(), "method": "tools/call",
        "params": {"name": tool, "arguments": {}},
    })
}
