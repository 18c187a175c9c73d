//! The extension point for message types: how the layer reads a request and finds,
//! in its response, the results of the tool calls it made.
//!
//! Crate-private: the traits are `pub` in a private module (sealed), so that the
//! layer's public `Service` impl can name them in its bounds while no user can
//! implement or name them. A user puts the layer over a `tower::Service` of one
//! of the message types the crate supports (a JSON `Value`, or rmcp's and
//! tower-mcp's messages behind their features). The layer itself knows nothing of
//! JSON-RPC framing; a message type plugs in with three small traits:
//!
//! - [`Request`] on the request type: what the layer must remember about the
//!   request before it hands the request on (its id, and the tool name of a
//!   `tools/call`), and, for the request span, a [`RequestView`] of it;
//! - [`Pending`] on that memory: where the tool results are in the response, how
//!   to answer the request when the inner service does not (its handler
//!   panicked, or ran out of time), and the request's [`Outcome`] for its span;
//! - [`ToolResult`] on the result of one `tools/call`: its error texts, and how to
//!   add one.
//!
//! The crate implements them for [`serde_json::Value`] (see `JsonPending`) and,
//! behind features, for rmcp and tower-mcp messages.

mod outcome;
pub(crate) mod request_id;
mod view;

pub(crate) use outcome::Outcome;
pub(crate) use view::RequestView;

/// A request the layer can read before the inner service takes it.
pub trait Request {
    /// What the layer keeps of the request while the inner service handles it.
    type Pending;

    /// Reads what the layer needs to find the request's tool results in the
    /// response, or to answer the request itself.
    fn pending(&self) -> Self::Pending;

    /// What the request span records of the request; `None` when the message is
    /// not one request or notification (a batch, or a response from the client).
    ///
    /// Called only when a subscriber records the span, before `pending`.
    fn view(&self) -> Option<RequestView<'_>>;

    /// Called only when a timeout applies to the request, before the inner
    /// service takes it: keeps in `pending` whatever lets [`Pending::cancel`]
    /// stop the work the handler starts beyond its future (rmcp's cancellation
    /// token). Does nothing by default.
    fn prepare_cancellation(&mut self, pending: &mut Self::Pending) {
        let _ = pending;
    }
}

/// What the layer remembered of a request in flight, used to rewrite its response.
pub trait Pending<Response, Error> {
    /// The result of one `tools/call`, as it appears in `Response`.
    type Result: ToolResult;

    /// The result of a task as it appears in `Response` (in a `tasks/get` or
    /// `tasks/result` response).
    type TaskResult: ToolResult;

    /// Visits the answers in `response`, in one pass: calls `rewrap` with the
    /// tool name and the result of every `tools/call` answered (results of
    /// other requests, protocol errors and results whose id matches no
    /// recorded `tools/call` are not visited), and returns what the response
    /// says about a task: a `tools/call` answered with a task handle, or the
    /// delivery of a task's result or failure ([`TaskExchange::None`] for a
    /// message type without tasks). What to do with either is the core's.
    fn visit_answers<'a>(
        &'a self,
        response: &'a mut Response,
        rewrap: impl FnMut(&str, &mut Self::Result),
    ) -> TaskExchange<'a, Self::TaskResult>;

    /// Builds the response the layer sends in place of the inner service's, when
    /// the handler panicked or ran out of time. `answer` is called once for each
    /// request that expects a response, in order, and says what to send; a
    /// notification gets no call and no response.
    fn layer_response(
        &self,
        answer: impl FnMut(UnansweredCall<'_>) -> LayerAnswer,
    ) -> Result<Response, Error>;

    /// How the request ended, read from `result`, the inner service's answer
    /// (already rewrapped). Called only when a subscriber records the request
    /// span. The outcome of the layer's own answers (after a panic or a timeout)
    /// is read by the core from its [`LayerAnswer`]s, not here.
    fn outcome(&self, result: &Result<Response, Error>) -> Outcome;

    /// The tool name of every `tools/call` in the request (a batch may hold
    /// several), in order: the layer picks the request's timeout from them.
    fn called_tools(&self) -> impl Iterator<Item = &str>;

    /// Stops the work the handler started beyond its future, once the layer has
    /// given up on the request and dropped that future. Does nothing by default;
    /// see [`Request::prepare_cancellation`].
    fn cancel(&self) {}
}

/// What one response says about a task (the tasks extension,
/// `io.modelcontextprotocol/tasks`), as [`Pending::visit_answers`] reads it.
#[derive(Debug)]
#[non_exhaustive]
pub enum TaskExchange<'a, T> {
    /// Nothing the layer needs: not a task, or a task still running.
    None,
    /// A `tools/call` of `tool` was answered with a task handle: the result
    /// comes later, under `task_id`.
    Created {
        /// The tool called.
        tool: &'a str,
        /// The id of the task.
        task_id: &'a str,
        /// How long the task is kept, if the server said.
        ttl_ms: Option<u64>,
    },
    /// The final result of task `task_id` reaches the client.
    Result {
        /// The id of the task.
        task_id: &'a str,
        /// The task's result: the result of the original `tools/call`.
        result: &'a mut T,
    },
    /// Task `task_id` ended without a result (failed, or cancelled).
    Ended {
        /// The id of the task.
        task_id: &'a str,
    },
}

/// A `tools/call` result whose text items the layer can rewrap.
pub trait ToolResult {
    /// The text of every text item, in order, when this is an `isError: true` result
    /// the layer may rewrite; `None` when it is not an error or is malformed (then
    /// it must be left exactly as it is).
    fn error_texts(&mut self) -> Option<impl Iterator<Item = &mut String>>;

    /// Inserts a text item with `text` before all other content.
    fn insert_text(&mut self, text: String);
}

/// One request that expects an answer the inner service will not give: its
/// handler panicked, or ran out of time.
#[derive(Debug, Clone, Copy)]
pub struct UnansweredCall<'a> {
    tool: Option<&'a str>,
    id: Option<&'a dyn std::fmt::Debug>,
}

impl<'a> UnansweredCall<'a> {
    /// A request; `tool` is `Some` for a `tools/call`, `id` is for the log.
    pub fn new(tool: Option<&'a str>, id: Option<&'a dyn std::fmt::Debug>) -> Self {
        Self { tool, id }
    }

    /// The tool called, if the request is a `tools/call`.
    pub fn tool(&self) -> Option<&'a str> {
        self.tool
    }

    /// The request id, if the message type has one.
    pub fn id(&self) -> Option<&'a dyn std::fmt::Debug> {
        self.id
    }
}

/// What the layer sends for an [`UnansweredCall`], in place of the inner
/// service's answer: one of the two shapes every message type can build, so
/// that a new reason for the layer to answer (a new cause beside a panic and a
/// timeout) is written in the core only and needs nothing of the message types.
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

/// The JSON-RPC error code of an internal error.
pub(crate) const INTERNAL_ERROR: i32 = -32603;
