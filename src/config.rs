//! The settings shared by the layer, the service and every response future, and
//! the rewrap policy they drive.

use crate::exchange::ToolResult;
use crate::render::{ErrorRenderer, rerender_body, split_rendered};
use crate::sanitize::{Sanitizer, Tally};
use crate::timeout::Timeouts;

/// The message given to the model when an error result has no text item at all.
const NO_TEXT_MESSAGE: &str = "The tool reported an error without any text.";

/// What the layer was configured with; cloned into each response future.
///
/// Cloning is a copy unless a scrubber is set (then one reference count).
#[derive(Clone, Default)]
pub(crate) struct Config<R> {
    pub(crate) renderer: R,
    pub(crate) expose_panic_messages: bool,
    /// Cheap to clone: without a per-tool timeout there is nothing to share.
    pub(crate) timeouts: Timeouts,
    pub(crate) sanitizer: Sanitizer,
    /// `network.transport` of the request span, when the layer was told.
    pub(crate) network_transport: Option<&'static str>,
}

impl<R: ErrorRenderer> Config<R> {
    /// Rewraps every text item of `result` if it is an error, or adds one if it
    /// has none.
    pub(crate) fn rewrap<T: ToolResult + ?Sized>(&self, result: &mut T, tool: &str) {
        let Some(texts) = result.error_texts() else {
            return;
        };
        let (mut items, mut rewrapped) = (0usize, 0usize);
        let mut tally = Tally::default();
        for text in texts {
            items += 1;
            if !self.renderer.is_rendered(text) {
                *text = self.render_tallied(tool, text, &mut tally);
                rewrapped += 1;
            } else if let Some(sanitized) = self.sanitize_rendered(text, &mut tally) {
                *text = sanitized;
            }
        }
        if items == 0 {
            result.insert_text(self.render_tallied(tool, NO_TEXT_MESSAGE, &mut tally));
            rewrapped = 1;
        }
        tracing::debug!(
            tool,
            items,
            rewrapped,
            redactions = tally.redactions,
            scrubbed = tally.scrubbed,
            bytes_cut = tally.bytes_cut,
            "rewrapped tool error"
        );
    }

    /// Renders `message` from `tool` as the model will read it: redacted and
    /// capped as configured, then rendered. Every text the layer writes goes
    /// through here: a rewrapped error text, the answer to a panic, the answer
    /// to a timeout.
    pub(crate) fn render_message(&self, tool: &str, message: &str) -> String {
        self.render_tallied(tool, message, &mut Tally::default())
    }

    fn render_tallied(&self, tool: &str, message: &str, tally: &mut Tally) -> String {
        let message = self.sanitizer.apply(message, tally);
        self.renderer.render(tool, &message)
    }

    /// A text the renderer already made, sanitized, so that rendering it upstream
    /// is no way around the settings; `None` when nothing changes.
    ///
    /// An llmxml element keeps its own tool name and only its body is sanitized
    /// (then guarded again). Any other rendered text, a custom renderer's, is
    /// sanitized as a whole.
    fn sanitize_rendered(&self, text: &str, tally: &mut Tally) -> Option<String> {
        if !self.sanitizer.is_active() {
            return None;
        }
        match split_rendered(text) {
            Some((head, body)) => match self.sanitizer.apply(body, tally) {
                std::borrow::Cow::Borrowed(_) => None,
                std::borrow::Cow::Owned(body) => Some(rerender_body(head, &body)),
            },
            None => match self.sanitizer.apply(text, tally) {
                std::borrow::Cow::Borrowed(_) => None,
                std::borrow::Cow::Owned(text) => Some(text),
            },
        }
    }
}

impl<R> std::fmt::Debug for Config<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("renderer", &std::any::type_name::<R>())
            .field("expose_panic_messages", &self.expose_panic_messages)
            .field("timeouts", &self.timeouts)
            .field("sanitizer", &self.sanitizer)
            .field("network_transport", &self.network_transport)
            .finish()
    }
}
