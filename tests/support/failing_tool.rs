//! An inner service whose every call is a failed tool: the tests of sanitizing
//! and the benches of rewrapping feed the layer upstream error text through it.

use std::convert::Infallible;
use std::future::{Ready, ready};
use std::task::{Context, Poll};

use serde_json::{Value, json};
use tower::Service;

/// Answers every request with an `isError: true` result whose one text item is
/// `text`, at once.
#[derive(Clone, Debug)]
pub struct FailingTool {
    /// The text of every failed result.
    pub text: String,
}

impl Service<Value> for FailingTool {
    type Response = Value;
    type Error = Infallible;
    type Future = Ready<Result<Value, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Value) -> Self::Future {
        ready(Ok(json!({
            "jsonrpc": "2.0", "id": request["id"],
            "result": {"content": [{"type": "text", "text": self.text}], "isError": true},
        })))
    }
}
