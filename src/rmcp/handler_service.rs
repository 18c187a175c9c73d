//! [`HandlerService`]: an rmcp [`ServerHandler`] as the innermost tower service.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use rmcp::model::{ClientRequest, ServerResult};
use rmcp::service::Service as RmcpService;
use rmcp::{ErrorData, ServerHandler};
use tower_service::Service;

use super::request::RequestWithContext;

/// The bottom of the tower stack behind [`ServerHandlerExt`](super::ServerHandlerExt):
/// answers a `tools/call` with the handler's [`call_tool`](ServerHandler::call_tool),
/// a `tasks/get` with its [`get_task`](ServerHandler::get_task), and any other
/// request the way rmcp's own server dispatches it.
///
/// Cheap to clone (the handler is shared) and always ready.
#[derive(Debug)]
pub struct HandlerService<H> {
    handler: Arc<H>,
}

impl<H> HandlerService<H> {
    /// Serves requests with the shared `handler`.
    pub fn new(handler: Arc<H>) -> Self {
        Self { handler }
    }

    /// The handler.
    pub fn get_ref(&self) -> &H {
        &self.handler
    }
}

impl<H> Clone for HandlerService<H> {
    fn clone(&self) -> Self {
        Self {
            handler: Arc::clone(&self.handler),
        }
    }
}

impl<H: ServerHandler> Service<RequestWithContext> for HandlerService<H> {
    type Response = ServerResult;
    type Error = ErrorData;
    type Future = HandlerFuture;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), ErrorData>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: RequestWithContext) -> HandlerFuture {
        let handler = Arc::clone(&self.handler);
        let RequestWithContext { request, context } = request;
        HandlerFuture {
            inner: Box::pin(async move {
                match request {
                    ClientRequest::CallToolRequest(call) => handler
                        .call_tool(call.params, context)
                        .await
                        .map(ServerResult::from),
                    ClientRequest::GetTaskRequest(get) => handler
                        .get_task(get.params, context)
                        .await
                        .map(ServerResult::GetTaskResult),
                    other => RmcpService::handle_request(&*handler, other, context).await,
                }
            }),
        }
    }
}

/// Response future of [`HandlerService`].
///
/// Boxed because the handler's futures borrow the handler and their types
/// cannot be named; the box is private so that it can go away.
pub struct HandlerFuture {
    inner: Pin<Box<dyn Future<Output = Result<ServerResult, ErrorData>> + Send>>,
}

impl Future for HandlerFuture {
    type Output = Result<ServerResult, ErrorData>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.inner.as_mut().poll(cx)
    }
}

impl std::fmt::Debug for HandlerFuture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HandlerFuture").finish_non_exhaustive()
    }
}
