//! The task rule: what an answer about a task means, decided here once for
//! every message type, which only reports what the answer says (the handle's
//! shape, the status as sent, the result when one is embedded).
//!
//! - A `tools/call` answered with a task handle creates the task: the layer
//!   remembers its tool.
//! - A result delivered for a remembered task is rewrapped as the result of a
//!   direct call of its tool, on every delivery, in any order: the result of a
//!   `tasks/result` (2025-11-25), and the result a `tasks/get` embeds
//!   (2026-07-28) when the status ends the task with one, `completed` or
//!   `failed` (the official SDKs store a tool's `isError` result under
//!   `failed`).
//! - Nothing a status says forgets a task, nor does a JSON-RPC error answering
//!   a `tasks/get` or `tasks/result` (a transient `-32603`, say): a client may
//!   poll `failed` and then fetch the result, or retry. A task is forgotten
//!   only once its time to live has passed, or when newer tasks push it out of
//!   the memory's bound, least recently used first.

use super::TaskEvent;
use crate::model::TaskState;

/// The statuses with which a `tasks/get` answer may carry the task's result.
const ENDED_WITH_RESULT: [&str; 2] = ["completed", "failed"];

/// What a `tasks/get` answer about task `task_id` delivers, if anything.
pub(crate) fn polled<'a, T>(task_id: &'a str, state: TaskState<'a, T>) -> Option<TaskEvent<'a, T>> {
    let ends_with_result = state
        .status
        .is_some_and(|status| ENDED_WITH_RESULT.contains(&status));
    match state.result {
        Some(result) if ends_with_result => Some(TaskEvent::Result { task_id, result }),
        _ => None,
    }
}

/// What a `tasks/result` answer about task `task_id` delivers: its result.
pub(crate) fn fetched<'a, T>(
    task_id: &'a str,
    result: Option<&'a mut T>,
) -> Option<TaskEvent<'a, T>> {
    result.map(|result| TaskEvent::Result { task_id, result })
}
