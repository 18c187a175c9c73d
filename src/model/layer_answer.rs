//! The layer's own answers, made in the core (after a panic or a timeout) and
//! handed to a message type to build its response.

use super::outcome::Outcome;
use super::request_id::RequestId;

/// The JSON-RPC error code of an internal error.
pub(crate) const INTERNAL_ERROR: i32 = -32603;

/// What the layer sends for one call, in place of the inner service's answer:
/// one of the two shapes every message type can build, so that a new reason
/// for the layer to answer is written in the core only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LayerAnswer {
    /// A successful `tools/call` response with `isError: true` and one text item.
    ToolError {
        /// The text of the single text item, already rendered.
        text: String,
    },
    /// A JSON-RPC error response with `code` and `message`, and no `data`.
    ErrorResponse {
        /// The JSON-RPC error code ([`INTERNAL_ERROR`], say).
        code: i32,
        /// The error message.
        message: String,
    },
}

impl LayerAnswer {
    /// An internal error (`-32603`) with `message`.
    pub(crate) fn internal_error(message: String) -> Self {
        Self::ErrorResponse {
            code: INTERNAL_ERROR,
            message,
        }
    }

    /// How the request this answers ended, as its span records it.
    pub(crate) fn outcome(&self) -> Outcome {
        match self {
            Self::ToolError { .. } => Outcome::ToolError,
            Self::ErrorResponse { code, .. } => Outcome::ErrorResponse {
                code: i64::from(*code),
            },
        }
    }
}

/// The layer's answers to the calls of one message that expect one, in order,
/// each with its call's id (`None` where the message type shows none).
#[derive(Debug)]
pub struct LayerAnswers<'a> {
    pub(crate) batch: bool,
    pub(crate) answers: Vec<(Option<&'a RequestId>, LayerAnswer)>,
}

impl<'a> LayerAnswers<'a> {
    /// Whether the message was a batch (answered with an array, even of one).
    pub fn is_batch(&self) -> bool {
        self.batch
    }

    /// The answers, in order.
    pub fn into_answers(self) -> impl Iterator<Item = (Option<&'a RequestId>, LayerAnswer)> {
        self.answers.into_iter()
    }

    /// The first answer: the only one, for a message type without batches.
    pub fn into_first(self) -> Option<(Option<&'a RequestId>, LayerAnswer)> {
        self.answers.into_iter().next()
    }
}

/// One request that expects an answer the inner service will not give, as the
/// log names it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct UnansweredCall<'a> {
    tool: Option<&'a str>,
    id: Option<&'a dyn std::fmt::Debug>,
}

impl<'a> UnansweredCall<'a> {
    /// A request; `tool` is `Some` for a `tools/call`, `id` is for the log.
    pub(crate) fn new(tool: Option<&'a str>, id: Option<&'a dyn std::fmt::Debug>) -> Self {
        Self { tool, id }
    }

    /// The tool called, if the request is a `tools/call`.
    pub(crate) fn tool(&self) -> Option<&'a str> {
        self.tool
    }

    /// The request id, if the message type has one.
    pub(crate) fn id(&self) -> Option<&'a dyn std::fmt::Debug> {
        self.id
    }
}
