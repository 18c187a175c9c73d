//! [`TaskMemory`]: the tasks a layer saw created, each with its tool, bounded.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use compact_str::CompactString;

use super::panics;
use super::{DEFAULT_MAX_REMEMBERED_TASKS, TaskEvent};
use crate::config::Config;
use crate::model::ToolResult;
use crate::render::ErrorRenderer;

/// The task ids a layer saw created, with the tool each belongs to, until each
/// is forgotten: when it ends without a result, once its time to live (`ttlMs`)
/// has passed, or when newer tasks push it out past the bound. A delivered
/// result does not forget its task, so that every delivery is rewrapped alike.
///
/// One per layer value, shared by its clones and every service they build;
/// cloning it is cloning an `Arc`.
#[derive(Clone)]
pub(crate) struct TaskMemory {
    tasks: Arc<Mutex<Remembered>>,
}

/// The remembered tasks and two indexes over them, so that every operation,
/// pushing out the oldest and the expired included, costs `O(log n)`.
struct Remembered {
    by_id: HashMap<CompactString, Task>,
    /// Every task by its `order`: the first entry is the oldest.
    by_order: BTreeMap<u64, CompactString>,
    /// The tasks that have a time to live, soonest to expire first.
    by_expiry: BTreeSet<(Instant, u64)>,
    /// Counts insertions: the smallest `order` is the oldest task.
    next_order: u64,
    /// How many tasks are kept at most.
    max: usize,
}

struct Task {
    tool: CompactString,
    /// `None`: the task has no time to live and is kept until it ends or is pushed out.
    expires_at: Option<Instant>,
    order: u64,
    /// The text the layer answered the panic of the task's operation with, at
    /// its first delivery; every later delivery carries the same.
    panic_answer: Option<String>,
}

/// The result of a task, as a response delivered it to the client.
#[derive(Debug)]
pub(crate) struct Delivered {
    /// The result is an `isError` result the layer can read (a malformed one is
    /// left as it is, and counts as a success here).
    pub(crate) failed: bool,
    /// The result is the layer's answer to a panic of the task's operation.
    pub(crate) panicked: bool,
    /// The task's tool, when the layer remembers the task.
    pub(crate) tool: Option<CompactString>,
}

impl Default for TaskMemory {
    fn default() -> Self {
        Self::bounded(DEFAULT_MAX_REMEMBERED_TASKS)
    }
}

impl TaskMemory {
    /// A new, empty memory that keeps at most `max` tasks.
    pub(crate) fn bounded(max: usize) -> Self {
        let remembered = Remembered {
            by_id: HashMap::new(),
            by_order: BTreeMap::new(),
            by_expiry: BTreeSet::new(),
            next_order: 0,
            max,
        };
        Self {
            tasks: Arc::new(Mutex::new(remembered)),
        }
    }

    /// Acts on what a response says happened to a task: remembers a created
    /// task, rewraps a delivered result (or answers the panic of its
    /// operation), and forgets a task once it has ended. Says what was
    /// delivered when the response carries a task's result.
    pub(crate) fn observe<T, R>(
        &self,
        event: TaskEvent<'_, T>,
        config: &Config<R>,
    ) -> Option<Delivered>
    where
        T: ToolResult,
        R: ErrorRenderer,
    {
        match event {
            TaskEvent::Created {
                tool,
                task_id,
                ttl_ms,
            } => {
                self.remember(task_id, tool, ttl_ms, Instant::now(), config);
                None
            }
            TaskEvent::Result { task_id, result } => {
                Some(self.deliver(task_id, result, Instant::now(), config))
            }
            TaskEvent::Ended { task_id } => {
                let mut remembered = self.lock();
                let tool = remembered.remove(task_id).map(|task| task.tool);
                drop(remembered);
                log_undelivered_panic(task_id, tool.as_deref(), config);
                None
            }
        }
    }

