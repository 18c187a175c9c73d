//! Reading rmcp's typed requests into [`RmcpPending`], and answering in place of
//! the handler (after a panic or a timeout).

use compact_str::CompactString;
use rmcp::ErrorData;
use rmcp::model::{
    CallToolResult, ClientRequest, ContentBlock, ErrorCode, JsonObject, ServerResult, TaskPayload,
};
use tokio_util::sync::CancellationToken;

use super::request::RequestWithContext;
use crate::exchange::request_id::RequestId;
use crate::exchange::{LayerAnswer, Pending, Request, TaskExchange, UnansweredCall};

/// What the layer remembers of an rmcp request: the tool name of a `tools/call`,
/// the task id of a `tasks/get`, and the request id when the request carries its
/// context.
#[derive(Debug, Clone)]
pub struct RmcpPending {
    /// `Some` for a `tools/call`.
    tool: Option<CompactString>,
    /// `Some` for a `tasks/get`.
    task_id: Option<CompactString>,
    /// Only for the log: a bare [`ClientRequest`] has no id.
    id: Option<RequestId>,
    /// The request context's token, kept only when a timeout applies.
    cancellation: Option<CancellationToken>,
}

impl RmcpPending {
    fn read(request: &ClientRequest, id: Option<&rmcp::model::RequestId>) -> Self {
        let tool = match request {
            ClientRequest::CallToolRequest(call) => {
                Some(CompactString::from(call.params.name.as_ref()))
            }
            _ => None,
        };
        let task_id = match request {
            ClientRequest::GetTaskRequest(get) => {
                Some(CompactString::from(get.params.task_id.as_str()))
            }
            _ => None,
        };
        Self {
            tool,
            task_id,
            id: id.map(RequestId::from),
            cancellation: None,
        }
    }
}

impl Request for ClientRequest {
    type Pending = RmcpPending;

    fn pending(&self) -> RmcpPending {
        RmcpPending::read(self, None)
    }
}

impl Request for RequestWithContext {
    type Pending = RmcpPending;

    fn pending(&self) -> RmcpPending {
        RmcpPending::read(&self.request, Some(&self.context.id))
    }

    /// Keeps the context's cancellation token, so that a timed-out call also
    /// stops the work its handler spawned with `context.ct`.
    fn prepare_cancellation(&mut self, pending: &mut RmcpPending) {
        pending.cancellation = Some(self.context.ct.clone());
    }
}

/// `E` is the inner service's error: [`ErrorData`] itself, or any error it
/// converts into (a `tower::BoxError`, for instance).
impl<E: From<ErrorData>> Pending<ServerResult, E> for RmcpPending {
    type Result = CallToolResult;

    fn for_each_tool_result(
        &self,
        response: &mut ServerResult,
        mut visit: impl FnMut(&str, &mut CallToolResult),
    ) {
        if let (Some(tool), ServerResult::CallToolResult(result)) = (&self.tool, response) {
            visit(tool, result);
        }
    }

    /// rmcp has no way to carry an error inside a [`ServerResult`]: its
    /// [`ErrorData`] *is* the JSON-RPC error response. So a request that is not a
    /// `tools/call` is answered with `Err` (code -32603), the one place the layer
    /// returns an error of its own.
    fn layer_response(
        &self,
        mut answer: impl FnMut(UnansweredCall<'_>) -> LayerAnswer,
    ) -> Result<ServerResult, E> {
        let id = self.id.as_ref().map(|id| id as &dyn std::fmt::Debug);
        match answer(UnansweredCall::new(self.tool.as_deref(), id)) {
            LayerAnswer::ToolError { text } => Ok(ServerResult::CallToolResult(
                // rmcp's own constructor: `resultType` is set as rmcp sets it on
                // every result, and rmcp's server drops it for older peers.
                CallToolResult::error(vec![ContentBlock::text(text)]),
            )),
            LayerAnswer::InternalError { message } => Err(E::from(ErrorData::new(
                ErrorCode::INTERNAL_ERROR,
                message,
                None,
            ))),
        }
    }

    fn called_tools(&self) -> impl Iterator<Item = &str> {
        self.tool.as_deref().into_iter()
    }

    /// Cancels the request context's token (`context.ct`).
    fn cancel(&self) {
        if let Some(cancellation) = &self.cancellation {
            cancellation.cancel();
        }
    }

    /// The result of a `tools/call` made a task is the `result` of a `completed`
    /// `tasks/get` answer: a JSON object, as rmcp's `TaskManager` stores it.
    type TaskResult = JsonObject;

    fn task_exchange<'a>(&'a self, response: &'a mut ServerResult) -> TaskExchange<'a, JsonObject> {
        match (&self.tool, &self.task_id, response) {
            (Some(tool), _, ServerResult::CreateTaskResult(created)) => TaskExchange::Created {
                tool,
                task_id: &created.task.task_id,
                ttl_ms: created.task.ttl_ms,
            },
            (_, Some(task_id), ServerResult::GetTaskResult(got)) => match &mut got.task.payload {
                TaskPayload::Completed { result } => TaskExchange::Result { task_id, result },
                TaskPayload::Failed { .. } | TaskPayload::Cancelled => {
                    TaskExchange::Ended { task_id }
                }
                _ => TaskExchange::None,
            },
            _ => TaskExchange::None,
        }
    }
}

impl From<&rmcp::model::RequestId> for RequestId {
    fn from(id: &rmcp::model::RequestId) -> Self {
        match id {
            rmcp::model::RequestId::Number(n) => Self::Number((*n).into()),
            rmcp::model::RequestId::String(s) => Self::String(s.as_ref().into()),
        }
    }
}
