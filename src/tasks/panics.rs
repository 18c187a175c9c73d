//! Panics of task operations, caught where the task runs and answered where its
//! result reaches the client.
//!
//! The operation of a task runs on a task of its own, spawned by the server's
//! task runtime, far from the layer. What catches its panic there (see
//! `rmcp::catch_task_panics`) stores the result the task completes with as a
//! plain error text without the payload, and leaves the caught panic with the
//! layer whose `tools/call` spawned the task: the layer marks itself
//! [current](Current) on the thread while it polls the handler, which is where
//! the operation is handed to the task runtime. When the layer first delivers
//! that task's result it answers exactly as for a direct call (redacted, or
//! with the payload when the layer exposes panic messages) and keeps that
//! answer with the task for every later delivery. Nothing of the payload is in
//! the stored result, so a result that reaches the client some other way leaks
//! nothing.
//!
//! The payload is logged once, by the layer, so that its `redact_secrets` and
//! `redact_with` apply: at the first delivery, or when the layer forgets a task
//! whose result it never delivered. Where the panic is caught no layer's
//! settings are known, so nothing of the payload is logged there.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock, PoisonError};

use compact_str::CompactString;

use super::TaskMemory;
use crate::config::Config;
use crate::model::{LayerAnswer, ToolResult, UnansweredCall};
use crate::panic::CaughtPanic;
use crate::render::ErrorRenderer;

/// The text a task that panicked completes with, before the layer answers for it.
#[cfg_attr(not(feature = "rmcp"), allow(dead_code))]
pub(crate) const PANICKED_TASK_TEXT: &str = crate::panic::HIDDEN_TOOL_MESSAGE;

thread_local! {
    /// The memory of the layer polling a handler on this thread, if any.
    static CURRENT: RefCell<Option<TaskMemory>> = const { RefCell::new(None) };
}

/// Marks the memory of a layer as current on this thread while it lives:
/// a task operation handed to the task runtime meanwhile leaves its panic there.
#[derive(Debug)]
pub(crate) struct Current {
    previous: Option<TaskMemory>,
}

impl Current {
    /// Makes `tasks` current until the value is dropped, if `spawns_tasks`
    /// (known at compile time: a request type whose handler spawns no task
    /// pays nothing).
    #[inline]
    pub(crate) fn enter_if(spawns_tasks: bool, tasks: &TaskMemory) -> Option<Self> {
        spawns_tasks.then(|| {
            let previous = CURRENT.with(|current| current.replace(Some(tasks.clone())));
            Self { previous }
        })
    }

    /// The memory current on this thread: where a task operation spawned now
    /// leaves its panic.
    #[cfg_attr(not(feature = "rmcp"), allow(dead_code))]
    pub(crate) fn memory() -> Option<TaskMemory> {
        CURRENT.with(|current| current.borrow().clone())
    }
}

impl Drop for Current {
    fn drop(&mut self) {
        let previous = self.previous.take();
        CURRENT.with(|current| *current.borrow_mut() = previous);
    }
}

/// Caught panics of tasks the layer has not delivered yet, by task id, oldest
/// first out past the bound.
#[derive(Debug, Default)]
pub(super) struct Waiting {
    by_task: HashMap<CompactString, (u64, CaughtPanic)>,
    next_order: u64,
}

impl Waiting {
    /// Keeps `panic` for task `task_id`; past `max` the oldest is given back,
    /// to be logged (without its payload) by the caller.
    pub(super) fn record(
        &mut self,
        task_id: &str,
        panic: CaughtPanic,
        max: usize,
    ) -> Option<(CompactString, CaughtPanic)> {
        let mut dropped = None;
        if self.by_task.len() >= max.max(1) {
            let oldest = self
                .by_task
                .iter()
                .min_by_key(|(_, (order, _))| *order)
                .map(|(id, _)| id.clone());
            dropped = oldest
                .and_then(|id| self.by_task.remove_entry(&id))
                .map(|(id, (_, panic))| (id, panic));
        }
        let order = self.next_order;
        self.next_order += 1;
        self.by_task.insert(task_id.into(), (order, panic));
        dropped
    }

    /// The panic of task `task_id`'s operation, if it panicked; forgotten here.
    pub(super) fn take(&mut self, task_id: &str) -> Option<CaughtPanic> {
        self.by_task.remove(task_id).map(|(_, panic)| panic)
    }
}

/// The panic of one remembered task's operation, moved into the task at its
/// first delivery, and the answer made for it once, outside the memory's lock.
#[derive(Debug)]
pub(super) struct TaskPanic {
    caught: Mutex<Option<CaughtPanic>>,
    answer: OnceLock<Option<String>>,
}

impl TaskPanic {
    pub(super) fn new(panic: CaughtPanic) -> Self {
        Self {
            caught: Mutex::new(Some(panic)),
            answer: OnceLock::new(),
        }
    }

    /// The text every delivery of the task carries, made (and the panic
    /// logged) at the first: deliveries at the same time wait for it. `None`
    /// when the panic was logged as undelivered first (the task forgotten
    /// meanwhile): the delivery is then rewrapped like any.
    pub(super) fn answer<R: ErrorRenderer>(
        &self,
        tool: &str,
        task_id: &str,
        config: &Config<R>,
    ) -> Option<&str> {
        self.answer
            .get_or_init(|| {
                let panic = self.take_caught()?;
                let call = UnansweredCall::new(Some(tool), Some(&task_id));
                match crate::unanswered::panic_answer(&panic, call, config) {
                    LayerAnswer::ToolError { text } => Some(text),
                    LayerAnswer::ErrorResponse { .. } => None,
                }
            })
            .as_deref()
    }

    /// The panic, if no delivery answered it: logged by the caller when the
    /// task is forgotten.
    pub(super) fn take_caught(&self) -> Option<CaughtPanic> {
        self.caught
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }
}

/// Puts `text` in place of the one text item, `PANICKED_TASK_TEXT`, that the
/// task completed with.
pub(super) fn replace_text<T: ToolResult>(result: &mut T, text: String) {
    if let Some(first) = result.error_texts().and_then(|mut texts| texts.next()) {
        *first = text;
    }
}
