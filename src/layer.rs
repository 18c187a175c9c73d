//! [`ToolErrorLayer`]: the layer users add, and its builder methods.

use tower_layer::Layer;

use crate::config::Config;
use crate::render::{ErrorRenderer, Llmxml};
use crate::service::ToolErrors;
use crate::tasks::TaskMemory;

/// Wraps a service in [`ToolErrors`]: tool errors are rewrapped for the model and
/// panics become answers.
///
/// Cheap to clone: it holds the renderer, one flag, and a handle to the
/// layer's memory of tasks.
///
/// Every service this layer builds, and every service built by a clone of it,
/// shares one memory of task-augmented calls: a task created through one
/// service has its result rewrapped when it is delivered through another (a
/// server that builds one service per session, polled from a new session).
/// Layers made with [`ToolErrorLayer::new`] separately remember separately.
///
/// ```
/// use mcp_tool_errors::ToolErrorLayer;
///
/// let layer = ToolErrorLayer::new().expose_panic_messages(true);
/// # let _ = layer;
/// ```
#[derive(Clone, Default)]
pub struct ToolErrorLayer<R = Llmxml> {
    config: Config<R>,
    tasks: TaskMemory,
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

    /// Renders errors with `renderer` instead of [`Llmxml`].
    pub fn renderer<R2: ErrorRenderer>(self, renderer: R2) -> ToolErrorLayer<R2> {
        ToolErrorLayer {
            config: Config {
                renderer,
                expose_panic_messages: self.config.expose_panic_messages,
            },
            tasks: self.tasks,
        }
    }
}

impl<R> std::fmt::Debug for ToolErrorLayer<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolErrorLayer")
            .field("config", &self.config)
            .field("tasks", &self.tasks)
            .finish()
    }
}

impl<S, R: Clone> Layer<S> for ToolErrorLayer<R> {
    type Service = ToolErrors<S, R>;

    fn layer(&self, inner: S) -> Self::Service {
        // One memory per layer value: a task created through one service is
        // recognised when another service of the same layer delivers it.
        ToolErrors::from_parts(inner, self.config.clone(), self.tasks.clone())
    }
}
