//! The settings shared by the layer, the service and every response future, and
//! the rewrap policy they drive.

use crate::exchange::ToolResult;
use crate::render::ErrorRenderer;
use crate::timeout::Timeouts;

/// The message given to the model when an error result has no text item at all.
const NO_TEXT_MESSAGE: &str = "The tool reported an error without any text.";

/// What the layer was configured with; cloned into each response future.
#[derive(Clone, Default)]
pub(crate) struct Config<R> {
    pub(crate) renderer: R,
    pub(crate) expose_panic_messages: bool,
    /// Cheap to clone: without a per-tool timeout there is nothing to share.
    pub(crate) timeouts: Timeouts,
}

impl<R: ErrorRenderer> Config<R> {
    /// Every message the layer gives the model for `tool`, rendered: a rewrapped
    /// error text, the answer to a panic, the answer to a timeout.
    pub(crate) fn render_message(&self, tool: &str, message: &str) -> String {
        self.renderer.render(tool, message)
    }

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
                *text = self.render_message(tool, text);
                rewrapped += 1;
            }
        }
        if items == 0 {
            result.insert_text(self.render_message(tool, NO_TEXT_MESSAGE));
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
            .field("timeouts", &self.timeouts)
            .finish()
    }
}
