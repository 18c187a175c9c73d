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
pub trait ServerHandlerExt: ServerHandler + sealed::Sealed {
    /// Sends `tools/call` through the default [`ToolErrorLayer`]: tool errors are
    /// rewrapped for the model and a panicking tool gets an `isError` answer.
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
