//! The settings shared by the layer, the service and every response future, and
//! the rewrap policy they drive.

use crate::exchange::ToolResult;
use crate::render::ErrorRenderer;

/// The message given to the model when an error result has no text item at all.
const NO_TEXT_MESSAGE: &str = "The tool reported an error without any text.";

/// What the layer was configured with; cloned into each response future.
#[derive(Clone, Copy, Default)]
pub(crate) struct Config<R> {
    pub(crate) renderer: R,
    pub(crate) expose_panic_messages: bool,
}

impl<R: ErrorRenderer> Config<R> {
    /// Rewraps every text item of `result` if it is an error, or adds one if it
    /// has none.
    pub(crate) fn rewrap<T: ToolResult + ?Sized>(&self, result: &mut T, tool: &str) {
        let Some(texts) = result.error_texts() else {
            return;
        };
        let (mut items, mut rewrapped) = (0usize, 0usize);
        for text in texts {
            items += 1;
            if !self.renderer.is_rendered(text) {
                *text = self.renderer.render(tool, text);
                rewrapped += 1;
            }
        }
        if items == 0 {
            result.insert_text(self.renderer.render(tool, NO_TEXT_MESSAGE));
            rewrapped = 1;
        }
        tracing::debug!(tool, items, rewrapped, "rewrapped tool error");
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
