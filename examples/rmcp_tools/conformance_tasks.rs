//! The tools the MCP conformance suite's `tasks-*` scenarios (the tasks
//! extension) call, as their descriptions require them: `greet` (never a task);
//! `slow_compute` and `protocol_error_job`, which run as tasks for a client that
//! declared the extension; and `failing_job`, `confirm_delete`, `multi_input`
//! and `test_tool_with_task`, which need the extension (a client without it gets
//! error -32021). `confirm_delete` and `multi_input` ask for input from within
//! their task; `test_tool_with_task` asks first (an `InputRequiredResult`) and
//! then runs as a task.

use std::time::Duration;

use rmcp::handler::server::tool::InputResponses;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResponse, CallToolResult, ClientCapabilities, ContentBlock, InputRequest,
    InputRequiredResult,
};
use rmcp::service::RequestContext;
use rmcp::task_manager::{TaskContext, TaskExit, TaskFuture};
use rmcp::{ErrorData, RoleServer, schemars, tool, tool_router};
use serde::Deserialize;
use serde_json::{Value, json};

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

    /// A job that fails the MCP way after about a second; it only runs as a task.
    #[tool(description = "Runs as a task (required); after about 1 s it returns a tool error.")]
    async fn failing_job(
        &self,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.run_as_task(&context, |_| {
            Box::pin(async {
                tokio::time::sleep(FAILING_JOB_WORK).await;
                Ok(CallToolResult::error(vec![ContentBlock::text(
                    "the job failed: the input file is empty",
                )]))
            })
        })
        .await
    }

    /// Asks, from within its task, whether to delete; completes with the answer.
    #[tool(description = "Runs as a task (required) that asks the user to confirm a deletion.")]
    async fn confirm_delete(
        &self,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.run_as_task(&context, |task| {
            Box::pin(async move {
                let question = elicitation("Delete the file? This cannot be undone.");
                let answer = task.request_input("confirm", question).await?;
                Ok(CallToolResult::success(vec![ContentBlock::text(format!(
                    "deletion {}",
                    if accepted(&answer) {
                        "confirmed"
                    } else {
                        "declined"
                    }
                ))]))
            })
        })
        .await
    }

    /// Asks two questions at once from within its task; completes when both
    /// are answered.
    #[tool(description = "Runs as a task (required) that asks two questions at once.")]
    async fn multi_input(
        &self,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.run_as_task(&context, |task| {
            Box::pin(async move {
                let (first, second) = tokio::try_join!(
                    task.request_input("first", elicitation("First question?")),
                    task.request_input("second", elicitation("Second question?")),
                )?;
                Ok(CallToolResult::success(vec![ContentBlock::text(format!(
                    "answers: {first}, {second}"
                ))]))
            })
        })
        .await
    }

    /// Asks for the user's name first (an `InputRequiredResult`), then runs as a
    /// task whose result greets them.
    #[tool(description = "Asks for the user's name, then runs as a task (required) greeting them.")]
    async fn test_tool_with_task(
        &self,
        InputResponses(responses): InputResponses,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        require_tasks(&context)?;
        let Some(name) = responses.as_ref().and_then(|r| r.get("user_name")) else {
            let requests = serde_json::from_value(json!({
                "user_name": {"method": "elicitation/create", "params": name_schema()},
            }))
            .expect("a well-formed input request");
            return Ok(CallToolResponse::InputRequired(
                InputRequiredResult::from_input_requests(requests),
            ));
        };
        let name = name
            .pointer("/content/name")
            .and_then(Value::as_str)
            .unwrap_or("stranger")
            .to_owned();
        self.run_as_task(&context, move |_| {
            Box::pin(async move {
                Ok(CallToolResult::success(vec![ContentBlock::text(format!(
                    "Hello, {name}, from a task!"
                ))]))
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

impl DemoServer {
    /// Runs `operation` as a task, for a task-only tool: error -32021 for a
    /// client that did not declare the tasks extension.
    async fn run_as_task(
        &self,
        context: &RequestContext<RoleServer>,
        operation: impl FnOnce(TaskContext) -> TaskFuture,
    ) -> Result<CallToolResponse, ErrorData> {
        require_tasks(context)?;
        Ok(self
            .run_maybe_as_task(context, |task| {
                operation(task.expect("a client with the tasks extension"))
            })
            .await)
    }
}

/// Error -32021 for a client that did not declare the tasks extension, which
/// a task-only tool needs.
fn require_tasks(context: &RequestContext<RoleServer>) -> Result<(), ErrorData> {
    let client_has_tasks = context
        .client_capabilities()
        .is_some_and(|capabilities| capabilities.supports_tasks());
    if client_has_tasks {
        return Ok(());
    }
    let required = ClientCapabilities::builder().enable_tasks().build();
    Err(ErrorData::missing_required_client_capability(required))
}

fn name_schema() -> Value {
    json!({
        "message": "What is your name?",
        "requestedSchema": {
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"],
        },
    })
}

/// An `elicitation/create` request asking a yes-or-no `message`.
fn elicitation(message: &str) -> InputRequest {
    serde_json::from_value(json!({
        "method": "elicitation/create",
        "params": {
            "message": message,
            "requestedSchema": {
                "type": "object",
                "properties": {"confirm": {"type": "boolean"}},
                "required": ["confirm"],
            },
        },
    }))
    .expect("a well-formed elicitation")
}

/// Whether an elicitation answer accepted.
fn accepted(answer: &Value) -> bool {
    answer["action"] == "accept"
}
