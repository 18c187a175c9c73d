//! [`TaskMemory`]: the tasks a layer saw created, each with its tool, bounded,
//! and the caught panics of their operations.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use compact_str::CompactString;

use super::panics::{TaskPanic, Waiting, replace_text};
use super::{DEFAULT_MAX_REMEMBERED_TASKS, TaskEvent};
use crate::config::Config;
use crate::model::ToolResult;
use crate::panic::CaughtPanic;
use crate::render::ErrorRenderer;

/// The task ids a layer saw created, with the tool each belongs to, until each
/// is forgotten: once its time to live (`ttlMs`) has passed, or when newer
/// tasks push it out past the bound, least recently used first (see
/// [`rule`](super::rule)). A delivered result does not forget its task, so that
/// every delivery is rewrapped alike.
///
/// One per layer value, shared by its clones and every service they build;
/// cloning it is cloning an `Arc`. Nothing the user supplies (the renderer,
/// the scrubber, a tracing subscriber) runs while its lock is held.
#[derive(Clone)]
pub(crate) struct TaskMemory {
    tasks: Arc<Mutex<Remembered>>,
}

/// The remembered tasks and two indexes over them, so that every operation,
/// pushing out the least recently used and the expired included, costs
/// `O(log n)`; and the caught panics waiting for their task's delivery.
struct Remembered {
    by_id: HashMap<CompactString, Task>,
    /// Every task by its `order`: the first entry is the least recently used.
    by_order: BTreeMap<u64, CompactString>,
    /// The tasks that have a time to live, soonest to expire first.
    by_expiry: BTreeSet<(Instant, u64)>,
    /// Counts uses: the smallest `order` is the least recently used task.
    next_order: u64,
    /// How many tasks are kept at most; as many caught panics wait at most.
    max: usize,
    /// Caught panics of task operations, until their task's first delivery.
    panics: Waiting,
}

struct Task {
    tool: CompactString,
    /// `None`: the task has no time to live and is kept until it is pushed out.
    expires_at: Option<Instant>,
    order: u64,
    /// The panic of the task's operation, from its first delivery on.
    panic: Option<Arc<TaskPanic>>,
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

/// Tasks and panics let go of under the lock, logged once it is released.
struct Forgotten {
    tasks: Vec<(CompactString, Task)>,
    unclaimed: Option<(CompactString, CaughtPanic)>,
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
            panics: Waiting::default(),
        };
        Self {
            tasks: Arc::new(Mutex::new(remembered)),
        }
    }

    /// Acts on what a response says happened to a task: remembers a created
    /// task, or rewraps a delivered result (or answers the panic of its
    /// operation). Says what was delivered when the response carries a task's
    /// result.
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
        }
    }

    /// Keeps the panic of the operation of task `task_id` until the task's
    /// result is delivered.
    #[cfg_attr(not(feature = "rmcp"), allow(dead_code))]
    pub(crate) fn record_panic(&self, task_id: &str, panic: CaughtPanic) {
        let mut remembered = self.lock();
        let max = remembered.max;
        let dropped = remembered.panics.record(task_id, panic, max);
        drop(remembered);
        if let Some((id, panic)) = dropped {
            panic.log_unclaimed_task(&id);
        }
    }

    /// Rewraps the delivered `result` of task `task_id` if the task is
    /// remembered: as a direct call's result, or, when its operation panicked,
    /// with the answer the layer made at its first delivery. The task becomes
    /// the most recently used.
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
        let forgotten = Forgotten {
            tasks: remembered.forget_expired(now),
            unclaimed: None,
        };
        let found = remembered.touch(task_id).then(|| {
            // The panic moves from where it was caught into the task at its
            // first delivery.
            let caught = remembered.panics.take(task_id);
            let task = remembered.by_id.get_mut(task_id)?;
            if let Some(panic) = caught {
                task.panic = Some(Arc::new(TaskPanic::new(panic)));
            }
            Some((task.tool.clone(), task.panic.clone()))
        });
        drop(remembered);
        forgotten.log(config);
        let Some((tool, panic)) = found.flatten() else {
            return Delivered {
                failed: result.error_texts().is_some(),
                panicked: false,
                tool: None,
            };
        };
        let answer = panic
            .as_deref()
            .and_then(|panic| panic.answer(&tool, task_id, config));
        let panicked = answer.is_some();
        match answer {
            Some(text) => replace_text(result, text.to_owned()),
            None => {
                config.rewrap(result, &tool);
            }
        }
        Delivered {
            failed: result.error_texts().is_some(),
            panicked,
            tool: Some(tool),
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
        let mut forgotten = Forgotten {
            tasks: remembered.forget_expired(now),
            unclaimed: None,
        };
        if let Some(task) = remembered.remove(task_id) {
            // The same id again: the new task replaces the old one.
            forgotten.tasks.push((CompactString::from(task_id), task));
        }
        while remembered.by_id.len() >= remembered.max.max(1) {
            match remembered.forget_least_recently_used() {
                Some(task) => forgotten.tasks.push(task),
                None => break,
            }
        }
        if remembered.max > 0 {
            remembered.insert(task_id, tool, ttl_ms, now);
        } else if let Some(panic) = remembered.panics.take(task_id) {
            forgotten.unclaimed = Some((task_id.into(), panic));
        }
        drop(remembered);
        forgotten.log(config);
        tracing::debug!(tool, task_id, "remembered a task-augmented tool call");
    }

    fn lock(&self) -> MutexGuard<'_, Remembered> {
        // The map stays consistent whatever panicked while it was held.
        self.tasks.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Forgotten {
    /// Logs the panic of every forgotten task whose result was never
    /// delivered: no delivery will log it now.
    fn log<R: ErrorRenderer>(self, config: &Config<R>) {
        for (task_id, task) in self.tasks {
            if let Some(panic) = task.panic.as_deref().and_then(TaskPanic::take_caught) {
                panic.log_undelivered_task(&task_id, Some(&task.tool), config);
            }
        }
        if let Some((task_id, panic)) = self.unclaimed {
            panic.log_undelivered_task(&task_id, None, config);
        }
    }
}

