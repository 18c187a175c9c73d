//! Panics of task operations, caught where the task runs and answered where its
//! result reaches the client.
//!
//! The operation of a task runs on a task of its own, spawned by the server's
//! task runtime, far from the layer. What catches its panic there (see
//! `rmcp::catch_task_panics`) stores the result the task completes with as a
//! plain error text without the payload, and leaves the caught panic here under
//! the task id. When the layer first delivers that task's result it takes the
//! panic back, answers exactly as for a direct call (redacted, or with the
//! payload when the layer exposes panic messages) and keeps that answer with the
//! task for every later delivery. Nothing of the payload is in the stored
//! result, so a result that reaches the client some other way leaks nothing.
//!
//! The payload is logged once, by the layer, so that its `redact_secrets` and
//! `redact_with` apply: at the first delivery, or when the layer forgets a task
//! whose result it never delivered. Where the panic is caught no layer's
//! settings are known, so nothing of the payload is logged there.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex, MutexGuard, PoisonError};

use compact_str::CompactString;

use crate::config::Config;
use crate::model::{LayerAnswer, ToolResult, UnansweredCall};
use crate::panic::CaughtPanic;
use crate::render::ErrorRenderer;

/// The text a task that panicked completes with, before the layer answers for it.
#[cfg_attr(not(feature = "rmcp"), allow(dead_code))]
pub(crate) const PANICKED_TASK_TEXT: &str = crate::panic::HIDDEN_TOOL_MESSAGE;

/// How many caught panics wait for their task's delivery at most, for all
/// layers of the process together: past it the oldest is dropped.
const MAX_WAITING_PANICS: usize = super::DEFAULT_MAX_REMEMBERED_TASKS;

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
    let mut dropped = None;
    if caught.by_task.len() >= MAX_WAITING_PANICS {
        let oldest = caught
            .by_task
            .iter()
            .min_by_key(|(_, (order, _))| *order)
            .map(|(id, _)| id.clone());
        dropped = oldest.and_then(|id| caught.by_task.remove_entry(&id));
    }
    let order = caught.next_order;
    caught.next_order += 1;
    caught.by_task.insert(task_id.into(), (order, panic));
    drop(caught);
    if let Some((id, (_, panic))) = dropped {
        panic.log_unclaimed_task(&id);
    }
}

/// The panic of task `task_id`'s operation, if it panicked; forgotten here.
pub(crate) fn take(task_id: &str) -> Option<CaughtPanic> {
    caught().by_task.remove(task_id).map(|(_, panic)| panic)
}

/// The text a direct call of `tool` is answered with when it panics with
/// `panic`: what the result of task `task_id` delivers in place of the text it
/// completed with. Logs the panic.
pub(crate) fn answer<R: ErrorRenderer>(
    panic: &CaughtPanic,
    tool: &str,
    task_id: &str,
    config: &Config<R>,
) -> String {
    let call = UnansweredCall::new(Some(tool), Some(&task_id));
    let LayerAnswer::ToolError { text } = crate::unanswered::panic_answer(panic, call, config)
    else {
        unreachable!("a panicked call with a tool name is answered with a tool error")
    };
    text
}

/// Puts `text` in place of the one text item, `PANICKED_TASK_TEXT`, that the
/// task completed with.
pub(crate) fn replace_text<T: ToolResult>(result: &mut T, text: String) {
    if let Some(first) = result.error_texts().and_then(|mut texts| texts.next()) {
        *first = text;
    }
}
