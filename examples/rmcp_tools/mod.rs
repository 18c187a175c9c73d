//! The server both rmcp examples serve: the demonstration tools of [`demo`]
//! and [`tasks`], and the tools the MCP conformance suite calls, in
//! [`conformance`], [`conformance_input`] and [`conformance_tasks`].
//!
//! Every tool is written the way rmcp users write them (`#[tool_router]`,
//! `#[tool]`, `Parameters<T>`, `RequestContext`), with no knowledge of the layer:
//! what the client sees differs only because the examples serve
//! `DemoServer::new().with_tool_errors()` instead of `DemoServer::new()`.
// Logging is deprecated by the draft protocol revision (SEP-2577) but is part of
// the 2025-06-18 and 2025-11-25 revisions that clients speak today.
#![allow(deprecated)]

mod conformance;
mod conformance_input;
mod conformance_tasks;
mod demo;
mod tasks;

use demo::FAKE_SECRET;

use std::sync::atomic::{AtomicU8, Ordering};

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{
    CancelTaskParams, GetPromptRequestParams, GetPromptResponse, GetTaskParams, GetTaskResult,
    Implementation, ListPromptsResult, LoggingLevel, LoggingMessageNotificationParam,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, SetLevelRequestParams,
    UpdateTaskParams,
};
use rmcp::service::RequestContext;
use rmcp::task_manager::TaskManager;
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler, tool_handler};

/// One MCP session's server: its tools, and the log level its client asked for.
pub(crate) struct DemoServer {
    tools: ToolRouter<Self>,
    /// The least severe level the client wants log messages at, as
    /// [`severity`] numbers it; `info` until the client says otherwise.
    min_log_severity: AtomicU8,
    /// The tasks of the tools that run as tasks; shared by every session's server,
    /// so that a task can be polled from another connection.
    tasks: TaskManager,
}

impl DemoServer {
    /// A server with every demonstration and conformance tool.
    // The HTTP example shares one task manager between sessions instead.
    #[allow(dead_code)]
    pub(crate) fn new() -> Self {
        Self::with_tasks(TaskManager::new())
    }

    /// A server whose tools run their tasks on `tasks`.
    pub(crate) fn with_tasks(tasks: TaskManager) -> Self {
        Self {
            tools: Self::demo_tools()
                + Self::conformance_tools()
                + Self::conformance_input_tools()
                + Self::conformance_task_tools()
                + Self::task_tools(),
            min_log_severity: AtomicU8::new(severity(LoggingLevel::Info)),
            tasks,
        }
    }

    /// Sends a log message to the client, unless its level is below the one
    /// the client set with `logging/setLevel`.
    async fn log(&self, peer: &Peer<RoleServer>, level: LoggingLevel, message: &str) {
        if severity(level) < self.min_log_severity.load(Ordering::Relaxed) {
            return;
        }
        let notification = LoggingMessageNotificationParam::new(level, message.into())
            .with_logger(env!("CARGO_CRATE_NAME"));
        // A client that went away cannot read the message; the tool goes on.
        if let Err(error) = peer.notify_logging_message(notification).await {
            tracing::warn!(%error, "could not send a log message to the client");
        }
    }
}

impl std::fmt::Debug for DemoServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DemoServer")
            .field("tools", &self.tools)
            .field("min_log_severity", &self.min_log_severity)
            .field("running_tasks", &self.tasks.running_task_count())
            .finish()
    }
}

/// Orders log levels from `debug` (0) to `emergency` (7), as the protocol does.
fn severity(level: LoggingLevel) -> u8 {
    level as u8
}

#[tool_handler(router = self.tools)]
impl ServerHandler for DemoServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_logging()
                .enable_prompts()
                .enable_tasks()
                .build(),
        )
        .with_server_info(Implementation::new(
            env!("CARGO_CRATE_NAME"),
            env!("CARGO_PKG_VERSION"),
        ))
        .with_instructions(
            "Demonstrates mcp-tool-errors: `fail`, `panic`, `panic_async` and `add` with \
             wrong arguments all answer with an <error tool=\"...\"> element.",
        )
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.min_log_severity
            .store(severity(request.level), Ordering::Relaxed);
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(Self::prompts()))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        Self::input_required_prompt(request)
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

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks
            .update_task(&request.task_id, request.input_responses)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks.cancel_task(&request.task_id)
    }
}

/// Sends logs to stderr: over stdio, stdout carries the protocol.
pub(crate) fn log_to_stderr() {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(tracing::Level::INFO)
        .init();
}
