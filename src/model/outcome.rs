//! [`Outcome`]: how a request ended, as its span records it.

/// How a request ended, read from its answer: the inner service's, or the one the
/// layer made after a panic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub(crate) enum Outcome {
    /// A result that is not an error, or no answer at all (a notification).
    Success,
    /// A `tools/call` result with `isError: true`.
    ToolError,
    /// A JSON-RPC error response, with its code.
    ErrorResponse {
        /// The JSON-RPC error code (`-32602`, say).
        code: i64,
    },
    /// The inner service failed with an error that is not a JSON-RPC error
    /// response (a transport error, say).
    ServiceError,
}

impl Outcome {
    /// `self`, or `next` if `self` is a success: in a batch the first failure
    /// describes the whole message.
    pub(crate) fn or_else(self, next: impl FnOnce() -> Outcome) -> Outcome {
        match self {
            Outcome::Success => next(),
            failure => failure,
        }
    }
}
