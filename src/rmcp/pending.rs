//! Reading rmcp's typed requests into [`RmcpPending`], and answering in place of
//! the handler (after a panic or a timeout).

use std::borrow::Cow;

use compact_str::CompactString;
use rmcp::ErrorData;
use rmcp::model::{
    CallToolResult, ClientRequest, ContentBlock, ErrorCode, GetMeta, JsonObject, ProtocolVersion,
    RequestMetaObject, ServerResult, TaskPayload,
};
use tokio_util::sync::CancellationToken;
use tower::BoxError;

use super::request::RequestWithContext;
use crate::model::request_id::RequestId;
use crate::model::{
    LayerAnswer, Outcome, Pending, Request, RequestView, TaskExchange, UnansweredCall,
};

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

/// The protocol versions rmcp knows, to name the session's version without
/// copying it out of the peer's handshake.
static KNOWN_VERSIONS: [ProtocolVersion; 5] = [
    ProtocolVersion::V_2026_07_28,
    ProtocolVersion::V_2025_11_25,
    ProtocolVersion::V_2025_06_18,
    ProtocolVersion::V_2025_03_26,
    ProtocolVersion::V_2024_11_05,
];

/// The view of `request`, whose `_meta` is `meta`: rmcp moves it out of the
/// request into the [`RequestContext`](rmcp::service::RequestContext).
fn view<'a>(request: &'a ClientRequest, meta: &'a RequestMetaObject) -> RequestView<'a> {
    let tool = match request {
        ClientRequest::CallToolRequest(call) => Some(call.params.name.as_ref()),
        _ => None,
    };
    RequestView::new(request.method())
        .with_tool(tool)
        .with_trace_context(meta.0.get_traceparent(), meta.0.get_tracestate())
}

impl Request for ClientRequest {
    type Pending = RmcpPending;

    fn pending(&self) -> RmcpPending {
        RmcpPending::read(self, None)
    }

    fn view(&self) -> Option<RequestView<'_>> {
        let meta = self.get_meta();
        let version = meta.protocol_version().map(version_name);
        Some(view(self, meta).with_protocol_version(version))
    }
}

impl Request for RequestWithContext {
    type Pending = RmcpPending;

    fn pending(&self) -> RmcpPending {
        RmcpPending::read(&self.request, Some(&self.context.id))
    }

    fn view(&self) -> Option<RequestView<'_>> {
        let view = view(&self.request, &self.context.meta)
            .with_id(&self.context.id)
            // The request's own `_meta`, or else the session's handshake.
            .with_protocol_version(self.context.protocol_version().map(version_name));
        Some(view)
    }

    /// Keeps the context's cancellation token, so that a timed-out call also
    /// stops the work its handler spawned with `context.ct`.
    fn prepare_cancellation(&mut self, pending: &mut RmcpPending) {
        pending.cancellation = Some(self.context.ct.clone());
    }
}

/// `version` as text, borrowed when rmcp knows it.
fn version_name(version: ProtocolVersion) -> Cow<'static, str> {
    match KNOWN_VERSIONS.iter().find(|known| **known == version) {
        Some(known) => Cow::Borrowed(known.as_str()),
        None => Cow::Owned(version.to_string()),
    }
}

/// `E` is the inner service's error: [`ErrorData`] itself, or any error it
/// converts into (a `tower::BoxError`, for instance).
impl<E: From<ErrorData> + 'static> Pending<ServerResult, E> for RmcpPending {
    type Result = CallToolResult;

    /// The result of a `tools/call` made a task is the `result` of a `completed`
    /// `tasks/get` answer: a JSON object, as rmcp's `TaskManager` stores it.
    type TaskResult = JsonObject;

    fn visit_answers<'a>(
        &'a self,
        response: &'a mut ServerResult,
        mut rewrap: impl FnMut(&str, &mut CallToolResult),
    ) -> TaskExchange<'a, JsonObject> {
        match (&self.tool, &self.task_id, response) {
            (Some(tool), _, ServerResult::CallToolResult(result)) => {
                rewrap(tool, result);
                TaskExchange::None
            }
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
            LayerAnswer::ErrorResponse { code, message } => {
                Err(E::from(ErrorData::new(ErrorCode(code), message, None)))
            }
        }
    }

    /// An error is a JSON-RPC error response when it is an [`ErrorData`], bare or
    /// boxed (a `tower::BoxError` from a stack).
    fn outcome(&self, result: &Result<ServerResult, E>) -> Outcome {
        match result {
            Ok(ServerResult::CallToolResult(result)) if result.is_error == Some(true) => {
                Outcome::ToolError
            }
            Ok(_) => Outcome::Success,
            Err(error) => match error_data(error) {
                Some(error) => Outcome::ErrorResponse {
                    code: error.code.0.into(),
                },
                None => Outcome::ServiceError,
            },
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
}

/// `error` as rmcp's [`ErrorData`], if it is one (bare, or in a `BoxError`).
fn error_data<E: 'static>(error: &E) -> Option<&ErrorData> {
    let error: &dyn std::any::Any = error;
    error.downcast_ref::<ErrorData>().or_else(|| {
        error
            .downcast_ref::<BoxError>()
            .and_then(|error| error.downcast_ref::<ErrorData>())
    })
}

impl From<&rmcp::model::RequestId> for RequestId {
    fn from(id: &rmcp::model::RequestId) -> Self {
        match id {
            rmcp::model::RequestId::Number(n) => Self::Number((*n).into()),
            rmcp::model::RequestId::String(s) => Self::String(s.as_ref().into()),
        }
    }
}
