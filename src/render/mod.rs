//! The llmxml error element, and the [`ErrorRenderer`] strategy that picks how an
//! error is rendered.
//!
//! llmxml is the plain-text error dialect of
//! [go-gerrit-mcp](https://github.com/GaijinEntertainment/go-gerrit-mcp): one element per
//! error, meant to be read by a model, not parsed by an XML library.
//!
//! ```text
//! <error tool="NAME">
//! MESSAGE
//! </error>
//! ```
//!
//! `NAME` is quoted as Go's `strconv.Quote` does (see `go_quote.rs`) and the
//! message is kept verbatim except that the `<` of every `<error` / `</error`
//! (ASCII case-insensitive) becomes `&lt;` (see `guard.rs`), so that no message
//! can close the element or forge another one.

mod element;
mod go_quote;
mod guard;
mod renderer;

pub use element::{is_rendered, render_error};
pub(crate) use element::{rerender_body, split_rendered};
pub(crate) use guard::guarded_len;
pub(crate) use renderer::cap_count;
pub use renderer::{ErrorRenderer, Llmxml};
