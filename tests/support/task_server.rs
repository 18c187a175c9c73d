//! An rmcp server whose tools run as tasks on rmcp's `TaskManager`, answering
//! `tasks/get` from it: the server of the tests that read a task's result where
//! `tasks/get` delivers it. Each test file gives it its tools in a
//! `#[tool_router(router = NAME)]` block of its own and passes `Self::NAME()`
//! to [`TaskServer::new`].
//!
//! Shared by the rmcp tests (through `support/mod.rs`) and the rmcp telemetry
//! tests (which include this file by `#[path]`).

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{GetTaskParams, GetTaskResult, ServerCapabilities, ServerConfig};
use rmcp::service::RequestContext;
use rmcp::task_manager::TaskManager;
use rmcp::{ErrorData, RoleServer, ServerHandler, tool_handler};

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
