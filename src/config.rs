//! The settings shared by the layer, the service and every response future.

use crate::renderer::ErrorRenderer;
use crate::rewrap::rewrap_tool_result;

/// What the layer was configured with; cloned into each response future.
#[derive(Clone, Copy, Default)]
pub(crate) struct Config<R> {
    pub(crate) renderer: R,
    pub(crate) expose_panic_messages: bool,
}

impl<R: ErrorRenderer> Config<R> {
    pub(crate) fn rewrap<T: crate::ToolCallResult + ?Sized>(&self, result: &mut T, tool: &str) {
        rewrap_tool_result(result, tool, &self.renderer);
    }
}

impl<R> std::fmt::Debug for Config<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("renderer", &std::any::type_name::<R>())
            .field("expose_panic_messages", &self.expose_panic_messages)
            .finish()
    }
}
