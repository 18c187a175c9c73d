//! [`ToolErrors`]: the service that wraps the inner MCP service.

use std::task::{Context, Poll};

use tower_service::Service;

use crate::config::Config;
use crate::exchange::{Pending, Request};
use crate::future::ResponseFuture;
use crate::panic;
use crate::render::{ErrorRenderer, Llmxml};

/// Rewraps the text of `isError` tool results and answers panics of the inner
/// service; everything else passes through unchanged.
///
/// Built by [`ToolErrorLayer`](crate::ToolErrorLayer). `Error = S::Error`: an error of the inner service
/// is passed on as it is and the layer never makes one of its own.
///
/// A panic in `poll_ready` is not caught: there is no request yet to answer, and
/// a service that panicked there cannot be trusted to become ready again.
#[derive(Clone)]
pub struct ToolErrors<S, R = Llmxml> {
    inner: S,
    config: Config<R>,
}

impl<S> ToolErrors<S> {
    /// Wraps `inner` with the default settings.
    pub fn new(inner: S) -> Self {
        Self::from_parts(inner, Config::default())
    }
}

impl<S, R> ToolErrors<S, R> {
    pub(crate) fn from_parts(inner: S, config: Config<R>) -> Self {
        Self { inner, config }
    }

    /// The inner service.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The inner service, mutably.
    pub fn get_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// Unwraps the inner service.
    pub fn into_inner(self) -> S {
        self.inner
    }
}

impl<S, R> std::fmt::Debug for ToolErrors<S, R>
where
    S: std::fmt::Debug,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolErrors")
            .field("inner", &self.inner)
            .field("config", &self.config)
            .finish()
    }
}

impl<S, Req, R> Service<Req> for ToolErrors<S, R>
where
    S: Service<Req>,
    Req: Request,
    Req::Pending: Pending<S::Response, S::Error>,
    R: ErrorRenderer,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = ResponseFuture<S::Future, Req::Pending, R>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Req) -> Self::Future {
        let pending = request.pending();
        let config = self.config.clone();
        match panic::catch(|| self.inner.call(request)) {
            Ok(future) => ResponseFuture::running(future, pending, config),
            Err(panic) => ResponseFuture::panicked(panic, pending, config),
        }
    }
}
