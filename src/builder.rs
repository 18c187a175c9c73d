//! [`ServiceBuilderExt`]: the layer as one `ServiceBuilder` method.

use tower::ServiceBuilder;
use tower_layer::Stack;

use crate::layer::ToolErrorLayer;

/// Adds [`tool_errors`](ServiceBuilderExt::tool_errors) to `tower::ServiceBuilder`.
///
/// ```
/// use mcp_tool_errors::ServiceBuilderExt;
/// use serde_json::{Value, json};
/// use tower::{ServiceBuilder, service_fn};
///
/// let service = ServiceBuilder::new()
///     .tool_errors()
///     .service(service_fn(|request: Value| async move {
///         Ok::<_, std::convert::Infallible>(json!({"jsonrpc": "2.0", "id": request["id"], "result": {}}))
///     }));
/// # let _ = service;
/// ```
pub trait ServiceBuilderExt<L>: sealed::Sealed {
    /// Adds the default [`ToolErrorLayer`].
    fn tool_errors(self) -> ServiceBuilder<Stack<ToolErrorLayer, L>>;
}

impl<L> ServiceBuilderExt<L> for ServiceBuilder<L> {
    fn tool_errors(self) -> ServiceBuilder<Stack<ToolErrorLayer, L>> {
        self.layer(ToolErrorLayer::new())
    }
}

mod sealed {
    pub trait Sealed {}
    impl<L> Sealed for tower::ServiceBuilder<L> {}
}
