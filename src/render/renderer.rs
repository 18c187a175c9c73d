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

    fn guards_like_llmxml(&self, _: sealed::Llmxml) -> bool {
        true
    }
}
