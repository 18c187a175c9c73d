//! When the upstream gives no answer: the sentence the client reads, and the
//! answer that carries it to each request of the message.
//!
//! A `tools/call` gets an `isError` result holding the sentence, which the layer
//! in front then renders into the element like any tool error; any other request
//! gets a `-32603` error with the same sentence. What went wrong in detail (the
//! connection error, the TLS alert) goes to the log, not to the model. Each
//! answer is marked with the failure's [`NoAnswer`], so that the layer's span
//! says which in `error.type` (`upstream_unreachable`, `upstream_closed`,
//! `upstream_5xx`, `drained`, `upstream_timeout`, `upstream_too_large`); the
//! layer removes the mark, so the client's bytes do not change.

use std::time::Duration;

use hyper::{StatusCode, Uri};
use mcp_tool_errors::NoAnswer;
use serde_json::Value;

use crate::http::body::MAX_MESSAGE_BYTES;
use crate::jsonrpc::own_answer;
use crate::telemetry::describe;
use crate::telemetry::event;
use crate::upstream::client::UpstreamError;

/// Why the upstream did not answer a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Failure {
    /// No connection: refused, no such host, a TLS handshake that failed.
    Unreachable,
    /// The connection, or the event stream, ended before the answer.
    ClosedBeforeAnswer,
    /// A 5xx without a JSON-RPC body (a gateway's 502/503/504 page).
    Status(StatusCode),
    /// The proxy was stopped, and the drain timeout passed first.
    Drained,
    /// No response head within this time ([`head_timeout`](crate::upstream::head_timeout)).
    NoAnswerWithin(Duration),
    /// A JSON answer or an event longer than [`MAX_MESSAGE_BYTES`].
    TooLarge,
}

impl Failure {
    /// The sentence the client reads.
    pub(crate) fn sentence(self) -> String {
        match self {
            Self::Unreachable => "The server could not be reached.".to_owned(),
            Self::ClosedBeforeAnswer => {
                "The server closed the connection before answering.".to_owned()
            }
            Self::Status(status) => format!(
                "The server answered HTTP {} instead of a result.",
                status.as_u16()
            ),
            Self::Drained => {
                "The proxy shut down before the server answered; the request was cancelled."
                    .to_owned()
            }
            Self::NoAnswerWithin(timeout) => format!(
                "The server did not answer within {}; the request was cancelled.",
                humantime::format_duration(timeout)
            ),
            Self::TooLarge => format!(
                "The server sent a message larger than {} MiB, the most the proxy reads.",
                MAX_MESSAGE_BYTES / (1024 * 1024)
            ),
        }
    }

    /// The reason the layer's span gives as `error.type`: one value for
    /// every 5xx, since each value is a series of its own in a metrics
    /// backend (the status is in the log).
    fn reason(self) -> NoAnswer {
        match self {
            Self::Unreachable => NoAnswer::UpstreamUnreachable,
            Self::ClosedBeforeAnswer => NoAnswer::UpstreamClosed,
            Self::Status(_) => NoAnswer::Upstream5xx,
            Self::Drained => NoAnswer::Drained,
            Self::NoAnswerWithin(_) => NoAnswer::UpstreamTimeout,
            Self::TooLarge => NoAnswer::UpstreamTooLarge,
        }
    }

    /// The answer to each of `requests` (each id, and whether it is a
    /// `tools/call`; sent as a `batch` or one): the requests nothing answered
    /// ([`answer_rewriter`](crate::exchange::answer_rewriter)), so that the proxy
    /// never answers a request twice. `Null` when there is none.
    pub(crate) fn answer_to(self, requests: &[(Value, bool)], batch: bool) -> Value {
        own_answer::unanswered_all(requests, batch, &self.sentence(), self.reason())
    }
}

impl Failure {
    /// Why the upstream client gave no response to a request to `endpoint`
    /// (`error`, logged with its sources): no connection, or one that ended
    /// first.
    pub(crate) fn no_response(endpoint: &Uri, error: &UpstreamError) -> Self {
        let described = describe(error);
        event!(warn, %endpoint, error = %described, "no answer from {endpoint}: {described}");
        if error.is_connect() {
            Self::Unreachable
        } else {
            Self::ClosedBeforeAnswer
        }
    }

    /// Logs the upstream's answer with a 5xx `status`, which the client gets
    /// as [`Failure::Status`].
    pub(crate) fn log_status(status: StatusCode) {
        event!(
            warn,
            status = status.as_u16(),
            "the server answered HTTP {status}"
        );
    }

    /// The end of a drain came first, which is logged.
    pub(crate) fn drained() -> Self {
        crate::telemetry::log("the drain timeout passed before the server answered");
        Self::Drained
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::jsonrpc::message::requests;

    #[test]
    fn a_tool_call_gets_an_error_result_and_anything_else_an_internal_error() {
        let batch = json!([
            {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "a"}},
            {"jsonrpc": "2.0", "method": "notifications/progress"},
            {"jsonrpc": "2.0", "id": "p", "method": "ping"},
        ]);
        let sentence = "The server answered HTTP 502 instead of a result.";
        let mut expected = json!([
            {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": sentence}], "isError": true}},
            {"jsonrpc": "2.0", "id": "p", "error": {"code": -32603, "message": sentence}},
        ]);
        // Marked for the layer, which removes the mark.
        NoAnswer::Upstream5xx.mark(&mut expected);
        assert_eq!(
            Failure::Status(StatusCode::BAD_GATEWAY).answer_to(&requests(&batch), true),
            expected
        );
    }

    #[test]
    fn no_request_left_is_no_answer() {
        assert_eq!(
            Failure::ClosedBeforeAnswer.answer_to(&[], false),
            Value::Null
        );
        assert_eq!(Failure::ClosedBeforeAnswer.answer_to(&[], true), json!([]));
    }
}
