//! A tower-mcp [`RouterRequest`] as the layer reads it.
//!
//! A `RouterRequest` is always one request that expects an answer: tower-mcp's
//! transports split batches and handle notifications before the router service
//! sees anything.

use std::borrow::Cow;

use ::tower_mcp::context::CancellationToken;
use ::tower_mcp::{McpRequest, RequestId as RouterId, RouterRequest};

use crate::model::request_id::RequestId;
use crate::model::{Call, CallId, CallKind, Calls, Request, RequestView};

impl Request for RouterRequest {
    type Cancellation = CancellationToken;

    fn calls(&self) -> Calls {
        let kind = match &self.inner {
            McpRequest::CallTool(params) => CallKind::Tool(params.name.as_str().into()),
            McpRequest::GetTaskInfo(params) => CallKind::TaskStatus(params.task_id.as_str().into()),
            McpRequest::ListTools(_) => CallKind::ToolList,
            _ => CallKind::Other,
        };
        Calls::one(Call::new(CallId::Id(RequestId::from(&self.id)), kind))
    }

    /// tower-mcp's typed `_meta` keeps only the keys it knows, so the W3C trace
    /// context of the request is not in the view: the span has no remote parent.
    fn view(&self) -> Option<RequestView<'_>> {
        let (tool, protocol_version) = match &self.inner {
            McpRequest::CallTool(params) => (
                Some(params.name.as_str()),
                params
                    .meta
                    .as_ref()
                    .and_then(|meta| meta.protocol_version.as_deref()),
            ),
            _ => (None, None),
        };
        let view = RequestView::new(self.inner.method_name())
            .with_tool(tool)
            .with_protocol_version(protocol_version.map(Cow::Borrowed));
        Some(match &self.id {
            RouterId::String(id) => view.with_id(id),
            RouterId::Number(id) => view.with_id(id),
            // A kind of id this version of tower-mcp does not know.
            _ => view,
        })
    }

    /// The request's [`CancellationToken`] if its transport gave it one
    /// (tower-mcp's HTTP transport does, for a stateless request). None is added
    /// otherwise: the router would take it in place of the child of the
    /// connection's token it makes (with a constructor of its own), and the
    /// handler would no longer be cancelled when the connection shuts down.
    fn cancellation(&self) -> Option<CancellationToken> {
        self.extensions.get::<CancellationToken>().cloned()
    }

    fn cancel(cancellation: &CancellationToken) {
        cancellation.cancel();
    }
}
