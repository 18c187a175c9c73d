//! The extension point for message types: the crate-owned model of one exchange
//! (a request, and the response to it), which a message type reads and builds.
//!
//! Crate-private: the traits are `pub` in a private module (sealed), so that the
//! layer's public `Service` impl can name them in its bounds while no user can
//! implement or name them. A user puts the layer over a `tower::Service` of one
//! of the message types the crate supports (a JSON `Value`, or rmcp's and
//! tower-mcp's messages behind their features).
//!
//! A message type does only what only it can, with three jobs:
//!
//! - [`Request`]: list the [`Calls`] of a request (for each, its id and what it
//!   asks: a tool, a task's state or result, anything else), and, for the
//!   request span, a [`RequestView`] of it;
//! - [`Response`]: visit the answers of a response (for each, its [`AnswerId`]
//!   and whether it is a result, an error code or a failure of the service), and
//!   build a response from the layer's own [`LayerAnswers`];
//! - [`AnswerBody`] and [`ToolResult`]: read a result as what its call asked
//!   for (a tool result, a task handle, a task's state, a list of tools), and
//!   rewrite the text of a tool result.
//!
//! Everything else is the core's, written once for every message type:
//! matching answers to calls (`crate::answers`), outcomes for the span, task
//! memory, the tool names the metric records, timeouts and cancellation, and
//! the layer's own answers (`crate::unanswered`).

mod answer;
mod call;
mod layer_answer;
mod outcome;
pub(crate) mod request_id;
mod view;

pub(crate) use answer::{Answer, AnswerId, CallResult, TaskState};
pub(crate) use call::{Call, CallId, CallKind, Calls};
pub(crate) use layer_answer::{LayerAnswer, LayerAnswers, UnansweredCall};
pub(crate) use outcome::Outcome;
pub(crate) use view::RequestView;

/// A request the layer can read before the inner service takes it.
pub trait Request {
    /// What stops the work the handler starts beyond its future (a
    /// cancellation token); [`std::convert::Infallible`] where there is none.
    type Cancellation;

    /// The calls the request makes, in order: one, or a batch's.
    fn calls(&self) -> Calls;

    /// What the request span records of the request; `None` when the message is
    /// not one request or notification (a batch, or a response from the client).
    ///
    /// Called only when a subscriber records the span, before `calls`.
    fn view(&self) -> Option<RequestView<'_>>;

    /// Whether the handler of such a request may hand a task's operation to a
    /// task runtime that catches its panics for the layer (rmcp's
    /// `TaskManager`, with `catch_task_panics`): the layer's memory of tasks is
    /// then current on the thread while the handler runs.
    const SPAWNS_TASKS: bool = false;

    /// Called only when a timeout applies to the request, before the inner
    /// service takes it: what [`Request::cancel`] will stop if the layer gives
    /// up on the request. `None` by default.
    fn cancellation(&self) -> Option<Self::Cancellation> {
        None
    }

    /// Stops the work the handler started beyond its future, once the layer has
    /// given up on the request and dropped that future.
    fn cancel(cancellation: &Self::Cancellation) {
        let _ = cancellation;
    }
}

/// A response the layer can read and, in place of the inner service's, build.
///
/// `Error` is the inner service's error type: a message type that carries
/// JSON-RPC errors in its error (rmcp's `ErrorData`) reports them as answers.
pub trait Response<Error>: Sized {
    /// The result of a successful answer.
    type Body: AnswerBody;

    /// Calls `visit` for every answer `response` holds, in order, with its id.
    /// Answers that are neither a result nor an error (a request from the
    /// server, say) are not visited.
    fn visit_answers(
        response: &mut Result<Self, Error>,
        visit: impl FnMut(AnswerId<'_>, Answer<'_, Self::Body>),
    );

    /// Whether `response` is a batch of answers (a JSON array). A response of
    /// the other shape than its request answers none of the request's calls.
    fn is_batch(response: &Result<Self, Error>) -> bool {
        let _ = response;
        false
    }

    /// The response that carries `answers`, the layer's own, in place of the
    /// inner service's (after a panic or a timeout).
    fn layer_response(answers: LayerAnswers<'_>) -> Result<Self, Error>;

    /// Removes from `response` the mark of an answer the inner service made
    /// itself ([`NoAnswer::mark`](crate::NoAnswer::mark)) and returns it;
    /// `None` for a message type that carries none. Called for every response
    /// of the inner service, so a mark never leaves the layer.
    fn take_no_answer(response: &mut Result<Self, Error>) -> Option<crate::NoAnswer> {
        let _ = response;
        None
    }
}

/// The result of a successful answer, read as the kind of call it answers.
pub trait AnswerBody {
    /// The result of a `tools/call`.
    type Tool: ToolResult;
    /// The result of a task, as a `tasks/get` or `tasks/result` delivers it.
    type Task: ToolResult;

    /// This result as the answer to a `tools/call`.
    fn as_call_result(&mut self) -> CallResult<'_, Self::Tool>;

    /// This result as the answer to a `tasks/get`: the task's status as sent,
    /// and its result when the answer embeds it.
    fn as_task_state(&mut self) -> TaskState<'_, Self::Task> {
        TaskState::unknown()
    }

    /// This result as the answer to a `tasks/result`: the task's result.
    fn as_task_result(&mut self) -> Option<&mut Self::Task> {
        None
    }

    /// This result as the answer to a `tools/list`: `visit` is called with the
    /// name of each tool it lists, in order. Nothing that is not a tool's
    /// name is visited.
    fn visit_listed_tools(&self, visit: impl FnMut(&str)) {
        let _ = visit;
    }
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