impl Remembered {
    fn insert(&mut self, task_id: &str, tool: &str, ttl_ms: Option<u64>, now: Instant) {
        let order = self.next_order();
        let expires_at = ttl_ms.and_then(|ttl| now.checked_add(Duration::from_millis(ttl)));
        if let Some(at) = expires_at {
            self.by_expiry.insert((at, order));
        }
        self.by_order.insert(order, task_id.into());
        let task = Task {
            tool: tool.into(),
            expires_at,
            order,
            panic: None,
        };
        self.by_id.insert(task_id.into(), task);
    }

    fn next_order(&mut self) -> u64 {
        let order = self.next_order;
        self.next_order += 1;
        order
    }

    /// Makes task `task_id` the most recently used; `false` when it is not
    /// remembered.
    fn touch(&mut self, task_id: &str) -> bool {
        let order = self.next_order();
        let Some(task) = self.by_id.get_mut(task_id) else {
            return false;
        };
        if let Some(id) = self.by_order.remove(&task.order) {
            self.by_order.insert(order, id);
        }
        if let Some(at) = task.expires_at {
            self.by_expiry.remove(&(at, task.order));
            self.by_expiry.insert((at, order));
        }
        task.order = order;
        true
    }

    /// Forgets task `task_id`, with the panic of its operation if one waits:
    /// the caller logs it if it was never delivered.
    fn remove(&mut self, task_id: &str) -> Option<Task> {
        let mut task = self.by_id.remove(task_id)?;
        if task.panic.is_none() {
            task.panic = self
                .panics
                .take(task_id)
                .map(|panic| Arc::new(TaskPanic::new(panic)));
        }
        self.by_order.remove(&task.order);
        if let Some(at) = task.expires_at {
            self.by_expiry.remove(&(at, task.order));
        }
        Some(task)
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

    fn forget_least_recently_used(&mut self) -> Option<(CompactString, Task)> {
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
