//! The rewrap policy: every text the layer writes for the model (a tool's
//! error rewrapped, the answer to a panic or a timeout) is redacted, scrubbed
//! and capped as [`Config`] says, then rendered under the name of the tool
//! called. A text the renderer already made for that tool passes (sanitized
//! again), so that a layer stacked twice writes once; one it made for another
//! tool is rendered again under the tool called, its message kept
//! ([`ErrorRenderer::rendered_message`]), so that no tool speaks as another.
//! A panic of the user's code on the way (the renderer, the scrubber) is
//! caught and logged by its location only (its message may quote the text),
//! and the model then reads a fixed element instead.

use std::borrow::Cow;

use crate::config::Config;
use crate::model::ToolResult;
use crate::panic;
use crate::render::{ErrorRenderer, cap_count, render_error, rerender_body, split_rendered};
use crate::sanitize::{Count, Tally};

/// The message given to the model when an error result has no text item at all.
const NO_TEXT_MESSAGE: &str = "The tool reported an error without any text.";

/// The message given to the model, in the built-in llmxml element, when the
/// renderer or the user's scrubber panicked on a tool's error: the text it was
/// given cannot be trusted to the model, and the renderer cannot be trusted to
/// render this one.
pub(crate) const RENDER_FAILED_MESSAGE: &str =
    "The tool failed and its error could not be rendered. The details are in the server log.";

impl<R: ErrorRenderer> Config<R> {
    /// Rewraps every text item of `result` if it is an error, or adds one if it
    /// has none; whether it was an error it could read (not malformed).
    ///
    /// The renderer and the scrubber are the user's code: a panic in either is
    /// caught here, logged, and the result then holds the built-in element of
    /// [`RENDER_FAILED_MESSAGE`] as its first text item, every other text item
    /// emptied (each may hold what the scrubber was to remove).
    pub(crate) fn rewrap<T: ToolResult + ?Sized>(&self, result: &mut T, tool: &str) -> bool {
        // A result that is not an error (the common case) costs no catch.
        if result.error_texts().is_none() {
            return false;
        }
        if let Err(panic) = panic::catch(|| self.rewrap_unguarded(result, tool)) {
            panic.log_in_render(Some(tool));
            answer_render_failed(result, tool);
        }
        true
    }

    fn rewrap_unguarded<T: ToolResult + ?Sized>(&self, result: &mut T, tool: &str) {
        let Some(texts) = result.error_texts() else {
            return;
        };
        let (mut items, mut rewrapped) = (0usize, 0usize);
        let mut tally = Tally::default();
        for text in texts {
            items += 1;
            if self.renderer.is_rendered(tool, text) {
                if let Some(sanitized) = self.sanitize_rendered(text, &mut tally) {
                    *text = sanitized;
                }
            } else {
                let message = self.renderer.rendered_message(text).unwrap_or(text);
                *text = self.render_tallied(tool, message, &mut tally);
                rewrapped += 1;
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
    /// to a timeout. A panic of the renderer or the scrubber is caught and
    /// logged, and the answer is then the built-in element of
    /// [`RENDER_FAILED_MESSAGE`].
    pub(crate) fn render_message(&self, tool: &str, message: &str) -> String {
        panic::catch(|| self.render_tallied(tool, message, &mut Tally::default())).unwrap_or_else(
            |panic| {
                panic.log_in_render(Some(tool));
                render_failed(tool)
            },
        )
    }

    /// `message`, the text of a JSON-RPC error, redacted, scrubbed and capped
    /// (counted as it is: no renderer sees it); `fallback` if the scrubber
    /// panics, which is logged.
    pub(crate) fn sanitize_message(&self, message: &str, fallback: &str) -> String {
        let sanitized = || {
            self.sanitizer
                .apply(message, Count::Plain, &mut Tally::default())
                .into_owned()
        };
        panic::catch(sanitized).unwrap_or_else(|panic| {
            panic.log_in_render(None);
            fallback.to_owned()
        })
    }

    fn render_tallied(&self, tool: &str, message: &str, tally: &mut Tally) -> String {
        let message = self
            .sanitizer
            .apply(message, cap_count(&self.renderer), tally);
        self.renderer.render(tool, &message)
    }

    /// A text the renderer already made for the tool called, sanitized, so
    /// that rendering it upstream is no way around the settings; `None` when
    /// nothing changes.
    ///
    /// An llmxml element keeps its opening line and only its body is sanitized
    /// (then guarded again, so its guarded length is what the cap counts). Any
    /// other rendered text, a custom renderer's, is sanitized as a whole, and
    /// counted as it is.
    fn sanitize_rendered(&self, text: &str, tally: &mut Tally) -> Option<String> {
        if !self.sanitizer.is_active() {
            return None;
        }
        match split_rendered(text) {
            Some((head, body)) => match self.sanitizer.apply(body, Count::Guarded, tally) {
                Cow::Borrowed(_) => None,
                Cow::Owned(body) => Some(rerender_body(head, &body)),
            },
            None => match self.sanitizer.apply(text, Count::Plain, tally) {
                Cow::Borrowed(_) => None,
                Cow::Owned(text) => Some(text),
            },
        }
    }
}

/// The built-in llmxml element of [`RENDER_FAILED_MESSAGE`]: no user code runs.
fn render_failed(tool: &str) -> String {
    render_error(tool, RENDER_FAILED_MESSAGE)
}

/// Makes `result`, whose rewrap panicked half way, the answer of
/// [`render_failed`]: its first text item (or a new one, if it has none) holds
/// that element, and every other text item is emptied, rewritten or not.
fn answer_render_failed<T: ToolResult + ?Sized>(result: &mut T, tool: &str) {
    let Some(texts) = result.error_texts() else {
        return;
    };
    let mut first = true;
    for text in texts {
        *text = if first {
            render_failed(tool)
        } else {
            String::new()
        };
        first = false;
    }
    if first {
        result.insert_text(render_failed(tool));
    }
}
