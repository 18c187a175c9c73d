//! Finding the tool result in a [`RouterResponse`], and answering in place of the
//! router (after a panic or a timeout).

use ::tower_mcp::tasks::DetailedTask;
use ::tower_mcp::{CallToolResult, JsonRpcError, McpResponse, RouterResponse, TaskStatus};

use super::id;
use super::pending::TowerMcpPending;
use crate::model::{LayerAnswer, Outcome, Pending, TaskExchange, UnansweredCall};

/// `E` is the inner service's error, whatever it is: tower-mcp carries JSON-RPC
/// errors inside the [`RouterResponse`], so even the answer to a panic is `Ok`.
impl<E> Pending<RouterResponse, E> for TowerMcpPending {
    type Result = CallToolResult;
    /// The whole answer to a `tasks/get`: tower-mcp carries a task's result in
    /// one of two types, as the protocol version of the request decides (see
    /// the `ToolResult` implementation of `McpResponse`).
    type TaskResult = McpResponse;

    /// Visits the typed `CallToolResult` of a `tools/call` answered with the
    /// request's own id. A JSON-RPC error, any other `McpResponse` variant
    /// (including `Raw`, which tower-mcp's router never uses for a tool call)
    /// and a response with another id are left as they are.
    ///
    /// For tasks: a `tools/call` answered with a task handle (`CreateTask`
    /// before 2026-07-28, `FinalCreateTask` from it), or a `tasks/get` answered
    /// with a task that has ended: `completed` delivers its result, `failed` and
    /// `cancelled` (or a JSON-RPC error: the task is unknown, or has expired)
    /// end it without one. Only answers with the request's own id count.
    fn visit_answers<'a>(
        &'a self,
        response: &'a mut RouterResponse,
        mut rewrap: impl FnMut(&str, &mut CallToolResult),
    ) -> TaskExchange<'a, McpResponse> {
        if !id::matches(&self.id, &response.id) {
            return TaskExchange::None;
        }
        match (&self.tool, &self.task_id, &mut response.inner) {
            (Some(tool), _, Ok(McpResponse::CallTool(result))) => {
                rewrap(tool, result);
                TaskExchange::None
            }
            (Some(tool), _, Ok(McpResponse::CreateTask(created))) => TaskExchange::Created {
                tool,
                task_id: &created.task.task_id,
                ttl_ms: created.task.ttl,
            },
            (Some(tool), _, Ok(McpResponse::FinalCreateTask(created))) => TaskExchange::Created {
                tool,
                task_id: &created.task.metadata.task_id,
                ttl_ms: created.task.metadata.ttl_ms,
            },
            (_, Some(task_id), Err(_)) => TaskExchange::Ended { task_id },
            (_, Some(task_id), Ok(answer)) => match delivered_status(answer) {
                Some(TaskStatus::Completed) => TaskExchange::Result {
                    task_id,
                    result: answer,
                },
                Some(TaskStatus::Failed | TaskStatus::Cancelled) => TaskExchange::Ended { task_id },
                _ => TaskExchange::None,
            },
            _ => TaskExchange::None,
        }
    }

    fn layer_response(
        &self,
        mut answer: impl FnMut(UnansweredCall<'_>) -> LayerAnswer,
    ) -> Result<RouterResponse, E> {
        let inner = match answer(UnansweredCall::new(self.tool.as_deref(), Some(&self.id))) {
            LayerAnswer::ToolError { text } => {
                Ok(McpResponse::CallTool(CallToolResult::error(text)))
            }
            // As tower-mcp's own constructors make it: no data.
            LayerAnswer::ErrorResponse { code, message } => Err(JsonRpcError {
                code,
                message,
                data: None,
            }),
        };
        Ok(RouterResponse {
            id: id::to_router_id(&self.id),
            inner,
        })
    }

    fn outcome(&self, result: &Result<RouterResponse, E>) -> Outcome {
        match result.as_ref().map(|response| &response.inner) {
            Ok(Ok(McpResponse::CallTool(result))) if result.is_error => Outcome::ToolError,
            Ok(Ok(_)) => Outcome::Success,
            Ok(Err(error)) => Outcome::ErrorResponse {
                code: error.code.into(),
            },
            Err(_) => Outcome::ServiceError,
        }
    }

    fn called_tools(&self) -> impl Iterator<Item = &str> {
        self.tool.as_deref().into_iter()
    }

    /// Cancels the request's own token, if it had one.
    fn cancel(&self) {
        if let Some(cancellation) = &self.cancellation {
            cancellation.cancel();
        }
    }
}

/// The status of the task a `tasks/get` answer describes.
fn delivered_status(answer: &McpResponse) -> Option<TaskStatus> {
    match answer {
        McpResponse::GetTaskInfo(task) => Some(task.status),
        McpResponse::FinalGetTask(got) => Some(match &got.task {
            DetailedTask::Completed { .. } => TaskStatus::Completed,
            DetailedTask::Failed { .. } => TaskStatus::Failed,
            DetailedTask::Cancelled { .. } => TaskStatus::Cancelled,
            // Working, input required, or a state this version does not know.
            _ => return None,
        }),
        _ => None,
    }
}
