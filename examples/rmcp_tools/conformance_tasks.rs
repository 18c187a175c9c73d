//! The tools the MCP conformance suite's `tasks-*` scenarios (the tasks
//! extension) call, as their descriptions require them: `greet` (never a task),
//! and `slow_compute`, `failing_job` and `protocol_error_job`, which run as tasks
//! for a client that declared the extension.

use std::time::Duration;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock};
use rmcp::service::RequestContext;
use rmcp::task_manager::TaskExit;
use rmcp::{ErrorData, RoleServer, schemars, tool, tool_router};
use serde::Deserialize;

use super::DemoServer;

/// The arguments of `greet`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(crate) struct GreetArgs {
    /// Who to greet.
    name: String,
}

/// The arguments of `slow_compute`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(crate) struct SlowComputeArgs {
    /// How long to work, in seconds; 0 answers at once.
    #[serde(default)]
    seconds: f64,
    /// A name for the computation, echoed in the result.
    #[serde(default)]
    label: Option<String>,
}

/// How long `failing_job` works before it fails.
const FAILING_JOB_WORK: Duration = Duration::from_secs(1);

#[tool_router(router = conformance_task_tools, vis = "pub(crate)")]
impl DemoServer {
    /// A tool that never runs as a task.
    #[tool(description = "Returns `Hello, {name}!`.")]
    fn greet(&self, Parameters(GreetArgs { name }): Parameters<GreetArgs>) -> String {
        format!("Hello, {name}!")
    }

    /// Works `seconds` seconds; as a task, it settles as `cancelled` on `tasks/cancel`.
    #[tool(description = "Sleeps `seconds` seconds, then returns a result; runs as a task.")]
    async fn slow_compute(
        &self,
        Parameters(SlowComputeArgs { seconds, label }): Parameters<SlowComputeArgs>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResponse {
        let work = Duration::from_secs_f64(seconds.max(0.0));
        let label = label.unwrap_or_else(|| "computation".to_owned());
        self.run_maybe_as_task(&context, move |task| {
            Box::pin(async move {
                let cancelled = async {
                    match &task {
                        Some(task) => task.cancelled().await,
                        None => std::future::pending().await,
                    }
                };
                tokio::select! {
                    () = tokio::time::sleep(work) => Ok(CallToolResult::success(vec![
                        ContentBlock::text(format!("{label}: done after {seconds} s")),
                    ])),
                    () = cancelled => Err(TaskExit::Cancelled),
                }
            })
        })
        .await
    }

    /// A job that fails the MCP way after about a second.
    #[tool(description = "Runs as a task; after about 1 s it returns a tool error.")]
    async fn failing_job(&self, context: RequestContext<RoleServer>) -> CallToolResponse {
        self.run_maybe_as_task(&context, |_| {
            Box::pin(async {
                tokio::time::sleep(FAILING_JOB_WORK).await;
                Ok(CallToolResult::error(vec![ContentBlock::text(
                    "the job failed: the input file is empty",
                )]))
            })
        })
        .await
    }

    /// A job whose task fails with a JSON-RPC error, which the task reports as
    /// `failed`; the layer passes it through untouched.
    #[tool(description = "Runs as a task that fails with a protocol (JSON-RPC) error.")]
    async fn protocol_error_job(&self, context: RequestContext<RoleServer>) -> CallToolResponse {
        self.run_maybe_as_task(&context, |_| {
            Box::pin(async {
                Err(TaskExit::Error(ErrorData::internal_error(
                    "the job's backend is unreachable",
                    None,
                )))
            })
        })
        .await
    }
}
