//! [`TaskMemory`]: the tasks a layer saw created, each with its tool, bounded.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use compact_str::CompactString;

use super::panics;
use crate::config::Config;
use crate::exchange::{TaskExchange, ToolResult};
use crate::render::ErrorRenderer;

/// How many task ids one layer remembers at most. Past it, the oldest is
/// forgotten: its result then reaches the client as the tool made it.
///
/// A task id is forgotten as soon as its result (or its failure) has been
/// delivered, and once its time to live (`ttlMs`) has passed, so this bound
/// only matters for clients that create tasks and never ask for them.
pub const MAX_REMEMBERED_TASKS: usize = 1024;

/// The task ids a layer saw created and whose results have not been delivered
/// yet, with the tool each belongs to. One per layer value, shared by its
/// clones and every service they build; cloning it is cloning an `Arc`.
#[derive(Clone, Default)]
pub(crate) struct TaskMemory {
    tasks: Arc<Mutex<Remembered>>,
}

#[derive(Default)]
struct Remembered {
    by_id: HashMap<CompactString, Task>,
    /// Counts insertions: the smallest `order` is the oldest task.
    next_order: u64,
}

struct Task {
    tool: CompactString,
    /// `None`: the task has no time to live and is kept until delivered or pushed out.
    expires_at: Option<Instant>,
    order: u64,
}

/// The result of a task, as a response delivered it to the client.
#[derive(Debug)]
pub(crate) struct Delivered {
    /// The result is an `isError` result the layer can read (a malformed one is
    /// left as it is, and counts as a success here).
    pub(crate) failed: bool,
    /// The result is the layer's answer to a panic of the task's operation.
    pub(crate) panicked: bool,
    /// The task's tool, when the layer saw the task created.
    pub(crate) tool: Option<CompactString>,
}

impl TaskMemory {
    /// Acts on what a response says about a task: remembers a created task,
    /// rewraps a delivered result (or answers the panic of its operation), and
    /// forgets a task once it has ended. Takes the lock only when a task is
    /// involved. Says what was delivered when the response carries a task's result.
    #[inline]
    pub(crate) fn observe<T, R>(
        &self,
        exchange: TaskExchange<'_, T>,
        config: &Config<R>,
    ) -> Option<Delivered>
    where
        T: ToolResult,
        R: ErrorRenderer,
    {
        // Nearly every response is about no task: that case stays in the caller.
        match exchange {
            TaskExchange::None => None,
            exchange => self.observe_task(exchange, config),
        }
    }

    fn observe_task<T, R>(
        &self,
        exchange: TaskExchange<'_, T>,
        config: &Config<R>,
    ) -> Option<Delivered>
    where
        T: ToolResult,
        R: ErrorRenderer,
    {
        match exchange {
            TaskExchange::None => None,
            TaskExchange::Created {
                tool,
                task_id,
                ttl_ms,
            } => {
                self.remember(task_id, tool, ttl_ms, Instant::now());
                None
            }
            TaskExchange::Result { task_id, result } => {
                let tool = self.forget(task_id);
                let mut panicked = false;
                if let Some(tool) = &tool {
                    match panics::take(task_id) {
                        Some(panic) => {
                            panics::answer(&panic, result, tool, task_id, config);
                            panicked = true;
                        }
                        None => config.rewrap(result, tool),
                    }
                }
                Some(Delivered {
                    failed: result.error_texts().is_some(),
                    panicked,
                    tool,
                })
            }
            TaskExchange::Ended { task_id } => {
                self.forget(task_id);
                panics::take(task_id);
                None
            }
        }
    }

    /// How many task ids are remembered now.
    pub(crate) fn len(&self) -> usize {
        self.lock().by_id.len()
    }

    fn remember(&self, task_id: &str, tool: &str, ttl_ms: Option<u64>, now: Instant) {
        let mut remembered = self.lock();
        if remembered.by_id.len() >= MAX_REMEMBERED_TASKS {
            remembered.forget_expired(now);
        }
        if remembered.by_id.len() >= MAX_REMEMBERED_TASKS {
            remembered.forget_oldest();
        }
        let order = remembered.next_order;
        remembered.next_order += 1;
        let expires_at = ttl_ms.and_then(|ttl| now.checked_add(Duration::from_millis(ttl)));
        let task = Task {
            tool: tool.into(),
            expires_at,
            order,
        };
        remembered.by_id.insert(task_id.into(), task);
        tracing::debug!(tool, task_id, "remembered a task-augmented tool call");
    }

    /// Forgets `task_id`; its tool, if it was remembered and has not expired.
    fn forget(&self, task_id: &str) -> Option<CompactString> {
        let task = self.lock().by_id.remove(task_id)?;
        let expired = task.expires_at.is_some_and(|at| at <= Instant::now());
        (!expired).then_some(task.tool)
    }

    fn lock(&self) -> MutexGuard<'_, Remembered> {
        // The map stays consistent whatever panicked while it was held.
        self.tasks.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Remembered {
    fn forget_expired(&mut self, now: Instant) {
        self.by_id
            .retain(|_, task| task.expires_at.is_none_or(|at| at > now));
    }

    fn forget_oldest(&mut self) {
        let oldest = self
            .by_id
            .iter()
            .min_by_key(|(_, task)| task.order)
            .map(|(id, _)| id.clone());
        if let Some(id) = oldest {
            self.by_id.remove(&id);
        }
    }
}

impl std::fmt::Debug for TaskMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskMemory")
            .field("remembered", &self.len())
            .finish()
    }
}
