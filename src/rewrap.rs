//! Rewrapping one `isError` tool result: the policy shared by every message type.

use crate::exchange::ToolCallResult;
use crate::renderer::ErrorRenderer;

/// The message given to the model when an error result has no text item at all.
pub(crate) const NO_TEXT_MESSAGE: &str = "The tool reported an error without any text.";

/// Rewraps every text item of `result` if it is an error, or adds one if it has none.
pub(crate) fn rewrap_tool_result<T, R>(result: &mut T, tool: &str, renderer: &R)
where
    T: ToolCallResult + ?Sized,
    R: ErrorRenderer,
{
    let Some(texts) = result.error_texts() else {
        return;
    };
    let (mut items, mut rewrapped) = (0usize, 0usize);
    for text in texts {
        items += 1;
        if !renderer.is_rendered(text) {
            *text = renderer.render(tool, text);
            rewrapped += 1;
        }
    }
    if items == 0 {
        result.insert_text(renderer.render(tool, NO_TEXT_MESSAGE));
        rewrapped = 1;
    }
    tracing::debug!(tool, items, rewrapped, "rewrapped tool error");
}
