//! [`catch_task_panics`]: a task operation that panics completes with the answer
//! a direct call gets, instead of staying `working`.

use std::future::poll_fn;
use std::task::Poll;

use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::task_manager::{TaskContext, TaskExit, TaskFuture};

use crate::panic::{self, CaughtPanic};
use crate::tasks::TaskMemory;
use crate::tasks::panics::{Current, PANICKED_TASK_TEXT};

/// Wraps the operation given to rmcp's
/// [`TaskManager::spawn`](rmcp::task_manager::TaskManager::spawn) so that a panic
/// in it completes the task instead of leaving it `working` until its TTL.
///
/// rmcp's `TaskManager` runs each operation on a task of its own and records its
/// result when it returns; an operation that panics never returns, so the task
/// would stay `working`. Wrapped, it completes at once as `completed` with an
/// `isError` result; the [`LayeredHandler`](super::LayeredHandler) turns that
/// result, on its way out through `tasks/get`, into the very answer a panicking
/// direct call gets (redacted by default, with the payload under
/// `expose_panic_messages(true)`), on every delivery alike. The payload is
/// never stored in the task, so nothing of it leaks even to a client that reads
/// the task some other way. It is logged once, by the layer (so redacted under
/// [`redact_secrets`](crate::ToolErrorLayer::redact_secrets)), with the task id:
/// when it first delivers the task's result, or when it forgets a task whose
/// result it never delivered. Nothing of it is logged where it is caught, since
/// no layer's settings are known there.
///
/// Call it in the handler's `call_tool`, behind the layer: the panic goes to
/// the layer in front of that handler (its memory, which every clone of the
/// layer shares), known at this call. Called where no layer runs the handler,
/// the task still completes, and the panic is logged without its payload.
///
/// ```
/// use mcp_tool_errors::rmcp::catch_task_panics;
/// use rmcp::model::{CallToolResult, ContentBlock};
/// use rmcp::task_manager::{TaskManager, TaskOptions};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let tasks = TaskManager::new();
/// let task = tasks.spawn(
///     TaskOptions::default(),
///     catch_task_panics(|_context| {
///         Box::pin(async { Ok(CallToolResult::success(vec![ContentBlock::text("done")])) })
///     }),
/// );
/// # let _ = task;
/// # }
/// ```
pub fn catch_task_panics<F>(make_future: F) -> impl FnOnce(TaskContext) -> TaskFuture
where
    F: FnOnce(TaskContext) -> TaskFuture,
{
    // Called from the handler, while the layer in front of it is current.
    let layer = Current::memory();
    move |context| {
        let task_id = context.task_id().to_owned();
        let mut future = match panic::catch(|| make_future(context)) {
            Ok(future) => future,
            Err(panic) => {
                let result = completed_after_panic(layer.as_ref(), &task_id, panic);
                return Box::pin(std::future::ready(result));
            }
        };
        Box::pin(async move {
            let outcome = poll_fn(|cx| match panic::catch(|| future.as_mut().poll(cx)) {
                Ok(Poll::Pending) => Poll::Pending,
                Ok(Poll::Ready(result)) => Poll::Ready(Ok(result)),
                Err(panic) => Poll::Ready(Err(panic)),
            })
            .await;
            // A future that panicked may panic again when dropped.
            if let Err(panic) = panic::catch(move || drop(future)) {
                panic.log_dropped_in_task(&task_id);
            }
            match outcome {
                Ok(result) => result,
                Err(panic) => completed_after_panic(layer.as_ref(), &task_id, panic),
            }
        })
    }
}

/// The result a task completes with when its operation panicked: the payload
/// goes to `layer`, the memory of the layer in front of the handler that
/// spawned the task, which logs it, never into the task.
fn completed_after_panic(
    layer: Option<&TaskMemory>,
    task_id: &str,
    panic: CaughtPanic,
) -> Result<CallToolResult, TaskExit> {
    match layer {
        Some(layer) => layer.record_panic(task_id, panic),
        None => panic.log_unclaimed_task(task_id),
    }
    Ok(CallToolResult::error(vec![ContentBlock::text(
        PANICKED_TASK_TEXT,
    )]))
}
