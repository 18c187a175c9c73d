//! Task-augmented tool calls (the tasks extension, `io.modelcontextprotocol/tasks`):
//! a `tools/call` answered with a task handle delivers its result later, in a
//! `tasks/get` (protocol 2026-07-28) or `tasks/result` (2025-11-25) response.
//!
//! The layer remembers which tool each task belongs to ([`TaskMemory`]), so that
//! the task's result is rewrapped where it reaches the client, exactly as the
//! result of a direct call, and alike on every delivery until the task is
//! forgotten. A task operation that panicked leaves its caught panic in
//! [`panics`], where the layer finds it to answer as for a direct call.

mod event;
mod memory;
pub(crate) mod panics;
pub(crate) mod rule;

pub(crate) use event::TaskEvent;
pub(crate) use memory::{Delivered, TaskMemory};

/// How many task ids one layer remembers unless
/// [`max_remembered_tasks`](crate::ToolErrorLayer::max_remembered_tasks) says
/// otherwise; as many caught task panics wait for their delivery at most.
pub(crate) const DEFAULT_MAX_REMEMBERED_TASKS: usize = 1024;
