//! A tower-mcp [`RouterResponse`] as the layer reads it, and builds it in place
//! of the router's (after a panic or a timeout).

use ::tower_mcp::tasks::DetailedTask;
use ::tower_mcp::{
    CallToolResult, JsonRpcError, McpResponse, RequestId as RouterId, RouterResponse, TaskStatus,
};

use super::id;
use super::tool_result::has_result;
use crate::model::{
    self, Answer, AnswerBody, AnswerId, CallResult, LayerAnswer, LayerAnswers, Response,
};

/// `E` is the inner service's error, whatever it is: tower-mcp carries JSON-RPC
/// errors inside the [`RouterResponse`], so even the answer to a panic is `Ok`.
impl<E> Response<E> for RouterResponse {
    type Body = McpResponse;

    fn visit_answers(
        response: &mut Result<RouterResponse, E>,
        mut visit: impl FnMut(AnswerId<'_>, Answer<'_, McpResponse>),
    ) {
        let Ok(response) = response else {
            return visit(AnswerId::Implicit, Answer::ServiceError);
        };
        let id = match &response.id {
            RouterId::Number(n) => AnswerId::Integer(*n),
            RouterId::String(s) => AnswerId::String(s),
            other => AnswerId::Owned(serde_json::to_value(other).unwrap_or_default()),
        };
        match &mut response.inner {
            Ok(answer) => visit(id, Answer::Result(answer)),
            Err(error) => visit(
                id,
                Answer::Error {
                    code: Some(error.code.into()),
                },
            ),
        }
    }

    fn layer_response(answers: LayerAnswers<'_>) -> Result<RouterResponse, E> {
        let (id, answer) = answers
            .into_first()
            .expect("a RouterRequest always expects an answer");
        let inner = match answer {
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
        let id = id.expect("a RouterRequest has an id");
        Ok(RouterResponse {
            id: id::to_router_id(id),
            inner,
        })
    }
}

/// A task's result is read in the whole `tasks/get` answer: tower-mcp carries
/// it in one of two types, as the protocol version of the request decides (see
/// the `ToolResult` implementation of `McpResponse`).
impl AnswerBody for McpResponse {
    type Tool = CallToolResult;
    type Task = McpResponse;

    /// The typed `CallToolResult`, or a task handle (`CreateTask` before
    /// 2026-07-28, `FinalCreateTask` from it). Any other variant (including
    /// `Raw`, which tower-mcp's router never uses for a tool call) is left alone.
    fn as_call_result(&mut self) -> CallResult<'_, CallToolResult> {
        match self {
            McpResponse::CallTool(result) => CallResult::Tool {
                is_error: result.is_error,
                result,
            },
            McpResponse::CreateTask(created) => CallResult::Task {
                task_id: &created.task.task_id,
                ttl_ms: created.task.ttl,
            },
            McpResponse::FinalCreateTask(created) => CallResult::Task {
                task_id: &created.task.metadata.task_id,
                ttl_ms: created.task.metadata.ttl_ms,
            },
            _ => CallResult::Other,
        }
    }

    fn as_task_state(&mut self) -> model::TaskState<'_, McpResponse> {
        let status = match self {
            McpResponse::GetTaskInfo(task) => status_as_sent(task.status),
            McpResponse::FinalGetTask(got) => match &got.task {
                DetailedTask::Working { .. } => Some("working"),
                DetailedTask::InputRequired { .. } => Some("input_required"),
                DetailedTask::Completed { .. } => Some("completed"),
                DetailedTask::Failed { .. } => Some("failed"),
                DetailedTask::Cancelled { .. } => Some("cancelled"),
                _ => None,
            },
            _ => return model::TaskState::unknown(),
        };
        // The result is read inside the whole answer (see the `ToolResult`
        // implementation of `McpResponse`).
        let result = has_result(self).then_some(self);
        model::TaskState { status, result }
    }

    fn visit_listed_tools(&self, visit: impl FnMut(&str)) {
        if let McpResponse::ListTools(list) = self {
            list.tools
                .iter()
                .map(|tool| tool.name.as_str())
                .for_each(visit);
        }
    }
}

/// The `status` tower-mcp writes on the wire for `status`; `None` for a status
/// this version of the layer does not know.
fn status_as_sent(status: TaskStatus) -> Option<&'static str> {
    Some(match status {
        TaskStatus::Working => "working",
        TaskStatus::InputRequired => "input_required",
        TaskStatus::Completed => "completed",
        TaskStatus::Failed => "failed",
        TaskStatus::Cancelled => "cancelled",
        _ => return None,
    })
}
