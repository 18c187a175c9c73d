//! [`RequestWithContext`]: a client request and the context rmcp handles it in.

use rmcp::RoleServer;
use rmcp::model::ClientRequest;
use rmcp::service::RequestContext;

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
