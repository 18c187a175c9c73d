//! How a request failed, classified once for the span and the metric.

use std::fmt;

use super::NoAnswer;
use crate::model::Outcome;

/// Who answered the request, when the request failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cause {
    /// The inner service: the outcome says what went wrong.
    Service,
    /// The layer, after the handler panicked.
    Panic,
    /// The layer, after the handler ran out of time.
    Timeout,
    /// The inner service, in place of a server that gave no answer, for this
    /// reason.
    NoAnswer(NoAnswer),
}

impl Cause {
    /// Whether the server answered the request with a success: not an
    /// `isError` result (the official Python SDK answers a tool it does not
    /// know with one), an error response, the layer's own answer, or one the
    /// inner service made in the server's place.
    pub(super) fn answered_with_success(self, outcome: Outcome) -> bool {
        self == Cause::Service && matches!(outcome, Outcome::Success)
    }
}

/// JSON-RPC error codes that say the client sent something wrong, not that the
/// server failed: parse error, invalid request, method not found, invalid
/// params, and MCP's resource not found. A server span that answers one keeps
/// its status unset; `error.type` and `rpc.response.status_code` still say it.
const CLIENT_ERROR_CODES: [i64; 5] = [-32700, -32600, -32601, -32602, -32002];

/// A request that failed: its outcome and the cause the span records.
#[derive(Debug, Clone, Copy)]
pub(super) struct Failure {
    pub(super) outcome: Outcome,
    /// `mcp_tool_errors.cause`: `tool_error`, `panic`, `timeout`,
    /// `protocol_error`, `service_error`, or a [`NoAnswer`]'s error type.
    pub(super) cause: &'static str,
    error_type: ErrorType,
}

impl Failure {
    /// The failure of a request that ended with `outcome`, answered by `cause`;
    /// `None` for a success the inner service answered.
    pub(super) fn of(cause: Cause, outcome: Outcome) -> Option<Self> {
        let (cause, error_type) = match (cause, outcome) {
            (Cause::Panic, _) => ("panic", ErrorType::of(outcome)),
            (Cause::Timeout, _) => ("timeout", ErrorType::Named("timeout")),
            (Cause::NoAnswer(reason), _) => {
                let error_type = reason.error_type();
                (error_type, ErrorType::Named(error_type))
            }
            (Cause::Service, Outcome::Success) => return None,
            (Cause::Service, Outcome::ToolError) => ("tool_error", ErrorType::of(outcome)),
            (Cause::Service, Outcome::ErrorResponse { .. }) => {
                ("protocol_error", ErrorType::of(outcome))
            }
            (Cause::Service, Outcome::ServiceError) => ("service_error", ErrorType::of(outcome)),
        };
        Some(Self {
            outcome,
            cause,
            error_type,
        })
    }

    /// `error.type`: `timeout` for the layer's answer to a handler that ran
    /// out of time, a [`NoAnswer`]'s for an answer the inner service made
    /// itself; else `tool_error`, the JSON-RPC error code, or `_OTHER`.
    pub(super) fn error_type(&self) -> ErrorType {
        self.error_type
    }

    /// `rpc.response.status_code`: the JSON-RPC error code, for an error
    /// response.
    pub(super) fn status_code(&self) -> Option<i64> {
        match self.outcome {
            Outcome::ErrorResponse { code } => Some(code),
            _ => None,
        }
    }

    /// Whether the span's status is `ERROR`: for every failure except a JSON-RPC
    /// error the client caused.
    pub(super) fn is_error_status(&self) -> bool {
        match self.outcome {
            Outcome::ErrorResponse { code } => !CLIENT_ERROR_CODES.contains(&code),
            _ => true,
        }
    }
}

/// The value of `error.type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ErrorType {
    /// A name: `timeout`, `tool_error`, a [`NoAnswer`]'s.
    Named(&'static str),
    /// A JSON-RPC error code.
    Code(i64),
    Other,
}

impl ErrorType {
    /// What `outcome` itself says.
    fn of(outcome: Outcome) -> Self {
        match outcome {
            Outcome::ToolError => Self::Named("tool_error"),
            Outcome::ErrorResponse { code } => Self::Code(code),
            // A panicked notification has no answer to read a failure from.
            Outcome::Success | Outcome::ServiceError => Self::Other,
        }
    }
}

impl fmt::Display for ErrorType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Named(name) => f.write_str(name),
            Self::Code(code) => write!(f, "{code}"),
            Self::Other => f.write_str("_OTHER"),
        }
    }
}
