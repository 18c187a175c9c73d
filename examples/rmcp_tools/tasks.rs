//! Two tools that run as tasks (the tasks extension, `io.modelcontextprotocol/tasks`)
//! for a client that declared the extension, and as ordinary calls otherwise:
//! one whose task completes with an `isError` result, one whose task panics.
//!
//! The tasks run on the server's shared rmcp `TaskManager`; `tasks/get`,
//! `tasks/update` and `tasks/cancel` are answered from it.

use std::time::Duration;

use mcp_tool_errors::rmcp::catch_task_panics;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock, CreateTaskResult};
use rmcp::service::RequestContext;
use rmcp::task_manager::{TaskContext, TaskFuture, TaskOptions};
use rmcp::{RoleServer, schemars, tool, tool_router};
use serde::Deserialize;

use super::{DemoServer, FAKE_SECRET};

/// How long the task tools work before they fail or panic.
const WORK: Duration = Duration::from_millis(50);

/// How often clients are told to poll `tasks/get`, in milliseconds.
const POLL_INTERVAL_MS: u64 = 100;

/// The arguments of `fail_task`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(crate) struct FailTaskArgs {
    /// The error message the task reports.
    message: String,
}

#[tool_router(router = task_tools, vis = "pub(crate)")]
impl DemoServer {
    /// A long-running tool that fails the MCP way, as an `isError` result.
    #[tool(
        description = "Runs as a task when the client supports tasks; after 50 ms it completes \
                       with an error result whose text is `message`."
    )]
    async fn fail_task(
        &self,
        Parameters(FailTaskArgs { message }): Parameters<FailTaskArgs>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResponse {
        self.run_maybe_as_task(&context, move |_| {
            Box::pin(async move {
                tokio::time::sleep(WORK).await;
                Ok(CallToolResult::error(vec![ContentBlock::text(message)]))
            })
        })
        .await
    }

    /// A long-running tool with a bug: it panics after it started working.
    #[tool(
        description = "Runs as a task when the client supports tasks; after 50 ms it panics, with \
                       a message that contains a (fake) secret."
    )]
    async fn panic_task(&self, context: RequestContext<RoleServer>) -> CallToolResponse {
        self.run_maybe_as_task(&context, |_| {
            Box::pin(async {
                tokio::time::sleep(WORK).await;
                panic!("the batch job crashed half-way, with {FAKE_SECRET}")
            })
        })
        .await
    }
}

impl DemoServer {
    /// Runs `operation` as a task if the client declared the tasks extension
    /// (answering with the task handle), or right here otherwise (then without
    /// a task context).
    pub(crate) async fn run_maybe_as_task(
        &self,
        context: &RequestContext<RoleServer>,
        operation: impl FnOnce(Option<TaskContext>) -> TaskFuture,
    ) -> CallToolResponse {
        let client_has_tasks = context
            .client_capabilities()
            .is_some_and(|capabilities| capabilities.supports_tasks());
        if client_has_tasks {
            // The one line that makes a panicking task answer like a panicking call.
            let options = TaskOptions::default().with_poll_interval_ms(POLL_INTERVAL_MS);
            let task = self
                .tasks
                .spawn(options, catch_task_panics(|task| operation(Some(task))));
            return CallToolResponse::Task(CreateTaskResult::new(task));
        }
        match operation(None).await {
            Ok(result) => CallToolResponse::Complete(result),
            Err(exit) => {
                CallToolResponse::Complete(CallToolResult::error(vec![ContentBlock::text(
                    format!("{exit:?}"),
                )]))
            }
        }
    }
}
