//! How a tool error is rendered: the [`ErrorRenderer`] strategy and its default,
//! [`Llmxml`].

use super::element::{names_tool, render_error, split_rendered};

/// Turns a tool name and an error message into the text the model reads.
///
/// The layer calls [`render`](ErrorRenderer::render) for every text item of an
/// `isError` result and for the message that replaces a panic. Any
/// `Fn(&str, &str) -> String + Clone` is a renderer:
///
/// ```
/// use mcp_tool_errors::ToolErrorLayer;
///
/// let layer = ToolErrorLayer::new()
///     .renderer(|tool: &str, message: &str| format!("[{tool}] {message}"));
/// # let _ = layer;
/// ```
pub trait ErrorRenderer: Clone {
    /// Renders `message`, reported by the tool `tool`.
    fn render(&self, tool: &str, message: &str) -> String;

    /// Whether `text` is already this renderer's output for `tool`, the tool
    /// called, and must be left as it is: so that stacking the layer, or a
    /// handler that renders its own errors, never wraps twice.
    ///
    /// Output for another tool is not: the layer renders it again under `tool`
    /// (see [`rendered_message`](Self::rendered_message)), so that no tool can
    /// speak as another, and behind a gateway that renames tools the model
    /// reads the name it called. An implementation that ignores `tool` (one
    /// that answers with [`is_rendered`](super::is_rendered) alone, which
    /// accepts an element of any tool) lets a tool's text pass under another
    /// tool's name.
    ///
    /// The default says no: a closure renderer rewraps whatever it is given.
    fn is_rendered(&self, tool: &str, text: &str) -> bool {
        let _ = (tool, text);
        false
    }

    /// The message `text` carries, when it is this renderer's output for any
    /// tool: what the layer renders again under the tool called when `text`
    /// names another. Only the message is kept, never the name.
    ///
    /// The default says `None`: the whole text is then the message.
    fn rendered_message<'t>(&self, text: &'t str) -> Option<&'t str> {
        let _ = text;
        None
    }

    /// Whether the renderer guards the message as llmxml does (see
    /// [`render_error`]), so that `max_error_bytes` counts the guarded body.
    /// Only [`Llmxml`] says yes; the parameter keeps it that way.
    #[doc(hidden)]
    fn guards_like_llmxml(&self, _: sealed::Llmxml) -> bool {
        false
    }
}

mod sealed {
    /// A type no other crate can name, so that no other renderer can say it
    /// guards like [`Llmxml`](super::Llmxml).
    #[derive(Debug, Clone, Copy)]
    #[allow(unreachable_pub)]
    pub struct Llmxml;
}

/// How `max_error_bytes` counts a message for `renderer`: as the renderer
/// receives it, which for llmxml is the guarded body it shows.
pub(crate) fn cap_count<R: ErrorRenderer>(renderer: &R) -> crate::sanitize::Count {
    if renderer.guards_like_llmxml(sealed::Llmxml) {
        crate::sanitize::Count::Guarded
    } else {
        crate::sanitize::Count::Plain
    }
}

impl<F> ErrorRenderer for F
where
    F: Fn(&str, &str) -> String + Clone,
{
    fn render(&self, tool: &str, message: &str) -> String {
        self(tool, message)
    }
}

/// The default renderer: the llmxml `<error tool="NAME">` element of
/// [`render_error`], recognised again by [`is_rendered`](super::is_rendered).
///
/// An element for the tool called is left as it is. An element for another
/// tool is rendered again under the tool called, with its body as the
/// message: the body is taken byte for byte as the element shows it (already
/// guarded, so an element imitated inside stays escaped and is never
/// unwrapped), then redacted and capped like any message. Every other text,
/// a look-alike included, is the message whole.
///
/// ```
/// use mcp_tool_errors::{ErrorRenderer, Llmxml, render_error};
///
/// let llmxml = Llmxml::default();
/// let admin = render_error("admin", "all checks passed");
/// assert!(llmxml.is_rendered("admin", &admin));
/// assert!(!llmxml.is_rendered("query", &admin));
/// assert_eq!(llmxml.rendered_message(&admin), Some("all checks passed"));
/// assert_eq!(llmxml.rendered_message("all checks passed"), None);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Llmxml;

impl ErrorRenderer for Llmxml {
    fn render(&self, tool: &str, message: &str) -> String {
        render_error(tool, message)
    }

    fn is_rendered(&self, tool: &str, text: &str) -> bool {
        split_rendered(text).is_some_and(|(head, _)| names_tool(head, tool))
    }

    fn rendered_message<'t>(&self, text: &'t str) -> Option<&'t str> {
        split_rendered(text).map(|(_, body)| body)
    }

    fn guards_like_llmxml(&self, _: sealed::Llmxml) -> bool {
        true
    }
}
