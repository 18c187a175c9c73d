//! What a response holds, as a message type shows it to the core: each answer
//! with its id, and what its result says.

use serde_json::Value;

/// The id an answer carries, to match it to its call.
#[derive(Debug)]
pub enum AnswerId<'a> {
    /// The message type has one answer per request and no id on it (rmcp's
    /// typed results): the answer is the call's.
    Implicit,
    /// The answer has no id: it answers no call.
    Missing,
    /// The `id` of a JSON-RPC response.
    Json(&'a Value),
    /// An integer id.
    Integer(i64),
    /// A string id.
    String(&'a str),
    /// Any other id, as JSON.
    Owned(Value),
}

/// One answer of a response.
#[derive(Debug)]
pub enum Answer<'a, B> {
    /// A result.
    Result(&'a mut B),
    /// A JSON-RPC error response; `code` is `None` when it has no integer code.
    Error {
        /// The error's code.
        code: Option<i64>,
    },
    /// The inner service failed with an error that is not a JSON-RPC error
    /// response (a transport error, say).
    ServiceError,
}

/// A result read as the answer to a `tools/call`.
#[derive(Debug)]
pub enum CallResult<'a, T> {
    /// The tool's result.
    Tool {
        /// The result.
        result: &'a mut T,
        /// Whether it says `isError: true`.
        is_error: bool,
    },
    /// A task handle: the result comes later, under `task_id`.
    Task {
        /// The id of the task.
        task_id: &'a str,
        /// How long the task is kept, if the server said.
        ttl_ms: Option<u64>,
    },
    /// Neither (a result of another kind).
    Other,
}

/// A result read as the answer to a `tasks/get`: what it says of the task, as
/// sent. What a status means is the core's to decide (`crate::tasks::rule`).
#[derive(Debug)]
pub struct TaskState<'a, T> {
    /// The task's `status` as sent (`"working"`, `"completed"`, `"failed"`, ...);
    /// `None` when the answer has none.
    pub status: Option<&'a str>,
    /// The task's result, when the answer embeds it (from protocol 2026-07-28).
    pub result: Option<&'a mut T>,
}

impl<T> TaskState<'_, T> {
    /// An answer that says nothing of a task.
    pub fn unknown() -> Self {
        Self {
            status: None,
            result: None,
        }
    }
}
