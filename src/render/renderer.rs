//! How a tool error is rendered: the [`ErrorRenderer`] strategy and its default,
//! [`Llmxml`].

use super::element::{is_rendered, render_error};

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

    /// Whether `text` is already this renderer's output and must be left as it is,
    /// so that stacking the layer, or a handler that renders its own errors,
    /// never wraps twice.
    ///
    /// The default says no: a closure renderer rewraps whatever it is given.
    fn is_rendered(&self, text: &str) -> bool {
        let _ = text;
        false
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
/// [`render_error`], recognised again by [`is_rendered`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Llmxml;

impl ErrorRenderer for Llmxml {
    fn render(&self, tool: &str, message: &str) -> String {
        render_error(tool, message)
    }

    fn is_rendered(&self, text: &str) -> bool {
        is_rendered(text)
    }
}
