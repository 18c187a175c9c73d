//! [`ToolErrorLayer`]: the layer users add, and its builder methods.

use std::time::Duration;

use tower_layer::Layer;

use crate::config::Config;
use crate::render::{ErrorRenderer, Llmxml};
use crate::service::ToolErrors;
use crate::tasks::TaskMemory;

/// Wraps a service in [`ToolErrors`]: tool errors are rewrapped for the model and
/// panics become answers.
///
/// Cheap to clone: it holds the renderer, one flag and the timeouts (the
/// per-tool ones shared behind an `Arc`).
///
/// ```
/// use std::time::Duration;
/// use mcp_tool_errors::ToolErrorLayer;
///
/// let layer = ToolErrorLayer::new()
///     .expose_panic_messages(true)
///     .tool_timeout(Duration::from_secs(30))
///     .tool_timeout_for("deploy", Duration::from_secs(300));
/// # let _ = layer;
/// ```
#[derive(Clone, Default)]
pub struct ToolErrorLayer<R = Llmxml> {
    config: Config<R>,
}

impl ToolErrorLayer {
    /// The default layer: llmxml rendering, panic messages kept out of responses.
    pub fn new() -> Self {
        Self::default()
    }
}

impl<R> ToolErrorLayer<R> {
    /// Whether the panic payload (when it is a string) is sent to the client.
    ///
    /// Off by default: a payload can hold secrets (tokens in a formatted request,
    /// paths, user data). It always goes to the `tracing` log.
    pub fn expose_panic_messages(mut self, expose: bool) -> Self {
        self.config.expose_panic_messages = expose;
        self
    }

    /// Answers every `tools/call` not answered within `timeout`: with an
    /// `isError` result whose text is `The tool did not finish within D and was
    /// cancelled.`, rendered like any error. The handler's future is dropped then
    /// (so the tool stops at its next await point), and with rmcp the request's
    /// cancellation token is cancelled.
    ///
    /// Only `tools/call` is timed; a batch is bounded by the shortest timeout of
    /// its `tools/call`. No timeout by default. A timeout needs a tokio runtime
    /// with its time driver (tokio's `time` feature and `enable_time`).
    pub fn tool_timeout(mut self, timeout: Duration) -> Self {
        self.config.timeouts.set_every_tool(timeout);
        self
    }

    /// Gives the tool named `tool` a timeout of its own, in place of
    /// [`tool_timeout`](Self::tool_timeout); call it once per tool.
    pub fn tool_timeout_for(mut self, tool: impl Into<String>, timeout: Duration) -> Self {
        self.config.timeouts.set_for_tool(tool.into(), timeout);
        self
    }

    /// Renders errors with `renderer` instead of [`Llmxml`].
    pub fn renderer<R2: ErrorRenderer>(self, renderer: R2) -> ToolErrorLayer<R2> {
        ToolErrorLayer {
            config: Config {
                renderer,
                expose_panic_messages: self.config.expose_panic_messages,
                timeouts: self.config.timeouts,
            },
        }
    }
}

impl<R> std::fmt::Debug for ToolErrorLayer<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolErrorLayer")
            .field("config", &self.config)
            .finish()
    }
}

impl<S, R: Clone> Layer<S> for ToolErrorLayer<R> {
    type Service = ToolErrors<S, R>;

    fn layer(&self, inner: S) -> Self::Service {
        // Each service gets its own memory of tasks, shared by its clones.
        ToolErrors::from_parts(inner, self.config.clone(), TaskMemory::default())
    }
}
