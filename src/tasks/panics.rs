//! Panics of task operations, caught where the task runs and answered where its
//! result reaches the client.
//!
//! The operation of a task runs on a task of its own, spawned by the server's
//! task runtime, far from the layer. What catches its panic there (see
//! `rmcp::catch_task_panics`) stores the result the task completes with as a
//! plain error text without the payload, and leaves the caught panic here under
//! the task id. When the layer delivers that task's result it takes the panic
//! back and answers exactly as for a direct call (redacted, or with the payload
//! when the layer exposes panic messages). Nothing of the payload is in the
//! stored result, so a result that reaches the client some other way leaks nothing.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex, MutexGuard, PoisonError};

use compact_str::CompactString;

use super::MAX_REMEMBERED_TASKS;
use crate::config::Config;
use crate::exchange::{LayerAnswer, ToolResult, UnansweredCall};
use crate::panic::CaughtPanic;
use crate::render::ErrorRenderer;

/// The text a task that panicked completes with, before the layer answers for it.
#[cfg_attr(not(feature = "rmcp"), allow(dead_code))]
pub(crate) const PANICKED_TASK_TEXT: &str = crate::panic::HIDDEN_TOOL_MESSAGE;

/// Caught panics by task id, oldest first out when full.
#[derive(Default)]
struct Caught {
    by_task: HashMap<CompactString, (u64, CaughtPanic)>,
    next_order: u64,
}

static CAUGHT: LazyLock<Mutex<Caught>> = LazyLock::new(Mutex::default);

fn caught() -> MutexGuard<'static, Caught> {
    CAUGHT.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Keeps the panic of the operation of task `task_id` until its result is delivered.
#[cfg_attr(not(feature = "rmcp"), allow(dead_code))]
pub(crate) fn record(task_id: &str, panic: CaughtPanic) {
    let mut caught = caught();
    if caught.by_task.len() >= MAX_REMEMBERED_TASKS {
        let oldest = caught
            .by_task
            .iter()
            .min_by_key(|(_, (order, _))| *order)
            .map(|(id, _)| id.clone());
        if let Some(id) = oldest {
            caught.by_task.remove(&id);
        }
    }
    let order = caught.next_order;
    caught.next_order += 1;
    caught.by_task.insert(task_id.into(), (order, panic));
}

/// The panic of task `task_id`'s operation, if it panicked; forgotten here.
pub(crate) fn take(task_id: &str) -> Option<CaughtPanic> {
    caught().by_task.remove(task_id).map(|(_, panic)| panic)
}

/// Makes `result` (the error result the panicked task completed with) the
/// answer a direct call of `tool` gets when it panics.
pub(crate) fn answer<T, R>(
    panic: &CaughtPanic,
    result: &mut T,
    tool: &str,
    task_id: &str,
    config: &Config<R>,
) where
    T: ToolResult,
    R: ErrorRenderer,
{
    let call = UnansweredCall::new(Some(tool), Some(&task_id));
    let LayerAnswer::ToolError { text } = panic.answer(call, config) else {
        unreachable!("a panicked call with a tool name is answered with a tool error")
    };
    // The task completed with one text item, `PANICKED_TASK_TEXT`: it becomes the answer.
    if let Some(first) = result.error_texts().and_then(|mut texts| texts.next()) {
        *first = text;
    }
}
