//! Finding the tool result in a [`RouterResponse`], and answering in place of the
//! router (after a panic or a timeout).

use ::tower_mcp::{CallToolResult, JsonRpcError, McpResponse, RouterResponse};

use super::id;
use super::pending::TowerMcpPending;
use crate::exchange::{LayerAnswer, Outcome, Pending, UnansweredCall};

/// `E` is the inner service's error, whatever it is: tower-mcp carries JSON-RPC
/// errors inside the [`RouterResponse`], so even the answer to a panic is `Ok`.
impl<E> Pending<RouterResponse, E> for TowerMcpPending {
    type Result = CallToolResult;
    /// Task results are not followed on tower-mcp (see the [module docs](super)).
    type TaskResult = CallToolResult;

    /// Visits the typed `CallToolResult` of a `tools/call` answered with the
    /// request's own id. A JSON-RPC error, any other `McpResponse` variant
    /// (including `Raw`, which tower-mcp's router never uses for a tool call, and
    /// the task handles of task-augmented calls) and a response with another id
    /// are left as they are.
    fn for_each_tool_result(
        &self,
        response: &mut RouterResponse,
        mut visit: impl FnMut(&str, &mut CallToolResult),
    ) {
        let Some(tool) = &self.tool else {
            return;
        };
        if !id::matches(&self.id, &response.id) {
            return;
        }
        if let Ok(McpResponse::CallTool(result)) = &mut response.inner {
            visit(tool, result);
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
            // tower-mcp's own constructor: code -32603, no data.
            LayerAnswer::InternalError { message } => Err(JsonRpcError::internal_error(message)),
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
