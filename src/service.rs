//! [`ToolErrors`]: the service that wraps the inner MCP service.

use std::sync::Arc;
use std::task::{Context, Poll};

use tower_service::Service;

use crate::config::Config;
use crate::future::{ResponseFuture, Shared};
use crate::message::{McpRequest, McpResponse};
use crate::panic;
use crate::render::{ErrorRenderer, Llmxml};
use crate::tasks::TaskMemory;
use crate::tasks::panics::Current;
use crate::telemetry::{self, ToolNames};
use crate::timeout::Timer;

/// Rewraps the text of `isError` tool results, answers panics of the inner
/// service and, when configured, `tools/call` that run out of time; everything
/// else passes through unchanged.
///
/// Built by [`ToolErrorLayer`](crate::ToolErrorLayer).
///
/// # Errors
///
/// `Error = S::Error`: an error of the inner service is passed on as it is. The
/// layer answers failures with responses wherever the message type can carry
/// one (an `isError` result, or a JSON-RPC error inside the response for JSON and
/// tower-mcp). It returns an error of its own in these cases only, all on the
/// rmcp path, whose `ErrorData` *is* the JSON-RPC error response:
///
/// - over rmcp's `ClientRequest`, a request other than `tools/call` whose handler
///   panicked gets `Err(ErrorData)` with code -32603;
/// - behind `ServerHandlerExt`, an error of the stack that is not an `ErrorData`
///   (a `tower::timeout` error, say) becomes -32603 with the error's text, and a
///   stack that answers `tools/call` with a result of another kind gets -32603.
///
/// A panic in `poll_ready` is not caught: there is no request yet to answer, and
/// a service that panicked there cannot be trusted to become ready again.
///
/// # No response
///
/// When the layer answers in place of the inner service and nothing expects an
/// answer (a notification whose handler panicked or timed out, a batch of only
/// such notifications), the response is `None` over an inner service that
/// answers `Option<Value>`, and `Value::Null` over one that answers a bare
/// `Value`; a transport writes nothing for either (see the crate docs, [No
/// response on the `Value` path](crate#no-response-on-the-value-path)).
///
/// ```
/// use mcp_tool_errors::ToolErrors;
/// use serde_json::{Value, json};
/// use tower::{ServiceExt, service_fn};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let server = service_fn(|_request: Value| async move {
///     panic!("the handler failed");
///     #[allow(unreachable_code)]
///     Ok::<Option<Value>, std::convert::Infallible>(None)
/// });
/// let notification = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
/// # let hook = std::panic::take_hook();
/// # std::panic::set_hook(Box::new(|_| {}));
/// let response = ToolErrors::new(server).oneshot(notification).await.unwrap();
/// # std::panic::set_hook(hook);
/// assert_eq!(response, None);
/// # }
/// ```
#[derive(Clone)]
pub struct ToolErrors<S, R = Llmxml> {
    inner: S,
    shared: Arc<Shared<R>>,
}

impl<S> ToolErrors<S> {
    /// Wraps `inner` with the default settings.
    pub fn new(inner: S) -> Self {
        Self::from_parts(
            inner,
            Config::default(),
            TaskMemory::default(),
            ToolNames::default(),
        )
    }
}

impl<S, R> ToolErrors<S, R> {
    pub(crate) fn from_parts(
        inner: S,
        config: Config<R>,
        tasks: TaskMemory,
        tool_names: ToolNames,
    ) -> Self {
        let shared = Shared {
            config,
            tasks,
            tool_names,
        };
        Self {
            inner,
            shared: Arc::new(shared),
        }
    }

    /// How many task ids this service remembers now (a memory shared by its
    /// clones and by every service of the layer that built it): tasks created
    /// by a `tools/call` and not forgotten yet, at most
    /// [`max_remembered_tasks`](crate::ToolErrorLayer::max_remembered_tasks).
    pub fn remembered_tasks(&self) -> usize {
        self.shared.tasks.len()
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
            .field("config", &self.shared.config)
            .field("tasks", &self.shared.tasks)
            .finish()
    }
}

impl<S, Req, R> Service<Req> for ToolErrors<S, R>
where
    S: Service<Req>,
    Req: McpRequest,
    S::Response: McpResponse<S::Error>,
    R: ErrorRenderer,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = ResponseFuture<S::Future, Req, R>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Req) -> Self::Future {
        let (span, duration) = telemetry::start(&request, self.shared.config.network_transport);
        let calls = request.calls();
        let timer = self
            .shared
            .config
            .timeouts
            .for_tools(calls.tools())
            .map(|timeout| (Timer::start(timeout), request.cancellation()));
        let shared = self.shared.clone();
        let _current = Current::enter_if(Req::SPAWNS_TASKS, &shared.tasks);
        match span.in_scope(|| panic::catch(|| self.inner.call(request))) {
            Ok(future) => ResponseFuture::running(future, timer, calls, shared, span, duration),
            Err(panic) => ResponseFuture::panicked(panic, calls, shared, span, duration),
        }
    }
}
