//! rmcp's typed requests as the layer reads them: [`RequestWithContext`], and a
//! bare [`ClientRequest`].

use std::borrow::Cow;

use compact_str::CompactString;
use rmcp::RoleServer;
use rmcp::model::{ClientRequest, GetMeta, ProtocolVersion, RequestMetaObject};
use rmcp::service::RequestContext;
use tokio_util::sync::CancellationToken;

use crate::model::request_id::RequestId;
use crate::model::{Call, CallId, CallKind, Calls, Request, RequestView};

/// A client request together with its [`RequestContext`]: the peer, the
/// cancellation token, the request `_meta` (progress token included) and the
/// transport's extensions (HTTP request parts, for instance).
///
/// This is the request type of the tower stack behind
/// [`ServerHandlerExt`](super::ServerHandlerExt): layers see the whole request,
/// and the handler at the bottom gets the real context.
#[derive(Debug, Clone)]
pub struct RequestWithContext {
    /// The request as rmcp decoded it.
    pub request: ClientRequest,
    /// The context rmcp created for it.
    pub context: RequestContext<RoleServer>,
}

impl RequestWithContext {
    /// Pairs `request` with its `context`.
    pub fn new(request: ClientRequest, context: RequestContext<RoleServer>) -> Self {
        Self { request, context }
    }
}

/// A bare request has no id: its one answer is its own.
impl Request for ClientRequest {
    type Cancellation = std::convert::Infallible;
    const SPAWNS_TASKS: bool = true;

    fn calls(&self) -> Calls {
        Calls::one(Call::new(CallId::Unnamed, kind(self)))
    }

    fn view(&self) -> Option<RequestView<'_>> {
        let meta = self.get_meta();
        let version = meta.protocol_version().map(version_name);
        Some(view(self, meta).with_protocol_version(version))
    }
}

/// The id is kept for the log; the one answer is the request's own.
impl Request for RequestWithContext {
    type Cancellation = CancellationToken;
    const SPAWNS_TASKS: bool = true;

    fn calls(&self) -> Calls {
        let id = CallId::Id(RequestId::from(&self.context.id));
        Calls::one(Call::new(id, kind(&self.request)))
    }

    fn view(&self) -> Option<RequestView<'_>> {
        let view = view(&self.request, &self.context.meta)
            .with_id(&self.context.id)
            // The request's own `_meta`, or else the session's handshake.
            .with_protocol_version(self.context.protocol_version().map(version_name));
        Some(view)
    }

    /// The context's token, so that a timed-out call also stops the work its
    /// handler spawned with `context.ct`.
    fn cancellation(&self) -> Option<CancellationToken> {
        Some(self.context.ct.clone())
    }

    fn cancel(cancellation: &CancellationToken) {
        cancellation.cancel();
    }
}

fn kind(request: &ClientRequest) -> CallKind {
    match request {
        ClientRequest::CallToolRequest(call) => CallKind::Tool(call.params.name.as_ref().into()),
        ClientRequest::GetTaskRequest(get) => {
            CallKind::TaskStatus(CompactString::from(get.params.task_id.as_str()))
        }
        ClientRequest::ListToolsRequest(_) => CallKind::ToolList,
        _ => CallKind::Other,
    }
}

/// The view of `request`, whose `_meta` is `meta`: rmcp moves it out of the
/// request into the [`RequestContext`].
fn view<'a>(request: &'a ClientRequest, meta: &'a RequestMetaObject) -> RequestView<'a> {
    let tool = match request {
        ClientRequest::CallToolRequest(call) => Some(call.params.name.as_ref()),
        _ => None,
    };
    RequestView::new(request.method())
        .with_tool(tool)
        .with_trace_context(meta.0.get_traceparent(), meta.0.get_tracestate())
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

/// `version` as text, borrowed when rmcp knows it.
fn version_name(version: ProtocolVersion) -> Cow<'static, str> {
    match KNOWN_VERSIONS.iter().find(|known| **known == version) {
        Some(known) => Cow::Borrowed(known.as_str()),
        None => Cow::Owned(version.to_string()),
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