    /// Rewraps the delivered `result` of task `task_id` if the task is
    /// remembered: as a direct call's result, or, when its operation panicked,
    /// with the answer the layer made at its first delivery.
    fn deliver<T, R>(
        &self,
        task_id: &str,
        result: &mut T,
        now: Instant,
        config: &Config<R>,
    ) -> Delivered
    where
        T: ToolResult,
        R: ErrorRenderer,
    {
        let mut remembered = self.lock();
        if remembered.has_expired(task_id, now) {
            let task = remembered.remove(task_id);
            drop(remembered);
            log_undelivered_panic(task_id, task.as_ref().map(|task| &*task.tool), config);
        } else if let Some(task) = remembered.by_id.get_mut(task_id) {
            // The panic moves from where it was caught into the task at the
            // first delivery, answered (and logged) once, under the lock, so
            // that two deliveries at once still answer alike.
            if task.panic_answer.is_none() {
                task.panic_answer = panics::take(task_id)
                    .map(|panic| panics::answer(&panic, &task.tool, task_id, config));
            }
            let tool = task.tool.clone();
            let panic_answer = task.panic_answer.clone();
            drop(remembered);
            let panicked = panic_answer.is_some();
            match panic_answer {
                Some(text) => panics::replace_text(result, text),
                None => config.rewrap(result, &tool),
            }
            return Delivered {
                failed: result.error_texts().is_some(),
                panicked,
                tool: Some(tool),
            };
        }
        Delivered {
            failed: result.error_texts().is_some(),
            panicked: false,
            tool: None,
        }
    }

    /// How many task ids are remembered now.
    pub(crate) fn len(&self) -> usize {
        self.lock().by_id.len()
    }

    fn remember<R: ErrorRenderer>(
        &self,
        task_id: &str,
        tool: &str,
        ttl_ms: Option<u64>,
        now: Instant,
        config: &Config<R>,
    ) {
        let mut remembered = self.lock();
        let mut forgotten = remembered.forget_expired(now);
        if let Some(task) = remembered.remove(task_id) {
            // The same id again: the new task replaces the old one.
            forgotten.push((CompactString::from(task_id), task));
        }
        while remembered.by_id.len() >= remembered.max.max(1) {
            match remembered.forget_oldest() {
                Some(oldest) => forgotten.push(oldest),
                None => break,
            }
        }
        if remembered.max > 0 {
            remembered.insert(task_id, tool, ttl_ms, now);
        }
        drop(remembered);
        for (id, task) in forgotten {
            if task.panic_answer.is_none() {
                log_undelivered_panic(&id, Some(&task.tool), config);
            }
        }
        tracing::debug!(tool, task_id, "remembered a task-augmented tool call");
    }

    fn lock(&self) -> MutexGuard<'_, Remembered> {
        // The map stays consistent whatever panicked while it was held.
        self.tasks.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Logs the panic of task `task_id`'s operation if one was caught and never
/// delivered: the task is forgotten, so no delivery will log it.
fn log_undelivered_panic<R: ErrorRenderer>(task_id: &str, tool: Option<&str>, config: &Config<R>) {
    if let Some(panic) = panics::take(task_id) {
        panic.log_undelivered_task(task_id, tool, config);
    }
}

impl Remembered {
    fn insert(&mut self, task_id: &str, tool: &str, ttl_ms: Option<u64>, now: Instant) {
        let order = self.next_order;
        self.next_order += 1;
        let expires_at = ttl_ms.and_then(|ttl| now.checked_add(Duration::from_millis(ttl)));
        if let Some(at) = expires_at {
            self.by_expiry.insert((at, order));
        }
        self.by_order.insert(order, task_id.into());
        let task = Task {
            tool: tool.into(),
            expires_at,
            order,
            panic_answer: None,
        };
        self.by_id.insert(task_id.into(), task);
    }

    fn remove(&mut self, task_id: &str) -> Option<Task> {
        let task = self.by_id.remove(task_id)?;
        self.by_order.remove(&task.order);
        if let Some(at) = task.expires_at {
            self.by_expiry.remove(&(at, task.order));
        }
        Some(task)
    }

    fn has_expired(&self, task_id: &str, now: Instant) -> bool {
        self.by_id
            .get(task_id)
            .and_then(|task| task.expires_at)
            .is_some_and(|at| at <= now)
    }

    /// Forgets every task whose time to live has passed at `now`.
    fn forget_expired(&mut self, now: Instant) -> Vec<(CompactString, Task)> {
        let mut forgotten = Vec::new();
        while let Some(&(at, order)) = self.by_expiry.first() {
            if at > now {
                break;
            }
            match self.by_order.get(&order).cloned() {
                Some(id) => forgotten.extend(self.remove(&id).map(|task| (id, task))),
                None => {
                    self.by_expiry.pop_first();
                }
            }
        }
        forgotten
    }

    fn forget_oldest(&mut self) -> Option<(CompactString, Task)> {
        let (_, id) = self.by_order.first_key_value()?;
        let id = id.clone();
        self.remove(&id).map(|task| (id, task))
    }
}

impl std::fmt::Debug for TaskMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let remembered = self.lock();
        f.debug_struct("TaskMemory")
            .field("remembered", &remembered.by_id.len())
            .field("max", &remembered.max)
            .finish()
    }
}
