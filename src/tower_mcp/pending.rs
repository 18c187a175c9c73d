//! Reading a [`RouterRequest`] into [`TowerMcpPending`].

use std::borrow::Cow;

use ::tower_mcp::context::CancellationToken;
use ::tower_mcp::{McpRequest, RequestId as RouterId, RouterRequest};
use compact_str::CompactString;

use crate::model::request_id::RequestId;
use crate::model::{Request, RequestView};

/// What the layer remembers of a [`RouterRequest`]: its id, the tool name of a
/// `tools/call` and the task id of a `tasks/get`.
///
/// A `RouterRequest` is always one request that expects an answer: tower-mcp's
/// transports split batches and handle notifications before the router service
/// sees anything. For an integer id (or a string id up to 24 bytes) and a tool
/// name up to 24 bytes, nothing is allocated.
#[derive(Debug, Clone)]
pub struct TowerMcpPending {
    pub(super) id: RequestId,
    /// `Some` for a `tools/call`.
    pub(super) tool: Option<CompactString>,
    /// `Some` for a `tasks/get`.
    pub(super) task_id: Option<CompactString>,
    /// The request's own cancellation token, when a timeout applies and a
    /// transport put one in the request's extensions.
    pub(super) cancellation: Option<CancellationToken>,
}

impl Request for RouterRequest {
    type Pending = TowerMcpPending;

    fn pending(&self) -> TowerMcpPending {
        let (tool, task_id) = match &self.inner {
            McpRequest::CallTool(params) => (Some(CompactString::from(params.name.as_str())), None),
            McpRequest::GetTaskInfo(params) => {
                (None, Some(CompactString::from(params.task_id.as_str())))
            }
            _ => (None, None),
        };
        TowerMcpPending {
            id: RequestId::from(&self.id),
            tool,
            task_id,
            cancellation: None,
        }
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

    /// Keeps the request's [`CancellationToken`] if its transport gave it one
    /// (tower-mcp's HTTP transport does, for a stateless request). None is added
    /// otherwise: the router would take it in place of the child of the
    /// connection's token it makes (with a constructor of its own), and the
    /// handler would no longer be cancelled when the connection shuts down.
    fn prepare_cancellation(&mut self, pending: &mut TowerMcpPending) {
        pending.cancellation = self.extensions.get::<CancellationToken>().cloned();
    }
}
