//! rmcp's tasks, both ends: a server whose tools run as tasks on rmcp's
//! `TaskManager` and answer `tasks/get` from it ([`TaskServer`]), and a client's
//! task-augmented call that polls `tasks/get` until the result is delivered
//! ([`call_as_task`]).
//!
//! Each test file gives [`TaskServer`] its tools in a
//! `#[tool_router(router = NAME)]` block of its own and passes `Self::NAME()` to
//! [`TaskServer::new`]. Shared by the rmcp tests (through `support/mod.rs`) and
//! the rmcp telemetry tests (which include this file by `#[path]`).

use std::time::Duration;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, GetTaskParams, GetTaskResult,
    ServerCapabilities, ServerConfig, TaskPayload,
};
use rmcp::service::{Peer, RequestContext};
use rmcp::task_manager::TaskManager;
use rmcp::{ErrorData, RoleClient, RoleServer, ServerHandler, tool_handler};
use serde_json::Value;

/// A server with the tools and tasks capabilities, whose tools spawn their
/// operations on [`TaskServer::tasks`].
#[derive(Clone)]
pub struct TaskServer {
    tool_router: ToolRouter<Self>,
    /// Where the tools spawn their tasks, and `tasks/get` looks them up.
    pub tasks: TaskManager,
}

impl TaskServer {
    /// A server with the tools of `tool_router` and no task yet.
    pub fn new(tool_router: ToolRouter<Self>) -> Self {
        Self {
            tool_router,
            tasks: TaskManager::new(),
        }
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for TaskServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tasks()
                .build(),
        )
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        self.tasks
            .get_task(&request.task_id)
            .map(GetTaskResult::new)
    }
}

/// Sends `request` as a client that declared the tasks extension: the answer
/// must be a task handle; then polls `tasks/get` every `poll` until the task has
/// completed, and returns its result. A task that ends otherwise fails the test.
pub async fn call_as_task(
    client: &Peer<RoleClient>,
    request: CallToolRequestParams,
    poll: Duration,
) -> CallToolResult {
    let tool = request.name.clone();
    let answer = client.call_tool_once(request).await;
    let Ok(CallToolResponse::Task(created)) = answer else {
        panic!("{tool} was not answered with a task handle: {answer:?}")
    };
    loop {
        let params = GetTaskParams::new(created.task.task_id.clone());
        let got = client.get_task(params).await.expect("tasks/get");
        match got.task.payload {
            TaskPayload::Completed { result } => {
                return serde_json::from_value(Value::Object(result))
                    .expect("the task's result is a tools/call result");
            }
            TaskPayload::Working => tokio::time::sleep(poll).await,
            other => panic!("{tool}: the task ended as {other:?}"),
        }
    }
}
