//! [`TaskEvent`]: what one response says happened to a task.

/// What one response says happened to a task (the tasks extension,
/// `io.modelcontextprotocol/tasks`), as the core reads it (see
/// [`rule`](super::rule)).
#[derive(Debug)]
pub(crate) enum TaskEvent<'a, T> {
    /// A `tools/call` of `tool` was answered with a task handle: the result
    /// comes later, under `task_id`.
    Created {
        tool: &'a str,
        task_id: &'a str,
        /// How long the task is kept, if the server said.
        ttl_ms: Option<u64>,
    },
    /// The result of task `task_id` reaches the client.
    Result { task_id: &'a str, result: &'a mut T },
}
