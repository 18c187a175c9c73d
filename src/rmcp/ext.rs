//! [`ServerHandlerExt`]: the layer in front of any rmcp server, in one method.

use rmcp::ServerHandler;
use tower_layer::Layer;

use super::handler_service::HandlerService;
use super::layered::LayeredHandler;
use crate::layer::ToolErrorLayer;
use crate::service::ToolErrors;

/// Puts a tower stack in front of the `tools/call` of any rmcp [`ServerHandler`].
///
/// Implemented for every `ServerHandler`; see the [module docs](super) for an
/// example.
///
/// Task-augmented calls (the tasks extension): a `tools/call` answered with a
/// task handle is remembered with its tool, and the task's result is rewrapped
/// in the `tasks/get` answer that delivers it, as a direct call's would be. For
/// a panic in a task's operation to be answered too, wrap the operation given to
/// rmcp's `TaskManager::spawn` in [`catch_task_panics`](super::catch_task_panics):
/// `tasks.spawn(options, catch_task_panics(|ctx| Box::pin(async move { .. })))`.
pub trait ServerHandlerExt: ServerHandler + sealed::Sealed {
    /// Sends `tools/call` through the default [`ToolErrorLayer`]: tool errors are
    /// rewrapped for the model and a panicking tool gets an `isError` answer.
    ///
    /// Each call makes a new layer, with a memory of tasks of its own: for a
    /// server that makes a handler per session, build one layer and give each
    /// handler a clone with [`layer`](Self::layer) (see the [module
    /// docs](super#one-layer-for-every-session)).
    fn with_tool_errors(self) -> LayeredHandler<Self, ToolErrors<HandlerService<Self>>>;

    /// Sends `tools/call` through `layer`: a configured [`ToolErrorLayer`], or a
    /// whole `tower::ServiceBuilder` stack (a timeout, a concurrency limit, ...).
    fn layer<L>(self, layer: L) -> LayeredHandler<Self, L::Service>
    where
        L: Layer<HandlerService<Self>>;
}

impl<H: ServerHandler> ServerHandlerExt for H {
    fn with_tool_errors(self) -> LayeredHandler<Self, ToolErrors<HandlerService<Self>>> {
        LayeredHandler::new(self, ToolErrorLayer::new())
    }

    fn layer<L>(self, layer: L) -> LayeredHandler<Self, L::Service>
    where
        L: Layer<HandlerService<Self>>,
    {
        LayeredHandler::new(self, layer)
    }
}

mod sealed {
    pub trait Sealed {}
    impl<H: rmcp::ServerHandler> Sealed for H {}
}
